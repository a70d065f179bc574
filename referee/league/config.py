"""LEAGUE.toml: bots, rules, table size, format, deals, clocks, fault policy, output.

Everything is checked before any game starts; a problem is a `ConfigError`
whose message names the key (`bot[2].command`, `league.table`, ...). The keys,
their types and defaults are the Structs of `referee.league.schema`; the file is
decoded into them first, and what types cannot say (a name used twice, a tcp
bot's token, a folder that must exist) is checked here after.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import string
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from protocol.messages import TimeControl

from ..bots.faults import Policy
from ..bots.process import (
    HUMAN,
    BotSpec,
    Limits,
    env_name,
    findable,
    is_person_argv,
    missing_script,
    web_port,
)
from ..bots.sandbox import Hidden, SandboxError, bwrap_problem, check_visible, resolve
from ..bots.tokens import token_problem
from ..rules import Rules, RulesError, preset
from ..text import NAME_RULE, escaped, name_problem, quoted, shown
from .schema import BotTable, LeagueFile, MatchTable, ServerLimits, explain
from .standings import LAG_WARNING
from .starts import START_FAILURES

FORMATS = ("round-robin", "gauntlet", "match")
_TOKEN_KEYS = ("token", "token_env", "token_file", "token_sha256")
_SHA256_HEX = re.compile(r"[0-9a-fA-F]{64}")


class ConfigError(ValueError):
    """A league configuration that cannot run; the message names the key.

    The message is one line whatever the file holds: characters that would break
    it or drive a terminal (a newline in a folder's name, an escape sequence in a
    bot's name) are shown escaped (`referee.text.shown`)."""

    def __init__(self, message: str) -> None:
        super().__init__(shown(message))


@dataclass(frozen=True)
class BotEntry:
    """One bot of the league."""

    spec: BotSpec
    restart: str = "never"  # "always": a fresh process for every game
    transport: str = "stdio"  # "tcp": the bot connects to `referee serve`
    token: str | None = field(default=None, repr=False)  # tcp only; never printed
    token_sha256: str | None = field(default=None, repr=False)  # tcp only: the token's hash
    # What a worker of a cluster must offer to run this bot (Dask worker resources).
    resources: dict[str, float] = field(default_factory=dict, compare=False)
    time: TimeControl | None = None  # its own clocks (time odds); None: the league's [time]

    @property
    def tcp(self) -> bool:
        """The bot joins over TCP instead of being started by the referee."""
        return self.transport == "tcp"

    @property
    def person(self) -> bool:
        """A person's seat: the command `human` or `human --web [PORT]` (`referee.human`,
        docs/human.md)."""
        return is_person_argv(self.spec.argv)

    @property
    def name(self) -> str:
        """The bot's unique name."""
        return self.spec.name

    @property
    def token_digest(self) -> bytes | None:
        """What a tcp bot's login is checked against: the SHA-256 of its token (given
        by `token_sha256`, or of the token itself); None when its token was not read."""
        if self.token_sha256 is not None:
            return bytes.fromhex(self.token_sha256)
        return hashlib.sha256(self.token.encode()).digest() if self.token else None


@dataclass(frozen=True)
class MatchSettings:
    """[match] of a format = "match" league, checked: NEW against BASE, the rest the field."""

    new: str
    base: str
    field: tuple[str, ...]  # the other bots, in file order, by the untested seats
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    max_units: int | None = None  # None: until the test decides
    luck: bool = False


@dataclass(frozen=True)
class LeagueConfig:
    """A whole league, checked."""

    name: str
    path: Path
    bots: tuple[BotEntry, ...]
    rules_preset: str
    rules: Rules
    table: int
    format: str
    deals: int
    duplicate: bool
    seed: int
    out: Path
    policy: Policy
    max_faults: int
    time: TimeControl
    challengers: tuple[str, ...] = ()
    jobs: int | None = None
    bot_seed_key: bytes | None = None  # pins the bots' own seeds across fresh runs
    deal_key: bytes | None = None  # pins the deals across fresh runs; secret until the end
    server: ServerLimits = field(default_factory=ServerLimits)
    bot_root: str | None = None  # the league file's folder as cluster workers see it
    sandbox_override: str | None = None  # --sandbox, for workers that parse the file again
    sandbox_auto: str | None = None  # what "auto" meant here (workers follow the coordinator)
    sandbox_note: str | None = None  # why "auto" runs bots without a sandbox here
    token_files: tuple[Path, ...] = ()  # of tcp bots: hidden from sandboxed bots
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    match: MatchSettings | None = None  # format = "match" only
    output_cap: int | None = None  # bytes a bot may write during one decision
    lag_warning: float = LAG_WARNING  # the excused share of decision time the standings warn at
    start_failures: int = START_FAILURES  # a bot failing its first N starts stops the league
    mix: tuple[str, ...] = ()  # "beacon", "entrants": what is mixed into the deal seeds
    reveal: str = "manual"  # "at-end": the deal key is published once every game is recorded
    live: str = "after-deal"  # what `--live` shows of a game in play: "public", move by move
    allow_updates: bool = False  # bots' files may change after the commitment (docs/proof.md)
    sign: Path | None = None  # the organiser's secret key file: results and receipts signed
    commitment: str | None = None  # the commitment's digest, once the league has made it

    def bot_time(self, name: str) -> TimeControl:
        """The clocks of bot `name`: its own `time` over the league's [time]."""
        own = next((b.time for b in self.bots if b.name == name), None)
        return own or self.time

    def fingerprint(self) -> str:
        """A hash of everything that decides the schedule and the games, for --resume."""
        data = {
            "bots": [(b.name, b.spec.command) for b in self.bots],
            "rules": self.rules.to_dict(),
            "table": self.table,
            "format": self.format,
            "deals": self.deals,
            "duplicate": self.duplicate,
            "seed": self.seed,
            "deals_from": "hmac-sha256(deal_key, deal, table)",  # not the seed alone
            "challengers": list(self.challengers),
            "time": [self.time.move_ms, self.time.bank_ms, self.time.increment_ms],
            "policy": [self.policy.value, self.max_faults],
        }
        if self.output_cap is not None:
            data["output_cap"] = self.output_cap
        odds = {b.name: _clock(b.time) for b in self.bots if b.time is not None}
        if odds:  # left out when there are none, so older ledgers still resume
            data["bot_time"] = odds
        if self.match is not None:  # max_games may grow: a resumed match goes on further
            settings = dataclasses.asdict(self.match)
            del settings["max_units"]
            data["match"] = settings
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def load_config(
    path: Path,
    *,
    out: Path | None = None,
    check_programs: bool = True,
    sandbox: str | None = None,
    persons: bool = False,
) -> LeagueConfig:
    """Read and check LEAGUE.toml; `ConfigError` names the first problem. With
    `persons` (the `league` command), a bot whose command is `human` seats a person."""
    return parse_config(
        read_toml(path), path, out=out, check_programs=check_programs, sandbox=sandbox,
        persons=persons,
    )  # fmt: skip


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's tables; `ConfigError` when it cannot be read or parsed."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def parse_config(
    data: dict[str, Any],
    path: Path,
    *,
    out: Path | None = None,
    check_programs: bool = True,
    sandbox: str | None = None,
    base: Path | None = None,
    tokens: bool = True,
    check_folders: bool = True,
    auto_sandbox: str | None = None,
    persons: bool = False,
) -> LeagueConfig:
    """Check a parsed LEAGUE.toml (see `load_config`).

    A bot's sandbox is `sandbox` (--sandbox) if given, else its `sandbox` key, else
    "auto": bwrap where bubblewrap works here, none (with `sandbox_note` saying why)
    where it does not; `auto_sandbox` fixes what auto means (a worker follows the
    coordinator). Relative paths are taken from `base`, by default the file's folder; a
    cluster worker gives its `bot_root` instead. With `tokens` false the tokens of tcp
    bots are not read (a worker never plays them); with `check_folders` false a bot's
    `cwd` need not exist here (a worker checks it once mapped). With `check_programs`,
    each sandboxed bot's view is checked too (`check_sandboxes`)."""
    if "event" in data and "league" not in data:
        raise ConfigError(f"{path}: an event's file ([event]): run `referee event {path}`")
    given_format = (
        data.get("league", {}).get("format") if isinstance(data.get("league"), dict) else None
    )
    if given_format in ("swiss", "knockout", "final"):
        raise ConfigError(
            f'league.format: "{given_format}" is a stage of an event: write the file with '
            "[event] and [[stage]] (spec/EVENTS.md) and run `referee event FILE`"
        )
    file = decode(data)
    league = file.league
    sandbox_override = sandbox
    sandbox_note: str | None = None
    token_files: list[Path] = []
    bot_root = _given(file.cluster.bot_root)
    if bot_root is not None and not Path(bot_root).is_absolute():
        raise ConfigError(f"cluster.bot_root: {bot_root!r} must be an absolute path")
    base = base if base is not None else path.resolve().parent

    time = TimeControl(**msgspec.structs.asdict(file.time))
    if len(file.bot) < 2:
        raise ConfigError(f"bot: a league needs at least 2 bots, {len(file.bot)} given")
    bots: list[BotEntry] = []
    seen: set[str] = set()
    for i, raw in enumerate(file.bot):
        key = f"bot[{i}]"
        name = raw.name
        if (problem := name_problem(name)) is not None:
            raise ConfigError(f"{key}.name: {quoted(name)} {problem}; {NAME_RULE} (in {path})")
        if any(c in name for c in "/\\ "):
            raise ConfigError(f"{key}.name: {quoted(name)} must be without spaces or slashes")
        if name in seen:
            raise ConfigError(f"{key}.name: {quoted(name)} is used twice")
        seen.add(name)
        given = set(data["bot"][i])  # the keys the file gives, defaults or not
        if raw.transport == "tcp":
            tcp_bot = _tcp_bot(raw, given, key, base, tokens, path)
            bots.append(dataclasses.replace(tcp_bot, time=bot_clock(raw, time)))
            if isinstance(raw.token_file, str):
                token_files.append(base / raw.token_file)
            continue
        for token_key in _TOKEN_KEYS:
            if token_key in given:
                raise ConfigError(f'{key}.{token_key}: only for transport = "tcp"')
        command = _given(raw.command)
        if command is None:
            raise ConfigError(f"{key}.command: missing; a command line or a list of strings")
        argv = tuple(shlex.split(command)) if isinstance(command, str) else tuple(command)
        if not argv:
            raise ConfigError(f"{key}.command: empty")
        cwd_raw = _given(raw.cwd)
        cwd = str((base / cwd_raw).resolve()) if cwd_raw else str(base)
        if check_folders and not Path(cwd).is_dir():  # a worker checks after bot_root
            raise ConfigError(f"{key}.cwd: {cwd} is not a folder")
        for k in raw.env:
            if not env_name(k):
                raise ConfigError(f"{key}.env.{k}: not a variable name (letters, digits, _)")
        limits = Limits.given(
            memory_mb=_given(raw.memory_mb),
            cpu_s=_given(raw.cpu_s),
            files=_given(raw.max_files),
            processes=_given(raw.max_processes),
            scratch_mb=_given(raw.scratch_mb),
        )
        person = is_person_argv(argv)
        if person:
            at_terminal = [b.name for b in bots if b.person and web_port(b.spec.argv) is False]
            _person_allowed(persons, key, name, raw, given, at_terminal, argv)
        chosen = "none" if person else sandbox_override or raw.sandbox
        if chosen == "auto":
            if auto_sandbox is None:
                auto_sandbox, sandbox_note = resolve("auto")
            chosen = auto_sandbox
        spec = BotSpec(
            name=name, argv=argv, cwd=cwd, env=dict(raw.env), limits=limits, sandbox=chosen
        )
        # With a bot_root the bots are the workers' copy: this machine may not hold them.
        if check_folders and bot_root is None and (missing := missing_script(spec)):
            whence = f"its cwd {cwd_raw!r}" if cwd_raw else "no cwd given"
            raise ConfigError(
                f"{key}.command ({name}): {missing} ({whence}, relative to {base}); set "
                f"{key}.cwd to the folder that holds it"
            )
        if check_programs and not person and not findable(spec):
            raise ConfigError(
                f"{key}.command: cannot start {argv[0]!r}: not found or not executable"
            )
        bots.append(
            BotEntry(
                spec=spec,
                # A person's seat is a process per game: the screen starts afresh.
                restart="always" if person else raw.restart,
                resources=dict(raw.resources),
                time=bot_clock(raw, time),
            )
        )

    options = msgspec.structs.asdict(file.rules)
    preset_name: str = options.pop("preset")
    overrides = {k: v for k, v in options.items() if v is not UNSET}
    table = _given(league.table)
    match = _match(league.format, file.match, [b.name for b in bots], data, table)
    if table is None:
        table = max(2, len(match.field) + 1) if match is not None else min(4, len(bots))
    if table > len(bots):
        raise ConfigError(f"league.table: {table} seats but only {len(bots)} bots")
    try:
        preset(preset_name)
    except RulesError as exc:
        raise ConfigError(f"rules.preset: {exc}") from None
    try:
        rules = preset(preset_name, players=table, **overrides)
    except RulesError as exc:
        raise ConfigError(f"rules: {exc}") from None

    fmt = league.format
    challengers = tuple(league.challengers)
    if fmt == "gauntlet":
        if not challengers:
            raise ConfigError("league.challengers: a gauntlet needs at least one challenger")
        for c in challengers:
            if c not in seen:
                raise ConfigError(f"league.challengers: {c!r} is not a bot of this league")
        if len(bots) - len(challengers) < table - 1:
            raise ConfigError(
                f"league.table: {table} seats need {table - 1} field bots; "
                f"the field has {len(bots) - len(challengers)}"
            )
    elif challengers:
        raise ConfigError('league.challengers: only for format = "gauntlet"')
    name = _given(league.name) or path.stem
    if any(escaped(c) for c in name):  # it titles what the terminal shows, and the site
        key = "league.name" if _given(league.name) else "league.name (the file's name)"
        raise ConfigError(f"{key}: {quoted(name)} holds control characters")
    bot_seed_key = _hex_key(league.bot_seed_key, "bot_seed_key", 0)
    deal_key = _hex_key(league.deal_key, "deal_key", DEAL_KEY_MIN_HEX)
    persons_named = [b.name for b in bots if b.person]
    if persons_named and (match is not None or league.duplicate):
        # No process is given a deal twice (league.pool), but a person cannot be
        # restarted: one who played a deal in one seat would know the others' hands, and
        # the boneyard's order, in the next.
        what = (
            "plays both games of each unit's deal (seats swapped)"
            if match is not None
            else "would play each deal once per seat rotation"
        )
        fix = "" if match is not None else "; set duplicate = false in [league]"
        where = "league.format" if match is not None else "league.duplicate"
        raise ConfigError(
            f"{where}: {persons_named[0]!r} is a person (`{HUMAN}`), who {what} and "
            f"would remember the hands{fix} (docs/human.md)"
        )
    tcp_names = [b.name for b in bots if b.tcp]
    if match is not None:
        # Both games of a unit deal the same hands: a tcp bot that sits in both (a field
        # bot, or new and base facing each other) would see the deal twice.
        twice = [n for n in tcp_names if not match.field or n in match.field]
        if twice and not league.accept_tcp_duplicate_risk:
            raise ConfigError(
                f"match: tcp bot {twice[0]!r} would play both games of each unit's deal in "
                "one program the referee cannot restart, and could remember the hands; "
                "set accept_tcp_duplicate_risk = true in [league] to allow it"
            )
    elif league.duplicate and tcp_names and not league.accept_tcp_duplicate_risk:
        # A process the referee starts is never given a deal twice (see league.pool); a
        # tcp bot is one program that plays every rotation of a deal and may remember it.
        raise ConfigError(
            f"league.duplicate: tcp bot {tcp_names[0]!r} would play each deal once per seat "
            "rotation in one program the referee cannot restart, and could remember the "
            "hands; set duplicate = false, or accept_tcp_duplicate_risk = true in [league]"
        )
    if league.live == "public" and (league.duplicate or match is not None):
        where = "league.format" if match is not None else "league.duplicate"
        raise ConfigError(
            f'league.live: "public" shows a game move by move, and {where} plays its deal '
            'again at another seating, whose seats could watch it; use live = "after-deal"'
        )
    if "entrants" in league.mix and not tcp_names:
        raise ConfigError(
            'league.mix: "entrants" mixes the tcp bots\' login nonces, and this league has no '
            "tcp bot"
        )
    out_dir = out or base / (_given(league.out) or f"{name}-out")
    config = LeagueConfig(
        name=name,
        path=path,
        bots=tuple(bots),
        rules_preset=preset_name,
        rules=rules,
        table=table,
        format=fmt,
        deals=league.deals,
        duplicate=league.duplicate,
        seed=league.seed,
        out=Path(out_dir),
        policy=league.policy,
        max_faults=league.max_faults,
        time=time,
        challengers=challengers,
        jobs=_given(league.jobs),
        bot_seed_key=bot_seed_key,
        deal_key=deal_key,
        server=file.server,
        bot_root=bot_root,
        sandbox_override=sandbox_override,
        sandbox_auto=auto_sandbox,
        sandbox_note=sandbox_note,
        token_files=tuple(token_files),
        raw=data,
        match=match,
        output_cap=None if (kb := _given(league.max_output_kb)) is None else kb * 1024,
        lag_warning=league.lag_warning,
        start_failures=league.start_failures,
        mix=tuple(dict.fromkeys(league.mix)),
        reveal=league.reveal,
        live=league.live,
        allow_updates=league.allow_updates,
        sign=None if (sign := _given(league.sign)) is None else base / sign,
    )
    if check_programs:
        check_sandboxes(config, hidden_places(config))
    return config


def decode(data: dict[str, Any]) -> LeagueFile:
    """`data` (a parsed league file) as `LeagueFile`: every key known and of its type.

    Strict, like the TOML it comes from: "yes", 1 and "true" are not booleans, "3"
    is not a number. `ConfigError` names the first bad key (`schema.explain`)."""
    try:
        return msgspec.convert(data, LeagueFile, strict=True)
    except msgspec.ValidationError as exc:
        raise ConfigError(explain(exc, data)) from None


T = TypeVar("T")


def _given(value: T | UnsetType) -> T | None:
    """A key's value, or None when the file leaves it out."""
    return None if isinstance(value, UnsetType) else value


def hidden_places(config: LeagueConfig, *, out: bool = True) -> tuple[Hidden, ...]:
    """What no sandboxed bot of the league may see: the output folder (the logs of the
    games being played, with every hand and the seed; league.db; the bots' stderr; left
    out with `out` false), the league file, the tcp bots' token files and the organiser's
    signing key."""
    places = [Hidden(str(config.path), "the league file", "keep it outside the bots' folders")]
    if out:
        places.insert(
            0,
            Hidden(
                str(config.out),
                "the league's output folder",
                "give the league an output folder outside every bot's folder (--out or league.out)",
            ),
        )
    places += [
        Hidden(str(f), "the token file", "keep token files outside the bots' folders")
        for f in config.token_files
    ]
    if config.sign is not None:  # whoever reads it can sign results in the organiser's name
        places.append(
            Hidden(
                str(config.sign),
                "the signing key (league.sign)",
                "keep it outside the bots' folders",
            )
        )
    return tuple(places)


def check_sandboxes(config: LeagueConfig, places: Sequence[Hidden]) -> None:
    """Before the first game, for each bot to be sandboxed: bubblewrap works here, and
    the bot's view holds no FIFO, socket or device node and none of `places` where the
    sandbox cannot hide it. `ConfigError` names the bot."""
    for i, bot in enumerate(config.bots):
        if bot.tcp or bot.spec.sandbox != "bwrap":
            continue
        problem = bwrap_problem()
        if problem is not None:
            where = "--sandbox bwrap" if config.sandbox_override else f'bot[{i}].sandbox = "bwrap"'
            raise ConfigError(f"{where}: {problem}")
        spec = bot.spec
        try:
            check_visible(
                spec.argv,
                cwd=spec.cwd,
                path_env=spec.env.get("PATH", os.environ.get("PATH")),
                hidden=(*spec.hidden, *places),
            )
        except SandboxError as exc:
            raise ConfigError(f"bot[{i}] ({bot.name}): {exc}") from None


DEAL_KEY_MIN_HEX = 32  # 128 bits


def _hex_key(text: str | UnsetType, name: str, minimum: int) -> bytes | None:
    """A secret given as hexadecimal digits in [league], at least `minimum` of them."""
    return hex_key(text, f"league.{name}", minimum)


def hex_key(text: str | UnsetType, key: str, minimum: int) -> bytes | None:
    """A secret given as hexadecimal digits (`key` names where, as `league.deal_key`),
    at least `minimum` of them; None when not given."""
    if isinstance(text, UnsetType):
        return None
    digits = "".join(text.split())
    if digits and all(c in string.hexdigits for c in digits) and len(digits) % 2:
        raise ConfigError(
            f"{key}: {len(digits)} hexadecimal digits, an odd count; "
            "a key is whole bytes, two digits each"
        )
    try:
        value = bytes.fromhex(text)
    except ValueError:
        bad = next((c for c in digits if c not in string.hexdigits), None)
        what = f"not {bad!r}" if bad is not None else "two to a byte, without a space inside one"
        raise ConfigError(f"{key}: expected hexadecimal digits, {what}") from None
    if len(value) * 2 < minimum:
        raise ConfigError(
            f"{key}: {len(value) * 2} hexadecimal digits; at least {minimum} "
            f"({minimum * 4} bits), for example from `python3 -c 'import secrets; "
            "print(secrets.token_hex(32))'`"
        )
    return value


def _tcp_bot(
    raw: BotTable, given: set[str], key: str, base: Path, tokens: bool, path: Path
) -> BotEntry:
    """A `transport = "tcp"` bot (`given`: the keys of its table): no command, exactly
    one source for its token, and a token of at least 128 bits (`referee.bots.tokens`),
    or `token_sha256`, the token's SHA-256 (64 hexadecimal digits), which is all the
    server needs to check a login.

    Error messages name the key, never the token; a weak token's names the league
    file `path`, the bot and where the token came from."""
    for k in (
        "command",
        "cwd",
        "env",
        "restart",
        "memory_mb",
        "cpu_s",
        "max_files",
        "max_processes",
        "scratch_mb",
        "resources",
    ):
        if k in given:
            raise ConfigError(f'{key}.{k}: not used with transport = "tcp"')
    sources = [k for k in _TOKEN_KEYS if k in given]
    if len(sources) != 1:
        raise ConfigError(
            f"{key}: a tcp bot needs exactly one of token, token_env, token_file, token_sha256"
        )
    source = sources[0]
    value: str = getattr(raw, source)
    name = raw.name
    if not tokens:
        return BotEntry(spec=BotSpec(name=name, argv=()), transport="tcp")
    if source == "token_sha256":
        if not _SHA256_HEX.fullmatch(value):
            # Not quoted: a token pasted here by mistake stays unsaid.
            raise ConfigError(
                f"{path}: {key}.token_sha256 (bot {name!r}): expected 64 hexadecimal digits, "
                f"the SHA-256 of the token that `referee token new NAME` prints; "
                f"got {len(value)} characters"
            )
        spec = BotSpec(name=name, argv=())
        return BotEntry(spec=spec, transport="tcp", token_sha256=value.lower())
    if source == "token":
        token, where = value, "given in the file"
    elif source == "token_env":
        token, where = os.environ.get(value, ""), f"from the environment variable {value}"
        if not token:
            raise ConfigError(f"{key}.token_env: the environment variable {value} is not set")
    else:
        file = base / value
        where = f"in {file}"
        try:
            token = file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            raise ConfigError(f"{key}.token_file: cannot read {file}") from None
    if not token:
        raise ConfigError(f"{key}.{source}: the token is empty")
    problem = token_problem(token)
    if problem is not None:
        raise ConfigError(f"{path}: {key}.{source} (bot {name!r}, token {where}): {problem}")
    return BotEntry(spec=BotSpec(name=name, argv=()), transport="tcp", token=token)


def default_jobs() -> int:
    """Games at once by default: the number of cores."""
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def _clock(t: TimeControl) -> list[int]:
    return [t.startup_ms, t.move_ms, t.bank_ms, t.increment_ms, t.grace_ms]


def _person_allowed(
    persons: bool,
    key: str,
    name: str,
    raw: BotTable,
    given: set[str],
    before: list[str],
    argv: tuple[str, ...],
) -> None:
    """`ConfigError` unless a person may take bot `name` (the command `human`, or
    `human --web [PORT]`) here; `before` names the persons at the terminal so far."""
    if web_port(argv) is None:
        raise ConfigError(f"{key}.command: `{HUMAN} --web` takes a port (1 to 65535) or none")
    if not persons:
        raise ConfigError(
            f"{key}.command: `{HUMAN}` seats a person in `referee play` and `referee league` "
            "only, not in a match, an arena or a league served or played on a cluster "
            "(docs/human.md)"
        )
    if before and web_port(argv) is False:
        raise ConfigError(
            f"{key}.command: {before[0]!r} is `{HUMAN}` already: one terminal seats one "
            "person (docs/human.md)"
        )
    for option in ("sandbox", "cwd", "env", "memory_mb", "cpu_s", "max_files", "max_processes"):
        if option in given and not (option == "sandbox" and raw.sandbox == "none"):
            raise ConfigError(
                f"{key}.{option}: {quoted(name)} is a person (`{HUMAN}`), whose seat runs "
                "at your terminal, outside the sandbox and its limits (docs/human.md)"
            )


def bot_clock(raw: BotTable, time: TimeControl) -> TimeControl | None:
    """A bot's own clocks: its `time` table over the league's `time`; None without one."""
    if isinstance(raw.time, UnsetType):
        return None
    own = {k: v for k, v in msgspec.structs.asdict(raw.time).items() if v is not UNSET}
    return msgspec.structs.replace(time, **own)


def _match(
    fmt: str, table: MatchTable, names: list[str], data: dict[str, Any], seats: int | None
) -> MatchSettings | None:
    """[match], checked against the bots and the table size; None for other formats."""
    if fmt != "match":
        if "match" in data:
            raise ConfigError('match: only for format = "match" in [league]')
        return None
    from ..stats import Sprt, StatsError

    chosen: list[str] = []
    for key in ("new", "base"):
        name = _given(getattr(table, key))
        if name is None:
            raise ConfigError(f'match.{key}: missing; format = "match" needs new and base')
        if name not in names:
            raise ConfigError(f"match.{key}: {name!r} is not a bot of this league")
        chosen.append(name)
    new, base = chosen
    if new == base:
        raise ConfigError(f"match.base: {base!r} is new too; a match needs two bots")
    field = tuple(n for n in names if n not in (new, base))
    # The tested seat and the field's; without a field, new and base face each other.
    need = len(field) + 1 if field else 2
    if seats is not None and seats != need:
        raise ConfigError(
            f"league.table: {seats} seats, but a match of new, base and {len(field)} other "
            f"bots (the field) seats {need}"
        )
    sprt = table.sprt
    try:
        Sprt(sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta)
    except StatsError as exc:
        raise ConfigError(f"match.sprt: {exc}") from None
    max_games = _given(table.max_games)
    return MatchSettings(
        new=new,
        base=base,
        field=field,
        elo0=sprt.elo0,
        elo1=sprt.elo1,
        alpha=sprt.alpha,
        beta=sprt.beta,
        max_units=None if max_games is None else max_games // 2,
        luck=table.luck,
    )
