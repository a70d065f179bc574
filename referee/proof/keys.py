"""The organiser's signing key: Ed25519 (the `cryptography` package) in minisign's
formats, so that an entrant can check a signed file with `minisign -V` as well as
with `referee verify`.

**Files** (https://jedisct1.github.io/minisign/; the layouts are those of
minisign.c and minisign.h, 0.11 and 0.12). Each is an `untrusted comment: ...` line
and a line of standard base64; a key id is 8 random bytes, shown as minisign shows
it: the little-endian number in 16 hexadecimal digits.

- Public key (`KEY.pub`, mode 0644): base64 of `Ed` + key id + the 32-byte key.
  Its base64 line (`RW...`) alone is the key too (`minisign -P LINE`).
- Secret key (`KEY`, mode 0600): base64 of `Ed`, the key derivation `\\0\\0` (none:
  the file is not encrypted, as `minisign -G -W` writes it), the checksum algorithm
  `B2`, 48 zero bytes (the unused salt and scrypt limits), the key id, the 64-byte
  Ed25519 secret key (seed and public key) and a checksum: BLAKE2b-256 of `Ed`, the
  key id and the 64-byte key. minisign does not read the checksum of a key it need not
  decrypt (`minisign -G -W` leaves it zero); reading one, a zero checksum or the right
  one is accepted. `minisign -S -s KEY` signs with a key `keygen` made. A key
  encrypted with a password is refused (the referee runs unattended and asks for none);
  so is a file group or others may open, as ssh refuses one.
- Signature (`FILE.minisig`), four lines: an untrusted comment; base64 of `ED` +
  key id + the Ed25519 signature of the BLAKE2b-512 of the file (minisign's default,
  "prehashed"; a legacy `Ed` signature of the file itself is verified too, never made);
  `trusted comment: TEXT`; base64 of the Ed25519 signature of the 64-byte file
  signature followed by TEXT's UTF-8 bytes (the "global signature", which binds the
  trusted comment to the file). The trusted comment is one line of printable text
  (tabs allowed), what minisign 0.12 requires.

**API.**

- `ProofError`: a key or signature that cannot be read or does not hold, in one line
  naming the file; `check` says which check failed (`FORMAT`, `KEY_ID`, `SIGNATURE`,
  `GLOBAL`, or `FILE` for a file that cannot be read or written, `MODE`, `ENCRYPTED`).
- `PublicKey(key_id, raw)`: `PublicKey.load(path)`, `PublicKey.from_text(text)` (the
  .pub file's content or its bare base64 line); `.text()` (a .pub file's content),
  `.line()` (the base64 line), `.id_hex`; `.verify(data, signature) -> bool` (a raw
  64-byte Ed25519 signature, as in receipts); `.verify_minisig(data, minisig_text) ->
  str`, the trusted comment, or `ProofError`.
- `SigningKey`: `SigningKey.generate()`, `SigningKey.load(path)`,
  `SigningKey.from_text(text)`; `.key_id`, `.public`; `.sign(data) -> bytes` (raw,
  64 bytes); `.minisig(data, trusted_comment, untrusted_comment=...) -> str` (a
  .minisig file's content); `.text()` (a secret key file's content).
- `keygen(path) -> SigningKey`: writes `path` (secret, 0600) and `path.pub`
  (`public_path`), refusing if either exists.
- `write_minisig(path, key, trusted_comment)`: signs the file `path` into
  `path.minisig` (`minisig_path`), atomically; `verify_minisig_file(path, key)` checks
  it and returns the trusted comment.
"""

from __future__ import annotations

import binascii
import contextlib
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

SIG_ALG: Final = b"Ed"  # a key's algorithm, and a legacy signature's (of the file itself)
SIG_ALG_HASHED: Final = b"ED"  # a signature of the file's BLAKE2b-512: what is made
KDF_NONE: Final = b"\0\0"
KDF_SCRYPT: Final = b"Sc"
CHK_ALG: Final = b"B2"
KEY_ID_BYTES: Final = 8
UNTRUSTED: Final = "untrusted comment: "
TRUSTED: Final = "trusted comment: "
MINISIG_SUFFIX: Final = ".minisig"
DEFAULT_UNTRUSTED: Final = "signature from referee"
# minisign reads a comment line into 1024 bytes, a trusted comment line into 8192,
# both with the prefix and the newline.
UNTRUSTED_MAX: Final = 1024 - len(UNTRUSTED) - 2
TRUSTED_MAX: Final = 8192 - len(TRUSTED) - 2
KEY_FILE_MAX: Final = 4096  # a key file is under 300 bytes
PUBLIC_BYTES: Final = 2 + KEY_ID_BYTES + 32
SIG_BYTES: Final = 2 + KEY_ID_BYTES + 64
# sig_alg, kdf_alg, chk_alg, kdf salt (32), opslimit (8), memlimit (8), key id, sk, chk
SECRET_BYTES: Final = 2 + 2 + 2 + 32 + 8 + 8 + KEY_ID_BYTES + 64 + 32
_KEY_AT: Final = 54  # where the key id starts in a secret key
MAKE_ONE: Final = "make an unencrypted one with `referee keygen` or `minisign -G -W`"

FORMAT: Final = "format"
KEY_ID: Final = "key id"
SIGNATURE: Final = "signature"
GLOBAL: Final = "global signature"
FILE: Final = "file"
MODE: Final = "mode"
ENCRYPTED: Final = "encrypted"


class ProofError(Exception):
    """A key or a signature that cannot be read, or does not hold: one line that names
    the file (or what the text was) and says what is wrong. `check` is which check
    failed: one of `FORMAT`, `KEY_ID`, `SIGNATURE`, `GLOBAL`, `FILE`, `MODE`,
    `ENCRYPTED`."""

    def __init__(self, message: str, check: str) -> None:
        super().__init__(message)
        self.check = check


def id_hex(key_id: bytes) -> str:
    """A key id as minisign shows it: the little-endian number, 16 hexadecimal digits."""
    return f"{int.from_bytes(key_id, 'little'):016X}"


def public_path(path: Path) -> Path:
    """Where `keygen` puts the public key of the secret key file `path`: `path.pub`."""
    return path.with_name(path.name + ".pub")


def minisig_path(path: Path) -> Path:
    """Where the signature of the file `path` goes: `path.minisig`, as minisign puts it."""
    return path.with_name(path.name + MINISIG_SUFFIX)


def _b64(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def _unb64(line: str, size: int, what: str, where: str) -> bytes:
    """The `size` bytes of the base64 `line`, or a format error naming `where`."""
    try:
        data = binascii.a2b_base64(line.strip().encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ProofError(f"{where}: not a minisign {what}: not base64", FORMAT) from None
    if len(data) != size:
        raise ProofError(
            f"{where}: not a minisign {what}: {len(data)} bytes where {size} are expected", FORMAT
        )
    return data


def _lines(text: str) -> list[str]:
    """The lines of a minisign file, each without its `\\r\\n` or `\\n`, blank ones last
    dropped."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _comment_problem(comment: str, limit: int) -> str | None:
    """Why `comment` cannot be a comment line of a minisign file: more than one line, a
    control character (a tab excepted, as minisign 0.12 reads a trusted comment), more
    than `limit` bytes. None when it can."""
    for char in comment:
        code = ord(char)
        if char != "\t" and (code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF):
            return f"it holds the control character {char!r}: a comment is one line of text"
    size = len(comment.encode("utf-8"))
    if size > limit:
        return f"it is {size} bytes, more than the {limit} minisign reads"
    return None


@dataclass(frozen=True)
class PublicKey:
    """An Ed25519 public key and its minisign key id."""

    key_id: bytes
    raw: bytes
    _key: Ed25519PublicKey = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.key_id) != KEY_ID_BYTES or len(self.raw) != 32:
            raise ValueError(f"a key id is {KEY_ID_BYTES} bytes and a public key 32")
        object.__setattr__(self, "_key", Ed25519PublicKey.from_public_bytes(self.raw))

    @classmethod
    def load(cls, path: Path) -> PublicKey:
        """The public key in the file `path` (a .pub file, or its base64 line alone)."""
        return cls.from_text(_read_text(path, "public key"), str(path))

    @classmethod
    def from_text(cls, text: str, where: str = "public key") -> PublicKey:
        """The public key in `text`: a .pub file's content (an untrusted comment line,
        then the key's line) or the base64 line alone (`RW...`). Errors name `where`."""
        lines = _lines(text)
        if len(lines) == 2 and lines[0].startswith(UNTRUSTED):
            line = lines[1]
        elif len(lines) == 1:
            line = lines[0]
        else:
            raise ProofError(
                f"{where}: not a minisign public key: expected an `{UNTRUSTED}` line "
                "and a line of base64, or the base64 line alone",
                FORMAT,
            )
        data = _unb64(line, PUBLIC_BYTES, "public key", where)
        if data[:2] != SIG_ALG:
            raise ProofError(
                f"{where}: not a minisign public key: algorithm {data[:2]!r}, not {SIG_ALG!r}",
                FORMAT,
            )
        try:
            return cls(data[2:10], data[10:])
        except ValueError:
            raise ProofError(f"{where}: not an Ed25519 public key", FORMAT) from None

    @property
    def id_hex(self) -> str:
        """The key id as minisign shows it."""
        return id_hex(self.key_id)

    def line(self) -> str:
        """The key as minisign's base64 line, what `minisign -P` takes."""
        return _b64(SIG_ALG + self.key_id + self.raw)

    def text(self) -> str:
        """The content of a .pub file of this key, as minisign writes one."""
        return f"{UNTRUSTED}minisign public key {self.id_hex}\n{self.line()}\n"

    def verify(self, data: bytes, signature: bytes) -> bool:
        """Whether `signature` is this key's raw Ed25519 signature of `data`."""
        try:
            self._key.verify(signature, data)
        except InvalidSignature:
            return False
        return True

    def verify_minisig(self, data: bytes, minisig_text: str, where: str = "signature") -> str:
        """The trusted comment of the minisign signature `minisig_text` (a .minisig
        file's content) of `data`, made by this key; else `ProofError` naming `where`
        and the check that failed: the format, the key id, the signature of the data,
        the global signature (of the trusted comment)."""
        lines = _lines(minisig_text)
        if (
            len(lines) != 4
            or not lines[0].startswith(UNTRUSTED)
            or not lines[2].startswith(TRUSTED)
        ):
            raise ProofError(
                f"{where}: not a minisign signature: expected four lines, `{UNTRUSTED}...`, "
                f"the signature, `{TRUSTED}...`, the global signature",
                FORMAT,
            )
        sig = _unb64(lines[1], SIG_BYTES, "signature", where)
        comment = lines[2].removeprefix(TRUSTED)
        problem = _comment_problem(comment, TRUSTED_MAX)
        if problem is not None:
            raise ProofError(
                f"{where}: not a minisign signature: the trusted comment: {problem}", FORMAT
            )
        global_sig = _unb64(lines[3], 64, "global signature", where)
        if sig[:2] == SIG_ALG_HASHED:
            signed = hashlib.blake2b(data, digest_size=64).digest()
        elif sig[:2] == SIG_ALG:
            signed = data
        else:
            raise ProofError(f"{where}: not a minisign signature: algorithm {sig[:2]!r}", FORMAT)
        if sig[2:10] != self.key_id:
            raise ProofError(
                f"{where}: made by the key {id_hex(sig[2:10])}, not by this public key "
                f"{self.id_hex}",
                KEY_ID,
            )
        if not self.verify(signed, sig[10:]):
            raise ProofError(
                f"{where}: the signature does not match the signed file's bytes "
                "(the file was changed after it was signed)",
                SIGNATURE,
            )
        if not self.verify(sig[10:] + comment.encode("utf-8"), global_sig):
            raise ProofError(
                f"{where}: the global signature does not match the trusted comment "
                "(the trusted comment was changed after it was signed)",
                GLOBAL,
            )
        return comment


class SigningKey:
    """An Ed25519 secret key and its minisign key id: what signs results."""

    __slots__ = ("_key", "key_id", "public")

    def __init__(self, key_id: bytes, seed: bytes) -> None:
        """The key of the 32-byte Ed25519 `seed`, with the 8-byte `key_id`."""
        if len(key_id) != KEY_ID_BYTES or len(seed) != 32:
            raise ValueError(f"a key id is {KEY_ID_BYTES} bytes and an Ed25519 seed 32")
        self.key_id = key_id
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        self.public = PublicKey(key_id, self._key.public_key().public_bytes_raw())

    def __repr__(self) -> str:
        return f"SigningKey(key id {id_hex(self.key_id)})"

    @classmethod
    def generate(cls) -> SigningKey:
        """A fresh key, with a fresh random key id."""
        return cls(secrets.token_bytes(KEY_ID_BYTES), secrets.token_bytes(32))

    @classmethod
    def load(cls, path: Path) -> SigningKey:
        """The key in the secret key file `path`, as `keygen` or `minisign -G -W` wrote
        it; refused when group or others may open the file, or when it is encrypted."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise ProofError(f"{path}: cannot read the secret key: {exc.strerror}", FILE) from None
        with os.fdopen(fd, "rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise ProofError(f"{path}: cannot read the secret key: not a file", FILE)
            if mode & 0o077:
                raise ProofError(
                    f"{path}: the secret key may be opened by others (mode "
                    f"{stat.S_IMODE(mode):04o}); make it private: chmod 600 {path}",
                    MODE,
                )
            raw = file.read(KEY_FILE_MAX + 1)
        if len(raw) > KEY_FILE_MAX:
            raise ProofError(f"{path}: not a minisign secret key: too large", FORMAT)
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            raise ProofError(f"{path}: not a minisign secret key: not text", FORMAT) from None
        return cls.from_text(text, str(path))

    @classmethod
    def from_text(cls, text: str, where: str = "secret key") -> SigningKey:
        """The key in `text`, a secret key file's content. Errors name `where`."""
        lines = _lines(text)
        if len(lines) != 2:
            raise ProofError(
                f"{where}: not a minisign secret key: expected a comment line and a line of base64",
                FORMAT,
            )
        data = _unb64(lines[1], SECRET_BYTES, "secret key", where)
        sig_alg, kdf_alg, chk_alg = data[0:2], data[2:4], data[4:6]
        if sig_alg != SIG_ALG or chk_alg != CHK_ALG:
            raise ProofError(
                f"{where}: not a minisign Ed25519 secret key: algorithms {sig_alg!r} and "
                f"{chk_alg!r}",
                FORMAT,
            )
        if kdf_alg == KDF_SCRYPT:
            raise ProofError(
                f"{where}: the secret key is encrypted with a password, which the referee "
                f"does not ask for; {MAKE_ONE}, or remove the password with "
                "`minisign -C -W -s FILE`",
                ENCRYPTED,
            )
        if kdf_alg != KDF_NONE:
            raise ProofError(
                f"{where}: not a minisign secret key: key derivation {kdf_alg!r}", FORMAT
            )
        key_id = data[_KEY_AT : _KEY_AT + KEY_ID_BYTES]
        secret = data[_KEY_AT + KEY_ID_BYTES : _KEY_AT + KEY_ID_BYTES + 64]
        chk = data[-32:]
        if chk != bytes(32) and chk != _checksum(key_id, secret):
            raise ProofError(
                f"{where}: the secret key's checksum does not match (the file is damaged)",
                FORMAT,
            )
        key = cls(key_id, secret[:32])
        if key.public.raw != secret[32:]:
            raise ProofError(
                f"{where}: the secret key's public half does not match its seed (the file "
                "is damaged)",
                FORMAT,
            )
        return key

    def text(self) -> str:
        """The content of a secret key file of this key: minisign's format, unencrypted."""
        secret = self._key.private_bytes_raw() + self.public.raw
        data = (
            SIG_ALG
            + KDF_NONE
            + CHK_ALG
            + bytes(48)
            + self.key_id
            + secret
            + _checksum(self.key_id, secret)
        )
        return (
            f"{UNTRUSTED}referee secret key {id_hex(self.key_id)}, unencrypted: keep this "
            f"file private\n{_b64(data)}\n"
        )

    def sign(self, data: bytes) -> bytes:
        """The raw Ed25519 signature of `data`: 64 bytes (`PublicKey.verify` checks it)."""
        return self._key.sign(data)

    def minisig(
        self, data: bytes, trusted_comment: str, untrusted_comment: str = DEFAULT_UNTRUSTED
    ) -> str:
        """The content of a .minisig file for `data`: minisign's prehashed signature,
        with `trusted_comment` (signed) and `untrusted_comment` (not). Each comment is
        one line of printable text (`ValueError` else)."""
        for name, comment, limit in (
            ("trusted", trusted_comment, TRUSTED_MAX),
            ("untrusted", untrusted_comment, UNTRUSTED_MAX),
        ):
            problem = _comment_problem(comment, limit)
            if problem is not None:
                raise ValueError(f"the {name} comment {comment!r}: {problem}")
        sig = self.sign(hashlib.blake2b(data, digest_size=64).digest())
        global_sig = self.sign(sig + trusted_comment.encode("utf-8"))
        return (
            f"{UNTRUSTED}{untrusted_comment}\n"
            f"{_b64(SIG_ALG_HASHED + self.key_id + sig)}\n"
            f"{TRUSTED}{trusted_comment}\n"
            f"{_b64(global_sig)}\n"
        )


def _checksum(key_id: bytes, secret: bytes) -> bytes:
    """minisign's checksum of a secret key: BLAKE2b-256 of `Ed`, the key id, the key."""
    return hashlib.blake2b(SIG_ALG + key_id + secret, digest_size=32).digest()


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProofError(f"{path}: cannot read the {what}: {exc.strerror}", FILE) from None
    except UnicodeDecodeError:
        raise ProofError(f"{path}: not a minisign {what}: not UTF-8 text", FORMAT) from None


def _exists(path: Path) -> ProofError:
    return ProofError(
        f"{path}: already exists; a key is never overwritten (choose another name, or move "
        "the old key away)",
        FILE,
    )


def _create(path: Path, text: str, mode: int) -> None:
    """Write `text` to the new file `path` with `mode`; `ProofError` when it exists or
    cannot be written (and then no part of it is left)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    except FileExistsError:
        raise _exists(path) from None
    except OSError as exc:
        why = exc.strerror if path.parent.is_dir() else f"no folder {path.parent}"
        raise ProofError(f"{path}: cannot write: {why}", FILE) from None
    try:
        with os.fdopen(fd, "w", encoding="ascii") as file:
            os.fchmod(file.fileno(), mode)  # whatever the umask
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise ProofError(f"{path}: cannot write: {exc.strerror}", FILE) from None


def keygen(path: Path) -> SigningKey:
    """A fresh key, written to `path` (the secret key, mode 0600) and `path.pub` (the
    public key, mode 0644); `ProofError` when either exists or cannot be written, and
    then neither is left behind."""
    pub = public_path(path)
    for place in (path, pub):  # said before anything is written
        if os.path.lexists(place):
            raise _exists(place)
    key = SigningKey.generate()
    _create(path, key.text(), 0o600)
    try:
        _create(pub, key.public.text(), 0o644)
    except ProofError:
        path.unlink(missing_ok=True)
        raise
    return key


def write_minisig(
    path: Path, key: SigningKey, trusted_comment: str, untrusted_comment: str = DEFAULT_UNTRUSTED
) -> Path:
    """Sign the file `path` with `key` into `path.minisig` (mode 0644), written through a
    temporary file beside it and renamed over it: a reader sees the old signature or
    the new one, never half of one. Returns the signature's path; `ProofError` when the
    file cannot be read or the signature written."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProofError(f"{path}: cannot read the file to sign: {exc.strerror}", FILE) from None
    text = key.minisig(data, trusted_comment, untrusted_comment)
    target = minisig_path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as file:
            os.fchmod(file.fileno(), 0o644)
            file.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise ProofError(f"{target}: cannot write: {exc.strerror}", FILE) from None
    return target


def verify_minisig_file(path: Path, key: PublicKey) -> str:
    """Check `path.minisig` against the file `path` and `key`: the trusted comment, or
    `ProofError` naming the signature file and the check that failed."""
    sig = minisig_path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProofError(f"{path}: cannot read the signed file: {exc.strerror}", FILE) from None
    return key.verify_minisig(data, _read_text(sig, "signature"), str(sig))
