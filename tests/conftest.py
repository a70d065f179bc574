"""Fixtures for the whole suite."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

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
