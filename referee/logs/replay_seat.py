"""One seat's log: made from a full log, and followed without the seed.

A log written for one seat (`LogWriter(seat=S)`, `referee play --seat-logs`)
holds what that seat was told and nothing else: no seed, no other seat's drawn
tile, no evidence of another seat's fault, and each round's deal as that seat
saw it. `redact` makes the same lines from a full log, through the functions the
writer uses, so `referee replay FULL --seat S` and `referee replay SEATLOG` show
one and the same thing: every replay for one seat is rendered from such a log.

`follow` rebuilds the positions of a seat's log without the engine's deal. Its
`State`s hold the seat's own tiles and every public fact; in place of the tiles
the seat never saw (other hands, the boneyard) they hold stand-ins with negative
pips, which no tile of a set has, so `view` of the seat is exactly what its bot
was shown and nothing rendered from them can name a hidden tile. Without the
seed the deal cannot be checked; `follow` checks that the log holds together
(each move fits the table and the seat's hand, the round ends agree with it)
and reports the first line that does not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import msgspec

from ..rules import (
    BindDuration,
    Ctx,
    RoundEnd,
    RoundResult,
    SatisfyOrder,
    State,
    Tile,
    Train,
    position,
    tile,
)
from ..rules.scoring import outcome_of
from .gamelog import (
    DecisionLine,
    GameLog,
    RoundLine,
    line_bytes,
    redact_decision,
    redact_fault,
    redact_header,
    round_start_line,
)
from .replay import Divergence, Step, Verdict, first_state, rules_of, states


class SeatLogError(Exception):
    """A seat's log that does not hold together; `divergence` says where and how."""

    def __init__(self, divergence: Divergence) -> None:
        super().__init__(str(divergence))
        self.divergence = divergence


# ---------------------------------------------------------------- from a full log


def redact(log: GameLog, seat: int) -> GameLog:
    """`seat`'s log made from a full log that verifies: the lines `LogWriter(seat=seat)`
    writes, numbered as in its file."""
    header = redact_header(log.header, seat)
    deals = [round_start_line(first_state(log), seat)]
    deal_lines = {0: 2}  # the header is line 1
    written = hashlib.sha256(line_bytes(header) + b"\n" + line_bytes(deals[0]) + b"\n")
    decisions: list[DecisionLine] = []
    lines: dict[int, int] = {}
    rounds: list[RoundLine] = []
    round_lines: dict[int, int] = {}
    recorded = {r.round: r for r in log.rounds}
    number = 2
    for step in states(log):
        number += 1
        decisions.append(redact_decision(step.line, step.before, step.after, seat))
        written.update(line_bytes(decisions[-1]) + b"\n")
        lines[step.n] = number
        if step.result is None or step.result.number not in recorded:
            continue  # (a cut log may stop between a round's last decision and its end)
        number += 1
        rounds.append(recorded[step.result.number])
        written.update(line_bytes(rounds[-1]) + b"\n")
        round_lines[step.result.number] = number
        if step.after.outcome is None:
            number += 1
            deals.append(round_start_line(step.after, seat))
            written.update(line_bytes(deals[-1]) + b"\n")
            deal_lines[step.after.round_index] = number
    footer = log.footer
    if footer is not None:
        number += 1
        footer = msgspec.structs.replace(
            footer,
            faults=[redact_fault(f, seat) for f in footer.faults],
            notices=[redact_fault(n, seat) for n in footer.notices],
            # The digest of this log's own lines before its footer, as its writer takes it.
            sha256=None if footer.sha256 is None else "sha256:" + written.hexdigest(),
        )
    return GameLog(
        path=log.path,
        header=header,
        decisions=decisions,
        rounds=rounds,
        footer=footer,
        lines=lines,
        round_lines=round_lines,
        footer_line=number if footer is not None else 0,
        deals=deals,
        deal_lines=deal_lines,
    )


# ---------------------------------------------------------------- following a seat's log


def follow(log: GameLog) -> Iterator[Step]:
    """Each decision of a seat's log with the positions that seat saw around it;
    `SeatLogError` at the first line that does not hold together."""
    return _Follower(log).steps()


def start(log: GameLog) -> State:
    """The first position of a seat's log; `SeatLogError` when it has no first deal."""
    return _Follower(log).deal(0, ())


def check(log: GameLog) -> Verdict:
    """Follow a seat's log to its end: the verdict names the first line that does not hold."""
    count = rounds = 0
    try:
        for step in follow(log):
            count += 1
            rounds += step.result is not None
    except SeatLogError as exc:
        return Verdict(count, rounds, log.complete, exc.divergence)
    return Verdict(count, rounds, log.complete, None)


def _tile_text(t: Tile) -> str:
    return f"[{t.hi}|{t.lo}]"


class _Follower:
    """Walks a seat's log, keeping a position built only from what the seat saw."""

    def __init__(self, log: GameLog) -> None:
        assert log.header.seat is not None, "follow reads a log written for one seat"
        self.log = log
        self.seat = log.header.seat
        self.rules = rules_of(log)
        self.deals = {d.round: d for d in log.deals}
        self.rounds = {r.round: r for r in log.rounds}
        self.made = 0

    def fail(self, line: int, log_says: str, seen: str) -> SeatLogError:
        return SeatLogError(Divergence(line, log_says, seen))

    def unseen(self, count: int) -> tuple[Tile, ...]:
        """`count` stand-ins for tiles the seat never saw: distinct, with negative pips."""
        out = tuple(Tile(-1, -(self.made + k + 1)) for k in range(count))
        self.made += count
        return out

    def deal(self, index: int, results: tuple[RoundResult, ...]) -> State:
        """The position at the start of round `index`, from its `round_start` line."""
        rules = self.rules
        line = self.deals.get(index)
        where = self.log.deal_lines.get(index, 1)
        if line is None:
            raise self.fail(where, f"no round_start line for round {index}", "one is needed")
        seat, n = self.seat, rules.players
        if index >= len(rules.engines) or line.engine != rules.engines[index]:
            raise self.fail(where, f"round {index} engine {line.engine}", "not these rules'")
        if len(line.hand_counts) != n or len(line.hand) != line.hand_counts[seat]:
            raise self.fail(where, f"hand counts {line.hand_counts}", f"a hand of {len(line.hand)}")
        try:
            step = Ctx(line.step)
        except ValueError:
            raise self.fail(where, f"step {line.step!r}", "no such step") from None
        # `first_turns`: each seat's first turn is still to come, as after the engine's deal.
        state = position(
            rules, [()] * n, boneyard=(), round_index=index, results=results, first_turns=True
        ).copy()
        own = tuple(sorted(tile(a, b) for a, b in line.hand))
        state.hands = tuple(
            own if s == seat else self.unseen(c) for s, c in enumerate(line.hand_counts)
        )
        state.boneyard = self.unseen(line.boneyard)
        state.holder = line.holder
        state.engine_draws = tuple(line.engine_draws)
        state.starter = state.to_move = line.starter
        state.ctx = step
        state.fast_counts = tuple(line.hand_counts)
        return state

    def steps(self) -> Iterator[Step]:
        log, rules = self.log, self.rules
        state = self.deal(0, ())
        decisions = log.decisions
        for i, line in enumerate(decisions):
            where = log.lines.get(line.n, 0)
            if line.n != i + 1:
                raise self.fail(where, f"decision number {line.n}", f"it is decision {i + 1}")
            if state.outcome is not None:
                raise self.fail(where, f"a decision in round {line.round}", "the game is over")
            if line.round != state.round_index:
                raise self.fail(
                    where, f"a decision in round {line.round}", f"round {state.round_index} is on"
                )
            if line.seat != state.to_move:
                raise self.fail(
                    where, f"seat {line.seat} moved", f"seat {state.to_move} is to move"
                )
            after = self.move(state, line, where)
            if line.after is not None:
                self.changes(after, line, where)
            self.turns(state, after, line)
            following = decisions[i + 1].round if i + 1 < len(decisions) else None
            recorded = self.rounds.get(line.round)
            result = None
            if recorded is not None and following != line.round:
                result = self.round_end(after, recorded)
                results = (*state.results, result)
                if len(results) == len(rules.engines):
                    after.results = results
                    after.outcome = outcome_of(rules, results)
                    after.ctx = Ctx.START
                elif following is not None or line.round + 1 in self.deals:
                    after = self.deal(line.round + 1, results)
                else:
                    after.results = results  # the log stops before the next deal
            elif following is not None and following != line.round:
                raise self.fail(where, f"round {line.round} goes on", "it has no round_end line")
            yield Step(line, state, after, result)
            state = after
        footer = log.footer
        if footer is not None and state.outcome is None:
            raise self.fail(log.footer_line, "the game is over", "it goes on")

    def move(self, state: State, line: DecisionLine, where: int) -> State:
        """The position after the move itself, before what `line.after` says."""
        after = state.copy()
        mover = line.seat
        hand = state.hands[mover]
        action = line.move.action
        after.drawn = None
        if action == "play":
            spec = line.move
            if spec.tile is None or spec.train is None:
                raise self.fail(where, "a play without its tile and train", "a play names both")
            played = tile(*spec.tile)
            if played.lo < 0 or played.hi > self.rules.max_pip:
                raise self.fail(where, f"a play of {_tile_text(played)}", "no tile of this set")
            index = spec.train
            if not 0 <= index < len(state.trains):
                raise self.fail(where, f"a play on train {index}", "there is no such train")
            train = state.trains[index]
            if train.end not in played:
                raise self.fail(
                    where,
                    f"seat {mover} played {_tile_text(played)} on train {index}",
                    f"its open end is {train.end}",
                )
            if mover == self.seat:
                if played not in hand:
                    raise self.fail(
                        where, f"seat {mover} played {_tile_text(played)}", "it is not in its hand"
                    )
                rest = tuple(t for t in hand if t != played)
            elif hand:
                rest = hand[:-1]
            else:
                raise self.fail(where, f"seat {mover} played", "its hand is empty")
            after.hands = _with(state.hands, mover, rest)
            trains = list(state.trains)
            trains[index] = Train(
                train.owner, (*train.tiles, played), played.other(train.end), train.parent
            )
            after.trains = tuple(trains)
            count = list(state.table_count)
            count[played.hi] += 1
            if not played.is_double:
                count[played.lo] += 1
            after.table_count = tuple(count)
        elif action == "draw":
            if not state.boneyard:
                raise self.fail(where, f"seat {mover} drew", "the boneyard is empty")
            if mover == self.seat:
                if line.drew is None:
                    raise self.fail(where, "its own draw without the tile", "the tile drawn")
                drawn = tile(*line.drew)
                after.hands = _with(state.hands, mover, tuple(sorted((*hand, drawn))))
            else:
                drawn = state.boneyard[-1]
                after.hands = _with(state.hands, mover, (*hand, drawn))
            after.boneyard = state.boneyard[:-1]
            after.drawn = drawn
        return after

    def changes(self, after: State, line: DecisionLine, where: int) -> None:
        """Apply what `line.after` says the decision changed besides the move."""
        x = line.after
        assert x is not None
        n = self.rules.players
        mover = line.seat
        if x.penalty:
            if x.penalty > len(after.boneyard):
                raise self.fail(where, f"a penalty of {x.penalty}", "the boneyard is smaller")
            if mover == self.seat:
                tiles = tuple(tile(a, b) for a, b in x.penalty_tiles or ())
                if len(tiles) != x.penalty:
                    raise self.fail(where, f"a penalty of {x.penalty}", f"{len(tiles)} tiles")
                hand = tuple(sorted((*after.hands[mover], *tiles)))
            else:
                hand = (*after.hands[mover], *after.boneyard[len(after.boneyard) - x.penalty :])
            after.boneyard = after.boneyard[: len(after.boneyard) - x.penalty]
            after.hands = _with(after.hands, mover, hand)
        if x.branches:
            new = tuple(Train(owner, (), end, parent) for owner, parent, end in x.branches)
            after.trains = (*after.trains, *new)
        if x.markers is not None:
            if len(x.markers) != n:
                raise self.fail(where, f"markers {x.markers}", f"{n} seats")
            after.markers = tuple(x.markers)
        if x.doubles is not None:
            if any(not 0 <= i < len(after.trains) for i in x.doubles):
                raise self.fail(where, f"open doubles {x.doubles}", "no such train")
            after.open_doubles = tuple(x.doubles)
        if x.step is not None:
            try:
                after.ctx = Ctx(x.step)
            except ValueError:
                raise self.fail(where, f"step {x.step!r}", "no such step") from None
        if x.next is not None:
            if not 0 <= x.next < n:
                raise self.fail(where, f"seat {x.next} to move next", f"seats 0 to {n - 1}")
            after.to_move = x.next

    def turns(self, before: State, after: State, line: DecisionLine) -> None:
        """Keep what the engine knows of turns and the log does not say, as the engine
        does: whose first turn it is (long first trains), and with `bind_duration =
        next-turn` which open doubles the next turn is bound to, and with
        `satisfy_order = last` which double carries the double marker. `binding` in
        the seat's view depends on them."""
        rules = self.rules
        next_turn = rules.doubles_bind and rules.bind_duration is BindDuration.NEXT_TURN
        if next_turn and line.move.action == "play" and line.move.train is not None:
            index = line.move.train
            old = before.trains[index]
            now, laid = before.bind_now, before.bind_next
            if old.tiles and old.tiles[-1].is_double and index in before.open_doubles:
                now = tuple(i for i in now if i != index)
                laid = tuple(i for i in laid if i != index)
            if after.trains[index].tiles[-1].is_double:
                laid = (*laid, index)
            after.bind_now, after.bind_next = now, laid
        if rules.satisfy_order is SatisfyOrder.LAST and line.move.action == "play":
            index = line.move.train if line.move.train is not None else -1
            if after.trains[index].tiles[-1].is_double:
                after.marked_double = index
            elif index == before.marked_double:
                after.marked_double = -1  # played on: the double marker goes back
        if after.to_move == before.to_move:
            return  # the same turn goes on (a new seat to move always ends a turn)
        if next_turn:
            after.bind_now, after.bind_next = after.bind_next, ()
        if before.turn_first:
            pending = list(after.first_pending)
            pending[before.to_move] = False
            after.first_pending = tuple(pending)
        after.turn_first = after.first_pending[after.to_move]

    def round_end(self, after: State, recorded: RoundLine) -> RoundResult:
        """The round's end as the log records it, checked against what the seat saw."""
        where = self.log.round_lines.get(recorded.round, 0)
        hands = tuple(tuple(sorted(tile(a, b) for a, b in h)) for h in recorded.hands)
        seat = self.seat
        # A turn that closes the round may end with a penalty draw, which only the hands
        # shown at the end tell: they may hold more than the seat saw, never less.
        if len(hands) != self.rules.players or not set(after.hands[seat]) <= set(hands[seat]):
            shown = " ".join(_tile_text(t) for t in after.hands[seat])
            raise self.fail(where, f"round {recorded.round} hands", f"seat {seat} holds {shown}")
        counts = [len(h) for h in after.hands]
        if any(len(h) < c for h, c in zip(hands, counts, strict=True)):
            raise self.fail(where, f"round {recorded.round} hands", f"hands of {counts} tiles")
        return RoundResult(
            number=recorded.round,
            engine=after.engine,
            starter=after.starter,
            end=RoundEnd(recorded.reason),
            out=tuple(recorded.out),
            hands=hands,
            values=tuple(recorded.values),
            scores=tuple(recorded.scores),
        )


def _with(
    hands: tuple[tuple[Tile, ...], ...], seat: int, hand: tuple[Tile, ...]
) -> tuple[tuple[Tile, ...], ...]:
    return (*hands[:seat], hand, *hands[seat + 1 :])
