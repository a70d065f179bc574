"""ARENA.toml: the arena's terms (`[arena]`), its rules, clocks and server limits (as a
league file's `[rules]`, `[time]`, `[server]`), and the bots it starts with.

The arena's own keys are `ArenaTable`; the rest is read by the league's checks, so a
key means here what it means in a league file. Every game the arena plays is played
through a `LeagueConfig` made for its table size (`table_config`): the league's code
runs the game, its clocks, its sandbox and its log.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from ..bots.faults import Policy
from ..league.config import DEAL_KEY_MIN_HEX, ConfigError, LeagueConfig, hex_key, parse_config
from ..league.schema import explain
from ..text import NAME_MAX, NAME_RULE, name_problem, quoted

Seats = Annotated[int, Meta(ge=2, le=8)]
Rate = Annotated[float, Meta(ge=0.0, le=1.0)]
Count = Annotated[int, Meta(ge=0)]
Positive = Annotated[int, Meta(ge=1)]


class ArenaTable(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """[arena]: the table sizes, the deals, what a fault costs and the caps."""

    name: str | UnsetType = UNSET  # default: the file's stem
    tables: Seats | list[Seats] = 2  # one size, or a list: each table's size drawn in turn
    duplicate: bool = True  # process bots play each deal under every rotation of the seats
    live: Literal["after-deal", "public"] = "after-deal"  # what `arena run --live` shows
    out: str | UnsetType = UNSET  # default "NAME-out" beside the file
    policy: Policy = Policy.FORFEIT
    max_faults: Positive = 3
    max_fault_rate: Rate = 0.25  # over a version's last `fault_window` games: suspended
    fault_window: Positive = 20
    provisional_sigma: Annotated[float, Meta(gt=0)] = 3.0  # provisional until σ falls under
    newcomer_games: Count = 12  # a new version's first games, played one after another
    pair_cap_per_hour: Count = 0  # games per pair of versions per hour; 0: no cap
    max_active_per_author: Positive = 3  # versions of one author's entries playing at once
    uploads_per_day: Positive = 10  # adds and updates per author in any 24 hours
    validate: bool = True  # the check-bot battery and a validation game for each version
    keep_replays: Count = 0  # the newest N games keep their logs; 0: all (results are kept)
    sandbox: Literal["auto", "bwrap", "none"] = "auto"
    deal_key: str | UnsetType = UNSET  # pins the deals (hex); default: a secret made once
    bot_seed_key: str | UnsetType = UNSET  # pins the bots' own seeds (hex)


class ArenaFile(msgspec.Struct, kw_only=True, frozen=True):
    arena: ArenaTable = msgspec.field(default_factory=ArenaTable)


@dataclass(frozen=True)
class ArenaConfig:
    """An arena, checked: its terms and the raw tables the league's checks read."""

    name: str
    path: Path
    out: Path
    arena: ArenaTable
    rules: dict[str, Any]
    time: dict[str, Any]
    server: dict[str, Any]
    bots: tuple[dict[str, Any], ...]  # [[bot]] tables, each with its `author`
    base: Path  # where the file's relative paths start
    deal_key: bytes | None = None  # arena.deal_key, checked
    bot_seed_key: bytes | None = None  # arena.bot_seed_key, checked

    @property
    def sizes(self) -> tuple[int, ...]:
        """The table sizes, in the order new tables take them."""
        t = self.arena.tables
        return (t,) if isinstance(t, int) else tuple(t)

    def terms(self) -> str:
        """A digest of what decides the games (rules, clocks, sizes, policy): a ledger
        made under other terms is refused, so no game counts under two sets of rules."""
        data = {
            "rules": self.rules,
            "time": self.time,
            "tables": list(self.sizes),
            "duplicate": self.arena.duplicate,
            "policy": [self.arena.policy.value, self.arena.max_faults],
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def league_data(
        self, table: int, bots: list[dict[str, Any]], name: str | None = None
    ) -> dict[str, Any]:
        """A league file's data for one table size and the bots given: what the
        league's checks turn into the `LeagueConfig` a game is played with."""
        league: dict[str, Any] = {
            "name": name or self.name,
            "table": table,
            "duplicate": self.arena.duplicate,
            "out": str(self.out),
            "policy": self.arena.policy.value,
            "max_faults": self.arena.max_faults,
            # Units with a tcp seat are single games (`schedule`): nothing is replayed.
            "accept_tcp_duplicate_risk": True,
        }
        return {
            "league": league,
            "rules": self.rules,
            "time": self.time,
            "server": self.server,
            "bot": bots,
        }

    def probe_config(self, size: int) -> LeagueConfig:
        """The `LeagueConfig` of a table of `size` seats, without a real bot: its rules,
        clocks and server limits."""
        return self.table_config(size, probes(size))

    def check_bot(self, bot: dict[str, Any]) -> None:
        """`ConfigError` for a [[bot]] table (with or without `author`) the league's
        checks refuse, named as bot[0]."""
        size = self.sizes[0]
        self.table_config(size, [without_author(bot), *probes(size, taken=1)])

    def table_config(
        self,
        table: int,
        bots: list[dict[str, Any]],
        *,
        name: str | None = None,
        auto: str | None = None,
        check_folders: bool = True,
    ) -> LeagueConfig:
        """The `LeagueConfig` games at `table` seats are played with, among `bots`
        ([[bot]] tables without `author`; at least two). `auto` fixes what sandbox
        "auto" means (found once, when the arena starts)."""
        data = self.league_data(table, bots, name)
        sandbox = None if self.arena.sandbox == "auto" else self.arena.sandbox
        return parse_config(
            data,
            self.path,
            out=self.out,
            check_programs=False,
            sandbox=sandbox,
            base=self.base,
            auto_sandbox=auto,
            check_folders=check_folders,
        )


_OTHER = {"rules", "time", "server", "bot", "arena", "$schema"}


def parse_arena(data: dict[str, Any], path: Path, *, out: Path | None = None) -> ArenaConfig:
    """Check a parsed ARENA.toml (`tomllib`'s data); `ConfigError` names the first problem."""
    for key in data:
        if key not in _OTHER:
            hint = " (an arena's terms are in [arena])" if key == "league" else ""
            raise ConfigError(f"{key}: not a key of an arena file{hint} (in {path})")
    given = {"arena": data.get("arena", {})}
    try:
        file = msgspec.convert(given, ArenaFile, strict=True)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{explain(exc, given, ArenaFile)} (in {path})") from None
    table = file.arena
    sizes = (table.tables,) if isinstance(table.tables, int) else tuple(table.tables)
    if not sizes:
        raise ConfigError(f"arena.tables: empty; one table size or a list (in {path})")
    if table.live == "public" and table.duplicate:
        raise ConfigError(
            'arena.live: "public" shows a game move by move, and duplicate = true plays '
            "its deal again at the other seatings, whose seats could watch it; use "
            f'live = "after-deal", or duplicate = false (in {path})'
        )
    name = table.name if isinstance(table.name, str) else path.stem
    if (problem := name_problem(name)) is not None:
        raise ConfigError(f"arena.name: {quoted(name)} {problem} (in {path})")
    try:
        deal_key = hex_key(table.deal_key, "arena.deal_key", DEAL_KEY_MIN_HEX)
        bot_seed_key = hex_key(table.bot_seed_key, "arena.bot_seed_key", 0)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (in {path})") from None
    base = path.resolve().parent
    if out is None:
        out = base / (table.out if isinstance(table.out, str) else f"{name}-out")
    bots: list[dict[str, Any]] = []
    seen: set[str] = set()
    raw_bots = data.get("bot", [])
    if not isinstance(raw_bots, list):
        raise ConfigError(f"bot: [[bot]] tables expected (in {path})")
    for i, raw in enumerate(raw_bots):
        if not isinstance(raw, dict):
            raise ConfigError(f"bot[{i}]: a table expected (in {path})")
        bot = dict(raw)
        bot_name = bot.get("name")
        if not isinstance(bot_name, str):
            raise ConfigError(f"bot[{i}].name: missing; {NAME_RULE} (in {path})")
        if (problem := entry_problem(bot_name)) is not None:
            raise ConfigError(f"bot[{i}].name: {quoted(bot_name)} {problem} (in {path})")
        if bot_name in seen:
            raise ConfigError(f"bot[{i}].name: {quoted(bot_name)} is used twice (in {path})")
        seen.add(bot_name)
        author = bot.setdefault("author", bot_name)
        if not isinstance(author, str) or name_problem(author) is not None:
            raise ConfigError(f"bot[{i}].author: {quoted(str(author))} is not a name (in {path})")
        bots.append(bot)
    config = ArenaConfig(
        name=name,
        path=path,
        out=out.resolve(),
        arena=table,
        rules=dict(data.get("rules", {})),
        time=dict(data.get("time", {})),
        server=dict(data.get("server", {})),
        bots=tuple(bots),
        base=base,
        deal_key=deal_key,
        bot_seed_key=bot_seed_key,
    )
    # The league's checks read the rules, the clocks, the server limits and every bot:
    # a bad one is named now, before the arena starts.
    for size in sizes:
        try:
            config.table_config(size, probes(size))
        except ConfigError as exc:
            raise ConfigError(f"{exc} (arena.tables = {size}, in {path})") from None
    for i, bot in enumerate(bots):
        try:
            config.check_bot(bot)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace("bot[0]", f"bot[{i}]")) from None
    return config


def _explain(exc: msgspec.ValidationError) -> str:
    """msgspec's message as `KEY: what is wrong` (`Expected ... - at `$.arena.x``)."""
    text = str(exc)
    what, _, where = text.rpartition(" - at `$.")
    if not what:
        return text
    key = where.rstrip("`")
    return f"{key}: {what[0].lower()}{what[1:]}"


def probes(n: int, *, taken: int = 0) -> list[dict[str, Any]]:
    """Stand-in [[bot]] tables that fill a table to `n` seats when `taken` are real:
    the league's checks want a full table; nothing ever starts them."""
    return [
        {"name": f"probe-{i}", "command": ["true"], "sandbox": "none"}
        for i in range(max(0, n - taken))
    ]


def without_author(bot: dict[str, Any]) -> dict[str, Any]:
    """A [[bot]] table as the league's checks take it: without the arena's `author`."""
    return {k: v for k, v in bot.items() if k != "author"}


ENTRY_MAX = NAME_MAX - 8  # room for a version's @K and a validation copy's #N


def entry_problem(name: str) -> str | None:
    """Why `name` cannot name an arena entry; None when it can. Versions are NAME@K."""
    problem = name_problem(name)
    if problem is not None:
        return problem
    if len(name) > ENTRY_MAX:
        return f"is {len(name)} characters long; at most {ENTRY_MAX} (its versions are NAME@K)"
    if any(c in name for c in "/\\ @#"):
        return "must be without spaces, slashes, @ or #"
    return None
