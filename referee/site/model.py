"""What the site's pages are made from (`League`, a published game's `GameSummary`),
and the two things the builder and the pages share: the atomic write of a file and
the replay viewer cut into the parts the site keeps one copy of."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..league.ledger import Record
from ..league.standings import Standings
from ..logs import outputs
from ..logs.gamelog import Header

# The version of a game's published files (data, log, summary): a build remakes the
# files of a game whose summary says another, so that a site built by an older referee
# gets what this one publishes (the legal moves of each decision, the game's log).
DATA_VERSION = 2


@dataclass
class GameSummary:
    """What the bot pages need of one published game, by seat."""

    latencies: list[list[float]]  # ms, each decision the bot made itself
    rounds: list[list[int]]  # points scored in each round
    engines: list[int]
    faults: list[dict[str, Any]]  # seat, kind, detail, n (decision) or None

    def to_json(self) -> dict[str, Any]:
        return {
            "v": DATA_VERSION,
            "lat": self.latencies,
            "rounds": self.rounds,
            "eng": self.engines,
            "f": self.faults,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameSummary:
        """A summary written by a build of this version; `KeyError` for another's."""
        if data.get("v") != DATA_VERSION:
            raise KeyError("v")
        return cls(data["lat"], data["rounds"], data["eng"], data["f"])


@dataclass
class League:
    """Everything the pages are made from."""

    name: str
    title: str
    names: list[str]
    records: list[Record]
    standings: Standings
    scheduled: int | None  # None: a ledger from before it was kept
    published: set[int]  # schedule indexes of the games whose replay is public
    summaries: dict[int, GameSummary] = field(default_factory=dict)
    header: Header | None = None  # of one game: the rules and clocks
    stderr: dict[str, list[str]] = field(default_factory=dict)  # bot -> files in stderr/
    preset: str | None = None  # the rules' preset as the league file named it (None: not kept)
    built: str = ""  # when this build ran, ISO 8601 in UTC
    proof: list[str] = field(default_factory=list)  # the proof files published (docs/proof.md)
    # The commitment let the bots' files change after it ([league] allow_updates).
    updates_allowed: bool = False


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write `path` through a temporary file renamed over it: readers see all or nothing
    (`WriteError` when the disk is full, and no temporary file left)."""
    outputs.write_atomic(path, data.encode("utf-8") if isinstance(data, str) else data)


def viewer_parts() -> tuple[str, str, str]:
    """The replay viewer (`referee/assets/replay.html`) cut in three: its CSS, its body's
    markup, and its script; the site keeps one copy of each."""
    page = resources.files("referee").joinpath("assets/replay.html").read_text(encoding="utf-8")
    css = page.split("<style>", 1)[1].split("</style>", 1)[0]
    body = page.split("<body>", 1)[1].split('<script id="replay-data"', 1)[0]
    script = page.rsplit("<script>", 1)[1].rsplit("</script>", 1)[0]
    return css, body, script
