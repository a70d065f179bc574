"""A logged game as text (`referee replay LOG --show`) or as JSON lines (`--json`).

Pure functions from a `GameLog` that `referee.logs.replay.verify` has accepted to
lines of text or to plain dicts; printing is the command line's business.
Each decision is shown at the position where it was made, followed by the move
itself, so `--move N` answers "what did the table look like when move N was
chosen".

By default everything is shown: every hand, and the boneyard by its count only
(never its order). For one seat the log given is that seat's own log (made from
a full one with `referee.logs.replay_seat.redact`), followed without the seed: the
position is `referee.rules.view` of that seat, the very view its bot was sent,
and the moves of other seats carry only what every seat was told: no drawn
tile, no latency, no fault. Nothing a seat's output holds can come from the
seed, which its log does not have.

Rounds are numbered from 1 here, as `referee play` prints them; the log's
`round` fields (and the JSON records) count from 0. Decisions are numbered
from 1 as in the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from protocol.messages import NOTE_MAX

from ..game.wire import STEP_NAMES, view_info
from ..rules import (
    MEXICAN,
    Ctx,
    MoveKind,
    RoundEnd,
    RoundResult,
    Rules,
    State,
    Tile,
    TrainView,
    binding,
    view,
)
from ..text import quoted
from .gamelog import GameLog, move_of_spec
from .replay import Step, first_state, states
from .replay_seat import follow
from .replay_seat import start as seat_start


class SelectionError(ValueError):
    """A `--seat`, `--round` or `--move` this log does not have; the message says why."""


@dataclass(frozen=True, slots=True)
class Selection:
    """What to show: whose view, and which round or decision (None: all of them)."""

    seat: int | None = None
    round: int | None = None  # from 1
    move: int | None = None  # decision number, from 1

    def wants(self, step: Step) -> bool:
        """True when `step` is to be shown."""
        if self.move is not None and step.n != self.move:
            return False
        return self.round is None or step.before.round_index == self.round - 1

    @property
    def whole(self) -> bool:
        """True when the whole game is shown."""
        return self.round is None and self.move is None


def steps(log: GameLog) -> Iterator[Step]:
    """Every logged decision with the positions before and after it: re-derived with the
    engine from a full log (which must verify), followed from a seat's log."""
    return follow(log) if log.header.seat is not None else states(log)


def start_state(log: GameLog) -> State:
    """The first position of the logged game."""
    return seat_start(log) if log.header.seat is not None else first_state(log)


def final_state(log: GameLog, last: Step | None) -> State | None:
    """Where the log stops: after its last decision, or the first deal if it has none.
    None when a seat's log stops between a round's end and the next deal, which it
    does not know."""
    if last is None:
        return start_state(log)
    after = last.after
    stopped = last.result is not None and after.round_index == last.before.round_index
    return None if stopped and after.outcome is None else after


def _for_viewer(log: GameLog, selection: Selection) -> None:
    # A seat's output is rendered only from that seat's log, never from a full one.
    assert log.header.seat == selection.seat, "replay a seat from its own log (replay_seat)"


def select(log: GameLog, seat: int | None, round_number: int | None, move: int | None) -> Selection:
    """Check the options against this log; `SelectionError` with a one-line reason."""
    players = log.header.rules.players
    if seat is not None and not 0 <= seat < players:
        raise SelectionError(f"--seat {seat}: the game has seats 0 to {players - 1}")
    played = sorted({d.round for d in log.decisions})
    if round_number is not None:
        if not played:
            raise SelectionError(f"--round {round_number}: the log has no decision")
        if not 1 <= round_number <= played[-1] + 1:
            raise SelectionError(
                f"--round {round_number}: the log has rounds 1 to {played[-1] + 1}"
            )
    if move is not None:
        count = len(log.decisions)
        if not 1 <= move <= count:
            span = f"decisions 1 to {count}" if count else "no decision"
            raise SelectionError(f"--move {move}: the log has {span}")
        where = log.decisions[move - 1].round + 1
        if round_number is not None and where != round_number:
            raise SelectionError(f"--move {move} is in round {where}, not in round {round_number}")
    return Selection(seat, round_number, move)


# ---------------------------------------------------------------- small pieces


def tile_text(a: int, b: int) -> str:
    """A tile as text: `[12|5]`."""
    return f"[{a}|{b}]"


def laid(tiles: Sequence[Tile], end: int) -> list[tuple[int, int]]:
    """A train's tiles as they lie from the hub: in each pair the first number touches the
    tile before (or the hub), the second the tile after."""
    out: list[tuple[int, int]] = []
    for t in reversed(tiles):
        near = t.other(end)
        out.append((near, end))
        end = near
    out.reverse()
    return out


def _seat_name(log: GameLog, seat: int) -> str:
    names = {b.seat: b.name for b in log.header.bots}
    name = names.get(seat)
    return f"seat {seat} {name}" if name else f"seat {seat}"


def _hand_text(hand: Iterable[Tile]) -> str:
    return " ".join(tile_text(t.hi, t.lo) for t in hand) or "(empty)"


def _totals(results: Sequence[RoundResult], players: int) -> list[int]:
    return [sum(r.scores[s] for r in results) for s in range(players)]


def _members(rules: Rules, side: int) -> list[int]:
    return [s for s in range(rules.players) if rules.team_of(s) == side]


# ---------------------------------------------------------------- the table


@dataclass(frozen=True, slots=True)
class Board:
    """The table as one viewer sees it: everything, or one seat's view."""

    rules: Rules
    round_index: int
    engine: int
    to_move: int
    step: Ctx
    trains: tuple[TrainView, ...]
    markers: tuple[bool, ...]
    hand_counts: tuple[int, ...]
    hands: tuple[tuple[Tile, ...] | None, ...]  # None: hidden from this viewer
    drawn: Tile | None
    boneyard: int
    open_doubles: tuple[int, ...]  # live ones: a dead double binds nobody
    scores: tuple[int, ...]  # totals of finished rounds


def board(state: State, seat: int | None) -> Board:
    """The table in `state` as `seat` saw it (`referee.rules.view`), or all of it."""
    rules = state.rules
    n = rules.players
    if seat is not None:
        v = view(state, seat)
        return Board(
            rules=rules,
            round_index=v.round_index,
            engine=v.engine,
            to_move=v.to_move,
            step=v.step,
            trains=v.trains,
            markers=v.markers,
            hand_counts=v.hand_counts,
            hands=tuple(v.hand if s == seat else None for s in range(n)),
            drawn=v.drawn,
            boneyard=v.boneyard_count,
            open_doubles=v.open_doubles,
            scores=v.scores,
        )
    trains = []
    for i, t in enumerate(state.trains):
        public = t.owner == MEXICAN or all(state.markers[s] for s in _members(rules, t.owner))
        trains.append(
            TrainView(
                index=i,
                owner=t.owner,
                tiles=t.tiles,
                end=t.end,
                public=public,
                open_double=bool(t.tiles) and t.tiles[-1].is_double,
                parent=t.parent,
            )
        )
    full = (
        rules.max_pip + 1
    )  # tiles carrying any one number: a double with all on the table is dead
    live = tuple(i for i in state.open_doubles if state.table_count[state.trains[i].end] < full)
    return Board(
        rules=rules,
        round_index=state.round_index,
        engine=state.engine,
        to_move=state.to_move,
        step=state.ctx,
        trains=tuple(trains),
        markers=state.markers,
        hand_counts=tuple(len(h) for h in state.hands),
        hands=state.hands,
        drawn=state.drawn,
        boneyard=len(state.boneyard),
        open_doubles=live,
        scores=tuple(_totals(state.results, n)),
    )


def train_label(log: GameLog, rules: Rules, index: int, owner: int, parent: int) -> str:
    """Whose train: "seat 1 greedy", "Mexican train", "branch of train 4"."""
    if parent >= 0:
        return f"branch of train {parent}"
    if owner == MEXICAN:
        return "Mexican train"
    if rules.teams:
        seats = ", ".join(str(s) for s in _members(rules, owner))
        return f"team {owner} (seats {seats})"
    return _seat_name(log, index)


def board_lines(log: GameLog, b: Board) -> list[str]:
    """The table: hub, each train with its open end, markers, open doubles, hands, boneyard."""
    rules = b.rules
    n = rules.players
    labels = [train_label(log, rules, t.index, t.owner, t.parent) for t in b.trains]
    width = max(len(s) for s in labels)
    doubles = ", ".join(f"train {i}" for i in b.open_doubles) or "none"
    out = [
        f"  hub {tile_text(b.engine, b.engine)} · boneyard {b.boneyard} · open doubles: {doubles}"
    ]
    for t, label in zip(b.trains, labels, strict=True):
        flags = []
        if t.index < n and b.markers[t.index]:
            flags.append("marker up")
        if t.public and t.owner != MEXICAN and (rules.teams or t.parent >= 0):
            flags.append("public")
        if t.open_double and t.index in b.open_doubles:
            flags.append("open double")
        tiles = "".join(tile_text(a, c) for a, c in laid(t.tiles, t.end)) or "·"
        tail = f"  ({', '.join(flags)})" if flags else ""
        out.append(f"  train {t.index:<2} {label:<{width}}  {tiles} > {t.end}{tail}")
    names = [_seat_name(log, s) for s in range(n)]
    width = max(len(s) for s in names)
    for s in range(n):
        hand = b.hands[s]
        mark = "*" if s == b.to_move else " "
        count = b.hand_counts[s]
        shown = _hand_text(hand) if hand is not None else "(hidden)"
        line = f" {mark}hand  {names[s]:<{width}} {count:>2}: {shown}"
        if hand is not None and b.drawn is not None and s == b.to_move:
            line += f"  drew {tile_text(b.drawn.hi, b.drawn.lo)}"
        out.append(line)
    return out


# ---------------------------------------------------------------- moves and rounds


def move_text(log: GameLog, step: Step, seat: int | None) -> str:
    """The decision: who did what, and for the viewer entitled to it, latency, faults and
    notices (what the referee ignored)."""
    line = step.line
    move = move_of_spec(line.move)
    who = _seat_name(log, line.seat)
    own = seat is None or seat == line.seat
    before, after = step.before, step.after
    if move.kind is MoveKind.PLAY:
        assert move.tile is not None and move.train is not None
        rules = before.rules
        train = before.trains[move.train]
        end = train.end
        label = train_label(log, rules, move.train, train.owner, train.parent)
        what = f"plays {tile_text(end, move.tile.other(end))} on train {move.train} ({label})"
        if move.announce:
            what += ", announcing one tile left"
        if move.tile.is_double:
            what += ", a double"
    elif move.kind is MoveKind.DRAW:
        drawn = after.drawn
        what = "draws"
        if own and drawn is not None:
            what += f" {tile_text(drawn.hi, drawn.lo)}"
    elif move.kind is MoveKind.PASS:
        what = "passes"
    else:
        what = "ends the turn"
    notes: list[str] = []
    if step.result is None:
        for s, (was, now) in enumerate(zip(before.markers, after.markers, strict=True)):
            if was != now:
                notes.append(f"seat {s} marker {'up' if now else 'down'}")
        if move.kind is not MoveKind.DRAW:
            gained = set(after.hands[line.seat]) - set(before.hands[line.seat])
            if gained:
                tiles = f": {_hand_text(sorted(gained))}" if own else ""
                notes.append(f"draws {len(gained)} as a penalty{tiles}")
    if own:
        if line.auto:
            notes.append("made by the referee")
        if line.latency_ms is not None:
            notes.append(f"{line.latency_ms:.3f} ms")
        if line.referee_late_ms:
            notes.append(f"referee late {line.referee_late_ms:.3f} ms (not charged)")
        for f in line.faults:
            notes.append(f"fault {f.kind}: {f.detail}")
        for n in line.notices:
            notes.append(f"ignored {n.kind}: {n.detail}")
        if line.note is not None:  # the bot's own words: escaped, in quotes
            notes.append(f"note {quoted(line.note, NOTE_MAX)}")
        if line.info:
            notes.append("info " + " ".join(f"{k}={v:g}" for k, v in line.info.items()))
    tail = "".join(f" · {note}" for note in notes)
    return f"> move {line.n}: {who} {what}{tail}"


def round_start_lines(log: GameLog, state: State) -> list[str]:
    """The deal: engine, who placed it, who starts, the totals so far (all public)."""
    rules = state.rules
    number = state.round_index + 1
    engine = tile_text(state.engine, state.engine)
    head = f"== round {number} of {len(rules.engines)} · engine {engine}"
    if state.holder is not None:
        head += f" held by {_seat_name(log, state.holder)}"
        if state.engine_draws:
            head += f" (drawn after {len(state.engine_draws)} draws in turn)"
    head += f" · {_seat_name(log, state.starter)} starts"
    totals = " ".join(str(v) for v in _totals(state.results, rules.players))
    return ["", f"{head} · totals {totals} =="]


def round_end_lines(log: GameLog, result: RoundResult, totals: Sequence[int]) -> list[str]:
    """A round's end: how, the hands shown (public at round end), values and scores."""
    if result.end is RoundEnd.OUT:
        how = "out: " + ", ".join(_seat_name(log, s) for s in result.out)
    else:
        how = "blocked"
    out = [f"== round {result.number + 1} ends, {how} =="]
    names = [_seat_name(log, s) for s in range(len(result.hands))]
    width = max(len(s) for s in names)
    for s, hand in enumerate(result.hands):
        out.append(
            f"  {names[s]:<{width}}  scores {result.scores[s]:>3}  total {totals[s]:>4}"
            f"  value {result.values[s]:>3}: {_hand_text(hand)}"
        )
    return out


def header_lines(log: GameLog, seat: int | None) -> list[str]:
    """What game this is, whose view follows, and whether the log is complete."""
    h = log.header
    rules = h.rules
    state = "complete" if log.complete else "INCOMPLETE (no footer: the game was cut short)"
    seed = f" · seed {h.seed}" if h.seed is not None else ""
    out = [
        f"game {h.game}{seed} · double-{rules.max_pip}, {rules.players} players · "
        f"{len(log.decisions)} decisions · log {state}",
    ]
    for b in h.bots:
        out.append(f"  seat {b.seat}: {b.name}" + (f"  ({b.command})" if seat is None else ""))
    if seat is None:
        out.append("view: everything (every hand; the boneyard by its count only)")
    else:
        out.append(f"view: {_seat_name(log, seat)}, exactly what its bot was shown")
    return out


def end_lines(log: GameLog, final: State | None, seat: int | None) -> list[str]:
    """The result (a complete log) or where the log stops (an incomplete one)."""
    footer = log.footer
    if footer is not None:
        scores = " ".join(str(v) for v in footer.scores)
        ranks = " ".join(str(v) for v in footer.ranks)
        out = ["", f"== game over · totals {scores} · ranks {ranks} =="]
        for s, lost in enumerate(footer.forfeited):
            if lost:
                out.append(f"  {_seat_name(log, s)} forfeited")
        if seat is None:
            for f in footer.faults:
                out.append(f"  fault {_seat_name(log, f.seat)} {f.kind}: {f.detail}")
            for n in footer.notices:
                out.append(f"  ignored {_seat_name(log, n.seat)} {n.kind}: {n.detail}")
        return out
    out = ["", f"== the log stops after decision {len(log.decisions)} (incomplete) =="]
    if final is not None and final.outcome is None:
        out.append(f"  {_seat_name(log, final.to_move)} was to move")
        out.extend(board_lines(log, board(final, seat)))
    return out


def show(log: GameLog, selection: Selection) -> Iterator[str]:
    """The game as text, move by move, for the selection (the log must verify; for a
    seat, the log is that seat's own)."""
    _for_viewer(log, selection)
    seat = selection.seat
    yield from header_lines(log, seat)
    round_index = -1
    last: Step | None = None
    for step in steps(log):
        last = step
        if not selection.wants(step):
            continue
        if step.before.round_index != round_index:
            round_index = step.before.round_index
            yield from round_start_lines(log, step.before)
        yield ""
        b = board(step.before, seat)
        step_name = STEP_NAMES[b.step]
        yield (
            f"-- move {step.n} · round {round_index + 1} · "
            f"{_seat_name(log, b.to_move)} to move ({step_name}) --"
        )
        yield from board_lines(log, b)
        yield move_text(log, step, seat)
        if step.result is not None:
            totals = _totals(step.after.results, step.before.rules.players)
            yield from round_end_lines(log, step.result, totals)
    if selection.whole:
        yield from end_lines(log, final_state(log, last), seat)


# ---------------------------------------------------------------- JSON lines


def _pair(t: Tile | None) -> list[int] | None:
    return [t.hi, t.lo] if t is not None else None


def state_record(state: State, seat: int | None) -> dict[str, Any]:
    """A position as JSON: for a seat, the `view` of its turn requests; else everything."""
    n = state.rules.players
    if seat is not None:
        out: dict[str, Any] = msgspec.to_builtins(view_info(state, seat))
        out["seat"] = seat
        out["to_move"] = state.to_move
        return out
    b = board(state, None)
    return {
        "round": b.round_index,
        "engine": b.engine,
        "hands": [[[t.hi, t.lo] for t in h] for h in state.hands],
        "drawn": _pair(b.drawn),
        "trains": [
            {
                "train": t.index,
                "owner": t.owner,
                "tiles": [list(p) for p in laid(t.tiles, t.end)],
                "end": t.end,
                "public": t.public,
                "open_double": t.open_double,
                "parent": t.parent,
            }
            for t in b.trains
        ],
        "markers": list(b.markers),
        "hand_counts": list(b.hand_counts),
        "scores": list(b.scores),
        "boneyard": b.boneyard,
        "open_doubles": list(b.open_doubles),
        "binding": list(binding(state)),  # what binds the seat to move, as in its view
        "step": STEP_NAMES[b.step],
        "to_move": b.to_move,
        "seat": None,
        "players": n,
    }


def step_record(step: Step, seat: int | None) -> dict[str, Any]:
    """One decision as JSON: the move, and the position where it was made."""
    line = step.line
    own = seat is None or seat == line.seat
    out: dict[str, Any] = {
        "type": "step",
        "n": line.n,
        "round": line.round,
        "seat": line.seat,
        "move": msgspec.to_builtins(line.move),
    }
    drawn = step.after.drawn if line.move.action == "draw" else None
    if own:
        out["drew"] = _pair(drawn)
        out["latency_ms"] = line.latency_ms
        out["auto"] = line.auto
        out["faults"] = [msgspec.to_builtins(f) for f in line.faults]
        out["notices"] = [msgspec.to_builtins(n) for n in line.notices]
        if line.note is not None:
            out["note"] = line.note
        if line.info is not None:
            out["info"] = line.info
    out["state"] = state_record(step.before, seat)
    return out


def round_end_record(result: RoundResult, totals: Sequence[int]) -> dict[str, Any]:
    """A round's end as JSON (public facts)."""
    return {
        "type": "round_end",
        "round": result.number,
        "engine": result.engine,
        "reason": "out" if result.end is RoundEnd.OUT else "blocked",
        "out": list(result.out),
        "hands": [[[t.hi, t.lo] for t in h] for h in result.hands],
        "values": list(result.values),
        "scores": list(result.scores),
        "totals": list(totals),
    }


def records(log: GameLog, selection: Selection) -> Iterator[dict[str, Any]]:
    """The re-derived game as JSON-ready dicts: a `game` record, then `step` and
    `round_end` records for the selection, then `end` (complete) or `cut` (incomplete).
    The `game` record has the seed only in the full view: a seat's log has none."""
    _for_viewer(log, selection)
    seat = selection.seat
    h = log.header
    bots = [{"seat": b.seat, "name": b.name} for b in h.bots]
    if seat is None:
        bots = [msgspec.to_builtins(b) for b in h.bots]
    game: dict[str, Any] = {"type": "game", "game": h.game}
    if h.seed is not None:
        game["seed"] = h.seed
    game.update(
        rules=msgspec.to_builtins(h.rules),
        bots=bots,
        seat=seat,
        complete=log.complete,
        decisions=len(log.decisions),
    )
    yield game
    last: Step | None = None
    for step in steps(log):
        last = step
        if not selection.wants(step):
            continue
        yield step_record(step, seat)
        if step.result is not None:
            yield round_end_record(
                step.result, _totals(step.after.results, step.before.rules.players)
            )
    if not selection.whole:
        return
    footer = log.footer
    if footer is not None:
        yield {
            "type": "end",
            "scores": footer.scores,
            "ranks": footer.ranks,
            "forfeited": footer.forfeited,
        }
        return
    final = final_state(log, last)
    state = state_record(final, seat) if final is not None else None
    yield {"type": "cut", "decisions": len(log.decisions), "state": state}
