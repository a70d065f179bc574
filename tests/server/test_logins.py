"""Failed logins of `referee serve`: back-off per address, the cap a minute, the
bounded table and the organiser's summary lines, on times the test gives.
"""

from __future__ import annotations

import logging

import pytest

from referee.logins import LoginGuard

A, B = "10.0.0.1", "10.0.0.2"


def summaries(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "referee.logins"]


# ---------------------------------------------------------------- the guard alone


def fail(guard: LoginGuard, address: str, times: list[float]) -> None:
    for t in times:
        assert guard.refusal(address, t) is None, t
        guard.failed(address, t)


def test_after_five_failures_an_address_waits_1_2_4_s_and_no_more_than_60() -> None:
    guard = LoginGuard()
    fail(guard, A, [0.0] * 4)
    assert guard.refusal(A, 0.0) is None  # four: no wait yet
    fail(guard, A, [0.0])
    assert guard.refusal(A, 0.0) == f"too many failed logins from {A}; none is checked for 1 s"
    assert guard.refusal(A, 0.99) is not None
    fail(guard, A, [1.0])  # the wait is over: checked, failed again
    assert guard.refusal(A, 2.9) == f"too many failed logins from {A}; none is checked for 0.1 s"
    fail(guard, A, [3.0])
    assert guard.refusal(A, 6.9) is not None and guard.refusal(A, 7.0) is None
    t = 7.0
    for wait in (8, 16, 32, 60, 60):  # capped at 60 s
        fail(guard, A, [t])
        assert guard.refusal(A, t + wait - 0.01) is not None
        t += wait
        assert guard.refusal(A, t) is None


def test_another_address_is_not_held_up() -> None:
    guard = LoginGuard()
    fail(guard, A, [0.0] * 5)
    assert guard.refusal(A, 0.5) is not None
    assert guard.refusal(B, 0.5) is None
    assert guard.refusal("2001:db8::/64", 0.5) is None


def test_logins_refused_while_waiting_do_not_make_the_wait_longer() -> None:
    guard = LoginGuard()
    fail(guard, A, [0.0] * 5)
    for i in range(1000):
        assert guard.refusal(A, i / 1001) is not None
    assert guard.refusal(A, 1.0) is None
    assert guard.table[A].failures == 5 and guard.table[A].unchecked == 1000


def test_at_most_ten_failures_a_minute_whatever_the_back_off() -> None:
    guard = LoginGuard(threshold=1000)  # no back-off: the cap alone
    fail(guard, A, [float(t) for t in range(10)])
    assert guard.refusal(A, 10.0) == f"too many failed logins from {A}; none is checked for 50 s"
    assert guard.refusal(A, 59.9) is not None
    fail(guard, A, [60.0])  # the failure at 0 s is a minute old
    assert guard.refusal(A, 60.5) is not None and guard.refusal(A, 61.0) is None


def test_an_address_is_forgotten_ten_minutes_after_its_last_failure() -> None:
    guard = LoginGuard()
    fail(guard, A, [0.0] * 5)
    guard.flush(599.0)
    assert A in guard.table
    guard.flush(600.0)
    assert A not in guard.table
    fail(guard, A, [600.0] * 4)  # counted afresh
    assert guard.refusal(A, 600.0) is None


def test_the_table_is_bounded_and_drops_the_oldest_failure_first() -> None:
    guard = LoginGuard(size=3)
    for i in range(10):
        fail(guard, f"10.1.0.{i}", [float(i)])
    assert list(guard.table) == ["10.1.0.7", "10.1.0.8", "10.1.0.9"]
    assert guard.evicted == 7
    fail(guard, "10.1.0.7", [10.0])  # failed again: now the newest
    fail(guard, "10.1.0.10", [11.0])
    assert list(guard.table) == ["10.1.0.9", "10.1.0.7", "10.1.0.10"]
    # Connections without a login go first: they cannot push out who failed logins.
    for i in range(100):
        guard.refused(f"10.2.0.{i}", f"10.2.0.{i}:1", "no login within 5000 ms", 12.0, login=False)
    assert list(guard.table)[1:] == ["10.1.0.7", "10.1.0.10"]
    assert len(guard.table) == 3


def test_one_line_for_the_first_refusal_then_one_summary_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="referee.logins")
    guard = LoginGuard()
    for i in range(8):
        guard.failed(A, float(i))
        guard.refused(A, f"{A}:{1000 + i}", "wrong token for 'c'", i + 2.0, login=True)
    guard.refusal(A, 9.5)  # refused unchecked
    guard.refused(A, f"{A}:2000", "no login within 5000 ms", 20.0, login=False)
    guard.refused(B, f"{B}:3000", "unknown name 'x'", 20.0, login=True)
    guard.flush(61.0)
    assert summaries(caplog) == [
        f"login from {A}:1000 refused: wrong token for 'c'",
        f"login from {B}:3000 refused: unknown name 'x'",
    ]
    guard.flush(62.0)  # a minute after A's first line
    guard.refused(A, f"{A}:2001", "wrong token for 'c'", 70.0, login=True)
    guard.flush(121.0)
    guard.flush(122.0)
    assert summaries(caplog)[2:] == [
        f"7 failed logins from {A} in the last 60 s, and 1 more refused unchecked (too many "
        "failures), and 1 connection refused without a good login line",
        f"1 failed login from {A} in the last 60 s",
    ]
    guard.refused(A, f"{A}:2002", "wrong token for 'c'", 130.0, login=True)
    guard.flush(131.0, final=True)  # the server stops: what is left, at once
    assert summaries(caplog)[4:] == [f"1 failed login from {A} in the last 9 s"]
