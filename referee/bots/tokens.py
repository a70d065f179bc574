"""Login tokens of TCP bots: what counts as 128 bits, how to make one, and how to
keep one out of a core dump.

A token `referee token new NAME` makes is `mxt_` and 43 characters of URL-safe
base64 (32 random bytes, 256 bits): the prefix lets a secret scanner spot a leaked
one (`TOKEN_PATTERN`), and it is not counted as entropy. A file can only show a
token's length and its characters, so that is what is judged, after the prefix if
there is one: a token of hexadecimal digits only carries 4 bits a character, any
other token 6 (URL-safe base64: letters, digits, `-` and `_`, what Python's
`secrets.token_urlsafe` prints too). At least 128 bits means at least 32
hexadecimal digits, or 22 characters of URL-safe base64; any other character (a
space, `+`, `/`, `=`, a non-ASCII letter) is refused, so that the count holds for
every token accepted. The count is what a random token of that length and alphabet
holds: a word a person chose holds far less, which no rule of length can see.
Messages describe a token, never quote it.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import string
import sys

MIN_BITS = 128
PREFIX = "mxt_"  # what marks a token of this referee's, for secret scanners
TOKEN_PATTERN = r"mxt_[A-Za-z0-9_-]{43}"  # a token `new_token` makes, as a scanner's rule
HEX_DIGITS = frozenset(string.hexdigits)
URLSAFE = frozenset(string.ascii_letters + string.digits + "-_")
MIN_HEX = 32  # 4 bits each
MIN_URLSAFE = 22  # 6 bits each: 132 bits
MAKE_ONE = "`referee token new NAME` prints a new one"
RULE = (
    f"a token needs at least {MIN_BITS} bits: {MIN_URLSAFE} characters of letters, digits, "
    f"- and _ (URL-safe base64), or {MIN_HEX} hexadecimal digits; {MAKE_ONE}"
)
PR_SET_DUMPABLE = 4  # linux/prctl.h


def new_token() -> str:
    """A fresh token: `mxt_` and 32 random bytes in URL-safe base64 (43 characters,
    256 bits)."""
    return PREFIX + secrets.token_urlsafe(32)


def token_sha256(token: str) -> str:
    """What a league file's `token_sha256` holds for `token`: its SHA-256 in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_bits(token: str) -> int | None:
    """The bits a random token like `token` holds, the `mxt_` prefix not counted (4 per
    hexadecimal digit when it has nothing else, 6 per URL-safe base64 character); None
    when it holds another character."""
    body = token.removeprefix(PREFIX)
    chars = set(body)
    if chars <= HEX_DIGITS:
        return 4 * len(body)
    if chars <= URLSAFE:
        return 6 * len(body)
    return None


def token_problem(token: str) -> str | None:
    """Why `token` is too weak to guard a login, in words that do not quote it; None
    when it holds at least `MIN_BITS` bits."""
    bits = token_bits(token)
    if bits is None:
        return f"the token holds characters other than letters, digits, - and _; {RULE}"
    if bits >= MIN_BITS:
        return None
    body = token.removeprefix(PREFIX)
    kind = "hexadecimal digits" if set(body) <= HEX_DIGITS else "URL-safe base64 characters"
    size = f"{PREFIX} and {len(body)}" if body != token else f"{len(token)}"
    return f"the token is {size} {kind}, {bits} bits; {RULE}"


def keep_out_of_core_dumps() -> None:
    """Make this process leave no core dump and refuse other processes of its user a
    look at its memory, before it reads a token: RLIMIT_CORE 0 and, on Linux,
    prctl(PR_SET_DUMPABLE, 0). Best effort: where either is refused, it is left.

    A program this process starts afterwards is dumpable again (execve resets it; it
    keeps RLIMIT_CORE 0), which a bot does not notice."""
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
