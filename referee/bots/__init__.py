"""Bots: starting and isolating bot processes, and talking to one bot.

- `process`: a bot's process, its stderr drained, its end made sure;
- `keeper`: the small process that starts every bot and ends what it leaves behind
  (run by file path, `python keeper.py`, not imported by the referee's processes);
- `sandbox`, `seccomp`, `cgroups`: bubblewrap, the system calls a sandboxed bot may
  not make (keyrings, user namespaces), and one cgroup per bot;
- `connection`: protocol lines over a pair of trio streams (stdio or TCP);
- `session`: the handshake, pings between games and the goodbye; a TCP bot's session;
- `faults`: what a bot did wrong (or ignored), as values;
- `tokens`: the login tokens of TCP bots.

May import `protocol` and the shared modules at the top of `referee` (`text`);
nothing of games, logs, leagues, the network server or the command line.
"""
