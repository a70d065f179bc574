"""Protocol v1 of the Mexican Train referee: messages, line framing, codec, schema.

Depends on msgspec only, so Python bots can import it. See spec/PROTOCOL.md.
"""

from .codec import decode_from_bot, decode_to_bot, encode
from .errors import (
    InvalidUTF8Error,
    LocalProtocolError,
    MalformedMessageError,
    OversizeLineError,
    ProtocolError,
    RemoteProtocolError,
    TruncatedLineError,
)
from .framing import LineFramer
from .messages import MAX_LINE_DEFAULT, PROTOCOL_VERSION, FromBot, ToBot

__all__ = [
    "MAX_LINE_DEFAULT",
    "PROTOCOL_VERSION",
    "FromBot",
    "InvalidUTF8Error",
    "LineFramer",
    "LocalProtocolError",
    "MalformedMessageError",
    "OversizeLineError",
    "ProtocolError",
    "RemoteProtocolError",
    "ToBot",
    "TruncatedLineError",
    "decode_from_bot",
    "decode_to_bot",
    "encode",
]
