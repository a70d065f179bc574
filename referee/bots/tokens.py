"""Login tokens of TCP bots: what counts as 128 bits, and how to make one.

A file can only show a token's length and its characters, so that is what is
judged: a token of hexadecimal digits only carries 4 bits a character, any
other token 6 (URL-safe base64: letters, digits, `-` and `_`, what
`referee token` and Python's `secrets.token_urlsafe` print). At least 128 bits
means at least 32 hexadecimal digits, or 22 characters of URL-safe base64; any
other character (a space, `+`, `/`, `=`, a non-ASCII letter) is refused, so that
the count holds for every token accepted. The count is what a random token of
that length and alphabet holds: a word a person chose holds far less, which no
rule of length can see. Messages describe a token, never quote it.
"""

from __future__ import annotations

import secrets
import string

MIN_BITS = 128
HEX_DIGITS = frozenset(string.hexdigits)
URLSAFE = frozenset(string.ascii_letters + string.digits + "-_")
MIN_HEX = 32  # 4 bits each
MIN_URLSAFE = 22  # 6 bits each: 132 bits
MAKE_ONE = "`referee token` prints a new one"
RULE = (
    f"a token needs at least {MIN_BITS} bits: {MIN_URLSAFE} characters of letters, digits, "
    f"- and _ (URL-safe base64), or {MIN_HEX} hexadecimal digits; {MAKE_ONE}"
)


def new_token() -> str:
    """A fresh token: 32 random bytes in URL-safe base64 (43 characters, 256 bits)."""
    return secrets.token_urlsafe(32)


def token_bits(token: str) -> int | None:
    """The bits a random token like `token` holds (4 per hexadecimal digit when it has
    nothing else, 6 per URL-safe base64 character); None when it holds another character."""
    chars = set(token)
    if chars <= HEX_DIGITS:
        return 4 * len(token)
    if chars <= URLSAFE:
        return 6 * len(token)
    return None


def token_problem(token: str) -> str | None:
    """Why `token` is too weak to guard a login, in words that do not quote it; None
    when it holds at least `MIN_BITS` bits."""
    bits = token_bits(token)
    if bits is None:
        return f"the token holds characters other than letters, digits, - and _; {RULE}"
    if bits >= MIN_BITS:
        return None
    kind = "hexadecimal digits" if set(token) <= HEX_DIGITS else "URL-safe base64 characters"
    return f"the token is {len(token)} {kind}, {bits} bits; {RULE}"
