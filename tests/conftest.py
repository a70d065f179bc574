"""Fixtures for the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """pytest's own, readable by others when the suite runs as root: a sandboxed bot
    then runs as an unprivileged user of its own, and many tests keep a bot's folder
    here. (Its parent, pytest's base folder, stays closed to others.)"""
    if os.geteuid() == 0:
        tmp_path.chmod(0o755)
    return tmp_path
