"""What machine a benchmark ran on, for the figures it prints."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU model from /proc/cpuinfo, or what `platform` knows."""
    info = Path("/proc/cpuinfo")
    if info.exists():
        for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                return value.strip()
    return platform.processor() or platform.machine() or "unknown"
