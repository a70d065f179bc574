"""A league served over TLS as on the internet, from `referee keygen` to `referee verify`
(issue 27): the entrants' nonces are mixed into the deals, `referee connect --receipts`
keeps each game's signed receipt, and the published site verifies with them, and no
output holds a token.

Real processes (serve, two bridges and their bots) on loopback; the league file is
tests/server/_served.py's, its deal key pinned, with `mix = ["entrants"]` and a key.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from referee.proof.commitment import deal_seed, mixed_key

from ._served import (
    ENV,
    KEY,
    REFEREE,
    TOKEN_C,
    TOKEN_D,
    assert_no_token,
    connect,
    finished,
    league_file,
    serving,
)


def test_an_internet_league_mixes_the_entrants_nonces_and_its_receipts_verify(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "net"
    folder.mkdir()
    made = subprocess.run(
        [*REFEREE, "keygen", str(folder / "org.key")], env=ENV, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    path = league_file(folder, tcp=True)
    text = path.read_text().replace(
        'out = "out"', 'out = "out"\nmix = ["entrants"]\nsign = "org.key"\nreveal = "at-end"'
    )
    path.write_text(text)
    out = folder / "out"
    receipts = folder / "receipts"
    with serving(path, "--tls", "self-signed") as served:
        assert served.fingerprint is not None
        pin = ["--pin", served.fingerprint, "--receipts", str(receipts)]
        bots = [
            connect(served.address, n, folder / f"{n}.token", *pin, "--nonce", f"nonce of {n}")
            for n in "cd"
        ]
        said = [finished(b) for b in bots]
        served.wait()
    assert served.process.returncode == 0, served.err
    assert all(status == 0 for status, _, _ in said), said
    assert "waiting up to 600 s for the first login of every tcp bot (c, d)" in served.out
    contributions = json.loads((out / "contributions.json").read_text())["contributions"]
    assert contributions == {"nonces": {"c": "nonce of c", "d": "nonce of d"}}
    # The deals come from the key with the nonces mixed in, not from the key alone.
    header = json.loads(
        subprocess.run(
            ["zcat", str(out / "logs" / "g00001.jsonl.gz")], capture_output=True, text=True
        ).stdout.splitlines()[0]
    )
    mixed = mixed_key(bytes.fromhex(KEY), contributions)
    assert header["seed"] == deal_seed(mixed, 7, 0, 0) != deal_seed(bytes.fromhex(KEY), 7, 0, 0)
    # Each bridge kept the receipt of each of its games (2 games, c and d in each).
    kept = sorted(receipts.glob("*.json"))
    assert len(kept) == 4, kept
    site = subprocess.run([*REFEREE, "site", str(out)], env=ENV, capture_output=True, text=True)
    assert site.returncode == 0, site.stderr
    args = [a for p in kept for a in ("--receipt", str(p))]
    checked = subprocess.run(
        [*REFEREE, "verify", str(out / "site"), *args], env=ENV, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok    contributions: mixed into the deals: 2 entrants' nonces" in checked.stdout
    assert checked.stdout.count("ok    receipt ") == 4
    texts = [served.out, served.err, *(t for _, *ts in said for t in ts), checked.stdout]
    assert_no_token(out, texts, (TOKEN_C, TOKEN_D))
