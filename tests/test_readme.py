"""The README's commands run as written, in order, and its links hold.

Every ```sh block of README.md but the first (the set-up: `make demo`, `make test`
and activating the venv, which is what this suite runs in) is run with bash in a
copy of the checkout as a fresh clone has it (tracked and untracked files git does
not ignore), with the venv's `bin` first on PATH as `. .venv/bin/activate` puts
it: each block must exit 0. They cannot drift from the commands they show, and
they write only what .gitignore covers.

The README's blocks build on each other (the replay block replays the log the
`play` block wrote and the league the `league` block played; the network blocks
run `my_bot.py`, which the second block makes). They run as independent chains
(`CHAINS`), each in its own copy and in the README's order, so the suite's
workers run them side by side: every chain holds the blocks it needs before its
own, and together the chains hold every block (`test_the_chains_hold_every_block`
fails on a block the README gains until it is given a chain). The sample match
report is checked against the report the command above it printed, with the
numbers left out (`same_report`).

The relative links of README.md and docs/*.md must name files (and GitHub
anchors) that exist.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(text: str) -> list[tuple[str, str, int]]:
    """Each fenced block: its language, its text, and the offset where it ends."""
    return [(m.group(1), m.group(2), m.end()) for m in FENCE.finditer(text)]


def shell_blocks() -> list[str]:
    found = [body for lang, body, _ in blocks(README.read_text()) if lang == "sh"]
    assert found and "make demo" in found[0], "the README's first sh block is the set-up"
    return found[1:]


def fresh_copy(to: Path) -> Path:
    """The checkout as a fresh clone has it: the files git tracks or would add."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        listed = subprocess.run(
            [
                "git",
                "-C",
                str(ROOT),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            check=True,
            capture_output=True,
        ).stdout.split(b"\0")
        for name in filter(None, listed):
            source = ROOT / os.fsdecode(name)
            if source.is_file():  # a file removed but not yet committed is not there
                target = to / os.fsdecode(name)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
    else:  # a source tree without git: leave out what .gitignore names
        skip = shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis",
            "league-out", "my-league", "tcp-out", "*.jsonl*", "*.stderr", "*.token",
        )  # fmt: skip
        shutil.copytree(ROOT, to, ignore=skip, dirs_exist_ok=True)
    for folder in [to, *(p for p in to.rglob("*") if p.is_dir())]:
        folder.chmod(0o755)  # as in a clone, whatever umask the suite runs under
    return to


def numbers_out(text: str) -> list[str]:
    """Lines with every number (and sign) replaced, blank lines dropped."""
    return [re.sub(r"[-+]?\d[\d.,]*", "N", line).rstrip() for line in text.splitlines() if line]


# Each chain: the README's blocks it runs, by what they start with, in the README's
# order. A block needed by several chains (the one that makes `my_bot.py`) runs in
# each of them.
CHAINS: dict[str, tuple[str, ...]] = {
    "kit": ("cp -r kits/javascript my-bot",),
    "play-league-replay": (
        "cp sample_bots/random_bot.py my_bot.py",
        "cp examples/league.toml examples/my.toml",
        "referee replay game-7.jsonl.gz",
    ),
    "match": ('referee match "greedy=',),
    "tcp": ("cp sample_bots/random_bot.py my_bot.py", "(umask 077; referee token new mine >"),
    "internet": ("cp sample_bots/random_bot.py my_bot.py", "referee keygen organiser.key"),
    "arena": ("cp sample_bots/random_bot.py my_bot.py", "referee arena examples/arena.toml"),
}


def chain_blocks(chain: str) -> list[str]:
    """The README's blocks of `chain`, in the README's order."""
    every = shell_blocks()
    found = []
    for start in CHAINS[chain]:
        matching = [b for b in every if b.startswith(start)]
        assert len(matching) == 1, f"{chain}: {len(matching)} README blocks start with {start!r}"
        found.append(matching[0])
    order = [every.index(b) for b in found]
    assert order == sorted(order), f"{chain}: its blocks are not in the README's order"
    return found


def test_the_chains_hold_every_block() -> None:
    held = {block for chain in CHAINS for block in chain_blocks(chain)}
    missing = [b.splitlines()[0] for b in shell_blocks() if b not in held]
    assert not missing, f"README blocks no chain runs: {missing}"


@pytest.mark.parametrize("chain", list(CHAINS))
def test_the_readmes_commands_run_from_a_fresh_clone(tmp_path: Path, chain: str) -> None:
    here = fresh_copy(tmp_path / "clone")
    before = {p for p in here.rglob("*") if p.is_file()}
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(BIN.parent),
        "COLUMNS": "120",
    }
    outputs: dict[str, str] = {}
    for block in chain_blocks(chain):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=here,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert done.returncode == 0, f"README block failed:\n{block}\n{done.stdout}\n{done.stderr}"
        outputs[block] = done.stdout
    # What the commands wrote is all covered by .gitignore: a clone stays clean.
    new = sorted(
        str(p.relative_to(here)) for p in here.rglob("*") if p.is_file() and p not in before
    )
    if chain != "match":  # a match without --out keeps no file
        assert new, "the README's commands write logs, a league and pages"
    ignored = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(new) + "\n",
        capture_output=True,
        text=True,
    ).stdout.split()
    assert set(new) <= set(ignored), f".gitignore misses: {sorted(set(new) - set(ignored))}"
    # The sample match report is what the match command above it prints.
    for block, printed in outputs.items():
        if "referee match" in block:
            report = _block_after(README.read_text(), block)
            assert same_report(report, printed), printed


def same_report(sample: str, printed: str) -> bool:
    """Whether the README's sample is the report the match printed, but for its numbers:
    the first line (the test) and the last three (the result) line for line, and a line
    per unit between them. The deals are new each run, so the number of units may differ."""
    a, b = numbers_out(sample), numbers_out(printed)
    if len(a) < 5 or len(b) < 5 or a[0] != b[0] or a[-3:] != b[-3:]:
        return False
    unit = "units N games N pairs W/D/L N/N/N score N "
    return all(line.startswith(unit) for line in a[1:-3] + b[1:-3])


def _block_after(text: str, block: str) -> str:
    """The text block (```) that follows the sh block `block` in the README."""
    found = blocks(text)
    for i, (lang, body, _) in enumerate(found):
        if lang == "sh" and body == block:
            following = found[i + 1]
            assert following[0] in ("", "text"), "a match block is followed by its report"
            return following[1]
    raise AssertionError("the match block is not in the README")


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    out = set()
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
            out.add(slug)
    return out


@pytest.mark.parametrize(
    "doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_relative_links_name_files_and_headings_that_exist(doc: Path) -> None:
    text = FENCE.sub("", doc.read_text())  # links in code blocks are not links
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        name, _, anchor = target.partition("#")
        path = (doc.parent / name).resolve() if name else doc
        assert path.exists(), f"{doc.name}: {target}: no such file"
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), f"{doc.name}: {target}: no such heading"
