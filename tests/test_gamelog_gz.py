"""Compressed game logs: written plain while the game runs, compressed once finished,
read alike by their first bytes, and refused in one line when damaged.

Logs are written in-process (`tests.test_replay.write_game`); the league, play and
match tests check the names real games get.
"""

from __future__ import annotations

import datetime as dt
import gzip
import types
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner, Result

from referee.cli import main
from referee.logs import gamelog
from referee.logs.gamelog import find_log, live_path, log_bytes, log_stem, read_log
from referee.logs.outputs import new_file
from referee.play.runner import seat_log_path
from referee.rules import preset
from tests.test_replay import write_game

RULES = preset("standard", players=3, max_pip=6)


def replay(path: Path) -> Result:
    return CliRunner().invoke(main, ["replay", str(path)])


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The log's clock stopped: two logs of one game then differ in nothing."""
    instant = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC).timestamp()

    class Frozen(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> Frozen:
            return cls.fromtimestamp(instant, tz)

    monkeypatch.setattr(gamelog, "dt", types.SimpleNamespace(datetime=Frozen, UTC=dt.UTC))


@pytest.mark.usefixtures("frozen_clock")
def test_a_compressed_log_holds_the_bytes_of_a_plain_one(tmp_path: Path) -> None:
    plain = write_game(tmp_path / "p.jsonl", RULES, 11)
    packed = write_game(tmp_path / "c.jsonl.gz", RULES, 11)
    assert plain.read_bytes().startswith(b'{"type":"header"')
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()
    assert log_bytes(packed) == plain.read_bytes()
    # Compressed in place of the file written during the game, which is gone, with no
    # temporary file left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl.gz", "p.jsonl"]
    read = read_log(packed)
    assert read.complete
    assert msgspec.structs.replace(read, path=str(plain)) == read_log(plain)
    result = replay(packed)
    assert result.exit_code == 0, result.output
    assert f"{packed}: verified {len(read.decisions)} decisions" in result.stdout
    assert "the log is complete" in result.stdout
    # No time or file name inside the gzip: the same log compresses to the same bytes.
    (tmp_path / "again").mkdir()
    again = write_game(tmp_path / "again" / "c.jsonl.gz", RULES, 11)
    assert again.read_bytes() == packed.read_bytes()


def test_an_unfinished_log_stays_plain_and_incomplete(tmp_path: Path) -> None:
    # A game cut short (the referee killed, a crash) never reaches the compression: its
    # log is the plain file written as it went, found under the game's name.
    write_game(tmp_path / "g.jsonl.gz", RULES, 11, cut=30)
    assert [p.name for p in tmp_path.iterdir()] == ["g.jsonl"]
    assert find_log(tmp_path, "g") == tmp_path / "g.jsonl"
    assert not read_log(tmp_path / "g.jsonl").complete
    result = replay(tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert "the log is INCOMPLETE" in result.stdout


def test_a_log_is_read_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    packed = write_game(tmp_path / "g.jsonl.gz", RULES, 11)
    plain = tmp_path / "g.jsonl"
    plain.write_bytes(log_bytes(packed))
    swapped = {tmp_path / "packed.jsonl": packed, tmp_path / "plain.jsonl.gz": plain}
    for path, source in swapped.items():
        path.write_bytes(source.read_bytes())
        assert read_log(path).decisions == read_log(packed).decisions
        result = replay(path)
        assert result.exit_code == 0 and "the log is complete" in result.stdout, result.output


def test_find_log_prefers_the_compressed_log(tmp_path: Path) -> None:
    assert find_log(tmp_path, "g") is None
    (tmp_path / "g.jsonl").write_bytes(b"")  # a partial log left beside it by a crash
    (tmp_path / "g.jsonl.gz").write_bytes(b"")
    (tmp_path / "h.jsonl").write_bytes(b"")
    assert find_log(tmp_path, "g") == tmp_path / "g.jsonl.gz"
    assert find_log(tmp_path, "h") == tmp_path / "h.jsonl"
    (tmp_path / "k.jsonl.gz").mkdir()  # a folder is not a log
    assert find_log(tmp_path, "k") is None


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda b: b[: len(b) // 2], "a gzip file cut short"),
        (lambda b: b[:2], "a gzip file cut short"),
        (lambda b: b[:1], "a gzip file cut short"),
        (lambda b: b"<html>404 Not Found</html>\n", "not gzip data, though its name ends in .gz"),
        (lambda b: b"\x00\x01binary" + b[2:], "not gzip data, though its name ends in .gz"),
        (lambda b: b[:200] + bytes(x ^ 0xFF for x in b[200:260]) + b[260:], "a damaged gzip file"),
        (lambda b: b + b"more", "a damaged gzip file"),
    ],
    ids=[
        "truncated",
        "magic-only",
        "first-byte",
        "not-gzip-text",
        "not-gzip-bytes",
        "flipped",
        "trailing-bytes",
    ],
)
def test_a_damaged_gzip_is_one_line_and_exit_2(
    tmp_path: Path, damage: Callable[[bytes], bytes], expected: str
) -> None:
    packed = write_game(tmp_path / "g.jsonl.gz", RULES, 11)
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(damage(packed.read_bytes()))
    for extra in ((), ("--show",), ("--json",)):
        result = CliRunner().invoke(main, ["replay", str(bad), *extra])
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert result.stderr.startswith(f"referee: error: {bad}: {expected}"), result.stderr
        assert result.stderr.count("\n") == 1


def test_names_of_compressed_logs(tmp_path: Path) -> None:
    gz = tmp_path / "game-5.jsonl.gz"
    assert live_path(gz) == tmp_path / "game-5.jsonl"
    assert live_path(tmp_path / "game-5.jsonl") == tmp_path / "game-5.jsonl"
    assert log_stem(gz) == log_stem(tmp_path / "game-5.jsonl") == "game-5"
    assert seat_log_path(gz, 2) == tmp_path / "game-5.seat2.jsonl.gz"
    assert seat_log_path(tmp_path / "game-5.jsonl", 2) == tmp_path / "game-5.seat2.jsonl"
    # A new log's name is claimed by creating the file written during the game; a name
    # is taken while neither it nor its partial file exists (a game still running).
    (tmp_path / "game-5-2.jsonl").write_bytes(b"")
    names = [new_file(gz, "--log-dir", written_as=live_path) for _ in range(3)]
    assert names == [gz, tmp_path / "game-5-3.jsonl.gz", tmp_path / "game-5-4.jsonl.gz"]
    assert all(live_path(p).exists() and not p.exists() for p in names)
    (tmp_path / "game-5-4.jsonl").unlink()
    (tmp_path / "game-5-4.jsonl.gz").write_bytes(b"")  # that game finished meanwhile
    assert new_file(gz, "--log-dir", written_as=live_path) == tmp_path / "game-5-5.jsonl.gz"
