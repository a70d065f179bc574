"""A logged game as one self-contained HTML page (`referee replay LOG --html OUT.html`).

The page has no engine, so the game is embedded as compact data it can step
through without one: for each round its deal (engine, hands, boneyard count,
trains) and, for each decision, the move plus whatever the move alone does not
say (markers, open doubles, the turn's step, branches opened, penalty draws,
latency, the referee's excused delay, faults, ignored stale replies, and the legal
moves where there was a choice: those of its turn request, re-derived with the
engine, since the log holds only the move made). Tiles are numbers (`hi *
(max_pip + 1) + lo`). The page rebuilds every position from that at load time,
sharing what does not change, so a 13-round game of 8 players is well under 1 MB
and steps instantly. The full view's page holds the log itself too, gzipped, for
its download link.

Made for one seat (`--seat S`), the page is rendered from that seat's own log
(`referee.logs.replay_seat`) and the data itself is redacted: no seed, other hands
are counts, their draws and penalty tiles unknown (-1), their latency, legal
moves, faults and notices left out, so the file holds nothing that seat was not
shown (and no log to download). The
seed of the full view is a string: a 128-bit number does not survive as a
JavaScript number. The page, the CSS and the script are
`referee/assets/replay.html`; nothing is fetched.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import gzip
import html
import json
import re
from importlib import resources
from typing import Any

from ..game.wire import spec_of
from ..rules import Ctx, Move, MoveKind, Rules, State, Tile, legal_moves
from .gamelog import DecisionLine, GameLog, move_of_spec
from .replay import Step, rules_of
from .replay_text import Selection, final_state, steps

TEMPLATE = "assets/replay.html"
_ACTIONS = {MoveKind.PLAY: 0, MoveKind.DRAW: 1, MoveKind.PASS: 2, MoveKind.END: 3}
_CTX = {
    Ctx.START: 0,
    Ctx.FOLLOW: 1,
    Ctx.CONTINUE: 2,
    Ctx.SWAN: 3,
    Ctx.BUILD: 4,
    Ctx.BUILD_FOLLOW: 5,
}


class _Encoder:
    """Turns engine values into the page's compact numbers, redacted for `viewer`."""

    def __init__(self, rules: Rules, viewer: int | None) -> None:
        self.rules = rules
        self.base = rules.max_pip + 1
        self.viewer = viewer

    def code(self, t: Tile) -> int:
        return t.hi * self.base + t.lo

    def sees(self, seat: int) -> bool:
        """True when the viewer may see `seat`'s hidden facts (its tiles, its clock)."""
        return self.viewer is None or self.viewer == seat

    def live_doubles(self, state: State) -> list[int]:
        full = self.rules.max_pip + 1
        return [i for i in state.open_doubles if state.table_count[state.trains[i].end] < full]

    def deal(self, state: State) -> dict[str, Any]:
        """A round's first position."""
        hands: list[Any] = []
        for s, hand in enumerate(state.hands):
            hands.append([self.code(t) for t in hand] if self.sees(s) else len(hand))
        return {
            "e": state.engine,
            "h": state.holder,
            "s": state.starter,
            "dn": len(state.engine_draws),
            "hands": hands,
            "by": len(state.boneyard),
            "t": [[t.owner, t.parent, t.end] for t in state.trains],
            "c": _CTX[state.ctx],
            "m": _bits(state.markers),
            "k": 0,
            "x": None,
        }

    def option(self, move: Move) -> list[int]:
        """A legal move: [action, tile, train], and 1 after them for an announced play."""
        tile = self.code(move.tile) if move.tile is not None else -1
        train = move.train if move.train is not None else -1
        out = [_ACTIONS[move.kind], tile, train]
        return [*out, 1] if move.announce else out

    def step(self, step: Step) -> list[Any]:
        """One decision: [seat, action, tile, train, latency in µs, extras]."""
        line, before, after = step.line, step.before, step.after
        move = move_of_spec(line.move)
        seat = line.seat
        sees = self.sees(seat)
        tile = -1
        if move.kind is MoveKind.PLAY:
            assert move.tile is not None
            tile = self.code(move.tile)
        elif move.kind is MoveKind.DRAW and sees and after.drawn is not None:
            tile = self.code(after.drawn)
        train = move.train if move.train is not None else -1
        latency = -1
        if sees and line.latency_ms is not None:
            latency = round(line.latency_ms * 1000)
        extra: dict[str, Any] = {}
        if step.result is None:
            if after.markers != before.markers:
                extra["m"] = _bits(after.markers)
            live = self.live_doubles(after)
            if live != self.live_doubles(before):
                extra["o"] = live
            if after.ctx != before.ctx:
                extra["c"] = _CTX[after.ctx]
            if len(after.trains) > len(before.trains):
                extra["b"] = [
                    [t.owner, t.parent, t.end] for t in after.trains[len(before.trains) :]
                ]
            if move.kind is not MoveKind.DRAW:
                gained = sorted(set(after.hands[seat]) - set(before.hands[seat]))
                if gained:
                    extra["p"] = [self.code(t) if sees else -1 for t in gained]
        if move.announce:
            extra["n"] = 1
        if sees and line.auto:
            extra["a"] = 1
        if sees and line.faults:
            extra["f"] = [[f.kind, f.detail] for f in line.faults]
        if sees and line.notices:
            extra["i"] = [[n.kind, n.detail] for n in line.notices]
        if sees and line.referee_late_ms:
            extra["z"] = round(line.referee_late_ms * 1000)
        if sees and line.note is not None:
            extra["t"] = line.note  # the bot's own note (escaped where shown)
        if sees and line.info:
            extra["v"] = line.info  # and its numbers
        if sees:
            # What the seat could have done (its turn request's `legal`): a choice only
            # when there were two moves or more; one legal move is the move itself.
            legal = legal_moves(before)
            if len(legal) > 1:
                extra["g"] = [self.option(m) for m in legal]
        out: list[Any] = [seat, _ACTIONS[move.kind], tile, train, latency]
        if extra:
            out.append(extra)
        return out

    def end(self, step: Step) -> dict[str, Any]:
        """A round's end: hands shown (public), values, scores."""
        result = step.result
        assert result is not None
        return {
            "r": "out" if result.end.value == "out" else "blocked",
            "out": list(result.out),
            "hands": [[self.code(t) for t in hand] for hand in result.hands],
            "v": list(result.values),
            "sc": list(result.scores),
        }


def _bits(flags: tuple[bool, ...]) -> int:
    return sum(1 << i for i, up in enumerate(flags) if up)


def _rules_text(rules: Rules) -> str:
    """The rules in a few words: the set, the table, options off their defaults."""
    parts = [f"double-{rules.max_pip}", f"{rules.players} players", f"{rules.hand} tiles each"]
    for field in dataclasses.fields(Rules):
        if field.name in ("max_pip", "players", "hand_size"):
            continue
        value = getattr(rules, field.name)
        if value != field.default:
            shown = value.value if isinstance(value, enum.Enum) else value
            parts.append(f"{field.name}={shown}")
    return " · ".join(parts)


def page_data(log: GameLog, selection: Selection) -> dict[str, Any]:
    """Everything the page shows, compact; see the module docstring."""
    assert log.header.seat == selection.seat, "replay a seat from its own log (replay_seat)"
    rules = rules_of(log)
    viewer = selection.seat
    enc = _Encoder(rules, viewer)
    names = {b.seat: b.name for b in log.header.bots}
    rounds: list[dict[str, Any]] = []
    moves: list[list[Any]] = []
    round_index = -1
    last: Step | None = None
    start = 0
    for step in steps(log):
        last = step
        if step.before.round_index != round_index:
            round_index = step.before.round_index
            if selection.round == round_index + 1 and selection.move is None:
                start = len(moves) + len(rounds)  # the deal of that round
            rounds.append(enc.deal(step.before))
        rounds[-1]["k"] += 1
        moves.append(enc.step(step))
        if selection.move == step.n:
            start = len(moves) + len(rounds) - 1  # the position after that decision
        if step.result is not None:
            rounds[-1]["x"] = enc.end(step)
    final = final_state(log, last)
    if final is not None and final.outcome is None and (last is None or last.result is not None):
        rounds.append(enc.deal(final))  # the log stops at a deal
    footer = log.footer
    seed = log.header.seed
    seats = range(rules.players)
    # Each seat's time for a move (its own under time odds), for "it took 3 ms of 1000".
    move_ms = [_move_ms(log, s) for s in seats]
    return _head(log.header.game, rules, [names.get(s, f"seat {s}") for s in seats], move_ms) | {
        "seed": str(seed) if seed is not None else None,
        "legal": 1,  # the decisions of the seats the viewer sees carry their legal moves
        "viewer": viewer,
        "complete": log.complete,
        "next": final.to_move if final is not None and final.outcome is None else None,
        "start": start,
        "R": rounds,
        "S": moves,
        "end": (
            {"scores": footer.scores, "ranks": footer.ranks, "forfeited": footer.forfeited}
            if footer is not None
            else None
        ),
    }


SPECTATOR = -1  # the viewer of a live game: it sees no seat's hidden facts
# What a spectator's step may carry beyond the move: markers, open doubles, the turn's
# step, branches, penalty draws (tiles unknown: -1), an announcement.
PUBLIC_EXTRAS = frozenset({"m", "o", "c", "b", "p", "n"})


class SpectatorData:
    """A game as a spectator may see it while it is played, built decision by decision:
    the page data of `page_data` for a viewer who sees no seat (`SPECTATOR`), with the
    same decision records as a spectator's page would hold of the finished game.

    Only public facts go in, by construction: each decision is given as the seat and the
    move (`add`), never as the referee's record of it (latency, notes, faults), and the
    encoder hides every hand, draw and penalty tile. `referee.live` checks each
    snapshot again (`public_problem`) before a byte of it is sent."""

    def __init__(
        self, game: str, rules: Rules, first: State, names: list[str], move_ms: list[int]
    ) -> None:
        self.enc = _Encoder(rules, SPECTATOR)
        self.rules = rules
        self.head = _head(game, rules, names, move_ms) | {
            "seed": None,
            "legal": 0,
            "viewer": SPECTATOR,
            "complete": False,
            "live": True,
        }
        self.rounds: list[dict[str, Any]] = [self.enc.deal(first)]
        self.moves: list[list[Any]] = []
        self.state = first

    def add(self, seat: int, move: Move, after: State) -> None:
        """The decision `seat` made (`move`), and the position after it."""
        before = self.state
        ended = after.round_index != before.round_index or after.outcome is not None
        result = after.results[-1] if ended else None
        line = DecisionLine(
            n=len(self.moves) + 1,
            round=before.round_index,
            seat=seat,
            request=0,
            move=spec_of(move),
        )
        step = Step(line, before, after, result)
        self.rounds[-1]["k"] += 1
        self.moves.append(self.enc.step(step))
        if result is not None:
            self.rounds[-1]["x"] = self.enc.end(step)
            if after.outcome is None:
                self.rounds.append(self.enc.deal(after))
        self.state = after

    def data(self) -> dict[str, Any]:
        """The page data so far (its lists are shared: encode it before the next `add`)."""
        ongoing = self.state.outcome is None
        return self.head | {
            "next": self.state.to_move if ongoing else None,
            "start": len(self.moves) + len(self.rounds),  # the latest position
            "R": self.rounds,
            "S": self.moves,
            "end": None,
        }


def public_problem(data: dict[str, Any]) -> str | None:
    """What in `data` a spectator of a game in play may not see, or None: each deal's
    hands are counts, each step's latency, drawn tile and penalty tiles unknown, and
    it carries no legal moves, notes, faults or timings. (A round's end shows its
    hands: public once the round is scored.)"""
    if data.get("viewer") != SPECTATOR or data.get("seed") is not None or data.get("legal"):
        return "not a spectator's view"
    for r, deal in enumerate(data["R"]):
        if not all(isinstance(h, int) for h in deal["hands"]):
            return f"round {r + 1}: a hand's tiles"
    for g, step in enumerate(data["S"]):
        seat, action, tile, _train, latency = step[:5]
        if latency != -1:
            return f"decision {g + 1}: seat {seat}'s time"
        if action == _ACTIONS[MoveKind.DRAW] and tile != -1:
            return f"decision {g + 1}: the tile seat {seat} drew"
        if len(step) > 5:
            extra = step[5]
            if not PUBLIC_EXTRAS.issuperset(extra):
                return f"decision {g + 1}: {sorted(set(extra) - PUBLIC_EXTRAS)} of seat {seat}"
            if any(t != -1 for t in extra.get("p", ())):
                return f"decision {g + 1}: seat {seat}'s penalty tiles"
    return None


def _head(game: str, rules: Rules, names: list[str], move_ms: list[int]) -> dict[str, Any]:
    """What the page says of the game whatever its viewer."""
    return {
        "v": 1,
        "game": game,
        "rules": _rules_text(rules),
        "players": rules.players,
        "maxPip": rules.max_pip,
        "rounds": len(rules.engines),
        "side": [rules.team_of(s) for s in range(rules.players)],
        "teams": rules.teams,
        "names": list(names),
        "moveMs": list(move_ms),
    }


def _move_ms(log: GameLog, seat: int) -> int:
    own = next((b.time for b in log.header.bots if b.seat == seat and b.time is not None), None)
    return (own or log.header.time).move_ms


def _script_json(data: dict[str, Any]) -> str:
    """JSON safe inside a <script> element: no `<`, `>` or `&` outside escapes."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def template() -> str:
    """The page around the data: HTML, CSS and script in one file."""
    return resources.files("referee").joinpath(TEMPLATE).read_text(encoding="utf-8")


def render(log: GameLog, selection: Selection, source: bytes | None = None) -> str:
    """The whole page for a verified log; `source`, the log's text, is offered for
    download from the page (the full view's page: a page made for one seat holds no log,
    and so is the same made from the full log or from the seat's own)."""
    data = page_data(log, selection)
    title = f"{log.header.game} · Mexican Train replay"
    if selection.seat is not None:
        title += f" · seat {selection.seat}"
    packed = ""
    if source is not None:
        packed = base64.b64encode(gzip.compress(source, compresslevel=9, mtime=0)).decode()
    parts = {
        "__TITLE__": html.escape(title),
        "__REPLAY_DATA__": _script_json(data),
        "__REPLAY_LOG__": packed,
    }
    # One pass: what one part holds (a name, say) is never taken for another's place.
    return re.sub("|".join(parts), lambda found: parts[found.group(0)], template())
