"""The arena: an open, continuous competition that bots join, update and leave while it
runs (`referee arena`).

- `config`: ARENA.toml, its `[arena]` terms, and the league configurations games are
  played with;
- `ledger`: entries, versions, units, games and ratings in SQLite, shared with the
  commands that act on a running arena;
- `matchmaking`: who sits down next (pure);
- `validate`: the battery and the validation game a new version passes first;
- `run`: the running arena; `final`: the final stage, with `separation` (whether two
  finalists are told apart);
- `board` and `refit`: the leaderboard and its order-free refit;
- `site`: the results site, refreshed as games finish.

May import what the league may (`referee.play`, `referee.logs`, `referee.game`,
`referee.bots`, `referee.stats`, the engine and `protocol`), the league and the site;
not the network (a tcp server is handed in) or the command line.
"""
