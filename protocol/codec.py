"""Encoding and decoding whole messages, one JSON object per line.

One decoder per direction. Errors become `MalformedMessageError` whose message
keeps msgspec's `$.path` to the field at fault.
"""

from __future__ import annotations

import re
from typing import TypeVar

import msgspec

from .errors import LocalProtocolError, MalformedMessageError
from .messages import MAX_LINE_DEFAULT, FromBot, Message, ToBot

_encoder = msgspec.json.Encoder()
_to_bot = msgspec.json.Decoder(ToBot)
_from_bot = msgspec.json.Decoder(FromBot)
T = TypeVar("T")
_path = re.compile(r"at `(\$[^`]*)`")
_missing = re.compile(r"missing required field `([^`]+)`")


def encode(message: Message, max_line: int = MAX_LINE_DEFAULT) -> bytes:
    """`message` as one JSON line with its newline; too long is a local error."""
    data = _encoder.encode(message)
    if len(data) > max_line:
        raise LocalProtocolError(
            f"{type(message).__name__} of {len(data)} bytes exceeds {max_line}"
        )
    return data + b"\n"


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
