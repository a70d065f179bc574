"""A bot for benchmarks: plays legal move 0, answers ping, and parses nothing but the
request id and the ping's nonce."""

import re
import sys

ID = re.compile(rb'"id":(\d+)')
NONCE = re.compile(rb'"nonce":(-?\d+)')


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if b'"type":"turn"' in line:
            found = ID.search(line)
            assert found is not None
            out.write(b'{"type":"move","id":' + found.group(1) + b',"index":0}\n')
            out.flush()
        elif b'"type":"ping"' in line:
            nonce = NONCE.search(line)
            assert nonce is not None
            out.write(b'{"type":"pong","nonce":' + nonce.group(1) + b"}\n")
            out.flush()
        elif b'"type":"hello"' in line:
            out.write(b'{"type":"ready","name":"fast"}\n')
            out.flush()
        elif b'"type":"bye"' in line:
            return


if __name__ == "__main__":
    main()
