"""The person's terminal: opened by path, put in a mode for single keys, always restored.

The seat runs in a session of its own (the referee's keeper starts every bot so), so
the terminal is not its controlling terminal: it opens the path it is given
(`O_NOCTTY`), and job control never stops it for reading or writing there. While the
seat plays, the terminal gets no line editing, no echo and no signals from keys
(`ICANON`, `ECHO`, `ISIG`, `IEXTEN` and `IXON` off): Ctrl-C reaches the seat as the
byte 0x03 instead of interrupting the referee (whose foreground group would get the
SIGINT), and the seat forfeits by exiting. Output processing stays on, so the
referee's own lines on the same terminal look as always. `Terminal.restore` puts
back the modes found at the start; `referee.human.seat.main` calls it on every way
out (a return, an exception, SIGTERM or SIGHUP).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import termios
from typing import Any, TextIO

CTRL_C = "\x03"
CTRL_U = "\x15"
BACKSPACES = ("\x7f", "\x08")
ENTER = ("\r", "\n")


class Terminal:
    """The terminal at `path`: its descriptor, a text stream to draw on, the line being
    typed, and the modes to restore."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        self.saved: list[Any] | None = None
        self.out: TextIO = os.fdopen(os.dup(self.fd), "w", encoding="utf-8", errors="replace")
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._escape = False  # within an escape sequence (an arrow key, say): skipped
        self.line = ""  # what the person has typed since the last Enter

    def keys_mode(self) -> None:
        """Single keys, no echo, Ctrl-C as a byte; the modes found are kept to restore."""
        self.saved = termios.tcgetattr(self.fd)
        modes = termios.tcgetattr(self.fd)
        modes[0] &= ~termios.IXON
        modes[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG | termios.IEXTEN)
        special = modes[6]
        assert isinstance(special, list)
        special[termios.VMIN] = 1
        special[termios.VTIME] = 0
        termios.tcsetattr(self.fd, termios.TCSANOW, modes)

    def restore(self) -> None:
        """The modes found at the start, back; safe to call more than once."""
        if self.saved is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(self.fd, termios.TCSANOW, self.saved)
            self.saved = None

    def close(self) -> None:
        self.restore()
        with contextlib.suppress(OSError):
            self.out.close()
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def width(self) -> int:
        """Its width in columns (80 when it does not say)."""
        try:
            return max(40, os.get_terminal_size(self.fd).columns)
        except OSError:
            return 80

    def keys(self, data: bytes) -> list[str]:
        """What `data` (read from the terminal) means: `CTRL_C`, or each line finished by
        Enter; the line being typed is kept in `line` (Backspace and Ctrl-U edit it)."""
        done: list[str] = []
        for char in self._decoder.decode(data):
            if self._escape:
                # CSI sequences end with a byte from @ to ~; ESC O x (SS3) with its letter.
                if char not in "[O" and ("@" <= char <= "~" or not char.isascii()):
                    self._escape = False
                continue
            if char == "\x1b":
                self._escape = True
            elif char == CTRL_C:
                return [CTRL_C]
            elif char in ENTER:
                done.append(self.line)
                self.line = ""
            elif char in BACKSPACES:
                self.line = self.line[:-1]
            elif char == CTRL_U:
                self.line = ""
            elif char.isprintable():
                self.line += char
        return done

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def prompt(self, text: str) -> None:
        """Redraw the line being typed, after `text`, in place of the current line."""
        self.write(f"\r\x1b[2K{text}{self.line}")

    def clear_line(self) -> None:
        self.write("\r\x1b[2K")
