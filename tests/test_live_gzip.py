"""The live feed's gzip encoding (`referee.live.server`): each event's deflate blocks are
made once and framed per response, so that every stream decodes, write by write, to
exactly the events it was given, and a client that does not ask for gzip gets them
plain. The real streams (plain and gzip, over HTTP and HTTPS, and in Chromium) are in
tests/test_live.py and tests/test_live_hosts.py."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.live.server import GzipStream, accepts_gzip, deflated


@pytest.mark.parametrize(
    ("header", "takes"),
    [
        ("gzip, deflate, br, zstd", True),  # Chromium's
        ("GZIP", True),
        ("x-gzip", True),
        ("br;q=1.0, gzip;q=0.8, *;q=0.1", True),
        ("gzip; q=0.001", True),
        ("gzip;q=0", False),
        ("gzip;q=0.000", False),
        ("gzip;q=oops", False),
        ("identity", False),
        ("deflate, br", False),
        ("*", False),  # plain is always acceptable: only an explicit gzip gets gzip
        ("", False),
        ("gzipped", False),
    ],
)
def test_only_a_client_that_asks_for_gzip_gets_it(header: str, takes: bool) -> None:
    assert accepts_gzip(header) is takes


def game_event(moves: int) -> bytes:
    steps = [[i % 4, "p", [i % 13, (i * 7) % 13], i % 5, -1] for i in range(moves)]
    return b"event: game\ndata: " + json.dumps({"S": steps}).encode() + b"\n\n"


def test_each_write_decodes_whole_as_it_comes_and_the_end_checks() -> None:
    events = [
        (b"retry: 1000\n\n", b'event: status\ndata: "playing"\n\n', game_event(300)),
        (game_event(600),),
        (b": keep-alive\n\n",),
        (b'event: status\ndata: "shown"\n\n', game_event(1800)),
    ]
    stream, inflate, sent = GzipStream(), zlib.decompressobj(31), b""
    for parts in events:
        write = stream.part(*parts)
        sent += write
        # No event waits for the next write: what came decodes to all it carried.
        assert inflate.decompress(write) == b"".join(parts)
    end = stream.end()
    assert inflate.decompress(end) == b"" and inflate.eof and not inflate.unused_data
    plain = b"".join(b"".join(p) for p in events)
    assert gzip.decompress(sent + end) == plain  # the CRC and length are checked
    assert len(sent + end) < len(plain) / 4  # the game views are JSON: it pays


def test_an_empty_stream_is_a_whole_gzip_member() -> None:
    assert gzip.decompress(GzipStream().end()) == b""
    one = GzipStream()
    assert gzip.decompress(one.part(b"retry: 1000\n\n") + one.end()) == b"retry: 1000\n\n"


def test_a_wrong_length_or_crc_is_caught_by_the_client() -> None:
    stream = GzipStream()
    body = stream.part(game_event(50))
    stream.size += 1  # a framing that miscounted
    with pytest.raises(gzip.BadGzipFile):
        gzip.decompress(body + stream.end())


def test_events_are_deflated_once_for_every_stream() -> None:
    shared = game_event(900)
    first = deflated(shared)
    assert deflated(shared) is first  # the second stream's blocks are the first's
    assert deflated(bytes(shared)) is first  # equal bytes: the same blocks
    a, b = GzipStream(), GzipStream()
    wa0 = a.part(b"retry: 1000\n\n")  # the streams are at different points
    wa, wb = a.part(shared), b.part(shared)
    assert wa == first and wb.endswith(first)  # the same blocks after each one's own
    assert gzip.decompress(wa0 + wa + a.end()) == b"retry: 1000\n\n" + shared
    assert gzip.decompress(wb + b.end()) == shared


@given(st.lists(st.lists(st.binary(max_size=300), min_size=1, max_size=4), max_size=12))
def test_any_events_in_any_writes_decode_to_themselves(writes: list[list[bytes]]) -> None:
    stream, inflate, body = GzipStream(), zlib.decompressobj(31), b""
    for parts in writes:
        write = stream.part(*parts)
        body += write
        assert inflate.decompress(write) == b"".join(parts)
    body += stream.end()
    assert gzip.decompress(body) == b"".join(b"".join(p) for p in writes)


def test_the_kept_blocks_stay_within_their_bytes_and_evicted_ones_are_made_again() -> None:
    from referee.live import server

    first = game_event(900)
    kept = deflated(first)
    size = len(first) + len(kept)
    for k in range(server._DEFLATED_KEEP // size + 2):  # more than the budget holds
        deflated(first + b" " * (k + 1))
    assert server._deflated_size <= server._DEFLATED_KEEP
    assert sum(len(e) + len(b) for e, b in server._DEFLATED.items()) == server._deflated_size
    assert first not in server._DEFLATED  # the oldest went first
    again = deflated(first)
    assert again == kept and again is not kept  # made again, the same blocks
    stream = GzipStream()
    assert gzip.decompress(stream.part(first) + stream.end()) == first
