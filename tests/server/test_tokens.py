"""Login tokens of at least 128 bits: the rule, `referee token (new NAME)`, the
league file's `token_sha256`, and the refusals.

A token of hexadecimal digits only counts 4 bits a character, one of URL-safe
base64 6, the `mxt_` prefix of the tokens the referee makes not at all; anything
else is refused. A weak token is refused when the league file is loaded (wherever
the token comes from: the file, an environment variable, a token file) and by
`referee connect`, in one line that names the bot and the files and says how to
make a good one, and never shows the token.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.bots.tokens import MIN_BITS, TOKEN_PATTERN, token_bits, token_problem
from referee.cli import main
from referee.league.config import ConfigError, load_config

WEAK = "short-secret-1"  # 14 characters of URL-safe base64: 84 bits


@pytest.mark.parametrize(
    ("token", "bits"),
    [
        ("0" * 31, 124),
        ("0123456789abcdefABCDEF0123456789", 128),  # hexadecimal either case: 4 bits each
        ("g" * 21, 126),
        ("g" * 22, 132),
        ("tok-C_" + "0" * 16, 132),  # one character outside hex: 6 bits each
        ("N6Q8_O8NQ6iOOirKmFvJmf6eTgV-0owmNEdhRMplc2w", 258),
        ("mxt_N6Q8_O8NQ6iOOirKmFvJmf6eTgV-0owmNEdhRMplc2w", 258),  # the prefix counts 0
        ("mxt_" + "g" * 21, 126),
        ("mxt_" + "0" * 32, 128),
    ],
)
def test_bits_are_counted_by_length_and_alphabet(token: str, bits: int) -> None:
    assert token_bits(token) == bits
    problem = token_problem(token)
    assert (problem is None) == (bits >= MIN_BITS)
    if problem is not None:
        assert token not in problem
        size = f"mxt_ and {len(token) - 4} " if token.startswith("mxt_") else f"{len(token)} "
        assert size in problem and f"{bits} bits" in problem
        assert "referee token new NAME" in problem


@pytest.mark.parametrize(
    "token",
    [
        "a long pass phrase with spaces",
        "c3VwZXJzZWNyZXRzdXBlcnNlY3JldA==",
        "Zx81mQ0bLr4uVt7hKd2w+/",
    ],
)
def test_a_character_outside_url_safe_base64_is_refused(token: str) -> None:
    assert token_bits(token) is None
    problem = token_problem(token)
    assert problem is not None and "characters other than letters, digits, - and _" in problem
    assert token not in problem


def test_referee_token_prints_a_new_token_the_rule_accepts() -> None:
    printed = [CliRunner().invoke(main, ["token"]) for _ in range(2)]
    assert all(r.exit_code == 0 and r.stderr == "" for r in printed)
    tokens = [r.stdout.removesuffix("\n") for r in printed]
    assert all(re.fullmatch(TOKEN_PATTERN, t) and token_bits(t) == 258 for t in tokens)
    assert tokens[0] != tokens[1]


def test_referee_token_new_prints_the_token_and_on_stderr_its_league_file_line() -> None:
    result = CliRunner().invoke(main, ["token", "new", "mine"])
    assert result.exit_code == 0, result.output
    token = result.stdout.removesuffix("\n")
    # The prefix and 43 characters of URL-safe base64 (32 bytes): what a scanner matches.
    assert re.fullmatch(TOKEN_PATTERN, token) and token_bits(token) == 258
    digest = hashlib.sha256(token.encode()).hexdigest()
    assert result.stderr == (
        "referee token: add to the [[bot]] table of 'mine' in the league file: "
        f'token_sha256 = "{digest}"\n'
    )
    assert token not in result.stderr


@pytest.mark.parametrize("name", ["", " mine", "a\x1bb", "a b", "a/b", "x" * 65])
def test_referee_token_new_refuses_a_name_no_bot_can_have(name: str) -> None:
    result = CliRunner().invoke(main, ["token", "new", name])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("referee: error: NAME '") and result.stderr.count("\n") == 1
    assert "\x1b" not in result.stderr.replace("\\x1b", "")


def test_a_league_file_may_give_the_tokens_sha256_instead_and_a_bad_one_is_named(
    tmp_path: Path,
) -> None:
    token = "mxt_" + "A" * 43
    digest = hashlib.sha256(token.encode()).hexdigest()
    path = tmp_path / "league.toml"
    base = '[league]\nduplicate = false\n[[bot]]\nname = "a"\ncommand = "true"\n'
    base += '[[bot]]\nname = "c"\ntransport = "tcp"\n'
    path.write_text(base + f'token_sha256 = "{digest.upper()}"\n')
    bot = load_config(path).bots[1]
    assert bot.token is None and bot.token_sha256 == digest
    assert bot.token_digest == hashlib.sha256(token.encode()).digest()
    for value in (token, digest[:63], digest + "0", "z" * 64):
        path.write_text(base + f'token_sha256 = "{value}"\n')
        with pytest.raises(ConfigError) as info:
            load_config(path)
        said = str(info.value)
        assert said.startswith(f"{path}: bot[1].token_sha256 (bot 'c'): expected 64 hexadecimal")
        assert value not in said  # a token pasted there by mistake is not shown
    path.write_text(base + f'token_sha256 = "{digest}"\ntoken_file = "c.token"\n')
    with pytest.raises(ConfigError, match="exactly one of token, token_env, token_file, token_sha"):
        load_config(path)
    stdio = '[league]\nduplicate = false\n[[bot]]\nname = "a"\ncommand = "true"\n'
    path.write_text(stdio + f'[[bot]]\nname = "b"\ncommand = "true"\ntoken_sha256 = "{digest}"\n')
    with pytest.raises(ConfigError, match=r'bot\[1\]\.token_sha256: only for transport = "tcp"'):
        load_config(path)


def league(tmp_path: Path, source: str) -> Path:
    """A league whose tcp bot c takes a weak token from `source`."""
    line = {
        "token": f'token = "{WEAK}"',
        "token_env": 'token_env = "TEST_TOKENS_WEAK"',
        "token_file": 'token_file = "c.token"',
    }[source]
    (tmp_path / "c.token").write_text(WEAK + "\n")
    path = tmp_path / "league.toml"
    path.write_text(
        '[league]\nduplicate = false\n[[bot]]\nname = "a"\ncommand = "true"\n'
        f'[[bot]]\nname = "c"\ntransport = "tcp"\n{line}\n'
    )
    return path


@pytest.mark.parametrize(
    ("source", "where"),
    [
        ("token", "given in the file"),
        ("token_env", "from the environment variable TEST_TOKENS_WEAK"),
        ("token_file", "in {folder}/c.token"),
    ],
)
def test_serve_refuses_a_weak_token_in_one_line_naming_the_bot_and_the_file(
    tmp_path: Path, source: str, where: str
) -> None:
    path = league(tmp_path, source)
    result = CliRunner(env={"TEST_TOKENS_WEAK": WEAK}).invoke(main, ["serve", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr == (
        f"referee: error: {path}: bot[1].{source} (bot 'c', token "
        f"{where.format(folder=tmp_path)}): the token is 14 URL-safe base64 characters, "
        "84 bits; a token needs at least 128 bits: 22 characters of letters, digits, - and _ "
        "(URL-safe base64), or 32 hexadecimal digits; `referee token new NAME` prints a new one\n"
    )


def test_connect_refuses_a_weak_token_file(tmp_path: Path) -> None:
    token_file = tmp_path / "c.token"
    token_file.write_text("0123456789abcdef\n")  # 16 hexadecimal digits: 64 bits
    args = ["connect", "127.0.0.1:1", "--name", "c", "--token-file", str(token_file), "true"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"referee: error: {token_file}: the token is 16 hexadecimal")
    assert "64 bits" in result.stderr and "`referee token new NAME`" in result.stderr
    assert "0123456789abcdef" not in result.stderr
