"""What a bot finds in its environment: a fixed minimal set, never the referee's.

The bot `tests/bots/env_check.py` refuses to start (exit 3) when its environment
holds any variable but the fixed ones (PATH, HOME, TMPDIR, SCRATCH, LANG,
LC_ALL, PYTHONUNBUFFERED) and those the test expects, so a leak shows up as a
startup failure. The referee's own environment carries a marker, a PYTHONPATH
and, in the league, a TCP bot's token: none may reach a bot, sandboxed or not.
What each bot does get comes from `--env` (play, check-bot, connect) or its `env`
table. A bot that `referee connect` starts gets the same fixed set as one the
referee starts, never the environment of the shell that runs the bridge.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from click.testing import CliRunner

from referee.cli import main
from referee.game import checkbot
from referee.league.config import load_config
from referee.league.ledger import Ledger
from tests._procs import assert_none_left, new_token
from tests.server.test_server import TOKEN_C, bridges, listening, serve_with
from tests.test_sandbox import needs_bwrap

PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]
ENV_CHECK = str(ROOT / "tests" / "bots" / "env_check.py")
RANDOM = [PY, str(ROOT / "sample_bots" / "random_bot.py")]
FIXED = ["HOME", "LANG", "LC_ALL", "PATH", "PYTHONUNBUFFERED", "SCRATCH", "TMPDIR"]
SECRET = "OS5SUBBLduxliYh_tuy1-Kakh4ou3FhfWpkCg_B1qfY"
SANDBOX = {"none": [], "bwrap": ["PWD", "HOME=/scratch"]}  # bwrap always sets PWD
SANDBOXES = ["none", pytest.param("bwrap", marks=needs_bwrap)]


@pytest.fixture(autouse=True)
def referee_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the referee's environment holds that no bot may see."""
    monkeypatch.setenv("REFEREE_ENV_MARKER", "the referee's own")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("TEST_ENV_TOKEN", SECRET)


def reported(stderr: Path) -> tuple[list[str], list[str]]:
    """The variable names the bot found, and its scratch folder at each game start."""
    text = stderr.read_text()
    assert "env wrong" not in text, text
    env = [line.split()[1:] for line in text.splitlines() if line.startswith("env ")]
    scratch = [line[len("scratch ") :] for line in text.splitlines() if line.startswith("scratch")]
    assert len(env) == 1, text
    return env[0], scratch


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_play_gives_each_bot_the_fixed_set_and_the_env_options(
    tmp_path: Path, sandbox: str
) -> None:
    token = new_token()
    expected = ["A=1", "EMPTY=", "SPACED=two words", *SANDBOX[sandbox]]
    bots = [f"seat{i}={shlex.join([PY, ENV_CHECK, *expected, token])}" for i in (0, 1)]
    args = ["play", *bots, "--sandbox", sandbox, "--set", "max_pip=6", "--seed", "3"]
    args += ["--env", "A=1", "--env", "EMPTY=", "--env", "SPACED=two words"]
    args += ["--log", str(tmp_path / "game.jsonl"), "--json"]
    result = CliRunner().invoke(main, args)
    assert_none_left(token)
    assert result.exit_code == 0, result.output
    seats = json.loads(result.stdout)["seats"]
    assert [(s["status"], s["faults"]) for s in seats] == [("ok", [])] * 2
    for i in (0, 1):
        names, scratch = reported(tmp_path / f"game-seat{i}-seat{i}.stderr")
        assert names == sorted([*FIXED, "A", "EMPTY", "SPACED", *SANDBOX[sandbox][:1]])
        assert scratch == ["[]"]


def test_check_bot_passes_env_options_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = new_token()
    monkeypatch.setattr(checkbot, "stderr_file", lambda: tmp_path / "check.stderr")
    limits = ["--rules", "standard", "--move-ms", "300", "--bank-ms", "300"]
    bot = [PY, ENV_CHECK, "A=x=y", token]
    result = CliRunner().invoke(main, ["check-bot", *limits, "--env", "A=x=y", "--", *bot])
    assert result.exit_code == 0, result.output
    assert "the bot conforms" in result.output
    # Without the option the bot finds A missing and refuses to start.
    result = CliRunner().invoke(main, ["check-bot", *limits, "--", *bot])
    assert result.exit_code == 1, result.output
    assert "env wrong: extra [], missing ['A']" in (tmp_path / "check.stderr").read_text()
    assert_none_left(token)


@pytest.mark.parametrize("command", ["play", "check-bot"])
@pytest.mark.parametrize("pair", ["A", "=x", "1A=x", "A-B=x", "A B=x"])
def test_a_malformed_env_option_is_a_one_line_error(command: str, pair: str) -> None:
    result = CliRunner().invoke(main, [command, "--env", pair, "--", "bot"])
    assert result.exit_code == 2, result.output
    rule = "expected NAME=VALUE, NAME made of letters, digits and _"
    assert result.stderr == f"referee: error: --env {pair!r}: {rule}\n"


def test_a_malformed_env_table_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "league.toml"
    path.write_text(
        f'[[bot]]\nname = "a"\ncommand = "{PY}"\nenv = {{ "A-B" = "1" }}\n'
        f'[[bot]]\nname = "b"\ncommand = "{PY}"\n'
    )
    result = CliRunner().invoke(main, ["league", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "referee: error: bot[0].env.A-B: not a variable name (letters, digits, _)\n"
    )


@needs_bwrap
async def test_league_bots_never_see_a_tcp_bots_token(tmp_path: Path) -> None:
    """Beside a TCP bot whose token is in the referee's environment, a plain stdio bot
    and a sandboxed one get exactly their `env` table; each, reused for both games,
    finds its scratch folder empty at each game start."""
    token = new_token()
    (tmp_path / "league.toml").write_text(
        f"""
[league]
name = "env"
table = 3
deals = 2
duplicate = false
seed = 5
out = "out"
[rules]
max_pip = 6
rounds = "single"
[[bot]]
name = "plain"
command = {json.dumps([PY, ENV_CHECK, "ONLY=mine", token])}
env = {{ ONLY = "mine" }}
sandbox = "none"
[[bot]]
name = "boxed"
command = {json.dumps([PY, ENV_CHECK, *SANDBOX["bwrap"], token])}
sandbox = "bwrap"
[[bot]]
name = "remote"
transport = "tcp"
token_env = "TEST_ENV_TOKEN"
"""
    )
    config = load_config(tmp_path / "league.toml")
    with trio.fail_after(60):
        await serve_with(config, bridges(("remote", SECRET, RANDOM)))
    assert_none_left(token)
    ledger = Ledger(config.out / "league.db")
    try:
        records = ledger.records()
    finally:
        ledger.close()
    assert len(records) == 2
    assert [r.faults for r in records] == [[], []]
    found = {}
    for name in ("plain", "boxed"):
        [stderr] = (config.out / "stderr").glob(f"{name}-*.stderr")  # one process, reused
        assert SECRET not in stderr.read_text()
        found[name] = reported(stderr)
    assert found["plain"] == (sorted([*FIXED, "ONLY"]), ["[]", "[]"])
    assert found["boxed"] == (sorted([*FIXED, "PWD"]), ["[]", "[]"])


async def test_connect_gives_its_bot_the_fixed_set_and_its_env_options(tmp_path: Path) -> None:
    """A real `referee connect` process whose environment holds the marker, a PYTHONPATH
    and two tokens (the league's, and the one the bridge logs in with) starts a bot
    that finds exactly the fixed set and the `--env` variable: it logs in and answers
    `hello` only then."""
    token = new_token()
    (tmp_path / "c.token").write_text(TOKEN_C)
    referee = str(Path(sys.executable).parent / "referee")
    args = [referee, "connect", "--name", "c", "--token-file", str(tmp_path / "c.token")]
    args += ["--no-reconnect", "--env", "ONLY=mine", "--", PY, ENV_CHECK, "ONLY=mine", token]
    stderr = tmp_path / "connect.stderr"
    env = {**os.environ, "REFEREE_TOKEN": TOKEN_C}
    async with listening(tmp_path, "") as on:
        assert os.environ["TEST_SERVER_TOKEN_C"] == TOKEN_C  # the league's, from its file
        address = f"127.0.0.1:{on.port}"
        with stderr.open("wb") as err:
            bridge = await trio.lowlevel.open_process(
                [*args[:2], address, *args[2:]], stdout=subprocess.DEVNULL, stderr=err, env=env
            )
        async with trio.open_nursery() as nursery:

            async def until(event: trio.Event) -> None:
                await event.wait()
                nursery.cancel_scope.cancel()

            async def until_exit() -> None:
                await bridge.wait()  # the bot refused its environment: the bridge stops
                nursery.cancel_scope.cancel()

            nursery.start_soon(until, on.logged_in)
            nursery.start_soon(until_exit)
        logged_in = on.logged_in.is_set()
    # The server is gone: the bridge (--no-reconnect) ends its bot, and stops.
    with trio.fail_after(30):
        await bridge.wait()
    assert_none_left(token)
    text = stderr.read_text()
    assert logged_in, text
    names, _ = reported(stderr)
    assert names == sorted([*FIXED, "ONLY"])
    assert TOKEN_C not in text and SECRET not in text
