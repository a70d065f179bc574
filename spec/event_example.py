"""The worked example of spec/EVENTS.md, taken from a real run of `referee event`.

    python spec/event_example.py           run the event and rewrite the example
    python spec/event_example.py --check   exit 1 when the document is not what the run gives

The event file shown in the document is the one run (`EVENT`): it is written into a
fresh folder that holds links to this tree's `sample_bots` and `tests/bots`, and the
referee runs with this interpreter's folder first on PATH (so `python` is the Python
the referee is installed in). Its keys are pinned and its bots deterministic, so a
rerun prints the same lines and writes the same event.json. What the document shows
of the run: the lines `referee event` prints (the folder it names made relative, the
commitment's digest, which covers the time it was made, as `sha256:<64 hex digits>`), and
the first Swiss round and the knockout's last group round as event.json holds them.

In the document a part sits between `<!-- event-example: NAME -->` and
`<!-- /event-example -->`; tests/event/test_event.py runs the event once, checks the
formats on it, and compares the document with it (`drift`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT = ROOT / "spec" / "EVENTS.md"
REFRESH = "python spec/event_example.py"
KEY = "00112233445566778899aabbccddeeff"

EVENT = f"""[event]
name = "open"
table = 3
seed = 5
out = "out"
deal_key = "{KEY * 2}"       # pinned, so that the example can be run again
bot_seed_key = "{KEY}"
reveal = "at-end"        # the keys are published once the last game is recorded

[rules]
max_pip = 6
rounds = "single"

[[bot]]
name = "g1"
command = "python sample_bots/greedy_bot.py"
[[bot]]
name = "r1"
command = "python sample_bots/random_bot.py"
[[bot]]
name = "g2"
command = "python sample_bots/greedy_bot.py"
[[bot]]
name = "crash"          # exits on its fourth turn of every game
command = "python tests/bots/crash_midgame.py"
[[bot]]
name = "r2"
command = "python sample_bots/random_bot.py"
[[bot]]
name = "g3"
command = "python sample_bots/greedy_bot.py"
[[bot]]
name = "r3"
command = "python sample_bots/random_bot.py"

[[stage]]
format = "swiss"
swiss_rounds = 2
advance = 5

[[stage]]
format = "knockout"
"""
COMMAND = "referee event event.toml --sandbox none --jobs 2"
MARK = re.compile(
    r"^<!-- event-example: (?P<name>[a-z-]+) -->\n(?P<body>.*?)^<!-- /event-example -->",
    re.M | re.S,
)


def folder_for(where: Path) -> Path:
    """`where`, made ready to run the example in: the event file and the bots' links."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "event.toml").write_text(EVENT, encoding="utf-8")
    (where / "tests").mkdir(exist_ok=True)
    for link, target in (
        (where / "sample_bots", ROOT / "sample_bots"),
        (where / "tests" / "bots", ROOT / "tests" / "bots"),
    ):
        if not link.exists():
            link.symlink_to(target, target_is_directory=True)
    return where


def run(where: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run the example's event in `where` (made by `folder_for`)."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "referee", *COMMAND.split()[1:], *extra],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def compact(value: Any) -> str:
    """JSON as event.json holds it, with each list of names or numbers on one line."""
    text = json.dumps(value, indent=1)
    return re.sub(
        r"\[\s+([^\[\]{}]*?)\s+\]",
        lambda m: "[" + ", ".join(x.strip() for x in m[1].split(",")) + "]",
        text,
    )


def parts(where: Path, printed: str) -> dict[str, str]:
    """The document's parts, from a finished run in `where` that printed `printed`."""
    event: dict[str, Any] = json.loads((where / "out" / "event.json").read_text())
    # The commitment names the time it was made, so its digest differs every run.
    shown = re.sub(r"sha256:[0-9a-f]{64}", "sha256:<64 hex digits>", printed)
    shown = shown.replace(str(where) + os.sep, "")
    swiss, knockout = event["stages"]
    groups = [r for r in knockout["rounds"] if len(r["tables"]) > 1]
    return {
        "file": f"```toml\n{EVENT}```\n",
        "output": f"```console\n$ {COMMAND}\n{shown}```\n",
        "swiss-round": f"```json\n{compact(swiss['rounds'][0])}\n```\n",
        "knockout-round": f"```json\n{compact(groups[-1])}\n```\n",
        "knockout-stage": f"```json\n{compact({k: knockout[k] for k in ('ranking', 'why')})}"
        "\n```\n",
    }


def rewrite(text: str, made: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in made:
            raise SystemExit(f"{DOCUMENT}: no example part named {name!r}")
        return f"<!-- event-example: {name} -->\n{made[name]}<!-- /event-example -->"

    return MARK.sub(one, text)


def drift(made: dict[str, str]) -> list[str]:
    """The parts of the document that differ from `made` (or are missing from it)."""
    text = DOCUMENT.read_text(encoding="utf-8")
    found = {m["name"]: m["body"] for m in MARK.finditer(text)}
    return [name for name, body in made.items() if found.get(name) != body]


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="event-example-") as tmp:
        where = folder_for(Path(tmp))
        done = run(where)
        if done.returncode != 0:
            raise SystemExit(f"the example event failed:\n{done.stderr}")
        made = parts(where, done.stdout)
    if "--check" in sys.argv[1:]:
        drifted = drift(made)
        if drifted:
            print(f"spec/EVENTS.md: not what the run gives: {', '.join(drifted)}; run {REFRESH}")
            raise SystemExit(1)
        return
    DOCUMENT.write_text(rewrite(DOCUMENT.read_text(encoding="utf-8"), made), encoding="utf-8")


if __name__ == "__main__":
    main()
