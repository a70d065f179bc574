"""The arena's ledger: entries and versions as the commands change them, the caps,
a game recorded once, units closing, the suspension rule and the pruning of replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.arena.ledger import ArenaError, ArenaLedger
from referee.arena.run import deal_of, fault_check, rate, unit_seed
from referee.league.records import Record

BOT = {"command": ["true"], "cwd": "/"}


def ledger(tmp_path: Path) -> ArenaLedger:
    return ArenaLedger(tmp_path / "arena.db", create=True)


def add(led: ArenaLedger, entry: str, author: str = "", **kw: object) -> str:
    v = led.add(
        entry,
        author or entry,
        BOT,
        update=bool(kw.get("update", False)),
        max_active=int(kw.get("max_active", 5)),  # type: ignore[call-overload]
        per_day=int(kw.get("per_day", 10)),  # type: ignore[call-overload]
        now=float(kw.get("now", 1000.0)),  # type: ignore[arg-type]
    )
    return v.name


def record(
    idx: int, seats: list[str], ranks: list[int], faults: list[dict[str, object]] | None = None
) -> Record:
    return Record(
        idx=idx,
        game_id=f"g{idx + 1:05d}",
        unit=0,
        deal=0,
        rotation=0,
        seed=123,
        seats=seats,
        scores=[10 * r for r in ranks],
        ranks=ranks,
        forfeited=[False] * len(seats),
        faults=list(faults or []),
        latency_mean=[None] * len(seats),
        latency_max=[None] * len(seats),
        decisions=10,
        log_path="",
        finished="2026-12-02T00:00:00+00:00",
    )


def test_versions_are_numbered_and_an_update_retires_the_old_one_once_accepted(
    tmp_path: Path,
) -> None:
    led = ledger(tmp_path)
    assert add(led, "alpha") == "alpha@1"
    led.set_status("alpha@1", "active", "ok")
    assert add(led, "alpha", update=True) == "alpha@2"
    # Until the new version passes, the old one plays on.
    assert led.version("alpha@1").status == "active"  # type: ignore[union-attr]
    led.set_status("alpha@2", "active", "ok")
    old = led.version("alpha@1")
    assert old is not None and old.status == "retired" and old.reason == "replaced by alpha@2"


def test_names_caps_and_freeze_are_refused_in_one_line(tmp_path: Path) -> None:
    led = ledger(tmp_path)
    add(led, "a", "ann")
    with pytest.raises(ArenaError, match="an entry of that name exists"):
        add(led, "a", "ann")
    with pytest.raises(ArenaError, match="no such entry"):
        add(led, "zzz", update=True)
    add(led, "b", "ann")
    with pytest.raises(ArenaError, match="max_active_per_author = 2"):
        add(led, "c", "ann", max_active=2)
    with pytest.raises(ArenaError, match="uploads_per_day = 2"):
        add(led, "a", "ann", update=True, per_day=2, now=1001.0)  # after a and b
    # A day later the uploads count again.
    assert add(led, "a", "ann", update=True, per_day=2, now=1000.0 + 86401) == "a@2"
    led.set_meta("frozen", "1")
    with pytest.raises(ArenaError, match="frozen"):
        add(led, "d", "dan")
    assert [v.name for v in led.versions()] == ["a@1", "a@2", "b@1"]


def test_a_removed_entry_stays_removed(tmp_path: Path) -> None:
    led = ledger(tmp_path)
    add(led, "a")
    led.set_status("a@1", "active")
    assert led.remove("a") == ["a@1"]
    led.set_status("a@1", "active")  # a validation that ends after the removal
    assert led.version("a@1").status == "removed"  # type: ignore[union-attr]
    with pytest.raises(ArenaError, match="removed"):
        add(led, "a", update=True)


def test_a_game_is_recorded_once_and_closes_its_unit(tmp_path: Path) -> None:
    led = ledger(tmp_path)
    for e in ("a", "b"):
        add(led, e)
        led.set_status(f"{e}@1", "active")
    unit = led.open_unit("arena", 2, ["a@1", "b@1"], 2)
    assert (unit.first, led.open_unit("arena", 2, ["a@1", "b@1"], 2).first) == (0, 2)
    first = led.record(unit, 0, record(0, ["a@1", "b@1"], [1, 2]), rate, 20)
    assert first is not None and [v.games for v in first] == [1, 1]
    assert led.record(unit, 0, record(0, ["a@1", "b@1"], [1, 2]), rate, 20) is None
    assert led.units("open")[0].id == unit.id
    led.record(unit, 1, record(1, ["b@1", "a@1"], [2, 1]), rate, 20)
    assert unit.id not in {u.id for u in led.units("open")}
    a, b = led.version("a@1"), led.version("b@1")
    assert a is not None and b is not None
    assert a.games == b.games == 2 and a.mu > b.mu
    assert led.count() == 2 and len(led.steps("a@1")) == 2
    assert led.pair_counts()[("a@1", "b@1")] == 2


def test_faults_over_the_rate_suspend_with_the_games_as_evidence(tmp_path: Path) -> None:
    led = ledger(tmp_path)
    for e in ("a", "b"):
        add(led, e)
        led.set_status(f"{e}@1", "active")
    found = None
    for k in range(6):
        unit = led.open_unit("arena", 2, ["a@1", "b@1"], 1)
        fault = [{"seat": 0, "kind": "illegal_move", "detail": f"index {k}"}] if k % 2 else []
        after = led.record(unit, 0, record(unit.first, ["a@1", "b@1"], [2, 1], fault), rate, 20)
        assert after is not None
        found = fault_check(after[0], 0.25, 20)
        assert fault_check(after[1], 0.25, 20) is None
        if k < 4:  # five games at least before a rate counts
            assert found is None
    assert found is not None
    reason, evidence = found
    assert reason.startswith("faults in 3 of its last 6 games (50%)")
    assert [e["game"] for e in json.loads(evidence)] == ["g00002", "g00004", "g00006"]
    assert json.loads(evidence)[0]["fault"] == "illegal_move: index 1"


def test_validation_and_final_games_leave_ratings_alone(tmp_path: Path) -> None:
    led = ledger(tmp_path)
    for e in ("a", "b"):
        add(led, e)
        led.set_status(f"{e}@1", "active")
    unit = led.open_unit("final", 2, ["a@1", "b@1"], 1)
    assert led.record(unit, 0, record(unit.first, ["a@1", "b@1"], [1, 2]), rate, 20) == []
    assert led.version("a@1").games == 0  # type: ignore[union-attr]
    assert led.count("final") == 1 and led.count() == 0


def test_another_arenas_terms_are_refused(tmp_path: Path) -> None:
    led = ledger(tmp_path)
    assert led.claim("terms-1", {}) is True
    assert led.claim("terms-1", {}) is False
    with pytest.raises(ArenaError, match="other rules"):
        led.claim("terms-2", {})


def test_a_folder_without_an_arena_is_named(tmp_path: Path) -> None:
    with pytest.raises(ArenaError, match="no arena here"):
        ArenaLedger(tmp_path / "arena.db")


def test_a_pinned_key_is_kept_and_another_is_refused(tmp_path: Path) -> None:
    led = ledger(tmp_path)
    made = led.secret("bot_seed_key")
    assert len(made) == 32 and led.secret("bot_seed_key") == made  # made once, kept
    pinned = bytes(range(32))
    assert led.secret("deal_key", pinned) == pinned
    assert led.secret("deal_key") == pinned  # the final reads it unpinned
    assert led.secret("deal_key", pinned) == pinned  # a resume with the same file
    with pytest.raises(ArenaError, match=r"arena\.deal_key differs from the one this arena used"):
        led.secret("deal_key", bytes(32))
    with pytest.raises(ArenaError, match="bot_seed_key differs"):
        led.secret("bot_seed_key", pinned)  # pinned after the arena made its own
    led.close()


def test_a_finals_deals_are_numbered_within_the_final(tmp_path: Path) -> None:
    # Two arenas that played different numbers of units before their finals deal the
    # finals alike: a pinned deal key then replays a final whatever came before it.
    key = bytes(range(32))
    finals = []
    for arena_units in (3, 7):
        led = ArenaLedger(tmp_path / f"{arena_units}.db", create=True)
        arena = [led.open_unit("arena", 2, ["a@1", "b@1"], 2) for _ in range(arena_units)]
        final = [led.open_unit("final", 2, ["a@1", "b@1"], 2) for _ in range(4)]
        finals.append([deal_of(led, u, key) for u in final])
        assert finals[-1] == [unit_seed(key, k, "arena/final") for k in range(4)]
        assert not {deal_of(led, u, key) for u in arena} & set(finals[-1])
        led.close()
    assert finals[0] == finals[1] and len(set(finals[0])) == 4
