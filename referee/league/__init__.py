"""Leagues: many games between many bots, scheduled fairly, recorded durably, ranked.

`config` reads LEAGUE.toml, `schedule` lays out every game, `pool` keeps bot
processes between games, `ledger` records finished games in SQLite, `standings`
turns the ledger into tables, and `run` ties them together under trio.
"""
