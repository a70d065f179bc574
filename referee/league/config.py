"""LEAGUE.toml: bots, rules, table size, format, deals, clocks, fault policy, output.

Everything is checked before any game starts; a problem is a `ConfigError`
whose message names the key (`bot[2].command`, `league.table`, ...).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol.messages import MAX_LINE_DEFAULT, TimeControl

from ..faults import Policy
from ..process import BotSpec, Limits, env_name, findable
from ..rules import Rules, RulesError, preset
from ..sandbox import CHOICES, Hidden, SandboxError, bwrap_problem, check_visible, resolve

FORMATS = ("round-robin", "gauntlet")
_LEAGUE_KEYS = {
    "name",
    "format",
    "table",
    "deals",
    "duplicate",
    "seed",
    "out",
    "policy",
    "max_faults",
    "challengers",
    "jobs",
    "bot_seed_key",
    "deal_key",
    "accept_tcp_duplicate_risk",
}
_BOT_KEYS = {
    "name",
    "command",
    "cwd",
    "env",
    "restart",
    "memory_mb",
    "cpu_s",
    "max_files",
    "transport",
    "token",
    "token_env",
    "token_file",
    "sandbox",
    "resources",
}
_TOKEN_KEYS = ("token", "token_env", "token_file")
_TIME_KEYS = {"startup_ms", "move_ms", "bank_ms", "increment_ms", "grace_ms"}
_SERVER_KEYS = {
    "max_handshakes",
    "max_handshakes_per_address",
    "handshake_ms",
    "max_line",
    "idle_ms",
}
_CLUSTER_KEYS = {"bot_root"}
_TOP_KEYS = {"league", "rules", "time", "bot", "server", "cluster"}


class ConfigError(ValueError):
    """A league configuration that cannot run; the message names the key."""


@dataclass(frozen=True)
class BotEntry:
    """One bot of the league."""

    spec: BotSpec
    restart: str = "never"  # "always": a fresh process for every game
    transport: str = "stdio"  # "tcp": the bot connects to `referee serve`
    token: str | None = field(default=None, repr=False)  # tcp only; never printed
    # What a worker of a cluster must offer to run this bot (Dask worker resources).
    resources: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def tcp(self) -> bool:
        """The bot joins over TCP instead of being started by the referee."""
        return self.transport == "tcp"

    @property
    def name(self) -> str:
        """The bot's unique name."""
        return self.spec.name


@dataclass(frozen=True)
class ServerLimits:
    """Limits of `referee serve` ([server] in LEAGUE.toml); 0 for idle_ms means none.

    Only connections that have not logged in count against `max_handshakes*`: a
    logged-in bot has its own slot (one per name), which strangers cannot take."""

    max_handshakes: int = 64  # connections not logged in yet; more push out the oldest
    max_handshakes_per_address: int = 8  # the same, from one IPv4 address or IPv6 /64
    handshake_ms: int = 5_000  # from accepting a connection to the end of its `login` line
    max_line: int = MAX_LINE_DEFAULT  # bytes per line from a TCP bot
    idle_ms: int = 0  # a logged-in bot waiting this long for a game is sent `bye`


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
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _expect(value: object, kind: type | tuple[type, ...], key: str, what: str) -> Any:
    if isinstance(value, bool) and kind in (int, (int,)):
        raise ConfigError(f"{key}: expected {what}, got {value!r}")
    if not isinstance(value, kind):
        raise ConfigError(f"{key}: expected {what}, got {value!r}")
    return value


def _unknown(table: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            prefix = f"{where}." if where else ""
            raise ConfigError(
                f"{prefix}{key}: unknown key; expected one of {', '.join(sorted(allowed))}"
            )


def load_config(
    path: Path,
    *,
    out: Path | None = None,
    check_programs: bool = True,
    sandbox: str | None = None,
) -> LeagueConfig:
    """Read and check LEAGUE.toml; `ConfigError` names the first problem."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse_config(data, path, out=out, check_programs=check_programs, sandbox=sandbox)


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
    _unknown(data, _TOP_KEYS, "")
    sandbox_override = sandbox
    sandbox_note: str | None = None
    token_files: list[Path] = []
    league = _expect(data.get("league", {}), dict, "league", "a table")
    _unknown(league, _LEAGUE_KEYS, "league")
    cluster = _expect(data.get("cluster", {}), dict, "cluster", "a table")
    _unknown(cluster, _CLUSTER_KEYS, "cluster")
    bot_root = cluster.get("bot_root")
    if bot_root is not None:
        _expect(bot_root, str, "cluster.bot_root", "a folder")
        if not Path(bot_root).is_absolute():
            raise ConfigError(f"cluster.bot_root: {bot_root!r} must be an absolute path")
    base = base if base is not None else path.resolve().parent

    bots_raw = _expect(data.get("bot", []), list, "bot", "an array of [[bot]] tables")
    if len(bots_raw) < 2:
        raise ConfigError(f"bot: a league needs at least 2 bots, {len(bots_raw)} given")
    bots: list[BotEntry] = []
    seen: set[str] = set()
    for i, raw in enumerate(bots_raw):
        key = f"bot[{i}]"
        _expect(raw, dict, key, "a table")
        _unknown(raw, _BOT_KEYS, key)
        name = _expect(raw.get("name"), str, f"{key}.name", "a name")
        if not name or any(c in name for c in "/\\ \t"):
            raise ConfigError(f"{key}.name: {name!r} must be non-empty, without spaces or slashes")
        if name in seen:
            raise ConfigError(f"{key}.name: {name!r} is used twice")
        seen.add(name)
        transport = raw.get("transport", "stdio")
        if transport not in ("stdio", "tcp"):
            raise ConfigError(f'{key}.transport: expected "stdio" or "tcp", got {transport!r}')
        if transport == "tcp":
            bots.append(_tcp_bot(raw, key, name, base, tokens))
            if isinstance(raw.get("token_file"), str):
                token_files.append(base / raw["token_file"])
            continue
        for token_key in _TOKEN_KEYS:
            if token_key in raw:
                raise ConfigError(f'{key}.{token_key}: only for transport = "tcp"')
        command = raw.get("command")
        if isinstance(command, str):
            argv = tuple(shlex.split(command))
        elif isinstance(command, list) and all(isinstance(a, str) for a in command):
            argv = tuple(command)
        else:
            raise ConfigError(f"{key}.command: expected a command line or a list of strings")
        if not argv:
            raise ConfigError(f"{key}.command: empty")
        cwd_raw = raw.get("cwd")
        cwd = (
            str((base / _expect(cwd_raw, str, f"{key}.cwd", "a folder")).resolve())
            if cwd_raw
            else str(base)
        )
        if check_folders and not Path(cwd).is_dir():  # a worker checks after bot_root
            raise ConfigError(f"{key}.cwd: {cwd} is not a folder")
        env = _expect(raw.get("env", {}), dict, f"{key}.env", "a table of strings")
        for k, v in env.items():
            _expect(v, str, f"{key}.env.{k}", "a string")
            if not env_name(k):
                raise ConfigError(f"{key}.env.{k}: not a variable name (letters, digits, _)")
        restart = raw.get("restart", "never")
        if restart not in ("never", "always"):
            raise ConfigError(f'{key}.restart: expected "never" or "always", got {restart!r}')
        limits = Limits(
            memory_mb=_opt_int(raw, "memory_mb", key),
            cpu_s=_opt_int(raw, "cpu_s", key),
            files=_opt_int(raw, "max_files", key),
        )
        sandbox = sandbox_override or raw.get("sandbox", "auto")
        if sandbox not in CHOICES:
            raise ConfigError(f"{key}.sandbox: {sandbox!r}; expected one of {', '.join(CHOICES)}")
        if sandbox == "auto":
            if auto_sandbox is None:
                auto_sandbox, sandbox_note = resolve("auto")
            sandbox = auto_sandbox
        spec = BotSpec(name=name, argv=argv, cwd=cwd, env=dict(env), limits=limits, sandbox=sandbox)
        if check_programs and not findable(spec):
            raise ConfigError(
                f"{key}.command: cannot start {argv[0]!r}: not found or not executable"
            )
        bots.append(BotEntry(spec=spec, restart=restart, resources=_resources(raw, key)))

    rules_raw = dict(_expect(data.get("rules", {}), dict, "rules", "a table"))
    preset_name = _expect(rules_raw.pop("preset", "standard"), str, "rules.preset", "a preset name")
    table = _expect(league.get("table", min(4, len(bots))), int, "league.table", "a whole number")
    if not 2 <= table <= 8:
        raise ConfigError(f"league.table: {table} seats; a table has 2 to 8")
    if table > len(bots):
        raise ConfigError(f"league.table: {table} seats but only {len(bots)} bots")
    try:
        rules = preset(preset_name, players=table, **rules_raw)
    except RulesError as exc:
        raise ConfigError(f"rules: {exc}") from None

    fmt = league.get("format", "round-robin")
    if fmt not in FORMATS:
        raise ConfigError(f"league.format: {fmt!r}; expected one of {', '.join(FORMATS)}")
    challengers = tuple(
        _expect(league.get("challengers", []), list, "league.challengers", "a list of bot names")
    )
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
    deals = _expect(league.get("deals", 1), int, "league.deals", "a whole number")
    if deals < 1:
        raise ConfigError(f"league.deals: {deals}; at least 1")
    duplicate = _expect(league.get("duplicate", True), bool, "league.duplicate", "true or false")
    seed = _expect(league.get("seed", 1), int, "league.seed", "a whole number")
    policy_name = league.get("policy", "forfeit")
    try:
        policy = Policy(policy_name)
    except ValueError:
        raise ConfigError(
            f"league.policy: {policy_name!r}; expected forfeit or default-move"
        ) from None
    max_faults = _expect(league.get("max_faults", 3), int, "league.max_faults", "a whole number")
    if max_faults < 1:
        raise ConfigError(f"league.max_faults: {max_faults}; at least 1")
    jobs = league.get("jobs")
    if jobs is not None and _expect(jobs, int, "league.jobs", "a whole number") < 1:
        raise ConfigError(f"league.jobs: {jobs}; at least 1")
    time_raw = _expect(data.get("time", {}), dict, "time", "a table")
    _unknown(time_raw, _TIME_KEYS, "time")
    for k, v in time_raw.items():
        if _expect(v, int, f"time.{k}", "milliseconds, a whole number") < 0:
            raise ConfigError(f"time.{k}: must not be negative")
    time = TimeControl(**time_raw)
    name = _expect(league.get("name", path.stem), str, "league.name", "a name")
    bot_seed_key = _hex_key(league, "bot_seed_key", 0)
    deal_key = _hex_key(league, "deal_key", DEAL_KEY_MIN_HEX)
    tcp_risk = _expect(
        league.get("accept_tcp_duplicate_risk", False),
        bool,
        "league.accept_tcp_duplicate_risk",
        "true or false",
    )
    tcp_names = [b.name for b in bots if b.tcp]
    if duplicate and tcp_names and not tcp_risk:
        # A process the referee starts is never given a deal twice (see league.pool); a
        # tcp bot is one program that plays every rotation of a deal and may remember it.
        raise ConfigError(
            f"league.duplicate: tcp bot {tcp_names[0]!r} would play each deal once per seat "
            "rotation in one program the referee cannot restart, and could remember the "
            "hands; set duplicate = false, or accept_tcp_duplicate_risk = true in [league]"
        )
    server_raw = _expect(data.get("server", {}), dict, "server", "a table")
    if "max_connections" in server_raw:
        raise ConfigError(
            "server.max_connections: replaced by max_handshakes and max_handshakes_per_address"
            " (logged-in bots no longer count; see spec/PROTOCOL.md, TCP)"
        )
    _unknown(server_raw, _SERVER_KEYS, "server")
    for k, v in server_raw.items():
        if _expect(v, int, f"server.{k}", "a whole number") < (0 if k == "idle_ms" else 1):
            raise ConfigError(f"server.{k}: {v} is too small")
    server = ServerLimits(**server_raw)
    out_dir = out or base / _expect(league.get("out", f"{name}-out"), str, "league.out", "a folder")
    config = LeagueConfig(
        name=name,
        path=path,
        bots=tuple(bots),
        rules_preset=preset_name,
        rules=rules,
        table=table,
        format=fmt,
        deals=deals,
        duplicate=duplicate,
        seed=seed,
        out=Path(out_dir),
        policy=policy,
        max_faults=max_faults,
        time=time,
        challengers=challengers,
        jobs=jobs,
        bot_seed_key=bot_seed_key,
        deal_key=deal_key,
        server=server,
        bot_root=bot_root,
        sandbox_override=sandbox_override,
        sandbox_auto=auto_sandbox,
        sandbox_note=sandbox_note,
        token_files=tuple(token_files),
        raw=data,
    )
    if check_programs:
        check_sandboxes(config, hidden_places(config))
    return config


def hidden_places(config: LeagueConfig, *, out: bool = True) -> tuple[Hidden, ...]:
    """What no sandboxed bot of the league may see: the output folder (the logs of the
    games being played, with every hand and the seed; league.db; the bots' stderr; left
    out with `out` false), the league file and the tcp bots' token files."""
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


def _hex_key(league: dict[str, Any], name: str, minimum: int) -> bytes | None:
    """A secret given as hexadecimal digits in [league], at least `minimum` of them."""
    text = league.get(name)
    if text is None:
        return None
    _expect(text, str, f"league.{name}", "hexadecimal digits in a string")
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise ConfigError(f"league.{name}: expected hexadecimal digits") from None
    if len(key) * 2 < minimum:
        raise ConfigError(
            f"league.{name}: {len(key) * 2} hexadecimal digits; at least {minimum} "
            f"({minimum * 4} bits), for example from `python3 -c 'import secrets; "
            "print(secrets.token_hex(32))'`"
        )
    return key


def _resources(raw: dict[str, Any], key: str) -> dict[str, float]:
    """`resources = { GPU = 1 }`: what a cluster worker must offer (positive amounts)."""
    table = _expect(raw.get("resources", {}), dict, f"{key}.resources", "a table of amounts")
    out: dict[str, float] = {}
    for name, amount in table.items():
        if isinstance(amount, bool) or not isinstance(amount, int | float) or amount <= 0:
            raise ConfigError(f"{key}.resources.{name}: expected a positive amount, got {amount!r}")
        out[name] = float(amount)
    return out


def _tcp_bot(raw: dict[str, Any], key: str, name: str, base: Path, tokens: bool) -> BotEntry:
    """A `transport = "tcp"` bot: no command, exactly one source for its token.

    Error messages name the key, never the token."""
    for k in ("command", "cwd", "env", "restart", "memory_mb", "cpu_s", "max_files", "resources"):
        if k in raw:
            raise ConfigError(f'{key}.{k}: not used with transport = "tcp"')
    given = [k for k in _TOKEN_KEYS if k in raw]
    if len(given) != 1:
        raise ConfigError(f"{key}: a tcp bot needs exactly one of token, token_env, token_file")
    source = given[0]
    value = _expect(raw[source], str, f"{key}.{source}", "a string")
    if not tokens:
        return BotEntry(spec=BotSpec(name=name, argv=()), transport="tcp")
    if source == "token":
        token = value
    elif source == "token_env":
        token = os.environ.get(value, "")
        if not token:
            raise ConfigError(f"{key}.token_env: the environment variable {value} is not set")
    else:
        file = base / value
        try:
            token = file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            raise ConfigError(f"{key}.token_file: cannot read {file}") from None
    if not token:
        raise ConfigError(f"{key}.{source}: the token is empty")
    return BotEntry(spec=BotSpec(name=name, argv=()), transport="tcp", token=token)


def _opt_int(raw: dict[str, Any], key: str, where: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if _expect(value, int, f"{where}.{key}", "a whole number") < 1:
        raise ConfigError(f"{where}.{key}: must be at least 1")
    return int(value)


def default_jobs() -> int:
    """Games at once by default: the number of cores."""
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )
