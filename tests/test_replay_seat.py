"""`referee replay --seat S`: only what seat S saw, the same from the full log and from
the seat's own log.

Games of random legal moves are written in-process (`write_game`) with every seat's
log beside the full one, as `referee play --seat-logs` writes them; one game is played
for real by the sample bots. Each seat's `--show`, `--json` and `--html`, made from the
full log and from the seat's log, must be the same, and are searched for the deal seed
(a 128-bit one, as digits and in hex), the bot-seed key, each tile the seat never saw in
that round (in every form the output writes tiles in: `[a|b]` text, `[a, b]` JSON, the
page's tile codes), and other seats' fault evidence. Games and outputs are made once
per module and shared by the tests.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner, Result

from referee.cli import main
from referee.logs.gamelog import GameLog, read_log
from referee.logs.replay import Step, states
from referee.logs.replay_seat import follow, redact
from referee.logs.replay_text import Selection
from referee.rules import Rules, State, Tile, full_set, preset, tile, view
from tests._procs import assert_none_left, new_token
from tests.test_replay import (
    TILE,
    seat_log_of,
    show_blocks,
    stale_evidence,
    tiles_in,
    write_game,
)

SEED = 0x5EED_9E37_79B9_7F4A_7C15_F39C_C060_5CED  # 128 bits: no count or clock spells it
KEY = bytes.fromhex("c0ffee15" * 4)
FAULT = "no reply within 1000 ms"  # the evidence of write_game's fault at decision 5

# name: rules, seed offset, decisions before the log is cut (None: complete)
GAMES: dict[str, tuple[Rules, int, int | None]] = {
    "standard, 2 seats": (preset("standard", players=2, max_pip=6), 1, None),
    # one-tile announcement: penalty draws, which only the drawer sees
    "celko+announce, 3 seats": (preset("celko+announce", players=3, max_pip=9), 2, None),
    "teams+branching-doubles, 4 seats": (
        preset("standard+teams+branching-doubles", max_pip=6),
        3,
        None,
    ),
    # cut in round 3: the hands there are never shown, the builds of the fast phase hidden
    "fast-first-turn, 3 seats, cut": (
        preset("standard+fast-first-turn", players=3, max_pip=9),
        4,
        160,
    ),
    # draw until playable, no Mexican train, engine in the centre; it drains the boneyard,
    # so only a cut round leaves tiles unseen
    "private-trains, 4 seats, cut": (preset("private-trains", max_pip=9), 5, 400),
}
OUTPUTS = ("--show", "--json", "--html")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["replay", *args])


def output(log: Path, option: str, out: Path, *extra: str) -> str:
    """One replay output of `log` as text (the page's text for --html)."""
    args = [str(log), *extra, option] + ([str(out)] if option == "--html" else [])
    result = run(*args)
    assert result.exit_code == 0, result.output
    return out.read_text() if option == "--html" else result.stdout


@dataclass
class Played:
    """A game, its logs, and every seat's outputs from both logs."""

    name: str
    rules: Rules
    seed: int
    full: Path
    log: GameLog
    steps: list[Step]
    from_full: dict[int, dict[str, str]] = field(default_factory=dict)
    from_seat: dict[int, dict[str, str]] = field(default_factory=dict)


@pytest.fixture(scope="module", params=list(GAMES))
def played(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Played:
    name: str = request.param
    rules, offset, cut = GAMES[name]
    folder = tmp_path_factory.mktemp("seat")
    seed = SEED + offset
    full = write_game(
        folder / "full.jsonl",
        rules,
        seed,
        cut=cut,
        game="game-t",  # (write_game names a game after its seed unless told otherwise)
        bot_seed_key=KEY,
        seat_logs=True,
    )
    log = read_log(full)
    game = Played(name, rules, seed, full, log, list(states(log)))
    for seat in range(rules.players):
        game.from_full[seat] = {
            o: output(full, o, folder / f"f{seat}.html", "--seat", str(seat)) for o in OUTPUTS
        }
        mine = seat_log_of(full, seat)
        game.from_seat[seat] = {o: output(mine, o, folder / f"s{seat}.html") for o in OUTPUTS}
    return game


# ---------------------------------------------------------------- what a seat never saw


def never_seen(game: Played, seat: int) -> dict[int, set[Tile]]:
    """For each round, the tiles `seat` never saw in it: the boneyard left at its end,
    and in a round the log stops in, the tiles other hands still hold."""
    rules = game.rules
    seen: dict[int, set[Tile]] = {}

    def holds(state: State, round_index: int) -> None:
        if state.round_index == round_index and state.outcome is None:
            seen[round_index].update(state.hands[seat])

    for step in game.steps:
        r = step.before.round_index
        if r not in seen:
            seen[r] = {Tile(step.before.engine, step.before.engine)}
        holds(step.before, r)
        holds(step.after, r)
        move = step.line.move
        if move.tile is not None:
            seen[r].add(tile(*move.tile))
        if step.result is not None:
            seen[r].update(t for hand in step.result.hands for t in hand)
    everything = set(full_set(rules.max_pip))
    return {r: everything - tiles for r, tiles in seen.items()}


def text_rounds(text: str) -> dict[int, str]:
    """The --show text by round: from a round's start line to the next one (what follows
    the last round, where a cut log shows its last position, goes with it)."""
    out: dict[int, str] = {}
    current: int | None = None
    for line in text.splitlines():
        start = re.match(r"== round (\d+) of ", line)
        if start:
            current = int(start.group(1)) - 1
            out[current] = ""
        if current is not None:
            out[current] += line + "\n"
    return out


TILE_PAIRS = {"tile", "drawn", "drew"}  # a tile
TILE_LISTS = {"hand", "tiles"}  # a list of tiles
NUMBERS = {"markers", "hand_counts", "scores", "open_doubles", "binding", "out", "values"}
NUMBERS |= {"totals"}
NUMBERS |= {"ranks", "forfeited", "engine_draws"}


def json_tiles(value: object, key: str = "") -> set[Tile]:
    """Every tile of a JSON record; a two-number list anywhere else fails the test,
    so no tile can hide under a key this walk does not know."""
    if isinstance(value, dict):
        return {t for k, v in value.items() for t in json_tiles(v, k)}
    if not isinstance(value, list):
        return set()
    if key in TILE_PAIRS:
        return {tile(*value)}
    if key in TILE_LISTS:
        return {tile(*pair) for pair in value}
    if key == "hands":
        return {tile(*pair) for hand in value for pair in hand}
    if key in NUMBERS:
        assert all(not isinstance(v, list) for v in value), f"{key}: {value}"
        return set()
    for item in value:
        pair = isinstance(item, list) and len(item) == 2
        assert not (pair and all(isinstance(x, int) for x in item)), f"a pair under {key!r}"
    return {t for item in value for t in json_tiles(item, key)}


def page_data(page: str) -> dict[str, Any]:
    raw = page.split('<script id="replay-data" type="application/json">', 1)[1]
    data: dict[str, Any] = json.loads(raw.split("</script>", 1)[0])
    return data


def page_rounds(data: dict[str, Any]) -> dict[int, set[Tile]]:
    """The tiles the page's data holds, by round: deals, moves, penalties, round ends."""
    base = data["maxPip"] + 1

    def decode(code: int) -> Tile:
        return tile(code // base, code % base)

    out: dict[int, set[Tile]] = {}
    moves = iter(data["S"])
    for r, deal in enumerate(data["R"]):
        codes = [c for hand in deal["hands"] if isinstance(hand, list) for c in hand]
        if deal["x"]:
            codes += [c for hand in deal["x"]["hands"] for c in hand]
        for _ in range(deal["k"]):
            move = next(moves)
            codes.append(move[2])
            if len(move) > 5:
                codes += move[5].get("p", [])
        out[r] = {decode(c) for c in codes if c >= 0}
    return out


def test_a_seat_sees_the_same_from_the_full_log_and_from_its_own(played: Played) -> None:
    for seat in range(played.rules.players):
        for option in OUTPUTS:
            assert played.from_full[seat][option] == played.from_seat[seat][option], (
                f"{played.name}: seat {seat} {option}"
            )


def test_no_seat_output_holds_the_seed_or_the_bot_seed_key(played: Played) -> None:
    seed = played.seed
    assert played.log.header.seed == seed and played.log.header.bot_seed_key == KEY.hex()
    secrets = [str(seed), f"{seed:x}", KEY.hex()]
    for seat in range(played.rules.players):
        for option, text in played.from_full[seat].items():
            for secret in secrets:
                assert secret not in text.lower(), f"{played.name}: seat {seat} {option}"
    # The full view shows the seed: in the page as a string, whole (a JavaScript number
    # would round a 128-bit one).
    assert f"seed {seed}" in run(str(played.full), "--show", "--move", "1").stdout
    page = played.full.with_suffix(".html")
    assert run(str(played.full), "--html", str(page)).exit_code == 0
    assert page_data(page.read_text())["seed"] == str(seed)


def test_no_seat_output_holds_a_tile_it_never_saw(played: Played) -> None:
    cut = not played.log.complete
    for seat in range(played.rules.players):
        hidden = never_seen(played, seat)
        assert any(hidden.values()), "some round leaves tiles unseen"
        outputs = played.from_full[seat]
        text = text_rounds(outputs["--show"])
        assert sorted(text) == sorted(hidden)
        for r, part in text.items():
            assert not tiles_in(part) & hidden[r], f"{played.name}: seat {seat} round {r + 1}"
        by_round: dict[int, set[Tile]] = {r: set() for r in hidden}
        for line in outputs["--json"].splitlines():
            record = json.loads(line)
            if record["type"] in ("step", "round_end"):
                by_round[record["round"]] |= json_tiles(record)
            elif record["type"] == "cut":
                by_round[record["state"]["round"]] |= json_tiles(record)
            else:
                assert not json_tiles(record)
        for r, tiles in by_round.items():
            assert tiles and not tiles & hidden[r], f"{played.name}: seat {seat} round {r + 1}"
        data = page_data(outputs["--html"])
        assert data["seed"] is None and data["viewer"] == seat
        for r, tiles in page_rounds(data).items():
            assert tiles and not tiles & hidden[r], f"{played.name}: seat {seat} round {r + 1}"
        if cut:
            # The last round is cut short: the other hands there were never shown.
            last = played.steps[-1].after
            others = {t for s, h in enumerate(last.hands) if s != seat for t in h}
            assert others <= hidden[last.round_index]


def test_no_seat_output_holds_another_seats_fault_evidence(played: Played) -> None:
    faulty = played.log.decisions[4].seat
    assert [f.detail for f in played.log.decisions[4].faults] == [FAULT]
    for seat in range(played.rules.players):
        for option, text in played.from_full[seat].items():
            if seat != faulty:
                assert FAULT not in text, f"{played.name}: seat {seat} {option}"
        if seat == faulty:
            assert f"fault timeout: {FAULT}" in played.from_full[seat]["--show"]


def test_no_seat_output_holds_another_seats_stale_reply(played: Played) -> None:
    # A stale reply's evidence is the bot's own line (it may name its tiles), as a fault's.
    stale = stale_evidence(7)
    noticed = played.log.decisions[6].seat
    assert [n.detail for n in played.log.decisions[6].notices] == [stale]
    for seat in range(played.rules.players):
        for outputs in (played.from_full[seat], played.from_seat[seat]):
            for option, text in outputs.items():
                if seat != noticed:
                    assert "is open" not in text, f"{played.name}: seat {seat} {option}"
        if seat == noticed:
            assert f"ignored stale_reply: {stale}" in played.from_full[seat]["--show"]
            assert f"ignored stale_reply: {stale}" in played.from_seat[seat]["--show"]


# ---------------------------------------------------------------- the seat's log itself


def comparable(log: GameLog) -> dict[str, Any]:
    """A log's lines and their order, without the footer's clock readings."""
    out: dict[str, Any] = msgspec.to_builtins(log)
    out.pop("path")
    if out["footer"] is not None:
        out["footer"].pop("ended")
        out["footer"].pop("duration_s")
    return out


def test_a_seat_log_as_written_is_the_full_log_redacted(played: Played) -> None:
    for seat in range(played.rules.players):
        written = read_log(seat_log_of(played.full, seat), allow_redacted=True)
        assert written.header.seat == seat and written.header.seed is None
        assert written.header.bot_seed_key is None
        assert comparable(written) == comparable(redact(played.log, seat))


def test_a_seat_log_rebuilds_the_view_of_its_seat_at_every_step(played: Played) -> None:
    # Without the seed, the positions followed from a seat's log show that seat what the
    # engine's `view` shows it (the view its bot was sent), step by step.
    for seat in range(played.rules.players):
        followed = list(follow(redact(played.log, seat)))
        assert len(followed) == len(played.steps)
        for real, mine in zip(played.steps, followed, strict=True):
            assert real.result == mine.result
            for a, b in ((real.before, mine.before), (real.after, mine.after)):
                if real.result is not None and b.round_index == mine.before.round_index:
                    continue  # a cut log that stops at a round's end knows no next deal
                seen, got = view(a, seat), view(b, seat)
                assert seen.hand == got.hand and seen.drawn == got.drawn, f"move {real.n}"
                assert seen == got, f"{played.name}: seat {seat} move {real.n}"


def test_seat_text_leaks_no_hidden_tile_at_any_step(played: Played) -> None:
    # At each decision, the table and the move line show no tile of another hand or the
    # boneyard, unless the move itself plays it; the seat's own hand is there. Another
    # seat's move says nothing of its drawn tiles, its latency or its faults.
    penalties = 0
    for seat in range(played.rules.players):
        blocks = show_blocks(redact(played.log, seat), Selection(seat=seat))
        assert len(blocks) == len(played.steps)
        assert "(hidden)" in blocks[1]
        for step in played.steps:
            hidden = step_hidden(step, seat)
            shown = tiles_in(blocks[step.n])
            assert not shown & hidden, f"{played.name}: seat {seat} at move {step.n}"
            assert shown >= set(step.before.hands[seat])
            said = next(x for x in blocks[step.n].splitlines() if x.startswith("> move "))
            penalties += "as a penalty" in said
            if step.line.seat == seat:
                if step.line.move.action == "draw":
                    assert TILE.search(said.split("draws", 1)[1])
                continue
            assert " ms" not in said and "fault" not in said and "by the referee" not in said
            if step.line.move.action == "draw":
                assert said.endswith("draws") or "draws ·" in said
            if "as a penalty" in said:  # how many, never which
                assert re.search(r"draws \d+ as a penalty( ·|$)", said), said
    if played.rules.announce_one_tile:
        assert penalties, "random moves forget to announce: penalty draws"


def test_seat_json_leaks_no_hidden_tile_at_any_step(played: Played) -> None:
    by_n = {s.n: s for s in played.steps}
    for seat in (0, played.rules.players - 1):
        for text in played.from_seat[seat]["--json"].splitlines():
            record = json.loads(text)
            if record["type"] != "step":
                continue
            step = by_n[record["n"]]
            assert record["state"]["hand"] == [list(t) for t in step.before.hands[seat]]
            assert "hands" not in record["state"]
            if record["seat"] != seat:
                assert "drew" not in record and "latency_ms" not in record
            found = json_tiles(record)
            assert found >= set(step.before.hands[seat])
            assert not found & step_hidden(step, seat), f"seat {seat} JSON at {record['n']}"


def hidden_from(state: State, seat: int) -> set[Tile]:
    out = set(state.boneyard)
    for s, hand in enumerate(state.hands):
        if s != seat:
            out.update(hand)
    return out


def step_hidden(step: Step, seat: int) -> set[Tile]:
    """Tiles `seat` may not see around one decision: hidden before and (unless the round
    ended, which deals anew) still hidden after, less a tile the move plays."""
    hidden = hidden_from(step.before, seat)
    if step.result is None:
        hidden &= hidden_from(step.after, seat)
    if step.line.move.tile is not None:
        hidden.discard(tile(*step.line.move.tile))
    return hidden


# ---------------------------------------------------------------- a seat's log on the command line


def test_a_seat_log_replays_only_as_its_seat(tmp_path: Path) -> None:
    rules, _, _ = GAMES["standard, 2 seats"]
    full = write_game(tmp_path / "g.jsonl", rules, SEED, game="game-t", seat_logs=True)
    mine = seat_log_of(full, 1)
    result = run(str(mine))
    assert result.exit_code == 0, result.output
    decisions = len(read_log(full).decisions)
    assert result.stdout == (
        f"{mine}: followed {decisions} decisions and 7 rounds as seat 1 saw them; the log "
        "is complete (it holds no seed: only the full log proves the deal)\n"
    )
    assert run(str(mine), "--seat", "1", "--move", "3").exit_code == 0
    wrong = run(str(mine), "--seat", "0", "--show")
    assert wrong.exit_code == 2 and wrong.stdout == ""
    assert wrong.stderr == (
        f"referee: error: --seat 0: {mine} was written for seat 1 and holds only what it saw\n"
    )


def test_a_seat_log_that_does_not_hold_together_diverges(tmp_path: Path) -> None:
    rules, _, _ = GAMES["standard, 2 seats"]
    full = write_game(tmp_path / "g.jsonl", rules, SEED, game="game-t", seat_logs=True)
    mine = seat_log_of(full, 0)
    rows = [json.loads(line) for line in mine.read_text().splitlines()]
    # Seat 0 plays a tile it does not hold: one it saw seat 1 play earlier.
    plays = [(i, r) for i, r in enumerate(rows) if r.get("move", {}).get("action") == "play"]
    theirs = next(r for _, r in plays if r["seat"] == 1)
    i, ours = next((i, r) for i, r in plays if r["seat"] == 0 and r["n"] > theirs["n"])
    ours["move"]["tile"] = theirs["move"]["tile"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for extra in ((), ("--show",)):
        result = run(str(bad), *extra)
        assert result.exit_code == 1, result.output
        assert result.stdout.startswith(f"{bad}: diverges at line {i + 1}: the log says seat 0 ")
        assert result.stdout.count("\n") == 1


def test_played_for_real_a_seat_log_replays_as_the_full_log_for_that_seat(
    tmp_path: Path,
) -> None:
    token = new_token()
    samples = Path(__file__).resolve().parents[1] / "sample_bots"
    bots = [
        f"{name}={shlex.join([sys.executable, str(samples / f'{name}_bot.py'), token])}"
        for name in ("random", "greedy", "random")
    ]
    args = ["play", *bots, "--set", "max_pip=6", "--seed", str(SEED), "--bot-seed-key", KEY.hex()]
    args += ["--log-dir", str(tmp_path), "--seat-logs", "-q"]
    try:
        result = CliRunner().invoke(main, args)
    finally:
        assert_none_left(token)
    assert result.exit_code == 0, result.output
    seat_logs = sorted(tmp_path.glob("*.seat*.jsonl.gz"))
    (full,) = [p for p in tmp_path.glob("*.jsonl.gz") if p not in seat_logs]
    assert len(seat_logs) == 3
    log = read_log(full)
    for seat, mine in enumerate(seat_logs):
        written = read_log(mine, allow_redacted=True)
        assert written.header.seat == seat
        assert comparable(written) == comparable(redact(log, seat))
        shown = output(mine, "--json", tmp_path / "x.html")
        assert shown == output(full, "--json", tmp_path / "x.html", "--seat", str(seat))
        assert str(SEED) not in shown and KEY.hex() not in shown
