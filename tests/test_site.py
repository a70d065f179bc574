"""The results site's builder (`referee site`, `referee.site`), without a browser.

A game's data is a public part and one part per seat: put back together they must be
exactly the viewer's data of `referee replay --seat S` (made from the seat's
redacted log) and of the full log, legal moves included, so a seat's view is that
seat's and loads no other hand. A 13-round double-12 game of 4 players stays under
15 KB gzipped. The builder publishes a game's replay, log, fault evidence and
latencies only when every game of its deal at its table is recorded, never the seed
(not even in the published log), and the bots' stderr only when asked; a second build
makes no game data again, and leaves no temporary file. The index says when the
league ran and its rule set, lists every game in pages, links the standings' files,
charts each bot's rating game by game (the standings' own ratings), and flags the
bots that never started and every game with a startup failure, with the evidence
escaped and only once published. The league here is made of logged games of random
moves and a ledger written by hand (tests/test_site_browser.py runs a real league).
"""

from __future__ import annotations

import dataclasses
import gzip
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import trio
from click.testing import CliRunner

from referee.cli import main
from referee.league.ledger import Ledger, Record
from referee.league.output import csv_text, json_text
from referee.league.standings import compute
from referee.logs.gamelog import log_bytes, read_log
from referee.logs.replay import states
from referee.rules import legal_moves, preset
from referee.site import build_site, pages
from referee.site.build import game_files, public_log, read_league, summarise
from referee.site.gamedata import assemble, full_view, mask, public_part, seat_part, seat_view
from referee.site.live import LiveSite
from referee.site.pages import bot_file, rule_set
from tests.test_replay import write_game

NAMES = ["alpha", "beta", "<gamma&>"]
NEVER = "<gamma&>"  # fails to start in every game, with evidence that must be escaped
KEY = bytes(range(16))  # the games' bot-seed key, a secret like the seed


def startup_detail(idx: int) -> str:
    return f"exited before ready: <b>game {idx}</b> & closed its output"


@pytest.mark.parametrize(
    "name, options",
    [
        ("standard", {}),
        ("celko", {}),  # announced plays: each legal play comes announced and not
        ("standard", {"must_play": False}),  # plays and a draw at one decision
        ("standard+branching-doubles", {"players": 3}),
    ],
)
def test_parts_put_together_are_each_seats_view_and_the_full_view(
    tmp_path: Path, name: str, options: dict[str, Any]
) -> None:
    log = read_log(write_game(tmp_path / "g.jsonl", preset(name, **options), 17))
    n = log.header.rules.players
    views = [seat_view(log, s) for s in range(n)]
    public = mask(views[0], 0)
    part = public_part(public)
    seats = {s: seat_part(v, public, s) for s, v in enumerate(views)}
    for s in range(n):
        assert assemble(part, {s: seats[s]}, s) == views[s]
        # What every seat was shown is the same public part.
        assert mask(views[s], s) == public
    full = full_view(log)
    assert assemble(part, seats, None) == full and full["seed"] is None
    # The public part holds no hand during a round, no seed, no legal move; a seat's,
    # its own hands and the legal moves of its own decisions.
    assert all(isinstance(h, int) for deal in part["R"] for h in deal["hands"])
    assert "seed" not in part and "viewer" not in part
    assert not any("g" in extra for extra in part["X"][1::2])
    assert seats[1]["h"] == [deal["hands"][1] for deal in views[1]["R"]]
    # Where there was a choice, the legal moves are the engine's, in its order.
    chosen = 0
    for step, record in zip(states(log), full["S"], strict=True):
        legal = legal_moves(step.before)
        extra = record[5] if len(record) > 5 else {}
        if len(legal) == 1:
            assert "g" not in extra
            continue
        chosen += 1
        assert [o[0] for o in extra["g"]] == [
            {"play": 0, "draw": 1, "pass": 2, "end": 3}[m.kind.value] for m in legal
        ]
        assert [len(o) > 3 for o in extra["g"]] == [m.announce for m in legal]
    assert chosen > 0


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
    # The ledger has NEVER failing to start in each game it sits in (its log is a game of
    # random moves).
    failed = [
        {"seat": seats.index(NEVER), "kind": "startup_failure", "detail": startup_detail(idx)}
        for _ in range(NEVER in seats)
    ]
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
        faults=[{"seat": f.seat, "kind": f.kind, "detail": f.detail} for f in footer.faults]
        + failed,
        latency_mean=[1.0] * 3,
        latency_max=[2.0] * 3,
        decisions=footer.decisions,
        log_path=str(path),
        finished=f"2026-01-01T0{idx}:00:00+00:00",
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
        path = write_game(
            logs / f"{game}.jsonl", rules, seed, names=seats, game=game, bot_seed_key=KEY
        )
        ledger.record(record(idx, idx // 3, path, seats))
    ledger.close()
    stderr = out / "stderr"
    stderr.mkdir()
    (stderr / "alpha-1.stderr").write_text("alpha's own secret\n")
    (stderr / "alpha-b-1.stderr").write_text("not alpha's\n")
    return out


def site_text(site: Path) -> str:
    """Every file of the site as text, the compressed logs uncompressed."""
    return "\n".join(
        log_bytes(p).decode("utf-8") if p.name.endswith(".gz") else p.read_text(encoding="utf-8")
        for p in sorted(site.rglob("*"))
        if p.is_file()
    )


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
    assert KEY.hex() not in text
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


class Links(HTMLParser):
    """The links of a page (href of every <a>), its elements' ids, and the text of
    elements of a given id."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.links: list[dict[str, str]] = []
        self.ids: set[str] = set()
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if "id" in found:
            self.ids.add(found["id"])
        if tag == "a" and "href" in found:
            self.links.append(found)


def test_every_game_is_reachable_from_the_index_in_pages(
    league: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "GAMES_PER_PAGE", 3)
    site = tmp_path / "site"
    build_site(league, site)
    index = Links((site / "index.html").read_text(encoding="utf-8"))
    start = next(a["href"] for a in index.links if a.get("id") == "all-games")
    seen: list[str] = []
    listed: list[str] = []
    href: str | None = start
    while href is not None:
        seen.append(href)
        page = Links((site / href).read_text(encoding="utf-8"))
        rows = re.findall(r'<td data-v="\d+">(.*?)</td>', (site / href).read_text())
        listed += [re.search(r"g\d{5}", row).group(0) for row in rows]  # type: ignore[union-attr]
        # Each page links every page, and the next one.
        numbered = {a["href"] for a in page.links if re.fullmatch(r"games-\d+\.html", a["href"])}
        assert numbered | {href} == {"games-1.html", "games-2.html"}
        href = next((a["href"] for a in page.links if a.get("rel") == "next"), None)
    assert seen == ["games-1.html", "games-2.html"]
    records = read_league(league, None).records
    assert listed == [r.game_id for r in records]  # every game once, in schedule order
    # Replayable and with its log where published; listed only for the others.
    text = "".join((site / f).read_text() for f in seen)
    for rec in records:
        public = rec.idx in read_league(league, None).published
        assert (f'href="replay.html?game={rec.game_id}"' in text) == public
        assert (f'href="logs/{rec.game_id}.jsonl.gz"' in text) == public
    # Fewer pages later (another league built into the folder, say): none left behind.
    monkeypatch.setattr(pages, "GAMES_PER_PAGE", 100)
    build_site(league, site)
    assert sorted(p.name for p in site.glob("games-*.html")) == ["games-1.html"]


def test_the_published_log_is_the_log_without_its_secrets(league: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(league, site)
    assert sorted(p.name for p in (site / "logs").iterdir()) == [
        f"g0000{k}.jsonl.gz" for k in (1, 2, 3)
    ]
    for k in (1, 2, 3):
        source = league / "logs" / f"g0000{k}.jsonl"
        published = site / "logs" / f"g0000{k}.jsonl.gz"
        original = source.read_bytes().split(b"\n")
        shown = gzip.decompress(published.read_bytes()).split(b"\n")
        # Line for line the referee's, but for the header's two secrets.
        assert shown[1:] == original[1:]
        header, before = json.loads(shown[0]), json.loads(original[0])
        assert before["seed"] is not None and before["bot_seed_key"] == KEY.hex()
        assert header == before | {"seed": None, "bot_seed_key": None}
        log = read_log(published, allow_redacted=True)
        assert log.complete and log.decisions == read_log(source).decisions
        assert published.read_bytes() == public_log(read_log(source), source.read_bytes())
    # Without its seed the game cannot be re-derived: `referee replay` says so in a line.
    result = CliRunner().invoke(main, ["replay", str(published)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"referee: error: {published}: a log published without its seed (a results site's "
        "copy): the game cannot be re-derived from it; replay the league's own log (OUT/logs)"
    ]
    # A site made by an older builder (its summaries of another version) gets this
    # builder's files: the game data and the logs are made again.
    for cached in (league / ".site-cache").glob("*.json"):
        data = json.loads(cached.read_text())
        data.pop("v")
        cached.write_text(json.dumps(data))
    for published in (site / "logs").iterdir():
        published.unlink()
    again = build_site(league, site)
    assert again.new_games == 3 and len(list((site / "logs").iterdir())) == 3


def test_each_bots_rating_game_by_game_is_the_standings_own(league: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(league, site)
    played = read_league(league, None)
    records = played.records
    index = (site / "index.html").read_text(encoding="utf-8")
    chart = index.split('id="rating-history"', 1)[1].split("</svg>", 1)[0]
    assert chart.count("<polyline") == len(NAMES)
    for name in NAMES:
        text = (site / bot_file(name)).read_text(encoding="utf-8")
        chart = text.split('id="bot-rating"', 1)[1].split("</svg>", 1)[0]
        dots = re.findall(r"<title>game (\d+): rating (-?[\d.]+) \(([-+][\d.]+)\)</title>", chart)
        # One dot a game of the bot, at its number in the league, each the rating the
        # standings of the games up to it give (the same openskill updates, in order).
        mine = [r for r in records if name in r.seats]
        assert [int(g) for g, _, _ in dots] == [r.idx + 1 for r in mine]
        before = 0.0
        for (_, rating, change), rec in zip(dots, mine, strict=True):
            upto = compute(NAMES, [r for r in records if r.idx <= rec.idx])
            expected = next(b.rating for b in upto.bots if b.name == name)
            assert float(rating) == pytest.approx(expected, abs=0.006)
            assert float(change) == pytest.approx(expected - before, abs=0.011)
            before = expected
        final = next(b for b in played.standings.bots if b.name == name)
        assert float(dots[-1][1]) == pytest.approx(final.rating, abs=0.006)
        # The games' table has each game's rating and change.
        rows = text.split('id="games"', 1)[1].split("</tbody>", 1)[0].split("<tr")[2:]
        assert len(rows) == len(mine)
        for row, (_, rating, change) in zip(rows, dots, strict=True):
            assert f">{rating}</td>" in row and f">{change}</td>" in row


def test_the_index_says_when_and_what_and_links_the_files(league: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(league, site)
    played = read_league(league, None)
    assert (site / "standings.csv").read_bytes() == csv_text(played.standings).encode()
    # standings.json as the league writes it, but for the failed starts of games not
    # published yet (g00004's).
    published = {r.game_id for r in played.records if r.idx in played.published}
    shown = dataclasses.replace(
        played.standings,
        failed_starts=[f for f in played.standings.failed_starts if f.game_id in published],
    )
    assert len(shown.failed_starts) == len(played.standings.failed_starts) - 1
    assert (site / "standings.json").read_bytes() == json_text(shown).encode()
    index = (site / "index.html").read_text(encoding="utf-8")
    links = {a["href"] for a in Links(index).links}
    assert {"standings.csv", "standings.json", "games-1.html"} <= links
    # When the league ran (its first and last game) and when the site was made.
    facts = index.split('id="facts"', 1)[1].split("</p>", 1)[0]
    assert '<time datetime="2026-01-01T00:00:00+00:00">2026-01-01 00:00:00 UTC</time>' in facts
    assert '<time datetime="2026-01-01T03:00:00+00:00">2026-01-01 03:00:00 UTC</time>' in facts
    assert "Site updated <time datetime=" in facts
    # The rule set: a ledger that did not keep its preset gets the closest one.
    assert "closest preset <b>standard</b>" in facts and "double-6, 3 players" in facts
    ledger = Ledger(league / "league.db")
    ledger.db.execute("INSERT OR REPLACE INTO meta VALUES ('preset', 'standard')")
    ledger.close()
    try:
        build_site(league, site)
        facts = (site / "index.html").read_text().split('id="facts"', 1)[1]
        assert "Rule set: preset <b>standard</b> (004" in facts
    finally:
        ledger = Ledger(league / "league.db")
        ledger.db.execute("DELETE FROM meta WHERE key = 'preset'")
        ledger.close()
    # The replay page knows each bot's page, for the seats' names to link to.
    replay = (site / "replay.html").read_text(encoding="utf-8")
    data = replay.split('<script id="site-bots" type="application/json">', 1)[1]
    data = data.split("</script>", 1)[0]
    assert "<" not in data and json.loads(data) == {n: bot_file(n) for n in NAMES}


def test_rule_set_names_the_preset_and_what_differs() -> None:
    assert rule_set(preset("celko", players=3, max_pip=9), None) == ("celko", True, [])
    assert rule_set(preset("standard+teams"), "standard+teams") == ("standard+teams", False, [])
    loose = preset("masters", players=5, must_play=False)
    assert rule_set(loose, "masters") == ("masters", False, ["must_play = no"])
    assert rule_set(loose, None) == ("masters", True, ["must_play = no"])


def test_bots_that_never_started_are_flagged_with_their_evidence(
    league: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    build_site(league, site)
    index = (site / "index.html").read_text(encoding="utf-8")
    section = index.split('id="never-started"', 1)[1].split("</section>", 1)[0]
    # Only NEVER, named and its evidence shown escaped, from the published games only.
    assert section.count("failed to start in every game") == 1
    assert html.escape(NEVER) in section and f">{NEVER}<" not in index
    assert f"<code>{html.escape(startup_detail(0))}</code>" in section
    assert html.escape(startup_detail(1)) in section and html.escape(startup_detail(2)) in section
    everything = site_text(site)
    shown = "\n".join(
        p.read_text(encoding="utf-8") for p in site.rglob("*") if p.suffix in (".html", ".js")
    )
    assert startup_detail(0) not in shown  # no page holds it unescaped
    assert html.escape(startup_detail(3)) not in everything  # g00004 is not published
    # standings.json keeps the text as it came (JSON is its escaping), and only the
    # failed starts of published games: a reason is fault evidence.
    data = json.loads((site / "standings.json").read_text(encoding="utf-8"))
    assert {f["detail"] for f in data["failed_starts"]} == {startup_detail(i) for i in range(3)}
    assert startup_detail(3) not in everything
    standings = index.split('id="standings"', 1)[1].split("</table>", 1)[0]
    assert standings.count("never started") == 1
    page = (site / bot_file(NEVER)).read_text(encoding="utf-8")
    assert 'id="never-started"' in page and html.escape(startup_detail(2)) in page
    assert 'id="never-started"' not in (site / "bot-alpha.html").read_text()
    # Every game with a startup failure is flagged in every list, with who and why.
    for name, lists in (("index.html", 4), ("games-1.html", 4), (bot_file("alpha"), 4)):
        text = (site / name).read_text(encoding="utf-8")
        assert text.count('data-startup="1"') == lists, name
        assert f"⚠ failed to start: {html.escape(NEVER)}" in text
    listed = (site / "games-1.html").read_text(encoding="utf-8")
    assert html.escape(f"{NEVER}: {pages.WITHHELD}") in listed  # g00004's evidence: later
