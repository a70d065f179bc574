"""LineFramer: whole lines out of bytes that arrive in any pieces, with bounded memory."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import (
    InvalidUTF8Error,
    LineFramer,
    OversizeLineError,
    ProtocolError,
    RemoteProtocolError,
    TruncatedLineError,
    decode_from_bot,
    decode_to_bot,
)
from protocol import messages as m

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def feed_all(framer: LineFramer, chunks) -> list[str]:
    lines: list[str] = []
    for chunk in chunks:
        lines.extend(framer.feed(chunk))
    return lines


# ---------------------------------------------------------------- ordinary lines

DATA = (
    b'{"type":"pong","nonce":1}\n\n{"type":"pong","nonce":2}\n'
    b"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n"
)
LINES = ['{"type":"pong","nonce":1}', "", '{"type":"pong","nonce":2}', "hé € 😀"]


def test_fed_whole() -> None:
    framer = LineFramer()
    assert framer.feed(DATA) == LINES
    assert framer.pending == 0
    framer.eof()


def test_fed_one_byte_at_a_time() -> None:
    framer = LineFramer()
    out = []
    for i in range(len(DATA)):
        got = framer.feed(DATA[i : i + 1])
        # A line comes out exactly when its newline arrives.
        assert (got != []) == (DATA[i : i + 1] == b"\n")
        out.extend(got)
    assert out == LINES
    assert framer.pending == 0


def test_trailing_partial_line_is_kept_pending() -> None:
    framer = LineFramer()
    assert framer.feed(b"one\ntwo\nthr") == ["one", "two"]
    assert framer.pending == 3
    assert framer.feed(b"") == []
    assert framer.feed(b"ee") == []
    assert framer.pending == 5
    assert framer.feed(b"\nfo") == ["three"]
    assert framer.pending == 2


def test_nothing_until_a_newline() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"type":"pong","nonce":1}') == []
    assert framer.feed(b"\n") == ['{"type":"pong","nonce":1}']


@pytest.mark.parametrize(
    ("chunks", "lines"),
    [
        ([b"a\r\nb\r\n"], ["a", "b"]),
        ([b"a\r", b"\n"], ["a"]),
        ([b"a", b"\r", b"\n", b"b\n"], ["a", "b"]),
        ([b"a\r\r\n"], ["a\r"]),  # only one carriage return belongs to the line end
        ([b"a\rb\n"], ["a\rb"]),  # a carriage return inside a line stays
        ([b"\r\n"], [""]),
    ],
)
def test_crlf(chunks, lines) -> None:
    assert feed_all(LineFramer(), chunks) == lines


def test_multibyte_characters_split_across_feeds() -> None:
    data = "é€😀\n".encode()
    framer = LineFramer()
    assert feed_all(framer, [data[i : i + 1] for i in range(len(data))]) == ["é€😀"]


def test_max_line_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LineFramer(0)
    assert LineFramer(1).feed(b"x\n") == ["x"]


# ---------------------------------------------------------------- oversize


def test_a_line_of_exactly_max_line_is_accepted() -> None:
    assert LineFramer(10).feed(b"x" * 10 + b"\n") == ["x" * 10]
    assert LineFramer(10).feed(b"x" * 10 + b"\r\n") == ["x" * 10]  # the CR is not counted


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_a_complete_long_line_is_rejected(ending: bytes) -> None:
    framer = LineFramer(10)
    with pytest.raises(OversizeLineError) as info:
        framer.feed(b"ok\n" + b"x" * 11 + ending)
    assert info.value.code == "oversize"
    assert isinstance(info.value, RemoteProtocolError)
    assert framer.pending == 0


def test_a_long_line_is_rejected_while_it_arrives() -> None:
    framer = LineFramer(10)
    assert framer.feed(b"x" * 10) == []
    assert framer.pending == 10
    assert framer.feed(b"\r") == []  # max_line + 1: a CR may still precede the newline
    assert framer.pending == 11
    with pytest.raises(OversizeLineError):
        framer.feed(b"x")
    assert framer.pending == 0


def test_a_flood_without_newline_is_rejected_from_the_first_big_chunk() -> None:
    framer = LineFramer(1000)
    with pytest.raises(OversizeLineError):
        framer.feed(b"x" * (1 << 20))
    assert framer.pending == 0


def test_memory_stays_bounded_while_a_long_line_trickles_in() -> None:
    framer = LineFramer(1000)
    peak = 0
    with pytest.raises(OversizeLineError):
        for _ in range(100_000):
            framer.feed(b"x" * 7)
            peak = max(peak, framer.pending)
    assert 994 <= peak <= 1001
    assert framer.pending == 0


def test_lines_after_an_oversize_line_are_read_again() -> None:
    framer = LineFramer(5)
    with pytest.raises(OversizeLineError):
        framer.feed(b"123456\n")
    assert framer.feed(b"12345\n") == ["12345"]


# ---------------------------------------------------------------- bad bytes and EOF


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff",
        b"\x80abc",
        b"abc\xc3",  # a character cut short
        b"\xc0\x80",  # an overlong encoding
        b"\xed\xa0\x80",  # an encoded surrogate
        b"\xf4\x90\x80\x80",  # past U+10FFFF
    ],
)
def test_invalid_utf8_is_rejected(raw: bytes) -> None:
    framer = LineFramer()
    with pytest.raises(InvalidUTF8Error) as info:
        framer.feed(raw + b"\n")
    assert info.value.code == "malformed"


def test_lines_after_an_invalid_line_are_read_again() -> None:
    framer = LineFramer()
    with pytest.raises(InvalidUTF8Error):
        framer.feed(b"\xff\n")
    assert framer.feed(b'{"type":"pong","nonce":1}\n') == ['{"type":"pong","nonce":1}']


def test_eof_inside_a_line_is_truncated() -> None:
    framer = LineFramer()
    framer.feed(b"whole\npart")
    with pytest.raises(TruncatedLineError) as info:
        framer.eof()
    assert info.value.code == "malformed"
    assert framer.pending == 0


@pytest.mark.parametrize("chunks", [[], [b""], [b"a\n"], [b"a\r\n", b"b\n"]])
def test_eof_between_lines_is_quiet(chunks) -> None:
    framer = LineFramer()
    feed_all(framer, chunks)
    assert framer.eof() is None


# ---------------------------------------------------------------- properties


def model(data: bytes, max_line: int) -> tuple[list[str], type[Exception] | None, int]:
    """What a framer must make of `data`: lines before the first error, the error, pending."""
    *complete, tail = data.split(b"\n")
    lines: list[str] = []
    for raw in complete:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > max_line:
            return lines, OversizeLineError, 0
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            return lines, InvalidUTF8Error, 0
    if len(tail) > max_line + 1:
        return lines, OversizeLineError, 0
    return lines, None, len(tail)


def run(framer: LineFramer, chunks) -> tuple[list[str], type[Exception] | None]:
    lines: list[str] = []
    try:
        for chunk in chunks:
            lines.extend(framer.feed(chunk))
            assert framer.pending <= framer.max_line + 1
    except ProtocolError as exc:
        # The bad line itself is never kept: at most what followed it in the last
        # chunk waits for the next feed, so memory stays within max_line + a chunk.
        assert framer.pending <= framer.max_line + 1 + len(chunk)
        return lines, type(exc)
    return lines, None


PIECES = st.sampled_from(
    [b"\n", b"\r", b"\r\n", b"a", b"xyz", b"\xc3\xa9", b"\xc3", b"\xff", b"{}", b"\x00"]
)
STREAMS = st.one_of(st.binary(max_size=120), st.lists(PIECES, max_size=60).map(b"".join))


@FUZZ
@given(data=STREAMS, max_line=st.integers(1, 24), cuts=st.lists(st.integers(0, 200)))
def test_any_split_gives_the_lines_of_the_whole(data: bytes, max_line: int, cuts) -> None:
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    expected, error, pending = model(data, max_line)

    whole = LineFramer(max_line)
    whole_lines, whole_error = run(whole, [data])
    split = LineFramer(max_line)
    split_lines, split_error = run(split, chunks)

    assert whole_error is error
    assert split_error is error
    if error is None:
        assert whole_lines == split_lines == expected
        assert whole.pending == split.pending == pending
    else:
        # Lines completed by earlier feeds were delivered, and only good ones.
        assert split_lines == expected[: len(split_lines)]


@FUZZ
@given(data=st.binary(max_size=200), max_line=st.integers(1, 24))
def test_byte_at_a_time_matches_the_whole(data: bytes, max_line: int) -> None:
    expected, error, _ = model(data, max_line)
    lines, got = run(LineFramer(max_line), [data[i : i + 1] for i in range(len(data))])
    assert got is error
    assert lines == expected


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
TAGS = [t.__struct_config__.tag for t in (*m.TO_BOT_TYPES, *m.FROM_BOT_TYPES)] + ["x_future", ""]
FIELDS = sorted(
    {f for t in (*m.TO_BOT_TYPES, *m.FROM_BOT_TYPES) for f in t.__struct_fields__}
    | {"tile", "hand", "view", "legal"}
)
MESSAGE_LIKE = st.builds(
    lambda tag, fields: json.dumps({"type": tag, **fields}),
    st.sampled_from(TAGS) | JSON,
    st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=6),
)


def decode_both(line: str | bytes) -> None:
    for decode in (decode_from_bot, decode_to_bot):
        try:
            message = decode(line)
        except ProtocolError:
            continue
        assert isinstance(message, m.Message)


@FUZZ
@given(data=st.binary(max_size=300), max_line=st.integers(1, 300))
def test_garbage_bytes_raise_only_protocol_errors(data: bytes, max_line: int) -> None:
    framer = LineFramer(max_line)
    try:
        lines = framer.feed(data)
        framer.eof()
    except ProtocolError:
        lines = []
    for line in lines:
        decode_both(line)
    decode_both(data)


@FUZZ
@given(text=st.text(max_size=200) | MESSAGE_LIKE)
def test_garbage_text_raises_only_protocol_errors(text: str) -> None:
    decode_both(text)
    framer = LineFramer(100)
    try:
        lines = framer.feed(text.encode() + b"\n")
    except ProtocolError:
        lines = []
    for line in lines:
        decode_both(line)


@FUZZ
@given(line=MESSAGE_LIKE)
def test_message_shaped_json_decodes_or_is_malformed(line: str) -> None:
    # Right tags with wrong, missing and unknown fields of every JSON type.
    decode_both(line)
    decode_both(line.encode())
