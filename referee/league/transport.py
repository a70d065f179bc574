"""How a served league's TCP bots reached the referee, as the standings and the site
say it: over TLS (with the server certificate's fingerprint), over plain TCP on a
loopback address, or over plain TCP on a public one (`--insecure-plaintext`).

`referee serve` writes it in the ledger's `meta` table (`transport`, and
`tls_fingerprint` over TLS) before the first game; whatever reads the standings from
the ledger reads it back (`recorded`). A league resumed over another transport keeps
`insecure-plaintext` once it was served so: its earlier games' tokens and hands
crossed the network in the clear all the same.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Literal

Kind = Literal["tls", "plaintext", "insecure-plaintext"]
KINDS: tuple[Kind, ...] = ("tls", "plaintext", "insecure-plaintext")
INSECURE = (
    "served over plain TCP on a public address (--insecure-plaintext): tokens and hands "
    "crossed the network unencrypted"
)


@dataclass(frozen=True)
class Transport:
    """How the TCP bots connected."""

    kind: Kind
    fingerprint: str = ""  # over TLS: the server certificate's, sha256:HEX

    @property
    def insecure(self) -> bool:
        """Whether the standings warn about it."""
        return self.kind == "insecure-plaintext"

    def line(self) -> str:
        """One line for the standings and the site, lowercase and without a full stop."""
        if self.kind == "tls":
            return f"served over TLS: the server's certificate is {self.fingerprint}"
        if self.kind == "plaintext":
            return "served over plain TCP on a loopback address"
        return INSECURE

    def to_json(self) -> dict[str, str | None]:
        """standings.json's `transport`."""
        return {"kind": self.kind, "tls_fingerprint": self.fingerprint or None}


def note(db: sqlite3.Connection, transport: Transport) -> Transport:
    """Record `transport` in the ledger `db` (merged with what an earlier run of the
    league recorded) and return what is recorded now."""
    old = recorded(db)
    kind: Kind = "insecure-plaintext" if old is not None and old.insecure else transport.kind
    fingerprint = transport.fingerprint or (old.fingerprint if old is not None else "")
    db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    rows: list[tuple[str, str]] = [("transport", kind)]
    if fingerprint:
        rows.append(("tls_fingerprint", fingerprint))
    db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", rows)
    return Transport(kind, fingerprint)


def recorded(db: sqlite3.Connection) -> Transport | None:
    """What `note` recorded in `db`; None for a league not served (or served before
    this was kept)."""
    rows = dict(
        db.execute("SELECT key, value FROM meta WHERE key IN ('transport', 'tls_fingerprint')")
    )
    for kind in KINDS:
        if rows.get("transport") == kind:
            return Transport(kind, rows.get("tls_fingerprint", "") if kind == "tls" else "")
    return None
