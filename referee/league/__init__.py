"""Leagues: many games between many bots, scheduled fairly, recorded durably, ranked.

`schema` types LEAGUE.toml, `config` reads and checks it, `schedule` lays out
every game, `pool` keeps bot processes between games, `game` plays one scheduled
game with them, `ledger` records finished games in SQLite, `standings` turns the
ledger into tables, and `run` ties them together under trio. What proves a league's
results (its commitment, results.json, receipts, `referee verify`) is
`referee.proof`: `terms` gives it what the league commits to, and `restate` the
league's own code that the verifier re-derives the ledger's games and the standings
with.

May import `referee.play`, `referee.logs`, `referee.game`, `referee.bots`,
`referee.stats`, `referee.proof`, the engine and `protocol`; not the site (but for
the type of the live site `run` is handed), the network or the command line.
"""
