"""TLS for `referee serve` and `referee connect`: contexts, the self-signed
certificate, fingerprints and pins.

TLS 1.3 at least, on both sides. The server gives a certificate chain and its key
(`server_tls`), or makes an EC P-256 key and a self-signed certificate once and
keeps them in the league's output folder (`self_signed`), so that a resumed league
shows the same certificate. A certificate is named by its fingerprint: `sha256:`
and the lowercase hex SHA-256 of its DER bytes, what `serve` prints beside its
address and the standings and the site show. A client verifies the server with the
system's CAs, a CA bundle of its own, or a pin: that fingerprint, compared after
the handshake and before anything is sent (`pin_mismatch`).

Which addresses plain TCP is allowed on without `--insecure-plaintext` is here too
(`is_loopback`): nobody but this machine can listen in on those.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import hmac
import ipaddress
import os
import re
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography import x509

MIN_VERSION = ssl.TLSVersion.TLSv1_3
PIN_PREFIX = "sha256:"
_PIN = re.compile(r"sha256:([0-9a-fA-F]{64})")
SELF_SIGNED_DAYS = 3650  # kept for the league's life: a resumed league keeps its pin
WILDCARDS = ("", "0.0.0.0", "::")  # --host values that listen on every address
LOOPBACK_NAMES = ("localhost",)


class TlsError(Exception):
    """A certificate, key or CA bundle that cannot be used; the message is one line
    naming the file."""


@dataclass(frozen=True)
class ServerTls:
    """What `serve` listens with: the context, and the certificate's fingerprint."""

    context: ssl.SSLContext
    fingerprint: str  # sha256:HEX of the first certificate of the chain
    cert: Path
    key: Path


def fingerprint(der: bytes) -> str:
    """A certificate's fingerprint: `sha256:` and the hex SHA-256 of its DER bytes."""
    return PIN_PREFIX + hashlib.sha256(der).hexdigest()


def pin_problem(pin: str) -> str | None:
    """Why `pin` is not a fingerprint (`sha256:` and 64 hexadecimal digits); None when
    it is."""
    if _PIN.fullmatch(pin):
        return None
    return (
        "expected sha256: and 64 hexadecimal digits, the certificate fingerprint "
        "`referee serve` prints beside its address"
    )


def normal_pin(pin: str) -> str:
    """A good pin as fingerprints are written (lowercase hex)."""
    return PIN_PREFIX + pin[len(PIN_PREFIX) :].lower()


def is_loopback(host: str) -> bool:
    """Whether `host` (a --host value) is an address only this machine reaches:
    127.0.0.0/8, ::1 or "localhost"."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _context(purpose: ssl.Purpose) -> ssl.SSLContext:
    context = ssl.create_default_context(purpose)
    context.minimum_version = MIN_VERSION
    return context


ENCRYPTED = "the key is encrypted; give one without a passphrase (readable by its owner only)"


def _no_password() -> str:
    raise TlsError(ENCRYPTED)


def server_tls(
    cert: Path, key: Path, *, options: tuple[str, str] = ("--tls-cert", "--tls-key")
) -> ServerTls:
    """The server's context from a PEM certificate chain (the server's own first) and
    its PEM key; `TlsError` names the file that cannot be used, after the `options`
    they were given by."""
    of_cert, of_key = f"{options[0]} {cert}", f"{options[1]} {key}"
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        chain = x509.load_pem_x509_certificates(cert.read_bytes())
    except OSError as exc:
        raise TlsError(f"{of_cert}: cannot read: {exc.strerror}") from None
    except ValueError:
        raise TlsError(f"{of_cert}: not a PEM certificate") from None
    leaf = chain[0]
    try:
        private = serialization.load_pem_private_key(key.read_bytes(), password=None)
    except OSError as exc:
        raise TlsError(f"{of_key}: cannot read: {exc.strerror}") from None
    except TypeError:  # a password was needed
        raise TlsError(f"{of_key}: {ENCRYPTED}") from None
    except ValueError:
        raise TlsError(f"{of_key}: not a PEM private key") from None
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    der = serialization.Encoding.DER
    if private.public_key().public_bytes(der, public) != leaf.public_key().public_bytes(
        der, public
    ):
        raise TlsError(f"{of_key}: not the key of the certificate in {cert}")
    now = dt.datetime.now(dt.UTC)
    if leaf.not_valid_after_utc < now:
        raise TlsError(f"{of_cert}: expired on {leaf.not_valid_after_utc:%Y-%m-%d}")
    if leaf.not_valid_before_utc > now:
        raise TlsError(
            f"{of_cert}: not valid before {leaf.not_valid_before_utc:%Y-%m-%d %H:%M} UTC"
        )
    context = _context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key, password=_no_password)
    except ssl.SSLError as exc:
        raise TlsError(f"{of_cert}: {exc.reason or exc}") from None
    return ServerTls(context, fingerprint(leaf.public_bytes(der)), cert, key)


def self_signed(folder: Path, host: str) -> ServerTls:
    """The certificate of `folder` (OUT/tls): server.key (readable by its owner only)
    and server.crt, made on the first start for `host` (and localhost, 127.0.0.1 and
    ::1 when `host` is every address), and used as they are ever after."""
    cert, key = folder / "server.crt", folder / "server.key"
    if not (cert.is_file() and key.is_file()):
        _make_self_signed(folder, host)
    try:
        return server_tls(cert, key, options=("the certificate", "the key"))
    except TlsError as exc:
        raise TlsError(f"{exc}; remove {folder} to make a new certificate") from None


def _make_self_signed(folder: Path, host: str) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise TlsError(f"{folder}: cannot make the folder: {exc.strerror}") from None
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "referee serve")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=SELF_SIGNED_DAYS))
        .add_extension(x509.SubjectAlternativeName(_alt_names(host)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(private, hashes.SHA256())
    )
    key_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    # The key first, each written whole under another name and then renamed: a start
    # that stops halfway leaves no certificate without its key.
    _write(folder / "server.key", key_pem, 0o600)
    _write(folder / "server.crt", certificate.public_bytes(serialization.Encoding.PEM), 0o644)


def _alt_names(host: str) -> list[x509.GeneralName]:
    from cryptography import x509

    hosts = ["localhost", "127.0.0.1", "::1"] if host in WILDCARDS else [host]
    names: list[x509.GeneralName] = []
    for one in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(one.strip("[]"))))
        except ValueError:
            with contextlib.suppress(UnicodeError, ValueError):
                names.append(x509.DNSName(one.encode("idna").decode("ascii")))
    return names or [x509.DNSName("localhost")]


def _write(path: Path, data: bytes, mode: int) -> None:
    part = path.with_name(path.name + ".part")
    try:
        with contextlib.suppress(FileNotFoundError):
            part.unlink()
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(part, path)
    except OSError as exc:
        raise TlsError(f"{path}: cannot write: {exc.strerror}") from None


def client_context(*, ca: Path | None = None, pin: str | None = None) -> ssl.SSLContext:
    """`referee connect`'s context: with a `pin`, no CA check (the certificate must be
    the pinned one: `pin_mismatch`); else the server's certificate verified, with its
    host name, against `ca` (a PEM bundle) or the system's CAs."""
    if pin is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.minimum_version = MIN_VERSION
        return context
    context = _context(ssl.Purpose.SERVER_AUTH)
    if ca is not None:
        try:
            context.load_verify_locations(cafile=ca)
        except OSError as exc:
            raise TlsError(f"--ca {ca}: cannot read: {exc.strerror}") from None
        except ssl.SSLError:
            raise TlsError(f"--ca {ca}: holds no PEM certificate") from None
    return context


def pin_mismatch(der: bytes | None, pin: str) -> str | None:
    """What is wrong with the server's certificate (`der`) against `pin`, in one line
    naming both; None when it is the pinned one."""
    if der is None:
        return f"the server showed no certificate, not the pinned {pin}"
    came = fingerprint(der)
    if hmac.compare_digest(came, pin):
        return None
    return f"the server's certificate is {came}, not the pinned {pin}"


def handshake_failure(exc: BaseException) -> tuple[bool, str]:
    """What a failed TLS handshake (trio's `BrokenResourceError`, its cause the reason)
    says, and whether trying again could help: a refused certificate or a server that
    does not speak TLS will be the same next time; a connection closed mid-handshake
    (a full server, its deadline) may not."""
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    if isinstance(cause, ssl.SSLCertVerificationError):
        return False, f"the server's certificate was refused: {cause.verify_message}"
    if isinstance(cause, ssl.SSLEOFError | ssl.SSLZeroReturnError) or not isinstance(
        cause, ssl.SSLError
    ):
        return True, "the server closed the connection during the TLS handshake"
    reason = cause.reason or str(cause)
    return False, f"TLS handshake failed: {reason} (does the server serve TLS?)"
