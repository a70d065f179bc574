"""`referee match NEW BASE`: paired duplicate games until a sequential test decides.

The shell around `referee.stats`: it schedules units (one secret deal, played
once with NEW and once with BASE in the tested seat, the field and every bot's
own seed unchanged), plays their games as bot processes through
`referee.runner.run_game` (fresh processes for every game, so no process sees
a deal twice), and counts each unit in schedule order (`InOrder`), whatever
order `--jobs` finishes them in. At the first unit that crosses a bound every
game still running is cancelled and not counted. spec/STATS.md, "The command".
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import trio

from protocol.messages import TimeControl

from .commands.common import fail, run_trio
from .faults import Policy
from .gamelog import GZ_SUFFIX, read_log
from .league.schedule import deal_seed
from .match import GameResult, new_bot_seed_key
from .outputs import OutputError, ready_folder
from .process import BotSpec
from .replay import states
from .rules import Rules
from .runner import game_places, run_game
from .sandbox import SandboxError, check_visible
from .stats import InOrder, Sprt, SprtState, StatsError, Summary, Unit, Verdict, game_score
from .stats.luck import RolloutValue, luck

SPRT_DEFAULTS = {"elo0": 0.0, "elo1": 5.0, "alpha": 0.05, "beta": 0.05}
NEW, BASE = "new", "base"


class LiveSprt(Sprt):
    """A test that calls `on_unit` with its summary after each unit it counts.

    `InOrder` may count several units in one `put` (a late unit releases the
    ones held behind it); this way each still gets its own progress line."""

    on_unit: Callable[[Summary], None] | None = None

    def add(self, unit: Unit) -> Verdict | None:
        verdict = super().add(unit)
        if self.on_unit is not None:
            self.on_unit(self.summary())
        return verdict


def key_values(text: str, keys: tuple[str, ...]) -> dict[str, str]:
    """`key=value,key=value` with every key among `keys`; ValueError naming a bad part."""
    out: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in keys:
            raise ValueError(f"{part.strip()!r}: expected one of {', '.join(keys)} =")
        out[key.strip()] = value.strip()
    return out


def parse_sprt(text: str, *, fit_luck: bool = False) -> LiveSprt:
    """`elo0=E0,elo1=E1,alpha=A,beta=B` (any subset; the rest default) into a test.

    With `fit_luck` the units carry luck and the test fits its factor (the
    bench's best: bench/README.md, "SPRT benchmark"). StatsError says what is wrong."""
    values = dict(SPRT_DEFAULTS)
    try:
        given = key_values(text, tuple(SPRT_DEFAULTS))
    except ValueError as exc:
        raise StatsError(str(exc)) from None
    for key, value in given.items():
        try:
            values[key] = float(value)
        except ValueError:
            raise StatsError(f"{key}={value!r}: not a number") from None
    return LiveSprt(
        values["elo0"], values["elo1"], values["alpha"], values["beta"], fit_luck=fit_luck
    )


TIME_KEYS = ("startup_ms", "move_ms", "bank_ms", "increment_ms", "grace_ms")


def parse_clock(text: str, base: TimeControl) -> TimeControl:
    """`move_ms=2000,bank_ms=60000` (any of TIME_KEYS) over `base`: a bot's own clock."""
    values = {key: getattr(base, key) for key in TIME_KEYS}
    for key, value in key_values(text, TIME_KEYS).items():
        try:
            values[key] = int(value)
        except ValueError:
            raise ValueError(f"{key}={value!r}: not a whole number of ms") from None
        if values[key] < 0:
            raise ValueError(f"{key}={values[key]}: must not be negative")
    return TimeControl(**values)


@dataclass(frozen=True)
class Pairing:
    """Who sits where: NEW and BASE take turns in the tested seat, the field fills the rest."""

    new: BotSpec
    base: BotSpec
    field: tuple[BotSpec, ...]  # by the untested seats in seat order; empty for the chess pair
    table: int

    def tested_seat(self, unit: int) -> int:
        """The seat NEW and BASE play in unit `unit`: it rotates round the table."""
        return unit % self.table

    def seats(self, unit: int, which: str) -> list[BotSpec]:
        """The bots by seat in unit `unit`'s game with `which` (NEW or BASE) tested.

        Without a field (two seats) the other seat holds the other bot: the chess
        game pair, NEW against BASE and then the seats swapped."""
        tested = self.tested_seat(unit)
        me, other = (self.new, self.base) if which == NEW else (self.base, self.new)
        others = iter(self.field) if self.field else iter([other])
        return [me if s == tested else next(others) for s in range(self.table)]


def pairing(new: BotSpec, base: BotSpec, field: list[BotSpec], table: int) -> Pairing:
    """The seating, or a one-line exit when the field does not fit the table."""
    if table < 2:
        fail(f"--table {table}: a match needs at least 2 seats")
    if not field:
        if table != 2:
            fail(f"--table {table}: give the field (--field, once or {table - 1} times)")
        return Pairing(new, base, (), table)
    if len(field) == 1:
        field = field * (table - 1)  # one command fills every other seat, each its own process
    if len(field) != table - 1:
        fail(f"--field given {len(field)} times: a table of {table} needs 1 or {table - 1}")
    return Pairing(new, base, tuple(field), table)


@dataclass
class MatchSetup:
    """Everything a match needs once the options are checked."""

    pairing: Pairing
    rules: Rules
    time: TimeControl
    policy: Policy
    max_faults: int
    output_cap: int | None
    max_units: int | None  # None: until the test decides
    jobs: int
    out: Path | None  # None: the logs go to a temporary folder, removed at the end
    as_json: bool
    luck: bool = False  # take each game's rollout luck out (spec/STATS.md)
    resume: bool = False  # go on with the match saved in `out`
    time_new: TimeControl | None = None  # NEW's own clock (time odds); None: `time`
    time_base: TimeControl | None = None

    def seat_times(self, unit: int, which: str) -> list[TimeControl]:
        """Each seat's clock in unit `unit`'s game `which`: NEW's and BASE's own, else `time`."""
        own = {id(self.pairing.new): self.time_new, id(self.pairing.base): self.time_base}
        seats = self.pairing.seats(unit, which)
        return [own.get(id(spec)) or self.time for spec in seats]


def unit_score(rules: Rules, result: GameResult, seat: int) -> float:
    """The tested seat's game score: the share of other sides it finished ahead of."""
    sides = [rules.team_of(s) for s in range(rules.players)]
    return game_score(result.ranks, seat, sides)


def game_luck(log_path: Path, seat: int, key: int) -> float:
    """The rollout luck of `seat` in the logged game (CPU-bound: run it in a thread).

    Both games of a unit get the same `key` (their deal seed), so that what they
    share is valued alike and the first deal's value cancels."""
    steps = [(step.before, step.after) for step in states(read_log(log_path))]
    return luck(steps, seat, RolloutValue(), key).total


def progress_line(s: Summary) -> str:
    """One finished unit's state of the test, in the chess testers' words."""
    return (
        f"units {s.units} games {s.games} pairs W/D/L {s.wins}/{s.draws}/{s.losses} "
        f"score {s.score:.3f} Elo {s.elo:+.1f} +/- {s.elo_ci95:.1f} LOS {100 * s.los:.1f} % "
        f"LLR {s.llr:.2f} ({s.lower:.2f}, {s.upper:.2f})"
    )


def final_lines(s: Summary, names: tuple[str, str]) -> list[str]:
    """The end report, as fastchess and cutechess-cli print it."""
    verdict = {
        Verdict.H1: "H1 was accepted",
        Verdict.H0: "H0 was accepted",
        None: "no decision (--max-games ran out)",
    }[s.verdict]
    return [
        f"Results of {names[0]} vs {names[1]}: {s.units} units, {s.games} games, "
        f"pairs W/D/L {s.wins}/{s.draws}/{s.losses}, score {s.score:.3f}",
        f"Elo difference: {s.elo:.1f} +/- {s.elo_ci95:.1f}, LOS: {100 * s.los:.1f} %",
        f"SPRT ([{s.elo0:.2f}, {s.elo1:.2f}]): LLR {s.llr:.2f} ({s.lower:.2f}, {s.upper:.2f}) "
        f"- {verdict}",
    ]


def json_result(s: Summary) -> dict[str, object]:
    """What `--json` prints: the issue's fields first, then the rest of the summary."""
    full = s.to_dict()
    keys = ("verdict", "llr", "lower", "upper", "units", "games", "score", "elo", "elo_ci95")
    out: dict[str, object] = {k: full[k] for k in keys}
    out["los"] = full["los"]
    out.update({k: v for k, v in full.items() if k not in out})
    return out


def check_sandbox(setup: MatchSetup, log_dir: Path) -> None:
    """Sandboxed bots must not see the logs (every hand, the seeds): exit if they could."""
    places = game_places(log_dir / "x.jsonl", None)
    p = setup.pairing
    for spec in (p.new, p.base, *p.field):
        if spec.sandbox == "bwrap":
            try:
                path_env = spec.env.get("PATH", os.environ.get("PATH"))
                check_visible(spec.argv, cwd=spec.cwd, path_env=path_env, hidden=places)
            except SandboxError as exc:
                fail(f"{spec.name}: {exc}")


STATE_FILE = "match.json"  # in --out: the keys and the test's state after each counted unit
STATE_VERSION = 1


@dataclass
class Keys:
    """The match's secrets: they make its deals and bots' seeds, so a resumed match replays them."""

    deal: bytes
    bot: bytes


def fingerprint(setup: MatchSetup) -> dict[str, object]:
    """What a resumed match must share with the saved one: bots, table, rules, clocks, luck."""
    p = setup.pairing

    def clock(t: TimeControl | None) -> dict[str, int] | None:
        return None if t is None else {k: getattr(t, k) for k in TIME_KEYS}

    return {
        "new": p.new.command,
        "base": p.base.command,
        "field": [f.command for f in p.field],
        "table": p.table,
        "rules": setup.rules.to_dict(),
        "time": clock(setup.time),
        "time_new": clock(setup.time_new),
        "time_base": clock(setup.time_base),
        "luck": setup.luck,
    }


def save_state(path: Path, setup: MatchSetup, keys: Keys, sprt: Sprt) -> None:
    """Writes the state file whole or not at all (a crash mid-write keeps the last one)."""
    data = {
        "version": STATE_VERSION,
        "match": fingerprint(setup),
        "deal_key": keys.deal.hex(),
        "bot_key": keys.bot.hex(),
        "sprt": sprt.state.to_dict(),
    }
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(partial, path)


def load_state(path: Path, setup: MatchSetup, sprt: LiveSprt) -> tuple[Keys, LiveSprt]:
    """The saved keys and test, checked against this command's options; one-line exits."""
    try:
        data = json.loads(path.read_text())
        if data.get("version") != STATE_VERSION:
            fail(f"--resume: {path}: a state file of another version")
        keys = Keys(bytes.fromhex(data["deal_key"]), bytes.fromhex(data["bot_key"]))
        saved = SprtState.from_dict(data["sprt"])
        match = data["match"]
    except FileNotFoundError:
        fail(f"--resume: {path} does not exist (no match was started in this --out)")
    except (OSError, ValueError, KeyError, TypeError, StatsError) as exc:
        fail(f"--resume: {path}: not a match state file ({exc})")
    if match != json.loads(json.dumps(fingerprint(setup))):
        changed = sorted(k for k, v in fingerprint(setup).items() if match.get(k) != v)
        fail(f"--resume: {path} is a match with other {', '.join(changed) or 'options'}")
    st = sprt.state
    try:
        resumed = LiveSprt(st.elo0, st.elo1, st.alpha, st.beta, fit_luck=st.fit_luck, state=saved)
    except StatsError:
        fail(f"--resume: {path} is a match with another --sprt")
    return keys, resumed


def run_match(setup: MatchSetup, sprt: LiveSprt) -> None:
    """Plays the match (or goes on with it), prints it, exits 0 when H1 was accepted, else 1."""
    if setup.out is None:
        if setup.resume:
            fail("--resume needs the --out of the match to continue")
        with tempfile.TemporaryDirectory(prefix="referee-match-") as tmp:
            keys = Keys(secrets.token_bytes(32), new_bot_seed_key())
            _run(setup, sprt, Path(tmp), keys, None)
        sys.exit(0 if sprt.verdict is Verdict.H1 else 1)
    try:
        ready_folder(setup.out, "--out")
    except OutputError as exc:
        fail(str(exc))
    state_path = setup.out / STATE_FILE
    if setup.resume:
        keys, sprt = load_state(state_path, setup, sprt)
    elif state_path.exists():
        fail(f"--out {setup.out} holds a match ({STATE_FILE}): --resume goes on with it")
    else:
        keys = Keys(secrets.token_bytes(32), new_bot_seed_key())
        save_state(state_path, setup, keys, sprt)
    _run(setup, sprt, setup.out, keys, state_path)
    sys.exit(0 if sprt.verdict is Verdict.H1 else 1)


def _run(
    setup: MatchSetup, sprt: LiveSprt, log_dir: Path, keys: Keys, state_path: Path | None
) -> None:
    check_sandbox(setup, log_dir)
    live = not setup.as_json and sys.stdout.isatty()
    to_err = setup.as_json

    def report(summary: Summary) -> None:
        if state_path is not None:
            save_state(state_path, setup, keys, sprt)
        line = progress_line(summary)
        if live:
            click.echo(f"\r{line}\x1b[K", nl=False)  # one line, rewritten in place
        else:
            click.echo(line, err=to_err)

    sprt.on_unit = report
    try:
        if sprt.verdict is None:  # a resumed match may have been decided already
            run_trio(lambda: _play(setup, sprt, log_dir, keys))
    except KeyboardInterrupt:
        click.echo("\nreferee: interrupted; every bot was ended", err=True)
        sys.exit(130)
    except OSError as exc:
        fail(f"cannot write a game log in {log_dir}: {exc.strerror}")
    if live:
        click.echo()
    s = sprt.summary()
    if setup.as_json:
        click.echo(json.dumps(json_result(s)))
    else:
        for line in final_lines(s, (setup.pairing.new.name, setup.pairing.base.name)):
            click.echo(line)


def _schedule(unit: int, max_units: int | None) -> Iterator[tuple[int, str]]:
    while max_units is None or unit < max_units:
        yield unit, NEW
        yield unit, BASE
        unit += 1


async def _play(setup: MatchSetup, sprt: Sprt, log_dir: Path, keys: Keys) -> None:
    # The deal key makes secret deals; one bot key for the match gives each seat of a
    # unit's two games the same bot seed.
    deal_key, bot_key = keys.deal, keys.bot
    counter = InOrder(sprt)
    scores: dict[int, dict[str, float]] = {}
    slots = trio.Semaphore(setup.jobs)
    p = setup.pairing

    async with trio.open_nursery() as nursery:

        async def one(unit: int, which: str) -> None:
            try:
                seed = deal_seed(deal_key, 0, unit, 0)
                name = f"u{unit + 1:05d}-{which}"
                game = await run_game(
                    p.seats(unit, which),
                    setup.rules,
                    seed,
                    game_id=f"game-{secrets.token_hex(4)}",  # the seed stays out of the id
                    time=setup.time,
                    log_path=log_dir / f"{name}{GZ_SUFFIX}",  # compressed once played
                    policy=setup.policy,
                    max_faults=setup.max_faults,
                    stderr_dir=log_dir,
                    output_cap=setup.output_cap,
                    bot_seed_key=bot_key,
                    seat_times=setup.seat_times(unit, which),
                )
            finally:
                slots.release()
            seat = p.tested_seat(unit)
            got = scores.setdefault(unit, {})
            got[which] = unit_score(setup.rules, game.result, seat)
            if setup.luck:
                path = game.log_path
                got[f"luck-{which}"] = await trio.to_thread.run_sync(game_luck, path, seat, seed)
            if len(got) == (4 if setup.luck else 2):
                del scores[unit]
                done = Unit(
                    new=got[NEW],
                    base=got[BASE],
                    luck_new=got.get(f"luck-{NEW}", 0.0),
                    luck_base=got.get(f"luck-{BASE}", 0.0),
                )
                if counter.put(unit, done) is not None:
                    nursery.cancel_scope.cancel()  # games still running are not counted

        for unit, which in _schedule(sprt.state.units, setup.max_units):
            await slots.acquire()
            nursery.start_soon(one, unit, which)
