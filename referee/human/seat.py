"""The seat's loop: the protocol on stdin and stdout, the person on the terminal.

Drawn with rich rather than textual: textual runs a full-screen application that
owns its terminal through stdin and stdout, which are the protocol's pipes here, and
would repaint over the lines the referee itself prints on the same terminal; rich
writes to any file (the terminal this seat opened), so the board and the game's
events scroll like the referee's own output and stay in the scrollback, and rich is
a dependency already.

One `select` waits for both the referee's lines and the person's keys, at most a
second at a time while a turn is open, so the clock on the prompt line counts down.
The seat answers `hello` and `ping` itself; a turn gets the person's choice (checked
against the legal moves here, so an illegal or mistyped input costs a line, never
the turn); `bye` or the end of its input ends it with status 0, Ctrl-C with 130
(the referee then sees the seat gone and applies its usual fault rules: a
forfeit).
"""

from __future__ import annotations

import argparse
import os
import selectors
import signal
import sys
import time
from types import FrameType

from rich.console import Console, RenderableType

from protocol.bot import messages_in
from protocol.codec import encode
from protocol.framing import LineFramer
from protocol.messages import (
    MAX_LINE_DEFAULT,
    Bye,
    Drew,
    Error,
    GameEnd,
    GameStart,
    Hello,
    Marker,
    Message,
    MoveReply,
    Passed,
    Ping,
    Played,
    Pong,
    Ready,
    RoundEnd,
    RoundStart,
    Turn,
)

from .. import __version__
from ..text import markup
from . import screen
from .moves import choose, move_text
from .terminal import CTRL_C, Terminal

FORFEIT_STATUS = 130  # as a shell reports a program ended by Ctrl-C


def clock_text(seconds: float) -> str:
    """`1:05`, `0:09`: whole seconds left, rounded up (0:00 only when none is left)."""
    whole = max(0, int(-(-seconds // 1)))
    return f"{whole // 60}:{whole % 60:02d}"


class Seat:
    """One person's seat: what the referee said so far, and the open turn."""

    def __init__(self, terminal: Terminal, name: str) -> None:
        self.terminal = terminal
        self.name = name
        self.framer = LineFramer(MAX_LINE_DEFAULT)
        self.start: GameStart | None = None
        self.turn: Turn | None = None
        self.asked = 0.0  # when the open turn arrived (time.monotonic)
        self.console = Console(
            file=terminal.out,
            force_terminal=True,
            color_system="standard",
            width=terminal.width(),
            highlight=False,
            emoji=False,
        )

    # ------------------------------------------------------------ drawing

    def show(self, renderable: RenderableType) -> None:
        """Print `renderable` (markup when a string) above the prompt, then the prompt."""
        if self.turn is not None:
            self.terminal.clear_line()
        self.console.width = self.terminal.width()
        self.console.print(renderable)
        self.terminal.out.flush()
        self.draw_prompt()

    def draw_prompt(self) -> None:
        turn = self.turn
        if turn is None:
            return
        self.terminal.prompt(
            f"[{self.clock()}] your move (1-{len(turn.legal)}, or a tile and train): "
        )

    def clock(self) -> str:
        """The open turn's time left: the move's clock, then the bank's."""
        assert self.turn is not None
        spent = time.monotonic() - self.asked
        move_s = self.turn.clock.move_ms / 1000 - spent
        bank_s = self.turn.clock.bank_ms / 1000
        if move_s > 0:
            return f"{clock_text(move_s)} + bank {clock_text(bank_s)}"
        if bank_s + move_s > 0:
            return f"bank {clock_text(bank_s + move_s)}"
        return "time is up"

    # ------------------------------------------------------------ the referee's lines

    def send(self, message: Message) -> None:
        data = encode(message, self.framer.max_line)
        while data:
            data = data[os.write(1, data) :]

    def receive(self, data: bytes) -> bool:
        """Take what the referee sent; False once it said `bye`."""
        return all(self.handle(message) for message in messages_in(self.framer, data, "human"))

    def handle(self, message: Message) -> bool:
        start = self.start
        if isinstance(message, Hello):
            self.framer.max_line = message.max_line
            self.send(Ready(name=self.name, version=__version__, author="a person"))
        elif isinstance(message, Ping):
            self.send(Pong(nonce=message.nonce))
        elif isinstance(message, GameStart):
            self.start = message
            self.show(screen.game_line(message))
        elif isinstance(message, Bye):
            self.end_turn()
            self.show(f"the referee says bye ({markup(message.reason)})")
            return False
        elif isinstance(message, Error):
            timed_out = (
                message.code == "timeout"
                and self.turn is not None
                and message.request == self.turn.id
            )
            if timed_out:
                self.end_turn()
            line = f"[red]the referee says {markup(message.code)}: {markup(message.message)}[/]"
            if timed_out:
                line += " [red](your time is up: the referee's fault rules apply)[/]"
            self.show(line)
        elif start is None:
            print(f"human: ignored {type(message).__name__} before game_start", file=sys.stderr)
        elif isinstance(message, Turn):
            self.end_turn()
            self.turn, self.asked = message, time.monotonic()
            self.terminal.line = ""
            self.show(screen.board(message, start))
        elif isinstance(message, RoundStart):
            self.show(screen.round_line(message, start))
        elif isinstance(message, Played | Drew | Passed | Marker):
            self.show(screen.event_line(message, start))
        elif isinstance(message, RoundEnd):
            self.show(screen.round_end(message, start))
        elif isinstance(message, GameEnd):
            self.show(screen.game_end(message, start))
        return True

    def end_turn(self) -> None:
        """Close the open turn's prompt, if one is open."""
        if self.turn is not None:
            self.terminal.write("\n")
            self.turn = None

    # ------------------------------------------------------------ the person's keys

    def typed(self, data: bytes) -> bool:
        """Take the person's keys; False on Ctrl-C."""
        for line in self.terminal.keys(data):
            if line == CTRL_C:
                return False
            turn, start = self.turn, self.start
            if turn is None or start is None:
                continue  # typed between turns: nothing to choose
            chosen = choose(line, turn, start.names)
            if isinstance(chosen, str):
                self.terminal.clear_line()
                self.terminal.write(f"{chosen}\n")
                continue
            self.send(MoveReply(id=turn.id, index=chosen))
            self.terminal.clear_line()
            words = move_text(turn.legal[chosen], turn, start.names)
            self.terminal.write(f"you chose {chosen + 1}: {words}\n")
            self.turn = None
        self.draw_prompt()
        return True

    # ------------------------------------------------------------ the loop

    def run(self) -> int:
        """Play until `bye`, the end of input (0) or Ctrl-C (`FORFEIT_STATUS`)."""
        os.set_blocking(0, False)
        with selectors.DefaultSelector() as selector:
            selector.register(0, selectors.EVENT_READ, "referee")
            selector.register(self.terminal.fd, selectors.EVENT_READ, "keys")
            while True:
                wait = None
                if self.turn is not None:
                    wait = 1 - (time.monotonic() - self.asked) % 1 + 0.01
                ready = selector.select(wait)
                if not ready:
                    self.draw_prompt()  # a second passed: the clock's new value
                for key, _ in ready:
                    if key.data == "referee":
                        try:
                            data = os.read(0, 65536)
                        except BlockingIOError:
                            continue
                        if not data or not self.receive(data):
                            self.end_turn()
                            return 0
                    else:
                        try:
                            keys = os.read(self.terminal.fd, 1024)
                        except OSError as exc:  # hung up
                            keys, why = b"", exc.strerror
                        else:
                            why = "end of file"
                        if not keys:
                            print(f"human: the terminal is gone ({why}): forfeit", file=sys.stderr)
                            return FORFEIT_STATUS
                        if not self.typed(keys):
                            self.end_turn()
                            self.terminal.write("You pressed Ctrl-C: you forfeit the game.\n")
                            print("human: the person pressed Ctrl-C: forfeit", file=sys.stderr)
                            return FORFEIT_STATUS


def _end(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    """`python -m referee.human --tty TERMINAL [--name NAME]`."""
    parser = argparse.ArgumentParser(
        prog="python -m referee.human",
        description="A person's seat: the protocol on stdin and stdout, the game on TERMINAL.",
    )
    parser.add_argument("--tty", required=True, metavar="TERMINAL", help="the terminal's path")
    parser.add_argument("--name", default="human", help="the name said in `ready`")
    args = parser.parse_args(argv)
    try:
        terminal = Terminal(args.tty)
    except OSError as exc:
        print(f"human: cannot open the terminal {args.tty}: {exc.strerror}", file=sys.stderr)
        return 2
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _end)
    try:
        terminal.keys_mode()
        return Seat(terminal, args.name).run()
    finally:
        terminal.close()
