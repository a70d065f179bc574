#!/bin/sh
# Answers hello, never a turn: it holds its game open at its first turn, so a benchmark
# can count the memory of many games at once (bench/bench_memory.py). Its games never
# end, so it is never pinged for reuse.
while IFS= read -r line; do
  case $line in
    *'"type":"hello"'*)
      printf '%s\n' '{"type":"ready","name":"idle","version":"1.0","protocol":1}' ;;
    *'"type":"bye"'*)
      exit 0 ;;
  esac
done
exit 0
