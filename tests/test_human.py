"""A person's seat (`human`, referee.human) played through a pseudo-terminal: keys are
written to the terminal, the screen is read back from it.

`referee play` runs with the pty's slave as its stdin, stdout and stderr, as in a
terminal; the seat opens that terminal by its path and draws on it. Nothing waits a
fixed time: each step waits for text to appear on the screen, with a generous limit.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.messages import GameStart, MoveSpec, RulesInfo, TimeControl, Turn
from referee.bots.process import HUMAN, BotSpec, is_person, parse_bot
from referee.human.moves import choose
from referee.human.screen import game_line

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
REFEREE = str(BIN / "referee")
RANDOM = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
WAIT_S = 60.0  # generous: a loaded machine
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
# Double-6, one round, two seats: a game of a few seconds.
SMALL = ("--seed", "5", "--set", "max_pip=6", "--set", "rounds=single", "-q")


class Screen:
    """A process on a pseudo-terminal: what it wrote (colours and cursor moves left out),
    and keys to send it."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 140, 0, 0))
        self.modes = termios.tcgetattr(self.slave)
        self.text = ""
        self.seen = 0  # where the next `wait_for` starts looking
        self.process = subprocess.Popen(
            args,
            stdin=self.slave,
            stdout=self.slave,
            stderr=self.slave,
            cwd=cwd,
            env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
            start_new_session=True,
        )

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return False
        self.text += ANSI.sub("", data.decode("utf-8", "replace"))
        return bool(data)

    def wait_for(self, pattern: str, timeout: float = WAIT_S) -> re.Match[str]:
        """The first match of `pattern` after the last one waited for."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.compile(pattern).search(self.text, self.seen)
            if found is not None:
                self.seen = found.end()
                return found
            left = deadline - time.monotonic()
            assert left > 0, f"no {pattern!r} on the screen:\n{self.text[-3000:]}"
            self._read(min(left, 0.5))

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def finish(self, timeout: float = WAIT_S) -> int:
        """Read until the process exits; its status."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None:
            assert time.monotonic() < deadline, f"still running:\n{self.text[-3000:]}"
            self._read(0.2)
        while self._read(0.2):
            pass
        return self.process.returncode

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)
        os.close(self.slave)


@pytest.fixture
def play(tmp_path: Path) -> Iterator[list[Screen]]:
    screens: list[Screen] = []
    yield screens
    for screen in screens:
        screen.close()


def start(screens: list[Screen], tmp_path: Path, *options: str) -> Screen:
    args = [REFEREE, "play", "me=human", f"random={RANDOM}", *SMALL, *options]
    screen = Screen(args, tmp_path)
    screens.append(screen)
    screen.wait_for(r"game game-\S+: you are seat 0 \(me\) against random")
    return screen


def play_by_number(screen: Screen) -> None:
    """Choose move 1 at each turn until the game is over."""
    while True:
        found = screen.wait_for(r"your move \(1-\d+|the game is over")
        if found.group().startswith("the game is over"):
            return
        screen.send("1\r")
        screen.wait_for(r"you chose 1: ")


def game_log(tmp_path: Path) -> list[dict[str, object]]:
    (log,) = tmp_path.glob("game-5*.jsonl.gz")
    with gzip.open(log, "rt") as handle:
        return [json.loads(line) for line in handle]


def test_a_whole_game_by_number_and_its_log_replays(play: list[Screen], tmp_path: Path) -> None:
    screen = start(play, tmp_path)
    play_by_number(screen)
    screen.wait_for(r"the referee says bye")
    assert screen.finish() == 0
    assert "random" in screen.text and "log: " in screen.text
    assert termios.tcgetattr(screen.slave) == screen.modes
    (log,) = tmp_path.glob("game-5*.jsonl.gz")
    replay = _without_terminal([REFEREE, "replay", str(log)], tmp_path)
    assert replay.returncode == 0, replay.stdout + replay.stderr


def test_a_move_typed_as_a_tile_and_a_train(play: list[Screen], tmp_path: Path) -> None:
    screen = start(play, tmp_path)
    moves = screen.wait_for(r"your moves\n((?:.*\n)+?).*your move \(1-").group(1)
    plays = re.findall(r"^\s*\d+\s+(\d+-\d+) on (\d+) \(([^)]*)\)", moves, re.MULTILINE)
    if not plays:
        pytest.skip("the deal gives the person no tile to play first")  # not with seed 5
    # On the Mexican train when the list has such a play (seed 5 has), by its word.
    tile, train, whose = next((p for p in plays if p[2] == "mexican"), plays[0])
    word = "mexican" if whose == "mexican" else train
    screen.send(f"{tile} on {word}\r")
    screen.wait_for(rf"you chose \d+: {tile} on {train}")
    screen.wait_for(rf"you played {tile} on ")
    play_by_number(screen)
    assert screen.finish() == 0


def test_illegal_input_keeps_the_turn(play: list[Screen], tmp_path: Path) -> None:
    screen = start(play, tmp_path)
    screen.wait_for(r"your move \(1-")
    screen.send("99\r")
    screen.wait_for(r"there is no move 99: choose 1 to \d+")
    screen.send("9-9 on mexican\r")
    screen.wait_for(r"you do not hold 9-9")
    screen.send("banana split\r")
    screen.wait_for(r"not a move: 'banana split'")
    screen.send("\x1b[A\r")  # an arrow key, then Enter: nothing typed
    screen.wait_for(r"type a move's number")
    screen.send("1\r")
    screen.wait_for(r"you chose 1: ")
    play_by_number(screen)
    assert screen.finish() == 0
    (footer,) = [line for line in game_log(tmp_path) if line["type"] == "footer"]
    assert footer["faults"] == [] and footer["forfeited"] == [False, False]


def test_the_clock_runs_out_and_the_referee_moves(play: list[Screen], tmp_path: Path) -> None:
    screen = start(
        play,
        tmp_path,
        *("--move-ms", "2500", "--bank-ms", "0"),
        *("--policy", "default-move", "--max-faults", "99"),
    )
    screen.wait_for(r"\[0:03 \+ bank 0:00\] your move")
    screen.wait_for(r"\[0:02 \+ bank 0:00\] your move")  # it counts down
    screen.wait_for(r"the referee says timeout: no reply within 2500 ms.*fault rules apply")
    screen.wait_for(r"you played |you drew |you passed")  # the referee's move, for the seat
    screen.wait_for(r"your move \(1-")  # the next turn: the seat plays on
    play_by_number(screen)
    assert screen.finish() == 0
    first = next(
        line for line in game_log(tmp_path) if line["type"] == "decision" and line["seat"] == 0
    )
    assert first["auto"] is True
    assert [fault["kind"] for fault in first["faults"]] == ["timeout"]


def test_another_seats_fault_evidence_is_not_shown_while_a_person_plays(
    play: list[Screen], tmp_path: Path
) -> None:
    """A fault's evidence can name a tile its bot drew; the referee prints it on the
    person's terminal only in the result table, once the game is over."""
    bot = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'illegal.py'}"
    loud = [option for option in SMALL if option != "-q"]  # the round lines asked for
    args = [REFEREE, "play", "me=human", f"cheat={bot}", *loud, "--max-faults", "99"]
    args += ["--policy", "default-move"]
    screen = Screen(args, tmp_path)
    play.append(screen)
    play_by_number(screen)
    assert screen.finish() == 0
    during = screen.text.partition("the game is over")[0]
    assert "does not hold" not in during and "fault" not in during.lower(), during
    faults = [
        f
        for line in game_log(tmp_path)
        if line["type"] == "decision"
        for f in line.get("faults", [])
    ]
    assert faults and all(f["kind"] == "illegal" for f in faults)


def test_ctrl_c_forfeits_and_restores_the_terminal(play: list[Screen], tmp_path: Path) -> None:
    screen = start(play, tmp_path)
    screen.wait_for(r"your move \(1-")
    screen.send("\x03")
    screen.wait_for(r"You pressed Ctrl-C: you forfeit the game")
    status = screen.finish()
    assert status == 0, screen.text[-2000:]
    assert "crash x1 (forfeit)" in screen.text[screen.seen :]  # the referee's result
    assert "the person pressed Ctrl-C: forfeit" in screen.text  # its stderr's last line
    assert termios.tcgetattr(screen.slave) == screen.modes
    (footer,) = [line for line in game_log(tmp_path) if line["type"] == "footer"]
    assert footer["forfeited"] == [True, False]
    (log,) = tmp_path.glob("game-5*.jsonl.gz")
    replay = subprocess.run([REFEREE, "replay", str(log)], capture_output=True, cwd=tmp_path)
    assert replay.returncode == 0, replay.stdout + replay.stderr


def _without_terminal(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`args` run with standard input not a terminal; its output captured."""
    return subprocess.run(
        args, stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=cwd, check=False
    )


def test_without_a_terminal_human_is_a_one_line_error(tmp_path: Path) -> None:
    done = _without_terminal([REFEREE, "play", "me=human", f"random={RANDOM}", *SMALL], tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "standard input is not a terminal" in done.stderr
    assert not list(tmp_path.iterdir()), "nothing started"


def test_one_terminal_seats_one_person(tmp_path: Path) -> None:
    done = _without_terminal([REFEREE, "play", "me=human", "you=human", *SMALL], tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "referee: error: 2 seats are `human`: one terminal seats one person (docs/human.md)\n"
    )


def test_a_match_refuses_a_person_in_one_line(tmp_path: Path) -> None:
    """A match plays each deal twice, seats swapped: a person would remember the hands."""
    match = _without_terminal(
        [REFEREE, "match", "human", RANDOM, "--out", str(tmp_path / "m")], tmp_path
    )
    assert match.returncode == 2
    assert match.stderr == (
        "referee: error: NEW: `human` seats a person in `referee play` and `referee league` "
        "only; a match plays each deal twice, seats swapped, and a person would remember the "
        "hands (docs/human.md)\n"
    )
    assert not (tmp_path / "m").exists()


def person_league(folder: Path, extra: str = "", me: str = "", **league: str) -> Path:
    """A league file: a person (`me`, with the `me` lines added to its table) and two
    random bots at tables of two, one double-6 round a game."""
    settings = {"name": '"h"', "table": "2", "deals": "1", "duplicate": "false", **league}
    path = folder / "league.toml"
    path.write_text(
        "[league]\n"
        + "".join(f"{k} = {v}\n" for k, v in settings.items())
        + '[rules]\nmax_pip = 6\nrounds = "single"\n'
        + "[time]\nmove_ms = 2000\n"
        + f'[[bot]]\nname = "me"\ncommand = "human"\n{me}'
        + "".join(f'[[bot]]\nname = "r{i}"\ncommand = "{RANDOM}"\n' for i in (1, 2))
        + extra,
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (
            {"league": {"duplicate": "true"}},
            "league.duplicate: 'me' is a person (`human`), who would play each deal once per "
            "seat rotation and would remember the hands; set duplicate = false in [league] "
            "(docs/human.md)",
        ),
        (
            {
                "league": {"format": '"match"', "duplicate": "true"},
                "extra": '[match]\nnew = "me"\nbase = "r1"\n',
            },
            "league.format: 'me' is a person (`human`), who plays both games of each unit's "
            "deal (seats swapped) and would remember the hands (docs/human.md)",
        ),
        (
            {"extra": '[[bot]]\nname = "you"\ncommand = "human"\n'},
            "bot[3].command: 'me' is `human` already: one terminal seats one person "
            "(docs/human.md)",
        ),
        (
            {"me": 'sandbox = "bwrap"\n'},
            "bot[0].sandbox: 'me' is a person (`human`), whose seat runs at your terminal, "
            "outside the sandbox and its limits (docs/human.md)",
        ),
        (
            {},  # as it should be, but the referee's standard input is not a terminal
            "me: `human` seats a person at this terminal, but the referee's standard input "
            "is not a terminal",
        ),
        (
            {"options": ["--cluster", "local:1"]},
            "--cluster: 'me' is a person (`human`), who plays at this terminal",
        ),
    ],
)
def test_a_league_that_cannot_seat_its_person_says_why_in_one_line(
    tmp_path: Path, change: dict[str, Any], error: str
) -> None:
    options = change.get("options", [])
    parts = {k: v for k, v in change.items() if k in ("extra", "me")}
    league = person_league(tmp_path, **parts, **change.get("league", {}))
    done = _without_terminal(
        [REFEREE, "league", str(league), "--out", str(tmp_path / "l"), *options], tmp_path
    )
    assert (done.returncode, done.stderr) == (2, f"referee: error: {error}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["league.toml"], "nothing started"


def test_a_league_with_a_person_is_committed_without_a_terminal(tmp_path: Path) -> None:
    """`referee commit` starts nobody: a league with a person commits to its terms (the
    person's command is `human` in them) from a script, as any league does."""
    league = person_league(tmp_path)
    done = _without_terminal([REFEREE, "commit", str(league), "--out", "out"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"sha256:[0-9a-f]{64}\n", done.stdout), done.stdout


def test_a_person_plays_a_league_at_the_terminal(play: list[Screen], tmp_path: Path) -> None:
    """`[[bot]] command = "human"` in a league without duplicate deals: the person plays
    their games one at a time at the referee's terminal, under the league's clocks, and
    the standings, ledger and logs count them as any bot's."""
    league = person_league(tmp_path)
    screen = Screen([REFEREE, "league", str(league), "--out", "out", "--jobs", "3"], tmp_path)
    play.append(screen)
    screen.wait_for(r"a person is seated: one game at a time \(not --jobs 3\)")
    for _ in range(2):  # me against r1, me against r2; r1 against r2 needs no one
        screen.wait_for(r"game g\d+: you are seat \d \(me\) against r\d")
        screen.wait_for(r"0:0[12] \+ bank")  # the league's clock: 2 s a move
        play_by_number(screen)
    assert screen.finish() == 0, screen.text[-2000:]
    standings = json.loads((tmp_path / "out" / "standings.json").read_text(encoding="utf-8"))
    rows = {row["name"]: row for row in standings["bots"]}
    assert rows["me"]["games"] == 2 and rows["r1"]["games"] == 2
    logs = sorted((tmp_path / "out" / "logs").glob("*.jsonl.gz"))
    assert len(logs) == 3
    commands = []
    for log in logs:
        with gzip.open(log, "rt") as handle:
            header = json.loads(handle.readline())
        commands += [b["command"] for b in header["bots"]]
    assert commands.count("human") == 2  # the log names the seat as the file does
    verify = _without_terminal([REFEREE, "replay", str(logs[0])], tmp_path)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_person_is_never_sandboxed(play: list[Screen], tmp_path: Path) -> None:
    from referee.bots.sandbox import bwrap_problem

    if (problem := bwrap_problem()) is not None:
        pytest.skip(f"bubblewrap does not work here: {problem}")
    args = [REFEREE, "play", "me=human", f"random={RANDOM}", "--sandbox", "bwrap", *SMALL]
    screen = Screen(args, tmp_path)
    play.append(screen)
    assert screen.finish() == 2
    assert screen.text.strip() == (
        "referee: error: me: a person's seat (`human`) draws on your terminal and cannot run "
        "in the sandbox (bwrap); play it with --sandbox none, play's default"
    )


def test_human_becomes_a_bot_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "isatty", lambda fd: True)
    monkeypatch.setattr(os, "ttyname", lambda fd: "/dev/pts/7")
    spec = parse_bot("me=human")
    assert spec.argv == (sys.executable, "-m", "referee.human", "--tty", "/dev/pts/7")
    assert (spec.name, spec.named, spec.terminal) == ("me", True, "/dev/pts/7")
    assert parse_bot(HUMAN).name == HUMAN and not parse_bot(HUMAN).named
    assert is_person("me=human") and is_person(" human ") and not is_person("human --x")
    with pytest.raises(ValueError, match="cannot run in the sandbox"):
        BotSpec(name="me", argv=spec.argv, terminal="/dev/pts/7", sandbox="bwrap")


def _turn(legal: list[MoveSpec], hand: list[tuple[int, int]]) -> Turn:
    view = {
        "round": 0,
        "engine": 6,
        "hand": hand,
        "trains": [
            {"train": t, "owner": o, "tiles": [], "end": 6, "public": o == -1, "open_double": False}
            for t, o in ((0, 0), (1, 1), (2, -1))
        ],
        "markers": [False, False],
        "hand_counts": [len(hand), 7],
        "scores": [0, 0],
        "boneyard": 10,
        "open_doubles": [],
        "step": "start",
        "next": 1,
    }
    return msgspec.convert(
        {"id": 1, "seat": 0, "view": view, "legal": legal, "clock": {"move_ms": 1, "bank_ms": 1}},
        Turn,
    )


def test_typed_moves_are_read_against_the_legal_list() -> None:
    legal = [
        MoveSpec(action="play", tile=(6, 4), train=0),
        MoveSpec(action="play", tile=(6, 4), train=2),
        MoveSpec(action="play", tile=(6, 1), train=2),
        MoveSpec(action="draw"),
    ]
    turn = _turn(legal, [(6, 4), (6, 1), (3, 3)])
    names = ["me", "[bold]bob"]
    assert choose("2", turn, names) == 1
    assert choose("4-6 on mexican", turn, names) == 1
    assert choose("6-4 on the mexican train", turn, names) == 1
    assert choose("6-4 on mine", turn, names) == 0
    assert choose("6-4 on 2", turn, names) == 1
    assert choose("1-6", turn, names) == 2
    assert choose(" DRAW ", turn, names) == 3
    assert choose("pass", turn, names) == "you may not pass now"
    assert "several trains" in str(choose("6-4", turn, names))
    assert choose("3-3", turn, names) == "3-3 cannot be played now"
    assert choose("6-4 on 1", turn, names) == "6-4 cannot go on 1 ([bold]bob) now"
    assert choose("6-4 on 9", turn, names) == "there is no train 9"
    assert choose("0", turn, names) == "there is no move 0: choose 1 to 4"
    assert str(choose("\x1b[31m", turn, names)).startswith("not a move: '\\x1b[31m'")


def test_other_seats_names_are_shown_escaped() -> None:
    start = GameStart(
        game="g",
        seat=0,
        players=2,
        names=["me", "[red]evil\x1b]0;x\x07"],
        rules=RulesInfo(),
        time=TimeControl(),
        seed=1,
        rounds=1,
    )
    line = game_line(start)
    assert "\\[red]evil\\x1b]0;x\\x07" in line
