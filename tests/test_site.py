"""The results site's builder (`referee site`, `referee.site`), without a browser.

A game's data is a public part and one part per seat: put back together they must be
exactly the viewer's data of `referee replay --seat S` (made from the seat's
redacted log) and of the full log, so a seat's view is that seat's and loads no
other hand. A 13-round double-12 game of 4 players stays under 15 KB gzipped. The
builder publishes a game's replay, fault evidence and latencies only when every
game of its deal at its table is recorded, never the seed, and the bots' stderr
only when asked; a second build makes no game data again, and leaves no temporary
file. The league here is made of logged games of random moves and a ledger written
by hand (tests/test_site_browser.py runs a real league).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
import trio
from click.testing import CliRunner

from referee.cli import main
from referee.gamelog import read_log
from referee.league.ledger import Ledger, Record
from referee.rules import preset
from referee.site import build_site
from referee.site.build import game_files, summarise
from referee.site.gamedata import assemble, full_view, mask, public_part, seat_part, seat_view
from referee.site.live import LiveSite
from referee.site.pages import bot_file
from tests.test_replay import write_game

NAMES = ["alpha", "beta", "<gamma&>"]


def test_parts_put_together_are_each_seats_view_and_the_full_view(tmp_path: Path) -> None:
    log = read_log(write_game(tmp_path / "g.jsonl", preset("standard"), 17))
    views = [seat_view(log, s) for s in range(4)]
    public = mask(views[0], 0)
    part = public_part(public)
    seats = {s: seat_part(v, public, s) for s, v in enumerate(views)}
    for s in range(4):
        assert assemble(part, {s: seats[s]}, s) == views[s]
        # What every seat was shown is the same public part.
        assert mask(views[s], s) == public
    full = full_view(log)
    assert assemble(part, seats, None) == full and full["seed"] is None
    # The public part holds no hand during a round, no seed; a seat's, its own hands.
    assert all(isinstance(h, int) for deal in part["R"] for h in deal["hands"])
    assert "seed" not in part and "viewer" not in part
    assert seats[1]["h"] == [deal["hands"][1] for deal in views[1]["R"]]


def test_a_four_player_thirteen_round_game_is_under_15_kb_gzipped(tmp_path: Path) -> None:
    path = write_game(tmp_path / "g.jsonl", preset("standard"), 5)
    log = read_log(path)
    assert len(log.rounds) == 13 and log.header.rules.players == 4
    files = game_files(log)
    assert sorted(files) == [".js", ".s0.js", ".s1.js", ".s2.js", ".s3.js"]
    size = sum(len(gzip.compress(text.encode(), 9)) for text in files.values())
    assert size <= 15_000, f"{size} bytes gzipped for {len(log.decisions)} decisions"


def record(idx: int, unit: int, path: Path, seats: list[str]) -> Record:
    log = read_log(path)
    footer = log.footer
    assert footer is not None
    return Record(
        idx=idx,
        game_id=path.name.removesuffix(".jsonl"),
        unit=unit,
        deal=unit,
        rotation=idx % 3,
        seed=log.header.seed or 0,
        seats=seats,
        scores=footer.scores,
        ranks=footer.ranks,
        forfeited=footer.forfeited,
        faults=[{"seat": f.seat, "kind": f.kind, "detail": f.detail} for f in footer.faults],
        latency_mean=[1.0] * 3,
        latency_max=[2.0] * 3,
        decisions=footer.decisions,
        log_path=str(path),
        finished="2026-01-01T00:00:00+00:00",
    )


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A league of three bots: deal 0's three rotations all played, deal 1's first only."""
    out = tmp_path_factory.mktemp("league")
    logs = out / "logs"
    logs.mkdir()
    ledger = Ledger(out / "league.db")
    ledger.db.execute(
        "INSERT INTO meta VALUES ('name', 'tiny'), ('bots', ?), ('scheduled', '6'), "
        "('unit_games', '3')",
        (json.dumps(NAMES),),
    )
    rules = preset("standard", players=3, max_pip=6)
    for idx in range(4):
        seats = NAMES[idx % 3 :] + NAMES[: idx % 3]
        game = f"g{idx + 1:05d}"
        # One fault (at decision 5) and one notice per game, of the seat then to move.
        seed = 10**30 + idx // 3  # long enough to be looked for in the files
        path = write_game(logs / f"{game}.jsonl", rules, seed, names=seats, game=game)
        ledger.record(record(idx, idx // 3, path, seats))
    ledger.close()
    stderr = out / "stderr"
    stderr.mkdir()
    (stderr / "alpha-1.stderr").write_text("alpha's own secret\n")
    (stderr / "alpha-b-1.stderr").write_text("not alpha's\n")
    return out


def site_text(site: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(site.rglob("*")) if p.is_file())


def test_the_site_publishes_only_finished_deals(league: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    report = build_site(league, site)
    assert (report.games, report.published, report.new_games) == (4, 3, 3)
    for name in NAMES:
        page = (site / bot_file(name)).read_text(encoding="utf-8")
        assert "&lt;gamma&amp;&gt;" in page and "<gamma&>" not in page
    index = (site / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{bot_file(n)}"' in index for n in NAMES)
    assert "4 of 6 games played" in index and "3 replays published" in index
    # Deal 0's games are replayable; g00004 (deal 1, one rotation of three) is listed only.
    for game in ("g00001", "g00002", "g00003"):
        assert (site / "games" / f"{game}.js").is_file()
        assert {p.name for p in (site / "games").glob(f"{game}.s*.js")} == {
            f"{game}.s{s}.js" for s in range(3)
        }
    assert not list((site / "games").glob("g00004*"))
    assert 'replay.html?game=g00004"' not in site_text(site)
    assert "g00004 <span" in index  # listed, "replay later"
    # Fault evidence of a published game, with a link to its move; none for the other.
    logs = {g: read_log(league / "logs" / f"{g}.jsonl") for g in ("g00001", "g00004")}
    shown = summarise(logs["g00001"]).faults[0]
    mover = logs["g00001"].header.bots[shown["seat"]].name
    page = (site / bot_file(mover)).read_text(encoding="utf-8")
    assert f"game=g00001#move={shown['n']}&amp;view=shown" in page
    assert "no reply within 1000 ms" in page
    hidden = summarise(logs["g00004"]).faults[0]
    other = logs["g00004"].header.bots[hidden["seat"]].name
    assert "evidence published once every game of this deal" in (site / bot_file(other)).read_text()
    # No seed, no bot-seed key and no stderr anywhere; no temporary file left.
    text = site_text(site)
    for log in logs.values():
        assert str(log.header.seed) not in text
    assert "secret" not in text and not (site / "stderr").exists()
    assert not [p for p in site.rglob("*") if p.name.endswith(".tmp")]
    # Nothing to make again; with --with-stderr the bots' stderr is there, each its own,
    # once the league is over (a process's stderr spans published and secret games).
    again = build_site(league, site, with_stderr=True)
    assert (again.published, again.new_games) == (3, 0)
    assert not (site / "stderr").exists()
    ledger = Ledger(league / "league.db")
    ledger.db.execute("UPDATE meta SET value = '4' WHERE key = 'scheduled'")
    ledger.close()
    build_site(league, site, with_stderr=True)
    assert sorted(p.name for p in (site / "stderr").iterdir()) == ["alpha-1.stderr"]
    assert 'href="stderr/alpha-1.stderr"' in (site / bot_file("alpha")).read_text()
    build_site(league, site)
    assert not (site / "stderr").exists()  # published once, withdrawn when not asked


def test_the_command_builds_and_refuses_a_folder_without_a_league(
    league: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    result = runner.invoke(
        main, ["site", str(league), "--to", str(tmp_path / "s"), "--title", "T!"]
    )
    assert result.exit_code == 0, result.output
    assert "3 replays" in result.output
    assert "<title>T!</title>" in (tmp_path / "s" / "index.html").read_text()
    result = runner.invoke(main, ["site", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"referee: error: {tmp_path}: no league.db here; is this a league's output folder?"
    ]


def test_the_command_refuses_a_file_or_a_missing_folder_in_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "league.toml"
    a_file.write_text("[league]\n")
    missing = tmp_path / "nowhere"
    for path, said in (
        (a_file, "not a folder; give a league's output folder (its --out)"),
        (missing, "no such folder"),
    ):
        result = CliRunner().invoke(main, ["site", str(path)])
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr.splitlines() == [f"referee: error: {path}: {said}"]
    assert not missing.exists()  # nothing made where nothing was


def test_bot_pages_have_one_safe_file_name_each() -> None:
    names = ["a", "a.b", ".a", "a~2E", "日本", "<x>", "a_b-c", "a b", "a-b", "<" * 64]
    files = [bot_file(n) for n in names]
    assert len(set(files)) == len(files)
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-~")
    assert all(set(f) <= allowed and not f.startswith(".") and len(f) < 64 for f in files)
    # A plain name is the page's name; any other, a slug of it and a hash of the name.
    assert bot_file("a_b-c") == "bot-a_b-c.html" and bot_file("a.b") == "bot-a.b.html"
    assert re.fullmatch(r"bot-x~[0-9a-f]{8}\.html", bot_file("<x>"))


async def test_a_running_league_refreshes_the_site_in_the_background(
    league: Path, tmp_path: Path
) -> None:
    site = LiveSite(league, tmp_path / "live", every=2)
    async with site.running():
        site.recorded(1)  # not due
        await trio.sleep(0)
        assert not (tmp_path / "live" / "index.html").exists()
        site.recorded(2)  # due: starts in a worker thread
        site.recorded(2)  # one build at a time: this one is skipped
    assert site.builds == 1 and (tmp_path / "live" / "index.html").is_file()
    report = await site.final()
    assert report.published == 3 and report.new_games == 0
