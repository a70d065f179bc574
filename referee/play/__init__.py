"""One game between bot processes, start to end: what `referee play` runs.

- `runner`: start the bots, handshake, play the game, write its log, end every process;
- `display`: what people see while it runs, a line per round and the final table.

May import everything below a league: the engine, `protocol`, `referee.bots`,
`referee.game`, `referee.logs` and the shared modules at the top of `referee`.
"""
