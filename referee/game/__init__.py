"""One game between connected bots, in memory: no files, no leagues.

- `match`: requests, clocks, faults and events of one game (`Game`, `Recorder`);
- `wire`: the one translation between engine values and protocol messages;
- `lag`: how late the referee's own event loop was (time that is never a bot's);
- `checkbot`: `referee check-bot`, one bot through protocol and rules checks;
- `selfplay`: one game between in-process random players.

May import the engine (`referee.rules`), `protocol`, `referee.bots` and the shared
modules at the top of `referee`; nothing of logs, leagues, the network or the CLI.
"""
