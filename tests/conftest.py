"""Fixtures for the whole suite."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# A shell starts a background job (`make test &`, a CI step run so) with SIGINT ignored,
# and an ignored signal stays ignored across fork and exec: every referee a test starts
# would then ignore the Ctrl-C that tests send it. Python's own handler is put back
# here, in the controlling process and in each worker, so that their children start
# with SIGINT as a terminal delivers it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Hypothesis's profiles, chosen by HYPOTHESIS_PROFILE (`make test` sets `ci`, `make
# check` sets `check`; a bare pytest uses `referee`). None has a wall-clock limit on an
# example (Hypothesis's default is 200 ms, and "too slow" data generation): on a loaded
# machine they fail tests whose subject is not time. `ci` draws the same examples on
# every run (a failure in CI is found again by running the suite again) and keeps no
# example database in the clone; `referee`, for a developer's own runs, draws new ones
# each time and remembers the failing ones. A test that sets its own `max_examples`
# (fitted to what its property needs) keeps it under every profile; `check` draws 20
# examples for the others, where the default is 100.
_NO_CLOCK = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("referee", **_NO_CLOCK)
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **_NO_CLOCK)
settings.register_profile("check", max_examples=20, **_NO_CLOCK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "referee"))

# `make check`, the everyday loop: the tests of the engine, protocol, statistics, the
# bots' reasoning, and the league's and arena's own logic, none of which starts a
# league, an arena, a server, a browser, a kit's toolchain or the sandbox. They are
# marked `everyday` here (a path, or a folder ending in /), and `make check` runs
# `-m everyday`; `make test` runs them with everything else.
EVERYDAY = (
    "tests/rules/",
    "tests/protocol/",
    "tests/stats/",
    "tests/botkit/test_chains.py",
    "tests/botkit/test_determinize.py",
    "tests/botkit/test_tracker.py",
    "tests/botkit/test_baseline_bots.py::test_the_plan_bot_plays_legal_moves_only",
    "tests/botkit/test_baseline_bots.py::test_the_search_budget",
    "tests/league/test_config.py",
    "tests/league/test_config_types.py",
    "tests/league/test_schedule.py",
    "tests/league/test_standings.py",
    "tests/league/test_output.py",
    "tests/league/test_stats.py",
    "tests/league/test_tally.py",
    "tests/league/test_apart.py",
    "tests/league/test_league_schema.py",
    "tests/arena/test_ledger.py",
    "tests/arena/test_matchmaking.py",
    "tests/event/test_pairing.py",
    "tests/event/test_bench_events.py",
    "tests/event/test_formats.py::test_a_bad_event_file_is_one_line_naming_the_key",
    "tests/arena/test_refit.py",
    "tests/arena/test_separation.py",
    "tests/arena/test_site_refresh.py",
    "tests/test_wire_view.py",
    "tests/test_replay.py",
    "tests/test_text.py",
    "tests/test_layout.py",
    "tests/test_same_bytes.py",
    "tests/test_spec_examples.py",
    "tests/test_lag.py",
    "tests/test_gamelog_gz.py",
    "tests/test_live_gzip.py",
)

# Started first, so that the longest tests do not end the run on one worker while the
# others idle (with `--dist worksteal` the rest is shared as workers free up).
LONGEST_FIRST = (
    "tests/test_readme.py::test_the_readmes_commands_run",
    "tests/test_kits.py::test_kit_builds",
    "tests/arena/test_final.py",
    "tests/arena/test_arena.py",
    "tests/league/test_cluster.py",
    "tests/botkit/test_baseline_bots.py",
    "tests/test_replay_html.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(EVERYDAY):
            item.add_marker(pytest.mark.everyday)

    def rank(item: pytest.Item) -> int:
        for i, prefix in enumerate(LONGEST_FIRST):
            if item.nodeid.startswith(prefix):
                return i
        return len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the rest keep pytest's order


class _ReadableTemp:
    """pytest's `tmp_path_factory`, whose folders others may read when the suite runs
    as root: a sandboxed bot then runs as an unprivileged user of its own, and many
    tests keep a bot's folder in one. (pytest's base folder above them stays closed
    to others.)"""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory

    def mktemp(self, basename: str, numbered: bool = True) -> Path:
        path = self._factory.mktemp(basename, numbered)
        if os.geteuid() == 0:
            path.chmod(0o755)
        return path

    def __getattr__(self, name: str) -> Any:
        return getattr(self._factory, name)


@pytest.fixture(scope="session")
def tmp_path_factory(tmp_path_factory: pytest.TempPathFactory) -> _ReadableTemp:
    return _ReadableTemp(tmp_path_factory)


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """pytest's own, readable by others when the suite runs as root (see _ReadableTemp)."""
    if os.geteuid() == 0:
        tmp_path.chmod(0o755)
    return tmp_path


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Name a failure the moment it is known, on the controlling process (under xdist the
    workers' reports arrive there too): a run stopped by a time limit still leaves the
    names of what had failed, where pytest alone would name them only at the end."""
    config = _CONFIG.get("config")
    if config is None or hasattr(config, "workerinput") or not report.failed:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        where = "" if report.when == "call" else f" (in its {report.when})"
        reporter.write("\n")  # the progress line (xdist writes it without ending it)
        reporter.write_line(f"FAILED {report.nodeid}{where}", red=True, bold=True)


_CONFIG: dict[str, pytest.Config] = {}


def pytest_configure(config: pytest.Config) -> None:
    _CONFIG["config"] = config
