"""A league whose referee was stalled says its clocks were barely enforced: each game's
decision time, charged to the bots and excused for the referee's own lag, is kept in
its log's footer and its ledger row, and the standings (terminal, files, site) warn
when the excused share passes `league.lag_warning`.

The lag is made on purpose: while a bot of the league is held on its turn (the gate bot
of test_run, which waits for a file), the test opens the gate and then blocks the
referee's own event loop for a second, as an overloaded machine would. The bot replies
during that second and its reply waits unread: time the bot is never charged. The
referee's clocks are the subject here, so the test does stop a clock on purpose.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
import trio
from click.testing import CliRunner
from rich.console import Console

from referee.cli import main
from referee.league.config import parse_config
from referee.league.output import print_standings
from referee.league.run import run_league
from referee.logs.gamelog import read_log
from referee.site import build_site
from tests._procs import new_token
from tests.league.test_run import (
    BOTS,
    GATE,
    PY,
    bot,
    first,
    ledger_records,
    no_process_left,
    pinned,
    write_league,
)

STALL_S = 1.0


async def test_a_league_on_a_stalled_referee_says_its_clocks_were_barely_enforced(
    tmp_path: Path,
) -> None:
    token = new_token()
    gate, marks = tmp_path / "gate", tmp_path / "blocked"
    marks.mkdir()
    bots = [
        first("first", token),
        # Without the sandbox: it waits for a file outside its folder (see gated_league).
        bot("gate", [PY, "-c", GATE, str(BOTS), str(gate), str(marks)], token, sandbox="none"),
    ]
    path = write_league(tmp_path / "league", bots, table=2, deals=1)  # two games
    config = pinned(path, tmp_path / "out")

    async def stall_once() -> None:
        while not any(marks.iterdir()):  # the gate bot is thinking on its first turn
            await trio.sleep(0.01)
        gate.touch()  # it answers within its next look at the gate...
        time.sleep(STALL_S)  # ...while the referee's loop runs nothing

    console = Console(file=io.StringIO(), width=150)
    with no_process_left(token):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stall_once)
            standings = await run_league(config, jobs=1, resume=False, console=console)
    records = ledger_records(config.out)
    assert [r.idx for r in records] == [0, 1]
    assert all(b.faults == {} for b in standings.bots)  # no bot paid for the stall
    stalled = max(records, key=lambda r: r.excused_ms)
    assert stalled.excused_ms > STALL_S * 1000 / 2
    assert all(r.charged_ms > 0 for r in records)
    # The log's footer holds what the ledger holds, the sums of its decisions' times.
    for r in records:
        log = read_log(Path(r.log_path))
        assert log.footer is not None
        assert (log.footer.charged_ms, log.footer.excused_ms) == (r.charged_ms, r.excused_ms)
        excused = sum(d.referee_late_ms for d in log.decisions)
        assert excused == pytest.approx(r.excused_ms, abs=0.01)

    # The share over the league passes the default 10%: the standings say so everywhere.
    charged = sum(r.charged_ms for r in records)
    excused = sum(r.excused_ms for r in records)
    share = excused / (charged + excused)
    assert share > 0.1 and standings.clocks.overloaded
    assert standings.clocks.share == pytest.approx(share, abs=1e-6)
    warning = (
        f"clocks barely enforced: {share:.0%} of decision time was excused for referee "
        "lag (machine overloaded)"
    )
    written = json.loads((config.out / "standings.json").read_text())
    assert written["clocks"]["overloaded"] is True
    assert written["clocks"]["excused_share"] == round(share, 4)
    md = (config.out / "standings.md").read_text()
    assert f"**C{warning[1:]}.**" in md
    shown = Console(file=io.StringIO(), width=150)
    print_standings(shown, standings, "t")  # what `referee league` prints at the end
    assert warning in shown.file.getvalue()  # type: ignore[attr-defined]
    again = CliRunner().invoke(main, ["standings", str(config.out)], env={"COLUMNS": "150"})
    assert again.exit_code == 0 and warning in again.stdout, again.output
    build_site(config.out)
    assert f"C{warning[1:]}." in (config.out / "site" / "index.html").read_text()


def test_lag_warning_is_a_share_of_the_decision_time(tmp_path: Path) -> None:
    def league(value: object) -> dict[str, object]:
        return {
            "league": {"lag_warning": value},
            "bot": [{"name": "a", "command": "prog"}, {"name": "b", "command": "prog"}],
        }

    where = tmp_path / "league.toml"
    assert parse_config(league(0.25), where, check_programs=False).lag_warning == 0.25
    default = {"bot": league(0)["bot"]}
    assert parse_config(default, where, check_programs=False).lag_warning == 0.1
    for bad in (1.5, -0.1, "10%"):
        with pytest.raises(ValueError, match=r"league\.lag_warning: "):
            parse_config(league(bad), where, check_programs=False)
