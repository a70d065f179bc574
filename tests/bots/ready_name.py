"""Plays legal move 0 and says in its ready message the name in $READY_NAME; writes
one line to stderr, so that its stderr file is kept."""

import os
import sys

from _common import serve

print("ready_name bot here", file=sys.stderr, flush=True)
serve(os.environ["READY_NAME"])
