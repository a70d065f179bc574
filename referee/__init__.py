"""The Mexican Train referee: the shell around the pure engine in `referee.rules`.

Decisions about the game live in `referee.rules`, and the wire format in
`protocol`; neither imports anything of the rest. The rest is a stack of packages,
each importing only those below it (tests/test_layout.py holds the rules):

- `bots`: bot processes, their sandbox, one bot's connection and session;
- `game`: one game between connected bots, in memory; `stats`: match statistics;
- `logs`: game logs written, verified and shown; `play`: one game of bot processes;
- `proof`: the organiser's signing keys and signatures (minisign's formats);
- `league`: many games, their ledger and standings; `site`: the results site;
- `net`: TCP (`serve`, `connect`); `commands` (with `cli`): the command line.
- `human`: a person's seat, in the terminal: a bot process of its own, which
  imports only `protocol` and `text` (`referee play "me=human" ...`).

At the top, beside `cli` (the `referee` command) and `__main__`, only what every
package may use: `text` (outside text shown escaped, names) and `consoles`. They
import nothing of the referee. `assets/` holds the replay viewer's page, script
and styles, read by `logs.replay_html` and by the site.
"""

__version__ = "0.1.0"
