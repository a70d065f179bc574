"""Game logs: one JSON line per fact, written as the game goes, read back whole.

A log is a header (versions, rules, seed, bots), one line per decision, one
line per round end, and a footer with the result. Lines go to the file at each
round's end, with the first decision `FLUSH_S` or more after the last flush, and
whenever the file's buffer fills (a flush per line cost a system call per
decision); whatever moment a crash comes, the file holds a prefix of the log,
perhaps ending in a part of a line, which reading skips: a log without its
footer is incomplete, and reading it says so. The header plus the decisions re-derive
the whole game with the engine: that is what `referee replay` checks.

A log named `NAME.jsonl.gz` is written as `NAME.jsonl` while the game runs
(flushed as above) and compressed into its name once the footer
is written; a crashed game leaves the plain, incomplete `NAME.jsonl`. Reading
tells the two apart by their first bytes. See spec/LOGS.md.

A write that fails (the disk is full) raises `WriteError` naming the file, and the
log is written no further: it keeps what reached it, in order, and stays plain.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import hashlib
import io
import os
import shutil
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Literal

import msgspec
import trio

from protocol import messages as m

from .. import __version__
from ..bots.faults import Fault, Notice
from ..game.match import Decision, GameResult, Recorder
from ..game.wire import round_start, rules_info, spec_of
from ..rules import Move, MoveKind, RoundResult, Rules, State, Tile, new_game
from .outputs import WriteError

LOG_FORMAT = 1
FLUSH_S = 1.0  # between round ends, a decision this long after the last flush flushes
# Lines collected before they go to the file's buffer at the latest: its size, so that a
# log reaches the file as often as when each line was written to the buffer at once.
PUSH_BYTES = io.DEFAULT_BUFFER_SIZE
_DRAW = MoveKind.DRAW  # a global: an enum class attribute is slow to read in CPython 3.11


class LogBot(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A bot as the header names it."""

    seat: int
    name: str
    command: str
    time: m.TimeControl | None = None  # this seat's clock when not the header's (time odds)
    # In a league, a bot the referee started: the SHA-256 of each file its command named
    # when its process started, by the word that names it (as the commitment's `files`).
    files: dict[str, str] | None = None


class LogFault(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A fault as logged (and, with the same fields, a notice: see `DecisionLine.notices`)."""

    seat: int
    kind: str
    detail: str
    request: int | None = None


class LogLine(msgspec.Struct, tag_field="type", kw_only=True):
    """Base of every log line."""


class Header(LogLine, tag="header", kw_only=True):
    """First line: what is needed to re-derive the game."""

    format: int = LOG_FORMAT
    referee: str
    protocol: int
    game: str
    rules: m.RulesInfo
    seed: int | None  # None in a log redacted for one seat: the seed would reveal every hand
    bots: list[LogBot]
    time: m.TimeControl
    policy: str
    max_faults: int
    started: str
    seat: int | None = None  # set in a log redacted for one seat
    bot_seed_key: str | None = None  # hex; with the seed it gives each bot's own seed
    # The league's commitment (`sha256:` + hex of OUT/commitment.json) the game was dealt
    # under; None for a game outside a league (`referee play`).
    commitment: str | None = None


class After(msgspec.Struct, kw_only=True, omit_defaults=True):
    """In a log written for one seat: what a decision changed that the move does not say.

    With these and its `round_start` lines, a seat's log rebuilds every position
    that seat saw without the seed (`referee.logs.replay_seat`). Only changes are given.
    """

    next: int | None = None  # the seat to move next, when it is another
    step: str | None = None  # the new step of the turn (a `Ctx` value)
    markers: list[bool] | None = None
    doubles: list[int] | None = None  # the open doubles (train numbers), dead ones included
    branches: list[tuple[int, int, int]] | None = None  # new trains: owner, parent, end
    penalty: int = 0  # tiles drawn as a penalty as the turn closed
    penalty_tiles: list[m.Tile] | None = None  # which ones: only in the drawer's own log


class DecisionLine(LogLine, tag="decision", kw_only=True, omit_defaults=True):
    """One decision: who, which request, what move, how long it took."""

    n: int
    round: int
    seat: int
    request: int
    move: m.MoveSpec
    latency_ms: float | None = None
    referee_late_ms: float = 0.0  # the referee's own stall while the reply waited; not charged
    auto: bool = False
    drew: m.Tile | None = None  # the drawn tile; absent in logs redacted for other seats
    faults: list[LogFault] = []
    # What the bot sent that the referee ignored (stale replies): never faults.
    notices: list[LogFault] = []
    after: After | None = None  # only in a log redacted for one seat
    # The bot's own `note` and `info` on its move (PROTOCOL.md, The reply); a log
    # redacted for one seat keeps only that seat's.
    note: str | None = None
    info: dict[str, float] | None = None


class RoundStartLine(LogLine, tag="round_start", kw_only=True):
    """In a log written for one seat, before each round's first decision: the deal as that
    seat was told it (its `round_start` message) and the step the round starts in."""

    round: int
    engine: int
    hand: list[m.Tile]
    holder: int | None
    starter: int
    hand_counts: list[int]
    boneyard: int
    engine_draws: list[int]
    step: str


class RoundLine(LogLine, tag="round_end", kw_only=True):
    """A round's end: hands shown, scores."""

    round: int
    engine: int
    reason: Literal["out", "blocked"]
    out: list[int]
    hands: list[list[m.Tile]]
    values: list[int]
    scores: list[int]


class Footer(LogLine, tag="footer", kw_only=True, omit_defaults=True):
    """Last line: the result. Its absence marks the log incomplete."""

    scores: list[int]
    ranks: list[int]
    forfeited: list[bool]
    faults: list[LogFault]
    decisions: int
    ended: str
    duration_s: float
    notices: list[LogFault] = []  # every notice of the game (stale replies); never faults
    # The bots' decision time summed: the `latency_ms` their clocks were charged and the
    # `referee_late_ms` excused for the referee's own lag. None in a log from before.
    charged_ms: float | None = None
    excused_ms: float | None = None
    # `sha256:` + hex of the log's bytes before this line, as written (uncompressed):
    # an edited decision (a latency, a fault) no longer matches it. None in a log from before.
    sha256: str | None = None


def sha256_text(data: bytes) -> str:
    """How digests are written in logs, the ledger and results: `sha256:` + hex."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


AnyLine = Header | DecisionLine | RoundLine | RoundStartLine | Footer
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(AnyLine)


def line_bytes(line: LogLine) -> bytes:
    """One line of a log as `LogWriter` writes it, without its newline."""
    return _encoder.encode(line)


LOG_SUFFIX = ".jsonl"
GZ_SUFFIX = ".jsonl.gz"
_GZIP_MAGIC = b"\x1f\x8b"
# gzip's own default: a 13-round double-12 log shrinks about 9x in some 20 ms of CPU;
# level 9 saves about a tenth more for three times the CPU, on every game of a league.
GZIP_LEVEL = 6


def live_path(path: Path) -> Path:
    """The file a log named `path` is written to while its game runs: `NAME.jsonl.gz`
    is written as `NAME.jsonl` (a plain `.jsonl` log is written in place)."""
    return path.with_name(path.name[:-3]) if path.name.endswith(GZ_SUFFIX) else path


def log_stem(path: Path) -> str:
    """A log's name without `.jsonl.gz` or `.jsonl`: `game-5.jsonl.gz` -> `game-5`."""
    for suffix in (GZ_SUFFIX, LOG_SUFFIX):
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return path.stem


def log_suffix(data: bytes) -> str:
    """The suffix a log file holding `data` takes: `.jsonl.gz` for gzip, else `.jsonl`."""
    return GZ_SUFFIX if data.startswith(_GZIP_MAGIC) else LOG_SUFFIX


def find_log(folder: Path, stem: str) -> Path | None:
    """The finished log of `stem` in `folder`: `STEM.jsonl.gz`, else `STEM.jsonl` (a log
    written plain, or the partial log of a game that never finished), else None."""
    for suffix in (GZ_SUFFIX, LOG_SUFFIX):
        path = folder / f"{stem}{suffix}"
        if path.is_file():
            return path
    return None


def compress_log(live: Path, path: Path) -> None:
    """Compress the finished log `live` into `path`, then remove `live`.

    The compressed file is written beside it under a temporary name, synced, and
    renamed into place, so `path` is whole or absent; `live` goes only after it,
    so a crash at any point leaves the whole log under one of the two names."""
    part = path.with_name(f".{path.name}.part")
    try:
        with live.open("rb") as source, part.open("wb") as handle:
            # mtime 0 and no file name inside: the same log compresses to the same bytes.
            with gzip.GzipFile(
                filename="", mode="wb", compresslevel=GZIP_LEVEL, fileobj=handle, mtime=0
            ) as packed:
                shutil.copyfileobj(source, packed, 1 << 16)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)
    live.unlink()


def _sync_folder(folder: Path) -> None:
    # The rename is durable only once the folder's entry is on disk.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def now_iso() -> str:
    """The current UTC time, to the second, ISO 8601."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


def _tile(t: Tile) -> m.Tile:
    return (t.hi, t.lo)


def log_fault(fault: Fault | Notice) -> LogFault:
    """A fault (or a notice) as a log line carries it."""
    return LogFault(
        seat=fault.seat, kind=fault.kind.value, detail=fault.detail, request=fault.request
    )


class LogWriter(Recorder):
    """Writes a game log as the game goes, one line per fact, flushed by round and by time.

    With `seat` set, the log is redacted for that seat the way its messages were
    (`redact_header`, `redact_decision`), and each round's deal as that seat saw it
    is written before the round's first decision: the log then replays that seat's
    view without the seed.

    A `path` ending in `.jsonl.gz` is written to `live_path(path)` and compressed
    into `path` when the log is finished; closed unfinished, it stays plain there.
    """

    def __init__(
        self,
        path: Path,
        header: Header,
        seat: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.clock = clock  # what says when `FLUSH_S` has passed
        self.seat = seat
        self._live = live_path(path)
        self._finished = False
        self._failed = False  # a write failed: the log stays plain and incomplete
        try:
            self._handle: IO[bytes] = self._live.open("wb")
        except OSError as exc:
            raise WriteError.of(exc, self._live) from None
        self._count = 0
        self._pending = bytearray()  # lines written but not yet handed to the file
        self._hash = hashlib.sha256()  # of every byte written, for the footer and the ledger
        self.digest: str | None = None  # the whole log's, once its footer is written
        self._started = dt.datetime.now(dt.UTC)
        self._state: State | None = None  # a seat's log follows the game to redact it
        if seat is not None:
            assert header.seed is not None, "a seat's log is redacted from the whole header"
            self._state = new_game(header_rules(header), header.seed)
            header = redact_header(header, seat)
        try:
            self._write(header)
            if seat is not None and self._state is not None:
                self._write(round_start_line(self._state, seat))
            self._flush()  # the header is there from the start
        except WriteError:
            self.close()
            if self._live.is_file():  # a file it made, not a device (`--log /dev/full`)
                self._live.unlink()  # not even a header: not a log at all
            raise

    def _write(self, line: LogLine) -> None:
        # Lines collect here and go to the file (and the digest) in batches: a write
        # and a hash update per line cost more than the line's encoding.
        pending = self._pending
        _encoder.encode_into(line, pending, -1)
        pending += b"\n"
        if len(pending) >= PUSH_BYTES:
            self._push()

    def _push(self) -> None:
        """Hand the lines collected so far to the file's buffer and to the digest."""
        pending = self._pending
        if not pending:
            return
        try:
            self._handle.write(pending)
        except OSError as exc:
            raise self._failure(exc) from None
        self._hash.update(pending)
        pending.clear()

    def _flush(self) -> None:
        self._push()
        try:
            self._handle.flush()
        except OSError as exc:
            raise self._failure(exc) from None
        self._flushed_at = self.clock()

    def _failure(self, exc: OSError) -> WriteError:
        """A write of the log failed (its disk is full, say): the file keeps what reached
        it, a prefix of the log, and is not compressed."""
        self._failed = True
        return WriteError.of(exc, self._live)

    def decision(self, record: Decision, state: State) -> None:
        """Log one decision; `state` is after it (a draw's tile is read from it)."""
        self._count += 1
        move = record.move
        seat = self.seat
        drew = None
        if move.kind is _DRAW and (seat is None or seat == record.seat):
            drawn = state.drawn  # a draw never ends a round, so the state holds it
            if drawn is not None:
                drew = (drawn.hi, drawn.lo)
        changes = None
        if seat is not None and self._state is not None:
            changes = _changes(record.seat, move.kind, self._state, state, seat)
            self._state = state
        latency = record.latency_ms
        late = record.late_ms
        self._write(
            DecisionLine(
                n=self._count,
                round=record.round,
                after=changes,
                seat=record.seat,
                request=record.request,
                move=spec_of(move),
                latency_ms=None if latency is None else round(latency, 3),
                referee_late_ms=round(late, 3) if late else late,  # round() is dear
                auto=record.auto,
                drew=drew,
                # Most decisions have neither: no list to build.
                faults=[self._fault(f) for f in record.faults] if record.faults else [],
                notices=[self._fault(n) for n in record.notices] if record.notices else [],
                note=record.note if seat is None or seat == record.seat else None,
                info=record.info if seat is None or seat == record.seat else None,
            )
        )
        if self.clock() - self._flushed_at >= FLUSH_S:
            self._flush()

    def _fault(self, fault: Fault | Notice) -> LogFault:
        line = log_fault(fault)
        return redact_fault(line, self.seat) if self.seat is not None else line

    def round_end(self, result: RoundResult) -> None:
        """Log a round's end (and, in a seat's log, the next deal as that seat saw it)."""
        self._write(
            RoundLine(
                round=result.number,
                engine=result.engine,
                reason="out" if result.end.value == "out" else "blocked",
                out=list(result.out),
                hands=[[_tile(t) for t in h] for h in result.hands],
                values=list(result.values),
                scores=list(result.scores),
            )
        )
        state = self._state
        if self.seat is not None and state is not None and state.outcome is None:
            self._write(round_start_line(state, self.seat))
        self._flush()

    def finish(self, result: GameResult) -> None:
        """Write the footer and close the file (compressing it, for a `.jsonl.gz` path):
        only now is the log complete."""
        self.footer(result)
        self.close()

    async def finish_async(self, result: GameResult) -> None:
        """`finish`, with the flush to disk and the compression in a worker thread: they
        take milliseconds that other games on the event loop must not wait for. Once
        started it completes, even if the caller is cancelled. A footer already written
        (`footer`, for the bots' receipts) is not written again."""
        self.footer(result)
        await trio.to_thread.run_sync(self.close, abandon_on_cancel=False)

    def footer(self, result: GameResult) -> str:
        """Write the footer (once) and return the whole log's digest (`sha256:` + hex of
        every byte of it, uncompressed), which the ledger keeps and receipts carry."""
        if self.digest is None:
            self._footer(result)
            self._push()
            self.digest = "sha256:" + self._hash.hexdigest()
        return self.digest

    def _footer(self, result: GameResult) -> None:
        self._push()
        before = "sha256:" + self._hash.hexdigest()
        ended = dt.datetime.now(dt.UTC)
        faults = [self._fault(f) for seat in result.faults for f in seat]
        self._write(
            Footer(
                scores=list(result.outcome.scores),
                ranks=list(result.ranks),
                forfeited=list(result.forfeited),
                faults=faults,
                decisions=result.decisions,
                ended=ended.replace(microsecond=0).isoformat(),
                duration_s=round((ended - self._started).total_seconds(), 3),
                notices=[self._fault(n) for seat in result.notices for n in seat],
                charged_ms=round(result.charged_ms, 3),
                excused_ms=round(result.excused_ms, 3),
                sha256=before,
            )
        )
        self._finished = True  # written: the log may now be compressed

    def close(self) -> None:
        """Close the file (a log closed without `finish` stays incomplete, and plain).

        `WriteError` when the file cannot be written (its disk is full): the log is then
        left plain, holding what reached it."""
        if self._handle.closed:
            return
        if self._failed:  # a last try for what is buffered: a longer prefix, or none
            with contextlib.suppress(OSError):
                self._handle.write(self._pending)
            with contextlib.suppress(OSError):
                self._handle.close()
            return
        compress = self._finished and self._live != self.path
        try:
            self._push()
            self._handle.flush()
            if not compress:
                os.fsync(self._handle.fileno())
            self._handle.close()
        except OSError as exc:
            error = self._failure(exc)
            self.close()
            raise error from None
        # Syncing the plain file too would be a second sync per game for a file
        # removed at once: the compressed copy is synced before it takes its name.
        if compress:
            try:
                compress_log(self._live, self.path)
            except OSError as exc:
                raise WriteError.of(exc, self.path) from None


# ---------------------------------------------------------------- one seat's log
#
# The same functions redact a log being written (`LogWriter(seat=...)`) and a full
# log read back (`referee.logs.replay_seat.redact`), so both give the same lines.

WITHHELD = "(withheld in this seat's log)"


def header_rules(header: Header) -> Rules:
    """The rules a header names."""
    return Rules.from_dict(msgspec.structs.asdict(header.rules))


def redact_header(header: Header, seat: int) -> Header:
    """The header of `seat`'s log: no seed and no bot-seed key, which would deal every hand."""
    return msgspec.structs.replace(header, seat=seat, seed=None, bot_seed_key=None)


def redact_fault(fault: LogFault, seat: int) -> LogFault:
    """A fault (or a notice) as `seat`'s log holds it: another seat's evidence is withheld."""
    if fault.seat == seat:
        return fault
    # A bot's offending line may name tiles of its hand: other seats get the kind only.
    return msgspec.structs.replace(fault, detail=WITHHELD)


def redact_decision(line: DecisionLine, before: State, after: State, seat: int) -> DecisionLine:
    """A decision of the full log as `seat`'s log holds it (as `LogWriter(seat=seat)` wrote
    it); `before` and `after` are the engine states around it."""
    kind = MoveKind(line.move.action)
    return msgspec.structs.replace(
        line,
        drew=line.drew if line.seat == seat else None,
        faults=[redact_fault(f, seat) for f in line.faults],
        notices=[redact_fault(n, seat) for n in line.notices],
        after=_changes(line.seat, kind, before, after, seat),
        note=line.note if line.seat == seat else None,
        info=line.info if line.seat == seat else None,
    )


def _changes(mover: int, kind: MoveKind, before: State, after: State, seat: int) -> After | None:
    if after.round_index != before.round_index:
        return None  # a new deal: the round's end and the deal are lines of their own
    out = After()
    if after.to_move != before.to_move:
        out.next = after.to_move
    if after.ctx is not before.ctx:
        out.step = after.ctx.value
    if after.markers != before.markers:
        out.markers = list(after.markers)
    if after.open_doubles != before.open_doubles:
        out.doubles = list(after.open_doubles)
    if len(after.trains) > len(before.trains):
        out.branches = [(t.owner, t.parent, t.end) for t in after.trains[len(before.trains) :]]
    if kind is not MoveKind.DRAW:
        gained = len(after.hands[mover]) - len(before.hands[mover])
        if kind is MoveKind.PLAY:
            gained += 1
        if gained > 0:
            out.penalty = gained
            if mover == seat:
                new = set(after.hands[mover]) - set(before.hands[mover])
                out.penalty_tiles = [_tile(t) for t in sorted(new)]
    return None if out == After() else out


def round_start_line(state: State, seat: int) -> RoundStartLine:
    """A round's deal in `state` as `seat` was told it."""
    told = msgspec.structs.asdict(round_start(state, seat))  # its fields, not its tag
    return RoundStartLine(**told, step=state.ctx.value)


def make_header(
    *,
    game: str,
    rules: Rules,
    seed: int,
    bots: list[LogBot],
    time: m.TimeControl,
    policy: str,
    max_faults: int,
    bot_seed_key: bytes | None = None,
    commitment: str | None = None,
) -> Header:
    """The header of a new game log."""
    return Header(
        referee=__version__,
        protocol=m.PROTOCOL_VERSION,
        game=game,
        rules=rules_info(rules),
        seed=seed,
        bots=bots,
        time=time,
        policy=policy,
        max_faults=max_faults,
        started=now_iso(),
        bot_seed_key=bot_seed_key.hex() if bot_seed_key is not None else None,
        commitment=commitment,
    )


class LogError(Exception):
    """A file that is not a game log this referee can read; the message says where."""


class GameLog(msgspec.Struct, kw_only=True):
    """A log read back: header, decisions, round ends, and the footer if it has one."""

    path: str
    header: Header
    decisions: list[DecisionLine]
    rounds: list[RoundLine]
    footer: Footer | None
    lines: dict[int, int] = {}  # decision number -> line number in the file
    round_lines: dict[int, int] = {}  # round number -> line number of its round end
    footer_line: int = 0
    deals: list[RoundStartLine] = []  # a seat's log only: each round's deal as it saw it
    deal_lines: dict[int, int] = {}  # round number -> line number of its round start

    @property
    def complete(self) -> bool:
        """True when the log has its footer."""
        return self.footer is not None


def read_log(path: Path, *, allow_redacted: bool = False) -> GameLog:
    """Read a game log, plain or gzip-compressed; `LogError` naming the line for
    anything that is not one.

    A log redacted for one seat holds no seed, so it cannot be re-derived; it is
    refused unless `allow_redacted` (`referee.logs.replay_seat` follows it instead).
    """
    return parse_log(log_bytes(path), path, allow_redacted=allow_redacted)


def parse_log(raw: bytes, path: Path, *, allow_redacted: bool = False) -> GameLog:
    """A log's lines `raw` (uncompressed) read as `read_log` reads the file `path`."""
    header: Header | None = None
    decisions: list[DecisionLine] = []
    rounds: list[RoundLine] = []
    footer: Footer | None = None
    lines: dict[int, int] = {}
    round_lines: dict[int, int] = {}
    deals: list[RoundStartLine] = []
    deal_lines: dict[int, int] = {}
    footer_line = 0
    texts = raw.split(b"\n")
    for number, text in enumerate(texts, start=1):
        if not text.strip():
            continue
        try:
            line = _decoder.decode(text)
        except msgspec.ValidationError as exc:
            if header is None:
                why = _not_a_header(number, text, exc)
                raise _not_a_log(path, why) from None
            raise LogError(f"{path}:{number}: {exc}") from None
        except msgspec.DecodeError as exc:
            last = number == len(texts)  # no newline after it: the writer stopped in it
            if header is not None and last:
                break  # a last line cut short by a crash: the log is incomplete
            if header is None:
                why = (
                    "is cut short before the end of the header"
                    if last and "truncated" in str(exc)
                    else f"is not JSON: {exc}"
                )
                raise _not_a_log(path, f"line {number} {why}") from None
            raise LogError(f"{path}:{number}: not JSON: {exc}") from None
        if header is None:
            if not isinstance(line, Header):
                raise LogError(
                    f"{path}: not a game log (line {number} is a "
                    f"{type(line).__struct_config__.tag} line; "
                    "a game log starts with its header)"
                )
            if line.format != LOG_FORMAT:
                raise LogError(
                    f"{path}:{number}: log format {line.format}; this referee reads {LOG_FORMAT}"
                )
            if line.seed is None and not allow_redacted:
                raise LogError(
                    f"{path}:{number}: a log redacted for seat {line.seat} holds no seed, so "
                    "the game cannot be re-derived from it; use the full log"
                )
            header = line
        elif isinstance(line, DecisionLine):
            decisions.append(line)
            lines[line.n] = number
        elif isinstance(line, RoundLine):
            rounds.append(line)
            round_lines[line.round] = number
        elif isinstance(line, RoundStartLine):
            deals.append(line)
            deal_lines[line.round] = number
        elif isinstance(line, Footer):
            footer = line
            footer_line = number
        else:
            raise LogError(f"{path}:{number}: a second header")
    if header is None:
        raise LogError(f"{path}: not a game log (the file is empty)")
    return GameLog(
        path=str(path),
        header=header,
        decisions=decisions,
        rounds=rounds,
        footer=footer,
        lines=lines,
        round_lines=round_lines,
        footer_line=footer_line,
        deals=deals,
        deal_lines=deal_lines,
    )


def log_bytes(path: Path) -> bytes:
    """The lines of the log file `path` as written, decompressed if it is compressed;
    `LogError` if it cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LogError(f"{path}: cannot read: {exc.strerror}") from None
    # By content, not by name: a renamed or copied log is read as what it is.
    if raw.startswith(_GZIP_MAGIC):
        return _gunzip(path, raw)
    if path.name.endswith(".gz") and raw and _GZIP_MAGIC.startswith(raw):
        raise LogError(f"{path}: a gzip file cut short (damaged or still being copied)")
    return raw


def _gunzip(path: Path, raw: bytes) -> bytes:
    """The log compressed in `raw`. A compressed log is written whole or not at all,
    so one that ends early was damaged since: it is refused, not read as incomplete."""
    try:
        return gzip.decompress(raw)
    except EOFError:
        raise LogError(f"{path}: a gzip file cut short (damaged or still being copied)") from None
    except (OSError, zlib.error) as exc:
        raise LogError(f"{path}: a damaged gzip file ({exc})") from None


def _not_a_log(path: Path, why: str) -> LogError:
    """What to say of a file whose first line is no log header: `why`, or, for a file
    named as a compressed log (`.gz`) that holds neither gzip data nor a plain log, that
    it is not gzip data (a damaged download or copy), rather than what its bytes are."""
    if path.name.endswith(".gz"):
        return LogError(f"{path}: not gzip data, though its name ends in .gz")
    return LogError(f"{path}: not a game log ({why})")


def _not_a_header(number: int, text: bytes, exc: msgspec.ValidationError) -> str:
    """Why line `number`, refused by the log's decoder, cannot begin a log, said from
    what the line is: the decoder stops at the first byte that cannot begin an object,
    so it calls a TOML table (`[league]`) "an array" although it is not even JSON."""
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError as error:
        return f"line {number} is not JSON: {error}"
    if not isinstance(value, dict):
        kinds = {list: "array", str: "string", bool: "boolean", type(None): "null"}
        kind = kinds.get(type(value), "number")
        return f"line {number} is a JSON {kind}, not an object"
    if value.get("type") == "header":
        return f"line {number} is not a header of format {LOG_FORMAT}: {exc}"
    return f"line {number} is not a log header: {exc}"


def move_of_spec(spec: m.MoveSpec) -> Move:
    """The engine move a logged move names."""
    kind = MoveKind(spec.action)
    if kind is MoveKind.PLAY:
        assert spec.tile is not None
        a, b = spec.tile
        return Move(kind, Tile(a, b) if a >= b else Tile(b, a), spec.train, spec.announce)
    return Move(kind)
