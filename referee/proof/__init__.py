"""Proof of results (issue 27): what lets an entrant check the organiser's word.

- `keys`: the organiser's Ed25519 key pair and signatures in minisign's formats
  (`referee keygen`, a signed `results.json` that `minisign -V` verifies, the raw
  signatures of receipts).

May import only the shared modules at the top of `referee` (`text`), the standard
library and `cryptography`; nothing of bots, games, logs or leagues, so that every
package from leagues up (league, site, net, commands) may use it.
"""
