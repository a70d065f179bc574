"""A bot for benchmarks: plays legal move 0, answers ping, and parses nothing but the
request id and the ping's nonce.

At `bye` it writes to stderr how many turns it played and how many bytes the referee
sent it for them (the events since its last move and the turn request itself): the
traffic `bench_match.py` sends its floor."""

import re
import sys

ID = re.compile(rb'"id":(\d+)')
NONCE = re.compile(rb'"nonce":(-?\d+)')


def main() -> None:
    out = sys.stdout.buffer
    turns = turn_bytes = pending = 0  # pending: bytes read since the last reply
    for line in sys.stdin.buffer:
        pending += len(line)
        if b'"type":"turn"' in line:
            found = ID.search(line)
            assert found is not None
            out.write(b'{"type":"move","id":' + found.group(1) + b',"index":0}\n')
            out.flush()
            turns += 1
            turn_bytes += pending
            pending = 0
        elif b'"type":"ping"' in line:
            nonce = NONCE.search(line)
            assert nonce is not None
            out.write(b'{"type":"pong","nonce":' + nonce.group(1) + b"}\n")
            out.flush()
            pending = 0
        elif b'"type":"hello"' in line:
            out.write(b'{"type":"ready","name":"fast"}\n')
            out.flush()
            pending = 0
        elif b'"type":"bye"' in line:
            if turns:
                sys.stderr.write(f"fast_bot: turns {turns} bytes {turn_bytes}\n")
            return


if __name__ == "__main__":
    main()
