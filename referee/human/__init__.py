"""A person's seat at the table, in the terminal: `referee play "me=human" ...`.

`referee.bots.process.parse_bot` turns the command `human` into
`python -m referee.human --tty TERMINAL`, a bot process like any other to the
referee: it gets exactly the messages a bot gets (the same redaction), on its
stdin, answers on its stdout, and is held to the same clocks and checks. It draws
on, and reads keys from, the terminal it is given (the referee's own), which it opens
itself: `seat.py` (the loop: the protocol and the keys), `terminal.py` (the
terminal's modes, always restored, and the line being typed), `moves.py` (what was
typed, as one of the legal moves) and `screen.py` (the board and the game's events,
drawn with rich).

`human --web [PORT]` seats a person in the browser instead: `web.py`,
`python -m referee.human.web`, the same kind of bot process, serving the page
`assets/seat.html` on 127.0.0.1 (Starlette on hypercorn's trio worker) behind the
seat's key.

It may import `protocol` (the wire messages carry all it shows) and the top of
`referee` (`text`: other seats' names shown escaped); never the engine or any other
package of the referee. docs/human.md says how a person plays.
"""
