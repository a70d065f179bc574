"""Places a user names for the referee's output (`--out`, `--log-dir`, `--log`,
`--stderr-dir`, `--html`): made ready before any game starts, or refused with the
reason.

A folder that cannot be written is found here, not by the first log of the first
game, and a file where a folder should be (or the reverse) is named. A log named
after its seed never replaces an earlier one. Nothing here prints: the command
line turns `OutputError` into its one-line error. The options take plain paths
(no `file_okay`/`dir_okay` checks of click), so that every such problem gets the
same one line.

Once games run, a write can still fail: the referee's own disk fills up. Such a
failure is a `WriteError` naming the file; a league stops on it cleanly (its
ledger whole, the games in progress abandoned) and says how to resume.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


class OutputError(Exception):
    """An output place that cannot be used; the message names the option, the path and why."""


FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
SQLITE_FULL = 13  # "database or disk is full"


class WriteError(Exception):
    """One of the referee's own files could not be written, once games had started: its
    disk is full, above all. The message names the file and why, in one line."""

    def __init__(self, path: Path | str, why: str, *, full: bool) -> None:
        super().__init__(f"cannot write {path}: {why}")
        self.path = Path(path)
        self.why = why
        self.full = full  # the disk is full (else another failure: a disk error, say)

    @classmethod
    def of(cls, exc: BaseException, path: Path | str) -> WriteError:
        """`exc` (an OSError, or a database error) while writing `path`."""
        if isinstance(exc, WriteError):
            return exc
        if isinstance(exc, OSError):
            return cls(exc.filename or path, exc.strerror or str(exc), full=disk_full(exc))
        return cls(path, str(exc), full=disk_full(exc))


def disk_full(exc: BaseException) -> bool:
    """Whether `exc` says that the disk (or the user's quota on it) is full: an OSError
    of ENOSPC or EDQUOT, or SQLite's "database or disk is full"."""
    if isinstance(exc, OSError):
        return exc.errno in FULL_ERRNOS
    return getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL


def write_atomic(path: Path, data: bytes, *, sync: bool = False) -> None:
    """Write `path` through a temporary file beside it, renamed over it: readers see the
    old file or the new one, never half of one; with `sync`, the file is on disk before
    it takes its name. `WriteError` when it cannot be written, and no temporary file is
    left behind."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise WriteError.of(exc, path) from None


def reason(exc: OSError, path: Path) -> str:
    """Why `path` could not be made or written, in words: for a file that stands where
    a folder is expected, which file."""
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        for place in (path, *path.parents):
            if place.exists() and not place.is_dir():
                return f"{place} is a file, not a folder"
    return exc.strerror or str(exc)


def ready_folder(path: Path, label: str) -> Path:
    """Make the folder `path` (and its parents) and check that a file can be made in it.

    `label` says where the path came from (`--out`, `league.out`, ...)."""
    if (problem := _unwritable(path)) is not None:
        raise OutputError(f"{label} {path}: cannot write there: {problem}")
    return path


def ready_file(path: Path, label: str) -> Path:
    """Make the folder of the file `path` and check that it can be written there; the
    file itself, if it exists, is replaced later, as any `-o` does."""
    problem = "it is a folder, not a file" if path.is_dir() else _unwritable(path.parent)
    if problem is not None:
        raise OutputError(f"{label} {path}: cannot write there: {problem}")
    return path


def _unwritable(folder: Path) -> str | None:
    # Trying is the only sure check: permissions, a read-only file system and root's
    # privileges all decide, and `os.access` answers for none of the last two.
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder, prefix=".referee-"):
            return None
    except OSError as exc:
        return reason(exc, folder)


def new_file(path: Path, label: str, *, written_as: Callable[[Path], Path] | None = None) -> Path:
    """Create `path` empty, or the first of `STEM-2.SUFFIX`, `STEM-3.SUFFIX`, ... that
    does not exist yet, and return it: an earlier file of the same name is never
    replaced. Created exclusively, so two referees at once never share a name.

    A file written under another name until it is done (a log compressed at the end:
    `written_as` is `gamelog.live_path`) is claimed by creating that other name, and
    a number is taken only while neither name exists."""
    for number in range(1, 10_000):
        candidate = path if number == 1 else _numbered(path, number)
        claim = written_as(candidate) if written_as is not None else candidate
        if claim != candidate and candidate.exists():
            continue
        try:
            with claim.open("xb"):
                pass
        except FileExistsError:
            continue
        except OSError as exc:
            raise OutputError(f"{label} {claim}: cannot write it: {reason(exc, claim)}") from None
        if claim != candidate and candidate.exists():
            claim.unlink()  # another referee finished this name between the two looks
            continue
        return candidate
    raise OutputError(f"{label} {path}: 9999 files of this name exist; remove some")


def _numbered(path: Path, number: int) -> Path:
    """`path` with `-NUMBER` before its suffix; a compressed file's two suffixes stay
    together (`game-7.jsonl.gz` -> `game-7-2.jsonl.gz`)."""
    suffix = "".join(path.suffixes[-2:]) if path.suffix == ".gz" else path.suffix
    stem = path.name[: len(path.name) - len(suffix)] if suffix else path.name
    return path.with_name(f"{stem}-{number}{suffix}")
