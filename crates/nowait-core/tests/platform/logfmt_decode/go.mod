module nowait.test/logfmtdecode

go 1.21

require github.com/go-logfmt/logfmt v0.6.1
