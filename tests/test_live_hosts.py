"""`--live` beyond `referee league` (issue 43): `serve` over HTTPS, `arena run` (an
endless run whose duplicate units are followed unit by unit), a league on a Dask
cluster (its games shown when their logs come back), and the options' one-line
errors. Real referee processes and spectators throughout, as in test_live.

Switching the embargo off (`LiveFeed._show_deal` showing a game as soon as it ends)
fails the arena's test: a unit's rotations are played one after the other, so its
first game would be received before its second was written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import ssl
import subprocess
import threading
import time
from pathlib import Path

import pytest

from referee.logs.gamelog import find_log, read_log
from tests.arena._arena import Running, arena_file, bot
from tests.test_live import ENV, PY, ROOT, Stream, league_file, pages, watch, whole

GREEDY = f"{PY} {ROOT / 'sample_bots' / 'greedy_bot.py'}"
RANDOM = f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'}"


def trusting(cert: Path) -> ssl.SSLContext:
    """A client context that trusts `cert` alone (and checks the host name)."""
    context = ssl.create_default_context(cafile=str(cert))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def test_serve_shows_its_league_live_over_https(tmp_path: Path) -> None:
    league = league_file(tmp_path, duplicate=False, live="public", bots={"g": GREEDY, "r": RANDOM})
    cert = tmp_path / "out" / "live-tls" / "server.crt"
    said: list[str] = []

    def context(rest: str) -> ssl.SSLContext:
        said.append(rest)
        return trusting(cert)

    watched = watch(tmp_path, league, "--live-tls", "self-signed", command="serve", tls=context)
    # The first line gives the certificate's fingerprint, as `serve --tls` does for bots.
    der = ssl.PEM_cert_to_DER_cert(cert.read_text())
    assert said == [f"(certificate sha256:{hashlib.sha256(der).hexdigest()})"]
    assert oct((tmp_path / "out" / "live-tls" / "server.key").stat().st_mode & 0o777) == "0o600"
    assert len(watched.games) == 2
    for stream in watched.games:
        game = stream.path.split("/")[2]
        statuses = [json.loads(d) for _, n, d in stream.events if n == "status"]
        assert statuses[-1] == "shown", (game, statuses, watched.err)
        assert pages(stream)[-1] == whole(watched.out / "logs" / f"{game}.jsonl.gz")


def test_a_cluster_leagues_games_are_shown_with_their_deal(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    league = league_file(tmp_path, duplicate=True, live=None, bots={"g": GREEDY, "r": RANDOM})
    watched = watch(tmp_path, league, "--cluster", "local:1", "-j", "2")
    logs = {p.name.split(".")[0]: p for p in (watched.out / "logs").glob("g*.jsonl.gz")}
    assert len(logs) == len(watched.games) == 4
    deal = {g: read_log(p).header.seed for g, p in logs.items()}
    for stream in watched.games:
        game = stream.path.split("/")[2]
        order = [json.loads(d) if n == "status" else n for _, n, d in stream.events]
        assert order == ["pending", "shown", "game"], (game, order)
        came = next(t for t, n, _ in stream.events if n == "game")
        over = max(logs[g].stat().st_mtime for g in logs if deal[g] == deal[game])
        assert came >= over, f"{game} was shown before its deal was over"
        assert pages(stream)[-1] == whole(logs[game])


class Spectator:
    """Follows an endless run's list, and every game on it from when it appears."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.listing = Stream(host, port, "/events")
        self.games: dict[str, Stream] = {}
        self.thread = threading.Thread(target=self._follow, daemon=True)

    def start(self) -> Spectator:
        self.listing.start()
        self.thread.start()
        return self

    def _follow(self) -> None:
        seen = 0
        while self.listing.thread is not None and (
            self.listing.thread.is_alive() or seen < len(self.listing.events)
        ):
            for _, _, data in self.listing.events[seen:]:
                for entry in json.loads(data)["games"]:
                    if entry["game"] not in self.games:
                        stream = Stream(self.host, self.port, f"/game/{entry['game']}/events")
                        self.games[entry["game"]] = stream.start()
                seen += 1
            time.sleep(0.05)

    def join(self) -> None:
        self.listing.join()
        self.thread.join(60)
        for stream in list(self.games.values()):
            stream.join()


def test_an_arena_is_watched_unit_by_unit(tmp_path: Path) -> None:
    path = arena_file(
        tmp_path,
        {"greedy": bot("sample_bots/greedy_bot.py"), "random": bot("sample_bots/random_bot.py")},
        validate=False,
    )
    out = tmp_path / "out"
    run = Running(path, out, "--jobs", "1", "--live", "0")
    try:
        address = run.wait_output(r"live: http://(\S+):(\d+)/")
        spectator = Spectator(address[0], int(address[1])).start()

        # Games followed from before their unit ended (under load a spectator may open a
        # game's stream late): the arena plays on until three were.
        def followed_whole() -> int:
            return sum(
                1
                for stream in list(spectator.games.values())
                if [n for _, n, _ in stream.events[:1]] == ["status"]
                and json.loads(stream.events[0][2]) == "pending"
                and any(n == "game" for _, n, _ in stream.events)
            )

        run.wait(
            "three units followed",
            lambda led: len(led.games(stage="arena")) >= 6 and followed_whole() >= 3,
        )
        assert run.stop() == 0
        spectator.join()
    finally:
        run.close()
    shown = followed = 0
    for game, stream in spectator.games.items():
        log = find_log(out / "logs", game)
        order = [json.loads(d) if n == "status" else n for _, n, d in stream.events]
        if "game" not in order:  # its unit did not end before the stop (the game in play
            # then is abandoned: replayed from its start when the arena resumes)
            assert order in (["pending"], ["pending", "abandoned"], ["abandoned"]), (game, order)
            continue
        # A stream opened after the game was shown gets it at once.
        assert order in (["pending", "shown", "game"], ["shown", "game"]), (game, order)
        followed += order[0] == "pending"
        assert log is not None
        seed = read_log(log).header.seed
        unit = [p for p in (out / "logs").iterdir() if read_log(p).header.seed == seed]
        assert len(unit) == 2  # a duplicate unit: the deal at both seatings
        came = next(t for t, n, _ in stream.events if n == "game")
        assert came >= max(p.stat().st_mtime for p in unit), f"{game} came before its unit ended"
        assert pages(stream)[-1] == whole(log)
        shown += 1
    assert shown >= 6 and followed >= 3, (shown, followed)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--live-tls", "self-signed"], "--live-tls, --live-tls-cert and --live-tls-key are for "),
        (["--live", "0", "--live-tls-cert", "x.pem"], "--live-tls-cert and --live-tls-key: give "),
        (
            ["--live", "0", "--live-tls-cert", "x.pem", "--live-tls-key", "y.pem"],
            "--live-tls-cert x.pem: cannot read: No such file or directory",
        ),
    ],
)
def test_bad_live_tls_options_are_one_line_errors(
    tmp_path: Path, args: list[str], line: str
) -> None:
    league = league_file(tmp_path, duplicate=False, live=None, bots={"g": GREEDY, "r": RANDOM})
    done = subprocess.run(
        [PY, "-m", "referee", "league", str(league), *args],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and line in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()  # refused before anything was made


def test_a_public_live_arena_with_duplicate_deals_is_refused(tmp_path: Path) -> None:
    path = arena_file(tmp_path, {"g": bot("sample_bots/greedy_bot.py")}, live="public")
    done = subprocess.run(
        [PY, "-m", "referee", "arena", str(path), "--live", "0"],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "COLUMNS"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert re.search(r'arena\.live: "public" shows a game move by move.*duplicate', done.stderr)


async def test_an_endless_runs_list_keeps_the_latest_games() -> None:
    from referee.live.feed import LiveFeed
    from referee.rules import new_game, preset

    rules = preset("standard", max_pip=6, players=2)
    feed = LiveFeed("after-deal", duplicate=True, keep=2)
    feed.schedule([(f"g{i}", ["a", "b"], i) for i in range(3)], ["g0", "g1", "g2"])
    feed.begin("g3", ["a", "b"], 3, rules, new_game(rules, 3), [1000, 1000])
    # Only games with nothing more to come leave the list, the oldest first.
    assert list(feed.games) == ["g2", "g3"]
    assert set(feed.deal_games) == {2, 3}
    # A unit abandoned: no other game of its deal will come, so nothing is held for it.
    feed.schedule([("g4", ["a", "b"], 4), ("g5", ["b", "a"], 4)], [])
    await feed.close_deal(4)
    assert feed.deal_games[4] == feed.deal_over[4] == 0
