"""`referee.net.tlsstream.TlsStream`, the TLS 1.3 stream `serve` and `connect` use, on
its own: over a real loopback socket (the path the referee takes, the socket read and
written directly) and over trio's memory streams (any other stream), with certificates
from a throwaway CA (`trustme`).

Data of every size from 1 byte to 1 MB arrives whole and in order both ways, also
when the ciphertext comes a byte at a time or many records at once and is read in
small pieces; close_notify gives b"" on either side, a socket that ends without it is
a broken stream; a certificate from another CA, for another host or the wrong pin is
refused; a cancelled receive loses nothing, a cancelled send breaks the stream; one
task may send while another receives, and a second sender is told it is busy.
"""

from __future__ import annotations

import socket as stdlib_socket
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
import trio.testing
import trustme

from referee.net import tlsstream
from referee.net.tls import client_context, fingerprint, handshake_failure, pin_mismatch
from referee.net.tlsstream import TlsStream

HOST = "127.0.0.1"
LIMIT_S = 60
SIZES = (1, 2, 100, 1500, 16383, 16384, 16385, 65536 + 7, 200_000, 1 << 20)


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def server_context(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    ca.issue_cert(HOST, "localhost").configure_cert(context)
    return context


@pytest.fixture(scope="module")
def ca_file(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return path


async def socket_pair() -> tuple[trio.SocketStream, trio.SocketStream]:
    """Two ends of a loopback TCP connection: the server's (accepted), the client's."""
    listeners = await trio.open_tcp_listeners(0, host=HOST)
    port = listeners[0].socket.getsockname()[1]
    try:
        client = await trio.open_tcp_stream(HOST, port)
        server = await listeners[0].accept()
    finally:
        await listeners[0].aclose()
    return server, client


async def memory_pair() -> tuple[trio.abc.Stream, trio.abc.Stream]:
    await trio.lowlevel.checkpoint()
    return trio.testing.memory_stream_pair()


TRANSPORTS = {"socket": socket_pair, "memory": memory_pair}


@asynccontextmanager
async def tls_pair(
    server_context: ssl.SSLContext,
    client: ssl.SSLContext,
    transport: str = "socket",
    *,
    hostname: str = HOST,
    wrap: Callable[[trio.abc.Stream], trio.abc.Stream] | None = None,
) -> AsyncIterator[tuple[TlsStream, TlsStream]]:
    """A server and a client `TlsStream` that have shaken hands (the client's transport
    passed through `wrap` first, if given); both closed at the end. A test that waits
    for data that never comes fails after `LIMIT_S`."""
    server_end, client_end = await TRANSPORTS[transport]()
    server = TlsStream(server_end, server_context, server_side=True)
    wire = wrap(client_end) if wrap is not None else client_end
    secured = TlsStream(wire, client, server_hostname=hostname)
    try:
        with trio.fail_after(LIMIT_S):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(server.do_handshake)
                await secured.do_handshake()
            yield server, secured
    finally:
        with trio.CancelScope(shield=True):
            await secured.aclose()
            await server.aclose()


async def receive_exactly(stream: trio.abc.ReceiveStream, size: int, piece: int = 65536) -> bytes:
    got = bytearray()
    while len(got) < size:
        data = await stream.receive_some(piece)
        assert data, f"the end after {len(got)} of {size} bytes"
        got += data
    return bytes(got)


def payload(size: int, seed: int = 0) -> bytes:
    return bytes((i * 7 + seed) % 251 for i in range(size))


# ---------------------------------------------------------------- data


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_size_arrives_whole_both_ways(
    server_context: ssl.SSLContext, ca_file: Path, transport: str
) -> None:
    async with tls_pair(server_context, client_context(ca=ca_file), transport) as (server, client):
        assert server.version() == client.version() == "TLSv1.3"
        for size in SIZES:
            for sender, receiver in ((server, client), (client, server)):
                data = payload(size, seed=size)
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(sender.send_all, data)
                    assert await receive_exactly(receiver, size) == data
        # Many messages in a row, each its own records, read as they come.
        lines = [payload(n % 300 + 1, seed=n) + b"\n" for n in range(500)]
        async with trio.open_nursery() as nursery:

            async def send_lines() -> None:
                for line in lines:
                    await client.send_all(line)

            nursery.start_soon(send_lines)
            total = sum(map(len, lines))
            assert await receive_exactly(server, total) == b"".join(lines)


async def test_records_read_in_small_pieces_come_from_what_was_decrypted(
    server_context: ssl.SSLContext, ca_file: Path
) -> None:
    # 100 kB in one write is seven records; read 1000 bytes at a time, most reads are
    # served from what OpenSSL holds, without a read of the socket.
    async with tls_pair(server_context, client_context(ca=ca_file)) as (server, client):
        data = payload(100_000)
        await client.send_all(data)
        reads = 0
        got = bytearray()
        while len(got) < len(data):
            piece = await server.receive_some(1000)
            assert 0 < len(piece) <= 1000
            got += piece
            reads += 1
        assert bytes(got) == data and reads >= 100


class Trickle(trio.abc.Stream):
    """A stream that gives at most one byte a read (so every TLS record arrives in
    pieces), and can hold back what is sent through it (`hold`) until `release`."""

    def __init__(self, inner: trio.abc.Stream) -> None:
        self.inner = inner
        self.one_byte = True
        self.hold = False
        self.held = bytearray()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self.hold:
            self.held += data
            await trio.lowlevel.checkpoint()
        else:
            await self.inner.send_all(data)

    async def release(self, size: int) -> None:
        part = bytes(self.held[:size])
        del self.held[:size]
        await self.inner.send_all(part)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self.inner.receive_some(1 if self.one_byte else max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_records_arriving_a_byte_at_a_time(
    server_context: ssl.SSLContext, ca_file: Path
) -> None:
    # The client's every read of its transport gets one byte: the handshake and each
    # record come in pieces, and a piece of a record is kept until the rest comes.
    async with tls_pair(server_context, client_context(ca=ca_file), wrap=Trickle) as pair:
        server, client = pair
        for size in (1, 300, 20_000):
            data = payload(size)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(server.send_all, data)
                assert await receive_exactly(client, size) == data


# ---------------------------------------------------------------- the end


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_close_notify_gives_the_end_on_either_side(
    server_context: ssl.SSLContext, ca_file: Path, transport: str
) -> None:
    context = client_context(ca=ca_file)
    for closing in ("client", "server"):
        async with tls_pair(server_context, context, transport) as (server, client):
            closer, other = (client, server) if closing == "client" else (server, client)
            await closer.send_all(b"last words\n")
            await closer.aclose()
            assert await receive_exactly(other, 11) == b"last words\n"
            assert await other.receive_some(100) == b""
            assert await other.receive_some(100) == b""  # and ever after
            # The other side's close_notify goes to a closed socket: no error, no wait.
            with trio.fail_after(5):
                await other.aclose()
            with pytest.raises(trio.ClosedResourceError):
                await other.receive_some(100)
            with pytest.raises(trio.ClosedResourceError):
                await closer.send_all(b"more")
            await closer.aclose()  # again: nothing


async def test_both_sides_closing_at_once(server_context: ssl.SSLContext, ca_file: Path) -> None:
    async with tls_pair(server_context, client_context(ca=ca_file)) as (server, client):
        with trio.fail_after(5):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(server.aclose)
                nursery.start_soon(client.aclose)


async def test_a_socket_that_ends_without_close_notify_is_a_broken_stream(
    server_context: ssl.SSLContext, ca_file: Path
) -> None:
    # A truncation: whoever cut the connection, the data may be missing its end.
    async with tls_pair(server_context, client_context(ca=ca_file)) as (server, client):
        await client.transport_stream.aclose()  # the socket alone, no close_notify
        with pytest.raises(trio.BrokenResourceError) as info:
            await server.receive_some(100)
        assert isinstance(info.value.__cause__, ssl.SSLError)
        with pytest.raises(trio.BrokenResourceError):
            await server.receive_some(100)


async def test_the_session_tickets_wait_for_the_servers_first_write(
    server_context: ssl.SSLContext, ca_file: Path
) -> None:
    # OpenSSL writes TLS 1.3 session tickets as the server's handshake ends: they go with
    # its first data (a client that only writes never has them to read), and a client
    # takes them in as it reads that data.
    server_end, client_end = await socket_pair()
    server = TlsStream(server_end, server_context, server_side=True)
    client = TlsStream(client_end, client_context(ca=ca_file), server_hostname=HOST)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.do_handshake)
        await client.do_handshake()
    with trio.move_on_after(0.2) as scope:  # nothing came after the handshake
        await client_end.socket.recv(1, stdlib_socket.MSG_PEEK)
    assert scope.cancelled_caught
    await server.send_all(b"hello\n")
    assert await receive_exactly(client, 6) == b"hello\n"
    await client.aclose()
    assert await server.receive_some(10) == b""
    await server.aclose()


# ---------------------------------------------------------------- certificates


async def test_a_certificate_of_another_ca_or_host_is_refused(
    server_context: ssl.SSLContext, ca_file: Path
) -> None:
    other = trustme.CA()
    elsewhere = ssl.create_default_context()
    other.configure_trust(elsewhere)
    for context, hostname, reason in (
        (elsewhere, HOST, "unable to get local issuer certificate"),
        (client_context(ca=ca_file), "wrong.example.org", "Hostname mismatch"),
    ):
        server_end, client_end = await socket_pair()
        server = TlsStream(server_end, server_context, server_side=True)
        client = TlsStream(client_end, context, server_hostname=hostname)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.do_handshake)
            with pytest.raises(trio.BrokenResourceError) as info:
                await client.do_handshake()
            nursery.cancel_scope.cancel()  # the server waits for the client's Finished
        assert isinstance(info.value.__cause__, ssl.SSLCertVerificationError)
        again, why = handshake_failure(info.value)
        assert not again and why.startswith("the server's certificate was refused: ")
        assert reason in why, why
        with pytest.raises(trio.BrokenResourceError):  # broken for good
            await client.send_all(b"token")
        await client.aclose()
        await server.aclose()


async def test_a_pin_is_checked_against_the_peer_certificate(
    server_context: ssl.SSLContext, ca: trustme.CA, ca_file: Path
) -> None:
    server_end, client_end = await socket_pair()
    server = TlsStream(server_end, server_context, server_side=True)
    client = TlsStream(client_end, client_context(pin="sha256:" + "ab" * 32), server_hostname=HOST)
    with pytest.raises(trio.NeedHandshakeError):
        client.getpeercert(binary_form=True)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.do_handshake)
        await client.do_handshake()
    der = client.getpeercert(binary_form=True)
    assert der is not None
    assert pin_mismatch(der, "sha256:" + "ab" * 32) is not None
    assert pin_mismatch(der, fingerprint(der)) is None
    assert server.getpeercert(binary_form=True) is None  # no client certificates
    await client.aclose()
    await server.aclose()


async def test_a_session_below_tls_13_is_refused(ca: trustme.CA, ca_file: Path) -> None:
    # The contexts of referee.net.tls never offer less; a context that does is refused
    # by the stream all the same (no renegotiation can then come).
    old = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    ca.issue_cert(HOST).configure_cert(old)
    lenient = ssl.create_default_context(cafile=str(ca_file))
    server_end, client_end = await socket_pair()
    server = TlsStream(server_end, old, server_side=True)
    client = TlsStream(client_end, lenient, server_hostname=HOST)
    with pytest.raises(BaseExceptionGroup) as info:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.do_handshake)
            await client.do_handshake()
    for exc in info.value.exceptions:
        assert isinstance(exc, trio.BrokenResourceError)
        assert "TLS 1.3 is required; the peer negotiated TLSv1.2" in str(exc.__cause__)
    await client.aclose()
    await server.aclose()


async def test_a_peer_that_does_not_speak_tls(server_context: ssl.SSLContext) -> None:
    server_end, client_end = await socket_pair()
    server = TlsStream(server_end, server_context, server_side=True)
    await client_end.send_all(b'{"type": "login"}\n')
    with pytest.raises(trio.BrokenResourceError) as info:
        await server.do_handshake()
    assert isinstance(info.value.__cause__, ssl.SSLError)
    with pytest.raises(trio.BrokenResourceError):
        await server.do_handshake()
    await server.aclose()
    assert await client_end.receive_some(100) == b""  # closed, nothing said
    await client_end.aclose()


# ---------------------------------------------------------------- cancellation, tasks


async def test_a_cancelled_receive_leaves_the_stream_usable(
    server_context: ssl.SSLContext, ca_file: Path
) -> None:
    async with tls_pair(server_context, client_context(ca=ca_file), wrap=Trickle) as pair:
        server, client = pair
        # Nothing came: the receive is cancelled while it waits on the socket.
        with trio.move_on_after(0.05) as scope:
            await server.receive_some(100)
        assert scope.cancelled_caught
        # Half a record came: cancelled with it in hand, it is kept for the next read.
        trickle = client.transport_stream
        assert isinstance(trickle, Trickle)
        trickle.hold = True
        await client.send_all(b"hello, server\n")
        await trickle.release(10)
        with trio.move_on_after(0.05) as scope:
            await server.receive_some(100)
        assert scope.cancelled_caught
        await trickle.release(len(trickle.held))
        trickle.hold = False
        assert await receive_exactly(server, 14) == b"hello, server\n"
        # Already cancelled, with decrypted data waiting: nothing is taken.
        await client.send_all(b"abcdef")
        assert await server.receive_some(3) == b"abc"
        with trio.CancelScope() as cancelled:
            cancelled.cancel()
            await server.receive_some(100)
        assert cancelled.cancelled_caught
        assert await server.receive_some(100) == b"def"
        # Cancelled while it yields, the data in hand: it returns the data.
        await client.send_all(b"ghijkl")
        assert await server.receive_some(3) == b"ghi"
        got = b""
        async with trio.open_nursery() as nursery:
            with trio.CancelScope() as scope:

                async def cancel() -> None:
                    scope.cancel()

                nursery.start_soon(cancel)  # runs when receive_some yields
                got = await server.receive_some(100)
        assert got == b"jkl"
        await server.send_all(b"still here\n")
        assert await receive_exactly(client, 11) == b"still here\n"


async def test_a_cancelled_send_breaks_the_stream_and_close_does_not_hang(
    server_context: ssl.SSLContext, ca_file: Path
) -> None:
    async with tls_pair(server_context, client_context(ca=ca_file)) as (server, _):
        # The client does not read: 32 MB cannot all go.
        with trio.move_on_after(0.3) as scope:
            await server.send_all(bytes(32 << 20))
        assert scope.cancelled_caught
        with pytest.raises(trio.BrokenResourceError):
            await server.send_all(b"more")
        with pytest.raises(trio.BrokenResourceError):
            await server.receive_some(100)
        with trio.fail_after(2):
            await server.aclose()  # broken: the socket closed, no close_notify


async def test_close_gives_close_notify_a_moment_only(
    server_context: ssl.SSLContext, ca_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A peer that reads nothing, its socket full: aclose waits CLOSE_NOTIFY_S at most.
    monkeypatch.setattr(tlsstream, "CLOSE_NOTIFY_S", 0.2)

    class Stuck(Trickle):
        async def send_all(self, data: bytes | bytearray | memoryview) -> None:
            if self.hold:
                await trio.sleep_forever()
            await self.inner.send_all(data)

    def stuck(inner: trio.abc.Stream) -> trio.abc.Stream:
        wire = Stuck(inner)
        wire.one_byte = False
        return wire

    async with tls_pair(server_context, client_context(ca=ca_file), wrap=stuck) as pair:
        _, client = pair
        wire = client.transport_stream
        assert isinstance(wire, Stuck)
        wire.hold = True
        with trio.fail_after(2):
            await client.aclose()
        with pytest.raises(trio.ClosedResourceError):
            await client.receive_some(10)


async def test_one_task_sends_while_another_receives(
    server_context: ssl.SSLContext, ca_file: Path
) -> None:
    # Both sides send 1 MB and receive 1 MB at once: neither finishes unless each
    # stream reads while it writes.
    async with tls_pair(server_context, client_context(ca=ca_file)) as (server, client):
        up, down = payload(1 << 20, seed=1), payload(1 << 20, seed=2)
        got: dict[str, bytes] = {}

        async def receive(name: str, stream: TlsStream) -> None:
            got[name] = await receive_exactly(stream, 1 << 20)

        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.send_all, up)
                nursery.start_soon(server.send_all, down)
                nursery.start_soon(receive, "server", server)
                nursery.start_soon(receive, "client", client)
        assert got == {"server": up, "client": down}


async def test_a_second_sender_or_receiver_is_told_it_is_busy(
    server_context: ssl.SSLContext, ca_file: Path
) -> None:
    async with tls_pair(server_context, client_context(ca=ca_file)) as (server, client):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.receive_some, 100)
            await trio.testing.wait_all_tasks_blocked()
            with pytest.raises(trio.BusyResourceError):
                await server.receive_some(100)
            await client.send_all(b"x")  # lets the first one end
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.send_all, bytes(32 << 20))  # blocks: nobody reads
            await trio.testing.wait_all_tasks_blocked()
            with pytest.raises(trio.BusyResourceError):
                await server.send_all(b"y")
            with pytest.raises(trio.BusyResourceError):
                await server.wait_send_all_might_not_block()
            nursery.cancel_scope.cancel()
