"""The simulated clock (bolt_pco64.bench.clock): workers, pending jobs, budgets."""

from __future__ import annotations

import pytest

from bolt_pco64.bench.clock import ClockBudget, SimulatedClock


def _fill(clock: SimulatedClock[str], queue: list[tuple[str, float, float]]) -> None:
    while queue and clock.can_start():
        clock.start(*queue.pop(0))


def test_one_worker_runs_jobs_back_to_back() -> None:
    clock: SimulatedClock[str] = SimulatedClock(1, ClockBudget(evaluations=3))
    queue = [("a", 4.0, 2.0), ("b", 1.0, 0.5), ("c", 2.0, 1.0), ("d", 1.0, 1.0)]
    seen = []
    _fill(clock, queue)
    while done := clock.advance():
        seen += [
            (c.job.item, c.job.start, c.job.end, c.consumed_gpu_hours) for c in done
        ]
        _fill(clock, queue)
    assert seen == [("a", 0.0, 4.0, 2.0), ("b", 4.0, 5.0, 2.5), ("c", 5.0, 7.0, 3.5)]
    assert clock.started == 3
    assert not clock.can_start()
    assert queue == [("d", 1.0, 1.0)]


def test_a_freed_worker_takes_the_next_job_and_the_rest_are_pending() -> None:
    clock: SimulatedClock[str] = SimulatedClock(2, ClockBudget(evaluations=4))
    queue = [("a", 3.0, 3.0), ("b", 1.0, 1.0), ("c", 1.0, 1.0), ("d", 5.0, 5.0)]
    _fill(clock, queue)
    assert [j.item for j in clock.running] == ["a", "b"]
    assert [j.worker for j in clock.running] == [0, 1]
    order = []
    while done := clock.advance():
        for c in done:
            order.append((c.job.item, c.job.worker, c.job.start, c.job.end))
            # When a job ends, the others still running are pending.
            assert c.job not in clock.running
        _fill(clock, queue)
    assert order == [
        ("b", 1, 0.0, 1.0),
        ("c", 1, 1.0, 2.0),
        ("a", 0, 0.0, 3.0),
        ("d", 1, 2.0, 7.0),
    ]


def test_jobs_ending_together_come_back_together_in_worker_order() -> None:
    clock: SimulatedClock[str] = SimulatedClock(3, ClockBudget(evaluations=5))
    _fill(clock, [("a", 2.0, 1.0), ("b", 1.0, 1.0), ("c", 2.0, 1.0)])
    assert [c.job.item for c in clock.advance()] == ["b"]
    done = clock.advance()
    assert [(c.job.item, c.job.worker) for c in done] == [("a", 0), ("c", 2)]
    assert [c.completed for c in done] == [2, 3]
    assert clock.free_workers == [0, 1, 2]
    assert clock.start("d", 1.0, 1.0).worker == 0


def test_consumed_gpu_hours_count_running_jobs_in_proportion() -> None:
    clock: SimulatedClock[str] = SimulatedClock(2, ClockBudget(gpu_hours=100.0))
    clock.start("long", 10.0, 8.0)
    clock.start("short", 2.0, 1.0)
    (done,) = clock.advance()
    assert done.job.item == "short"
    # At t = 2 the long job has run a fifth of its length.
    assert done.consumed_gpu_hours == pytest.approx(1.0 + 8.0 * 2 / 10)
    assert clock.consumed_gpu_hours(at=10.0) == pytest.approx(9.0)


def test_the_run_that_crosses_a_gpu_hour_budget_finishes() -> None:
    clock: SimulatedClock[int] = SimulatedClock(1, ClockBudget(gpu_hours=2.5))
    ends = []
    while clock.can_start():
        clock.start(clock.started, 1.0, 1.0)
        ends += [c.consumed_gpu_hours for c in clock.advance()]
    # Starts at 0, 1 and 2 GPU-hours consumed; the third crosses 2.5 and ends.
    assert ends == [1.0, 2.0, 3.0]
    assert clock.spent_fraction() == 1.0


def test_spent_fraction_of_an_evaluation_budget_counts_starts() -> None:
    clock: SimulatedClock[int] = SimulatedClock(2, ClockBudget(evaluations=4))
    assert clock.spent_fraction() == 0.0
    clock.start(0, 1.0, 1.0)
    assert clock.spent_fraction() == 0.25
    assert clock.remaining_starts() == 3


def test_shorten_ends_a_running_job_early() -> None:
    clock: SimulatedClock[str] = SimulatedClock(2, ClockBudget(evaluations=2))
    a = clock.start("a", 10.0, 10.0)
    clock.start("b", 4.0, 4.0)
    clock.advance()  # b ends at 4
    stopped = clock.shorten(a, 6.0, 6.0)
    assert (stopped.end, stopped.gpu_hours) == (6.0, 6.0)
    (done,) = clock.advance()
    assert done.job.end == 6.0
    assert done.consumed_gpu_hours == 10.0
    with pytest.raises(ValueError, match="running job"):
        clock.shorten(a, 1.0, 1.0)


def test_close_stops_new_starts() -> None:
    clock: SimulatedClock[str] = SimulatedClock(2, ClockBudget(evaluations=9))
    clock.start("a", 1.0, 1.0)
    clock.close()
    assert not clock.can_start()
    assert len(clock.advance()) == 1
    assert clock.advance() == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "exactly one"),
        ({"evaluations": 3, "gpu_hours": 1.0}, "exactly one"),
        ({"evaluations": 0}, "evaluations"),
        ({"evaluations": 2.0}, "evaluations"),
        ({"gpu_hours": 0.0}, "gpu_hours"),
        ({"gpu_hours": -1.0}, "gpu_hours"),
        ({"gpu_hours": float("inf")}, "gpu_hours"),
    ],
)
def test_bad_budgets_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ClockBudget(**kwargs)


def test_bad_workers_and_starts_are_refused() -> None:
    with pytest.raises(ValueError, match="workers"):
        SimulatedClock(0, ClockBudget(evaluations=1))
    clock: SimulatedClock[str] = SimulatedClock(1, ClockBudget(evaluations=5))
    with pytest.raises(ValueError, match="seconds"):
        clock.start("a", -1.0, 1.0)
    clock.start("a", 1.0, 1.0)
    with pytest.raises(ValueError, match="free worker"):
        clock.start("b", 1.0, 1.0)
