"""Game logs: writing them, verifying them, showing them.

- `gamelog`: the log of a game, written as it goes (`LogWriter`), read back whole;
- `replay`: a logged game re-derived with the engine, every recorded fact checked;
- `replay_seat`: one seat's log, made from a full log and followed without the seed;
- `replay_text`: a logged game as text or JSON lines;
- `replay_html`: a logged game as one HTML page (the viewer in `referee/assets/`);
- `outputs`: the places a user names for output, made ready or refused.

May import the engine, `protocol`, `referee.bots`, `referee.game` and the shared
modules at the top of `referee`; nothing of leagues, the site, the network or the CLI.
"""
