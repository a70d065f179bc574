"""LEAGUE.toml as types: every table and key, its type, default and meaning, in one place.

`referee.league.config` decodes a parsed file into `LeagueFile` with
`msgspec.convert` (strict: `"yes"` and `0` are not booleans) and then checks
what types cannot say (names used twice, a tcp bot's token, the sandbox). From
the same Structs come the one-line errors that name the key (`explain`), the
JSON Schema that `referee schema --league` prints (`spec/league.schema.json`),
and the key reference of spec/LEAGUE.md (`reference_markdown`); tests fail when
either file is stale. The `[rules]` table is built from the fields of
`referee.rules.Rules` when this module is imported, so a new rules option is
typed here as soon as it exists.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import functools
import json
import operator
import re
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import msgspec.inspect as mi
from msgspec import UNSET, Meta, UnsetType

from protocol.messages import MAX_LINE_DEFAULT, LineBytes, Millis, TimeControl

from ..bots.faults import Policy
from ..bots.process import DEFAULT_FILES, DEFAULT_MEMORY_MB, DEFAULT_PROCESSES, DEFAULT_SCRATCH_MB
from ..rules import PRESETS, VARIANTS, Rules
from ..text import NAME_MAX
from .standings import LAG_WARNING
from .starts import START_FAILURES

SCHEMA_URL = "https://json-schema.org/draft/2020-12/schema"

# Keys of the league file's tables that a default shown in the reference cannot
# give as a value (it depends on the file): the text says what it is instead.
_NO_DEFAULT = "none"


def _meta(description: str, *, default: str | None = None, secret: bool = False) -> Meta:
    """A key's documentation: `default` says in words a default that depends on the
    file; a `secret` key's value never appears in an error."""
    extra: dict[str, Any] = {}
    if default is not None:
        extra["default"] = default
    if secret:
        extra["secret"] = True
    return Meta(description=description, extra=extra or None)


def _toml(value: Any) -> str:
    """A value as TOML writes it (or a short description of a big one)."""
    if hasattr(value, "value") and not isinstance(value, int | float | str):
        value = value.value  # an enum member
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:56] + '…"'
    if isinstance(value, int | float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(str(value), str(value))
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, list):
        return "[]" if not value else "an array"
    if isinstance(value, dict):
        return "{}" if not value else "a table"
    if isinstance(value, msgspec.Struct):  # an inline table of defaults
        items = msgspec.structs.asdict(value).items()
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in items) + " }"
    return type(value).__name__


# Whole numbers with bounds; a key's own Meta (its meaning) goes around them.
Positive = Annotated[int, Meta(ge=1)]
NotNegative = Annotated[int, Meta(ge=0)]
Seats = Annotated[int, Meta(ge=2, le=8)]
Amount = Annotated[float, Meta(gt=0)]
Share = Annotated[float, Meta(ge=0, le=1)]


class LeagueTable(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """[league]: who meets whom, how often, and what a fault costs."""

    name: Annotated[
        str | UnsetType,
        _meta("The league's name, in titles and the output folder.", default="the file's name"),
    ] = UNSET
    format: Annotated[
        Literal["round-robin", "gauntlet", "match"],
        _meta(
            "round-robin: every combination of `table` bots plays; gauntlet: each "
            "challenger plays every combination of the other bots (the field); match: "
            "[match] new against base, paired duplicate deals until a sequential test "
            "decides (the other bots are the field)."
        ),
    ] = "round-robin"
    table: Annotated[
        Seats | UnsetType,
        _meta(
            "Seats at each game, which is the rules' number of players.",
            default="4, or the number of bots if fewer; in a match, the field's bots + 1",
        ),
    ] = UNSET
    deals: Annotated[Positive, _meta("Deals each table plays.")] = 1
    duplicate: Annotated[
        bool, _meta("Play each deal under every rotation of the seats (duplicate deals).")
    ] = True
    seed: Annotated[
        int, _meta("A public label of the league; the deals come from the secret deal key.")
    ] = 1
    out: Annotated[
        str | UnsetType,
        _meta(
            "The output folder, relative to the league file (--out overrides).",
            default='"NAME-out", beside the file',
        ),
    ] = UNSET
    policy: Annotated[
        Policy,
        _meta(
            "What a fault costs: forfeit (the bot is ended and ranks last) or default-move "
            "(the first legal move is played; max_faults faults forfeit)."
        ),
    ] = Policy.FORFEIT
    max_faults: Annotated[
        Positive, _meta("With default-move: the faults in one game that forfeit it.")
    ] = 3
    challengers: Annotated[
        list[str], _meta("The bots (by name) that challenge the field; gauntlet only.")
    ] = []
    jobs: Annotated[
        Positive | UnsetType,
        _meta(
            "Games at once, never two of one deal (--jobs overrides).",
            default="the number of cores",
        ),
    ] = UNSET
    bot_seed_key: Annotated[
        str | UnsetType,
        _meta(
            "Hexadecimal digits that pin the bots' own seeds across fresh runs.",
            default="a random key made when the league starts",
            secret=True,
        ),
    ] = UNSET
    deal_key: Annotated[
        str | UnsetType,
        _meta(
            "At least 32 hexadecimal digits that pin the deals across fresh runs; keep it "
            "secret until the league is over.",
            default="a random secret made when the league starts",
            secret=True,
        ),
    ] = UNSET
    max_output_kb: Annotated[
        Positive | UnsetType,
        _meta(
            "KiB a bot may write during one decision; more is a resource_limit fault.",
            default="no limit",
        ),
    ] = UNSET
    lag_warning: Annotated[
        Share,
        _meta(
            "The standings warn that the clocks were barely enforced when more than this "
            "share of the bots' decision time was excused for the referee's own lag (its "
            "event loop stalled: an overloaded machine)."
        ),
    ] = LAG_WARNING
    start_failures: Annotated[
        NotNegative,
        _meta(
            "The league stops with exit status 2 when a bot has failed to start in each "
            "of its first this many games (or in every game it had, if fewer), or when "
            "every seat of a game failed to start before any bot ever started. The games "
            "with those failed starts are not recorded (--resume plays them once the bot "
            "is fixed). 0: play on regardless, recording every game (as --keep-going does)."
        ),
    ] = START_FAILURES
    mix: Annotated[
        list[Literal["beacon", "entrants"]],
        _meta(
            "Public values mixed into the deal seeds, so that nobody alone could have "
            "steered a deal: beacon (a value published after the commitment, given with "
            "--beacon) and entrants (each tcp bot's login nonce). See docs/proof.md."
        ),
    ] = []
    reveal: Annotated[
        Literal["manual", "at-end"],
        _meta(
            "at-end: publish the deal key in OUT/reveal.json once every game is recorded; "
            "manual: only with `referee reveal OUT`."
        ),
    ] = "manual"
    live: Annotated[
        Literal["after-deal", "public"],
        _meta(
            "What `league --live PORT` (and `serve --live PORT`) shows of a game while the "
            "league runs. after-deal: "
            "nothing until every game of its deal is over, then the whole game; public: "
            "the game move by move as every seat sees it (no hand, no draw), hands once it "
            "is over; not with duplicate = true (a deal's public view tells its other "
            "rotations' seats about their own deal). See docs/live.md."
        ),
    ] = "after-deal"
    allow_updates: Annotated[
        bool,
        _meta(
            "Let bots' files change after the commitment: a game played with files other "
            "than the ones the commitment names then passes `referee verify`, which lists "
            "it. Written in the commitment (so it cannot be turned on later), results.json "
            "and on the site. See docs/proof.md."
        ),
    ] = False
    sign: Annotated[
        str | UnsetType,
        _meta(
            "The organiser's secret key file (from `referee keygen`), relative to the league "
            "file: results.json, checkpoints and the bots' receipts are signed with it.",
            default="nothing is signed",
        ),
    ] = UNSET
    accept_tcp_duplicate_risk: Annotated[
        bool,
        _meta(
            "Allow tcp bots in a duplicate league (one program plays every rotation of a "
            "deal and could remember the hands), or in a match where one plays both games "
            "of a unit."
        ),
    ] = False


class BotTable(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """[[bot]]: one bot of the league, started by the referee (stdio) or connecting to
    `referee serve` (tcp)."""

    name: Annotated[
        str,
        _meta(
            f"The bot's unique name: 1 to {NAME_MAX} characters, without spaces, slashes or "
            "control characters."
        ),
    ]
    command: Annotated[
        str | list[str] | UnsetType,
        _meta(
            "Its command line (split like a shell would; no shell is run) or the words "
            'of it as an array. Not with transport = "tcp". `"human"` seats a person at '
            "the terminal `referee league` runs in (one at most, with duplicate = false, "
            "no sandbox, cwd, env or limits; not in a match, an arena or `serve`): "
            "docs/human.md."
        ),
    ] = UNSET
    cwd: Annotated[
        str | UnsetType,
        _meta("The folder it runs in, relative to the league file.", default="the file's folder"),
    ] = UNSET
    env: Annotated[
        dict[str, str], _meta("Variables added to (or replacing) its small environment.")
    ] = {}
    restart: Annotated[
        Literal["never", "always"],
        _meta("never: processes are kept between games; always: a fresh one each game."),
    ] = "never"
    memory_mb: Annotated[
        NotNegative | UnsetType,
        _meta(
            "Its memory in MiB, all its processes together, and each process's "
            "address space (see docs/sandbox.md); 0: none.",
            default=str(DEFAULT_MEMORY_MB),
        ),
    ] = UNSET
    cpu_s: Annotated[
        NotNegative | UnsetType,
        _meta("Its CPU-time limit, in seconds; 0: none.", default=_NO_DEFAULT),
    ] = UNSET
    max_files: Annotated[
        NotNegative | UnsetType,
        _meta("Its limit of open files; 0: none.", default=str(DEFAULT_FILES)),
    ] = UNSET
    max_processes: Annotated[
        NotNegative | UnsetType,
        _meta(
            "Its limit of processes and threads (pids.max or RLIMIT_NPROC); 0: none.",
            default=str(DEFAULT_PROCESSES),
        ),
    ] = UNSET
    scratch_mb: Annotated[
        NotNegative | UnsetType,
        _meta(
            "Its scratch space in MiB: each of its tmpfs /scratch, /tmp and /dev/shm in "
            "the sandbox, its largest file (RLIMIT_FSIZE) without; 0: none.",
            default=str(DEFAULT_SCRATCH_MB),
        ),
    ] = UNSET
    transport: Annotated[
        Literal["stdio", "tcp"],
        _meta("stdio: the referee starts it; tcp: it connects to `referee serve`."),
    ] = "stdio"
    token: Annotated[
        str | UnsetType,
        _meta(
            "A tcp bot's secret (at least 128 bits: `referee token new NAME`), given here.",
            default=_NO_DEFAULT,
            secret=True,
        ),
    ] = UNSET
    token_env: Annotated[
        str | UnsetType,
        _meta(
            "A tcp bot's secret (at least 128 bits), from this environment variable.",
            default=_NO_DEFAULT,
        ),
    ] = UNSET
    token_file: Annotated[
        str | UnsetType,
        _meta(
            "A tcp bot's secret (at least 128 bits), from this file (relative to the league file).",
            default=_NO_DEFAULT,
        ),
    ] = UNSET
    token_sha256: Annotated[
        str | UnsetType,
        _meta(
            "A tcp bot's secret as its SHA-256 (64 hexadecimal digits, what `referee token "
            "new NAME` prints on stderr): the server checks logins against it and never "
            "holds the token.",
            default=_NO_DEFAULT,
            secret=True,
        ),
    ] = UNSET
    sandbox: Annotated[
        Literal["auto", "none", "bwrap"],
        _meta(
            "bwrap: bubblewrap; none: no sandbox; auto: bwrap where it works (--sandbox overrides)."
        ),
    ] = "auto"
    resources: Annotated[
        dict[str, Amount],
        _meta("What a cluster worker must offer to play its games, e.g. { GPU = 1 }."),
    ] = {}
    time: Annotated[
        BotTimeTable | UnsetType,
        _meta(
            "Its own clocks (time odds), e.g. { move_ms = 2000 }: the keys of [time], "
            "each one left out taken from [time].",
            default="[time]",
        ),
    ] = UNSET


class BotTimeTable(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """A bot's own clocks over [time]: any of its keys, in milliseconds."""

    startup_ms: Millis | UnsetType = UNSET
    move_ms: Millis | UnsetType = UNSET
    bank_ms: Millis | UnsetType = UNSET
    increment_ms: Millis | UnsetType = UNSET
    grace_ms: Millis | UnsetType = UNSET


_CLOCKS = TimeControl()


class TimeTable(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """[time]: the clocks of every game, in milliseconds (spec/PROTOCOL.md, Clocks)."""

    startup_ms: Annotated[Millis, _meta("From hello to ready.")] = _CLOCKS.startup_ms
    move_ms: Annotated[Millis, _meta("Per decision, before the bank is used.")] = _CLOCKS.move_ms
    bank_ms: Annotated[Millis, _meta("Per game, for the overruns of move_ms.")] = _CLOCKS.bank_ms
    increment_ms: Annotated[Millis, _meta("Added to the bank after each decision.")] = (
        _CLOCKS.increment_ms
    )
    grace_ms: Annotated[
        Millis, _meta("The harness's latency allowance, never charged to the bot.")
    ] = _CLOCKS.grace_ms


class SprtTable(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """The sequential test of a match: H0 Elo = elo0 against H1 Elo = elo1 (spec/STATS.md)."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05


class MatchTable(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """[match]: with format = "match", is `new` stronger than `base`? (spec/STATS.md)."""

    new: Annotated[
        str | UnsetType,
        _meta("The tested bot (a [[bot]] name).", default='required with format = "match"'),
    ] = UNSET
    base: Annotated[
        str | UnsetType,
        _meta(
            "The bot it is tested against (a [[bot]] name).",
            default='required with format = "match"',
        ),
    ] = UNSET
    sprt: Annotated[
        SprtTable,
        _meta(
            "The test: H0 Elo = elo0 against H1 Elo = elo1, with error rates alpha and "
            "beta; keys left out take their defaults."
        ),
    ] = msgspec.field(default_factory=SprtTable)
    max_games: Annotated[
        Annotated[int, Meta(ge=2)] | UnsetType,
        _meta("Stop undecided after this many games (whole units of two).", default="no limit"),
    ] = UNSET
    luck: Annotated[
        bool,
        _meta("Take each game's luck out (rollouts over the logs: costs CPU, saves games)."),
    ] = False


class ServerLimits(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """[server]: limits of `referee serve` (spec/PROTOCOL.md, TCP).

    Only connections that have not logged in count against `max_handshakes*`: a
    logged-in bot has its own slot (one per name), which strangers cannot take."""

    max_handshakes: Annotated[
        Positive, _meta("Connections not logged in yet; more push out the oldest.")
    ] = 64
    max_handshakes_per_address: Annotated[
        Positive, _meta("The same, from one IPv4 address or IPv6 /64.")
    ] = 8
    handshake_ms: Annotated[
        Positive, _meta("From accepting a connection to the end of its login line.")
    ] = 5_000
    max_line: Annotated[
        LineBytes, _meta("Bytes per line from a tcp bot, the newline not counted.")
    ] = MAX_LINE_DEFAULT
    connect_ms: Annotated[
        Positive,
        _meta(
            "How long from the server's start a game waits for a tcp bot that has not "
            "logged in yet (time for a person to start `referee connect`); once it has, "
            "a bot away between games is waited for its startup_ms."
        ),
    ] = 120_000
    reconnect_ms: Annotated[
        NotNegative,
        _meta(
            "How long a tcp bot whose connection drops mid-game may take to log in again "
            "and resume it (`referee connect` does so by itself); its clock runs while it "
            "is away on its turn. 0: a drop is a crash at once."
        ),
    ] = 5_000
    entrants_ms: Annotated[
        NotNegative,
        _meta(
            'With mix = ["entrants"]: how long the league waits, before its first game, '
            "for each tcp bot's first login (its nonce goes into the deal seeds); a bot not "
            "logged in by then contributes nothing, and the contributions say so."
        ),
    ] = 600_000
    idle_ms: Annotated[
        NotNegative, _meta("A logged-in bot waiting this long for a game is sent bye; 0: never.")
    ] = 0


class ClusterTable(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """[cluster]: where the league's folder is on the workers of `--cluster`."""

    bot_root: Annotated[
        str | UnsetType,
        _meta(
            "The league file's folder as the workers see it (an absolute path).",
            default="the same paths as here",
        ),
    ] = UNSET


# Options of `Rules` that the league sets: a [rules] table that names one is refused.
LEAGUE_SETS = {"players": "table"}


def _without_none(hint: Any) -> Any:
    """A type without None: TOML has no null, so an optional option is one left out."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        kept = [a for a in typing.get_args(hint) if a is not type(None)]
        return functools.reduce(operator.or_, kept)
    return hint


def rules_table(rules: type[Rules] = Rules) -> type[msgspec.Struct]:
    """[rules] from the fields of `rules`: each option typed as the dataclass types it,
    left out (UNSET) unless given, so that the preset's own values stay."""
    hints = typing.get_type_hints(rules)
    names = ", ".join(PRESETS)
    fields: list[tuple[str, Any, Any]] = [
        (
            "preset",
            Annotated[
                str,
                _meta(
                    f"A preset ({names}), optionally with +variants "
                    f"({', '.join(VARIANTS)}), e.g. standard+teams; the options below "
                    "change it."
                ),
            ],
            "standard",
        )
    ]
    for field in dataclasses.fields(rules):
        if field.name in LEAGUE_SETS:
            continue
        shown = field.default.value if hasattr(field.default, "value") else field.default
        doc = _meta(f"See spec/RULES.md, Options. In the standard preset: {_toml(shown)}.")
        fields.append(
            (field.name, Annotated[_without_none(hints[field.name]) | UnsetType, doc], UNSET)
        )
    return msgspec.defstruct(
        "RulesTable",
        fields,
        forbid_unknown_fields=True,
        kw_only=True,
        frozen=True,
        module=__name__,
    )


RulesTable = rules_table()
RulesTable.__doc__ = (
    "[rules]: a preset and any option of spec/RULES.md; the league's `table` is the "
    "number of players."
)


class LeagueFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """A league file (TOML): the bots, the rules, the clocks and the schedule."""

    league: LeagueTable = msgspec.field(default_factory=LeagueTable)
    rules: RulesTable = msgspec.field(default_factory=RulesTable)  # type: ignore[valid-type]
    time: TimeTable = msgspec.field(default_factory=TimeTable)
    match: MatchTable = msgspec.field(default_factory=MatchTable)
    bot: Annotated[list[BotTable], _meta("The bots: at least 2, one [[bot]] table each.")] = []
    server: ServerLimits = msgspec.field(default_factory=ServerLimits)
    cluster: ClusterTable = msgspec.field(default_factory=ClusterTable)
    schema: Annotated[
        str | UnsetType,
        _meta("Where editors find this file's JSON Schema (Taplo); the referee ignores it."),
    ] = msgspec.field(default=UNSET, name="$schema")


# Keys that older league files use, or that belong elsewhere: each gets its own line.
MOVED = {
    "server.max_connections": (
        "replaced by max_handshakes and max_handshakes_per_address"
        " (logged-in bots no longer count; see spec/PROTOCOL.md, TCP)"
    ),
    **{
        f"rules.{option}": (
            f"in a league, the players of each game are {key} in [league] (2 to 8; "
            f"by default 4, or the number of bots if fewer); remove {option} from [rules]"
        )
        for option, key in LEAGUE_SETS.items()
    },
}


# ------------------------------------------------------------ the JSON Schema


def json_schema() -> dict[str, Any]:
    """The league file's JSON Schema, for editors that check TOML (Taplo)."""
    (top,), components = msgspec.json.schema_components(
        (LeagueFile,), ref_template="#/$defs/{name}"
    )
    for entry in components.values():
        if entry.get("required") == []:  # draft 4 (Taplo's) wants it left out instead
            del entry["required"]
    root = components.pop(top["$ref"].rsplit("/", 1)[1])
    return {
        "$schema": SCHEMA_URL,
        **root,
        "title": "Mexican Train referee league file",
        "$defs": components,
    }


def schema_text() -> str:
    """The schema as stable, indented JSON text ending in a newline."""
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


# ------------------------------------------------------------ the tables and keys


@dataclasses.dataclass(frozen=True)
class Key:
    """One key of the league file: its table, name, type and documentation."""

    table: str  # "league", "bot", ... ("" for the top level)
    name: str
    type: mi.Type  # without its Metadata
    description: str
    default: str | None  # as TOML, or words; None when required
    secret: bool

    @property
    def path(self) -> str:
        """The key as errors name it: `league.table`, `bot[0].name`."""
        if not self.table:
            return self.name
        return (
            f"{self.table}[0].{self.name}" if self.table == "bot" else f"{self.table}.{self.name}"
        )


def tables() -> dict[str, type[msgspec.Struct]]:
    """Each table of the file by its name, in the order of `LeagueFile`."""
    out: dict[str, type[msgspec.Struct]] = {}
    for field in _struct(LeagueFile).fields:
        inner = _bare(field.type)
        if isinstance(inner, mi.ListType):
            inner = _bare(inner.item_type)
        if isinstance(inner, mi.StructType):
            out[field.encode_name] = inner.cls
    return out


def keys(table: str) -> Iterator[Key]:
    """The keys of one table ("" for the top level), in declaration order."""
    cls = LeagueFile if not table else tables()[table]
    for field in _struct(cls).fields:
        description, extra = "", {}
        if isinstance(field.type, mi.Metadata):
            description = (field.type.extra_json_schema or {}).get("description", "")
            extra = field.type.extra or {}
        if field.required:
            default = None
        elif field.default is not msgspec.NODEFAULT:
            default = _toml(field.default)
        elif field.default_factory is not msgspec.NODEFAULT:
            default = _toml(field.default_factory())
        else:
            default = extra.get("default", _NO_DEFAULT)
        yield Key(
            table,
            field.encode_name,
            _bare(field.type),
            description,
            default,
            bool(extra.get("secret")),
        )


@functools.cache  # msgspec reads the annotations again on each call: tens of ms
def _struct(cls: type[msgspec.Struct]) -> mi.StructType:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return info


def _bare(t: mi.Type) -> mi.Type:
    while isinstance(t, mi.Metadata):
        t = t.type
    return t


def kind(t: mi.Type) -> str:
    """What a value of type `t` is, in words: "a whole number, at least 1"."""
    t = _bare(t)
    if isinstance(t, mi.IntType | mi.FloatType):
        noun = "a whole number" if isinstance(t, mi.IntType) else "a number"
        low = t.ge if t.ge is not None else t.gt
        if t.le is not None and low is not None:
            return f"{noun} from {low} to {t.le}"
        if t.ge == 0:
            return f"{noun} (not negative)"
        if t.gt is not None:
            return f"{noun} above {t.gt}"
        return f"{noun} (at least {t.ge})" if t.ge is not None else noun
    if isinstance(t, mi.StrType):
        return "a string"
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.LiteralType):
        return _one_of(t.values)
    if isinstance(t, mi.EnumType):
        return _one_of([m.value for m in t.cls])
    if isinstance(t, mi.ListType):
        return f"an array of {_plural(kind(t.item_type))}"
    if isinstance(t, mi.DictType):
        return f"a table of {_plural(kind(t.value_type))}"
    if isinstance(t, mi.StructType):
        return "a table"
    if isinstance(t, mi.UnionType):
        return " or ".join(kind(x) for x in t.types)
    return type(t).__name__


def _one_of(values: Any) -> str:
    return "one of " + ", ".join(_toml(v) for v in values)


def _plural(text: str) -> str:
    """ "a string" -> "strings", "a number above 0" -> "numbers above 0"."""
    for article in ("a ", "an "):
        if text.startswith(article):
            text = text.removeprefix(article)
            for phrase in ("whole number",):  # an adjective before the noun
                if text.startswith(phrase):
                    return f"{phrase}s{text.removeprefix(phrase)}"
            noun, _, rest = text.partition(" ")
            return f"{noun}s {rest}".strip()
    return f"values that are {text}"


def _toml_kind(value: Any) -> str:
    """What kind of TOML value `value` is, for errors that must not show it."""
    for python, name in (
        (bool, "a boolean"),
        (int, "an integer"),
        (float, "a float"),
        (str, "a string"),
        (datetime.datetime, "a date-time"),
        (datetime.date, "a date"),
        (datetime.time, "a time"),
        (list, "an array"),
        (dict, "a table"),
    ):
        if isinstance(value, python):
            return name
    return type(value).__name__


# ------------------------------------------------------------ errors naming the key

_AT = re.compile(r"(?s)(.*) - at `\$(.*)`")
_STEP = re.compile(r"\.([A-Za-z0-9_$-]+)|\[(\d+)\]|\[\.\.\.\]")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def explain(
    error: msgspec.ValidationError,
    data: dict[str, Any],
    root: type[msgspec.Struct] | None = None,
) -> str:
    """`error` from decoding `data` into `root` (`LeagueFile` unless given: an arena
    file's `ArenaFile`), as one line that names the key the way the file spells it
    (`bot[2].command`), says what it must be and what it is (never a secret's value)."""
    found = _AT.fullmatch(str(error))  # no " - at" for the top level
    message, where = (found[1], found[2]) if found else (str(error), "")
    t: mi.Type = _struct(root if root is not None else LeagueFile)
    value: Any = data
    path = ""
    secret = False
    for step in _STEP.finditer(where):
        name, index = step[1], step[2]
        t_bare = _bare(t)
        if name is not None:
            assert isinstance(t_bare, mi.StructType)
            field = next(f for f in t_bare.fields if f.encode_name == name)
            secret = bool(
                isinstance(field.type, mi.Metadata) and (field.type.extra or {}).get("secret")
            )
            t, value = field.type, value[name]
            path = f"{path}.{name}" if path else name
        elif index is not None:
            t = _element(t_bare)
            value = value[int(index)]
            path = f"{path}[{index}]"
        else:  # a table's value; msgspec does not say which, so find the first bad one
            t = _element(t_bare)
            name, value = _first_bad(value, t)
            path = f"{path}.{_key_text(name)}"
    t_bare = _bare(t)
    unknown = re.fullmatch(r"Object contains unknown field `.*`", message, re.S)
    if unknown and isinstance(t_bare, mi.StructType):
        allowed = [f.encode_name for f in t_bare.fields]
        name = next(k for k in value if k not in allowed)
        key = f"{path}.{_key_text(name)}" if path else _key_text(name)
        if key in MOVED:
            return f"{key}: {MOVED[key]}"
        close = difflib.get_close_matches(name, allowed, n=1) if len(allowed) > 1 else []
        hint = f" (did you mean {close[0]}?)" if close else ""
        return f"{key}: unknown key{hint}; expected one of {', '.join(sorted(allowed))}"
    missing = re.fullmatch(r"Object missing required field `(\w+)`", message)
    if missing:
        return f"{path}.{missing[1]}: missing; every {path.split('[')[0]} table needs it"
    shown = _toml_kind(value) if secret else _toml(value)
    where_text = path or "the file"
    if message.startswith("Expected") and ", got " in message:
        return f"{where_text}: expected {kind(t)}, got {shown}"
    bound = re.fullmatch(r"Expected `\w+` ([<>])=? .*", message)
    if bound:
        size = "small" if bound[1] == ">" else "large"
        return f"{where_text}: {shown} is too {size}; expected {kind(t)}"
    if message.startswith("Invalid enum value"):
        return f"{where_text}: {shown}; expected {kind(t)}"
    return f"{where_text}: {_one_line(message)}"


def _element(t: mi.Type) -> mi.Type:
    """The type of the items of an array (or the values of a table) of type `t`,
    which may be a union holding one array or table type."""
    options = t.types if isinstance(t, mi.UnionType) else (t,)
    for option in options:
        option = _bare(option)
        if isinstance(option, mi.ListType):
            return option.item_type
        if isinstance(option, mi.DictType):
            return option.value_type
    raise AssertionError(f"no items in {t}")


def _first_bad(table: dict[str, Any], t: mi.Type) -> tuple[str, Any]:
    """The first entry of `table` whose value is not of type `t` (or may not be)."""
    for name, value in table.items():
        if _fits(value, t) is not True:
            return name, value
    return next(iter(table.items()))  # not reached while `_fits` agrees with msgspec


def _fits(value: Any, t: mi.Type) -> bool | None:
    """Whether `value` is of the scalar type `t`, bounds included, as msgspec checks
    it; None for a type not known here (the values of a table are strings or numbers)."""
    t = _bare(t)
    if isinstance(t, mi.FloatType):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return all(
            bound is None or test(value, bound)
            for bound, test in (
                (t.gt, operator.gt),
                (t.ge, operator.ge),
                (t.lt, operator.lt),
                (t.le, operator.le),
            )
        )
    if isinstance(t, mi.StrType):
        return isinstance(value, str)
    return None


def _key_text(name: str) -> str:
    """A key as TOML writes it: bare when it can be, else quoted (so it stays one line)."""
    return name if _BARE_KEY.fullmatch(name) else json.dumps(name)


def _one_line(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------ the key reference


def reference_markdown() -> str:
    """The key reference of spec/LEAGUE.md: one table per TOML table, from the Structs."""
    lines: list[str] = []
    for table, cls in tables().items():
        header = f"[[{table}]]" if table == "bot" else f"[{table}]"
        about = _one_line(cls.__doc__ or "").split(": ", 1)[1]
        lines += [f"### `{header}`", "", about[0].upper() + about[1:], ""]
        rows = list(keys(table))
        if table == "rules":
            options = [k.name for k in rows if k.name != "preset"]
            rows = [k for k in rows if k.name == "preset"]
        lines += ["| key | type | default | meaning |", "|---|---|---|---|"]
        for key in rows:
            default = "required" if key.default is None else key.default
            lines.append(
                f"| `{key.name}` | {kind(key.type)} | {_code(default)} | {key.description} |"
            )
        if table == "rules":
            lines += [
                "",
                "Every option of spec/RULES.md (Options) may follow, with the type it has "
                "there; an option left out keeps the preset's value: "
                + ", ".join(f"`{o}`" for o in options)
                + ". Not `players`: the players of each game are `table` in [league] "
                "(`referee rules NAME` prints the table a league file takes: the player "
                "count its options were resolved for is a comment, not a `players` line).",
            ]
        lines.append("")
    top = [k for k in keys("") if k.name not in tables()]
    lines += [
        "### Top level",
        "",
        "| key | type | default | meaning |",
        "|---|---|---|---|",
        *(
            f"| `{k.name}` | {kind(k.type)} | {_code(k.default or '')} | {k.description} |"
            for k in top
        ),
        "",
    ]
    return "\n".join(lines)


def _plain(text: str) -> bool:
    """Whether a default is a TOML value (set in code font) rather than words."""
    return bool(re.fullmatch(r'-?[\d.]+|true|false|nan|inf|"[^"]*"|\[\]|\{\}', text))


def _code(text: str) -> str:
    return f"`{text}`" if _plain(text) else text


def main(root: Path) -> None:
    """Write spec/league.schema.json and the key reference of spec/LEAGUE.md under `root`."""
    (root / "spec" / "league.schema.json").write_text(schema_text(), encoding="utf-8")
    doc = root / "spec" / "LEAGUE.md"
    text = doc.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    doc.write_text(text[:start] + "\n" + reference_markdown() + text[end:], encoding="utf-8")


BEGIN = "<!-- keys: generated by `python -m referee.league.schema`; do not edit -->"
END = "<!-- end of keys -->"

if __name__ == "__main__":
    main(Path(__file__).resolve().parents[2])
