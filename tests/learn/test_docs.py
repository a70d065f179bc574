"""The examples of docs/learn.md run as written, so the page stays true."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "learn.md"
EXAMPLES = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.M | re.S)


def test_the_page_has_an_example_for_each_library_and_for_a_policy() -> None:
    text = "\n".join(EXAMPLES)
    for needle in (
        "mexican_train_v0.env(",
        "MexicanTrainEnv(",
        "pyspiel.load_game(",
        "def policy(",
    ):
        assert needle in text, f"no example uses {needle}"


@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_an_example_runs_and_prints(code: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__docs__"})
    assert out.getvalue().strip(), "each example prints its result"
    assert "False" not in out.getvalue()
