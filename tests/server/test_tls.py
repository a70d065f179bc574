"""`referee serve` over TLS and `referee connect --tls/--ca/--pin`, on real sockets.

Certificates come from throwaway CAs (`trustme`) or from `serve --tls self-signed`.
A league served over TLS plays the games the same league plays on stdio; a
certificate from another CA, an expired one and a wrong pin are each refused by the
bridge in one line (exit 2) before the token is sent; a client that opens a
connection and stalls in its TLS handshake is cut at `handshake_ms` while a bot
logs in; and plain TCP on an address that is not loopback needs
`--insecure-plaintext`, which the standings and the site then say.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import ssl
import stat
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trustme
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from rich.console import Console

from referee.league import transport
from referee.league.config import load_config
from referee.league.run import run_league
from referee.league.transport import INSECURE
from referee.net.bridge import run_bridge
from referee.net.server import PLAIN_TO_TLS, BotServer
from referee.net.tls import TlsError, client_context, fingerprint, self_signed, server_tls
from tests.server._served import (
    ENV,
    RANDOM,
    REFEREE,
    TOKEN_C,
    TOKEN_D,
    WRONG,
    assert_no_token,
    connect,
    core_limit,
    finished,
    games,
    league_file,
    serving,
    standings_json,
)


def der_of(pem: bytes) -> bytes:
    """A PEM certificate's DER bytes, what its fingerprint is of."""
    return x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)


def stdio_games(tmp_path: Path) -> list[tuple[str, list[int], list[str]]]:
    """The games of the league with all four bots on stdio."""
    config = load_config(league_file(tmp_path / "stdio", tcp=False))
    trio.run(
        lambda: run_league(config, jobs=1, resume=False, console=Console(quiet=True), quiet=True)
    )
    played = games(config.out)
    assert len(played) == 2 and all(kinds == [] for _, _, kinds in played)
    return played


def test_a_league_over_tls_with_a_pinned_self_signed_certificate_plays_as_on_stdio(
    tmp_path: Path,
) -> None:
    expected = stdio_games(tmp_path)
    path = league_file(tmp_path / "tls", tcp=True)
    out = path.parent / "out"
    with serving(path, "--tls", "self-signed", "--site") as served:
        # The fingerprint printed is the certificate's in OUT/tls, whose key only its
        # owner may read.
        assert served.fingerprint is not None
        assert served.fingerprint == fingerprint(der_of((out / "tls" / "server.crt").read_bytes()))
        assert stat.S_IMODE((out / "tls" / "server.key").stat().st_mode) == 0o600
        assert core_limit(served.process.pid) == "0 0"  # no core dump to hold a token
        pin = ["--pin", served.fingerprint]
        # Another token for c: refused, and the answer quotes nothing of it.
        stranger = connect(served.address, "c", path.parent / "wrong.token", *pin, "--no-reconnect")
        refused = finished(stranger)
        assert refused[0] == 1 and "refused: login refused for 'c'" in refused[2], refused
        bots = [connect(served.address, n, path.parent / f"{n}.token", *pin) for n in "cd"]
        said = [finished(b) for b in bots]
        served.wait()
    assert served.process.returncode == 0, served.err
    assert all(status == 0 for status, _, _ in said), said
    assert games(out) == expected
    # The standings, standings.md, the terminal and the site name the certificate.
    assert standings_json(out)["transport"] == {
        "kind": "tls",
        "tls_fingerprint": served.fingerprint,
    }
    assert served.fingerprint in (out / "standings.md").read_text()
    assert served.fingerprint in (out / "site" / "index.html").read_text()
    assert served.fingerprint in (out / "site" / "standings.json").read_text()
    assert f"the server's certificate is {served.fingerprint}" in served.out
    texts = [served.out, served.err, *refused[1:], *(t for _, *ts in said for t in ts)]
    assert_no_token(out, texts, (TOKEN_C, TOKEN_D, WRONG))


def test_connect_verifies_the_server_with_its_ca_and_refuses_another_ca_or_pin(
    tmp_path: Path,
) -> None:
    ca, other = trustme.CA(), trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert.private_key_pem.write_to_path(str(tmp_path / "server.key"))
    cert.cert_chain_pems[0].write_to_path(str(tmp_path / "server.crt"))
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    other.cert_pem.write_to_path(str(tmp_path / "other.pem"))
    path = league_file(tmp_path / "league", tcp=True)
    tls = ["--tls-cert", str(tmp_path / "server.crt"), "--tls-key", str(tmp_path / "server.key")]
    token = path.parent / "c.token"
    wrong_pin = "sha256:" + "ab" * 32
    with serving(path, *tls) as served:
        assert served.fingerprint == fingerprint(der_of(cert.cert_chain_pems[0].bytes()))
        for options, words in (
            (["--ca", str(tmp_path / "other.pem")], "the server's certificate was refused: "),
            (["--tls"], "the server's certificate was refused: "),  # not one of the system's
            (["--pin", wrong_pin], f"the server's certificate is {served.fingerprint}, "),
        ):
            status, printed, err = finished(connect(served.address, "c", token, *options))
            assert status == 2, err
            assert printed == "" and err.count("\n") == 1, err
            assert err.startswith(f"referee connect: {served.address}: {words}"), err
        assert err.endswith(f"not the pinned {wrong_pin}\n")
        good = ["--ca", str(tmp_path / "ca.pem")]
        bots = [connect(served.address, n, path.parent / f"{n}.token", *good) for n in "cd"]
        said = [finished(b) for b in bots]
        served.wait()
    assert served.process.returncode == 0, served.err
    assert all(status == 0 for status, _, _ in said), said
    played = games(path.parent / "out")
    assert len(played) == 2 and all(kinds == [] for _, _, kinds in played)


def expired_cert(ca: trustme.CA) -> trustme.LeafCert:
    now = dt.datetime.now(dt.UTC)
    return ca.issue_cert(
        "127.0.0.1", not_before=now - dt.timedelta(days=30), not_after=now - dt.timedelta(days=1)
    )


async def test_an_expired_certificate_is_refused_by_the_bridge_and_by_serve(
    tmp_path: Path,
) -> None:
    ca = trustme.CA()
    cert = expired_cert(ca)
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    config = load_config(league_file(tmp_path, tcp=True))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    server = BotServer(config, tls=context)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve, "127.0.0.1", 0)
            port = listeners[0].socket.getsockname()[1]
            tls = client_context(ca=tmp_path / "ca.pem")
            outcome = await run_bridge("127.0.0.1", port, "c", TOKEN_C, RANDOM, tls=tls)
            nursery.cancel_scope.cancel()
    assert outcome.kind == "tls"
    assert outcome.detail == "the server's certificate was refused: certificate has expired"
    assert server.slots["c"].connected is None
    # `serve` does not start with it.
    cert.private_key_pem.write_to_path(str(tmp_path / "server.key"))
    cert.cert_chain_pems[0].write_to_path(str(tmp_path / "server.crt"))
    tls_options = [
        "--tls-cert",
        str(tmp_path / "server.crt"),
        "--tls-key",
        str(tmp_path / "server.key"),
    ]
    done = await trio.run_process(
        [*REFEREE, "serve", str(config.path), *tls_options],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env=ENV,
    )
    assert done.returncode == 2 and done.stdout == b""
    err = done.stderr.decode()
    assert err.startswith(f"referee: error: --tls-cert {tmp_path / 'server.crt'}: expired on ")
    assert err.count("\n") == 1


def client_hello() -> bytes:
    """The first bytes a TLS client sends: its ClientHello."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="x")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


async def closed_by_the_server(stream: trio.SocketStream) -> bool:
    """Whether the server closes `stream` without sending a byte (the end, or a reset)."""
    try:
        return await stream.receive_some(1024) == b""
    except trio.BrokenResourceError:
        return True


async def test_a_client_that_stalls_in_its_handshake_is_cut_while_a_bot_logs_in(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="referee")
    config = load_config(league_file(tmp_path, tcp=True, extra="[server]\nhandshake_ms = 1500"))
    tls = self_signed(tmp_path / "tls", "127.0.0.1")
    server = BotServer(config, tls=tls.context)
    logged_in = trio.Event()
    server.on_login = lambda name: logged_in.set()
    hello = client_hello()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve, "127.0.0.1", 0)
            port = listeners[0].socket.getsockname()[1]
            silent = await trio.open_tcp_stream("127.0.0.1", port)
            partial = await trio.open_tcp_stream("127.0.0.1", port)
            await partial.send_all(hello[: len(hello) // 2])
            # Meanwhile a bot logs in over TLS, its pin checked.
            pinned = client_context(pin=tls.fingerprint)
            nursery.start_soon(partial_bridge(port, "c", TOKEN_C, tls=pinned, pin=tls.fingerprint))
            await logged_in.wait()
            assert server.slots["c"].connected is not None
            # The two that stalled are closed at handshake_ms, without a word.
            for stream in (silent, partial):
                assert await closed_by_the_server(stream)
                await stream.aclose()
            # A plain login sent to a TLS server is told so, in plain text.
            plain = await run_bridge("127.0.0.1", port, "d", TOKEN_D, RANDOM, reconnect=False)
            assert plain.kind == "refused" and plain.detail == PLAIN_TO_TLS
            nursery.cancel_scope.cancel()
    assert not server.lobby.waiting
    assert server.refused == 3  # the two stalled, the plain login
    assert "refused: no TLS handshake within 1500 ms" in caplog.text
    assert "and 2 connections refused without a good login line" in caplog.text


async def test_a_connection_in_its_tls_handshake_is_pushed_out_by_newer_ones(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The lobby holds a connection in its TLS handshake as one that has not logged in:
    # the third from one address pushes the oldest out, long before handshake_ms.
    caplog.set_level(logging.INFO, logger="referee")
    extra = "[server]\nhandshake_ms = 600000\nmax_handshakes_per_address = 2"
    config = load_config(league_file(tmp_path, tcp=True, extra=extra))
    server = BotServer(config, tls=self_signed(tmp_path / "tls", "127.0.0.1").context)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve, "127.0.0.1", 0)
            port = listeners[0].socket.getsockname()[1]
            streams = []
            for _ in range(3):
                streams.append(await trio.open_tcp_stream("127.0.0.1", port))
                await streams[-1].send_all(client_hello()[:20])
            assert await closed_by_the_server(streams[0])
            assert len(server.lobby.waiting) == 2
            for stream in streams:
                await stream.aclose()
            nursery.cancel_scope.cancel()
    assert server.lobby.pushed_out == 1
    assert "pushed out in its TLS handshake" in caplog.text


def partial_bridge(port: int, name: str, token: str, **tls: Any) -> Callable[[], Awaitable[Any]]:
    """A bridge of bot `name` to 127.0.0.1:port, to start in a nursery."""
    return lambda: run_bridge("127.0.0.1", port, name, token, RANDOM, **tls)


def test_plain_tcp_on_a_public_address_needs_insecure_plaintext_and_is_then_said(
    tmp_path: Path,
) -> None:
    path = league_file(tmp_path, tcp=True)
    out = path.parent / "out"
    # 0.0.0.0 is every address, not loopback: refused in one line, nothing started.
    refused = subprocess.run(
        [*REFEREE, "serve", str(path), "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("referee: error: --host 0.0.0.0: plain TCP on an address")
    assert "--insecure-plaintext" in refused.stderr and refused.stderr.count("\n") == 1
    assert not out.exists()
    with serving(path, "--host", "0.0.0.0", "--insecure-plaintext", "--site") as served:
        assert served.host == "0.0.0.0" and served.fingerprint is None
        bots = [connect(served.address, n, path.parent / f"{n}.token") for n in "cd"]
        said = [finished(b) for b in bots]
        served.wait()
    assert served.process.returncode == 0, served.err
    assert all(status == 0 for status, _, _ in said), said
    warnings = served.err.splitlines()
    assert warnings[0].startswith("referee: warning: serving plain TCP on 0.0.0.0")
    # d's token is in a file the league file names; c gives only its SHA-256.
    assert warnings[1].startswith("referee: warning: d: the league file gives its token")
    assert "referee token new NAME" in warnings[1]
    assert standings_json(out)["transport"] == {
        "kind": "insecure-plaintext",
        "tls_fingerprint": None,
    }
    assert INSECURE[:1].upper() + INSECURE[1:] in (out / "standings.md").read_text()
    assert INSECURE in (out / "site" / "index.html").read_text()
    assert INSECURE in served.out
    texts = [served.out, served.err, *(t for _, *ts in said for t in ts)]
    assert_no_token(out, texts, (TOKEN_C, TOKEN_D))


def test_a_self_signed_certificate_is_made_once_for_every_address_of_a_wildcard(
    tmp_path: Path,
) -> None:
    made = self_signed(tmp_path / "tls", "0.0.0.0")
    again = self_signed(tmp_path / "tls", "192.0.2.7")  # kept, whatever the host now
    assert again.fingerprint == made.fingerprint
    cert = x509.load_pem_x509_certificate((tmp_path / "tls" / "server.crt").read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1", "::1"]
    key = cert.public_key()
    assert isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == "secp256r1"
    one = self_signed(tmp_path / "one", "example.org")
    names = x509.load_pem_x509_certificate(one.cert.read_bytes()).extensions
    san = names.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["example.org"]


def test_a_league_once_served_in_plain_text_on_a_public_address_stays_said_so() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    assert transport.recorded(db) is None  # not served
    fp = "sha256:" + "0" * 64
    assert transport.note(db, transport.Transport("tls", fp)) == transport.Transport("tls", fp)
    insecure = transport.note(db, transport.Transport("insecure-plaintext"))
    assert insecure.insecure and insecure.line() == INSECURE
    # Resumed over TLS: its earlier games crossed the network in the clear all the same.
    assert transport.note(db, transport.Transport("tls", fp)).kind == "insecure-plaintext"
    assert transport.recorded(db) == transport.Transport("insecure-plaintext")


def test_a_certificate_or_key_serve_cannot_use_is_named_in_one_line(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization

    cert = trustme.CA().issue_cert("127.0.0.1")
    other = trustme.CA().issue_cert("127.0.0.1")
    cert.cert_chain_pems[0].write_to_path(str(tmp_path / "server.crt"))
    other.private_key_pem.write_to_path(str(tmp_path / "other.key"))
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    key = serialization.load_pem_private_key(cert.private_key_pem.bytes(), password=None)
    (tmp_path / "locked.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    crt = tmp_path / "server.crt"
    for cert_file, key_file, said in (
        (tmp_path / "junk.pem", tmp_path / "other.key", "--tls-cert {c}: not a PEM certificate"),
        (crt, tmp_path / "other.key", "--tls-key {k}: not the key of the certificate in {c}"),
        (crt, tmp_path / "locked.key", "--tls-key {k}: the key is encrypted"),
        (crt, tmp_path / "none.key", "--tls-key {k}: cannot read: No such file"),
    ):
        with pytest.raises(TlsError) as info:
            server_tls(cert_file, key_file)
        assert str(info.value).startswith(said.format(c=cert_file, k=key_file)), info.value


def test_serve_refuses_a_bad_certificate_before_it_makes_its_output_folder(
    tmp_path: Path,
) -> None:
    path = league_file(tmp_path, tcp=True)
    (tmp_path / "junk.crt").write_text("not a certificate\n")
    (tmp_path / "junk.key").write_text("not a key\n")
    cert, key = tmp_path / "junk.crt", tmp_path / "junk.key"
    tls = ["--tls-cert", str(cert), "--tls-key", str(key)]
    refused = subprocess.run(
        [*REFEREE, "serve", str(path), "--port", "0", *tls],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert refused.returncode == 2 and refused.stdout == ""
    assert (
        refused.stderr
        == f"referee: error: --tls-cert {tmp_path / 'junk.crt'}: not a PEM certificate\n"
    )
    assert not (path.parent / "out").exists()
