"""Text from outside the referee (`referee.text`): shown escaped on a terminal, the rule
for bot names, and the file names made from names.

`shown` leaves no character a terminal acts on and changes nothing else; `file_stem`
gives every name a short file name of safe characters, another for each name, and
keeps a plain ASCII name as it is. A name is refused wherever one is given on the
command line (`NAME=command`, `--name`) in one line that names it escaped.
"""

from __future__ import annotations

import io
import logging
import re
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.bots.process import parse_bot
from referee.cli import main
from referee.text import (
    ESCAPED_RANGES,
    NAME_MAX,
    STEM_MAX,
    ShownFormatter,
    escaped,
    file_stem,
    markup,
    name_problem,
    shown,
)

PY = sys.executable
CONTROLS = [chr(c) for a, b in ESCAPED_RANGES for c in range(a, b + 1)]
STEM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.~-]*")
# Any text, lone surrogates too; and text without a character `shown` escapes: any
# script, emoji, spaces, backslashes.
ANY = st.text(st.characters(exclude_categories=[]))
ORDINARY = st.text(st.characters(exclude_characters=CONTROLS))


def test_each_control_character_is_shown_as_its_escape() -> None:
    assert shown("\x1b[2J") == "\\x1b[2J"
    assert shown("a\x00b\x07c\x08d\x7f") == "a\\x00b\\x07c\\x08d\\x7f"
    assert shown("line\nnext\rback\ttab") == "line\\nnext\\rback\\ttab"
    assert shown("\u009b31m \u0085") == "\\x9b31m \\x85"
    assert shown("\u202eevil\u202c \u2066x\u2069 \u200f \u061c") == (
        "\\u202eevil\\u202c \\u2066x\\u2069 \\u200f \\u061c"
    )
    assert shown("a\u2028b\u2029") == "a\\u2028b\\u2029"
    assert shown("\ud800") == "\\ud800"  # a lone surrogate: no UTF-8 for it
    assert shown(3) == "3"


@given(ANY)
@settings(max_examples=500, deadline=None)
def test_shown_text_holds_no_control_character(text: str) -> None:
    out = shown(text)
    assert not any(escaped(c) for c in out)
    out.encode("utf-8")  # printable on any UTF-8 terminal: no surrogate is left
    assert "\n" not in out and "\r" not in out  # one line


@given(ORDINARY)
@settings(max_examples=500, deadline=None)
def test_ordinary_text_is_shown_unchanged(text: str) -> None:
    assert shown(text) == text


@given(ORDINARY, st.sampled_from(CONTROLS), ORDINARY)
def test_a_control_character_anywhere_is_escaped_and_the_rest_kept(
    before: str, control: str, after: str
) -> None:
    out = shown(before + control + after)
    assert out.startswith(before) and out.endswith(after)
    assert out[len(before) : len(out) - len(after)].startswith("\\")


def test_markup_escapes_rich_markup_too() -> None:
    assert markup("[bold red]x[/]\x1b") == "\\[bold red]x\\[/]\\x1b"


def test_the_log_formatter_shows_messages_and_tracebacks_escaped() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(ShownFormatter("referee: %(message)s"))
    logger = logging.getLogger("test_text")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("login refused: %s", "\x1b]0;title\x07\nreferee: forged")
        try:
            raise ValueError("bad \x1b[2J")
        except ValueError:
            logger.exception("caught")
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "referee: login refused: \\x1b]0;title\\x07\\nreferee: forged"
    assert lines[1] == "referee: caught"
    assert lines[-1] == "ValueError: bad \\x1b[2J"
    assert "\x1b" not in stream.getvalue()


# ---------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "is empty"),
        ("   ", "is only whitespace"),
        ("\u3000", "is only whitespace"),
        (" lead", "begins or ends with whitespace"),
        ("trail\u00a0", "begins or ends with whitespace"),
        ("x" * (NAME_MAX + 1), f"is {NAME_MAX + 1} characters long; at most {NAME_MAX}"),
        ("nul\x00", "holds control characters (\\x00)"),
        ("\x1b[2Jbell\x07", "holds control characters (\\x07, \\x1b)"),
        ("tab\there", "holds control characters (\\t)"),
        ("\u202eevil", "holds control characters (\\u202e)"),
        ("c1\u0085", "holds control characters (\\x85)"),
    ],
)
def test_a_name_that_cannot_be_a_bots_says_why(name: str, problem: str) -> None:
    assert name_problem(name) == problem


@pytest.mark.parametrize("name", ["a", "greedy", "x" * NAME_MAX, "日本語のボット", "a b", "<x>"])
def test_names_that_are_bots_names(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize(
    ("argument", "said"),
    [
        (
            "\x1b[2J=python bot.py",
            "bot 1: the name '\\x1b[2J' (NAME= of the argument '\\x1b[2J=python bot.py') "
            "holds control characters (\\x1b)",
        ),
        ("a\x00b=python bot.py", "the name 'a\\x00b' (NAME="),
        ("\u202egnp=python bot.py", "holds control characters (\\u202e)"),
        (f"{'n' * 300}=python bot.py", "(300 characters)"),
        (f"{'n' * 300}=python bot.py", "is 300 characters long; at most 64"),
    ],
)
def test_a_bad_name_on_the_command_line_is_refused_naming_it(argument: str, said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)) as caught:
        parse_bot(argument)
    assert not any(escaped(c) for c in str(caught.value))
    assert len(str(caught.value)) < 400  # a long name is cut in the message


def test_a_name_taken_from_a_program_is_botN_when_it_cannot_be_a_name() -> None:
    assert parse_bot("python greedy_bot.py").name == "greedy_bot"
    # Named after the script or the program, never an option or an option's value.
    assert parse_bot("nosuchbot --fast").name == "nosuchbot"
    assert parse_bot("python sample_bots/search_bot.py --budget-ms 20").name == "search_bot"
    assert parse_bot("java -cp build Bot").name == "Bot"
    assert parse_bot(f"python {'x' * 100}.py", 2).name == "bot3"
    assert parse_bot("python 'a\x1bb.py'").name == "bot1"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["play", "\x1b]0;t\x07=python x.py", "b=python y.py"], "the name '\\x1b]0;t\\x07'"),
        (["play", "a\x00=python x.py", "b=python y.py"], "the name 'a\\x00'"),
        (["check-bot", "--name", "\x1b[31mred", "--", PY, "x.py"], "--name '\\x1b[31mred'"),
        (["check-bot", "--name", "", "--", PY, "x.py"], "--name '' is empty"),
        (["check-bot", "--name", "n" * 65, "--", PY, "x.py"], "65 characters long"),
        (
            ["connect", "127.0.0.1:1", "--name", " pad", "--token-file", "t", "--", PY],
            "--name ' pad' begins or ends with whitespace",
        ),
        (["match", "new=python a.py", "\u202ebase=python b.py"], "the name '\\u202ebase'"),
    ],
)
def test_the_commands_refuse_a_bad_name_in_one_line(args: list[str], said: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("referee: error: ") and result.stderr.count("\n") == 1
    assert said in result.stderr, result.stderr
    assert not any(escaped(c) for c in result.stderr.removesuffix("\n"))


# ---------------------------------------------------------------- file names


def test_plain_names_keep_their_file_names() -> None:
    for name in ("greedy", "r1", "py-random", "a_b-c", "a.b", "x" * STEM_MAX):
        assert file_stem(name) == name
    # Not plain: a leading dot or hyphen, a space, markup, anything not ASCII, too long.
    for name in (".a", "-a", "a b", "<x>", "日本", "x" * (STEM_MAX + 1), "random#2"):
        assert file_stem(name) != name and "~" in file_stem(name)


def test_names_alike_get_file_names_of_their_own() -> None:
    names = ["a b", "a-b", "a_b", "a/b", "日本語", "中文名", "<" * 90, "<" * 89, ".a", "a~2E"]
    stems = [file_stem(n) for n in names]
    assert len(set(stems)) == len(stems)
    assert file_stem("a-b") == "a-b" and file_stem("a b").startswith("a-b~")
    assert file_stem("Ünïcödé bot").startswith("Unicode-bot~")


@given(st.text(st.characters(exclude_categories=[]), min_size=1, max_size=NAME_MAX))
@settings(max_examples=500, deadline=None)
def test_a_file_stem_is_short_and_safe(name: str) -> None:
    stem = file_stem(name)
    assert STEM.fullmatch(stem), stem
    assert len(stem) <= STEM_MAX + 9  # a slug, `~` and 8 hexadecimal digits
    assert stem.count("~") <= 1


@given(st.lists(st.text(min_size=1, max_size=NAME_MAX), min_size=2, max_size=8, unique=True))
@settings(max_examples=300, deadline=None)
def test_distinct_names_have_distinct_file_stems(names: list[str]) -> None:
    assert len({file_stem(n) for n in names}) == len(names)
