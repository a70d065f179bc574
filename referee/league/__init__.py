"""Leagues: many games between many bots, scheduled fairly, recorded durably, ranked.

`schema` types LEAGUE.toml, `config` reads and checks it, `schedule` lays out
every game, `pool` keeps bot processes between games, `game` plays one scheduled
game with them, `ledger` records finished games in SQLite, `standings` turns the
ledger into tables, and `run` ties them together under trio.

May import `referee.play`, `referee.logs`, `referee.game`, `referee.bots`,
`referee.stats`, the engine and `protocol`; not the site (but for the type of the
live site `run` is handed), the network or the command line.
"""
