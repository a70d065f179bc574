"""`referee keygen`: the organiser's signing key pair (docs/proof.md)."""

from __future__ import annotations

import click

from .common import fail


@click.command("keygen")
@click.argument("keyfile")
def keygen_cmd(keyfile: str) -> None:
    """Write a new Ed25519 key pair in minisign's format: KEYFILE, the secret key (mode
    0600, unencrypted), and KEYFILE.pub, the public key. Neither may exist already.

    A league signs its results with the secret key (`[league] sign = "KEYFILE"`); an
    entrant checks them with the public one: minisign -Vm results.json -p KEYFILE.pub"""
    from pathlib import Path

    from ..proof.keys import ProofError, keygen, public_path
    from ..text import shown

    path = Path(keyfile)
    try:
        key = keygen(path)
    except ProofError as exc:
        fail(str(exc))
    pub = shown(str(public_path(path)))
    click.echo(
        f"secret key: {shown(str(path))} (mode 0600): keep it private, whoever holds it "
        "can sign results in your name"
    )
    click.echo(f"public key: {pub} (key id {key.public.id_hex}): publish it, or this line:")
    click.echo(key.public.line())
    click.echo(f"an entrant checks a signed file with: minisign -Vm FILE -p {pub}")
