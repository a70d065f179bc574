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

# No wall-clock limit on any example (Hypothesis's default is 200 ms, and "too slow"
# data generation): on a loaded machine they fail tests whose subject is not time.
settings.register_profile("referee", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("referee")


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
