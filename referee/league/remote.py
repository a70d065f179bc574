"""The worker side of a league on a cluster: what one Dask task runs.

A task is a batch of whole games. The coordinator sends a `Job` (the league file as
parsed, the scheduled game and the bot seed key, msgspec-encoded) and gets back
a `Done`: the ledger record, the game log and the bots' stderr written during
the game. The worker writes nothing that matters: the coordinator writes the log
and records the game, once.

Each worker process keeps one trio loop in a thread of its own, and on it a
bot pool per league, so bot processes are reused between the games that land on
the worker exactly as in a league on one machine. When the worker process ends,
however it ends, the keepers of its bots see their control sockets close and
end every bot.

This module imports neither Dask nor anything that needs it, so a worker needs
only this package and `distributed`.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import importlib.resources
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import msgspec
import trio

from .. import __version__
from ..bots.process import BotProcess, findable
from ..bots.sandbox import Hidden, forget_scans
from ..game import lag
from .config import (
    BotEntry,
    ConfigError,
    LeagueConfig,
    check_sandboxes,
    hidden_places,
    parse_config,
)
from .game import play_scheduled
from .ledger import Record
from .pool import Bot, BotPool
from .schedule import Scheduled

KEEP_LEAGUES = 4  # bot pools of this many leagues are kept per worker, the least recent ended


class LeagueBlob(msgspec.Struct, frozen=True):
    """The league as the coordinator read it, for workers to check again."""

    raw: dict[str, Any]  # the parsed LEAGUE.toml
    path: str  # the file on the coordinator, resolved
    sandbox: str | None  # --sandbox on the coordinator
    digest: str  # names this league on the workers
    # What "auto" meant on the coordinator: a worker follows it, so the standings' record
    # of the sandbox holds for every game (a worker that cannot sandbox is refused).
    sandbox_auto: str | None = None
    commitment: str | None = None  # the league's commitment, which every log names


class Job(msgspec.Struct, frozen=True):
    """One game to play.

    MessagePack holds integers of 64 bits at most, and a deal seed has 128: the seed
    travels as text in `seed`, and `game.seed` is 0 on the way (see `encode_job`)."""

    league: LeagueBlob
    game: Scheduled
    bot_seed_key: bytes
    seed: str


class StderrPart(msgspec.Struct, frozen=True):
    """What one bot process wrote to stderr during the game."""

    process: str  # the file name the worker gave it, `NAME-N.stderr`
    data: bytes


class Done(msgspec.Struct, frozen=True):
    """One finished game (its seed as text, like `Job`'s)."""

    record: Record
    seed: str
    log: bytes  # the log file as the worker wrote it: compressed (its first bytes say)
    stderr: list[StderrPart]
    worker: str
    play_s: float  # wall time of the game on the worker, bots' start-up included


_encoder = msgspec.msgpack.Encoder()
_job_decoder = msgspec.msgpack.Decoder(Job)
_done_decoder = msgspec.msgpack.Decoder(Done)


def league_blob(config: LeagueConfig) -> LeagueBlob:
    """What workers need to read the league exactly as the coordinator did."""
    path = str(config.path.resolve())
    raw = config.raw
    blob = LeagueBlob(
        raw=raw,
        path=path,
        sandbox=config.sandbox_override,
        digest="",
        sandbox_auto=config.sandbox_auto,
        commitment=config.commitment,
    )
    return msgspec.structs.replace(blob, digest=_blob_digest(blob, code_digest()))


def encode_job(blob: LeagueBlob, game: Scheduled, key: bytes) -> bytes:
    """The task's argument for `game`."""
    job = Job(
        league=blob,
        game=dataclasses.replace(game, seed=0),
        bot_seed_key=key,
        seed=str(game.seed),
    )
    return _encoder.encode(job)


def decode_job(data: bytes) -> Job:
    """A task's argument, its game's seed restored."""
    job = _job_decoder.decode(data)
    return msgspec.structs.replace(job, game=dataclasses.replace(job.game, seed=int(job.seed)))


def encode_done(done: Done) -> bytes:
    """A task's result for one game, its seed carried as text."""
    record = dataclasses.replace(done.record, seed=0)
    return _encoder.encode(msgspec.structs.replace(done, record=record))


def decode_done(data: bytes) -> Done:
    """The task's result, its record's seed restored."""
    done = _done_decoder.decode(data)
    record = dataclasses.replace(done.record, seed=int(done.seed))
    return msgspec.structs.replace(done, record=record)


_code: str | None = None


def code_digest() -> str:
    """A hash of this package's source: a worker must run the very same referee."""
    global _code
    if _code is None:
        h = hashlib.sha256(__version__.encode())
        for package in ("referee", "protocol"):
            root = importlib.resources.files(package)
            for path in sorted(Path(str(root)).rglob("*.py")):
                h.update(path.relative_to(Path(str(root))).as_posix().encode())
                h.update(path.read_bytes())
        _code = h.hexdigest()[:16]
    return _code


def worker_config(blob: LeagueBlob, out: Path | None = None) -> LeagueConfig:
    """The league as this machine sees it: bot paths mapped through `cluster.bot_root`.

    `ConfigError` names the bot whose program is not here, or says that this
    worker runs other referee code than the coordinator."""
    ours = code_digest()
    if blob.digest != _blob_digest(blob, ours):
        raise ConfigError(
            f"runs another referee (version {__version__}, code {ours}): install the "
            "coordinator's version on every worker"
        )
    league_file = Path(blob.path)
    root = blob.raw.get("cluster", {}).get("bot_root")
    base = Path(root) if isinstance(root, str) else league_file.parent
    config = parse_config(
        blob.raw,
        league_file,
        out=out or base,
        check_programs=False,
        check_folders=False,
        sandbox=blob.sandbox,
        base=base,
        tokens=False,
        auto_sandbox=blob.sandbox_auto,
    )
    config = dataclasses.replace(config, commitment=blob.commitment)
    if base != league_file.parent:
        config = dataclasses.replace(
            config, bots=tuple(_mapped(b, league_file.parent, base) for b in config.bots)
        )
    for i, bot in enumerate(config.bots):
        if bot.tcp:
            continue
        if not Path(bot.spec.cwd or base).is_dir():
            raise ConfigError(f"bot[{i}].cwd: {bot.spec.cwd} is not a folder here")
        if not findable(bot.spec):
            raise ConfigError(
                f"bot[{i}].command: cannot start {bot.spec.argv[0]!r}: not found or not executable"
            )
    return config


def _mapped(bot: BotEntry, old: Path, new: Path) -> BotEntry:
    """`bot` with every absolute path under the coordinator's league folder moved to `new`."""
    if bot.tcp:
        return bot

    def move(text: str) -> str:
        if text == str(old):
            return str(new)
        prefix = str(old).rstrip("/") + "/"
        return str(new / text[len(prefix) :]) if text.startswith(prefix) else text

    spec = dataclasses.replace(
        bot.spec,
        argv=tuple(move(a) for a in bot.spec.argv),
        cwd=move(bot.spec.cwd) if bot.spec.cwd else bot.spec.cwd,
    )
    return dataclasses.replace(bot, spec=spec)


def worker_places(local_directory: Path) -> tuple[Hidden, ...]:
    """What sandboxed bots on a worker must not see besides the league's own files: the
    worker's folder, where the logs of its games are written."""
    return (
        Hidden(
            str(local_directory),
            "the Dask worker's folder",
            "start the worker with --local-directory outside the bots' folders",
        ),
    )


def check_worker(blob: bytes, dask_worker: Any = None) -> str:
    """Run on every worker before the league starts: '' or what is wrong on this worker
    (Dask passes the worker as `dask_worker`). The same checks as on the coordinator:
    every program is here, and each sandboxed bot can be sandboxed, with folders walked
    afresh for this league."""
    league = msgspec.msgpack.decode(blob, type=LeagueBlob)
    folder = Path(dask_worker.local_directory) if dask_worker is not None else None
    try:
        config = worker_config(league, out=folder)
        forget_scans()
        places = hidden_places(config, out=False)
        check_sandboxes(config, (*places, *worker_places(folder)) if folder else places)
    except ConfigError as exc:
        return str(exc)
    return ""


def _blob_digest(blob: LeagueBlob, code: str) -> str:
    fields = [blob.raw, blob.path, blob.sandbox, blob.sandbox_auto, blob.commitment, code]
    return hashlib.sha256(_encoder.encode(fields)).hexdigest()[:16]


class WorkerSetupError(Exception):
    """This worker cannot play the league's games (a bot cannot start here)."""


def run_jobs(jobs: list[bytes]) -> list[bytes]:
    """The Dask task: play a batch of games on this worker, one after the other, and
    return each encoded `Done`."""
    from distributed import get_worker  # only ever called on a worker

    worker = get_worker()
    address = worker.address
    try:
        runtime = _Runtime.get(Path(worker.local_directory))
        return [encode_done(runtime.play(decode_job(j), address)) for j in jobs]
    except ConfigError as exc:  # a worker that joined after the check, set up differently
        raise WorkerSetupError(f"worker {address}: {exc}") from None


def end_league(digest: str) -> None:
    """Run on every worker when a league ends: its bots get `bye`, in the background."""
    runtime = _Runtime._instance
    if runtime is not None and runtime.token is not None:
        runtime.token.run_sync_soon(runtime.end_soon, digest)


@dataclasses.dataclass
class _League:
    config: LeagueConfig
    pool: BotPool
    folder: Path
    offsets: dict[Path, int] = dataclasses.field(default_factory=dict)


class _Runtime:
    """One trio loop per worker process, in a daemon thread, holding the bot pools."""

    _lock = threading.Lock()
    _instance: _Runtime | None = None

    @classmethod
    def get(cls, scratch: Path) -> _Runtime:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls(scratch)
            return cls._instance

    def __init__(self, scratch: Path) -> None:
        # Inside the worker's own folder, which Dask removes with the worker (and
        # later workers purge if it was killed).
        self.root = Path(tempfile.mkdtemp(prefix="referee-", dir=scratch))
        self.hide = worker_places(scratch)
        atexit.register(shutil.rmtree, self.root, True)
        self.leagues: OrderedDict[str, _League] = OrderedDict()
        self.nursery: trio.Nursery | None = None
        self.token: trio.lowlevel.TrioToken | None = None
        started = threading.Event()
        thread = threading.Thread(
            target=trio.run, args=(self._main, started), name="referee-games", daemon=True
        )
        thread.start()
        started.wait()

    async def _main(self, started: threading.Event) -> None:
        lag.ensure_running()  # games' clocks leave out this loop's own stalls
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            self.token = trio.lowlevel.current_trio_token()
            started.set()
            await trio.sleep_forever()

    def play(self, job: Job, worker: str) -> Done:
        """Play `job` on the loop; called from a Dask task thread."""
        return trio.from_thread.run(self._play, job, worker, trio_token=self.token)

    def _league(self, blob: LeagueBlob) -> _League:
        league = self.leagues.get(blob.digest)
        if league is not None:
            self.leagues.move_to_end(blob.digest)
            return league
        assert self.nursery is not None
        folder = self.root / blob.digest
        (folder / "logs").mkdir(parents=True, exist_ok=True)
        (folder / "stderr").mkdir(exist_ok=True)
        config = worker_config(blob, out=folder)
        pool = BotPool(config, self.nursery, folder / "stderr", hide=self.hide)
        league = _League(config, pool, folder)
        self.leagues[blob.digest] = league
        while len(self.leagues) > KEEP_LEAGUES:
            _, old = self.leagues.popitem(last=False)
            self.nursery.start_soon(self._end, old)
        return league

    def end_soon(self, digest: str) -> None:
        """End the bots of league `digest`, if this worker has them (on the loop)."""
        league = self.leagues.pop(digest, None)
        if league is not None and self.nursery is not None:
            self.nursery.start_soon(self._end, league)

    async def _end(self, league: _League) -> None:
        await league.pool.close()
        shutil.rmtree(league.folder, ignore_errors=True)

    async def _play(self, job: Job, worker: str) -> Done:
        league = self._league(job.league)
        game = job.game
        used: list[Bot] = []
        start = time.perf_counter()
        record = await play_scheduled(
            league.config, game, league.pool, league.folder / "logs", job.bot_seed_key, used
        )
        play_s = time.perf_counter() - start
        log_path = Path(record.log_path)
        log = log_path.read_bytes()
        log_path.unlink()
        return Done(
            record=record,
            seed=str(record.seed),
            log=log,
            stderr=self._stderr(league, used),
            worker=worker,
            play_s=play_s,
        )

    def _stderr(self, league: _League, used: list[Bot]) -> list[StderrPart]:
        """What each process of the game wrote to stderr since the last game it played."""
        parts = []
        for proc in used:
            path = proc.stderr_path if isinstance(proc, BotProcess) else None
            if path is None or not path.exists():
                continue
            offset = league.offsets.get(path, 0)
            with path.open("rb") as handle:
                handle.seek(offset)
                data = handle.read()
            if data:
                league.offsets[path] = offset + len(data)
                parts.append(StderrPart(process=path.name, data=data))
        return parts
