"""Deals a bot cannot know: no bot process plays one deal twice, and no deal can be
worked back from a hand by trying the referee's own functions on small numbers.

Real leagues of tests/bots/deal_memory.py, a bot that writes each game id and the
hand it was dealt to its stderr, as a hostile bot remembering its deals would.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from referee.cli import main
from referee.league.config import load_config
from referee.league.ledger import Record
from referee.logs.gamelog import read_log
from referee.rules import new_game, preset
from tests._procs import assert_none_left, new_token
from tests.league.test_run import ENV, PY, ledger_records, meta, misbehaving, write_league

ROOT = Path(__file__).resolve().parents[2]


def memory_bots(token: str, count: int) -> list[dict[str, Any]]:
    return [misbehaving(f"m{i}", "deal_memory.py", token) for i in range(count)]


def games_by_process(out: Path) -> dict[str, list[str]]:
    """The game ids each bot process wrote to its stderr file, in order."""
    played: dict[str, list[str]] = {}
    for path in sorted((out / "stderr").glob("*.stderr")):
        lines = path.read_text(encoding="utf-8").splitlines()
        played[path.name] = [json.loads(line)["game"] for line in lines if line.startswith("{")]
    return played


def run_league(path: Path, out: Path, *args: str) -> None:
    result = CliRunner().invoke(
        main, ["league", str(path), "--out", str(out), "-q", *args], env=ENV
    )
    assert result.exit_code == 0, result.output


def test_no_bot_process_plays_two_games_of_one_deal_yet_processes_are_reused(
    tmp_path: Path,
) -> None:
    # The reproduction, with a fourth bot so that every bot sits at several
    # tables too, and two games at once.
    token = new_token()
    path = write_league(tmp_path / "l", memory_bots(token, 4), table=3, deals=2, duplicate=True)
    out = tmp_path / "out"
    run_league(path, out, "--jobs", "2")
    records = {r.game_id: r for r in ledger_records(out)}
    assert len(records) == 4 * 3 * 2  # 4 tables, 3 rotations, 2 deals
    played = games_by_process(out)
    for process, games in played.items():
        seeds = [records[g].seed for g in games]
        assert len(seeds) == len(set(seeds)), f"{process} played one deal twice: {games}"
    # Every game of every bot is in exactly one process's file.
    seats = Counter(name for r in records.values() for name in r.seats)
    per_bot = Counter(p.rsplit("-", 1)[0] for p, games in played.items() for _ in games)
    assert per_bot == seats
    # Reuse keeps its speed: a bot has about one process per seat rotation (3), not
    # one per game (18); each process plays several deals.
    processes = Counter(p.rsplit("-", 1)[0] for p in played)
    assert all(count <= 3 + 2 for count in processes.values()), processes
    assert max(len(games) for games in played.values()) >= 4
    assert_none_left(token)


def test_tables_do_not_share_deals(tmp_path: Path) -> None:
    # A bot at two tables of one deal number would otherwise see one deal twice.
    token = new_token()
    path = write_league(tmp_path / "l", memory_bots(token, 4), table=2, deals=1, duplicate=False)
    out = tmp_path / "out"
    run_league(path, out)
    records = ledger_records(out)
    assert len(records) == 6
    assert len({r.seed for r in records}) == 6
    assert_none_left(token)


def _old_deal_seed(league_seed: int, deal: int) -> int:
    """How the referee derived deal seeds before: a public function of small numbers."""
    return random.Random(f"league/{league_seed}/deal/{deal}").getrandbits(31)


def test_no_small_seed_reproduces_a_dealt_hand(tmp_path: Path) -> None:
    # A bot sees its hand and knows the referee's code. It tries the small numbers
    # people type (league seeds and deal numbers, through the old derivation, and
    # game seeds given straight to the engine) until one deals its hand: then it
    # would know every hand and the boneyard's order. None may.
    token = new_token()
    path = write_league(
        tmp_path / "l", memory_bots(token, 3), table=3, deals=2, duplicate=True, seed=2026
    )
    out = tmp_path / "out"
    run_league(path, out)
    config = load_config(path)
    records: list[Record] = ledger_records(out)
    assert len(meta(out)["deal_key"]) == 64  # 256 bits, made when the league started
    dealt: dict[str, dict[int, list[list[int]]]] = {}  # game -> seat -> hand
    for stderr in (out / "stderr").glob("*.stderr"):
        for line in stderr.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            dealt.setdefault(entry["game"], {})[entry["seat"]] = entry["hand"]
    deals = {json.dumps([hands[s] for s in range(3)]) for hands in dealt.values()}
    assert len(dealt) == 3 * 2 and len(deals) == 2  # six games, two deals
    candidates = {_old_deal_seed(s, d) for s in range(100) for d in range(100)}
    candidates |= {_old_deal_seed(config.seed, d) for d in range(100)}
    candidates |= set(range(5000))
    rules = preset("standard", players=3, max_pip=6, rounds="single")
    assert rules.to_dict() == config.rules.to_dict()
    # Six tiles of a double-6 set are dealt by some small seed now and then by chance;
    # a bot confirms a candidate with what it sees next. The test confirms it with
    # every seat's hand at once.
    for candidate in candidates:
        state = new_game(rules, candidate)
        deal = json.dumps([sorted([t.hi, t.lo] for t in hand) for hand in state.hands])
        assert deal not in deals, f"seed {candidate} deals a game of the league"
    # The deals are 128-bit seeds, and the full logs (the proof) keep them.
    for record in records:
        assert record.seed.bit_length() > 64
        assert read_log(Path(record.log_path)).header.seed == record.seed


def test_a_pinned_deal_key_replays_the_deals_and_a_fresh_league_does_not(
    tmp_path: Path,
) -> None:
    token = new_token()
    key = "0123456789abcdef" * 4
    bots = memory_bots(token, 3)
    pinned = write_league(tmp_path / "p", bots, table=3, deals=1, deal_key=key)
    fresh = write_league(tmp_path / "f", bots, table=3, deals=1)
    seeds = []
    for path, out in ((pinned, "p1"), (pinned, "p2"), (fresh, "f1")):
        run_league(path, tmp_path / out)
        seeds.append([r.seed for r in ledger_records(tmp_path / out)])
    assert seeds[0] == seeds[1]
    assert not set(seeds[0]) & set(seeds[2])
    assert meta(tmp_path / "p1")["deal_key"] == key
    # A resumed league must keep its deals: another pinned key is refused.
    other = write_league(tmp_path / "p", bots, table=3, deals=1, deal_key="ff" * 16)
    result = CliRunner().invoke(
        main, ["league", str(other), "--out", str(tmp_path / "p1"), "--resume"], env=ENV
    )
    assert result.exit_code == 2
    assert "league.deal_key differs from the one these games used" in result.output
    assert_none_left(token)


def test_play_draws_a_128_bit_seed_unless_one_is_given(tmp_path: Path) -> None:
    bot = f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'}"
    base = ["play", bot, bot, "--set", "max_pip=6", "--set", "rounds=single", "-q"]
    result = CliRunner().invoke(main, [*base, "--log-dir", str(tmp_path), "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["seed"].bit_length() > 64
    log = Path(summary["log"])
    assert str(summary["seed"]) not in log.name  # the secret stays out of file names
    assert read_log(log).header.seed == summary["seed"]
    result = CliRunner().invoke(main, [*base, "--seed", "7", "--log-dir", str(tmp_path)], env=ENV)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "game-7.jsonl.gz").exists()
