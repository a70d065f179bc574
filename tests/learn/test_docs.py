"""The examples of docs/learn.md, and of the README's "Train a bot", run as written,
so the pages stay true."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "learn.md"
PYTHON = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
EXAMPLES = PYTHON.findall(DOC.read_text(encoding="utf-8"))
_readme = (ROOT / "README.md").read_text(encoding="utf-8")
_train = _readme[_readme.index("## Train a bot") :]
README_EXAMPLES = PYTHON.findall(_train[: _train.index("\n## ", 3)])


def test_the_readme_has_an_example_for_each_library() -> None:
    text = "\n".join(README_EXAMPLES)
    for needle in ("mexican_train_v0.env(", "MexicanTrainEnv(", "pyspiel.load_game("):
        assert needle in text, f"the README's Train a bot has no example using {needle}"


def test_the_page_has_an_example_for_each_library_and_for_a_policy() -> None:
    text = "\n".join(EXAMPLES)
    for needle in (
        "mexican_train_v0.env(",
        "MexicanTrainEnv(",
        "pyspiel.load_game(",
        "def policy(",
    ):
        assert needle in text, f"no example uses {needle}"


@pytest.mark.parametrize(
    "code",
    EXAMPLES + README_EXAMPLES,
    ids=[f"example{i}" for i in range(len(EXAMPLES))]
    + [f"readme{i}" for i in range(len(README_EXAMPLES))],
)
def test_an_example_runs_and_prints(code: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__docs__"})
    assert out.getvalue().strip(), "each example prints its result"
    assert "False" not in out.getvalue()
