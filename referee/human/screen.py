"""What the person sees, made with rich from the wire's messages alone: the board at
each turn, and a line for each event between turns.

Every name comes from the referee's `game_start` (the other bots chose them), so it
goes through `referee.text.markup`: control characters escaped, rich markup escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from protocol.messages import (
    Drew,
    GameEnd,
    GameStart,
    Marker,
    Passed,
    Played,
    RoundEnd,
    RoundStart,
    Turn,
)

from ..text import markup
from .moves import move_text, tile_text


def who(seat: int, me: int, names: Sequence[str]) -> str:
    """A seat as markup: `you`, or its name (escaped)."""
    if seat == me:
        return "[bold]you[/]"
    return f"[cyan]{markup(names[seat])}[/]" if seat < len(names) else f"seat {seat}"


def tiles_text(tiles: Sequence[Sequence[int]]) -> str:
    return " ".join(tile_text(t) for t in tiles) or "-"


def board(turn: Turn, start: GameStart) -> RenderableType:
    """The table at a turn: the trains as they lie (owner, public marker, open double),
    every seat's tiles and score, the boneyard, the hand and the legal moves, numbered."""
    view, names, me = turn.view, start.names, turn.seat
    title = (
        f"round {view.round + 1} of {start.rounds} | engine {view.engine}-{view.engine} | "
        f"your turn ({markup(names[me])}, seat {me}) | {view.step}"
    )
    trains = Table(box=None, pad_edge=False)
    trains.add_column("#", justify="right")
    trains.add_column("whose")
    trains.add_column("tiles, from the engine")
    trains.add_column("end", justify="right")
    trains.add_column("state")
    for train in view.trains:
        state = []
        if train.public:
            state.append("[yellow]public[/]" if train.owner != -1 else "public")
        if train.open_double:
            state.append("[red]open double[/]")
        if train.train in view.binding:
            state.append("[red]binds you[/]")
        if train.parent != -1:
            whose = f"branch of {train.parent}"
        elif train.owner == -1:
            whose = "mexican"
        elif train.train == me:
            whose = "[bold]yours[/]"
        else:
            whose = markup(names[train.train]) if train.train < len(names) else "?"
        trains.add_row(
            str(train.train), whose, tiles_text(train.tiles), str(train.end), ", ".join(state)
        )
    seats = Table(box=None, pad_edge=False)
    seats.add_column("seat", justify="right")
    seats.add_column("name")
    seats.add_column("tiles", justify="right")
    seats.add_column("score", justify="right")
    for s, name in enumerate(names):
        marker = " [yellow](marker up)[/]" if s < len(view.markers) and view.markers[s] else ""
        count = view.hand_counts[s] if s < len(view.hand_counts) else "?"
        score = view.scores[s] if s < len(view.scores) else "?"
        label = f"[bold]{markup(name)} (you)[/]" if s == me else markup(name)
        seats.add_row(str(s), label + marker, str(count), str(score))
    hand = f"[bold]your hand[/]: {tiles_text(view.hand)}"
    if view.drawn is not None:
        hand += f"  (just drawn: [bold]{tile_text(view.drawn)}[/], the only tile you may play)"
    moves = Table(box=None, pad_edge=False, show_header=False)
    moves.add_column(justify="right")
    moves.add_column()
    for i, move in enumerate(turn.legal):
        moves.add_row(f"[bold]{i + 1}[/]", markup(move_text(move, turn, names)))
    doubles = ", ".join(str(t) for t in view.open_doubles) or "none"
    lines: list[RenderableType] = [
        Text.from_markup(f"[bold reverse] {title} [/]"),
        trains,
        Text.from_markup(f"open doubles: {doubles} | boneyard: {view.boneyard} tiles"),
        seats,
        Text.from_markup(hand),
        Text.from_markup("[bold]your moves[/]"),
        moves,
    ]
    return Group(*lines)


def game_line(start: GameStart) -> str:
    """The game's first line, as markup."""
    others = ", ".join(markup(n) for s, n in enumerate(start.names) if s != start.seat)
    time = start.time
    return (
        f"[bold]game {markup(start.game)}[/]: you are seat {start.seat} "
        f"({markup(start.names[start.seat])}) against {others}; {start.rounds} "
        f"round{'' if start.rounds == 1 else 's'}, "
        f"double-{start.rules.max_pip}; your clock: {time.move_ms / 1000:g} s a move, "
        f"{time.bank_ms / 1000:g} s in the bank. Ctrl-C forfeits."
    )


def round_line(message: RoundStart, start: GameStart) -> str:
    names, me = start.names, start.seat
    return (
        f"[bold]round {message.round + 1}[/]: engine {message.engine}-{message.engine}; "
        f"{who(message.starter, me, names)} {'start' if message.starter == me else 'starts'}; "
        f"your hand: {tiles_text(message.hand)}"
    )


def event_line(message: Played | Drew | Passed | Marker, start: GameStart) -> str:
    """A line for another seat's play, draw or pass, or a marker (as markup)."""
    names, me = start.names, start.seat
    seat = who(message.seat, me, names)
    if isinstance(message, Played):
        where = _train_words(message.train, start)
        line = f"{seat} played {tile_text(message.tile)} on {where}"
        if message.opens_double:
            line += " [red](a double: it must be satisfied)[/]"
        if message.announce:
            line += " and announced one tile left"
        return line
    if isinstance(message, Drew):
        what = f" {tile_text(message.tile)}" if message.tile is not None else " a tile"
        why = " (a penalty)" if message.reason == "penalty" else ""
        return f"{seat} drew{what}{why}"
    if isinstance(message, Passed):
        return f"{seat} passed"
    state = "up" if message.up else "down"
    return f"{seat}: marker {state}"


def _train_words(index: int, start: GameStart) -> str:
    if index == start.players and start.rules.mexican_train:
        return "the mexican train"
    if index == start.seat:
        return "your train"
    if index < start.players:
        return f"{markup(start.names[index])}'s train"
    return f"train {index}"


def scores_table(
    title: str, names: Sequence[str], me: int, columns: dict[str, Sequence[object]]
) -> RenderableType:
    table = Table(box=None, pad_edge=False)
    table.add_column("seat")
    for heading in columns:
        table.add_column(heading, justify="right")
    for s, name in enumerate(names):
        label = f"[bold]{markup(name)} (you)[/]" if s == me else markup(name)
        table.add_row(label, *(str(values[s]) for values in columns.values()))
    return Group(Text.from_markup(f"[bold]{title}[/]"), table)


def round_end(message: RoundEnd, start: GameStart) -> RenderableType:
    how = "a seat went out" if message.reason == "out" else "blocked"
    columns: dict[str, Sequence[object]] = {
        "hand": [tiles_text(h) for h in message.hands],
        "points": message.scores,
        "total": message.totals,
    }
    title = f"round {message.round + 1} is over ({how})"
    return scores_table(title, start.names, start.seat, columns)


def game_end(message: GameEnd, start: GameStart) -> RenderableType:
    columns: dict[str, Sequence[object]] = {"score": message.scores, "rank": message.ranks}
    verdict = "you won" if message.ranks[start.seat] == 1 else "you did not win"
    title = f"the game is over ({message.reason}): {verdict}"
    return scores_table(title, start.names, start.seat, columns)
