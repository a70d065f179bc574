"""A lean TLS 1.3 stream for trio: `ssl.SSLObject` over two `ssl.MemoryBIO`s, driven
directly on a trio stream (a `trio.SocketStream`, whose socket it reads and writes
itself).

`trio.SSLStream` is general: any TLS version, renegotiation at any time, several tasks
in one call, so every `send_all` and `receive_some` goes through a retry loop, conflict
detectors, an internal lock (a scheduler pass of its own) and checkpoints. A served
league pays for that on every decision (bench/README.md, TLS). This stream does what
TLS 1.3 between the referee and its bridges needs, and no more:

- **The handshake** (`do_handshake`), server or client side, with the context's
  certificate and host name checks as `ssl.SSLContext.wrap_bio` sets them up. A
  session older than TLS 1.3 is refused (the contexts of `referee.net.tls` never
  offer one): there is no renegotiation, so a read never needs a write, nor a write a
  read. A server keeps its session tickets, which OpenSSL writes as the handshake
  ends, for its first write (as `trio.SSLStream` does: a client that shakes hands and
  then only writes never sees them).
- **`send_all`**: encrypt, then one socket send of everything that is waiting to go.
- **`receive_some`**: plaintext already decrypted, or a record already received,
  comes first, without touching the socket; the socket is read only when OpenSSL
  wants more. TLS 1.3 messages that are not data (tickets, a key update) are taken in
  by OpenSSL on the way; the answer to a peer's key update, should one come, goes out
  with the next `send_all` (RFC 8446 asks for it before our next data, no sooner).
- **`aclose`**: close_notify when the session is in order and nobody is sending,
  without waiting for the peer's (at most `CLOSE_NOTIFY_S` for the socket to take it:
  a dead peer does not hold it up), then the socket is closed.

What callers rely on stays as with `trio.SSLStream` (`https_compatible=False`): the
peer's close_notify gives b"" (and b"" ever after); a socket that ends without one
(a truncation) and any TLS error raise `trio.BrokenResourceError`, the `ssl` error as
its cause; the socket's own errors come as `trio.SocketStream` words them
(`BrokenResourceError`, `ClosedResourceError` once closed); a second task calling
`send_all` (or `receive_some`) while one is in it gets `trio.BusyResourceError`, and
one sender and one receiver may run at once.

Cancellation: a cancelled `receive_some` loses nothing (ciphertext read from the socket
stays in the incoming BIO until a later call decrypts it), so the stream goes on. A
`send_all` (or `do_handshake`) that is cancelled or fails leaves the stream broken,
every later call but `aclose` raising `BrokenResourceError`: part of its records may
have gone out, and TLS cannot take the rest back (so does `trio.SSLStream`).

Checkpoints: every call is one, as trio asks. Data already decrypted is returned
with a cancel check before it is taken and a shielded schedule point after (what
trio's own sockets do when data is there at once); a socket read or write is itself
the checkpoint, with no other.
"""

from __future__ import annotations

import errno
import ssl
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Literal, overload

import trio
from trio.lowlevel import cancel_shielded_checkpoint, checkpoint, checkpoint_if_cancelled

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trio.socket import SocketType

RECEIVE_SIZE = 65536  # bytes asked of the socket a read (four full TLS records)
CLOSE_NOTIFY_S = 1.0  # the longest `aclose` waits for the socket to take close_notify
# What `SSLObject.version` says of the versions before 1.3, which this stream refuses.
BEFORE_TLS13 = frozenset({"SSLv2", "SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2"})

_OK, _BROKEN, _CLOSED = 0, 1, 2  # `_state`; _OK is falsy, for the test on every call


class TlsStream(trio.abc.Stream):
    """TLS 1.3 over `transport` with `context` (see the module): the server's side with
    `server_side`, else the client's, which checks the certificate against
    `server_hostname` when the context says so. Call `do_handshake` first (`send_all`
    and `receive_some` do it if it has not been done)."""

    __slots__ = (
        "_eof",
        "_handshake",
        "_handshaken",
        "_incoming",
        "_outgoing",
        "_receive",
        "_receiving",
        "_send",
        "_sending",
        "_socket",
        "_ssl",
        "_state",
        "transport_stream",
    )

    def __init__(
        self,
        transport: trio.abc.Stream,
        context: ssl.SSLContext,
        *,
        server_side: bool = False,
        server_hostname: str | None = None,
    ) -> None:
        self.transport_stream = transport
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._ssl = context.wrap_bio(
            self._incoming,
            self._outgoing,
            server_side=server_side,
            server_hostname=_server_name(server_hostname),
        )
        self._state = _OK
        self._handshaken = False
        self._handshake: trio.Event | None = None  # set when the handshake has ended
        self._sending = False
        self._receiving = False
        self._eof = False  # the peer's close_notify came: b"" from now on
        # A SocketStream's socket is read and written directly (its stream methods add
        # a conflict detector and a context manager a call); any other stream as it is.
        self._socket: SocketType | None = None
        self._send: Callable[[bytes], Awaitable[None]] = transport.send_all
        self._receive: Callable[[int], Awaitable[bytes | bytearray]] = transport.receive_some
        if isinstance(transport, trio.SocketStream):
            self._socket = transport.socket
            self._send = self._send_socket
            self._receive = self._receive_socket

    # ---------------------------------------------------------------- what it is

    @property
    def ssl_object(self) -> ssl.SSLObject:
        """The `ssl.SSLObject` (cipher, version, ...)."""
        return self._ssl

    @property
    def server_side(self) -> bool:
        return self._ssl.server_side

    @overload
    def getpeercert(self, binary_form: Literal[False] = False) -> dict[str, Any] | None: ...

    @overload
    def getpeercert(self, binary_form: Literal[True]) -> bytes | None: ...

    def getpeercert(self, binary_form: bool = False) -> dict[str, Any] | bytes | None:
        """The peer's certificate, as `ssl.SSLObject.getpeercert` gives it (its DER bytes
        with `binary_form`); `trio.NeedHandshakeError` before the handshake."""
        if not self._handshaken:
            raise trio.NeedHandshakeError("call do_handshake() before getpeercert()")
        if binary_form:
            return self._ssl.getpeercert(True)
        return self._ssl.getpeercert()

    def version(self) -> str | None:
        """The TLS version of the session ("TLSv1.3"); None before the handshake."""
        return self._ssl.version()

    # ---------------------------------------------------------------- the handshake

    async def do_handshake(self) -> None:
        """Shake hands, once; later calls return at once (a checkpoint). A handshake
        in progress in another task is waited for."""
        if self._state:
            self._raise_state()
        if self._handshaken:
            await checkpoint()
            return
        if self._handshake is not None:  # another task's
            await self._handshake.wait()
            if self._state:
                self._raise_state()
            return
        self._handshake = trio.Event()
        try:
            await self._shake_hands()
        except BaseException:
            self._break()
            raise
        finally:
            self._handshake.set()

    async def _shake_hands(self) -> None:
        tls, outgoing = self._ssl, self._outgoing
        await checkpoint_if_cancelled()
        while True:
            try:
                tls.do_handshake()
                done = True
            except ssl.SSLWantReadError:
                done = False
            except ssl.SSLError as exc:  # a refused certificate (or host name) among them
                raise trio.BrokenResourceError from exc
            if done and tls.server_side and tls.version() not in BEFORE_TLS13:
                break  # what OpenSSL wrote now is session tickets: for the first send
            if outgoing.pending:
                await self._send(outgoing.read())
            if done:
                break
            await self._fill()
        version = tls.version()
        if version in BEFORE_TLS13:
            why = ssl.SSLError(f"TLS 1.3 is required; the peer negotiated {version}")
            raise trio.BrokenResourceError from why
        self._handshaken = True

    # ---------------------------------------------------------------- data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Encrypt `data` and send it, with whatever else waits to go, in one write."""
        if self._sending:
            raise trio.BusyResourceError("another task is sending on this TlsStream")
        if self._state:
            self._raise_state()
        if not self._handshaken:
            await self.do_handshake()
        self._sending = True
        try:
            if data:  # SSLObject.write(b"") would say the end
                try:
                    self._ssl.write(data)
                except ssl.SSLError as exc:
                    raise trio.BrokenResourceError from exc
            if self._outgoing.pending:
                await self._send(self._outgoing.read())
            else:
                await checkpoint()
        except BaseException:
            self._break()  # some of the records may have gone: nothing can follow them
            raise
        finally:
            self._sending = False

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """Up to `max_bytes` bytes of plaintext; b"" once the peer has said close_notify."""
        if self._receiving:
            raise trio.BusyResourceError("another task is receiving on this TlsStream")
        if self._state:
            self._raise_state()
        if not self._handshaken:
            await self.do_handshake()
        if max_bytes is None:
            max_bytes = RECEIVE_SIZE
        elif max_bytes < 1:
            raise ValueError("max_bytes must be >= 1")
        self._receiving = True
        try:
            if self._eof:
                await checkpoint()
                return b""
            if self._ssl.pending() or self._incoming.pending:
                # Decrypted already, or a record (or part of one) received already.
                await checkpoint_if_cancelled()
                data = self._read(max_bytes)
                if data is not None:
                    await cancel_shielded_checkpoint()  # it is taken: keep it
                    return data
            while True:
                await self._fill()  # the checkpoint; a cancelled read has read nothing
                data = self._read(max_bytes)
                if data is not None:
                    return data
        finally:
            self._receiving = False

    def _read(self, max_bytes: int) -> bytes | None:
        """What OpenSSL decrypts now; None when it wants more from the socket."""
        try:
            data = self._ssl.read(max_bytes)
        except ssl.SSLWantReadError:
            return None
        except ssl.SSLError as exc:  # a truncation (the socket ended first) among them
            self._break()
            raise trio.BrokenResourceError from exc
        if not data:
            self._eof = True  # close_notify
        return data

    async def _fill(self) -> None:
        """One read of the socket into the incoming BIO (its end, when it ends)."""
        data = await self._receive(RECEIVE_SIZE)
        if data:
            self._incoming.write(data)
        elif self._incoming.eof:  # OpenSSL wants more after the end: never, but not forever
            self._break()
            raise trio.BrokenResourceError
        else:
            self._incoming.write_eof()

    async def wait_send_all_might_not_block(self) -> None:
        if self._sending:
            raise trio.BusyResourceError("another task is sending on this TlsStream")
        if self._state:
            self._raise_state()
        await self.transport_stream.wait_send_all_might_not_block()

    # ---------------------------------------------------------------- the socket

    async def _send_socket(self, data: bytes) -> None:
        socket = self._socket
        assert socket is not None
        try:
            sent = await socket.send(data)
            if sent < len(data):
                with memoryview(data) as view:
                    while sent < len(data):
                        sent += await socket.send(view[sent:])
        except OSError as exc:
            raise _stream_error(exc) from (None if exc.errno == errno.EBADF else exc)

    async def _receive_socket(self, max_bytes: int) -> bytes:
        socket = self._socket
        assert socket is not None
        try:
            return await socket.recv(max_bytes)
        except OSError as exc:
            raise _stream_error(exc) from (None if exc.errno == errno.EBADF else exc)

    # ---------------------------------------------------------------- the end

    async def aclose(self) -> None:
        """close_notify if the session is in order (see the module), then the socket
        closed; again: nothing."""
        if self._state == _CLOSED:
            await checkpoint()
            return
        transport = self.transport_stream
        try:
            if self._state == _OK and self._handshaken and not self._sending:
                # close_notify, after anything still waiting to go; SSLWantReadError
                # is the peer's close_notify, which is not waited for.
                with suppress(ssl.SSLError):
                    self._ssl.unwrap()
                if self._outgoing.pending:
                    self._sending = True
                    try:
                        with (
                            trio.move_on_after(CLOSE_NOTIFY_S),
                            suppress(trio.BrokenResourceError, trio.ClosedResourceError),
                        ):
                            await self._send(self._outgoing.read())
                    finally:
                        self._sending = False
        except BaseException:
            self._state = _CLOSED
            await trio.aclose_forcefully(transport)
            raise
        self._state = _CLOSED
        await transport.aclose()

    def _break(self) -> None:
        if self._state == _OK:
            self._state = _BROKEN

    def _raise_state(self) -> None:
        # Without words, as trio.SSLStream: a connection's fault quotes them.
        if self._state == _CLOSED:
            raise trio.ClosedResourceError
        raise trio.BrokenResourceError


def _server_name(hostname: str | None) -> bytes | None:
    """The name the certificate is checked against, encoded as trio encodes the name it
    connects to (and `trio.SSLStream` the one it checks): ASCII as it is, else IDNA 2008
    (the `idna` package, trio's), not Python's IDNA 2003."""
    if hostname is None:
        return None
    try:
        return hostname.encode("ascii")
    except UnicodeEncodeError:
        import idna

        return idna.encode(hostname, uts46=True)


def _stream_error(exc: OSError) -> trio.BrokenResourceError | trio.ClosedResourceError:
    """A socket error as `trio.SocketStream` words it."""
    if exc.errno == errno.EBADF:
        return trio.ClosedResourceError("this socket was already closed")
    return trio.BrokenResourceError(f"socket connection broken: {exc}")
