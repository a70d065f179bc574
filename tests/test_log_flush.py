"""A game log goes to its file by round and by time, and a crash never corrupts it.

`LogWriter` no longer flushes each line (a system call per decision): lines go
to the file at each round's end, with the first decision `FLUSH_S` after the last
flush, and when the file's buffer fills. Whenever the referee is killed, the
file then holds a prefix of the log, perhaps cut inside a line: `read_log` must
read every such prefix as an incomplete log, never refuse it and never take it
for a complete one.
"""

from __future__ import annotations

import random
from pathlib import Path

from protocol.messages import TimeControl
from referee.game.match import Decision, GameResult
from referee.logs.gamelog import FLUSH_S, LogBot, LogWriter, make_header, read_log
from referee.rules import apply, legal_moves, new_game, preset


def test_lines_reach_the_file_by_round_and_by_time_and_every_prefix_is_incomplete(
    tmp_path: Path,
) -> None:
    rules = preset("standard", players=3, max_pip=6)
    seed = 4
    header = make_header(
        game="flush",
        rules=rules,
        seed=seed,
        bots=[LogBot(seat=s, name=f"bot{s}", command="bot") for s in range(3)],
        time=TimeControl(),
        policy="forfeit",
        max_faults=3,
    )
    path = tmp_path / "flush.jsonl"
    now = 0.0
    writer = LogWriter(path, header, clock=lambda: now)
    assert read_log(path).header.seed == seed  # the header is there from the start
    rng = random.Random(seed)
    state = new_game(rules, seed)
    count = 0
    timed = 0
    while state.outcome is None:
        before = state
        move = rng.choice(legal_moves(state))
        state = apply(state, move)
        count += 1
        if count % 10 == 0:
            now += FLUSH_S  # a second passes: this decision's line goes out with it
            timed += 1
        writer.decision(
            Decision(before.to_move, count, move, 1.0, False, (), before.round_index), state
        )
        on_disk = read_log(path)
        assert not on_disk.complete
        if count % 10 == 0:
            assert len(on_disk.decisions) == count
        if state.round_index != before.round_index or state.outcome is not None:
            writer.round_end(state.results[-1])
            on_disk = read_log(path)
            assert (len(on_disk.decisions), len(on_disk.rounds)) == (count, len(state.results))
    assert timed > 5
    outcome = state.outcome
    writer.finish(
        GameResult(
            outcome=outcome,
            ranks=outcome.ranks,
            forfeited=(False,) * 3,
            faults=((),) * 3,
            decisions=count,
            results=state.results,
            final=state,
        )
    )
    whole = path.read_bytes()
    assert read_log(path).complete
    cut = tmp_path / "cut.jsonl"
    line_ends = [i for i, byte in enumerate(whole) if byte == ord("\n")]
    header_end = line_ends[0] + 1
    # Cut at, just before and just after every line's end, and at odd places between.
    cuts = {c + d for c in line_ends for d in (-1, 0, 1, 2)} | set(
        range(header_end, len(whole), 97)
    )
    for size in sorted(c for c in cuts if header_end <= c < len(whole) - 1):
        cut.write_bytes(whole[:size])
        log = read_log(cut)
        assert not log.complete, size
        assert len(log.decisions) <= count
