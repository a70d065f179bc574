"""The `Rules` value: every option of the rules brief, the presets and the variants.

A `Rules` is checked when it is made, so an impossible table (too many players
for the set, a hand size that leaves no engine) fails here with a `RulesError`
naming the option, never later in the middle of a deal. Standard library only.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Collection, Mapping
from typing import Any

from .tiles import set_size


class RulesError(ValueError):
    """An option, or a combination of options, that cannot be played."""


class HandTable(enum.Enum):
    """Which documented table gives the hand size when `hand_size` is not set."""

    STANDARD = "standard"  # 000 and 004: 15 / 12 / 10 on double-12
    CELKO = "celko"  # 002: 15 / 12 / 11 on double-12
    DENOMINATION = "denomination"  # 003: one tile per denomination for 4 players or fewer


class RoundOrder(enum.Enum):
    """Which engine doubles a game uses, in which order."""

    DESCENDING = "descending"
    ASCENDING = "ascending"
    SINGLE = "single"


class EngineSource(enum.Enum):
    """Where the round's engine double comes from."""

    HOLDER = "holder"  # dealt like any tile; its holder places it (000, 002, 004)
    CENTER = "center"  # taken out of the set before the deal (003)


class FirstPlayer(enum.Enum):
    """Who makes the first turn of a round."""

    AFTER_HOLDER = "after-holder"
    HIGHEST_SINGLE = "highest-single"


class FirstTurn(enum.Enum):
    """How each player's first turn of a round works."""

    SINGLE = "single"  # one tile a turn from the start (004)
    LONG = "long"  # the first turn builds one's own train with any number of tiles (000, 002)
    FAST = "fast"  # everyone builds a first train before turns begin (004 Fast Game)
    DELAYED = "delayed"  # the long first train may be saved until wanted (004 Delayed)


class SatisfyOrder(enum.Enum):
    """Which open double a bound player may satisfy when several are open."""

    ANY = "any"
    REVERSE = "reverse"  # the most recently played open double first (000's variation)
    LAST = "last"  # only the last double played binds, until satisfied (002's double marker)


class FollowUp(enum.Enum):
    """Where the tile after a double may go."""

    ANY = "any"  # anywhere the seat may play (000, 002, 004)
    ON_DOUBLE = "on-double"  # on that double only (003: "a double and a corresponding tile")


class OwnDoubleFollowUp(enum.Enum):
    """Whether a double on one's own side's train must be followed."""

    REQUIRED = "required"  # like any other double
    OPTIONAL = "optional"  # 003: "they don't have the obligation to play an additional tile"


class BindDuration(enum.Enum):
    """How long an open double binds the table (with `doubles_bind`)."""

    UNTIL_SATISFIED = "until-satisfied"  # every turn until someone plays on it (003 Optional)
    NEXT_TURN = "next-turn"  # only the turn after the one it was left open in (003 main text)


# Hand sizes by set and player count, for the STANDARD table. Double-12 is from
# 000 and 004; the other sets keep a boneyard of at least about 15% of the set.
_STANDARD_HANDS: dict[int, dict[int, int]] = {
    6: {2: 7, 3: 6, 4: 5},
    9: {2: 10, 3: 10, 4: 10, 5: 8, 6: 8, 7: 6, 8: 6},
    12: {2: 15, 3: 15, 4: 15, 5: 12, 6: 12, 7: 10, 8: 10},
    15: {2: 15, 3: 15, 4: 15, 5: 14, 6: 14, 7: 12, 8: 12, 9: 11, 10: 11, 11: 10, 12: 10},
    18: {
        **{n: 15 for n in range(2, 7)},
        **{7: 14, 8: 14, 9: 13, 10: 13, 11: 12, 12: 12, 13: 11, 14: 11, 15: 10, 16: 10},
    },
}
_CELKO_OVERRIDES: dict[int, int] = {7: 11, 8: 11}  # 002's table, double-12 only
SETS = (6, 9, 12, 15, 18)
# Upper bounds of two options, so that every number on the wire has a range a bot can
# rely on (spec/PROTOCOL.md, "Integer ranges"; protocol.messages says the same).
DOUBLE_BLANK_MAX = 1000
PENALTY_MAX = set_size(max(SETS)) - 3  # 187: the largest boneyard (two seats, one tile each)


@dataclasses.dataclass(frozen=True, slots=True)
class Rules:
    """Every option of one game; see spec/RULES.md for each option's meaning."""

    max_pip: int = 12
    players: int = 4
    hand_size: int | None = None
    hand_table: HandTable = HandTable.STANDARD
    rounds: RoundOrder = RoundOrder.DESCENDING
    engine_source: EngineSource = EngineSource.HOLDER
    first_player: FirstPlayer = FirstPlayer.AFTER_HOLDER
    first_turn: FirstTurn = FirstTurn.SINGLE
    first_turns_complete: bool = False
    first_train_until_stuck: bool = False
    first_train_draws: bool = True
    mexican_train: bool = True
    mexican_start_restricted: bool = False
    must_play: bool = True
    draw_until_playable: bool = False
    doubles_bind: bool = True
    satisfy_order: SatisfyOrder = SatisfyOrder.ANY
    follow_up: FollowUp = FollowUp.ANY
    own_double_follow_up: OwnDoubleFollowUp = OwnDoubleFollowUp.REQUIRED
    bind_duration: BindDuration = BindDuration.UNTIL_SATISFIED
    any_play_clears_marker: bool = False
    unfinished_own_double_marks: bool = True
    double_blank_score: int = 50
    teams: bool = False
    branching_doubles: bool = False
    swan_drive: bool = False
    announce_one_tile: bool = False
    announce_penalty: int = 2

    def __post_init__(self) -> None:
        _check(self)

    @property
    def hand(self) -> int:
        """The number of tiles dealt to each seat."""
        if self.hand_size is not None:
            return self.hand_size
        return _table_hand(self.max_pip, self.players, self.hand_table)

    @property
    def tile_count(self) -> int:
        """How many tiles the set holds."""
        return set_size(self.max_pip)

    @property
    def engines(self) -> tuple[int, ...]:
        """The engine double of each round, in order."""
        top = self.max_pip
        if self.rounds is RoundOrder.SINGLE:
            return (top,)
        if self.rounds is RoundOrder.ASCENDING:
            return tuple(range(top + 1))
        return tuple(range(top, -1, -1))

    @property
    def team_count(self) -> int:
        """How many scoring sides there are: players, or pairs of partners."""
        return self.players // 2 if self.teams else self.players

    def team_of(self, seat: int) -> int:
        """The scoring side of `seat`; partners sit opposite each other."""
        return seat % (self.players // 2) if self.teams else seat

    def to_dict(self) -> dict[str, Any]:
        """Plain values for every option, hand size resolved; enums by their names."""
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name == "hand_size":
                value = self.hand
            elif isinstance(value, enum.Enum):
                value = value.value
            out[field.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """The inverse of `to_dict`; unknown keys and bad values raise `RulesError`."""
        return _build(data)


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Rules))


def _table_hand(max_pip: int, players: int, table: HandTable) -> int:
    if table is HandTable.DENOMINATION and players <= 4:
        return max_pip + 1
    if table is HandTable.CELKO and max_pip == 12 and players in _CELKO_OVERRIDES:
        return _CELKO_OVERRIDES[players]
    sizes = _STANDARD_HANDS.get(max_pip, {})
    if players not in sizes:
        lo, hi = min(sizes), max(sizes)
        raise RulesError(
            f"players={players}: double-{max_pip} deals {lo} to {hi} players by default; "
            "set hand_size to deal more"
        )
    return sizes[players]


def _check(rules: Rules) -> None:
    if rules.max_pip not in SETS:
        raise RulesError(f"max_pip={rules.max_pip}: the set must be double-6, 9, 12, 15 or 18")
    if rules.players < 2:
        raise RulesError(f"players={rules.players}: a game needs at least 2 players")
    if rules.hand_size is not None and rules.hand_size < 1:
        raise RulesError(f"hand_size={rules.hand_size}: each seat needs at least one tile")
    hand = rules.hand
    if rules.players * hand > rules.tile_count - 1:
        raise RulesError(
            f"hand_size={hand} with players={rules.players} needs {rules.players * hand} tiles "
            f"plus the engine, but double-{rules.max_pip} has {rules.tile_count}"
        )
    if rules.teams and (rules.players < 4 or rules.players % 2):
        raise RulesError(
            f"teams needs an even number of players, 4 or more (players={rules.players})"
        )
    for name, top in (("double_blank_score", DOUBLE_BLANK_MAX), ("announce_penalty", PENALTY_MAX)):
        value = getattr(rules, name)
        if value < 0:
            raise RulesError(f"{name}={value}: must not be negative")
        if value > top:
            raise RulesError(f"{name}={value}: must be at most {top}")
    if rules.first_turns_complete and rules.first_turn is not FirstTurn.LONG:
        raise RulesError(
            "first_turns_complete only applies with first_turn=long "
            f"(first_turn={rules.first_turn.value})"
        )
    for name, default in (("first_train_until_stuck", False), ("first_train_draws", True)):
        if getattr(rules, name) is not default and rules.first_turn is not FirstTurn.LONG:
            raise RulesError(
                f"{name}={str(not default).lower()} only applies with first_turn=long "
                f"(first_turn={rules.first_turn.value})"
            )
    if rules.mexican_start_restricted and not rules.mexican_train:
        raise RulesError("mexican_start_restricted needs mexican_train=true")


def _coerce(name: str, current: object, value: object) -> object:
    """Turn `value` (a Python value or a command-line string) into the type of option `name`."""
    field_type = {f.name: f.type for f in dataclasses.fields(Rules)}[name]
    if isinstance(current, enum.Enum):
        enum_type = type(current)
        if isinstance(value, enum_type):
            return value
        text = str(value).strip().lower().replace("_", "-")
        for member in enum_type:
            if member.value == text:
                return member
        choices = ", ".join(m.value for m in enum_type)
        raise RulesError(f"{name}={value!r}: expected one of {choices}")
    if isinstance(current, bool) or "bool" in str(field_type):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "on", "1"):
            return True
        if text in ("false", "no", "off", "0"):
            return False
        raise RulesError(f"{name}={value!r}: expected true or false")
    if name == "hand_size" and (value is None or str(value).strip().lower() in ("auto", "none")):
        return None
    if isinstance(value, bool):
        raise RulesError(f"{name}={value!r}: expected a whole number")
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise RulesError(f"{name}={value!r}: expected a whole number") from None


PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},
    "masters": {
        "first_turn": FirstTurn.LONG,
        "first_turns_complete": True,
        "first_train_until_stuck": True,
        "first_train_draws": False,
        "unfinished_own_double_marks": False,
    },
    "celko": {
        "hand_table": HandTable.CELKO,
        "first_turn": FirstTurn.LONG,
        "mexican_start_restricted": True,
        "announce_one_tile": True,
        "satisfy_order": SatisfyOrder.LAST,
        "any_play_clears_marker": True,
        "unfinished_own_double_marks": False,
    },
    "private-trains": {
        "mexican_train": False,
        "hand_table": HandTable.DENOMINATION,
        "engine_source": EngineSource.CENTER,
        "unfinished_own_double_marks": False,
        "first_player": FirstPlayer.HIGHEST_SINGLE,
        "follow_up": FollowUp.ON_DOUBLE,
        "own_double_follow_up": OwnDoubleFollowUp.OPTIONAL,
        "bind_duration": BindDuration.NEXT_TURN,
    },
}

PRESET_SOURCES: dict[str, str] = {
    "standard": "004 (the encyclopedic Mexican Train article), main rules",
    "masters": "000 (Masters Traditional Games)",
    "celko": "002 (Joe Celko on the Cardinal Industries rules)",
    "private-trains": "003 (Private Trains / Domino Trains)",
}

_LONG_ONLY: dict[str, Any] = {
    "first_turns_complete": False,
    "first_train_until_stuck": False,
    "first_train_draws": True,
}

VARIANTS: dict[str, dict[str, Any]] = {
    "teams": {"teams": True},
    "branching-doubles": {"branching_doubles": True},
    "swan-drive": {"swan_drive": True},
    # The options of the long first turn go back to their defaults with the turn.
    "fast-first-turn": {"first_turn": FirstTurn.FAST, **_LONG_ONLY},
    "delayed-first-turn": {"first_turn": FirstTurn.DELAYED, **_LONG_ONLY},
    "announce": {"announce_one_tile": True},
    # 003's Optional Rule: "all other plays are suspended ... until the double has been
    # played upon"; a no-op where the preset already binds until satisfied.
    "optional-rule": {"bind_duration": BindDuration.UNTIL_SATISFIED},
}


def preset(name: str = "standard", **overrides: Any) -> Rules:
    """The rules of preset `name`, optionally `+variant`s, with `overrides` applied last.

    `preset("celko", players=6)`, `preset("standard+teams+swan-drive")`.
    """
    base, *variants = name.strip().split("+")
    if base not in PRESETS:
        raise RulesError(f"unknown preset {base!r}; presets are: {', '.join(PRESETS)}")
    options: dict[str, Any] = dict(PRESETS[base])
    for variant in variants:
        if variant not in VARIANTS:
            raise RulesError(f"unknown variant {variant!r}; variants are: {', '.join(VARIANTS)}")
        options.update(VARIANTS[variant])
    options.update(overrides)
    return _build(options)


def _build(options: Mapping[str, Any]) -> Rules:
    # Construct once with every change, so a combination is only checked whole.
    defaults = {f.name: f.default for f in dataclasses.fields(Rules)}
    changes: dict[str, Any] = {}
    for key, value in options.items():
        name = key.replace("-", "_")
        if name not in OPTION_NAMES:
            raise RulesError(f"unknown option {key!r}; options are: {', '.join(OPTION_NAMES)}")
        changes[name] = _coerce(name, defaults[name], value)
    return Rules(**changes)


def to_toml(rules: Rules, omit: Collection[str] = ()) -> str:
    """The resolved options as a TOML table, one `key = value` a line, but those in `omit`."""
    lines = ["[rules]"]
    for key, value in rules.to_dict().items():
        if key in omit:
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        else:
            text = f'"{value}"'
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"
