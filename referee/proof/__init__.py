"""Proof of results (issue 27): what lets an entrant check the organiser's word, and
what a league writes so that they can.

- `keys`: the organiser's Ed25519 key pair and signatures in minisign's formats
  (`referee keygen`, a signed `results.json` that `minisign -V` verifies, the raw
  signatures of receipts).
- `commitment`: the commitment a league makes before its first game (its terms and
  the digest of its deal key), the deal seeds the key derives, the contributions
  mixed into them (`[league] mix`), the reveal of the key.
- `results`: the chain of the recorded games, checkpoints, `results.json` and the
  bots' receipts, signed with `keys`.
- `verify`: `referee verify`, every check of a league's folder or site, in parts:
  `folder` (the folder as read, and the report), `verify_deals` (commitment, key,
  contributions, schedule), `verify_logs` (logs, bots' files), `verify_results`
  (results.json, ledger, signatures, checkpoints, receipts), `verify_standings`
  (standings and the files published from them).

May import the shared modules at the top of `referee` (`text`), `protocol`, `bots`,
`game` and `logs` (the logs it checks, the game seed's size), the standard library,
`cryptography` and `msgspec`; not the league, which imports it to commit, sign and write its
results: what the verifier re-derives with the league's own code (the ledger's games,
the standings) is handed in by the caller (a `folder.Restater`: `referee verify`
hands it `referee.league.restate.Restate`). So every package from leagues up
(league, site, net, arena, commands) may use it.
"""
