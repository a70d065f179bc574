"""Encoding and decoding whole messages, one JSON object per line.

One decoder per direction. Errors become `MalformedMessageError` whose message
keeps msgspec's `$.path` to the field at fault; a number outside its field's range
(spec/PROTOCOL.md, "Integer ranges") is named with its value and the range.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

import msgspec

from .errors import LocalProtocolError, MalformedMessageError
from .messages import MAX_LINE_DEFAULT, FromBot, Message, ToBot

_encoder = msgspec.json.Encoder()
_to_bot = msgspec.json.Decoder(ToBot)
_from_bot = msgspec.json.Decoder(FromBot)
T = TypeVar("T")
_path = re.compile(r"at `(\$[^`]*)`")
_missing = re.compile(r"missing required field `([^`]+)`")
_bound = re.compile(r"Expected `int` ([<>]=) (-?\d+) - at `")
_step = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


def _at(text: str | bytes, path: str) -> Any:
    """The value at msgspec's `path` (`$.view.trains[2].end`) in the JSON `text`;
    `LookupError` when it is not there (or the text is not JSON)."""
    try:
        value: Any = json.loads(text)
    except (ValueError, RecursionError) as exc:  # a number too long to read, deep nesting
        raise LookupError(path) from exc
    for key, index in _step.findall(path[1:]):
        value = value[key] if key else value[int(index)]
    return value


def _out_of_range(text: str | bytes, message: str, path: str) -> str | None:
    """msgspec's complaint about a number beyond its bound, said with the number, or
    None when `message` is about something else."""
    bound = _bound.match(message)
    if bound is None:
        return None
    least = bound.group(1) == ">="
    try:
        value = _at(text, path)
    except (LookupError, TypeError):
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    side = "at least" if least else "at most"
    return f"{value} is out of range at `{path}`: it must be {side} {bound.group(2)}"


def encode(message: Message, max_line: int = MAX_LINE_DEFAULT) -> bytes:
    """`message` as one JSON line with its newline; too long is a local error."""
    data = _encoder.encode(message)
    if len(data) > max_line:
        raise LocalProtocolError(
            f"{type(message).__name__} of {len(data)} bytes exceeds {max_line}"
        )
    return data + b"\n"


def encode_into(message: Message, buffer: bytearray, max_line: int = MAX_LINE_DEFAULT) -> int:
    """Append `message` to `buffer` as `encode` gives it, without making the line's bytes
    on their own; return its size. Too long is a local error, and leaves `buffer` as it
    was."""
    start = len(buffer)
    _encoder.encode_into(message, buffer, -1)
    size = len(buffer) - start
    if size > max_line:
        del buffer[start:]
        raise LocalProtocolError(f"{type(message).__name__} of {size} bytes exceeds {max_line}")
    buffer.append(10)  # the newline
    return size + 1


def _decode(decoder: msgspec.json.Decoder[T], line: str | bytes) -> T:
    text = line.strip()
    if not text:
        raise MalformedMessageError("empty line: expected a JSON object", path="$")
    first = text[:1]
    if first not in ("{", b"{"):
        raise MalformedMessageError('expected a JSON object with a "type" field', path="$")
    try:
        return decoder.decode(text)
    except msgspec.ValidationError as exc:
        message = str(exc)
        found = _path.search(message)
        path = found.group(1) if found else "$"
        missing = _missing.search(message)
        if missing:
            path = f"{path}.{missing.group(1)}"  # point at the field that is absent
        message = _out_of_range(text, message, path) or message
        raise MalformedMessageError(message, path=path) from None
    except msgspec.DecodeError as exc:
        raise MalformedMessageError(f"invalid JSON: {exc}", path="$") from None
    except RecursionError:
        raise MalformedMessageError("JSON nested too deeply", path="$") from None
    except UnicodeEncodeError:
        raise MalformedMessageError("text is not valid Unicode", path="$") from None


def decode_from_bot(line: str | bytes) -> FromBot:
    """A line a bot sent, as a message; anything else raises `MalformedMessageError`."""
    return _decode(_from_bot, line)


def decode_to_bot(line: str | bytes) -> ToBot:
    """A line the referee sent, as a message (for bots written in Python)."""
    return _decode(_to_bot, line)
