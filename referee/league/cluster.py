"""Leagues on a Dask cluster: the coordinator's side (`referee league --cluster`).

The coordinator keeps everything that must be single: the schedule, the ledger,
the standings, the progress bar and resume. Each game whose seats are all
started by the referee goes to Dask in a task (`remote.run_jobs`, a batch of games); the worker
that runs it starts the bots, plays the whole game with the same referee code
and returns the record and the log, which the coordinator writes: the log
first, then the ledger row, so a game is recorded once whatever retries the
scheduler made (the schedule index is the ledger's primary key). No game is
submitted while another game of its deal is in play, on a worker or here
(`apart`): a deal's games go out one after the other, other deals meanwhile.

A worker lost in the middle of a game takes its bots with it (their keepers
see the worker's sockets close); the scheduler runs the game again elsewhere.
Games with a TCP seat are played on the coordinator, which holds the
connections.

This module is imported only when `--cluster` is given; `distributed` is the
optional extra `[cluster]`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from .apart import Apart, Queue
from .config import LeagueConfig
from .remote import (
    Done,
    LeagueBlob,
    check_worker,
    decode_done,
    encode_job,
    end_league,
    run_jobs,
)
from .schedule import Scheduled

log = logging.getLogger(__name__)

_FREED = object()  # in the results channel: a deal played here is free again

LOCAL = re.compile(r"local:(\d+)")
ADDRESS = re.compile(r"(?:(tcp|tls|ws|wss|inproc|ucx)://)?[\w.\-\[\]:]+:\d+")
WAIT_FOR_WORKERS_S = 30.0
CONNECT_S = 10.0  # to reach a scheduler's address
WAIT_FOR_RESOURCES_S = 10.0  # for a worker with a game's resources to join
TASK_TARGET_S = 1.0  # games per task: about this long on a worker
MAX_GAMES_PER_TASK = 32
WATCH_WORKERS_S = 1.0  # how often the coordinator looks for workers that left


class ClusterError(Exception):
    """The cluster cannot run this league; the message says why, in one line."""


def check_target(text: str) -> str:
    """`local:N` or a scheduler address; ClusterError otherwise."""
    local = LOCAL.fullmatch(text)
    if local:
        if int(local[1]) < 1:
            raise ClusterError(f"--cluster {text}: a local cluster needs at least 1 worker")
        return text
    if ADDRESS.fullmatch(text):
        return text
    raise ClusterError(
        f"--cluster {text!r}: expected local:N or a scheduler address like tcp://HOST:8786"
    )


def _reachable(target: str) -> None:
    """Fail at once, naming why, when nothing listens at a scheduler's TCP address (a
    refused connection, an unknown host): Dask's client would retry for its whole
    timeout. What answers is then left to Dask (a scheduler, or not)."""
    scheme, _, rest = target.rpartition("://")
    if scheme not in ("", "tcp", "tls"):
        return  # ws, inproc, ucx: Dask's own transports
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_S).close()
    except TimeoutError:
        raise ClusterError(
            f"--cluster {target}: cannot reach the scheduler: no answer within {CONNECT_S:g} s"
        ) from None
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise ClusterError(f"--cluster {target}: cannot reach the scheduler: {why}") from None


@dataclass
class Stats:
    """Where the time went, for `bench/bench_cluster.py` and the closing line."""

    games: int = 0
    tasks: int = 0
    lost: int = 0  # workers that left while the league ran
    play_s: float = 0.0  # game time on the workers, summed
    deliver_s: float = 0.0  # coordinator time writing logs and ledger rows
    workers: set[str] = field(default_factory=set)


class Cluster:
    """A Dask client, and the local cluster it started if the target was `local:N`."""

    def __init__(self, target: str, client: Any, local: Any | None) -> None:
        self.target = target
        self.client = client
        self.local = local
        self.stats = Stats()

    @classmethod
    def open(cls, target: str, threads_per_worker: int = 1) -> Cluster:
        """Connect (blocking: call it in a thread). ClusterError when it cannot."""
        check_target(target)
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ClusterError(
                "--cluster needs Dask distributed: pip install 'mexican-train-referee[cluster]'"
            ) from None
        local = LOCAL.fullmatch(target)
        if local:
            cluster = LocalCluster(
                n_workers=int(local[1]),
                threads_per_worker=threads_per_worker,
                processes=True,
                dashboard_address=None,
                # The scheduler serves HTTP anyway; on a free port, not on a busy 8787.
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.ERROR,
            )
            return cls(target, Client(cluster, direct_to_workers=True), cluster)
        _reachable(target)
        try:
            client = Client(target, timeout=f"{CONNECT_S:g}s", direct_to_workers=True)
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f"--cluster {target}: cannot reach the scheduler: {exc}") from None
        try:
            client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS_S)
        except TimeoutError:
            client.close()
            raise ClusterError(
                f"--cluster {target}: no worker joined the scheduler within "
                f"{WAIT_FOR_WORKERS_S:.0f} s"
            ) from None
        return cls(target, client, None)

    def close(self) -> None:
        """Disconnect, and end the local cluster's workers (blocking)."""
        try:
            self.client.close(timeout=10)
        finally:
            if self.local is not None:
                self.local.close(timeout=10)

    def workers(self) -> dict[str, dict[str, Any]]:
        """The workers the scheduler knows now, by address."""
        info: dict[str, dict[str, Any]] = self.client.scheduler_info(n_workers=-1)["workers"]
        return info

    def threads(self) -> int:
        """Task threads of every worker together."""
        return sum(int(w.get("nthreads", 1)) for w in self.workers().values())

    def check(self, config: LeagueConfig, blob: LeagueBlob, games: Sequence[Scheduled]) -> None:
        """Before any game: every game's resources exist somewhere, and every worker
        runs this referee and can start every bot. ClusterError names the first problem."""
        index = {b.name: i for i, b in enumerate(config.bots)}
        seen: set[tuple[tuple[str, float], ...]] = set()
        # Workers of a real cluster may still be joining: wait a little for one that
        # offers what a game needs (a local cluster's workers are all there).
        deadline = time.monotonic() + (0 if self.local is not None else WAIT_FOR_RESOURCES_S)
        offered = [w.get("resources") or {} for w in self.workers().values()]
        for game in games:
            need = needs(config, game.seats)
            key = tuple(sorted(need.items()))
            if not need or key in seen:
                continue
            seen.add(key)
            while not _offers(offered, need) and time.monotonic() < deadline:
                time.sleep(0.25)
                offered = [w.get("resources") or {} for w in self.workers().values()]
            if _offers(offered, need):
                continue
            which = [n for n in dict.fromkeys(game.seats) if config.bots[index[n]].resources]
            first = which[0]
            own = config.bots[index[first]].resources
            what = _amounts(own if len(which) == 1 else need)
            who = (
                f"bot[{index[first]}].resources: {first!r} needs {what}"
                if len(which) == 1
                else f"bot[{index[first]}].resources: a game of {', '.join(which)} needs {what}"
            )
            offers = sorted({_amounts(o) for o in offered if o})
            raise ClusterError(
                f"{who}, but no worker of {self.target} offers it (workers offer: "
                f"{'; '.join(offers) if offers else 'none'}); "
                "start workers with --resources, e.g. dask worker ADDRESS --resources "
                f'"{_amounts(need, sep=" ")}"'
            )
        import msgspec

        data = msgspec.msgpack.encode(blob)
        try:
            problems = self.client.run(check_worker, data)
        except Exception as exc:
            raise ClusterError(
                f"checking the workers of {self.target} failed: {type(exc).__name__}: {exc}"
            ) from None
        for address, problem in sorted(problems.items()):
            if problem:
                raise ClusterError(f"worker {address}: {problem}")

    async def play(
        self,
        blob: LeagueBlob,
        apart: Apart,
        pending: Queue,
        key: bytes,
        config: LeagueConfig,
        deliver: Callable[[Scheduled, Done], Awaitable[None]],
        notice: Callable[[str], None] | None = None,
    ) -> None:
        """Run the games of `pending` as tasks, a window of them at a time, and
        `deliver` each result in this trio task as it arrives. Cancelled (Ctrl-C):
        cancels what is pending.

        A task holds a batch of games played one after another, sized so that a
        task lasts about `TASK_TARGET_S` once the first results tell how long a
        game takes: Dask costs a few milliseconds per task, which short games
        would otherwise spend on coordination. A lost worker costs its batch.
        A game's deal is in play (`apart`) from its task's submission until the
        task's results are delivered: no other game of it is submitted, here or
        on the workers, and a batch holds one game of a deal at most."""
        token = trio.lowlevel.current_trio_token()
        send, receive = trio.open_memory_channel[Any](math.inf)
        outstanding: dict[Any, list[Scheduled]] = {}
        threads = self.threads()
        window = max(4, 2 * threads)
        run = secrets.token_hex(4)

        def arrived(future: Any) -> None:  # in the client's thread
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(send.send_nowait, future)

        def batch_size() -> int:
            if not self.stats.games:
                return 1  # nothing measured yet
            per_game = max(self.stats.play_s / self.stats.games, 1e-3)
            size = min(MAX_GAMES_PER_TASK, max(1, round(TASK_TARGET_S / per_game)))
            # Near the end, smaller batches keep every worker busy to the last game.
            left = pending.fill(size * max(1, threads))
            return max(1, min(size, left // max(1, threads)))

        def submit() -> bool:
            first = pending.take()
            if not isinstance(first, Scheduled):
                return False  # none left, or each one waits for its deal
            batch = [first]
            need = needs(config, first.seats)
            size = batch_size()
            while len(batch) < size:
                more = pending.peek()
                if not isinstance(more, Scheduled) or needs(config, more.seats) != need:
                    break
                pending.take()
                batch.append(more)
            future = self.client.submit(
                run_jobs,
                [encode_job(blob, game, key) for game in batch],
                key=f"{config.name}-{batch[0].game_id}-{len(batch)}-{run}",
                pure=False,
                resources=need or None,
            )
            outstanding[future] = batch
            self.stats.tasks += 1
            future.add_done_callback(arrived)
            return True

        def freed() -> None:  # a deal's game played here ended: its next may be submitted
            send.send_nowait(_FREED)

        try:
            known = set(self.workers())
            async with trio.open_nursery() as watching:
                if notice is not None:
                    watching.start_soon(self._watch_workers, notice, known)
                with apart.waking(freed):
                    await self._drain(receive, outstanding, submit, deliver, window, apart, pending)
                watching.cancel_scope.cancel()
            if notice is not None:
                await self._look(notice, known)  # a worker lost near the end is told too
        finally:
            left = list(outstanding)
            outstanding.clear()
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._finish, left, blob.digest)

    async def _drain(
        self,
        receive: trio.MemoryReceiveChannel[Any],
        outstanding: dict[Any, list[Scheduled]],
        submit: Callable[[], bool],
        deliver: Callable[[Scheduled, Done], Awaitable[None]],
        window: int,
        apart: Apart,
        pending: Queue,
    ) -> None:
        """Keep `window` tasks submitted and deliver their results until no game is
        left; a game that waits for its deal, in play here, is submitted when told."""
        while len(outstanding) < window and submit():
            pass
        while outstanding or pending.peek() is not None:
            future = await receive.receive()
            if future is _FREED:
                while len(outstanding) < window and submit():
                    pass
                continue
            batch = outstanding.pop(future)
            if future.status != "finished":
                await self._failed(future, batch)
            results = await trio.to_thread.run_sync(future.result)
            future.release()
            for game, data in zip(batch, results, strict=True):
                done = decode_done(data)
                start = time.perf_counter()
                await deliver(game, done)
                self.stats.deliver_s += time.perf_counter() - start
                self.stats.games += 1
                self.stats.play_s += done.play_s
                self.stats.workers.add(done.worker)
            for game in batch:
                apart.done(game)
            while len(outstanding) < window and submit():
                pass

    async def _watch_workers(self, notice: Callable[[str], None], known: set[str]) -> None:
        """Say when a worker leaves (its games in progress are played again) or joins."""
        while True:
            await trio.sleep(WATCH_WORKERS_S)
            await self._look(notice, known)

    async def _look(self, notice: Callable[[str], None], known: set[str]) -> None:
        try:
            now = set(await trio.to_thread.run_sync(self.workers))
        except Exception as exc:  # the scheduler is busy or gone: the games will say
            log.info("could not list the workers: %s", exc)
            return
        for address in sorted(known - now):
            self.stats.lost += 1
            notice(
                f"worker {address} left the cluster; its games in progress are played "
                "again on another worker"
            )
        for address in sorted(now - known):
            notice(f"worker {address} joined the cluster")
        known.clear()
        known.update(now)

    def _finish(self, futures: list[Any], digest: str) -> None:
        """Cancel what is pending and tell every worker to end this league's bots
        (a worker of a long-lived cluster would keep them otherwise)."""
        try:
            if futures:
                self.client.cancel(futures)
            self.client.run(end_league, digest)
        except Exception as exc:  # the cluster may be gone already
            log.info("could not end the league on the workers: %s", exc)

    async def _failed(self, future: Any, batch: list[Scheduled]) -> None:
        games = ", ".join(g.game_id for g in batch)
        if future.status == "cancelled":
            raise ClusterError(f"games {games} were cancelled by the cluster")
        exc = await trio.to_thread.run_sync(future.exception)
        if type(exc).__name__ == "KilledWorker":
            raise ClusterError(
                f"games {games} were lost with every worker that ran them ({exc}); "
                "the league stopped, games recorded so far are kept: --resume plays the rest"
            )
        if type(exc).__name__ == "WorkerSetupError":
            raise ClusterError(f"{exc}; the league stopped, --resume plays the rest")
        raise ClusterError(f"games {games} failed on the cluster: {type(exc).__name__}: {exc}")


def _offers(offered: list[dict[str, float]], need: dict[str, float]) -> bool:
    return any(all(o.get(k, 0) >= v for k, v in need.items()) for o in offered)


def needs(config: LeagueConfig, seats: Iterable[str]) -> dict[str, float]:
    """What the worker of a game with these seats must offer: the seats' sum."""
    by_name = {b.name: b for b in config.bots}
    total: dict[str, float] = {}
    for name in seats:
        for kind, amount in by_name[name].resources.items():
            total[kind] = total.get(kind, 0.0) + amount
    return total


def _amounts(table: dict[str, float], sep: str = ", ") -> str:
    return sep.join(f"{k}={v:g}" for k, v in sorted(table.items()))


def worker_tag(address: str) -> str:
    """A worker's address as a file-name part: `tcp://10.0.0.5:40123` -> `10.0.0.5-40123`."""
    bare = address.split("://", 1)[-1]
    return re.sub(r"[^\w.\-]+", "-", bare).strip("-")
