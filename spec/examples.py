"""Every example of spec/PROTOCOL.md and spec/LOGS.md, taken from real games.

    python spec/examples.py           rewrite the examples in the documents
    python spec/examples.py --check   exit 1 naming each example that is not what
                                      the referee sends now (`make examples` refreshes)

It plays short games with the referee's own machinery (`referee.play.runner.run_game`
as `referee play` does, the league's bot pool, the TCP server and `referee
connect`'s bridge), between real bot processes: the sample bots and
`spec/example_bot.py`, which breaks the protocol on cue. Each bot runs under
`spec/wiretap.py`, which records every line it received and sent (the TCP
examples are recorded on the server's socket). An example is an excerpt of those
records or of the game logs, chosen by what it shows (the first `passed`, the
first request after a draw whose only move is `pass`, ...), never typed in: a
change to the referee that changes what it sends changes the examples, and the
check fails until they are refreshed.

In the documents an example sits between `<!-- example: NAME -->` and
`<!-- /example -->`; everything between the two markers is this script's. Seeds,
keys and the game id are fixed, so a rerun gives the same bytes. What would still
vary is set to fixed values in the log examples, as LOGS.md says: the times
(`started`, `ended`, `duration_s`, `latency_ms`, `referee_late_ms`, and the footer's
`charged_ms` and `excused_ms`, and so the footer's digest `sha256` of the lines before
it) and the bots' command lines (which name the recorder
and this machine's Python). The one other transformation is `readable`, which
spreads one turn request over lines for reading (PROTOCOL.md says so where it shows
it).

It lives in spec/, beside the documents it writes: it is a tool for the spec,
not part of the referee a user installs; tests/test_spec_examples.py runs it.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import msgspec
import trio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from protocol import ProtocolError, decode_from_bot, decode_to_bot, encode  # noqa: E402
from protocol import messages as m  # noqa: E402
from referee.bots.faults import Policy  # noqa: E402
from referee.bots.process import BotSpec  # noqa: E402
from referee.league.config import parse_config  # noqa: E402
from referee.league.game import play_scheduled  # noqa: E402
from referee.league.pool import BotPool  # noqa: E402
from referee.league.schedule import schedule  # noqa: E402
from referee.logs.gamelog import AnyLine  # noqa: E402
from referee.net.bridge import run_bridge  # noqa: E402
from referee.net.server import BotServer  # noqa: E402
from referee.play.runner import run_game, seat_log_path  # noqa: E402
from referee.rules import Rules, preset  # noqa: E402

DOCUMENTS = ("spec/PROTOCOL.md", "spec/LOGS.md")
REFRESH = "make examples"  # what the check tells a reader to run

PYTHON = sys.executable
WIRETAP = "spec/wiretap.py"
GREEDY = (PYTHON, "sample_bots/greedy_bot.py")
RANDOM = (PYTHON, "sample_bots/random_bot.py")
EXAMPLE_BOT = (PYTHON, "spec/example_bot.py")

# Fixed, so that every run deals and seeds the same; the game id is any id `referee
# play` could have drawn. The seeds were chosen so that each game shows what its
# examples need (a round whose engine nobody held, a double on the Mexican train,
# ...): should a change to the rules take that away, the script names the example
# and another seed is chosen here.
GAME_ID = "game-5e3d07a1"
BOT_SEED_KEY = bytes.fromhex("0123456789abcdef0123456789abcdef")
DEAL_KEY = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
SESSION_SEED = 7
VARIANTS_SEED = 3
FAULTS_SEED = 1
TOKEN = "mxt_tROojch5esxQ6SLUkDtKMqYxLu9G1HASFY7L2OLY-7Y"  # as `referee token` prints
NONCE = "4f1c9a02"  # an entrant's contribution to the deals' seeds
GAMES_TIMEOUT_S = 120  # a few seconds on an idle machine

# The values that vary from run to run, as the log examples show them.
FIXED_TIMES: dict[str, Any] = {
    "started": "2026-01-01T12:00:00+00:00",
    "ended": "2026-01-01T12:00:01+00:00",
    "duration_s": 1.0,
    "latency_ms": 1.0,
    "charged_ms": 100.0,  # the footer's sums of the decisions' times
    "excused_ms": 0.0,
    # The footer's digest of the lines before it, which hold the times above.
    "sha256": "sha256:" + "0" * 64,
}

PASS = {"action": "pass"}
Direction = Literal["<", ">"]  # "<" from the referee to the bot, ">" from the bot
Line = tuple[Direction, str]
Kind = Literal["to_bot", "from_bot", "log"]


class ExampleError(Exception):
    """An example could not be made, or a document does not hold its markers."""


# ---------------------------------------------------------------- examples


@dataclass(frozen=True)
class Piece:
    """One message or log line of an example, as the document shows it."""

    kind: Kind
    text: str


@dataclass(frozen=True)
class Example:
    """A named excerpt: what sits between its markers in a document."""

    name: str
    pieces: tuple[Piece, ...]
    lang: Literal["json", "text"] = "json"

    def render(self) -> str:
        """The fenced block; a `text` block marks each line `<` (to the bot) or `>`."""
        if self.lang == "text":
            body = [("< " if p.kind == "to_bot" else "> ") + p.text for p in self.pieces]
        else:
            body = [p.text for p in self.pieces]
        return "\n".join([f"```{self.lang}", *body, "```"])


def compact(value: Any) -> str:
    """JSON as the referee writes it: no whitespace."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _holds_objects(value: Any) -> bool:
    parts = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(
        isinstance(p, dict) or (isinstance(p, list) and any(isinstance(q, dict) for q in p))
        for p in parts
    )


def readable(text: str) -> str:
    """A one-line message spread over lines for reading: an object or a list that
    holds objects gets one entry a line, indented; everything else stays as sent."""

    def spread(value: Any, depth: int) -> str:
        if not _holds_objects(value):
            return compact(value)
        pad, close = "  " * (depth + 1), "  " * depth
        if isinstance(value, dict):
            items = [f"{pad}{compact(k)}: {spread(v, depth + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + f"\n{close}}}"
        items = [pad + spread(v, depth + 1) for v in value]
        return "[\n" + ",\n".join(items) + f"\n{close}]"

    return spread(json.loads(text), 0)


def own_command(command: str) -> str:
    """A bot's command line without the recorder, with `python` for this machine's."""
    argv = shlex.split(command)
    if "--" in argv:
        argv = argv[argv.index("--") + 1 :]
    return shlex.join("python" if a == PYTHON else a for a in argv)


def normal_log(text: str) -> str:
    """A log line with the values that vary from run to run fixed (see FIXED_TIMES)."""
    value = json.loads(text)
    for key, fixed in FIXED_TIMES.items():
        if value.get(key) is not None:
            value[key] = fixed
    value.pop("referee_late_ms", None)
    for bot in value.get("bots", []):
        bot["command"] = own_command(bot["command"])
    return compact(value)


# ---------------------------------------------------------------- the games


@dataclass
class Played:
    """One game: each seat's wire as its bot saw it, the full log, seat 0's log."""

    seats: list[list[Line]]
    log: list[str]
    seat_log: list[str]


@dataclass
class Runs:
    """Everything the examples are cut from."""

    session: Played  # three greedy bots, standard rules, double-6
    variants: Played  # branching doubles, one-tile announcements, long first turns
    faults: Played  # a bot that breaks the protocol once a request (default-move policy)
    refusals: Played  # a bot that never answers, and one that speaks protocol 2
    league: list[list[Line]]  # two games on the same processes: the pool pings between
    tcp: dict[str, list[Line]] = field(default_factory=dict)  # "login", "refused", "busy"


def read_wire(path: Path) -> list[Line]:
    """A wiretap record."""
    if not path.exists():
        return []
    lines: list[Line] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        direction, text = json.loads(raw)
        lines.append((direction, text))
    return lines


def tapped(name: str, argv: Sequence[str], record: Path, *, named: bool = True) -> BotSpec:
    """A bot started under the wiretap, from the repository's folder; `named` False for
    a seat given no NAME= (`name` is then its program's, and its ready name replaces it)."""
    argv = (PYTHON, WIRETAP, str(record), "--", *argv)
    return BotSpec(name=name, argv=argv, cwd=str(ROOT), named=named)


async def play(
    workdir: Path,
    label: str,
    bots: Sequence[tuple[str, Sequence[str]]],
    rules: Rules,
    seed: int,
    *,
    time: m.TimeControl | None = None,
    policy: Policy = Policy.FORFEIT,
    max_faults: int = 3,
    unnamed: Sequence[int] = (),
) -> Played:
    """One game as `referee play --seat-logs` plays it; the seats `unnamed` are given no
    NAME= (each bot's name is its program's, until its ready name replaces it)."""
    records = [workdir / f"{label}-seat{i}.wire" for i in range(len(bots))]
    specs = [
        tapped(name, argv, rec, named=i not in unnamed)
        for i, ((name, argv), rec) in enumerate(zip(bots, records, strict=True))
    ]
    log_path = workdir / f"{label}.jsonl"
    await run_game(
        specs,
        rules,
        seed,
        game_id=GAME_ID,
        time=time or m.TimeControl(),
        log_path=log_path,
        policy=policy,
        max_faults=max_faults,
        seat_logs=True,
        bot_seed_key=BOT_SEED_KEY,
    )
    return Played(
        seats=[read_wire(r) for r in records],
        log=log_path.read_text(encoding="utf-8").splitlines(),
        seat_log=seat_log_path(log_path, 0).read_text(encoding="utf-8").splitlines(),
    )


async def league(workdir: Path) -> list[list[Line]]:
    """Two games of a league on the same two processes, which the pool pings between."""
    records = [workdir / f"league-{name}.wire" for name in ("alice", "bob")]
    data: dict[str, Any] = {
        "league": {
            "name": "examples",
            "table": 2,
            "deals": 2,
            "duplicate": False,
            "deal_key": DEAL_KEY,
            "bot_seed_key": BOT_SEED_KEY.hex(),
        },
        "rules": {"max_pip": 6, "rounds": "single"},  # only the ping between games matters
        "bot": [
            {
                "name": name,
                "command": shlex.join([PYTHON, WIRETAP, str(rec), "--", *GREEDY]),
                "cwd": str(ROOT),
                "sandbox": "none",
            }
            for name, rec in zip(("alice", "bob"), records, strict=True)
        ],
    }
    config = parse_config(data, workdir / "league.toml", out=workdir / "league")
    logs = config.out / "logs"
    logs.mkdir(parents=True)
    async with trio.open_nursery() as nursery:
        pool = BotPool(config, nursery, config.out)
        try:
            for game in schedule(config, bytes.fromhex(DEAL_KEY)):
                await play_scheduled(config, game, pool, logs, BOT_SEED_KEY)
        finally:
            await pool.close()
    return [read_wire(r) for r in records]


class Tap(trio.abc.Stream):
    """A server-side socket that records every whole line passing it, both ways; with
    `cut_at`, the line dies instead of carrying the server's `cut_at`-th turn request."""

    def __init__(self, stream: trio.SocketStream, record: list[Line], cut_at: int = 0) -> None:
        self.stream = stream
        self.socket = stream.socket  # the server asks for its peer's address
        self.record = record
        self._pending: dict[Direction, bytes] = {"<": b"", ">": b""}
        self.cut_at = cut_at
        self.turns = 0

    def _note(self, direction: Direction, data: bytes) -> None:
        *lines, self._pending[direction] = (self._pending[direction] + data).split(b"\n")
        self.record.extend((direction, line.decode()) for line in lines)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self.cut_at:
            self.turns += bytes(data).count(b'"type":"turn"')
            if self.turns >= self.cut_at:
                self.cut_at = 0
                await self.stream.aclose()  # what was written is lost with the line
                return
        self._note("<", bytes(data))
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = bytes(await self.stream.receive_some(max_bytes))
        self._note(">", data)
        return data

    async def aclose(self) -> None:
        await self.stream.aclose()


async def tcp(workdir: Path) -> dict[str, list[Line]]:
    """A bot logging in through `referee connect`'s bridge, one with a wrong token, and
    a connection pushed out by newer ones that do not log in."""
    data: dict[str, Any] = {
        "league": {"name": "examples", "table": 2, "duplicate": False},
        "rules": {"max_pip": 6},
        "server": {"handshake_ms": 60_000},  # the oldest stranger is pushed out, not timed out
        "bot": [
            {"name": "my-bot", "transport": "tcp", "token": TOKEN},
            {"name": "greedy", "command": shlex.join(GREEDY), "cwd": str(ROOT), "sandbox": "none"},
        ],
    }
    config = parse_config(data, workdir / "tcp.toml", out=workdir / "tcp")
    server = BotServer(config)
    connections: list[list[Line]] = []
    logged_in = trio.Event()
    server.on_login = lambda name: logged_in.set()

    async def handle(stream: trio.SocketStream) -> None:
        record: list[Line] = []
        connections.append(record)
        await server.handle(Tap(stream, record))  # type: ignore[arg-type]

    async def arrived(count: int) -> None:
        while len(connections) < count:
            await trio.sleep(0.005)

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, handle, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        nursery.start_soon(
            partial(
                run_bridge, "127.0.0.1", port, "my-bot", TOKEN, GREEDY, reconnect=False, nonce=NONCE
            )
        )
        await logged_in.wait()
        await server.close()  # `bye`: the league is over
        await arrived(1)
        await run_bridge("127.0.0.1", port, "my-bot", "a wrong token", GREEDY, reconnect=False)
        await arrived(2)
        strangers = []
        for i in range(config.server.max_handshakes_per_address + 1):
            strangers.append(await trio.open_tcp_stream("127.0.0.1", port))
            await arrived(3 + i)
        while await strangers[0].receive_some():
            pass  # the oldest is told `busy`, then closed
        for stream in strangers:
            await stream.aclose()
        nursery.cancel_scope.cancel()
    resumed = await resume(workdir)
    return {
        "login": connections[0],
        "refused": connections[1],
        "busy": connections[2],
        "resume": resumed[1],
        "resume-refused": resumed[2],
    }


async def resume(workdir: Path) -> list[list[Line]]:
    """A game in which the bridge's line dies before its third turn request: the
    bridge logs in again and resumes it (the second connection); after the game, a
    `resume` of it is refused (the third)."""
    data: dict[str, Any] = {
        "league": {"name": "examples-resume", "table": 2, "duplicate": False, "deals": 1},
        "rules": {"max_pip": 6, "rounds": "single"},
        "bot": [
            {"name": "my-bot", "transport": "tcp", "token": TOKEN},
            {"name": "greedy", "command": shlex.join(GREEDY), "cwd": str(ROOT), "sandbox": "none"},
        ],
    }
    config = parse_config(data, workdir / "resume.toml", out=workdir / "resume")
    logs = config.out / "logs"
    logs.mkdir(parents=True)
    server = BotServer(config)
    connections: list[list[Line]] = []

    async def handle(stream: trio.SocketStream) -> None:
        record: list[Line] = []
        connections.append(record)
        await server.handle(Tap(stream, record, 3 if len(connections) == 1 else 0))  # type: ignore[arg-type]

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, handle, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        nursery.start_soon(partial(run_bridge, "127.0.0.1", port, "my-bot", TOKEN, GREEDY))
        pool = BotPool(config, nursery, config.out, server)
        try:
            (game,) = schedule(config, bytes.fromhex(DEAL_KEY))
            record = await play_scheduled(config, game, pool, logs, BOT_SEED_KEY)
        finally:
            await pool.close()
        if record.faults or len(connections) != 2:
            raise ExampleError(f"resume: the game was not resumed: {record.faults}")
        await server.close()  # `bye`: the league is over
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        late = m.Login(name="my-bot", token=TOKEN, resume=m.Resume(game=game.game_id, received=0))
        await stream.send_all(encode(late))
        while await stream.receive_some():
            pass  # `error` with code `resume`, then `bye`
        await stream.aclose()
        nursery.cancel_scope.cancel()
    return connections


async def play_all(workdir: Path) -> Runs:
    """Every game, at once (a stuck one is an error, not a hang)."""
    with trio.fail_after(GAMES_TIMEOUT_S):
        return await _play_all(workdir)


async def _play_all(workdir: Path) -> Runs:
    small = {"players": 3, "max_pip": 6}
    two = preset("standard", players=2, max_pip=6)
    cues = (
        "string-index",
        "no-choice",
        "out-of-range",
        "bad-index",
        "not-held",
        "stale",
        "unexpected",
    )
    breaker = [a for i, cue in enumerate((*cues, "oversize")) for a in ("--at", f"{i + 1}={cue}")]
    games: dict[str, Callable[[], Awaitable[Any]]] = {
        "session": partial(
            play,
            workdir,
            "session",
            [("alice", GREEDY), ("bob", GREEDY), ("carol", GREEDY)],
            preset("standard", **small),
            SESSION_SEED,
        ),
        "variants": partial(
            play,
            workdir,
            "variants",
            # The random bots are given no NAME=, as `referee play` would name them
            # after their program; both answer ready as "random".
            [
                ("speller", (*EXAMPLE_BOT, "speller", "--spell", "--at", "4=note")),
                ("random_bot", RANDOM),
                ("random_bot", RANDOM),
            ],
            preset(
                "standard",
                branching_doubles=True,
                announce_one_tile=True,
                first_turn="long",
                **small,
            ),
            VARIANTS_SEED,
            unnamed=(1, 2),
        ),
        # Under `default-move` a bot is asked again after each fault; the oversize line
        # comes last, since it forfeits under any policy.
        "faults": partial(
            play,
            workdir,
            "faults",
            [("breaker", (*EXAMPLE_BOT, "breaker", *breaker)), ("greedy", GREEDY)],
            two,
            FAULTS_SEED,
            policy=Policy.DEFAULT_MOVE,
            max_faults=10,
        ),
        # Short clocks: the sleeper times out after 350 ms, not 31 s.
        "refusals": partial(
            play,
            workdir,
            "refusals",
            [
                ("sleeper", (*EXAMPLE_BOT, "sleeper", "--at", "1=silent")),
                ("future", (*EXAMPLE_BOT, "future", "--protocol", "2")),
            ],
            two,
            FAULTS_SEED,
            time=m.TimeControl(move_ms=200, bank_ms=100),
        ),
        "league": partial(league, workdir),
        "tcp": partial(tcp, workdir),
    }
    done: dict[str, Any] = {}

    async def keep(name: str) -> None:
        done[name] = await games[name]()

    async with trio.open_nursery() as nursery:
        for name in games:
            nursery.start_soon(keep, name)
    return Runs(**done)


# ---------------------------------------------------------------- cutting excerpts

Found = Iterator[tuple[dict[str, Any], str]]  # messages, parsed, with their text
Test = Callable[[dict[str, Any]], bool]


def received(*seats: Sequence[Line]) -> Found:
    """The messages bots received, seat after seat."""
    for lines in seats:
        for direction, text in lines:
            if direction == "<":
                yield json.loads(text), text


def sent(*seats: Sequence[Line]) -> Found:
    """The lines bots sent that are JSON objects, seat after seat."""
    for lines in seats:
        for direction, text in lines:
            if direction == ">":
                try:
                    value = json.loads(text)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    yield value, text


def own(seats: Sequence[Sequence[Line]]) -> Found:
    """The messages each seat received about itself (`seat` is the receiver's)."""
    for seat, lines in enumerate(seats):
        for value, text in received(lines):
            if value.get("seat") == seat:
                yield value, text


def others(seats: Sequence[Sequence[Line]]) -> Found:
    """The messages each seat received about another seat."""
    for seat, lines in enumerate(seats):
        for value, text in received(lines):
            if value.get("seat", seat) != seat:
                yield value, text


def first(example: str, found: Found, test: Test) -> str:
    """The text of the first message passing `test`; `ExampleError` names the example."""
    for value, text in found:
        if test(value):
            return text
    raise ExampleError(f"{example}: no such message in its game; choose another seed")


def is_type(kind: str, **fields: Any) -> Test:
    """A test: the message's type, and these fields' values."""
    return lambda v: v.get("type") == kind and all(v.get(k) == x for k, x in fields.items())


def to_bot(text: str) -> Piece:
    """A line the referee sent."""
    return Piece("to_bot", text)


def from_bot(text: str) -> Piece:
    """A line a bot sent."""
    return Piece("from_bot", text)


def one(name: str, found: Found, test: Test) -> Example:
    """An example of the first message the referee sent that passes `test`."""
    return Example(name, (to_bot(first(name, found, test)),))


def session_text(lines: Sequence[Line], replies: int) -> tuple[Piece, ...]:
    """A session from its first line to the referee's first line after reply `replies`."""
    pieces: list[Piece] = []
    seen = 0
    for direction, text in lines:
        pieces.append(to_bot(text) if direction == "<" else from_bot(text))
        if seen == replies and direction == "<":
            return tuple(pieces)
        if direction == ">" and json.loads(text).get("type") == "move":
            seen += 1
    raise ExampleError(f"session: fewer than {replies} replies")


def satisfied(found: Sequence[tuple[dict[str, Any], str]]) -> tuple[str, str]:
    """The first play that opened branches (`branching_doubles`), after the double it
    satisfied."""
    double: dict[int, str] = {}  # train -> its latest double
    for value, text in found:
        if value["type"] != "played":
            continue
        if value["branches"] and value["train"] in double:
            return double[value["train"]], text
        if value["opens_double"]:
            double[value["train"]] = text
    raise ExampleError("played-branches: no branches opened in its game; choose another seed")


def log_line(example: str, lines: Sequence[str], test: Test) -> Piece:
    """The first line of a log passing `test`, its varying values fixed."""
    for text in lines:
        if test(json.loads(text)):
            return Piece("log", normal_log(text))
    raise ExampleError(f"{example}: no such line in its game's log; choose another seed")


# The errors example: one per code, three for the first and two for the second, in the
# table's order.
ERRORS: tuple[str, ...] = ("malformed", "malformed", "malformed", "illegal", "illegal")
ERRORS += ("timeout",)
ERRORS += ("stale", "oversize", "unexpected", "version", "login", "resume", "busy")


def errors(runs: Runs) -> tuple[Piece, ...]:
    """Each code's errors as the bots got them, in `ERRORS`'s order."""
    by_code: dict[str, list[str]] = {}
    for value, text in received(
        runs.faults.seats[0],
        *runs.refusals.seats,
        runs.tcp["refused"],
        runs.tcp["resume-refused"],
        runs.tcp["busy"],
    ):
        if value["type"] == "error":
            by_code.setdefault(value["code"], []).append(text)
    pieces = []
    for i, code in enumerate(ERRORS):
        found = by_code.get(code, [])
        nth = ERRORS[:i].count(code)
        if len(found) <= nth:
            raise ExampleError(f"errors: no {code} error no. {nth + 1} was sent")
        pieces.append(to_bot(found[nth]))
    return tuple(pieces)


def build(runs: Runs) -> list[Example]:
    """Every example."""
    s, v, f = runs.session, runs.variants, runs.faults
    seat0 = s.seats[0]
    turns = [text for value, text in received(seat0) if value["type"] == "turn"]
    moves = [text for value, text in sent(seat0) if value["type"] == "move"]
    if len(moves) < 3:
        raise ExampleError("turn-readable: seat 0 answered fewer than 3 requests")
    players = len(s.seats)  # also the Mexican train's number

    def after_draw(x: dict[str, Any]) -> bool:  # only the drawn tile could be played: pass
        return x["type"] == "turn" and x["view"]["drawn"] is not None and x["legal"] == [PASS]

    def mexican_follow(x: dict[str, Any]) -> bool:  # a double just played on the Mexican train
        return (
            x["type"] == "turn"
            and x["view"]["step"] == "follow"
            and x["view"]["trains"][players]["open_double"] is True
        )

    def drew(reason: str) -> Test:
        return is_type("drew", reason=reason)

    def spelled(action: str) -> Piece:
        plain = is_type("move", action=action)
        return from_bot(
            first("move-spelled", sent(v.seats[0]), lambda x: plain(x) and "note" not in x)
        )

    def decision(test: Test) -> Test:
        return lambda x: x["type"] == "decision" and test(x)

    refused = [text for value, text in received(runs.refusals.seats[1]) if value["type"] != "hello"]
    return [
        Example("session", session_text(seat0, 3), "text"),
        Example("login", (from_bot(first("login", sent(runs.tcp["login"]), is_type("login"))),)),
        Example(
            "resume-login",
            (from_bot(first("resume-login", sent(runs.tcp["resume"]), is_type("login"))),),
        ),
        Example(
            "resumed",
            (to_bot(first("resumed", received(runs.tcp["resume"]), is_type("resumed"))),),
        ),
        one("hello", received(seat0), is_type("hello")),
        Example("ready", (from_bot(first("ready", sent(seat0), is_type("ready"))),)),
        Example(
            "ready-name",
            (
                from_bot(first("ready-name", sent(v.seats[2]), is_type("ready"))),
                to_bot(first("ready-name", received(v.seats[2]), is_type("game_start"))),
            ),
            "text",
        ),
        Example("refused-version", tuple(to_bot(text) for text in refused)),
        one("game-start", received(seat0), is_type("game_start")),
        one("round-start", received(seat0), is_type("round_start")),
        one(
            "round-start-engine-draws",
            received(*s.seats),
            lambda x: x["type"] == "round_start" and bool(x["engine_draws"]),
        ),
        one("played", received(seat0), is_type("played")),
        Example("played-branches", tuple(map(to_bot, satisfied(list(received(*v.seats)))))),
        one(
            "played-announce",
            received(*v.seats),
            is_type("played", announce=True, opens_double=False),
        ),
        Example(
            "drew",
            (
                to_bot(first("drew", own(s.seats), drew("turn"))),
                to_bot(first("drew", others(s.seats), drew("turn"))),
                to_bot(first("drew", own(v.seats), drew("penalty"))),
                to_bot(first("drew", others(v.seats), drew("penalty"))),
            ),
        ),
        one("passed", received(*s.seats), is_type("passed")),
        Example(
            "marker",
            (
                to_bot(first("marker", received(*s.seats), is_type("marker", up=True))),
                to_bot(first("marker", received(*s.seats), is_type("marker", up=False))),
            ),
        ),
        one("round-end", received(seat0), is_type("round_end")),
        one("game-end", received(seat0), is_type("game_end")),
        one("ping", received(*runs.league), is_type("ping")),
        Example("pong", (from_bot(first("pong", sent(*runs.league), is_type("pong"))),)),
        Example(
            "bye",
            (
                to_bot(first("bye", received(seat0), is_type("bye"))),
                to_bot(first("bye", received(runs.refusals.seats[0]), is_type("bye"))),
            ),
        ),
        one("error", received(f.seats[0]), is_type("error", code="illegal")),
        Example("turn-readable", (to_bot(readable(turns[2])),)),
        Example(
            "turn-more",
            (
                to_bot(first("turn-more", received(*s.seats), after_draw)),
                to_bot(first("turn-more", received(*s.seats), mexican_follow)),
            ),
        ),
        Example("move-index", (from_bot(moves[2]),)),
        Example("move-spelled", tuple(spelled(a) for a in ("play", "draw", "pass", "end"))),
        Example(
            "move-note",
            (
                from_bot(
                    first(
                        "move-note", sent(v.seats[0]), lambda x: x["type"] == "move" and "note" in x
                    )
                ),
            ),
        ),
        Example("errors", errors(runs)),
        Example("log-header", (Piece("log", normal_log(s.log[0])),)),
        Example(
            "log-decision",
            (
                log_line("log-decision", s.log, decision(lambda x: x["move"]["action"] == "play")),
                log_line("log-decision", s.log, decision(lambda x: "drew" in x)),
                log_line("log-decision", f.log, decision(lambda x: "faults" in x)),
                log_line("log-decision", v.log, decision(lambda x: "note" in x)),
            ),
        ),
        Example(
            "log-after", (log_line("log-after", s.seat_log, decision(lambda x: "after" in x)),)
        ),
        Example(
            "log-round-start", (log_line("log-round-start", s.seat_log, is_type("round_start")),)
        ),
        Example("log-round-end", (log_line("log-round-end", s.log, is_type("round_end")),)),
        Example("log-footer", (log_line("log-footer", s.log, is_type("footer")),)),
    ]


# ---------------------------------------------------------------- checking and writing

# An example may be indented (inside a list item): its block and end marker are too.
MARKER = re.compile(
    r"^(?P<indent> *)<!-- example: (?P<name>[a-z0-9-]+) -->\n"
    r"(?P<body>.*?)^(?P=indent)<!-- /example -->",
    re.DOTALL | re.MULTILINE,
)
FENCE = re.compile(r"```(?P<lang>\w+)\n(?P<text>.*?)\n```\n?", re.DOTALL)
INLINE = re.compile(r'`(\{"type":[^`]*\})`')
FROM_BOT = {t.__struct_config__.tag for t in m.FROM_BOT_TYPES}
_log_decoder = msgspec.json.Decoder(AnyLine)


def decode(piece: Piece) -> None:
    """Decode a piece with the protocol's (or the log's) own types; `ExampleError` if
    it is not a valid message (or log line)."""
    try:
        if piece.kind == "to_bot":
            decode_to_bot(piece.text)
        elif piece.kind == "from_bot":
            decode_from_bot(piece.text)
        else:
            _log_decoder.decode(piece.text)
    except (ProtocolError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ExampleError(f"not a valid {piece.kind.replace('_', ' ')} line: {exc}") from None


def generate() -> list[Example]:
    """Play every game and cut every example from them; each piece is checked to decode."""
    with tempfile.TemporaryDirectory(prefix="spec-examples-") as tmp:
        try:
            runs = trio.run(play_all, Path(tmp))
        except trio.TooSlowError:
            raise ExampleError(f"the games took over {GAMES_TIMEOUT_S} s") from None
    examples = build(runs)
    for example in examples:
        for piece in example.pieces:
            try:
                decode(piece)
            except ExampleError as exc:
                raise ExampleError(f"{example.name}: {exc}") from None
    return examples


def body(example: Example, indent: str) -> str:
    """What goes between an example's markers, indented like them."""
    return "".join(f"{indent}{line}\n" if line else "\n" for line in example.render().split("\n"))


def rewrite(text: str, examples: dict[str, Example], path: str) -> str:
    """`text` with every example between its markers replaced by its current form."""

    def one(found: re.Match[str]) -> str:
        name, indent = found["name"], found["indent"]
        if name not in examples:
            raise ExampleError(f"{path}: no example is called {name!r}")
        block = body(examples[name], indent)
        return f"{indent}<!-- example: {name} -->\n{block}{indent}<!-- /example -->"

    return MARKER.sub(one, text)


def drift(examples: Sequence[Example]) -> tuple[dict[Path, str], list[str]]:
    """The documents as they should read, and the names of the examples that differ
    from them now (or are missing from them)."""
    by_name = {e.name: e for e in examples}
    fresh: dict[Path, str] = {}
    differ: list[str] = []
    placed: set[str] = set()
    for doc in DOCUMENTS:
        path = ROOT / doc
        text = path.read_text(encoding="utf-8")
        for found in MARKER.finditer(text):
            name = found["name"]
            if name in placed:
                raise ExampleError(f"{doc}: example {name!r} is placed twice")
            placed.add(name)
            if name in by_name and found["body"] != body(by_name[name], found["indent"]):
                differ.append(name)
        fresh[path] = rewrite(text, by_name, doc)
    differ += [f"{name} (not placed in any document)" for name in by_name if name not in placed]
    return fresh, differ


def document_pieces(doc: str, text: str | None = None) -> Iterator[tuple[str, Piece]]:
    """Every message and log line document `doc` shows between markers, and every
    inline `{"type":...}` of its text, with where it is: what the test decodes."""
    if text is None:
        text = (ROOT / doc).read_text(encoding="utf-8")
    for found in MARKER.finditer(text):
        where = f"{doc}: example {found['name']}"
        indent = found["indent"]
        lines = found["body"].split("\n")
        fence = FENCE.fullmatch("\n".join(line.removeprefix(indent) for line in lines))
        if fence is None:
            raise ExampleError(f"{where}: not one fenced block")
        body = fence["text"]
        if fence["lang"] == "text":
            for line in body.splitlines():
                kind: Kind = "to_bot" if line.startswith("< ") else "from_bot"
                yield where, Piece(kind, line[2:])
            continue
        decoder = json.JSONDecoder()
        at = 0
        while at < len(body):
            value, end = decoder.raw_decode(body, at)
            yield where, Piece(kind_of(doc, value), body[at:end])
            at = end
            while at < len(body) and body[at].isspace():
                at += 1
    for found in INLINE.finditer(text):
        line = text.count("\n", 0, found.start()) + 1
        yield f"{doc}:{line}", Piece(kind_of(doc, json.loads(found[1])), found[1])


def kind_of(doc: str, value: Any) -> Kind:
    """How a JSON example of `doc` is decoded: a log line, or a message by its direction."""
    if doc.endswith("LOGS.md"):
        return "log"
    return "from_bot" if isinstance(value, dict) and value.get("type") in FROM_BOT else "to_bot"


def main(argv: Sequence[str]) -> int:
    """Rewrite the examples, or with `--check` report those that drifted."""
    check = "--check" in argv
    logging.basicConfig(level=logging.ERROR)  # the refused login is meant to be refused
    try:
        examples = generate()
        fresh, differ = drift(examples)
    except ExampleError as exc:
        print(f"spec/examples.py: {exc}", file=sys.stderr)
        return 2
    if check:
        if differ:
            print(
                f"examples not what the referee sends now: {', '.join(differ)}; "
                f"refresh them with `{REFRESH}`",
                file=sys.stderr,
            )
            return 1
        print(f"{len(examples)} examples are what the referee sends")
        return 0
    missing = [name for name in differ if "not placed" in name]
    if missing:
        print(f"spec/examples.py: place these examples: {', '.join(missing)}", file=sys.stderr)
        return 2
    for path, text in fresh.items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    print(f"{len(examples)} examples written; changed: {', '.join(differ) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
