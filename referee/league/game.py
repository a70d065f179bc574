"""One scheduled game played with pooled bots: its log written, its latencies
measured, its ledger record made. A league's own workers (`run`) and a cluster's
workers (`remote`) both play their games through `play_scheduled`.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import trio

from protocol import messages as m

from ..bots.faults import Fault, FaultKind
from ..bots.session import TcpSession
from ..game.match import Decision, Fanout, Game, GameResult, Recorder, Seat
from ..live.feed import LiveFeed
from ..logs.gamelog import GZ_SUFFIX, LogBot, LogWriter, make_header
from ..proof.results import Signer
from ..rules import State, new_game
from .config import LeagueConfig
from .ledger import Record
from .pool import Bot, BotPool
from .schedule import Scheduled


class _Latencies(Recorder):
    def __init__(self, seats: int) -> None:
        self.by_seat: list[list[float]] = [[] for _ in range(seats)]

    def decision(self, record: Decision, state: State) -> None:
        if record.latency_ms is not None and not record.auto:
            self.by_seat[record.seat].append(record.latency_ms)


async def play_scheduled(
    config: LeagueConfig,
    game: Scheduled,
    pool: BotPool,
    logs: Path,
    bot_seed_key: bytes,
    used: list[Bot] | None = None,
    signer: Signer | None = None,
    live: LiveFeed | None = None,
) -> Record:
    """Play one scheduled game with pooled bots; its ledger record.

    The processes the game had are added to `used`, if given. The log's header names
    the league's commitment (`config.commitment`); when the game ends its footer is
    written first, then each bot is sent its receipt (signed by `signer`'s key, if it
    has one; with no `signer`, a receipt tied to the commitment alone). A `live` feed
    follows the game, and is told when its log is complete (or that it was cut short)."""
    entries = {b.name: b for b in config.bots}
    bots = [entries[name] for name in game.seats]
    # The TCP seats first, all together: waiting for them may take another whole game,
    # and a game that holds nothing while it waits blocks no other game.
    tcp = [i for i, bot in enumerate(bots) if bot.tcp]
    got: dict[int, tuple[Bot | None, str]] = {}
    if tcp:
        got.update(zip(tcp, await pool.acquire_tcp([bots[i] for i in tcp]), strict=True))
    # Then every process seat at once: a game starts in about one bot's start-up time.
    local = [i for i, bot in enumerate(bots) if not bot.tcp]
    if local:
        started = await pool.acquire_all([bots[i] for i in local], game.seed)
        got.update(zip(local, started, strict=True))
    procs: list[Bot | None] = []
    seats: list[Seat] = []
    early: list[Fault] = []
    for i, bot in enumerate(bots):
        proc, why = got[i]
        procs.append(proc)
        if proc is not None and used is not None:
            used.append(proc)
        if proc is None:
            seats.append(Seat(name=bot.name))
            early.append(Fault(i, FaultKind.STARTUP_FAILURE, why))
        else:
            seats.append(
                Seat(
                    name=bot.name,
                    connection=proc.connection,
                    diagnose=proc.diagnose,
                    # A tcp bot may come back mid-game after its connection drops.
                    rejoin=proc if isinstance(proc, TcpSession) else None,
                    reconnect_ms=config.server.reconnect_ms,
                )
            )
    times = [config.bot_time(b.name) for b in bots]  # time odds: a bot's own clocks
    header = make_header(
        game=game.game_id,
        rules=config.rules,
        seed=game.seed,
        bots=[
            LogBot(
                seat=i,
                name=b.name,
                command=b.spec.command,
                time=t if t != config.time else None,
                files=pool.files_of(proc) if proc is not None else None,
            )
            for i, (b, t, proc) in enumerate(zip(bots, times, procs, strict=True))
        ],
        time=config.time,
        policy=config.policy.value,
        max_faults=config.max_faults,
        bot_seed_key=bot_seed_key,
        commitment=config.commitment,
    )
    log_path = logs / f"{game.game_id}{GZ_SUFFIX}"  # written plain, compressed at the end
    writer = LogWriter(log_path, header)
    latencies = _Latencies(len(bots))
    healthy = [p is not None for p in procs]

    def forfeit(index: int) -> None:
        healthy[index] = False

    tied = signer or (Signer(config.commitment) if config.commitment is not None else None)

    def receipts(result: GameResult) -> list[m.Receipt | None]:
        digest = writer.footer(result)  # the log is whole (but for its last flush) now
        if tied is None:
            return []
        scores, ranks = list(result.outcome.scores), list(result.ranks)
        return [
            tied.receipt(game.game_id, i, name, scores, ranks, digest)
            for i, name in enumerate(game.seats)
        ]

    recorder: Recorder = Fanout(writer, latencies)
    if live is not None:
        follow = live.begin(
            game.game_id,
            list(game.seats),
            game.seed,
            config.rules,
            new_game(config.rules, game.seed),
            [t.move_ms for t in times],
        )
        recorder = Fanout(writer, latencies, follow)
    ended = False
    try:
        for fault in early:
            seats[fault.seat].faults.append(fault)
            seats[fault.seat].forfeited = True
        result = await Game(
            seats,
            config.rules,
            game.seed,
            game_id=game.game_id,
            time=config.time,
            seat_times=times,
            policy=config.policy,
            max_faults=config.max_faults,
            output_cap=config.output_cap,
            recorder=recorder,
            on_forfeit=forfeit,
            bot_seed_key=bot_seed_key,
            receipts=receipts,
        ).play()
        await writer.finish_async(result)
        ended = True
    finally:
        writer.close()
        if live is not None and not ended:
            live.abandon(game.game_id)
        with trio.CancelScope(shield=True):
            for bot, proc, ok in zip(bots, procs, healthy, strict=True):
                if proc is not None:
                    await pool.release(bot, proc, ok and proc.returncode is None)
    if live is not None:
        await live.end(game.game_id, log_path, list(game.seats), game.seed)
    faults = [
        {"seat": f.seat, "kind": f.kind.value, "detail": f.detail}
        for seat_faults in result.faults
        for f in seat_faults
    ]
    notices = [
        {"seat": n.seat, "kind": n.kind.value, "detail": n.detail}
        for seat_notices in result.notices
        for n in seat_notices
    ]
    return Record(
        idx=game.index,
        game_id=game.game_id,
        unit=game.unit,
        deal=game.deal,
        rotation=game.rotation,
        seed=game.seed,
        seats=list(game.seats),
        scores=list(result.outcome.scores),
        ranks=list(result.ranks),
        forfeited=list(result.forfeited),
        faults=faults,
        latency_mean=[round(statistics.fmean(v), 3) if v else None for v in latencies.by_seat],
        latency_max=[round(max(v), 3) if v else None for v in latencies.by_seat],
        decisions=result.decisions,
        log_path=str(log_path),
        finished=writer_finished(),
        notices=notices,
        charged_ms=round(result.charged_ms, 3),
        excused_ms=round(result.excused_ms, 3),
        log_sha256=writer.digest or "",
    )


def writer_finished() -> str:
    """The time a game was recorded."""
    from ..logs.gamelog import now_iso

    return now_iso()
