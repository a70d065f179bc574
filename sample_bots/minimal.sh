#!/bin/sh
# The smallest bot: it always plays legal move 0, in POSIX sh and sed, no JSON parser.
# It leans on two promises of spec/PROTOCOL.md: the referee writes compact JSON
# (no spaces between tokens), and the only key named "id" in any message is a turn
# request's id, so '"id":' followed by digits can be found with a text search.
# Run it: sh sample_bots/minimal.sh
while IFS= read -r line; do
  case $line in
    *'"type":"turn"'*)
      id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
      printf '{"type":"move","id":%s,"index":0}\n' "$id" ;;
    *'"type":"hello"'*)
      printf '%s\n' '{"type":"ready","name":"minimal","version":"1.0","protocol":1}' ;;
    *'"type":"ping"'*)
      nonce=$(printf '%s\n' "$line" | sed -n 's/.*"nonce":\([0-9][0-9]*\).*/\1/p')
      printf '{"type":"pong","nonce":%s}\n' "$nonce" ;;
    *'"type":"bye"'*)
      exit 0 ;;
  esac
done
exit 0
