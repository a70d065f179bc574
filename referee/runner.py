"""Run one game between bot processes: start, handshake, play, log, end every process.

Every bot process of a game lives in the game's nursery and is ended in a
shielded `finally`, so an error, a cancellation or Ctrl-C still ends them all;
the log then has no footer and reads as incomplete.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import trio

from protocol import messages as m

from . import __version__, lag
from .faults import Fault, FaultKind, Policy
from .gamelog import LogBot, LogWriter, log_stem, make_header
from .match import Fanout, Game, GameResult, Recorder, Seat, new_bot_seed_key
from .process import BotProcess, BotSpec, start_bot
from .rules import Rules
from .sandbox import Hidden
from .session import StartupError, goodbye, handshake
from .text import file_stem
from .wire import rules_info

log = logging.getLogger(__name__)


@dataclass
class GameReport:
    """What `referee play` reports: the result, the bots' names, where the log is."""

    result: GameResult
    names: list[str]
    log_path: Path
    stderr_paths: list[Path | None]


def seat_log_path(log_path: Path, seat: int) -> Path:
    """Where the log redacted for `seat` goes: `game-5.jsonl` -> `game-5.seat2.jsonl`,
    `game-5.jsonl.gz` -> `game-5.seat2.jsonl.gz`."""
    stem = log_stem(log_path)
    return log_path.with_name(f"{stem}.seat{seat}{log_path.name[len(stem) :]}")


def game_places(log_path: Path, stderr_dir: Path | None) -> tuple[Hidden, ...]:
    """What no sandboxed bot of a game may see: the log folder (the full log, with every
    hand and the seed, and the seat logs) and the bots' stderr folder."""
    places = [
        Hidden(
            str(log_path.parent),
            "the game log folder",
            "write the log outside the bots' folders (--log-dir or --log)",
        )
    ]
    if stderr_dir is not None and stderr_dir.resolve() != log_path.parent.resolve():
        places.append(
            Hidden(
                str(stderr_dir),
                "the bots' stderr folder",
                "keep the bots' stderr outside their folders (--stderr-dir)",
            )
        )
    return tuple(places)


def unique_names(specs: Sequence[BotSpec]) -> list[str]:
    """Bot names, with `#2`, `#3` added where two bots share one."""
    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        count = seen.get(spec.name, 0) + 1
        seen[spec.name] = count
        out.append(spec.name if count == 1 else f"{spec.name}#{count}")
    return out


async def run_game(
    specs: Sequence[BotSpec],
    rules: Rules,
    seed: int,
    *,
    game_id: str,
    time: m.TimeControl,
    log_path: Path,
    policy: Policy = Policy.FORFEIT,
    max_faults: int = 3,
    stderr_dir: Path | None = None,
    recorder: Recorder | None = None,
    on_start: Callable[[list[str]], None] | None = None,
    output_cap: int | None = None,
    seat_logs: bool = False,
    bot_seed_key: bytes | None = None,
    seat_times: Sequence[m.TimeControl] | None = None,
) -> GameReport:
    """Play one game between freshly started bot processes and write its log.

    Sandboxed bots get the log and stderr folders hidden (`game_places`).
    `seat_times` gives each seat its own clock (time odds); the log names a
    seat's clock where it is not `time`."""
    lag.ensure_running()  # the game's clocks leave out the referee's own stalls
    places = game_places(log_path, stderr_dir)
    specs = [replace(s, hidden=(*s.hidden, *places)) if s.sandbox == "bwrap" else s for s in specs]
    names = unique_names(specs)
    # The seat number tells two bots of one name apart; the name is made a file name.
    stderr_paths: list[Path | None] = [
        (stderr_dir / f"{log_stem(log_path)}-seat{i}-{file_stem(spec.name)}.stderr")
        if stderr_dir
        else None
        for i, spec in enumerate(specs)
    ]
    key = bot_seed_key if bot_seed_key is not None else new_bot_seed_key()
    times = list(seat_times) if seat_times is not None else [time] * len(specs)
    if len(times) != len(specs):
        raise ValueError(f"{len(times)} clocks for {len(specs)} bots")
    header = make_header(
        game=game_id,
        rules=rules,
        seed=seed,
        bots=[
            LogBot(
                seat=i,
                name=names[i],
                command=s.command,
                time=times[i] if times[i] != time else None,
            )
            for i, s in enumerate(specs)
        ],
        time=time,
        policy=policy.value,
        max_faults=max_faults,
        bot_seed_key=key,
    )
    writer = LogWriter(log_path, header)
    writers = [writer]
    if seat_logs:
        for i in range(len(specs)):
            writers.append(LogWriter(seat_log_path(log_path, i), header, seat=i))
    procs: list[BotProcess | None] = [None] * len(specs)
    seats = [Seat(name=names[i]) for i in range(len(specs))]
    early: list[Fault] = []
    try:
        async with trio.open_nursery() as nursery:
            try:
                await _start_all(specs, stderr_paths, procs, early, nursery)
                hellos = [
                    m.Hello(
                        referee=f"mexican-train-referee {__version__}",
                        players=rules.players,
                        rules=rules_info(rules),
                        time=clock,
                    )
                    for clock in times
                ]
                await _handshake_all(procs, hellos, early)
                for i, proc in enumerate(procs):
                    if proc is not None:
                        seats[i].connection = proc.connection
                        seats[i].diagnose = proc.diagnose
                if on_start is not None:
                    on_start(names)

                def forfeit(index: int) -> None:
                    proc = procs[index]
                    if proc is not None:
                        nursery.start_soon(proc.stop)

                game = Game(
                    seats,
                    rules,
                    seed,
                    game_id=game_id,
                    time=time,
                    policy=policy,
                    max_faults=max_faults,
                    recorder=Fanout(*writers, *([recorder] if recorder else [])),
                    on_forfeit=forfeit,
                    output_cap=output_cap,
                    bot_seed_key=key,
                    seat_times=times,
                )
                for fault in early:
                    seats[fault.seat].faults.append(fault)
                    seats[fault.seat].forfeited = True
                result = await game.play()
                for proc, seat in zip(procs, seats, strict=True):
                    if proc is not None and seat.live:
                        await goodbye(proc.connection)
            finally:
                with trio.CancelScope(shield=True):
                    async with trio.open_nursery() as stoppers:
                        for proc in procs:
                            if proc is not None:
                                stoppers.start_soon(proc.stop)
                nursery.cancel_scope.cancel()
        for w in writers:
            await w.finish_async(result)  # the sync and compression off the loop
        for path in stderr_paths:
            if path is not None and path.exists() and path.stat().st_size == 0:
                path.unlink()  # a bot that wrote nothing to stderr leaves no file
    finally:
        for w in writers:
            w.close()
    return GameReport(result=result, names=names, log_path=log_path, stderr_paths=stderr_paths)


async def _start_all(
    specs: Sequence[BotSpec],
    stderr_paths: list[Path | None],
    procs: list[BotProcess | None],
    early: list[Fault],
    nursery: trio.Nursery,
) -> None:
    for i, spec in enumerate(specs):
        try:
            proc = await start_bot(spec, stderr_paths[i])
        except OSError as exc:
            early.append(Fault(i, FaultKind.STARTUP_FAILURE, f"cannot start {spec.command}: {exc}"))
            continue
        procs[i] = proc
        nursery.start_soon(proc.drain_stderr)
        nursery.start_soon(proc.connection.writer)
        nursery.start_soon(proc.watch)


async def _handshake_all(
    procs: list[BotProcess | None], hellos: list[m.Hello], early: list[Fault]
) -> None:
    async def one(index: int, proc: BotProcess) -> None:
        hello = hellos[index]
        try:
            ready, _ = await handshake(proc.connection, hello, hello.time.startup_ms / 1000)
            log.info("seat %d: %s %s ready", index, ready.name, ready.version)
        except StartupError as exc:
            detail = f"{exc}{await proc.exit_note()}"
            early.append(Fault(index, FaultKind.STARTUP_FAILURE, detail))
            procs[index] = None
            await proc.stop()

    async with trio.open_nursery() as nursery:
        for i, proc in enumerate(procs):
            if proc is not None:
                nursery.start_soon(one, i, proc)
