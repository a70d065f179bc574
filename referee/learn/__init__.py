"""The game as a learning environment: PettingZoo, Gymnasium and OpenSpiel.

- `encode`: the fixed action ids and the observation vector, computed from the
  protocol's `ViewInfo` alone, so an environment and a bot process share them;
- `table`: what the three environments share on the engine side (rules from a
  preset, round rewards, the legal moves by action id, hidden tiles reshuffled);
- `mexican_train_v0`: the PettingZoo AEC environment (`env()`, `raw_env()`);
- `gym_env`: a single-agent Gymnasium environment against chosen opponents;
- `openspiel_game`: `python_mexican_train`, registered with `pyspiel` on import.

May import `protocol`, the engine (`referee.rules`), the modules at the top of
`referee` (text, consoles), `referee.game.wire` (no other module of
`referee.game`) and the bots' forward model `referee.botkit`; nothing of
processes, logs, leagues or the command line. The learning libraries are the
optional extra `learn` (`pip install -e '.[learn]'`): importing `encode` and
`table` needs numpy only; each environment module needs its library.
"""
