// Decodes logfmt lines from stdin with go-logfmt's decoder and prints
// each record as one JSON array of [key, value] pairs, a record that
// fails as {"error": "..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/go-logfmt/logfmt"
)

func main() {
	dec := logfmt.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<20))
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for dec.ScanRecord() {
		pairs := [][2]string{}
		for dec.ScanKeyval() {
			pairs = append(pairs, [2]string{string(dec.Key()), string(dec.Value())})
		}
		if err := dec.Err(); err != nil {
			enc.Encode(map[string]string{"error": err.Error()})
			out.Flush()
			os.Exit(1)
		}
		enc.Encode(pairs)
	}
	if err := dec.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
