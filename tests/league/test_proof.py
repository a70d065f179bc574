"""Results any entrant can verify (issue 27, parts 3 and 4), with real bot processes and
the command line: a league commits before its first game, signs its results, checkpoints
and receipts, reveals its key at the end, and `referee verify` checks all of it from the
output folder and from the published site; each kind of tampering is caught with the
game named. Debian's minisign checks the signatures too, when it is installed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from protocol import messages as m
from referee.proof.commitment import canonical, deal_seed, mixed_key
from referee.proof.results import chain, chain_next, chain_start

PY = sys.executable
BIN = Path(PY).parent
ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
TIMEOUT_S = 300


def referee(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "referee"), *map(str, args)],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


RULES = '[rules]\npreset = "standard"\nmax_pip = 6\nrounds = "single"\n'


def sample(name: str) -> str:
    """The [[bot]] table of sample_bots/NAME_bot.py, run from the checkout."""
    script = ROOT / "sample_bots" / f"{name}_bot.py"
    return f'[[bot]]\nname = "{name}"\ncommand = ["{PY}", "{script}"]\ncwd = "{ROOT}"\n'


def league_file(folder: Path, *, extra: str = "", deals: int = 2) -> Path:
    """Two bots (greedy and one that keeps its receipts), double-6, one round."""
    receipts = folder / "receipts"
    receipts.mkdir(exist_ok=True)
    path = folder / "proof.toml"
    path.write_text(
        f"""
[league]
name = "proof"
table = 2
deals = {deals}
seed = 7
out = "out"
{extra}
{RULES}
{sample("greedy")}
[[bot]]
name = "keeper"
command = ["{PY}", "{BOTS / "receipt_keeper.py"}"]
env = {{ RECEIPTS = "{receipts}" }}
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished, signed league that reveals its key at the end, with its site."""
    folder = tmp_path_factory.mktemp("signed")
    made = referee("keygen", "org.key", cwd=folder)
    assert made.returncode == 0, made.stderr
    path = league_file(folder, extra='sign = "org.key"\nreveal = "at-end"')
    played = referee("league", path, "--sandbox", "none", "--report-every", "2", cwd=folder)
    assert played.returncode == 0, played.stdout + played.stderr
    assert "commitment sha256:" in played.stdout
    built = referee("site", folder / "out", cwd=folder)
    assert built.returncode == 0, built.stderr
    return folder


def copy_of(signed: Path, tmp_path: Path) -> Path:
    """A copy of the signed league's folder to tamper with."""
    target = tmp_path / "copy"
    shutil.copytree(signed, target)
    return target


def published(folder: Path) -> str:
    """The commitment's digest, as the organiser published it before the games."""
    return "sha256:" + hashlib.sha256((folder / "out" / "commitment.json").read_bytes()).hexdigest()


def verify(folder: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return referee("verify", *args, cwd=folder)


def failing(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("FAIL")]


# ---------------------------------------------------------------- a league that holds


def test_a_signed_league_verifies_from_its_folder_and_its_site(signed: Path) -> None:
    digest = published(signed)
    before = sorted(p.relative_to(signed) for p in signed.rglob("*"))
    for where in (signed / "out", signed / "out" / "site"):
        result = verify(signed, where, "--commitment", digest)
        assert result.returncode == 0, result.stdout + result.stderr
        names = [line.split(":")[0].split()[-1] for line in result.stdout.splitlines()[:-1]]
        for check in ("commitment", "key", "schedule", "logs", "standings", "signatures"):
            assert check in names, result.stdout
        assert "checkpoints" in names
        assert result.stdout.splitlines()[-1].startswith("verified: all ")
    # The output folder has its ledger, which is checked against results.json too.
    assert "ok    ledger:" in verify(signed, signed / "out").stdout
    # Verify writes nothing into what it checks: not even SQLite's -shm and -wal files.
    assert sorted(p.relative_to(signed) for p in signed.rglob("*")) == before


def test_the_commitment_comes_first_and_every_log_names_it(signed: Path) -> None:
    out = signed / "out"
    commitment = json.loads((out / "commitment.json").read_text())
    key = bytes.fromhex(json.loads((out / "reveal.json").read_text())["deal_key"])
    assert commitment["deal_key_sha256"] == "sha256:" + hashlib.sha256(key).hexdigest()
    assert [g[0] for g in commitment["league"]["schedule"]] == [f"g{k:05d}" for k in (1, 2, 3, 4)]
    assert commitment["public_key"] == (signed / "org.key.pub").read_text().splitlines()[1]
    standings = json.loads((out / "standings.json").read_text())
    assert standings["commitment"] == published(signed)
    for log in sorted((out / "logs").glob("*.jsonl.gz")):
        lines = gzip.decompress(log.read_bytes()).splitlines(keepends=True)
        header, footer = json.loads(lines[0]), json.loads(lines[-1])
        assert header["commitment"] == published(signed)
        body = b"".join(lines[:-1])
        assert footer["sha256"] == "sha256:" + hashlib.sha256(body).hexdigest()
        # The seed is the one the revealed key derives (deal and table from the schedule).
        entry = next(g for g in commitment["league"]["schedule"] if g[0] == header["game"])
        assert header["seed"] == deal_seed(key, 7, entry[3], entry[2])
    site = (out / "site" / "index.html").read_text()
    assert published(signed) in site and 'href="results.json"' in site


def test_receipts_are_signed_and_match_the_published_results(signed: Path) -> None:
    receipts = sorted((signed / "receipts").glob("*.json"))
    assert [p.stem for p in receipts] == ["g00001", "g00002", "g00003", "g00004"]
    results = json.loads((signed / "out" / "results.json").read_text())
    by_id = {g["id"]: g for g in results["games"]}
    for path in receipts:
        receipt = json.loads(path.read_text())["receipt"]
        game = by_id[receipt["game"]]
        assert receipt["log_sha256"] == game["log_sha256"]
        assert game["seats"][receipt["seat"]] == receipt["name"] == "keeper"
        assert receipt["signature"] and receipt["key_id"] == results["key_id"]
    args = [a for p in receipts for a in ("--receipt", str(p))]
    result = verify(signed, signed / "out" / "site", *args)
    assert result.returncode == 0, result.stdout
    assert result.stdout.count("ok    receipt ") == 4


@pytest.mark.skipif(shutil.which("minisign") is None, reason="minisign is not installed")
def test_minisign_verifies_the_results_and_the_checkpoints(signed: Path) -> None:
    out = signed / "out"
    files = [out / "results.json", *sorted((out / "checkpoints").glob("*.json"))]
    assert len(files) == 3  # after 2 and 4 games
    for path in files:
        checked = subprocess.run(
            ["minisign", "-Vm", str(path), "-p", str(signed / "org.key.pub")],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert checked.returncode == 0, checked.stderr
        assert "Trusted comment: " in checked.stdout


# ---------------------------------------------------------------- tampering, caught


def _edit_log(path: Path, edit: object) -> None:
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    lines = edit(lines)  # type: ignore[operator]
    path.write_bytes(gzip.compress(b"\n".join(lines), mtime=0))


def _slower(lines: list[bytes]) -> list[bytes]:
    """The first timed decision of the log made 500 ms slower."""
    for k, line in enumerate(lines):
        value = json.loads(line) if line.strip() else {}
        if value.get("type") == "decision" and value.get("latency_ms") is not None:
            value["latency_ms"] += 500
            lines[k] = json.dumps(value, separators=(",", ":")).encode()
            return lines
    raise AssertionError("no timed decision")


def test_a_tampered_latency_is_caught(signed: Path, tmp_path: Path) -> None:
    folder = copy_of(signed, tmp_path)
    log = folder / "out" / "logs" / "g00002.jsonl.gz"
    _edit_log(log, _slower)
    result = verify(folder, folder / "out")
    assert result.returncode == 1
    assert any("logs: g00002: its log's digest is" in line for line in failing(result))
    # An organiser who also rewrites the ledger's digest is caught by the footer's own.
    digest = "sha256:" + hashlib.sha256(gzip.decompress(log.read_bytes())).hexdigest()
    with sqlite3.connect(folder / "out" / "league.db") as db:
        db.execute("UPDATE games SET log_sha256=? WHERE game_id='g00002'", (digest,))
    result = verify(folder, folder / "out")
    assert any(
        "logs: g00002: its log was edited after it was written" in line for line in failing(result)
    ), result.stdout
    # And the ledger no longer matches the signed results.json.
    assert any(
        "ledger: g00002: the ledger and results.json differ in log digest" in line
        for line in failing(result)
    ), result.stdout


def test_a_deleted_game_is_caught(signed: Path, tmp_path: Path) -> None:
    folder = copy_of(signed, tmp_path)
    with sqlite3.connect(folder / "out" / "league.db") as db:
        db.execute("DELETE FROM games WHERE game_id='g00003'")
    result = verify(folder, folder / "out")
    assert result.returncode == 1
    assert any("g00003: in results.json but not in the ledger" in line for line in failing(result))
    # Taken out of the site's results.json too: the league ended, so it is missing, and
    # the signature no longer holds.
    site = folder / "out" / "site"
    results = json.loads((site / "results.json").read_text())
    results["games"] = [g for g in results["games"] if g["id"] != "g00003"]
    (site / "results.json").write_text(json.dumps(results))
    fails = failing(verify(folder, site))
    assert any("g00003: scheduled, and not among the results" in line for line in fails), fails
    assert any(line.startswith("FAIL  checkpoints:") for line in fails), fails
    assert any(line.startswith("FAIL  signatures:") for line in fails), fails


def test_a_reordered_ledger_is_caught(signed: Path, tmp_path: Path) -> None:
    folder = copy_of(signed, tmp_path)
    with sqlite3.connect(folder / "out" / "league.db") as db:
        (a,), (b,) = db.execute("SELECT seq FROM games WHERE game_id IN ('g00001', 'g00002')")
        db.execute("UPDATE games SET seq = -1 WHERE game_id='g00001'")
        db.execute("UPDATE games SET seq = ? WHERE game_id='g00002'", (a,))
        db.execute("UPDATE games SET seq = ? WHERE game_id='g00001'", (b,))
    fails = failing(verify(folder, folder / "out"))
    assert any("differ in record order" in line for line in fails), fails
    assert any(line.startswith("FAIL  checkpoints:") for line in fails), fails


def test_a_swapped_log_is_caught(signed: Path, tmp_path: Path) -> None:
    folder = copy_of(signed, tmp_path)
    logs = folder / "out" / "logs"
    shutil.copyfile(logs / "g00001.jsonl.gz", logs / "g00004.jsonl.gz")
    fails = failing(verify(folder, folder / "out"))
    assert any("logs: g00004: its log's digest is" in line for line in fails), fails


def test_a_changed_receipt_or_another_commitment_is_refused(signed: Path, tmp_path: Path) -> None:
    kept = json.loads((signed / "receipts" / "g00001.json").read_text())
    kept["receipt"]["scores"] = [0, 0]
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(kept))
    fails = failing(verify(signed, signed / "out", "--receipt", forged))
    assert fails == ["FAIL  receipt forged.json: g00001: not signed by the organiser's key"], fails
    other = "sha256:" + "1" * 64
    result = verify(signed, signed / "out", "--commitment", other)
    assert result.returncode == 1
    assert failing(result)[0].startswith("FAIL  commitment: commitment.json is sha256:")


def test_verify_refuses_a_folder_without_a_league(tmp_path: Path) -> None:
    result = verify(tmp_path, tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"referee: error: {tmp_path}: no commitment.json here; give a league's output "
        "folder or its site"
    )


# ---------------------------------------------------------------- commit, beacon, reveal


def test_a_beacon_is_mixed_in_after_a_commitment(tmp_path: Path) -> None:
    path = league_file(tmp_path, extra='mix = ["beacon"]', deals=1)
    early = referee("league", path, "--sandbox", "none", "--beacon", "x", cwd=tmp_path)
    assert early.returncode == 2
    assert "run `referee commit" in early.stderr and early.stderr.count("\n") == 1
    shutil.rmtree(tmp_path / "out")
    committed = referee("commit", path, cwd=tmp_path)
    assert committed.returncode == 0, committed.stderr
    digest = committed.stdout.strip()
    assert digest == published(tmp_path)
    # Not over yet: the key stays secret.
    refused = referee("reveal", tmp_path / "out", cwd=tmp_path)
    assert refused.returncode == 2
    assert "0 of 2 games recorded and the league is not over" in refused.stderr
    missing = referee("league", path, "--sandbox", "none", cwd=tmp_path)
    assert missing.returncode == 2 and "start with --beacon" in missing.stderr
    played = referee("league", path, "--sandbox", "none", "--beacon", "draw 17", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    contributions = json.loads((tmp_path / "out" / "contributions.json").read_text())
    assert contributions["contributions"] == {"beacon": "draw 17"}
    revealed = referee("reveal", tmp_path / "out", cwd=tmp_path)
    assert revealed.returncode == 0, revealed.stderr
    reveal = json.loads((tmp_path / "out" / "reveal.json").read_text())
    key = mixed_key(bytes.fromhex(reveal["deal_key"]), {"beacon": "draw 17"})
    header = json.loads(
        gzip.decompress((tmp_path / "out" / "logs" / "g00001.jsonl.gz").read_bytes()).split(b"\n")[
            0
        ]
    )
    assert header["seed"] == deal_seed(key, 7, 0, 0)
    assert header["seed"] != deal_seed(bytes.fromhex(reveal["deal_key"]), 7, 0, 0)
    result = verify(tmp_path, tmp_path / "out", "--commitment", digest)
    assert result.returncode == 0, result.stdout
    assert 'ok    contributions: mixed into the deals: beacon "draw 17"' in result.stdout
    # The beacon cannot be changed when the league resumes.
    again = referee(
        "league", path, "--sandbox", "none", "--resume", "--beacon", "draw 18", cwd=tmp_path
    )
    assert again.returncode == 2 and "--beacon differs" in again.stderr


# ---------------------------------------------------------------- the formats


def test_the_chain_and_the_mixed_key_follow_their_definitions() -> None:
    commitment = "sha256:" + "ab" * 32
    start = hashlib.sha256(f"chain/{commitment}".encode()).hexdigest()
    assert chain_start(commitment) == start
    after = hashlib.sha256(f"{start}:g00001:sha256:{'cd' * 32}".encode()).hexdigest()
    assert chain_next(start, "g00001", "sha256:" + "cd" * 32) == after
    assert chain(commitment, [("g00001", "sha256:" + "cd" * 32)]) == [start, after]
    key = bytes(range(32))
    assert mixed_key(key, None) == key
    import hmac

    mixed = hmac.new(key, b'mix/{"beacon":"b","nonces":{"a":"n"}}', hashlib.sha256).digest()
    assert mixed_key(key, {"nonces": {"a": "n"}, "beacon": "b"}) == mixed
    assert canonical({"b": 1, "a": [1, 2]}) == b'{"a":[1,2],"b":1}'


def test_the_files_a_bot_played_with_are_compared_by_their_digests() -> None:
    from referee.proof.verify_logs import _files_apart

    committed = {"/srv/py": "sha256:1", "/srv/bot.py": "sha256:2"}
    assert _files_apart(committed, dict(committed)) is None
    # A cluster worker sees the same files under other paths: the same version.
    assert _files_apart(committed, {"/w/py": "sha256:1", "/w/bot.py": "sha256:2"}) is None
    changed = {"/srv/py": "sha256:1", "/srv/bot.py": "sha256:3"}
    assert _files_apart(committed, changed) == ("/srv/bot.py", "sha256:3", "sha256:2")
    assert _files_apart(committed, {"/srv/py": "sha256:1"}) == ("/srv/bot.py", None, "sha256:2")
    added = {**committed, "model.bin": "sha256:9"}
    assert _files_apart(committed, added) == ("model.bin", "sha256:9", None)


def test_a_receipt_signs_its_fields_in_a_fixed_form() -> None:
    receipt = m.Receipt(
        league="sha256:" + "0" * 64,
        game="g00001",
        seat=1,
        name="bot",
        scores=[3, 0],
        ranks=[2, 1],
        log_sha256="sha256:" + "1" * 64,
        key_id="0DAE7BC29B467DF3",
        signature="ignored",
    )
    assert m.receipt_bytes(receipt) == (
        b"mexican-train-referee receipt 1\n"
        b'{"game":"g00001","key_id":"0DAE7BC29B467DF3","league":"sha256:' + b"0" * 64 + b'",'
        b'"log_sha256":"sha256:' + b"1" * 64 + b'","name":"bot","ranks":[2,1],"scores":[3,0],'
        b'"seat":1}'
    )


def test_a_match_verifies_by_its_rule_of_units(tmp_path: Path) -> None:
    path = tmp_path / "match.toml"
    path.write_text(
        f"""
[league]
format = "match"
seed = 3
out = "out"
reveal = "at-end"

[match]
new = "greedy"
base = "random"
max_games = 4

{RULES}
{sample("greedy")}
{sample("random")}""",
        encoding="utf-8",
    )
    played = referee("league", path, "--sandbox", "none", cwd=tmp_path)
    assert played.returncode in (0, 1), played.stderr  # H1 or not: 4 games decide nothing
    assert (tmp_path / "out" / "reveal.json").is_file()
    result = verify(tmp_path, tmp_path / "out", "--commitment", published(tmp_path))
    assert result.returncode == 0, result.stdout
    assert "ok    schedule: 4 games as scheduled" in result.stdout


def test_a_results_file_of_another_shape_fails_its_check_in_one_line(
    signed: Path, tmp_path: Path
) -> None:
    folder = copy_of(signed, tmp_path)
    site = folder / "out" / "site"
    results = json.loads((site / "results.json").read_text())
    del results["games"][1]["seats"]
    (site / "results.json").write_text(json.dumps(results))
    result = verify(folder, site)
    assert result.returncode == 1, result.stderr
    assert failing(result) == [
        "FAIL  results: a file of the league is not as the referee writes it (KeyError: "
        "missing 'seats'); the results cannot be checked against it"
    ], result.stdout
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------- all that is published, covered


def _greedy(path: Path, key: str, change: object) -> None:
    """Greedy's line of the standings in `path` given `key` = change(its value)."""
    data = json.loads(path.read_text())
    row = next(b for b in data["bots"] if b["name"] == "greedy")
    row[key] = change(row.get(key))  # type: ignore[operator]
    path.write_text(json.dumps(data, indent=2) + "\n")


def _more_points(path: Path) -> None:
    _greedy(path, "points", lambda points: points + 1)


def _prize(path: Path) -> None:
    _greedy(path, "prize", lambda _: 1000)


def _renamed(path: Path) -> None:
    text = path.read_text()
    path.write_text(text.replace("greedy", "greedy-the-great", 1))


@pytest.mark.parametrize(
    ("where", "name", "edit", "said"),
    [
        ("out", "standings.json", _more_points, "standings.json: greedy: points "),
        ("out/site", "standings.json", _more_points, "standings.json: greedy: points "),
        ("out/site", "standings.json", _prize, "standings.json: greedy: prize: not the keys"),
        ("out", "standings.csv", _renamed, "standings.csv: line "),
        ("out/site", "standings.csv", _renamed, "standings.csv: line "),
        ("out", "standings.md", _renamed, "standings.md: line "),
    ],
)
def test_an_edited_standings_file_fails_verify_naming_it(
    signed: Path, tmp_path: Path, where: str, name: str, edit: object, said: str
) -> None:
    folder = copy_of(signed, tmp_path)
    edit(folder / where / name)  # type: ignore[operator]
    result = verify(folder, folder / where, "--commitment", published(signed))
    assert result.returncode == 1, result.stdout
    assert len(failing(result)) == 1, result.stdout
    assert failing(result)[0].startswith(f"FAIL  published: {said}"), result.stdout
    assert result.stdout.splitlines()[-1].startswith("NOT verified: 1 of "), result.stdout


def test_verify_names_every_file_it_does_not_cover(signed: Path, tmp_path: Path) -> None:
    site = verify(signed, signed / "out" / "site")
    assert site.returncode == 0, site.stdout
    assert "ok    published: standings.json, standings.csv: the standings the games give" in (
        site.stdout
    )
    uncovered = [line for line in site.stdout.splitlines() if line.startswith("not covered: ")]
    assert len(uncovered) == 1, site.stdout
    for item in ("pages (*.html)", "assets/ (", "games/ (", "the clocks' warn_at"):
        assert item in uncovered[0], uncovered
    for covered in ("standings.json", "standings.csv", "results.json", "checkpoints/", "logs/"):
        assert covered not in uncovered[0], uncovered
    out = verify(signed, signed / "out")
    assert "ok    published: standings.json, standings.csv, standings.md:" in out.stdout
    said = next(line for line in out.stdout.splitlines() if line.startswith("not covered: "))
    for item in ("standings.svg", "stderr/ (", "site/ ("):
        assert item in said, said
    # A file the referee does not write passes nothing unsaid.
    folder = copy_of(signed, tmp_path)
    (folder / "out" / "site" / "prizes.txt").write_text("greedy wins a car\n")
    added = verify(folder, folder / "out" / "site")
    assert added.returncode == 0, added.stdout
    assert "; prizes.txt;" in added.stdout, added.stdout


def updating_league(folder: Path, *, allow: bool) -> tuple[Path, Path]:
    """Greedy and `mover`, a copy of the random bot in `folder`, two games; the league
    file and mover's script."""
    script = folder / "mover.py"
    shutil.copyfile(ROOT / "sample_bots" / "random_bot.py", script)
    path = folder / "updating.toml"
    path.write_text(
        f"""
[league]
name = "updating"
table = 2
deals = 1
seed = 5
out = "out"
reveal = "at-end"
{"allow_updates = true" if allow else ""}
{RULES}
{sample("greedy")}
[[bot]]
name = "mover"
command = ["{PY}", "mover.py"]
""",
        encoding="utf-8",
    )
    return path, script


def _commit_then_change(
    folder: Path, *, allow: bool
) -> tuple[Path, str, subprocess.CompletedProcess[str]]:
    path, script = updating_league(folder, allow=allow)
    committed = referee("commit", path, cwd=folder)
    assert committed.returncode == 0, committed.stderr
    committed_digest = "sha256:" + hashlib.sha256(script.read_bytes()).hexdigest()
    with script.open("a") as f:
        f.write("# version 2, sent after the commitment\n")
    played = referee("league", path, "--sandbox", "none", "-q", cwd=folder)
    assert played.returncode == 0, played.stdout + played.stderr
    built = referee("site", folder / "out", cwd=folder)
    assert built.returncode == 0, built.stderr
    return path, committed_digest, played


def test_a_bot_changed_after_commit_fails_verify_naming_the_bot_and_the_file(
    tmp_path: Path,
) -> None:
    _path, before, played = _commit_then_change(tmp_path, allow=False)
    assert "warning: the files of mover changed since the commitment" in played.stderr
    now = "sha256:" + hashlib.sha256((tmp_path / "mover.py").read_bytes()).hexdigest()
    # Each log names the files each bot played with: the new version's.
    header = json.loads(
        gzip.decompress((tmp_path / "out" / "logs" / "g00001.jsonl.gz").read_bytes()).split(b"\n")[
            0
        ]
    )
    files = {b["name"]: b["files"] for b in header["bots"]}
    assert files["mover"]["mover.py"] == now != before
    digest = published(tmp_path)
    for where in (tmp_path / "out", tmp_path / "out" / "site"):
        result = verify(tmp_path, where, "--commitment", digest)
        assert result.returncode == 1, result.stdout
        assert failing(result) == [
            f"FAIL  bots: g00001: mover played with mover.py at {now}; the commitment names "
            f"{before} (1 more seat played with other files); the league does not allow "
            "updates ([league] allow_updates)"
        ], result.stdout


def test_updates_the_organiser_allowed_pass_verify_and_are_said(tmp_path: Path) -> None:
    path, _before, played = _commit_then_change(tmp_path, allow=True)
    assert "note: the files of mover changed since the commitment, which allows updates" in (
        played.stderr
    )
    out = tmp_path / "out"
    assert json.loads((out / "commitment.json").read_text())["league"]["allow_updates"] is True
    assert json.loads((out / "results.json").read_text())["allow_updates"] is True
    index = (out / "site" / "index.html").read_text()
    assert 'id="updates"><strong>The bots could be updated during this league' in index
    for where in (out, out / "site"):
        result = verify(tmp_path, where, "--commitment", published(tmp_path))
        assert result.returncode == 0, result.stdout
        assert (
            "ok    bots: the commitment allows updates ([league] allow_updates); played with "
            "other files than it names: mover's mover.py in 2 games from g00001"
        ) in result.stdout
    # results.json cannot hide it: it must say what the commitment says.
    results = json.loads((out / "site" / "results.json").read_text())
    results["allow_updates"] = False
    (out / "site" / "results.json").write_text(json.dumps(results))
    fails = failing(verify(tmp_path, out / "site"))
    assert fails == [
        "FAIL  results: results.json says allow_updates = false; the commitment says true"
    ], fails
    # Nor can the league file turn it off (or on) after the commitment.
    path.write_text(path.read_text().replace("allow_updates = true", ""))
    again = referee("league", path, "--sandbox", "none", "--resume", cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr.splitlines() == [
        f"referee: error: {tmp_path / 'out' / 'commitment.json'} commits to other terms "
        "(allow_updates changed since it was made); a league may not change after its "
        "commitment: use another --out folder"
    ], again.stderr
