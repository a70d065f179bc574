"""`Rules`, `preset` and `RulesError`: the options, presets and variants of spec/RULES.md."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from referee.rules import (
    OPTION_NAMES,
    PRESETS,
    VARIANTS,
    BindDuration,
    EngineSource,
    FirstPlayer,
    FirstTurn,
    FollowUp,
    HandTable,
    OwnDoubleFollowUp,
    RoundOrder,
    Rules,
    RulesError,
    SatisfyOrder,
    preset,
    to_toml,
)

SPEC = Path(__file__).resolve().parents[2] / "spec" / "RULES.md"

# The presets table of spec/RULES.md, written out by hand.
MASTERS: dict[str, Any] = {
    "first_turn": FirstTurn.LONG,
    "first_turns_complete": True,
    "first_train_until_stuck": True,
    "first_train_draws": False,
    "unfinished_own_double_marks": False,
}
CELKO: dict[str, Any] = {
    "hand_table": HandTable.CELKO,
    "first_turn": FirstTurn.LONG,
    "mexican_start_restricted": True,
    "announce_one_tile": True,
    "satisfy_order": SatisfyOrder.LAST,
    "any_play_clears_marker": True,
    "unfinished_own_double_marks": False,
}
PRIVATE: dict[str, Any] = {
    "mexican_train": False,
    "hand_table": HandTable.DENOMINATION,
    "engine_source": EngineSource.CENTER,
    "unfinished_own_double_marks": False,
    "first_player": FirstPlayer.HIGHEST_SINGLE,
    "follow_up": FollowUp.ON_DOUBLE,
    "own_double_follow_up": OwnDoubleFollowUp.OPTIONAL,
    "bind_duration": BindDuration.NEXT_TURN,
}
EXPECTED_PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},
    "masters": MASTERS,
    "celko": CELKO,
    "private-trains": PRIVATE,
}
# The options of the long first turn, back to their defaults with another first turn.
LONG_ONLY_DEFAULTS: dict[str, Any] = {
    "first_turns_complete": False,
    "first_train_until_stuck": False,
    "first_train_draws": True,
}
EXPECTED_VARIANTS: dict[str, dict[str, Any]] = {
    "teams": {"teams": True},
    "branching-doubles": {"branching_doubles": True},
    "swan-drive": {"swan_drive": True},
    "fast-first-turn": {"first_turn": FirstTurn.FAST, **LONG_ONLY_DEFAULTS},
    "delayed-first-turn": {"first_turn": FirstTurn.DELAYED, **LONG_ONLY_DEFAULTS},
    "announce": {"announce_one_tile": True},
    "optional-rule": {"bind_duration": BindDuration.UNTIL_SATISFIED},
}

# The standard hand table of spec/RULES.md: set -> {players: tiles}.
STANDARD_HANDS: dict[int, dict[int, int]] = {
    6: {2: 7, 3: 6, 4: 5},
    9: {2: 10, 3: 10, 4: 10, 5: 8, 6: 8, 7: 6, 8: 6},
    12: {2: 15, 3: 15, 4: 15, 5: 12, 6: 12, 7: 10, 8: 10},
    15: {2: 15, 3: 15, 4: 15, 5: 14, 6: 14, 7: 12, 8: 12, 9: 11, 10: 11, 11: 10, 12: 10},
    18: {
        **dict.fromkeys(range(2, 7), 15),
        **{7: 14, 8: 14, 9: 13, 10: 13, 11: 12, 12: 12, 13: 11, 14: 11, 15: 10, 16: 10},
    },
}
HAND_CASES = [(pip, n, k) for pip, table in STANDARD_HANDS.items() for n, k in table.items()]


def _error(name: str = "standard", **overrides: Any) -> str:
    with pytest.raises(RulesError) as caught:
        preset(name, **overrides)
    message = str(caught.value)
    assert "\n" not in message, "one line, for the command line"
    return message


# ---------------------------------------------------------------- presets and variants


def test_defaults_are_the_spec_table() -> None:
    rules = Rules()
    assert rules.to_dict() == {
        "max_pip": 12,
        "players": 4,
        "hand_size": 15,
        "hand_table": "standard",
        "rounds": "descending",
        "engine_source": "holder",
        "first_player": "after-holder",
        "first_turn": "single",
        "first_turns_complete": False,
        "first_train_until_stuck": False,
        "first_train_draws": True,
        "mexican_train": True,
        "mexican_start_restricted": False,
        "must_play": True,
        "draw_until_playable": False,
        "doubles_bind": True,
        "satisfy_order": "any",
        "follow_up": "any",
        "own_double_follow_up": "required",
        "bind_duration": "until-satisfied",
        "any_play_clears_marker": False,
        "unfinished_own_double_marks": True,
        "double_blank_score": 50,
        "teams": False,
        "branching_doubles": False,
        "swan_drive": False,
        "announce_one_tile": False,
        "announce_penalty": 2,
    }
    assert tuple(rules.to_dict()) == OPTION_NAMES


def test_option_names_match_the_spec_options_table() -> None:
    text = SPEC.read_text(encoding="utf-8")
    section = text.split("## Options", 1)[1].split("###", 1)[0]
    documented = re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE)
    assert documented == list(OPTION_NAMES)


def test_the_presets_and_variants_are_the_documented_ones() -> None:
    assert list(PRESETS) == list(EXPECTED_PRESETS)
    assert list(VARIANTS) == list(EXPECTED_VARIANTS)


@pytest.mark.parametrize("name", list(EXPECTED_PRESETS))
def test_preset_sets_exactly_its_options(name: str) -> None:
    rules = preset(name)
    assert rules == Rules(**EXPECTED_PRESETS[name])
    changed = {f.name for f in dataclasses.fields(Rules) if getattr(rules, f.name) != f.default}
    assert changed == set(EXPECTED_PRESETS[name])


def test_default_preset_is_standard() -> None:
    assert preset() == preset("standard") == Rules()


@pytest.mark.parametrize("variant", list(EXPECTED_VARIANTS))
@pytest.mark.parametrize("name", list(EXPECTED_PRESETS))
def test_variant_applies_after_the_preset(name: str, variant: str) -> None:
    rules = preset(f"{name}+{variant}")
    assert rules == Rules(**{**EXPECTED_PRESETS[name], **EXPECTED_VARIANTS[variant]})


def test_variants_combine_in_order() -> None:
    rules = preset("masters+teams+swan-drive")
    assert rules == Rules(**MASTERS, teams=True, swan_drive=True)
    later = preset("standard+fast-first-turn+delayed-first-turn")
    assert later.first_turn is FirstTurn.DELAYED
    fast = preset("masters+fast-first-turn")
    assert not fast.first_turns_complete and not fast.first_train_until_stuck
    assert fast.first_train_draws


def test_spaces_around_the_name_are_ignored() -> None:
    assert preset("  celko+teams ") == preset("celko+teams")


# ---------------------------------------------------------------- overrides


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"players": "6"}, {"players": 6}),
        ({"players": 6}, {"players": 6}),
        ({"players": " 6 "}, {"players": 6}),
        ({"max_pip": "9"}, {"max_pip": 9}),
        ({"hand_size": "12"}, {"hand_size": 12}),
        ({"hand_size": "auto"}, {"hand_size": None}),
        ({"hand_size": None}, {"hand_size": None}),
        ({"hand-size": "12"}, {"hand_size": 12}),
        ({"teams": "true"}, {"teams": True}),
        ({"teams": "yes"}, {"teams": True}),
        ({"teams": "on"}, {"teams": True}),
        ({"teams": "1"}, {"teams": True}),
        ({"teams": True}, {"teams": True}),
        ({"mexican_train": "false"}, {"mexican_train": False}),
        ({"mexican_train": "No"}, {"mexican_train": False}),
        ({"mexican_train": "off"}, {"mexican_train": False}),
        ({"mexican_train": "0"}, {"mexican_train": False}),
        ({"mexican_train": False}, {"mexican_train": False}),
        ({"first_turn": "long"}, {"first_turn": FirstTurn.LONG}),
        ({"first_turn": "LONG"}, {"first_turn": FirstTurn.LONG}),
        ({"first_turn": FirstTurn.FAST}, {"first_turn": FirstTurn.FAST}),
        ({"first_player": "highest_single"}, {"first_player": FirstPlayer.HIGHEST_SINGLE}),
        ({"engine_source": "center"}, {"engine_source": EngineSource.CENTER}),
        ({"rounds": "single"}, {"rounds": RoundOrder.SINGLE}),
        ({"hand_table": "denomination"}, {"hand_table": HandTable.DENOMINATION}),
        ({"satisfy_order": "reverse"}, {"satisfy_order": SatisfyOrder.REVERSE}),
        ({"follow_up": "on-double"}, {"follow_up": FollowUp.ON_DOUBLE}),
        ({"follow_up": "on_double"}, {"follow_up": FollowUp.ON_DOUBLE}),
        (
            {"own_double_follow_up": "optional"},
            {"own_double_follow_up": OwnDoubleFollowUp.OPTIONAL},
        ),
        ({"bind_duration": "next-turn"}, {"bind_duration": BindDuration.NEXT_TURN}),
        ({"bind-duration": "until-satisfied"}, {}),
        ({"double_blank_score": "0"}, {"double_blank_score": 0}),
        ({"announce_penalty": 3}, {"announce_penalty": 3}),
    ],
)
def test_overrides_take_strings_and_python_values(
    overrides: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert preset("standard", **overrides) == Rules(**expected)


def test_overrides_apply_after_preset_and_variants() -> None:
    rules = preset("celko+fast-first-turn", first_turn="long", announce_one_tile="false")
    assert rules.first_turn is FirstTurn.LONG
    assert rules.announce_one_tile is False
    assert rules.hand_table is HandTable.CELKO


@pytest.mark.parametrize("rounds", list(RoundOrder))
def test_rounds_give_the_engines(rounds: RoundOrder) -> None:
    engines = Rules(rounds=rounds).engines
    expected = {
        RoundOrder.DESCENDING: tuple(range(12, -1, -1)),
        RoundOrder.ASCENDING: tuple(range(13)),
        RoundOrder.SINGLE: (12,),
    }[rounds]
    assert engines == expected


def test_teams_partners_sit_opposite() -> None:
    rules = preset("standard+teams", players=6)
    assert rules.team_count == 3
    assert [rules.team_of(s) for s in range(6)] == [0, 1, 2, 0, 1, 2]
    solo = preset("standard", players=6)
    assert solo.team_count == 6
    assert [solo.team_of(s) for s in range(6)] == list(range(6))


# ---------------------------------------------------------------- errors


def test_rules_error_is_a_value_error() -> None:
    assert issubclass(RulesError, ValueError)


def test_unknown_preset_is_named() -> None:
    message = _error("nosuch")
    assert "nosuch" in message and "preset" in message
    assert "standard" in message  # lists what exists


def test_unknown_variant_is_named() -> None:
    message = _error("standard+nosuch")
    assert "nosuch" in message and "variant" in message
    assert "swan-drive" in message


def test_unknown_option_is_named() -> None:
    message = _error(nosuch_option="1")
    assert "nosuch_option" in message and "option" in message


def test_bad_bool_names_the_option() -> None:
    message = _error(teams="maybe")
    assert "teams" in message and "maybe" in message
    assert "true or false" in message


def test_bad_enum_names_the_option_and_the_choices() -> None:
    message = _error(first_turn="sideways")
    assert "first_turn" in message and "sideways" in message
    for choice in ("single", "long", "fast", "delayed"):
        assert choice in message


@pytest.mark.parametrize(("option", "value"), [("players", "four"), ("max_pip", "1.5")])
def test_bad_int_names_the_option(option: str, value: str) -> None:
    message = _error(**{option: value})
    assert option in message and value in message


def test_bool_is_not_a_number() -> None:
    assert "players" in _error(players=True)


def test_too_many_players_for_the_set_needs_hand_size() -> None:
    message = _error(players=9)
    assert "players=9" in message and "hand_size" in message
    assert preset("standard", players=9, hand_size=9).hand == 9  # 81 + engine <= 91


def test_hand_size_that_leaves_no_engine() -> None:
    message = _error(players=4, hand_size=23)  # 92 > 90 tiles besides the engine
    assert "hand_size=23" in message and "players=4" in message
    assert preset("standard", players=4, hand_size=22).hand == 22  # 88 leaves 3


@pytest.mark.parametrize("players", [2, 3, 5, 7])
def test_teams_need_an_even_number_of_four_or_more(players: int) -> None:
    message = _error("standard+teams", players=players)
    assert "teams" in message and f"players={players}" in message


@pytest.mark.parametrize("max_pip", [0, 5, 10, 13, 20])
def test_only_the_five_sets(max_pip: int) -> None:
    message = _error(max_pip=max_pip)
    assert f"max_pip={max_pip}" in message


def test_max_pip_10_is_refused_when_constructed_directly() -> None:
    with pytest.raises(RulesError, match="max_pip=10"):
        Rules(max_pip=10)


@pytest.mark.parametrize(
    ("overrides", "option"),
    [
        ({"players": 1}, "players"),
        ({"hand_size": 0}, "hand_size"),
        ({"double_blank_score": -1}, "double_blank_score"),
        ({"announce_penalty": -1}, "announce_penalty"),
        ({"double_blank_score": 1001}, "double_blank_score=1001: must be at most 1000"),
        ({"announce_penalty": 188}, "announce_penalty=188: must be at most 187"),
        ({"first_turns_complete": True}, "first_turns_complete"),
        ({"first_train_until_stuck": True}, "first_train_until_stuck"),
        ({"first_train_draws": False}, "first_train_draws"),
        ({"first_turn": "delayed", "first_train_draws": False}, "first_train_draws"),
        ({"mexican_start_restricted": True, "mexican_train": False}, "mexican_start_restricted"),
    ],
)
def test_other_impossible_combinations_name_the_option(
    overrides: dict[str, Any], option: str
) -> None:
    assert option in _error(**overrides)


def test_denomination_on_double6_for_four_leaves_no_engine() -> None:
    message = _error("private-trains", max_pip=6, players=4)  # 4 x 7 = 28 = the whole set
    assert "hand_size=7" in message


def test_from_dict_refuses_unknown_keys_and_bad_values() -> None:
    with pytest.raises(RulesError, match="colour"):
        Rules.from_dict({"colour": "red"})
    with pytest.raises(RulesError, match="rounds"):
        Rules.from_dict({"rounds": "sideways"})


# ---------------------------------------------------------------- hand sizes


@pytest.mark.parametrize(("max_pip", "players", "hand"), HAND_CASES)
def test_standard_hand_table(max_pip: int, players: int, hand: int) -> None:
    rules = Rules(max_pip=max_pip, players=players)
    assert rules.hand == hand
    assert rules.tile_count == (max_pip + 1) * (max_pip + 2) // 2
    assert rules.to_dict()["hand_size"] == hand


@pytest.mark.parametrize(("max_pip", "players", "hand"), HAND_CASES)
def test_celko_hand_table(max_pip: int, players: int, hand: int) -> None:
    expected = 11 if (max_pip, players) in ((12, 7), (12, 8)) else hand
    assert Rules(max_pip=max_pip, players=players, hand_table=HandTable.CELKO).hand == expected


@pytest.mark.parametrize(("max_pip", "players", "hand"), HAND_CASES)
def test_denomination_hand_table(max_pip: int, players: int, hand: int) -> None:
    expected = max_pip + 1 if players <= 4 else hand
    if players * expected > (max_pip + 1) * (max_pip + 2) // 2 - 1:
        with pytest.raises(RulesError, match="hand_size"):
            Rules(max_pip=max_pip, players=players, hand_table=HandTable.DENOMINATION)
        return
    rules = Rules(max_pip=max_pip, players=players, hand_table=HandTable.DENOMINATION)
    assert rules.hand == expected


@pytest.mark.parametrize("max_pip", sorted(STANDARD_HANDS))
def test_one_player_beyond_the_table_needs_hand_size(max_pip: int) -> None:
    players = max(STANDARD_HANDS[max_pip]) + 1
    message = _error(max_pip=max_pip, players=players)
    assert f"players={players}" in message and "hand_size" in message


def test_hand_size_overrides_the_table() -> None:
    assert preset("celko", players=7, hand_size=9).hand == 9
    assert preset("private-trains", hand_size=10).hand == 10


# ---------------------------------------------------------------- round trips


ALL_NAMES = [
    *EXPECTED_PRESETS,
    *(f"{p}+{v}" for p in EXPECTED_PRESETS for v in EXPECTED_VARIANTS),
    "masters+teams+swan-drive",
]


@pytest.mark.parametrize("name", ALL_NAMES)
def test_to_dict_from_dict_round_trip(name: str) -> None:
    rules = preset(name)
    data = rules.to_dict()
    again = Rules.from_dict(data)
    assert again.to_dict() == data
    # hand_size comes back explicit, so only the resolved hand is compared for it.
    assert dataclasses.replace(again, hand_size=None) == rules
    assert again.hand == rules.hand


@pytest.mark.parametrize("name", ALL_NAMES)
def test_to_toml_parses_back_to_the_dict(name: str) -> None:
    rules = preset(name, players=6) if "teams" in name else preset(name)
    text = to_toml(rules)
    parsed = tomllib.loads(text)
    assert list(parsed) == ["rules"]
    assert parsed["rules"] == rules.to_dict()
    assert Rules.from_dict(parsed["rules"]).to_dict() == rules.to_dict()


def test_from_dict_fills_defaults() -> None:
    assert Rules.from_dict({}) == Rules()
    assert Rules.from_dict({"players": "5", "swan-drive": "true"}) == Rules(
        players=5, swan_drive=True
    )
