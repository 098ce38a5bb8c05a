#!/usr/bin/env bash
# Counts the main thread's system calls between the two getppid markers of
# examples/examples/push_syscalls.rs in an `strace -f -o FILE` trace.
set -euo pipefail
trace="$1"
main=$(head -1 "$trace" | awk '{print $1}')
awk -v m="$main" '$1 == m' "$trace" \
  | awk '/getppid\(/{n++; next} n==1' | grep -v 'resumed>' \
  | sed -E 's/^[0-9]+ +([a-z_0-9]+)\(.*/\1/' | sort | uniq -c
