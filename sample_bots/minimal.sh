#!/bin/sh
# The smallest bot: it always plays legal move 0, in POSIX sh alone (no JSON parser,
# no other program: a `sed` per turn cost a game about two CPU-seconds in forks).
# It leans on two promises of spec/PROTOCOL.md: the referee writes compact JSON
# (no spaces between tokens), and the only key named "id" in any message is a turn
# request's id, so the digits after '"id":' can be cut out of the line as text.
# Run it: sh sample_bots/minimal.sh
while IFS= read -r line; do
  case $line in
    *'"type":"turn"'*)
      id=${line#*'"id":'}
      id=${id%%[!0-9]*}
      printf '{"type":"move","id":%s,"index":0}\n' "$id" ;;
    *'"type":"hello"'*)
      printf '%s\n' '{"type":"ready","name":"minimal","version":"1.0","protocol":1}' ;;
    *'"type":"ping"'*)
      nonce=${line#*'"nonce":'}
      nonce=${nonce%%[!0-9]*}
      printf '{"type":"pong","nonce":%s}\n' "$nonce" ;;
    *'"type":"bye"'*)
      exit 0 ;;
  esac
done
exit 0
