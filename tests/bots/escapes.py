"""Tries to drive the organiser's terminal: escape sequences everywhere it can put
text, then a crash.

Its `ready` names it with a clear-screen sequence and a bell. On its second turn it
answers with a line that is not JSON and holds escape sequences (fault evidence, with
--policy default-move the game goes on). On its fourth turn it writes to stderr a
window title (ESC ] 0 ; ... BEL), a clear screen (ESC [ 2 J), colours, a NUL, a
carriage return, a backspace, DEL, C1 controls (U+009B as UTF-8, and a lone 0x9B
byte), a right-to-left override and rich markup, and exits with status 3: its last
stderr line is what `referee play` shows of a crash.
"""

import sys

from _common import Msg, move, serve

# Everything a terminal would act on; the test looks for each of them raw.
NASTY = (
    "\x1b]0;pwned title\x07"  # window title, ended by BEL
    "\x1b[2J\x1b[H"  # clear the screen, cursor home
    "\x1b[31;1mred\x1b[0m"  # colours
    " nul\x00 cr\r bs\x08 del\x7f"
    " csi\u009b31m"  # C1 CSI, as UTF-8
    " \u202eevil\u202c"  # right-to-left override
    " [bold red]markup[/]"
)
count = 0


def on_turn(turn: Msg) -> Msg | None:
    global count
    count += 1
    if count == 2:
        sys.stdout.write("not json \x1b[2J\x1b]0;title\x07 \u009b\n")
        sys.stdout.flush()
        return None
    if count == 4:
        sys.stderr.write("escapes: about to crash\n")
        sys.stderr.flush()
        sys.stderr.buffer.write(NASTY.encode() + b" lone \x9b byte\n")
        sys.stderr.buffer.write(b"last words: " + NASTY.encode() + b"\n")
        sys.stderr.flush()
        sys.exit(3)
    return move(turn)


serve("\x1b[2Jescapes\x07", on_turn)
