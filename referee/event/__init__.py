"""Events: stages of Swiss-grouped tables, group knockouts, round robins and finals, for
tables of 3 to 8 seats on duplicate boards (spec/EVENTS.md).

`config` reads EVENT.toml, `pairing` seats and ranks the entries (pure functions of the
results so far), and `run` plays each round's tables as leagues of their own.

May import `referee.league` and what the league may import; not the site, the network
or the command line.
"""
