"""Results site benchmark: the size of a game's replay data and of a whole site, and the
time a build takes.

A league output folder is made without bot processes: 4 bots, tables of 4, every
deal in its 4 rotations (duplicate), double-12, 13 rounds, the games played by the
engine's in-process greedy players (`referee.stats.players`) and logged with the
referee's own `LogWriter`, with latencies drawn from a log-normal distribution
(median 2 ms, kept to the µs as real logs keep them) and one timeout fault every 50
games. The ledger holds each game as a league records it. Then `referee.site.build_site`
builds the site in OUT/site, and builds it again (nothing new: what a refresh during a league
costs once the games are published).

Printed: decisions per game; each game's data (public part and the 4 seats' parts)
in bytes on disk and gzipped (median and worst; target: 15 KB gzipped); the whole
site on disk, and apart the games' published logs (`logs/`, gzipped as a league keeps
them); the target, under 30 MB for 1,000 games, is the site's without them (it was 25
MB before each decision's legal moves and each game's rating on the bot pages); and the
build times.

    python bench/bench_site.py               # 1,000 games (several minutes on 2 cores)
    python bench/bench_site.py --games 40    # a quick try
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _machine import cpu_model

from protocol.messages import TimeControl
from referee.bots.faults import Fault, FaultKind
from referee.game.match import Decision, GameResult
from referee.league.ledger import Ledger, Record
from referee.logs.gamelog import LogBot, LogWriter, make_header
from referee.rules import apply, new_game, preset
from referee.site import build_site
from referee.stats.players import greedy_player

BOTS = ["greedy-a", "greedy-b", "greedy-c", "greedy-d"]


def play_logged(path: Path, game: str, seats: list[str], seed: int, fault: bool) -> Record:
    """One game of greedy players, logged as a league logs it; its ledger record."""
    rules = preset("standard")
    header = make_header(
        game=game,
        rules=rules,
        seed=seed,
        bots=[LogBot(seat=s, name=n, command=f"bots/{n}") for s, n in enumerate(seats)],
        time=TimeControl(),
        policy="default-move",
        max_faults=3,
    )
    writer = LogWriter(path, header)
    players = [greedy_player(f"{seed}/{n}") for n in seats]
    rng = random.Random(f"latency/{seed}")
    state = new_game(rules, seed)
    count = 0
    faults: list[list[Fault]] = [[] for _ in seats]
    latencies: list[list[float]] = [[] for _ in seats]
    while state.outcome is None:
        before = state
        seat = before.to_move
        move = players[seat](state)
        state = apply(state, move)
        count += 1
        late = fault and count == 40
        found = (Fault(seat, FaultKind.TIMEOUT, "no reply within 1000 ms", count),) if late else ()
        faults[seat].extend(found)
        latency = None if late else round(rng.lognormvariate(0.7, 0.8), 3)
        if latency is not None:
            latencies[seat].append(latency)
        writer.decision(
            Decision(
                seat=seat,
                request=count,
                move=move,
                latency_ms=latency,
                auto=late,
                faults=found,
                round=before.round_index,
            ),
            state,
        )
        if state.round_index != before.round_index or state.outcome is not None:
            writer.round_end(state.results[-1])
    outcome = state.outcome
    writer.finish(
        GameResult(
            outcome=outcome,
            ranks=outcome.ranks,
            forfeited=(False,) * len(seats),
            faults=tuple(tuple(f) for f in faults),
            decisions=count,
            results=state.results,
            final=state,
        )
    )
    return Record(
        idx=0,
        game_id=game,
        unit=0,
        deal=0,
        rotation=0,
        seed=seed,
        seats=seats,
        scores=list(outcome.scores),
        ranks=list(outcome.ranks),
        forfeited=[False] * len(seats),
        faults=[
            {"seat": f.seat, "kind": f.kind.value, "detail": f.detail} for s in faults for f in s
        ],
        latency_mean=[statistics.fmean(v) if v else None for v in latencies],
        latency_max=[max(v) if v else None for v in latencies],
        decisions=count,
        log_path=str(path),
        finished="2026-01-01T00:00:00+00:00",
    )


def make_league(out: Path, games: int) -> None:
    """`games` games (rounded up to whole deals of 4 rotations) in a league's output folder."""
    logs = out / "logs"
    logs.mkdir(parents=True)
    ledger = Ledger(out / "league.db")
    deals = -(-games // 4)
    ledger.db.execute(
        "INSERT INTO meta VALUES ('name', 'bench'), ('bots', ?), ('scheduled', ?), "
        "('unit_games', '4')",
        (json.dumps(BOTS), str(deals * 4)),
    )
    for deal in range(deals):
        for rotation in range(4):
            idx = deal * 4 + rotation
            seats = BOTS[rotation:] + BOTS[:rotation]
            game = f"g{idx + 1:05d}"
            rec = play_logged(logs / f"{game}.jsonl", game, seats, 1000 + deal, idx % 50 == 7)
            ledger.record(
                Record(
                    **{**rec.__dict__, "idx": idx, "unit": deal, "deal": deal, "rotation": rotation}
                )
            )
    ledger.close()


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    args = parser.parse_args(argv)
    python = platform.python_version()
    print(f"{platform.system()} {platform.machine()}, {cpu_model()}, Python {python}")
    with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp:
        out = Path(tmp) / "out"
        began = time.monotonic()
        make_league(out, args.games)
        played = time.monotonic() - began
        began = time.monotonic()
        report = build_site(out)
        first = time.monotonic() - began
        began = time.monotonic()
        again = build_site(out)
        second = time.monotonic() - began
        site = report.folder
        raw, packed = [], []
        for public in sorted((site / "games").glob("g?????.js")):
            files = [public, *sorted(public.parent.glob(public.stem + ".s*.js"))]
            raw.append(sum(f.stat().st_size for f in files))
            packed.append(sum(len(gzip.compress(f.read_bytes(), 9)) for f in files))
        decisions = [
            sum(1 for line in path.open() if '"type":"decision"' in line)
            for path in sorted((out / "logs").glob("*.jsonl"))
        ]
        cache = folder_bytes(out / ".site-cache")
        total = folder_bytes(site)
        logs = folder_bytes(site / "logs")
        print(f"{report.games} games played and logged in {played:.1f} s")
        print(
            f"decisions per game: median {statistics.median(decisions):.0f}, most {max(decisions)}"
        )
        print(
            f"a game's data (public + 4 seats): median {statistics.median(raw) / 1024:.1f} KiB "
            f"on disk, {statistics.median(packed) / 1024:.1f} KiB gzipped; worst "
            f"{max(raw) / 1024:.1f} KiB, {max(packed) / 1024:.1f} KiB gzipped (target 15 KB)"
        )
        print(
            f"site: {total / 1e6:.1f} MB on disk for {report.games} games, of which "
            f"{logs / 1e6:.1f} MB the games' logs; without them {(total - logs) / 1e6:.1f} MB "
            f"(target under 30 MB for 1,000), {folder_bytes(site / 'games') / 1e6:.1f} MB of "
            f"game data; the builder's cache (OUT/.site-cache, not published) "
            f"{cache / 1e6:.1f} MB"
        )
        print(
            f"build: {first:.1f} s ({first / report.games * 1000:.0f} ms a game), "
            f"again with nothing new: {second:.2f} s ({again.new_games} games made)"
        )
        ok = max(packed) <= 15_000 and (total - logs) * 1000 / report.games < 30e6
        print("targets met" if ok else "TARGETS MISSED")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
