"""Validation: a new version plays before it is ranked.

Whatever `validate` says, a version to be sandboxed is first checked as a league checks
its bots before the first game (`sandbox_problem`): one that fails is rejected.

First the conformance battery of `referee check-bot` (the handshake, a ping after an
unknown message, fields from the future, a single round in every seat at every table
size of the arena, `bye`), then a validation game of the arena's own rules against
copies of itself, as Kaggle's validation episode: every seat a fresh process of the
new version. Any failed check, or any fault in that game, leaves the version out,
with the reason and its stderr kept for `arena list` and its site page. Its games are
never rated; the validation game's log is kept like any other.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import trio

from ..bots.process import BotSpec
from ..game.checkbot import Battery, check_bot
from ..league.config import ConfigError, LeagueConfig, check_sandboxes, hidden_places
from ..league.game import play_scheduled
from ..league.pool import BotPool
from ..league.schedule import Scheduled
from ..text import file_stem
from .config import ArenaConfig, without_author
from .ledger import ArenaLedger, Version

STDERR_TAIL = 2000  # bytes of a rejected version's stderr shown


@dataclass(frozen=True)
class Verdict:
    """How a version's validation went."""

    ok: bool
    reason: str
    stderr: str  # the file its stderr went to, relative to the arena's folder


def copies(version: Version, seats: int) -> list[dict[str, object]]:
    """[[bot]] tables of `seats` copies of a version: NAME@K#1, NAME@K#2, ..."""
    bot = without_author(version.bot)
    return [{**bot, "name": f"{version.name}#{i + 1}"} for i in range(seats)]


def battery_of(config: LeagueConfig, sizes: tuple[int, ...], make: ArenaConfig) -> Battery:
    """A single round in every seat of every table size of the arena, under its rules."""
    rules = []
    for size in sizes:
        table = make.probe_config(size).rules
        rules.extend([dataclasses.replace(table, rounds=type(table.rounds).SINGLE)] * size)
    return Battery((("arena rules", tuple(rules)),))


async def validate(
    arena: ArenaConfig,
    ledger: ArenaLedger,
    version: Version,
    deal_seed: int,
    bot_seed_key: bytes,
    auto_sandbox: str | None,
) -> Verdict:
    """Put `version` through the battery and its validation game."""
    out = arena.out
    stderr_dir = out / "stderr"
    size = arena.sizes[0]
    config = arena.table_config(
        size, copies(version, size), name=f"validation of {version.name}", auto=auto_sandbox
    )
    spec: BotSpec = dataclasses.replace(config.bots[0].spec, name=version.name)
    if spec.sandbox == "bwrap":
        spec = dataclasses.replace(spec, hidden=(*spec.hidden, *hidden_places(config)))
    path = stderr_dir / f"{file_stem(version.name)}-validation.stderr"
    rel = str(path.relative_to(out))
    checks = await check_bot(
        spec, plan=battery_of(config, arena.sizes, arena), time=config.time, stderr_path=path
    )
    failed = next((c for c in checks if not c.ok), None)
    if failed is not None:
        return Verdict(False, f"check-bot: {failed.name}: {failed.detail}", rel)
    unit = await ledger.in_thread(
        ledger.open_unit, "validation", size, [b.name for b in config.bots], 1
    )
    async with trio.open_nursery() as procs:
        pool = BotPool(config, procs, stderr_dir)
        try:
            game = Scheduled(
                index=unit.first,
                unit=unit.id,
                table=0,
                deal=unit.id,
                rotation=0,
                seed=deal_seed,
                seats=unit.seats,
            )
            rec = await play_scheduled(config, game, pool, out / "logs", bot_seed_key)
        finally:
            await pool.close()
            procs.cancel_scope.cancel()
    await ledger.in_thread(ledger.record, unit, 0, rec, None, arena.arena.fault_window)
    if rec.faults:
        fault = rec.faults[0]
        seat_stderr = sorted(stderr_dir.glob(f"{file_stem(rec.seats[fault['seat']])}-*.stderr"))
        where = str(seat_stderr[-1].relative_to(out)) if seat_stderr else rel
        return Verdict(
            False,
            f"validation game {rec.game_id}: seat {fault['seat']}: {fault['kind']}: "
            f"{fault['detail']}",
            where,
        )
    return Verdict(True, f"passed check-bot and validation game {rec.game_id}", rel)


def sandbox_problem(arena: ArenaConfig, version: Version, auto_sandbox: str | None) -> str | None:
    """Why `version` cannot be sandboxed safely, as the league checks its bots before the
    first game (bubblewrap works, and its view holds no FIFO, socket or device node, nor
    a place of the arena's that the sandbox cannot hide): a FIFO in its folder would let
    one process pass a deal's hands to the next. None when it can, or is not sandboxed."""
    config = arena.table_config(arena.sizes[0], copies(version, arena.sizes[0]), auto=auto_sandbox)
    try:
        check_sandboxes(config, hidden_places(config))
    except ConfigError as exc:
        return f"sandbox: {str(exc).removeprefix('bot[0] ')}"
    return None


def stderr_tail(out: Path, rel: str) -> str:
    """The end of a kept stderr file, as text (for `arena list` and the site; shown
    escaped by whoever prints it)."""
    if not rel:
        return ""
    try:
        data = (out / rel).read_bytes()
    except OSError:
        return ""
    return data[-STDERR_TAIL:].decode("utf-8", "replace")
