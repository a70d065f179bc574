#!/bin/sh
# Answers hello and ping, never a turn: it holds its game open at its first turn, so a
# benchmark can count the memory of many games at once (bench/bench_memory.py).
while IFS= read -r line; do
  case $line in
    *'"type":"hello"'*)
      printf '%s\n' '{"type":"ready","name":"idle","version":"1.0","protocol":1}' ;;
    *'"type":"ping"'*)
      nonce=$(printf '%s\n' "$line" | sed -n 's/.*"nonce":\(-\{0,1\}[0-9][0-9]*\).*/\1/p')
      printf '{"type":"pong","nonce":%s}\n' "$nonce" ;;
    *'"type":"bye"'*)
      exit 0 ;;
  esac
done
exit 0
