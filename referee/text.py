"""Text from outside the referee (what a bot sends or writes to stderr, the names a
league file or a command line gives, what a log holds) as the referee shows it, the
rule a bot's name must follow, and the file names made from names.

**Shown escaped.** Whatever such text reaches a terminal goes through `shown`: each
character a terminal would act on instead of print is written as its escape, in
Python's notation: `\\n`, `\\r` and `\\t`, `\\xHH` for the other C0 controls (ESC is
`\\x1b`, BEL `\\x07`, NUL `\\x00`), DEL (`\\x7f`) and the C1 controls U+0080 to U+009F,
and `\\uHHHH` for the bidirectional controls (U+061C, U+200E, U+200F, U+202A to
U+202E, U+2066 to U+2069), the line and paragraph separators U+2028 and U+2029 and
lone surrogates. Every other character, a backslash too, is shown as it is, so
ordinary text (any script, emoji) is unchanged. What is stored (logs, league.db,
standings files, the site) keeps the text as it came; only its display is escaped.
Text put into rich markup is markup-escaped as well (`markup`).

**Names.** A bot's name is 1 to `NAME_MAX` characters, none of them one that `shown`
escapes, and neither begins nor ends with whitespace (a name is never trimmed: the
name given is the name used everywhere); `name_problem` says why a name is not one.

**File names.** A file named after a bot uses `file_stem(name)`: the name itself when
it is a plain ASCII name of at most `STEM_MAX` characters (letters, digits, `_`, `-`
and `.`, not first), else an ASCII slug of it cut to `STEM_MAX` characters, `~` and 8
hexadecimal digits of the SHA-256 of the whole name. A plain name never holds a `~`,
so two names never share a stem (but for a collision of the hash).
"""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from pathlib import Path
from typing import Any

from rich.markup import escape as _markup_escape

NAME_MAX = 64  # characters of a bot's name
STEM_MAX = 40  # characters of a name kept in a file name, or of its slug

# The characters `shown` escapes, as ranges of code points.
ESCAPED_RANGES = (
    (0x00, 0x1F),  # C0: NUL, BEL, backspace, tab, newline, CR, ESC, ...
    (0x7F, 0x9F),  # DEL and C1
    (0x061C, 0x061C),  # Arabic letter mark
    (0x200E, 0x200F),  # left-to-right and right-to-left marks
    (0x2028, 0x2029),  # line and paragraph separators
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2066, 0x2069),  # bidi isolates
    (0xD800, 0xDFFF),  # surrogates: no UTF-8 for them
)
_ESCAPED = re.compile("[" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in ESCAPED_RANGES) + "]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_PLAIN = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9_.-]{{0,{STEM_MAX - 1}}}")


def escaped(char: str) -> bool:
    """Whether `shown` writes the character `char` as an escape."""
    return _ESCAPED.fullmatch(char) is not None


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: object) -> str:
    """`text` (made a string) with every control character escaped: safe to print on a
    terminal, and one line."""
    return _ESCAPED.sub(_escape, str(text))


def markup(text: object) -> str:
    """`text` shown (`shown`) and escaped for rich markup, for a string rich parses."""
    return _markup_escape(shown(text))


def quoted(text: str, limit: int = NAME_MAX + 16) -> str:
    """`text` in quotes, shown escaped and cut after `limit` characters (with its length
    said), for an error message that names what it refuses."""
    if len(text) > limit:
        return f"'{shown(text[:limit])}…' ({len(text)} characters)"
    return f"'{shown(text)}'"


NAME_RULE = (
    f"a bot's name is 1 to {NAME_MAX} characters, without control characters, "
    "and does not begin or end with whitespace"
)


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a bot's name, in words; None when it can."""
    if not name.strip():
        return "is empty" if not name else "is only whitespace"
    if len(name) > NAME_MAX:
        return f"is {len(name)} characters long; at most {NAME_MAX}"
    bad = sorted({c for c in name if escaped(c)})
    if bad:
        which = ", ".join(shown(c) for c in bad)
        return f"holds control characters ({which})"
    if name != name.strip():
        return "begins or ends with whitespace"
    return None


def file_stem(name: str) -> str:
    """The part of a file name that stands for the bot `name`: short, of the characters
    `[A-Za-z0-9_.~-]`, never starting with `.`, `-` or `~`, and another for each name."""
    if _PLAIN.fullmatch(name):
        return name
    ascii_text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9_.]+", "-", ascii_text).strip("-.")
    slug = slug[:STEM_MAX].rstrip("-.") or "bot"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{slug}~{digest}"


class ShownFormatter(logging.Formatter):
    """A logging formatter that shows messages escaped (`shown`): a logged message that
    quotes a bot or a peer stays one line and cannot drive the terminal. A traceback
    keeps its lines, each shown escaped."""

    def format(self, record: logging.LogRecord) -> str:
        message = shown(record.getMessage())
        return super().format(logging.makeLogRecord({**vars(record), "msg": message, "args": ()}))

    def formatException(self, ei: Any) -> str:
        return _lines(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        return _lines(super().formatStack(stack_info))


def _lines(text: str) -> str:
    return "\n".join(shown(line) for line in text.split("\n"))


_NODE_VERSION = re.compile(r"Node\.js v[0-9][0-9.]*")
_ERROR_LINE = re.compile(r"[A-Za-z_]*(Error|Exception)\b")
LAST_LINE_CHARS = 200  # of a bot's last stderr line, in a note under a result or a failed start


def last_line(path: Path) -> str:
    """The last non-blank line of a text file (read from its end), cut to `LAST_LINE_CHARS`.

    Lines end at newlines only: a carriage return or another control character is
    part of the line (and shown escaped)."""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 8192))
        tail = handle.read().decode("utf-8", "replace")
    lines = [line.strip() for line in tail.split("\n") if line.strip()]
    if len(lines) > 1 and _NODE_VERSION.fullmatch(lines[-1]):
        # Node.js ends an uncaught error with its stack, the error's fields and its
        # version: the error's own line is above them.
        lines.pop()
        errors = [line for line in lines if _ERROR_LINE.match(line)]
        lines = errors or lines
    line = lines[-1] if lines else ""
    return line if len(line) <= LAST_LINE_CHARS else line[: LAST_LINE_CHARS - 1] + "…"
