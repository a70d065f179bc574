"""What keeps a bot's token and login to itself: the login's `nonce`, the checks of
`referee connect`'s options, and no core dump of a process that has read a token.

A login's `nonce` is recorded from a name's first good login only; one that is not
at most 128 characters of printable ASCII makes the login line malformed. `serve`
and `connect` set RLIMIT_CORE to 0 and make themselves not dumpable before they read
a token; a program they start afterwards is dumpable again (execve resets it),
which its bots never notice (the leagues of test_tls play through them).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import trio
from click.testing import CliRunner

from referee.cli import main
from tests.server._served import ENV, REFEREE, core_limit
from tests.server.test_server import TOKEN_C, first_line, listening, read_all


async def login_with(port: int, nonce: object) -> trio.SocketStream:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    line = {"type": "login", "name": "c", "token": TOKEN_C, "protocol": 1, "nonce": nonce}
    await stream.send_all(json.dumps(line).encode() + b"\n")
    return stream


async def test_a_nonce_is_recorded_from_the_first_good_login_of_a_name(tmp_path: Path) -> None:
    async with listening(tmp_path, "") as on:
        async with await login_with(on.port, "my contribution ~ 1") as first:
            assert (await first_line(first))["type"] == "hello"
            await first.send_all(b'{"type":"ready","name":"c"}\n')
            await on.logged_in.wait()
        assert on.server.nonces == {"c": "my contribution ~ 1"}
        # The first connection is gone (the server's ping finds it so): c logs in again.
        async with await login_with(on.port, "another") as second:
            assert (await first_line(second))["type"] == "hello"
        assert on.server.nonces == {"c": "my contribution ~ 1"}  # the first stays


@pytest.mark.parametrize("nonce", ["x" * 129, "line\nbreak", "caf\u00e9", "\x1b[2J", 7])
async def test_a_nonce_that_is_not_short_printable_ascii_makes_the_login_malformed(
    tmp_path: Path, nonce: object
) -> None:
    async with listening(tmp_path, "") as on, await login_with(on.port, nonce) as stream:
        lines = await read_all(stream)
    assert [x["type"] for x in lines] == ["error", "bye"]
    assert lines[0]["code"] == "login"
    assert lines[0]["message"] == "bad first line: MalformedMessageError"
    assert on.server.nonces == {} and not on.logged_in.is_set()


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--pin", "sha256:abc"], "--pin 'sha256:abc': expected sha256: and 64 hexadecimal"),
        (["--pin", "ab" * 32], "--pin '" + "ab" * 32 + "': expected sha256:"),
        (["--pin", "sha256:" + "ab" * 32, "--ca", "ca.pem"], "--pin and --ca: give one"),
        (["--nonce", "x" * 129], "--nonce: at most 128 printable ASCII characters"),
        (["--nonce", "caf\u00e9"], "--nonce: at most 128 printable ASCII characters"),
        (["--ca", "no-such-ca.pem"], "--ca no-such-ca.pem: cannot read: No such file"),
    ],
)
def test_connect_refuses_a_bad_pin_nonce_or_ca_before_anything(
    tmp_path: Path, options: list[str], said: str
) -> None:
    (tmp_path / "c.token").write_text(TOKEN_C)
    args = ["connect", "127.0.0.1:1", "--name", "c", "--token-file", str(tmp_path / "c.token")]
    result = CliRunner().invoke(main, [*args, *options, "--", "true"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"referee: error: {said}"), result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_a_process_that_read_a_token_leaves_no_core_and_what_it_starts_works() -> None:
    # keep_out_of_core_dumps in a process of its own (it cannot be undone), which then
    # starts a program: that one is dumpable again, with no core file allowed.
    script = textwrap.dedent(
        """
        import ctypes, resource, subprocess, sys
        from referee.bots.tokens import keep_out_of_core_dumps
        keep_out_of_core_dumps()
        libc = ctypes.CDLL(None)
        print(libc.prctl(3, 0, 0, 0, 0), resource.getrlimit(resource.RLIMIT_CORE))
        child = "import ctypes; print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"
        sys.stdout.flush()
        subprocess.run([sys.executable, "-c", child], check=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=ENV, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["0 (0, 0)", "1"]  # PR_GET_DUMPABLE: 0, then 1


def test_connect_has_no_core_dump_once_it_has_read_its_token(tmp_path: Path) -> None:
    # A server that accepts the connection and never answers: connect waits for hello,
    # its token read.
    (tmp_path / "c.token").write_text(TOKEN_C)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        login = ["--name", "c", "--token-file", str(tmp_path / "c.token")]
        bridge = subprocess.Popen(
            [*REFEREE, "connect", f"127.0.0.1:{port}", *login, "--", "true"], env=ENV
        )
        try:
            accepted, _ = listener.accept()  # the login comes after the token is read
            with accepted:
                assert json.loads(accepted.makefile().readline())["name"] == "c"
                assert core_limit(bridge.pid) == "0 0"
        finally:
            bridge.kill()
            bridge.wait()
