"""The modules of `referee` and `protocol` import each other without a circle, and
each package imports only the packages the layering allows it (`ALLOWED`).

The import graph is read from the source with `ast`, not from a running
interpreter, so an import inside a function (the usual way a circle is hidden)
counts as much as one at the top of a module, and so does one under
`if TYPE_CHECKING:`: a circle of types still ties two modules' layouts together.
An edge goes to the module named, or for `from PACKAGE import name` to the
submodule `PACKAGE.name` when there is one; that importing `a.b.c` first runs
`a/__init__.py` and `a/b/__init__.py` is not an edge (every module would be in a
circle with its package), but importing a package by name is.

The layering is data: `ALLOWED` says which packages each package may import, and
`CLICK` which may import click. A module at the top of `referee` belongs to
"referee" (`text`, `consoles`, the version), or with `cli` and `__main__` to the
command line.
"""

from __future__ import annotations

import ast
import itertools
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("referee", "protocol")

Graph = dict[str, dict[str, int]]  # module -> {imported module: line of the first import}

# Package -> the packages it may import besides itself, bottom to top.
BELOW_LEAGUE = {"protocol", "rules", "referee", "bots", "game", "logs", "play", "stats", "proof"}
BELOW_LEAGUE |= {"live"}
ALLOWED: dict[str, set[str]] = {
    "protocol": set(),  # the wire contract: nothing of the referee
    "rules": set(),  # the engine: nothing of the referee
    "referee": set(),  # text, consoles, the version: what every package may use
    "stats": {"rules"},
    "botkit": {"protocol", "rules", "referee"},  # a bot's forward model: no processes, no I/O
    "bots": {"protocol", "referee"},  # nothing of games
    "game": {"protocol", "rules", "referee", "bots"},  # nothing of logs or leagues
    "logs": {"protocol", "rules", "referee", "bots", "game"},
    "play": {"protocol", "rules", "referee", "bots", "game", "logs"},
    # what proves a league (keys, commitment, results, receipts, the verifier): the logs it
    # checks, never the league, which uses it (the league's code is handed to the verifier)
    "proof": {"protocol", "referee", "bots", "game", "logs"},
    # learning environments: the engine, the wire's views and the bots' forward model
    "learn": {"protocol", "rules", "referee", "game", "botkit"},
    # a person's seat (`human`): a bot process like any other, from the wire's messages
    "human": {"protocol", "referee"},
    # the live feed: what a spectator may see of the games a league plays (the league
    # hands it its games; it reads their logs and makes the replay page's data)
    "live": {"protocol", "rules", "referee", "game", "logs"},
    "league": BELOW_LEAGUE,
    # events: stages of rounds whose tables are leagues of their own
    "event": BELOW_LEAGUE | {"league"},
    "site": BELOW_LEAGUE | {"league"},  # an event's site reads its event.json only
    "net": BELOW_LEAGUE | {"league", "site"},
    "arena": BELOW_LEAGUE | {"league", "site"},
    "commands": BELOW_LEAGUE | {"league", "site", "net", "arena", "event"},
}
# Imports the layering allows by name, and why.
EXCEPTIONS = {
    ("referee.league.run", "referee.site.live"): "type only: the live site the caller hands in",
}
CLICK = {"commands"}  # the only packages that import click


def package_of(module: str) -> str:
    """The package of the layering a module belongs to."""
    parts = module.split(".")
    if parts[0] == "protocol":
        return "protocol"
    if len(parts) == 1 or parts[1] in ("text", "consoles"):
        return "referee"
    if parts[1] in ("cli", "__main__"):
        return "commands"
    return parts[1]


def modules(root: Path, packages: tuple[str, ...]) -> dict[str, tuple[Path, bool]]:
    """Every module of `packages` under `root`: its file, and whether it is a package."""
    found: dict[str, tuple[Path, bool]] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = (path, is_package)
    return found


def _known(name: str, known: set[str]) -> str | None:
    """`name`, or the nearest package above it, among the modules of the graph."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(name: str, path: Path, is_package: bool, known: set[str]) -> dict[str, int]:
    """The modules of the graph that module `name` imports anywhere in its file."""
    package = name if is_package else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str | None] = []
        if isinstance(node, ast.Import):
            targets = [_known(alias.name, known) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                targets.append(sub if sub in known else _known(source, known))
        for target in targets:
            if target is not None and target != name:
                found.setdefault(target, node.lineno)
    return found


def import_graph(root: Path, packages: tuple[str, ...]) -> Graph:
    """Who imports whom among the modules of `packages`."""
    found = modules(root, packages)
    return {name: imports(name, path, pkg, set(found)) for name, (path, pkg) in found.items()}


def circles(graph: Graph) -> list[tuple[list[str], list[str]]]:
    """Each group of modules that import each other (Tarjan's strongly connected
    components), with one circle in it (its first module repeated at the end)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [(group, _shortest_circle(graph, group)) for group in groups]


def _shortest_circle(graph: Graph, group: list[str]) -> list[str]:
    """The shortest way from the group's first module back to itself, inside the group."""
    start, inside = group[0], set(group)
    came: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v]):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(came[path[-1]])
                return [*reversed(path), start]
            if w in inside and w not in came:
                came[w] = v
                queue.append(w)
    raise AssertionError(f"no circle through {start} in {group}")


def describe(graph: Graph, circle: list[str], root: Path) -> str:
    """A circle as `a (a.py:12) -> b (b.py:40) -> a`: where each import is."""
    steps = []
    for here, there in itertools.pairwise(circle):
        file = here.replace(".", "/")
        file += "/__init__.py" if (root / file).is_dir() else ".py"
        steps.append(f"{here} ({file}:{graph[here][there]})")
    return " -> ".join([*steps, circle[-1]])


def test_referee_and_protocol_import_without_a_circle() -> None:
    graph = import_graph(ROOT, PACKAGES)
    found = [
        f"{', '.join(group)}; for one: {describe(graph, circle, ROOT)}"
        for group, circle in circles(graph)
    ]
    assert not found, "modules that import each other:\n" + "\n".join(found)


def against_layering(root: Path, packages: tuple[str, ...]) -> list[str]:
    """Every import the layering does not allow, as `FILE line N imports M: x may not import y`."""
    found = modules(root, packages)
    known = set(found) | {"click"}
    wrong = []
    for name, (path, is_package) in sorted(found.items()):
        here = package_of(name)
        file = path.relative_to(root).as_posix()
        for target, line in sorted(imports(name, path, is_package, known).items()):
            if target == "click":
                if here in CLICK:
                    continue
                there = "click"
            else:
                there = package_of(target)
                if there == here or there in ALLOWED[here] or (name, target) in EXCEPTIONS:
                    continue
            wrong.append(f"{file} line {line} imports {target}: {here} may not import {there}")
    return wrong


def test_every_package_imports_only_what_the_layering_allows() -> None:
    assert set(ALLOWED) == {package_of(name) for name in modules(ROOT, PACKAGES)}
    wrong = against_layering(ROOT, PACKAGES)
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


def test_every_package_says_what_it_may_import() -> None:
    for package in ALLOWED.keys() - {"referee", "protocol"}:
        init = ROOT / "referee" / package / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "import" in doc.lower(), (
            f"{init.relative_to(ROOT)}: its docstring says not what it may import"
        )


def test_the_layering_names_an_import_against_it(tmp_path: Path) -> None:
    bots, game = tmp_path / "referee" / "bots", tmp_path / "referee" / "game"
    for folder in (bots, game):
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("")
    (tmp_path / "referee" / "__init__.py").write_text("")
    (game / "match.py").write_text("from ..bots import process\n")
    (bots / "process.py").write_text("import click\n\n\ndef f():\n    from ..game import match\n")
    assert against_layering(tmp_path, ("referee",)) == [
        "referee/bots/process.py line 1 imports click: bots may not import click",
        "referee/bots/process.py line 5 imports referee.game.match: bots may not import game",
    ]


def test_the_graph_holds_imports_at_any_depth() -> None:
    from referee.cli import COMMANDS

    graph = import_graph(ROOT, PACKAGES)
    assert "referee.consoles" in graph["referee.cli"]  # top of the module
    # the commands the group loads by name (referee.cli.COMMANDS), named for the graph
    assert {f"referee.commands.{w.split(':')[0]}" for w in COMMANDS.values()} <= set(
        graph["referee.cli"]
    )
    assert "referee.league.run" in graph["referee.commands.league"]  # inside the command
    assert "referee.league.cluster" in graph["referee.net.server"]  # under TYPE_CHECKING
    assert "protocol.messages" in graph["referee.league.pool"]  # from protocol import messages
    assert "referee.rules" in graph["referee.game.match"]  # a package imported by name


def test_a_circle_hidden_in_a_function_is_found_and_shown(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .b import B\n")
    (package / "a.py").write_text("import pkg.sub.b\n")
    (package / "sub" / "b.py").write_text(
        "B = 1\n\n\ndef late():\n    from ..a import x\n    from . import c\n"
    )
    (package / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\n")
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.sub.b"] == {"pkg.a": 5, "pkg.sub.c": 6}
    found = circles(graph)
    assert found == [(["pkg.a", "pkg.sub.b"], ["pkg.a", "pkg.sub.b", "pkg.a"])]
    assert describe(graph, found[0][1], tmp_path) == (
        "pkg.a (pkg/a.py:1) -> pkg.sub.b (pkg/sub/b.py:5) -> pkg.a"
    )
