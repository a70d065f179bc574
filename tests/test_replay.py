"""`referee replay`: verification of tampered logs, and the replay as text and JSON lines.

Logs are written in-process with the engine and `LogWriter` (random legal moves),
so each test knows every hand and can check what the replay shows against it.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from protocol.messages import TimeControl
from referee.bots.faults import Fault, FaultKind, Notice, NoticeKind
from referee.cli import main
from referee.game.match import Decision, Fanout, GameResult, Recorder
from referee.logs.gamelog import LogBot, LogWriter, make_header, read_log
from referee.logs.replay_text import Selection, show, steps
from referee.rules import Rules, Tile, apply, legal_moves, new_game, preset

TILE = re.compile(r"\[(\d+)\|(\d+)\]")

ROOT = Path(__file__).resolve().parents[1]


def seat_log_of(path: Path, seat: int) -> Path:
    """Where `write_game(..., seat_logs=True)` puts seat `seat`'s log."""
    return path.with_name(f"{path.stem}.seat{seat}.jsonl")


def write_game(
    path: Path,
    rules: Rules,
    seed: int,
    *,
    cut: int | None = None,
    seat: int | None = None,
    fault_at: int | None = 5,
    notice_at: int | None = 7,
    names: list[str] | None = None,
    game: str | None = None,
    bot_seed_key: bytes | None = None,
    seat_logs: bool = False,
) -> Path:
    """A game of random legal moves logged to `path`; `cut` stops after that many decisions
    without a footer. Decision `fault_at` is a referee move after a timeout; decision
    `notice_at` came after a stale reply (`stale_evidence`). With `seat_logs`, each
    seat's log is written beside it as the game goes (`seat_log_of`)."""
    n = rules.players
    header = make_header(
        game=game if game is not None else f"game-{seed}",
        rules=rules,
        seed=seed,
        bots=[
            LogBot(seat=s, name=names[s] if names else f"bot{s}", command=f"python bot{s}.py")
            for s in range(n)
        ],
        time=TimeControl(),
        policy="default-move",
        max_faults=3,
        bot_seed_key=bot_seed_key,
    )
    writers = [LogWriter(path, header, seat=seat)]
    if seat_logs:
        writers += [LogWriter(seat_log_of(path, s), header, seat=s) for s in range(n)]
    writer: Recorder = Fanout(*writers)
    rng = random.Random(f"test/{seed}")
    state = new_game(rules, seed)
    count = 0
    faults: list[list[Fault]] = [[] for _ in range(n)]
    notices: list[list[Notice]] = [[] for _ in range(n)]
    while state.outcome is None:
        if cut is not None and count == cut:
            for w in writers:
                w.close()
            return path
        before = state
        move = rng.choice(legal_moves(state))
        state = apply(state, move)
        count += 1
        fault: tuple[Fault, ...] = ()
        if count == fault_at:
            fault = (Fault(before.to_move, FaultKind.TIMEOUT, "no reply within 1000 ms", count),)
            faults[before.to_move].extend(fault)
        notice: tuple[Notice, ...] = ()
        if count == notice_at:
            evidence = stale_evidence(count)
            notice = (Notice(before.to_move, NoticeKind.STALE_REPLY, evidence, count),)
            notices[before.to_move].extend(notice)
        record = Decision(
            seat=before.to_move,
            request=count,
            move=move,
            latency_ms=rng.uniform(0.05, 40.0),
            auto=bool(fault),
            faults=fault,
            round=before.round_index,
            notices=notice,
        )
        writer.decision(record, state)
        if state.round_index != before.round_index or state.outcome is not None:
            writer.round_end(state.results[-1])
    outcome = state.outcome
    result = GameResult(
        outcome=outcome,
        ranks=outcome.ranks,
        forfeited=(False,) * n,
        faults=tuple(tuple(f) for f in faults),
        decisions=count,
        results=state.results,
        final=state,
        notices=tuple(tuple(i) for i in notices),
    )
    for w in writers:
        w.finish(result)
    return path


def stale_evidence(request: int) -> str:
    """The evidence of the stale reply `write_game` logs before decision `request`."""
    return f'reply for request {request + 900} while {request} is open: {{"type":"move"}}'


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete 4-player standard game."""
    return write_game(tmp_path_factory.mktemp("logs") / "g.jsonl", preset("standard"), 11)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["replay", *args])


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines()


def tampered(
    source: Path, tmp_path: Path, change: Callable[[list[dict[str, object]]], int]
) -> tuple[Path, int]:
    """A copy of `source` with `change` applied to its parsed lines; the changed line's number."""
    rows: list[dict[str, object]] = [json.loads(line) for line in lines_of(source)]
    number = change(rows)
    out = tmp_path / "tampered.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out, number


def index_of(rows: list[dict[str, object]], pred: Callable[[dict[str, object]], bool]) -> int:
    return next(i for i, r in enumerate(rows) if pred(r))


def diverges(result: Result, line: int) -> str:
    assert result.exit_code == 1, result.output
    out = result.stdout.strip()
    assert "\n" not in out
    assert f"diverges at line {line}: the log says " in out, out
    return out


# ---------------------------------------------------------------- verification


def test_a_faithful_log_verifies(game: Path) -> None:
    result = run(str(game))
    assert result.exit_code == 0, result.output
    log = read_log(game)
    assert result.stdout == (
        f"{game}: verified {len(log.decisions)} decisions and 13 rounds; the log is complete\n"
    )


def test_a_changed_move_is_caught(game: Path, tmp_path: Path) -> None:
    log = read_log(game)
    target = next(d for d in log.decisions[10:] if d.move.action == "play")
    state = next(s.before for s in steps(log) if s.n == target.n)
    # A tile of another hand: never legal for this seat.
    other = state.hands[(target.seat + 1) % 4][0]

    def change(rows: list[dict[str, object]]) -> int:
        i = index_of(rows, lambda r: r.get("n") == target.n)
        rows[i]["move"] = {
            "action": "play",
            "tile": [other.hi, other.lo],
            "train": target.move.train,
        }
        return i + 1

    path, number = tampered(game, tmp_path, change)
    out = diverges(run(str(path)), number)
    assert f"seat {target.seat} made the move play {other} on train {target.move.train}" in out
    assert "the rules say illegal:" in out


def test_a_changed_round_score_is_caught(game: Path, tmp_path: Path) -> None:
    def change(rows: list[dict[str, object]]) -> int:
        i = index_of(rows, lambda r: r["type"] == "round_end" and r["round"] == 2)
        scores = rows[i]["scores"]
        assert isinstance(scores, list)
        scores[0] += 1
        return i + 1

    path, number = tampered(game, tmp_path, change)
    out = diverges(run(str(path)), number)
    assert "the log says round 2 scores [" in out


def test_a_changed_final_score_is_caught(game: Path, tmp_path: Path) -> None:
    def change(rows: list[dict[str, object]]) -> int:
        scores = rows[-1]["scores"]
        assert isinstance(scores, list)
        scores[1] -= 5
        return len(rows)

    path, number = tampered(game, tmp_path, change)
    out = diverges(run(str(path)), number)
    assert "the log says final scores [" in out


def test_a_removed_decision_is_caught(game: Path, tmp_path: Path) -> None:
    def change(rows: list[dict[str, object]]) -> int:
        i = index_of(rows, lambda r: r.get("n") == 40)
        del rows[i]
        return i + 1  # decision 41 now sits where 40 was

    path, number = tampered(game, tmp_path, change)
    out = diverges(run(str(path)), number)
    assert out.endswith("the log says decision number 41; the rules say it is decision 40")


def test_a_removed_round_end_is_caught(game: Path, tmp_path: Path) -> None:
    def change(rows: list[dict[str, object]]) -> int:
        i = index_of(rows, lambda r: r["type"] == "round_end" and r["round"] == 0)
        del rows[i]
        return i  # the decision that ended the round

    path, number = tampered(game, tmp_path, change)
    out = diverges(run(str(path)), number)
    assert out.endswith("the log says no round end after this move; the rules say round 0 ends")


def test_a_swapped_seat_is_caught(game: Path, tmp_path: Path) -> None:
    def change(rows: list[dict[str, object]]) -> int:
        i = index_of(rows, lambda r: r.get("n") == 25)
        seat = rows[i]["seat"]
        assert isinstance(seat, int)
        rows[i]["seat"] = (seat + 1) % 4
        return i + 1

    path, number = tampered(game, tmp_path, change)
    out = diverges(run(str(path)), number)
    assert re.search(r"the log says seat (\d) moved; the rules say seat (\d) is to move$", out)


def test_a_diverging_log_is_not_shown(game: Path, tmp_path: Path) -> None:
    def change(rows: list[dict[str, object]]) -> int:
        i = index_of(rows, lambda r: r.get("n") == 25)
        rows[i]["seat"] = (int(str(rows[i]["seat"])) + 1) % 4
        return i + 1

    path, _ = tampered(game, tmp_path, change)
    for option in ("--show", "--json"):
        result = run(str(path), option)
        assert result.exit_code == 1
        assert result.stdout.count("\n") == 1 and "diverges at line" in result.stdout
    result = run(str(path), "--html", str(tmp_path / "out.html"))
    assert result.exit_code == 1
    assert not (tmp_path / "out.html").exists()


def test_a_truncated_log_is_incomplete_but_verifies(game: Path, tmp_path: Path) -> None:
    text = game.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(text[: len(text) // 2])  # most likely in the middle of a line
    result = run(str(cut))
    assert result.exit_code == 0, result.output
    assert "the log is INCOMPLETE" in result.stdout
    result = run(str(cut), "--show")
    assert result.exit_code == 0, result.output
    decisions = len(read_log(cut).decisions)
    assert f"== the log stops after decision {decisions} (incomplete) ==" in result.stdout


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("hello world\n", "line 1 is not JSON: "),
        ('{"type":"header","format":2}\n', "line 1 is not a header of format 1: "),
        (
            '{"type":"decision","n":1,"round":0,"seat":0,"request":1,"move":{"action":"draw"}}\n',
            "line 1 is a decision line; a game log starts with its header)",
        ),
        ("", "the file is empty)"),
        ("\n\n", "the file is empty)"),
        ('[league]\nname = "demo"\n', "line 1 is not JSON: "),  # a league file
        ("[1, 2]\n", "line 1 is a JSON array, not an object)"),
        ('"text"\n', "line 1 is a JSON string, not an object)"),
        ('{"name": "x"}\n', "line 1 is not a log header: "),
        ('{"type":"header","format":1,"game":"g', "line 1 is cut short before the end of the"),
    ],
)
def test_not_a_log_is_one_line_and_exit_2(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    for extra in ((), ("--show",), ("--json",)):
        result = run(str(path), *extra)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert result.stderr.startswith(f"referee: error: {path}: not a game log (")
        assert result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr


def test_real_files_that_are_not_logs_say_so(game: Path, tmp_path: Path) -> None:
    # What a newcomer may give by mistake: the league file, a program, a log cut in the
    # middle of its first line (a referee killed as the game began).
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(game.read_bytes().split(b"\n")[0][:100])
    for path in (ROOT / "examples" / "league.toml", Path(sys.executable), cut):
        result = run(str(path))
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"referee: error: {path}: not a game log (line ")
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_header_of_an_unknown_format_is_refused(game: Path, tmp_path: Path) -> None:
    rows = lines_of(game)
    header = json.loads(rows[0])
    header["format"] = 7
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps(header) + "\n" + "\n".join(rows[1:]) + "\n")
    result = run(str(path), "--show")
    assert result.exit_code == 2
    assert result.stderr == f"referee: error: {path}:1: log format 7; this referee reads 1\n"


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    result = run(str(tmp_path / "nope.jsonl"), "--show")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "cannot read" in result.stderr


# ---------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--seat", "4"), "--seat 4: the game has seats 0 to 3"),
        (("--seat", "-1"), "--seat -1: the game has seats 0 to 3"),
        (("--seat", "one"), "--seat 'one': expected a whole number"),
        (("--round", "0"), "--round 0: the log has rounds 1 to 13"),
        (("--round", "14"), "--round 14: the log has rounds 1 to 13"),
        (("--round", "2.5"), "--round '2.5': expected a whole number"),
        (("--move", "0"), "--move 0: the log has decisions 1 to"),
        (("--move", "999999"), "--move 999999: the log has decisions 1 to"),
        (("--round", "1", "--move", "999"), "--move 999 is in round"),
        (("--show", "--json"), "--show and --json: choose one"),
        (("--json", "--html", "x.html"), "--json and --html: choose one"),
    ],
)
def test_bad_selection_is_one_line_and_exit_2(
    game: Path, args: tuple[str, ...], named: str
) -> None:
    result = run(str(game), *args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("referee: error: ") and result.stderr.count("\n") == 1
    assert named in result.stderr, result.stderr


def test_show_prints_every_move_with_the_table(game: Path) -> None:
    result = run(str(game), "--show")
    assert result.exit_code == 0, result.output
    log = read_log(game)
    out = result.stdout.splitlines()
    assert out[0].startswith(
        f"game game-11 · seed 11 · double-12, 4 players · {len(log.decisions)}"
    )
    assert "view: everything (every hand; the boneyard by its count only)" in out
    blocks = [line for line in out if line.startswith("-- move ")]
    moves = [line for line in out if line.startswith("> move ")]
    assert len(blocks) == len(moves) == len(log.decisions)
    assert sum(1 for line in out if re.match(r"== round \d+ of 13 · engine", line)) == 13
    assert sum(1 for line in out if re.match(r"== round \d+ ends, ", line)) == 13
    over = next(line for line in out if line.startswith("== game over · totals "))
    scores = " ".join(str(s) for s in log.footer.scores) if log.footer else ""
    assert f"totals {scores} · ranks" in over
    assert out[-2:] == [
        "  fault seat 0 bot0 timeout: no reply within 1000 ms",
        f"  ignored seat 2 bot2 stale_reply: {stale_evidence(7)}",
    ]
    # Every decision names its seat, and a play its tile and train; latency and the fault show.
    for d, line in zip(log.decisions, moves, strict=True):
        assert line.startswith(f"> move {d.n}: seat {d.seat} bot{d.seat} ")
        assert d.latency_ms is not None and f"{d.latency_ms:.3f} ms" in line
    assert "made by the referee" in moves[4] and "fault timeout: no reply" in moves[4]
    assert moves[6].endswith(f" · ignored stale_reply: {stale_evidence(7)}")
    assert "made by the referee" not in moves[6] and "fault" not in moves[6]
    # Each block shows the hub, every train, every hand and the boneyard count.
    first = out.index(blocks[0])
    block = out[first : out.index(moves[0]) + 1]
    assert block[1].startswith("  hub [12|12] · boneyard ")
    assert sum(1 for line in block if line.startswith("  train ")) == 5
    assert sum(1 for line in block if "hand  seat" in line) == 4
    assert "Mexican train" in "\n".join(block)


def test_show_never_reveals_the_boneyard_order(game: Path) -> None:
    log = read_log(game)
    text = show_blocks(read_log(game), Selection())
    for step in steps(log):
        if step.result is not None:
            continue  # the next round's boneyard is another shuffle
        seen = tiles_in(text[step.n])
        assert not seen & set(step.after.boneyard), f"move {step.n} shows boneyard tiles"


def test_round_jumps_to_one_round(game: Path) -> None:
    log = read_log(game)
    result = run(str(game), "--round", "3")
    assert result.exit_code == 0, result.output
    wanted = [d.n for d in log.decisions if d.round == 2]
    shown = [int(m) for m in re.findall(r"^> move (\d+):", result.stdout, re.M)]
    assert shown == wanted
    assert "== round 3 of 13 · engine [10|10]" in result.stdout
    assert "== round 3 ends, " in result.stdout
    assert "game over" not in result.stdout


def test_move_jumps_to_one_decision(game: Path) -> None:
    log = read_log(game)
    d = log.decisions[99]
    result = run(str(game), "--move", "100")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert re.findall(r"^-- move (\d+)", out, re.M) == ["100"]
    assert re.findall(r"^> move (\d+):", out, re.M) == ["100"]
    assert f"== round {d.round + 1} of 13" in out
    both = run(str(game), "--round", str(d.round + 1), "--move", "100")
    assert both.exit_code == 0 and both.stdout == out


# ---------------------------------------------------------------- helpers for what is shown


def tiles_in(text: str) -> set[Tile]:
    return {
        Tile(max(a, b), min(a, b)) for a, b in ((int(x), int(y)) for x, y in TILE.findall(text))
    }


def show_blocks(log: object, selection: Selection) -> dict[int, str]:
    """The --show text of each decision (table and move line), round headers and ends apart."""
    from referee.logs.gamelog import GameLog

    assert isinstance(log, GameLog)
    blocks: dict[int, str] = {}
    current: int | None = None
    for line in show(log, selection):
        head = re.match(r"-- move (\d+) ", line)
        if head:
            current = int(head.group(1))
            blocks[current] = ""
        elif line.startswith("=="):
            current = None  # round starts and ends are public
        if current is not None:
            blocks[current] += line + "\n"
    return blocks


# ---------------------------------------------------------------- JSON lines


def test_json_lines_parse_and_follow_the_game(game: Path) -> None:
    log = read_log(game)
    result = run(str(game), "--json")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert records[0]["type"] == "game" and records[0]["seat"] is None
    assert records[0]["rules"]["players"] == 4 and records[0]["complete"] is True
    stepped = [r for r in records if r["type"] == "step"]
    assert [r["n"] for r in stepped] == [d.n for d in log.decisions]
    ends = [r for r in records if r["type"] == "round_end"]
    assert [e["scores"] for e in ends] == [r.scores for r in log.rounds]
    assert records[-1]["type"] == "end" and log.footer is not None
    assert records[-1]["scores"] == log.footer.scores
    for record, step in zip(stepped, steps(log), strict=True):
        state = record["state"]
        assert state["hands"] == [[list(t) for t in h] for h in step.before.hands]
        assert state["boneyard"] == len(step.before.boneyard)
        assert state["to_move"] == step.before.to_move == record["seat"]
        assert len(state["trains"]) == len(step.before.trains)
        for train, real in zip(state["trains"], step.before.trains, strict=True):
            assert train["end"] == real.end and len(train["tiles"]) == len(real.tiles)
            tiles = [real.end, *(p for t in train["tiles"][::-1] for p in t)]
            assert tiles[0] == train["end"]  # oriented: each far end is the next near end
            for near, far in zip(train["tiles"], train["tiles"][1:], strict=False):
                assert near[1] == far[0]


def test_json_of_a_cut_log_ends_with_the_position(game: Path, tmp_path: Path) -> None:
    path = write_game(tmp_path / "cut.jsonl", preset("standard"), 11, cut=200)
    result = run(str(path), "--json", "--seat", "0")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert records[0]["complete"] is False
    assert records[-1]["type"] == "cut" and records[-1]["decisions"] == 200
    assert "hand" in records[-1]["state"]


def test_json_move_selects_one_step(game: Path) -> None:
    result = run(str(game), "--json", "--move", "7")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["type"] for r in records] == ["game", "step"]
    assert records[1]["n"] == 7


def test_html_writes_a_file(game: Path, tmp_path: Path) -> None:
    out = tmp_path / "g.html"
    result = run(str(game), "--html", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].startswith(f"wrote {out} (")
    page = out.read_text()
    assert page.startswith("<!doctype html>") and "__REPLAY_DATA__" not in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page


def test_html_to_an_unwritable_place_is_one_line(game: Path, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    for target, why in (
        (tmp_path / "afile" / "g.html", f"{tmp_path / 'afile'} is a file, not a folder"),
        (tmp_path, "it is a folder, not a file"),
    ):
        result = run(str(game), "--html", str(target))
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr == f"referee: error: --html {target}: cannot write there: {why}\n"
    # Folders on the way are made, as for every output place.
    result = run(str(game), "--html", str(tmp_path / "new" / "g.html"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "new" / "g.html").stat().st_size > 0
