"""A finished game's replay data for the site: one public part and one part per seat.

The replay viewer (`referee/assets/replay.html`) takes the data `replay_html.page_data`
makes: the full view (every hand), or one seat's view, made from that seat's
redacted log (`replay_seat.redact`, the `replay FULL --seat S` path) so that it holds
nothing the seat was not shown. Shipping the full view and a view per seat would
repeat the public facts (moves, trains, markers, round ends) 1 + players times, so
the site factors them:

- the public part (`games/ID.js`) is what every seat was shown: the moves, other
  hands as counts, drawn tiles, latencies and faults left out. It is made by taking
  seat 0's view and masking what only seat 0 saw;
- seat S's part (`games/ID.sS.js`) is what its view adds to the public part: its
  hand at each deal, its drawn and penalty tiles, its latencies, referee moves,
  faults and notices.

The page's loader (`assets/game.js`) puts the public part and seat S's part back
together into seat S's view exactly (the tests compare it with `page_data` of the
redacted log), and the public part and every seat's part into the full view. A seat's
view thus loads no other seat's hand. The seed (which deals the boneyard's order
too, and is the organiser's secret) is in no part.

The public moves are small integers, one per decision (the tile, the train, the
action and the seat packed together), written in base 36 with a fixed number of
digits (`w`) one after the other, and the facts a move alone does not say are
a sparse list (each decision's number counted from the one before it, then its
facts), so a 13-round double-12 game of 4 players stays well
under 15 KB gzipped (bench/bench_site.py measures it).
"""

from __future__ import annotations

import copy
from typing import Any

from ..logs.gamelog import GameLog
from ..logs.replay_html import page_data
from ..logs.replay_seat import redact
from ..logs.replay_text import select

ACTIONS = 4  # play, draw, pass, end: `replay_html._ACTIONS`
# What a seat's view adds to a move's extras; its legal moves ("g") come apart, packed.
_PRIVATE_EXTRAS = ("p", "a", "f", "i", "z", "t", "v")


def seat_view(log: GameLog, seat: int) -> dict[str, Any]:
    """Seat `seat`'s view of a full log, as `referee replay LOG --seat S --html` has it."""
    mine = redact(log, seat)
    return page_data(mine, select(mine, seat, None, None))


def full_view(log: GameLog) -> dict[str, Any]:
    """The full view of a full log, without the seed."""
    data = page_data(log, select(log, None, None, None))
    data["seed"] = None
    return data


def mask(view: dict[str, Any], seat: int) -> dict[str, Any]:
    """`view` (seat `seat`'s) with what only that seat saw taken out: the public view."""
    out = copy.deepcopy(view)
    out["viewer"] = None
    for deal in out["R"]:
        hand = deal["hands"][seat]
        if not isinstance(hand, int):
            deal["hands"][seat] = len(hand)
    for step in out["S"]:
        if step[0] != seat:
            continue
        step[4] = -1
        if step[1] == 1:
            step[2] = -1
        if len(step) > 5:
            extra = step[5]
            for key in ("a", "f", "i", "z", "g", "t", "v"):
                extra.pop(key, None)
            if "p" in extra:
                extra["p"] = [-1] * len(extra["p"])
            if not extra:
                step.pop()
    return out


def public_part(public: dict[str, Any]) -> dict[str, Any]:
    """The public view in its compact form: moves packed as integers, extras sparse."""
    trains = 2 + max((step[3] for step in public["S"]), default=0)
    players = public["players"]
    packed: list[int] = []
    extras: list[Any] = []  # decision number (from the one before it), then its extras
    last = 0
    for g, step in enumerate(public["S"]):
        seat, action, tile, train = step[:4]
        packed.append((((tile + 1) * trains + train + 1) * ACTIONS + action) * players + seat)
        if len(step) > 5:
            extras += [g - last, step[5]]
            last = g
    width = max(1, len(_base36(max(packed, default=0))))
    out = {k: v for k, v in public.items() if k not in ("S", "viewer", "seed")}
    text = "".join(_base36(v).rjust(width, "0") for v in packed)
    out.update(tb=trains, w=width, S=text, X=extras)
    return out


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, d = divmod(n, 36)
        out = digits[d] + out
        if not n:
            return out


def seat_part(view: dict[str, Any], public: dict[str, Any], seat: int) -> dict[str, Any]:
    """What seat `seat`'s view adds to the public view."""
    hands = [deal["hands"][seat] for deal in view["R"]]
    latencies: list[int] = []
    drawn: list[int] = []
    extras: dict[str, Any] = {}
    options: list[list[list[int]]] = []
    made: list[list[Any]] = []
    mine = 0
    for step, shown in zip(view["S"], public["S"], strict=True):
        if step[0] != seat:
            continue
        latencies.append(step[4])
        if step[1] == 1:
            drawn.append(step[2])
        extra = step[5] if len(step) > 5 else {}
        known = shown[5] if len(shown) > 5 else {}
        added = {k: extra[k] for k in _PRIVATE_EXTRAS if k in extra and extra[k] != known.get(k)}
        if added:
            extras[str(mine)] = added
        options.append(extra.get("g", []))
        made.append(step)
        mine += 1
    part = {"seat": seat, "h": hands, "l": latencies, "d": drawn, "x": extras}
    return part | _pack_options(made, options)


def _option_key(option: list[int]) -> tuple[int, ...]:
    """Where a legal move stands in `legal_moves`' order: plays by train, then tile
    (announced first), then draw, pass, end."""
    act, tile, train, *announced = option
    return (0, train, tile, 0 if announced else 1) if act == 0 else (1, act)


def _pack_options(moves: list[list[Any]], options: list[list[list[int]]]) -> dict[str, Any]:
    """Each own decision's legal moves as one string, a comma between decisions: none
    when its move was the only one, else the others than the move made (which the
    public part has). A play is `(tile + 1) × gt + train + 1` and a draw, pass or end
    its action (1, 2, 3), in base 36 with `gw` digits each; a decision whose plays each
    come announced and not (`announce_one_tile`) starts with `!` and lists each once."""
    trains = max(ACTIONS, 2 + max((o[2] for row in options for o in row), default=0))
    rows: list[tuple[bool, list[int]]] = []
    for step, row in zip(moves, options, strict=True):
        paired = any(len(o) > 3 for o in row)
        act = step[1]
        made = [0, *step[2:4]] if act == 0 else [act, -1, -1]  # a draw's tile is no part
        codes = [
            (tile + 1) * trains + train + 1 if act == 0 else act
            for act, tile, train, *announced in row
            if [act, tile, train] != made and not (paired and announced)
        ]
        rows.append((paired, codes if row else []))
    width = max(1, len(_base36(max((c for _, row in rows for c in row), default=0))))
    text = ",".join(
        ("!" if paired else "") + "".join(_base36(c).rjust(width, "0") for c in row)
        for paired, row in rows
    )
    return {"g": text, "gt": trains, "gw": width}


def _unpack_options(part: dict[str, Any], moves: list[list[Any]]) -> list[list[list[int]]]:
    """`_pack_options` undone, `moves` the seat's own moves: each own decision's legal
    moves, in `legal_moves`' order (empty: the move made was the only one)."""
    trains, width = part["gt"], part["gw"]
    out: list[list[list[int]]] = []
    for entry, step in zip(part["g"].split(","), moves, strict=True):
        if not entry:
            out.append([])
            continue
        paired = entry.startswith("!")
        entry = entry.removeprefix("!")
        act, tile, train = step[1:4]
        if act != 0:
            made = [[act, -1, -1]]
        else:
            made = [[0, tile, train, 1], [0, tile, train]] if paired else [[0, tile, train]]
        row: list[list[int]] = []
        for k in range(0, len(entry), width):
            tile, train = divmod(int(entry[k : k + width], 36), trains)
            if tile == 0:
                row.append([train, -1, -1])
            else:
                row += [[0, tile - 1, train - 1, 1]] if paired else []
                row.append([0, tile - 1, train - 1])
        out.append(sorted(row + made, key=_option_key))
    return out


def assemble(
    part: dict[str, Any], seats: dict[int, dict[str, Any]], viewer: int | None
) -> dict[str, Any]:
    """The viewer's data from the public part and the parts of `seats`: what the page's
    loader does (`assets/game.js`), here for the tests and the bench."""
    players, trains = part["players"], part["tb"]
    data = {k: v for k, v in part.items() if k not in ("S", "X", "tb", "w")}
    data["seed"] = None
    data["viewer"] = viewer
    data["R"] = []
    for r, deal in enumerate(part["R"]):
        hands = [seats[s]["h"][r] if s in seats else h for s, h in enumerate(deal["hands"])]
        data["R"].append({**deal, "hands": hands})
    extras: dict[int, dict[str, Any]] = {}
    g = 0
    for k in range(0, len(part["X"]), 2):
        g += part["X"][k]
        extras[g] = part["X"][k + 1]
    counts = dict.fromkeys(seats, 0)
    draws = dict.fromkeys(seats, 0)
    options: dict[int, list[list[list[int]]]] = {}
    moves: list[list[Any]] = []
    width = part["w"]
    decoded = []
    for g in range(len(part["S"]) // width):
        value = int(part["S"][g * width : (g + 1) * width], 36)
        value, seat = divmod(value, players)
        value, action = divmod(value, ACTIONS)
        tile, train = divmod(value, trains)
        decoded.append([seat, action, tile - 1, train - 1])
    for s, part_of in seats.items():
        options[s] = _unpack_options(part_of, [d for d in decoded if d[0] == s])
    for g, (seat, action, tile, train) in enumerate(decoded):
        step: list[Any] = [seat, action, tile, train, -1]
        extra = dict(extras.get(g, {}))
        own = seats.get(seat)
        if own is not None:
            k = counts[seat]
            counts[seat] += 1
            step[4] = own["l"][k]
            if action == 1:
                step[2] = own["d"][draws[seat]]
                draws[seat] += 1
            extra.update(own["x"].get(str(k), {}))
            if options[seat][k]:
                extra["g"] = options[seat][k]
        if extra:
            step.append(extra)
        moves.append(step)
    data["S"] = moves
    return data
