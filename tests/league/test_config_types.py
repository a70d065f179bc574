"""Every key of a league file, given a value of every wrong type, is one line and exit 2.

The keys are enumerated from the Structs of `referee.league.schema` (a key added
there is covered here without a change), and each is given, through `referee
league` in-process, a value of each TOML kind its type does not take, and values
drawn by hypothesis: wrong scalars, and arrays and tables holding one wrong item.
Nothing may start: the error comes before the output folder is made.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec.inspect as mi
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.cli import main
from referee.league.schema import LEAGUE_SETS, MOVED, keys, tables

PY = sys.executable
RANDOM_BOT = str(Path(__file__).resolve().parents[2] / "sample_bots" / "random_bot.py")

Data = dict[str, Any]
Where = tuple[str | int, ...]  # a key's place in the parsed file: ("bot", 1, "cwd")


def base() -> Data:
    """A good league: four bots at tables of three, a tiny game."""
    return {
        "league": {"name": "t", "table": 3, "deals": 1},
        "rules": {"max_pip": 6, "rounds": "single"},
        "bot": [{"name": n, "command": [PY, RANDOM_BOT]} for n in "abcd"],
    }


def every_key() -> Iterator[tuple[Where, str, mi.Type]]:
    """(where it goes, how errors name it, its type) for every key of every table."""
    named = tables()
    for key in keys(""):
        yield (key.name,), key.name, key.type
    for table in named:
        for key in keys(table):
            if table == "bot":
                yield ("bot", 1, key.name), f"bot[1].{key.name}", key.type
            else:
                yield (table, key.name), f"{table}.{key.name}", key.type


KEYS = list(every_key())

# A value of each TOML kind.
SAMPLES: dict[str, Any] = {
    "string": "x",
    "integer": 7,
    "float": 0.5,
    "boolean": True,
    "datetime": datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
    "date": datetime.date(2026, 1, 2),
    "time": datetime.time(3, 4, 5),
    "array": [1, "x"],
    "table": {"x": 1},
}
SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=12),
    "integer": st.integers(min_value=-(2**63), max_value=2**63 - 1),
    "float": st.floats(),
    "boolean": st.booleans(),
    "datetime": st.datetimes(timezones=st.none() | st.just(datetime.UTC)),
    "date": st.dates(),
    "time": st.times(),
}
ANY_SCALAR = st.one_of(*SCALARS.values())
BARE_KEY = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    **SCALARS,
    "array": st.lists(ANY_SCALAR, max_size=3),
    "table": st.dictionaries(BARE_KEY, ANY_SCALAR, max_size=3),
}


def accepted(t: mi.Type) -> set[str]:
    """The TOML kinds a key of type `t` takes (its items aside)."""
    while isinstance(t, mi.Metadata):
        t = t.type
    if isinstance(t, mi.UnionType):
        return set().union(*(accepted(x) for x in t.types))
    for types, kinds in (
        (mi.IntType, {"integer"}),
        (mi.FloatType, {"integer", "float"}),
        (mi.StrType | mi.LiteralType | mi.EnumType, {"string"}),
        (mi.BoolType, {"boolean"}),
        (mi.ListType, {"array"}),
        (mi.DictType | mi.StructType, {"table"}),
    ):
        if isinstance(t, types):
            return kinds
    raise AssertionError(f"a league file key of type {t}: which TOML kinds does it take?")


def items_of(t: mi.Type) -> tuple[str, mi.Type] | None:
    """("array" or "table", the type of the items) for an array or a table of values."""
    while isinstance(t, mi.Metadata):
        t = t.type
    for option in t.types if isinstance(t, mi.UnionType) else (t,):
        while isinstance(option, mi.Metadata):
            option = option.type
        if isinstance(option, mi.ListType):
            return "array", option.item_type
        if isinstance(option, mi.DictType):
            return "table", option.value_type
    return None


def put(data: Data, where: Where, value: Any) -> Data:
    changed = copy.deepcopy(data)
    target: Any = changed
    for step in where[:-1]:
        target = target.setdefault(step, {}) if isinstance(step, str) else target[step]
    target[where[-1]] = value
    return changed


# ---------------------------------------------------------------- TOML, written


def toml_key(key: str) -> str:
    return key if key.replace("_", "a").replace("-", "a").isalnum() and key.isascii() else q(key)


def q(text: str) -> str:
    # JSON's escapes are TOML's, but TOML wants DEL escaped too.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return {math.inf: "inf", -math.inf: "-inf"}.get(value, repr(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return q(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_doc(data: Data) -> str:
    """`data` as a TOML document: [tables] and [[arrays of tables]] after the plain keys."""

    def is_tables(v: Any) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)

    lines = [
        f"{toml_key(k)} = {toml_value(v)}"
        for k, v in data.items()
        if not isinstance(v, dict) and not is_tables(v)
    ]
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"[{toml_key(k)}]")
            lines += [f"{toml_key(kk)} = {toml_value(vv)}" for kk, vv in v.items()]
        elif is_tables(v):
            for entry in v:
                lines.append(f"[[{toml_key(k)}]]")
                lines += [f"{toml_key(kk)} = {toml_value(vv)}" for kk, vv in entry.items()]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the command line


def refused(data: Data, key: str) -> None:
    """`referee league` on `data` prints one error line naming `key`, exits 2, starts
    nothing."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "league.toml"
        text = toml_doc(data)
        path.write_text(text, encoding="utf-8")
        parsed = tomllib.loads(text)
        # The file says what the test means.
        assert json.dumps(parsed, default=str, sort_keys=True) == json.dumps(
            data, default=str, sort_keys=True
        ), text
        out = Path(folder) / "out"
        result = CliRunner().invoke(
            main, ["league", str(path), "--out", str(out), "--sandbox", "none"]
        )
        assert result.exit_code == 2, (text, result.output, result.exception)
        assert isinstance(result.exception, SystemExit), result.exception
        assert "Traceback" not in result.output
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"referee: error: {key}"), (lines[0], text)
        assert not out.exists()


def test_the_base_league_is_good() -> None:
    # The wrong values below are the only thing wrong with the files they make.
    from referee.league.config import parse_config

    config = parse_config(tomllib.loads(toml_doc(base())), Path("l.toml"), check_programs=False)
    assert len(config.bots) == 4
    assert len(KEYS) > 50 and len({name for _, name, _ in KEYS}) == len(KEYS)


def test_every_key_refuses_every_kind_it_does_not_take() -> None:
    for where, name, t in KEYS:
        for kind, sample in SAMPLES.items():
            if kind not in accepted(t):
                refused(put(base(), where, sample), name)
        nested = items_of(t)
        if nested is not None:
            container, item = nested
            for kind, sample in SAMPLES.items():
                if kind not in accepted(item):
                    value = [sample] if container == "array" else {"k": sample}
                    refused(put(base(), where, value), name)


@st.composite
def wrong(draw: st.DrawFn) -> tuple[Data, str]:
    """A good league with one key given a value of a kind it does not take."""
    where, name, t = draw(st.sampled_from(KEYS))
    nested = items_of(t)
    deep = nested is not None and draw(st.booleans())
    if deep:
        assert nested is not None
        container, item = nested
        kind = draw(st.sampled_from(sorted(set(STRATEGIES) - accepted(item))))
        bad = draw(STRATEGIES[kind])
        if container == "array":
            good = draw(st.lists(STRATEGIES[sorted(accepted(item))[0]], max_size=2))
            value: Any = [*good, bad]
        else:
            value = {"ok": "x", draw(BARE_KEY): bad} if "string" in accepted(item) else {"k": bad}
    else:
        kind = draw(st.sampled_from(sorted(set(STRATEGIES) - accepted(t))))
        value = draw(STRATEGIES[kind])
    return put(base(), where, value), name


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wrong())
def test_a_wrong_value_anywhere_is_one_line_and_exit_2(case: tuple[Data, str]) -> None:
    data, key = case
    refused(data, key)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["", *tables()]), BARE_KEY)
def test_an_unknown_key_in_any_table_is_one_line_and_exit_2(table: str, name: str) -> None:
    known = {k.name for k in keys(table)}
    if name in known or (table and f"{table}.{name}" in MOVED):
        return
    if table == "bot":
        data, key = put(base(), ("bot", 1, name), 1), f"bot[1].{name}: unknown key"
    elif table:
        data, key = put(base(), (table, name), 1), f"{table}.{name}: unknown key"
    else:
        data, key = put(base(), (name,), 1), f"{name}: unknown key"
    refused(data, key)


@pytest.mark.parametrize("key", sorted(MOVED))
def test_a_moved_key_says_where_it_went(key: str) -> None:
    table, name = key.split(".")
    refused(put(base(), (table, name), 3), f"{key}: {MOVED[key]}")
    assert {f"rules.{option}" for option in LEAGUE_SETS} <= set(MOVED)
