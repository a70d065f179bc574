"""The `## Traceability` tables of spec/RULES.md stay true.

One table per preset traces its seed sentence by sentence: a quote, the option
values or decision that implement it, and the scenario tests that show it. These
tests check each quote against its seed, each option and value against
`referee.rules`, and each test name against the test files, so a renamed test,
a changed preset or a misquoted seed fails here.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import re
from functools import cache
from pathlib import Path

import pytest

from referee.rules import OPTION_NAMES, PRESETS, VARIANTS, Rules, preset

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "RULES.md"
# The seeds live beside the project, not in it (spec/RULES.md: `../shared/seeds/`).
SEEDS = ROOT.parent / "shared" / "seeds"

CUT = "…"
MAX_WORDS = 15
MOVES = ("play", "draw", "pass", "end")
HEADING = re.compile(r"^### `(?P<preset>[a-z-]+)`.*\bseed (?P<seed>\d{3})$")
SPAN = re.compile(r"`([^`]*)`")
ASSIGNMENT = re.compile(r"^(?P<name>[a-z_]+) = (?P<value>.+)$")
TEST_REF = re.compile(r"^tests/rules/(?P<file>test_\w+\.py)::(?P<name>test_\w+)$")
# Typographic quotes in the seeds, to compare with the quotes typed in the table.
QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})


@dataclasses.dataclass(frozen=True)
class Row:
    preset: str
    seed: str
    line: int  # in spec/RULES.md, for the failure messages
    quote: str
    implemented: str
    shown: str

    @property
    def where(self) -> str:
        return f"RULES.md line {self.line} ({self.preset})"


@cache
def rows() -> tuple[Row, ...]:
    lines = SPEC.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Traceability")
    found: list[Row] = []
    table: tuple[str, str] | None = None
    for number, line in enumerate(lines[start + 1 :], start + 2):
        if line.startswith("## "):
            break
        if line.startswith("### "):
            match = HEADING.match(line)
            assert match, f"RULES.md line {number}: a table heading names a preset and its seed"
            table = (match["preset"], match["seed"])
            continue
        if not line.startswith("|") or table is None:
            continue
        if set(line) <= set("|-"):
            continue  # the rule under the header
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, f"RULES.md line {number}: a row has three cells"
        if cells[1] == "implemented by":
            continue  # the header
        found.append(Row(*table, number, *cells))
    return tuple(found)


def normalise(text: str) -> str:
    return " ".join(text.translate(QUOTES).split())


def quote_text(row: Row) -> str:
    """The quote without its quotation marks and without the cut marks at its ends."""
    cell = row.quote
    assert len(cell) > 2 and cell[0] == cell[-1] == '"', f"{row.where}: quote in double quotes"
    return cell[1:-1].strip(CUT).strip()


@cache
def seed_text(number: str) -> str:
    (path,) = SEEDS.glob(f"{number}_*.txt")
    return normalise(path.read_text(encoding="utf-8"))


@cache
def defined_tests(file: str) -> frozenset[str]:
    path = ROOT / "tests" / "rules" / file
    if not path.exists():
        return frozenset()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    )


def spans(cell: str) -> list[tuple[str, str]]:
    """Each code span of a cell with the text before it."""
    return [(cell[: m.start()], m[1]) for m in SPAN.finditer(cell)]


def parse_value(text: str) -> object:
    if len(text) > 1 and text[0] == text[-1] == '"':
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    if text.isdigit():
        return int(text)
    return None  # not a value an option can take; reported by the caller


def fits(name: str, value: object) -> bool:
    """True when `value` is of the kind option `name` takes: an enum's value, a bool, a number."""
    default = {f.name: f.default for f in dataclasses.fields(Rules)}[name]
    if isinstance(default, enum.Enum):
        return value in {m.value for m in type(default)}
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, str):
        return isinstance(value, str)
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------- the tables


def test_every_preset_has_one_table_with_rows() -> None:
    tables: dict[str, set[str]] = {}
    for row in rows():
        tables.setdefault(row.preset, set()).add(row.seed)
    assert sorted(tables) == sorted(PRESETS)
    assert all(len(seeds) == 1 for seeds in tables.values()), tables


def test_quotes_are_short_and_cut_only_at_their_ends() -> None:
    problems = []
    for row in rows():
        text = quote_text(row)
        if CUT in text:
            problems.append(f"{row.where}: {CUT} inside the quote: cuts go at the ends only")
        if len(text.split()) > MAX_WORDS:
            problems.append(f"{row.where}: {len(text.split())} words, more than {MAX_WORDS}")
    assert not problems, "\n".join(problems)


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"the seeds are not at {SEEDS}")
def test_quotes_are_verbatim_in_their_seed() -> None:
    problems = [
        f"{row.where}: not in seed {row.seed}: {quote_text(row)!r}"
        for row in rows()
        if normalise(quote_text(row)) not in seed_text(row.seed)
    ]
    assert not problems, "\n".join(problems)


def test_every_row_names_existing_scenario_tests() -> None:
    problems = []
    for row in rows():
        named = [text for _, text in spans(row.shown)]
        rest = SPAN.sub("", row.shown).replace("<br>", "").replace(",", "").strip()
        if not named or rest:
            problems.append(f"{row.where}: the last cell holds only `tests/rules/...::test_...`")
        for ref in named:
            match = TEST_REF.match(ref)
            if not match:
                problems.append(f"{row.where}: {ref!r} is not tests/rules/FILE.py::test_name")
            elif match["name"] not in defined_tests(match["file"]):
                problems.append(f"{row.where}: no test {ref}")
    assert not problems, "\n".join(problems)


def test_options_named_exist_and_hold_the_values_written() -> None:
    # "option `x = v`" is a value the preset does not take: it only has to be a value
    # of x. Any other `x = v` is the value of the preset with the row's variants.
    known = {*OPTION_NAMES, *PRESETS, *VARIANTS, *MOVES}
    problems = []
    for row in rows():
        cell = row.implemented
        variants = [text for before, text in spans(cell) if re.search(r"\bvariant\s*$", before)]
        for variant in variants:
            if variant not in VARIANTS:
                problems.append(f"{row.where}: no variant {variant!r}")
        for before, text in spans(cell):
            match = ASSIGNMENT.match(text)
            if not match:
                if text not in known and text not in variants:
                    problems.append(f"{row.where}: `{text}` is no option, preset, variant or move")
                continue
            name, value = match["name"], parse_value(match["value"])
            if name not in OPTION_NAMES:
                problems.append(f"{row.where}: no option {name!r}")
                continue
            if value is None or not fits(name, value):
                problems.append(f"{row.where}: {match['value']} is not a value of {name}")
                continue
            if re.search(r"\boption\s*$", before):
                continue
            full = "+".join([row.preset, *(v for v in variants if v in VARIANTS)])
            actual = preset(full).to_dict()[name]
            if actual != value:
                problems.append(f"{row.where}: {full} has {name} = {actual!r}, not {value!r}")
    assert not problems, "\n".join(problems)
