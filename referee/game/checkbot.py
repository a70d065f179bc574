"""`referee check-bot`: put one bot through a battery of protocol and rules checks.

The bot runs as a real process. It is greeted with messages carrying fields it
cannot know, pinged, sent a message type from the future, then plays a series
of games on the one connection: every preset and variant, every seat count,
in every seat, against in-process random players (single rounds and one whole
game a preset, or with `--full` every game whole: see `battery`). Any fault fails the check it
happened in; a stale reply is no fault (the protocol ignores it), and the check
only counts them. Last, `bye` must end the process cleanly.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from protocol import RemoteProtocolError
from protocol import messages as m

from .. import __version__
from ..bots.connection import BotGoneError, BotStalledError
from ..bots.process import BotProcess, BotSpec, describe_exit, start_bot
from ..bots.session import StartupError, goodbye, handshake, ping
from ..rules import Move, Rules, RulesError, State, legal_moves, preset
from ..text import quoted
from .match import Decision, Game, Recorder, Seat
from .wire import rules_info

FUTURE_FIELD = b'"x_future_field":{"nested":[1,"two",null,{"deep":true}]},'


def add_unknown_field(line: bytes) -> bytes:
    """The same message with one field no bot can know, before the `type` key."""
    return b"{" + FUTURE_FIELD + line[1:]


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        """`PASS name  detail` as printed."""
        return f"{'PASS' if self.ok else 'FAIL'}  {self.name:<22} {self.detail}"


@dataclass(frozen=True)
class Battery:
    """Which games to play: (label, rules) pairs, each label one check."""

    groups: tuple[tuple[str, tuple[Rules, ...]], ...]


def battery(names: Sequence[str] | None = None, *, full_games: bool = False) -> Battery:
    """Every seat count of each preset and, without `names`, the variants.

    By default each of those is a single round (of the top engine), and each preset
    adds one whole game at 4 players. With `full_games` every one of them is a whole
    game instead: every round, from the top engine down to 0-0 (13 rounds on
    double-12)."""
    rounds = "descending" if full_games else "single"
    chosen = list(names) if names else ["standard", "masters", "celko", "private-trains"]
    groups: list[tuple[str, tuple[Rules, ...]]] = []
    for name in chosen:
        rules: list[Rules] = []
        for players in range(2, 9):
            try:
                rules.append(preset(name, players=players, rounds=rounds))
            except RulesError:
                continue  # a seat count this preset cannot deal
        if not full_games:
            rules.append(preset(name, players=4, rounds="descending"))
        groups.append((name, tuple(rules)))
    if not names:
        variants = (
            preset("standard+teams", players=4, rounds=rounds),
            preset("standard+teams", players=6, rounds=rounds),
            preset("standard+branching-doubles", rounds=rounds),
            preset("standard+swan-drive", rounds=rounds),
            preset("standard+fast-first-turn", rounds=rounds),
            preset("standard+delayed-first-turn", rounds=rounds),
            preset("standard+announce", rounds=rounds),
        )
        groups.append(("variants", variants))
    return Battery(tuple(groups))


def _random_player(seed: int) -> Callable[[State], Move]:
    rng = random.Random(seed)

    def choose(state: State) -> Move:
        return rng.choice(legal_moves(state))

    return choose


async def check_bot(
    spec: BotSpec,
    *,
    plan: Battery,
    time: m.TimeControl,
    stderr_path: Path | None = None,
    report: Callable[[Check], None] = lambda check: None,
) -> list[Check]:
    """Run the battery against the bot `spec`; every check, in order."""
    checks: list[Check] = []

    def add(name: str, ok: bool, detail: str) -> bool:
        check = Check(name, ok, detail)
        checks.append(check)
        report(check)
        return ok

    try:
        bot = await start_bot(spec, stderr_path)
    except OSError as exc:
        add("start", False, f"cannot start {spec.command}: {exc.strerror or exc}")
        return checks
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bot.drain_stderr)
        nursery.start_soon(bot.connection.writer)
        nursery.start_soon(bot.watch)
        try:
            await _battery(bot, plan, time, add)
        finally:
            await bot.stop()
            nursery.cancel_scope.cancel()
    return checks


async def _battery(
    bot: BotProcess, plan: Battery, time: m.TimeControl, add: Callable[[str, bool, str], bool]
) -> None:
    conn = bot.connection
    first = plan.groups[0][1][0]
    hello = m.Hello(
        referee=f"mexican-train-referee {__version__}",
        players=first.players,
        rules=rules_info(first),
        time=time,
    )
    conn.mangle = add_unknown_field  # every message carries a field from the future
    try:
        ready, took = await handshake(conn, hello, time.startup_ms / 1000)
    except StartupError as exc:
        add("handshake", False, f"{exc}{await bot.exit_note()}")
        return
    add("handshake", True, f"ready in {took:.0f} ms: {quoted(ready.name)} {quoted(ready.version)}")
    add("version", True, f"speaks protocol {ready.protocol}")

    conn.mangle = None
    try:
        conn.send_raw(b'{"type":"x_future_notice","text":"a message type from a later version"}\n')
        rtt = await ping(conn, 4242, max(2.0, time.move_ms / 1000))
    except (BotGoneError, BotStalledError, RemoteProtocolError, trio.TooSlowError) as exc:
        add("ping", False, f"no pong for ping 4242 after an unknown message type: {exc}")
        return
    add("ping", True, f"pong in {rtt:.1f} ms, after a message of an unknown type")

    games = 0
    for label, rules_list in plan.groups:
        decisions = 0
        rounds = 0
        stale = 0
        worst = 0.0
        for number, rules in enumerate(rules_list):
            seat = (games + number) % rules.players
            seats = [
                Seat(name=f"random{s}", local=_random_player(games * 31 + s))
                for s in range(rules.players)
            ]
            latencies: list[float] = []
            seats[seat] = Seat(name=bot.spec.name, connection=conn, diagnose=bot.diagnose)
            conn.mangle = add_unknown_field if games == 0 else None
            game = Game(
                seats,
                rules,
                seed=1000 + games,
                game_id=f"check-{games + 1}",
                time=time,
                recorder=_Latency(seat, latencies),
            )
            result = await game.play()
            games += 1
            faults = result.faults[seat]
            if faults:
                where = f"game {games} ({_describe(rules)}, seat {seat} of {rules.players})"
                add(label, False, f"{where}: {faults[0].kind.value}: {faults[0].detail}")
                return
            decisions += len(latencies)
            rounds += len(result.results)
            stale += len(result.notices[seat])
            worst = max([worst, *latencies])
        whole = sum(1 for r in rules_list if len(r.engines) > 1)
        ignored = f", {stale} stale replies ignored" if stale else ""
        add(
            label,
            True,
            f"{len(rules_list)} games ({whole} whole), {rounds} rounds, {decisions} decisions, "
            f"slowest {worst:.1f} ms{ignored}",
        )
    add("several games", games > 1, f"{games} games on one connection")
    add(
        "unknown fields",
        True,
        "hello and every message of game 1 carried an unknown field; "
        "an unknown message type came before the ping",
    )

    await goodbye(conn)
    with trio.move_on_after(2.0):
        await bot.wait()
    code = bot.returncode
    detail = (
        f"{describe_exit(code)} after bye" if code is not None else "still running 2 s after bye"
    )
    add("bye", code == 0, detail)


class _Latency(Recorder):
    """Collects the bot's decision latencies for the report."""

    def __init__(self, seat: int, out: list[float]) -> None:
        self.seat = seat
        self.out = out

    def decision(self, record: Decision, state: State) -> None:
        if record.seat == self.seat and record.latency_ms is not None:
            self.out.append(record.latency_ms)


def _describe(rules: Rules) -> str:
    bits = [f"double-{rules.max_pip}", f"{rules.players} players"]
    for flag in ("teams", "branching_doubles", "swan_drive", "announce_one_tile"):
        if getattr(rules, flag):
            bits.append(flag.replace("_", "-"))
    if rules.first_turn.value != "single":
        bits.append(f"first turn {rules.first_turn.value}")
    return ", ".join(bits)


def stderr_file() -> Path:
    """A temporary file for the bot's stderr."""
    with tempfile.NamedTemporaryFile(prefix="check-bot-", suffix=".stderr", delete=False) as f:
        return Path(f.name)
