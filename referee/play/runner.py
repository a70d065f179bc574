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

from .. import __version__
from ..bots.faults import Fault, FaultKind, Policy
from ..bots.process import BotProcess, BotSpec, start_bot
from ..bots.sandbox import Hidden
from ..bots.session import StartupError, goodbye, handshake
from ..game import lag
from ..game.match import Fanout, Game, GameResult, Recorder, Seat, new_bot_seed_key
from ..game.wire import rules_info
from ..logs.gamelog import LogBot, LogWriter, log_stem, make_header
from ..rules import Rules
from ..text import NAME_MAX, file_stem, name_problem

log = logging.getLogger("referee.runner")  # its name before the move: serve prints it


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
    """Bot names, with `#2`, `#3` added where two bots share one (`distinct`)."""
    return distinct([spec.name for spec in specs])


def distinct(names: Sequence[str]) -> list[str]:
    """`names` with `#2`, `#3` added to the second, third, ... of one name: the first
    number that makes a name no other seat has (a bot may be called `a#2` itself),
    the name cut to leave room for it within `NAME_MAX`."""
    taken = set(names)
    seen: dict[str, int] = {}
    out = []
    for name in names:
        if name not in seen:
            seen[name] = 1
            out.append(name)
            continue
        while True:
            seen[name] += 1
            suffix = f"#{seen[name]}"
            candidate = name[: NAME_MAX - len(suffix)] + suffix
            if candidate not in taken:
                break
        taken.add(candidate)
        out.append(candidate)
    return out


def seat_names(specs: Sequence[BotSpec], ready: Sequence[str | None]) -> list[str]:
    """The seats' names once the bots are ready: a bot named after its program (no
    NAME= given: `BotSpec.named` false) takes the name it gave in its ready message,
    `ready[seat]`, when that is a bot's name (`name_problem`); every other seat, and
    one whose bot gave none or an unusable one, keeps its own. Then made `distinct`."""
    names = []
    for spec, said in zip(specs, ready, strict=True):
        usable = said is not None and name_problem(said) is None
        names.append(said if usable and not spec.named and said is not None else spec.name)
    return distinct(names)


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
    seat's clock where it is not `time`. The seats' names are `seat_names`: a bot
    named after its program goes by its ready name; the log is begun with them, once
    every bot has answered (or failed) its handshake."""
    lag.ensure_running()  # the game's clocks leave out the referee's own stalls
    places = game_places(log_path, stderr_dir)
    specs = [replace(s, hidden=(*s.hidden, *places)) if s.sandbox == "bwrap" else s for s in specs]
    # The seat number tells two bots of one name apart; the name is made a file name.
    # The file is named before the bot starts: after the name given or its program's,
    # never the ready name a bot named after its program takes (`seat_names`).
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
    writers: list[LogWriter] = []
    procs: list[BotProcess | None] = [None] * len(specs)
    ready: list[str | None] = [None] * len(specs)
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
                await _handshake_all(procs, hellos, early, ready)
                # The log is begun once the seats have their names: it names them.
                names = seat_names(specs, ready)
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
                writers.append(LogWriter(log_path, header))
                if seat_logs:
                    for i in range(len(specs)):
                        writers.append(LogWriter(seat_log_path(log_path, i), header, seat=i))
                seats = [Seat(name=name) for name in names]
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
    procs: list[BotProcess | None],
    hellos: list[m.Hello],
    early: list[Fault],
    names: list[str | None],
) -> None:
    """Every started bot's handshake at once; `names` gets each ready bot's own name."""

    async def one(index: int, proc: BotProcess) -> None:
        hello = hellos[index]
        try:
            ready, _ = await handshake(proc.connection, hello, hello.time.startup_ms / 1000)
            log.info("seat %d: %s %s ready", index, ready.name, ready.version)
            names[index] = ready.name
        except StartupError as exc:
            detail = f"{exc}{await proc.exit_note()}"
            early.append(Fault(index, FaultKind.STARTUP_FAILURE, detail))
            procs[index] = None
            await proc.stop()

    async with trio.open_nursery() as nursery:
        for i, proc in enumerate(procs):
            if proc is not None:
                nursery.start_soon(one, i, proc)
