"""League throughput on a Dask cluster (`referee league --cluster`) against one process.

1. The same league of fast bots (4 x bench/fast_bot.py, tables of four, one-round
   double-12 games, league seed 2026) run in one process (`run_league` without a
   cluster, `jobs = 1` and `jobs = cores`) and on `local:2` with one and with two
   task threads per worker. Games per second over the league's run only; starting
   and closing the cluster are timed apart. The speed-up is local:2 against one
   process with `jobs = cores` (target: at least 1.6x on 2 cores).
2. Where the time goes, per game: game time on a worker thread and the
   coordinator's writing (`Cluster.stats`); CPU time of the coordinating process
   (with local:N the Dask scheduler runs in it), of the Dask worker processes and
   of the keepers and bots; the same with `dask scheduler` and `dask worker` as
   processes of their own, which gives the scheduler's share; and a no-op task
   round trip through the very loop a league uses (`Cluster.play`, with its
   window), 2000 tasks by default.
3. An estimate: at C seconds of coordinator and scheduler CPU per game, one
   coordinator saturates at about 1/C games per second, that is about D/C busy
   worker threads for games that take D seconds on a worker thread.

Other processes on the machine are counted too (`/proc/stat`): the `others`
column is the cores they kept busy during a run, which the rates depend on.

    python bench/bench_cluster.py
    python bench/bench_cluster.py --deals 50 --skip-tcp --noop-tasks 500
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _machine import cpu_model

HERE = Path(__file__).resolve()


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass
class Run:
    """One league run and where its time went (seconds, summed over the run)."""

    label: str
    cluster: bool
    threads: int = 0  # games at once: jobs, or task threads of all workers
    games: int = 0
    wall: float = 0.0  # the league's run; cluster start-up and close excluded
    coordinator_cpu: float = 0.0  # this process (with local:N: its scheduler too)
    scheduler_cpu: float | None = None  # a scheduler process of its own
    worker_cpu: float | None = None  # Dask worker processes: the referee side of the games
    bot_cpu: float = 0.0  # keepers and bots
    machine_busy: float | None = None  # every process on the machine (/proc/stat)
    startup_s: float | None = None
    close_s: float | None = None
    play_s: float = 0.0  # Cluster.stats
    deliver_s: float = 0.0
    result_bytes: list[int] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.games / self.wall if self.wall else 0.0

    @property
    def cpu(self) -> float:
        return (
            self.coordinator_cpu + (self.scheduler_cpu or 0.0) + (self.worker_cpu or 0.0)
        ) + self.bot_cpu

    @property
    def others(self) -> float | None:
        """Cores other processes kept busy during the run."""
        if self.machine_busy is None or not self.wall:
            return None
        return max(0.0, self.machine_busy - self.cpu) / self.wall

    @property
    def central(self) -> float:
        """Coordinator and scheduler CPU seconds per game: C of the estimate."""
        return (self.coordinator_cpu + (self.scheduler_cpu or 0.0)) / self.games

    def ms(self, seconds: float | None) -> str:
        if seconds is None or not self.games:
            return "-"
        return f"{seconds / self.games * 1000:.2f}"


@dataclass
class Noop:
    """No-op tasks through `Cluster.play`."""

    label: str
    tasks: int
    payload: int  # bytes of the argument and of the result
    wall: float
    coordinator_cpu: float
    scheduler_cpu: float | None
    worker_cpu: float


def league_config(out: Path, *, deals: int, rounds: str) -> Any:
    from referee.league.config import parse_config

    out.mkdir(parents=True, exist_ok=True)
    data = {
        "league": {"name": "bench-cluster", "table": 4, "deals": deals, "seed": 2026},
        "rules": {"preset": "standard", "rounds": rounds},
        "time": {"startup_ms": 120_000, "move_ms": 5000, "bank_ms": 60_000},
        "bot": [
            {
                "name": f"fast{i}",
                "command": [sys.executable, str(HERE.parent / "fast_bot.py")],
                "restart": "never",
            }
            for i in range(1, 5)
        ],
    }
    path = out / "league.toml"  # named in the workers' check; the parsed table is used
    path.write_text("# bench_cluster.py passes the league as parsed\n")
    return parse_config(data, path, out=out)


def machine_busy() -> float | None:
    """CPU seconds every process on the machine has used since boot, or None."""
    try:
        ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle, iowait


def children_cpu() -> float:
    """CPU seconds of the reaped children of this process (and of theirs that they reaped)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def descendants_cpu() -> dict[int, tuple[float, float]]:
    """CPU seconds so far of every live descendant of this process, by pid: its own,
    and that of its children it has reaped (a keeper reaps its bot, a worker its keepers)."""
    import psutil

    cpu: dict[int, tuple[float, float]] = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            t = proc.cpu_times()
        except psutil.Error:
            continue
        cpu[proc.pid] = (t.user + t.system, t.children_user + t.children_system)
    return cpu


@dataclass
class Snapshot:
    """CPU counters at one moment."""

    wall: float
    own: float
    descendants: dict[int, tuple[float, float]]
    machine: float | None

    @classmethod
    def take(cls) -> Snapshot:
        return cls(time.perf_counter(), time.process_time(), descendants_cpu(), machine_busy())


def split(before: Snapshot, after: Snapshot, scheduler_pid: int | None) -> dict[str, float]:
    """Coordinator, scheduler, Dask workers and bots, CPU seconds between two snapshots.

    Descendants alive at `before` are Dask's (scheduler, nannies, workers); those
    started since are keepers and bots. Bots that a worker ended before `after`
    count through the reaped-children time of their keeper and of the worker."""
    old = {pid: cpu for pid, cpu in after.descendants.items() if pid in before.descendants}
    own = {pid: cpu[0] - before.descendants[pid][0] for pid, cpu in old.items()}
    reaped = sum(cpu[1] - before.descendants[pid][1] for pid, cpu in old.items())
    new = sum(a + b for pid, (a, b) in after.descendants.items() if pid not in old)
    scheduler = own.pop(scheduler_pid, 0.0) if scheduler_pid is not None else 0.0
    return {
        "coordinator": after.own - before.own,
        "scheduler": scheduler,
        "workers": sum(own.values()),
        "bots": new + reaped,
    }


def count_games(config: Any) -> int:
    """Games in the ledger; exits if any had a fault (the bots never err)."""
    from referee.league.ledger import Ledger

    ledger = Ledger(config.out / "league.db")
    try:
        records = ledger.records()
    finally:
        ledger.close()
    faults = [f for r in records for f in r.faults]
    if faults:
        raise SystemExit(f"{config.out}: {len(faults)} faults, e.g. {faults[0]}")
    return len(records)


def league(config: Any, jobs: int, cluster: Any = None) -> None:
    import trio
    from rich.console import Console

    from referee.league.run import run_league

    async def go() -> None:
        console = Console(file=io.StringIO())
        await run_league(
            config, jobs=jobs, resume=False, console=console, quiet=True, cluster=cluster
        )

    trio.run(go)


def run_single(label: str, config: Any, jobs: int) -> Run:
    """The league in this process, `jobs` games at once."""
    run = Run(label, cluster=False, threads=jobs)
    busy0, kids0 = machine_busy(), children_cpu()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    league(config, jobs)
    run.wall = time.perf_counter() - wall0
    run.coordinator_cpu = time.process_time() - cpu0
    run.bot_cpu = children_cpu() - kids0  # the pool has ended and reaped every keeper
    busy1 = machine_busy()
    run.machine_busy = None if busy0 is None or busy1 is None else busy1 - busy0
    run.games = count_games(config)
    return run


@contextmanager
def sized_results(run: Run) -> Iterator[None]:
    """Note the size of every game result the coordinator receives."""
    import referee.league.cluster as cluster_mod

    decode = cluster_mod.decode_done

    def counted(data: bytes) -> Any:
        run.result_bytes.append(len(data))
        return decode(data)

    cluster_mod.decode_done = counted
    try:
        yield
    finally:
        cluster_mod.decode_done = decode


def run_cluster(
    label: str, config: Any, cluster: Any, startup_s: float, scheduler_pid: int | None = None
) -> Run:
    """The league on `cluster`, already open."""
    run = Run(label, cluster=True, startup_s=startup_s, threads=cluster.threads())
    before = Snapshot.take()
    with sized_results(run):
        league(config, 1, cluster)
    after = Snapshot.take()
    run.wall = after.wall - before.wall
    cpu = split(before, after, scheduler_pid)
    run.coordinator_cpu, run.worker_cpu, run.bot_cpu = (
        cpu["coordinator"],
        cpu["workers"],
        cpu["bots"],
    )
    run.scheduler_cpu = cpu["scheduler"] if scheduler_pid is not None else None
    if before.machine is not None and after.machine is not None:
        run.machine_busy = after.machine - before.machine
    run.play_s, run.deliver_s = cluster.stats.play_s, cluster.stats.deliver_s
    run.games = count_games(config)
    if cluster.stats.games != run.games:
        raise SystemExit(f"{label}: {cluster.stats.games} games delivered, {run.games} recorded")
    return run


def _echo(jobs: list[bytes]) -> list[bytes]:
    """The no-op task: its arguments back."""
    return jobs


def noop_round_trips(
    label: str, cluster: Any, config: Any, tasks: int, scheduler_pid: int | None = None
) -> Noop:
    """`tasks` tasks that return their argument (a small encoded `Done`) through
    `Cluster.play`, with the league's window and result handling; nothing delivered."""
    import msgspec
    import trio

    import referee.league.cluster as cluster_mod
    from referee.league.apart import Apart
    from referee.league.ledger import Record
    from referee.league.remote import Done, league_blob
    from referee.league.schedule import Scheduled

    seats = [b.name for b in config.bots][:4]
    record = Record(
        idx=0,
        game_id="g00001",
        unit=0,
        deal=0,
        rotation=0,
        seed=0,
        seats=seats,
        scores=[0] * 4,
        ranks=[1] * 4,
        forfeited=[False] * 4,
        faults=[],
        latency_mean=[0.1] * 4,
        latency_max=[0.2] * 4,
        decisions=100,
        log_path="-",
        finished="-",
    )
    done = Done(record=record, seed="0", log=b"", stderr=[], worker="-", play_s=0.0)
    data = msgspec.msgpack.encode(done)
    # Each its own deal: no task waits for another of its deal (league.apart).
    games = [
        Scheduled(index=i, unit=i, table=0, deal=i, rotation=0, seed=0, seats=tuple(seats))
        for i in range(tasks)
    ]

    async def delivered(game: Scheduled, done: Done) -> None:
        pass

    patched: dict[str, Any] = {
        "run_jobs": _echo,
        "encode_job": lambda blob, game, key: data,
        "MAX_GAMES_PER_TASK": 1,  # one no-op per task: the cost of a task
    }
    saved = {name: getattr(cluster_mod, name) for name in patched}
    saved_stats = cluster.stats
    cluster.stats = cluster_mod.Stats()
    try:
        for name, value in patched.items():
            setattr(cluster_mod, name, value)
        before = Snapshot.take()
        blob = league_blob(config)  # Cluster.play may name the league by its digest
        apart = Apart()
        trio.run(cluster.play, blob, apart, apart.queue(games), b"", config, delivered)
        after = Snapshot.take()
    finally:
        for name, value in saved.items():
            setattr(cluster_mod, name, value)
        cluster.stats = saved_stats
    cpu = split(before, after, scheduler_pid)
    return Noop(
        label=label,
        tasks=tasks,
        payload=len(data),
        wall=after.wall - before.wall,
        coordinator_cpu=cpu["coordinator"],
        scheduler_cpu=cpu["scheduler"] if scheduler_pid is not None else None,
        worker_cpu=cpu["workers"],
    )


@contextmanager
def local_cluster(workers: int, threads: int) -> Iterator[tuple[Any, float, dict[str, float]]]:
    """`Cluster.open("local:N")`; yields it, its start-up time, and on the way out
    notes the time it took to close in the dict."""
    from referee.league.cluster import Cluster

    started = time.perf_counter()
    cluster = Cluster.open(f"local:{workers}", threads_per_worker=threads)
    cluster.client.wait_for_workers(workers, timeout=60)
    closing: dict[str, float] = {}
    try:
        yield cluster, time.perf_counter() - started, closing
    finally:
        started = time.perf_counter()
        cluster.close()
        closing["close_s"] = time.perf_counter() - started


@contextmanager
def process_cluster(workers: int, threads: int, folder: Path) -> Iterator[tuple[Any, float, int]]:
    """`dask scheduler` and `dask worker --nworkers N` as processes of their own on
    127.0.0.1; yields the connected Cluster, its start-up time and the scheduler's pid."""
    from referee.league.cluster import Cluster

    folder.mkdir(parents=True, exist_ok=True)
    address_file = folder / "scheduler.json"
    log = (folder / "dask.log").open("ab")
    started = time.perf_counter()
    scheduler = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
    scheduler += ["--port", "0", "--no-dashboard", "--scheduler-file", str(address_file)]
    procs = [subprocess.Popen(scheduler, stdout=subprocess.DEVNULL, stderr=log)]
    try:
        address = None
        while address is None:
            if procs[0].poll() is not None:
                raise SystemExit(f"dask scheduler exited: see {folder / 'dask.log'}")
            try:
                address = json.loads(address_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.05)
        worker = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-dashboard"]
        worker += ["--nworkers", str(workers), "--nthreads", str(threads)]
        worker += ["--local-directory", str(folder)]
        procs.append(subprocess.Popen(worker, stdout=subprocess.DEVNULL, stderr=log))
        cluster = Cluster.open(address)
        try:
            cluster.client.wait_for_workers(workers, timeout=60)
            yield cluster, time.perf_counter() - started, procs[0].pid
        finally:
            cluster.close()
    finally:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def show_rate(run: Run, base: float) -> None:
    speed = f"{run.rate / base:.2f}x" if base else "-"
    startup = f"{run.startup_s:.1f}" if run.startup_s is not None else "-"
    close = f"{run.close_s:.1f}" if run.close_s is not None else "-"
    print(
        f"{run.label:<32s} {run.threads:4d} {run.games:6d} {run.wall:7.1f} {run.rate:8.1f} "
        f"{speed:>7s} {startup:>8s} {close:>7s}",
        flush=True,
    )


def show_cpu(run: Run, n: int) -> None:
    games = run.games or 1
    play = f"{run.play_s / games * 1000:.1f}" if run.cluster else "-"
    deliver = f"{run.deliver_s / games * 1000:.2f}" if run.cluster else "-"
    others = f"{run.others:.2f}" if run.others is not None else "-"
    print(
        f"{run.label:<32s} {play:>6s} {deliver:>8s} {run.ms(run.coordinator_cpu):>7s} "
        f"{run.ms(run.scheduler_cpu):>6s} {run.ms(run.worker_cpu):>8s} {run.ms(run.bot_cpu):>6s} "
        f"{run.cpu / games * 1000:7.1f} {run.cpu / run.wall:6.2f} {others:>7s} "
        f"{n / (run.cpu / games):7.0f}"
    )


def show_noop(x: Noop) -> None:
    sched = f"{x.scheduler_cpu / x.tasks * 1000:.2f}" if x.scheduler_cpu is not None else "-"
    print(
        f"{x.label:<32s} {x.tasks:6d} {x.payload:6d} {x.tasks / x.wall:8.0f} "
        f"{x.wall / x.tasks * 1000:8.2f} {x.coordinator_cpu / x.tasks * 1000:8.2f} {sched:>8s} "
        f"{x.worker_cpu / x.tasks * 1000:8.2f}"
    )


def table(header: str) -> None:
    print(header)
    print("-" * len(header))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=150, help="league deals (x4 rotations)")
    parser.add_argument("--rounds", default="single", help="rules.rounds (default single)")
    parser.add_argument("--workers", type=int, default=2, help="local:N (default 2)")
    parser.add_argument("--threads", default="1,2", help="task threads per worker to try")
    parser.add_argument("--noop-tasks", type=int, default=2000, help="no-op round trips (0: none)")
    parser.add_argument("--skip-jobs1", action="store_true", help="no one-process jobs=1 run")
    parser.add_argument(
        "--skip-tcp", action="store_true", help="no run with `dask scheduler` and `dask worker`"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parents[1]))
    # Another Dask scheduler on the machine holds port 8787: the one started here
    # takes another port for its HTTP routes and says so; nothing to do with the figures.
    warnings.filterwarnings("ignore", message="Port 8787 is already in use")
    try:
        import distributed
    except ImportError:
        print("bench_cluster: skipped, Dask is not installed: pip install -e '.[cluster]'")
        return

    n = cores()
    threads = [int(x) for x in args.threads.split(",") if x.strip()]
    print(f"machine: {platform.platform()}; {cpu_model()}; {n} cores")
    print(
        f"python:  {platform.python_implementation()} {platform.python_version()}; "
        f"distributed {distributed.__version__}"
    )
    print("bots:    4 x bench/fast_bot.py (legal move 0, answers ping), processes reused")
    print(
        f"league:  tables of 4, {args.deals} deals x 4 rotations = {args.deals * 4} games, "
        f"standard, double-12, rounds = {args.rounds!r}, league seed 2026"
    )
    print()
    runs: list[Run] = []
    noops: list[Noop] = []
    base = 0.0
    table(
        f"{'run':<32s} {'thr':>4s} {'games':>6s} {'wall s':>7s} {'games/s':>8s} "
        f"{'vs one':>7s} {'start s':>8s} {'close s':>7s}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        def config(name: str) -> Any:
            return league_config(root / name, deals=args.deals, rounds=args.rounds)

        for jobs in ([] if args.skip_jobs1 or n == 1 else [1]) + [n]:
            run = run_single(f"one process, jobs={jobs}", config(f"one-{jobs}"), jobs)
            if jobs == n:
                base = run.rate
            runs.append(run)
            show_rate(run, base)
        for t in threads:
            label = f"local:{args.workers}, {t} thread/worker"
            with local_cluster(args.workers, t) as (cluster, startup, closing):
                run = run_cluster(label, config(f"local-{t}"), cluster, startup)
                if args.noop_tasks:
                    noops.append(noop_round_trips(label, cluster, config("noop"), args.noop_tasks))
            run.close_s = closing["close_s"]
            runs.append(run)
            show_rate(run, base)
        if not args.skip_tcp:
            t = threads[0]
            label = f"sched+{args.workers} workers, {t} thr/wk"
            with process_cluster(args.workers, t, root / "dask") as (cluster, startup, pid):
                run = run_cluster(label, config("procs"), cluster, startup, scheduler_pid=pid)
                if args.noop_tasks:
                    noops.append(
                        noop_round_trips(label, cluster, config("noop"), args.noop_tasks, pid)
                    )
            runs.append(run)
            show_rate(run, base)
    print(
        "  thr: games at once (jobs, or task threads of all workers); vs one: against one "
        f"process with jobs={n};\n  start/close s: starting and closing the cluster, not in the "
        "rate; sched+: `dask scheduler` and `dask worker` processes on 127.0.0.1"
    )
    print()
    table(
        f"{'per game (ms), cores':<32s} {'play':>6s} {'deliver':>8s} {'coord':>7s} "
        f"{'sched':>6s} {'workers':>8s} {'bots':>6s} {'cpu':>7s} {'cores':>6s} {'others':>7s} "
        f"{'ceiling':>7s}"
    )
    for run in runs:
        show_cpu(run, n)
    sizes = [b for r in runs for b in r.result_bytes]
    print(
        "  play: wall time of a game on a worker thread; deliver: the coordinator writing its "
        "log and ledger row;\n"
        "  coord: CPU of the coordinating process (with local:N its scheduler and nannies too); "
        "sched: a scheduler process;\n"
        "  workers: CPU of the Dask worker processes (the referee side of the games); bots: "
        "keepers and bots;\n"
        "  cpu: all of these; cores: cpu / wall; others: cores other processes used meanwhile; "
        f"ceiling: games/s if cpu per game filled all {n} cores"
    )
    if sizes:
        kib = sum(sizes) / len(sizes) / 1024
        print(f"  a game's result (record, log, stderr) is {kib:.1f} KiB on average")
    if noops:
        print()
        table(
            f"{'no-op tasks, per task (ms)':<32s} {'tasks':>6s} {'bytes':>6s} {'tasks/s':>8s} "
            f"{'wall':>8s} {'coord':>8s} {'sched':>8s} {'workers':>8s}"
        )
        for x in noops:
            show_noop(x)
        print(
            "  Cluster.play with its window (2 x task threads, at least 4), the task returns its "
            "argument; CPU per task as above"
        )
    print()
    summary(runs, noops, n, base)


def summary(runs: list[Run], noops: list[Noop], n: int, base: float) -> None:
    one = next((r for r in runs if not r.cluster and r.threads == n), None)
    local = [r for r in runs if r.cluster and r.scheduler_cpu is None]
    if one is not None and local:
        best = max(local, key=lambda r: r.rate)
        need = n / (1.6 * base)
        print(
            f"speed-up: {best.label}: {best.rate:.1f} games/s = {best.rate / base:.2f}x one "
            f"process with jobs={n} ({base:.1f} games/s); target 1.6x "
            + ("met" if best.rate >= 1.6 * base else "NOT met")
        )
        print(
            f"  one process used {one.cpu / one.wall:.2f} of {n} cores at "
            f"{one.cpu / one.games * 1000:.1f} ms CPU a game; 1.6x that rate on {n} cores needs "
            f"at most {need * 1000:.1f} ms CPU a game, all processes together; "
            f"{best.label} used {best.cpu / best.games * 1000:.1f} ms"
        )
    procs = next((r for r in runs if r.scheduler_cpu is not None), None)
    if procs is not None and procs.games:
        print(
            f"  scheduler's share, from {procs.label}: scheduler "
            f"{procs.ms(procs.scheduler_cpu)} ms, coordinator {procs.ms(procs.coordinator_cpu)} "
            "ms CPU a game"
        )
    for x in noops:
        per = (x.coordinator_cpu + (x.scheduler_cpu or 0.0) + x.worker_cpu) / x.tasks
        print(
            f"  Dask's own cost a task ({x.label}, no-op): {per * 1000:.2f} ms CPU in all, "
            f"{x.wall / x.tasks * 1000:.2f} ms wall in the league's window"
        )
    print()
    for r in (r for r in runs if r.cluster and r.games):
        c, d = r.central, r.play_s / r.games
        print(
            f"estimate ({r.label}): C = {c * 1000:.2f} ms of coordinator+scheduler CPU a game, "
            f"D = {d * 1000:.1f} ms a game on a worker thread:\n"
            f"  one coordinator saturates at about 1/C = {1 / c:.0f} games/s, about "
            f"D/C = {d / c:.1f} busy worker threads"
        )


if __name__ == "__main__":
    main()
