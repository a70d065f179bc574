"""The checks of the games' logs (`referee verify`): every game's log is there, is the
log recorded, has not been edited since it was written, names the commitment and its
seed, re-derives with the engine and ends with the result recorded; and the bots the
referee started played with the files the commitment names (each log's header says
which), unless it allows updates.
"""

from __future__ import annotations

from collections import Counter

import msgspec

from ..bots.faults import FaultKind
from ..logs.gamelog import (
    GameLog,
    LogError,
    find_log,
    line_bytes,
    log_bytes,
    parse_log,
    sha256_text,
)
from ..logs.replay import verify as replay_verify
from .folder import Folder, Game

_FAILED_START = FaultKind.STARTUP_FAILURE.value


class LogChecks(Folder):
    """The checks of the logs and of the bots' files."""

    def _log(self, g: Game) -> tuple[bytes, GameLog] | str:
        """A game's log as written (its seed and bot-seed key restored, for a site's log,
        which withholds them), or what is wrong with it."""
        path = find_log(self.folder / "logs", g.id)
        if path is None:
            return f"{g.id}: its log is missing"
        self.covered.add(path.relative_to(self.folder).as_posix())
        try:
            raw = log_bytes(path)
            log = parse_log(raw, path, allow_redacted=True)
        except LogError as exc:
            return f"{g.id}: {exc}"
        if log.header.seed is None:
            if log.header.seat is not None:
                return f"{g.id}: its log is one seat's, not the game's"
            seed = self._seed(g.deal, self._scheduled_table(g))
            if seed is None or self.bot_seed_key is None:
                return f"{g.id}: its log withholds its seed, and the keys are not revealed"
            header = msgspec.structs.replace(
                log.header, seed=seed, bot_seed_key=self.bot_seed_key.hex()
            )
            lines = raw.split(b"\n")
            first = next(k for k, line in enumerate(lines) if line.strip())
            lines[first] = line_bytes(header)
            raw = b"\n".join(lines)
            log = parse_log(raw, path)
        return raw, log

    def check_logs(self, games: list[Game]) -> None:
        first: str | None = None
        for g in games:  # every one, after a failure too: the later checks read them
            problem = self._check_log(g)
            if first is None:
                first = problem
        if first is not None:
            self.report.add("logs", first, "")
            return
        self.report.add(
            "logs",
            None,
            f"{len(games)} logs: each the one recorded, unedited, re-derived by the engine",
        )

    def _check_log(self, g: Game) -> str | None:
        got = self._log(g)
        if isinstance(got, str):
            return got
        raw, log = got
        digest = sha256_text(raw)
        if digest != g.log_sha256:
            recorded = g.log_sha256 or "none"
            return f"{g.id}: its log's digest is {digest}; the results recorded {recorded}"
        footer = log.footer
        if footer is None:
            return f"{g.id}: its log has no footer (incomplete)"
        body = raw[: _footer_start(raw)]
        if footer.sha256 != sha256_text(body):
            return (
                f"{g.id}: its log was edited after it was written: its lines differ from "
                "its footer's digest"
            )
        header = log.header
        if header.game != g.id:
            return f"{g.id}: its log is the log of {header.game}"
        if header.commitment != self.commitment.digest:
            named = header.commitment
            return f"{g.id}: its log names commitment {named}, not {self.commitment.digest}"
        seed = self._seed(g.deal, self._scheduled_table(g))
        if seed is not None and header.seed != seed:
            return f"{g.id}: its log's seed is not the one the key derives for deal {g.deal}"
        names = [b.name for b in sorted(header.bots, key=lambda b: b.seat)]
        if names != g.seats:
            return f"{g.id}: its log seats {names}; the results say {g.seats}"
        verdict = replay_verify(log)
        if verdict.divergence is not None:
            return f"{g.id}: {verdict.divergence}"
        ends: list[tuple[str, list[int] | list[bool], list[int] | list[bool]]] = [
            ("scores", footer.scores, g.scores),
            ("ranks", footer.ranks, g.ranks),
            ("forfeits", footer.forfeited, g.forfeited),
        ]
        for what, said, kept in ends:
            if said != kept:
                return f"{g.id}: its log ends with {what} {said}; the results say {kept}"
        self.logs[g.id] = log
        return None

    def check_bots(self, games: list[Game]) -> None:
        """Each game's bots played with the files the commitment names (each log's header
        says which files each process's command named when it started), unless the
        commitment allows updates: then the games played with other files are listed."""
        committed = {str(b["name"]): b.get("files") for b in self.terms.get("bots", [])}
        started = {name for name, files in committed.items() if files is not None}
        if not started:
            self.report.add(
                "bots", None, "the referee started no bot: a tcp bot's files are its own"
            )
            return
        allowed = bool(self.terms.get("allow_updates"))
        other: list[tuple[str, str, str, str | None, str | None]] = []
        seats = 0
        for g in games:
            log = self.logs.get(g.id)
            if log is None or log.footer is None:
                continue  # the logs check failed on it
            failed = {f.seat for f in log.footer.faults if f.kind == _FAILED_START}
            for bot in log.header.bots:
                want = committed.get(bot.name)
                if want is None:
                    continue  # a tcp bot
                if bot.files is None:
                    if bot.seat not in failed:  # a bot that started, in an older log
                        self.unrecorded += 1
                    continue
                seats += 1
                apart = _files_apart(want, bot.files)
                if apart is not None:
                    other.append((g.id, bot.name, *apart))
        if other and not allowed:
            game, name, word, got, want = other[0]
            played = f"played with {word} at {got}" if got else f"played without {word}"
            named = want if want else "no such file"
            more = len(other) - 1  # a bot has one seat in a game
            self.report.add(
                "bots",
                f"{game}: {name} {played}; the commitment names {named}"
                + (f" ({more} more seat{'s' * (more > 1)} played with other files)" if more else "")
                + "; the league does not allow updates ([league] allow_updates)",
                "",
            )
            return
        if other:
            first: dict[tuple[str, str], list[str]] = {}
            for game, name, word, _got, _want in other:
                first.setdefault((name, word), []).append(game)
            which = ", ".join(
                f"{name}'s {word} in {len(ids)} game{'s' if len(ids) > 1 else ''} from {ids[0]}"
                for (name, word), ids in first.items()
            )
            self.report.add(
                "bots",
                None,
                "the commitment allows updates ([league] allow_updates); played with other "
                f"files than it names: {which}",
            )
            return
        self.report.add("bots", None, f"{seats} seats played with the files the commitment names")


def _footer_start(raw: bytes) -> int:
    """Where the footer's line starts in a log's bytes (its last line)."""
    end = len(raw.rstrip(b"\n"))
    return raw.rfind(b"\n", 0, end) + 1


def _files_apart(
    want: dict[str, str], got: dict[str, str]
) -> tuple[str, str | None, str | None] | None:
    """None when a bot played with the files the commitment names (the same digests: a
    cluster worker may see them under other paths); else the first file that differs,
    with the digest it played with and the one the commitment names (None: no such
    file)."""
    if Counter(want.values()) == Counter(got.values()):
        return None
    wanted, played = set(want.values()), set(got.values())
    lost = [w for w in sorted(want) if want[w] not in played]  # named, not played
    new = [w for w in sorted(got) if got[w] not in wanted]  # played, not named
    if new:
        word = new[0]
        twin = word if word in lost else (lost[0] if lost else None)
        return word, got[word], want[twin] if twin is not None else None
    if lost:
        return lost[0], None, want[lost[0]]
    word = min(set(want) | set(got))  # the same digests, not as many times
    return word, got.get(word), want.get(word)
