"""The run box's time left (``ui.RunStatus.left_s``) falls steadily through a run, on a fake clock: the plan's
per-step estimates weigh the progress, the run's measured pace scales them, and it does not climb without cause."""

from __future__ import annotations

import pytest


class Box:  # stands in for st.status: records the labels it is given
    def __init__(self):
        self.labels = []

    def progress(self, frac, text=""):
        return self

    def update(self, label="", **kw):
        self.labels.append(label)


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def _run(step_s, estimate, weights, pace=1.0, jitter=()):
    """A run of ``len(step_s)`` steps taking ``step_s`` seconds each (times ``pace``, times ``jitter[i]``), its
    progress reported at each step's start as the worker does; the time left sampled each second (as the box's
    label is redrawn). Returns [(t, left)]."""
    import ui

    clock, n = Clock(), len(step_s)
    status = ui.RunStatus(Box(), "cpu", steps=n, estimate_s=estimate, weights=weights, clock=clock)
    status.start()
    seen = [(0.0, status.left_s())]
    for i, s in enumerate(step_s):
        status.update(i / n, f"step {i}")
        seen.append((clock.t - 1000.0, status.left_s()))
        s *= pace * (jitter[i] if i < len(jitter) else 1.0)
        end = clock.t + s
        while clock.t + 1.0 < end:
            clock.t += 1.0
            status.update(None, f"step {i}")  # the once-a-second redraw
            seen.append((clock.t - 1000.0, status.left_s()))
        clock.t = end
    status.update(1.0, "done")
    seen.append((clock.t - 1000.0, status.left_s()))
    return seen


def _rises(seen):
    return [(a, b) for a, b in zip(seen, seen[1:], strict=False) if b[1] > a[1] + 1e-9]


STEPS = (2.0, 4.0, 8.0, 16.0, 32.0, 64.0)  # small shapes first, then large ones: each step twice the last


def test_a_run_at_its_plans_pace_counts_down_one_second_per_second():
    """Before: the time left was "time so far / share of steps done × share to do", so a run whose later steps are
    longer said ~2 s left after its first step, then climbed step after step (up to ~60 s) as the long steps came."""
    total = sum(STEPS)
    seen = _run(STEPS, total, tuple(s / total for s in STEPS))
    assert not _rises(seen), _rises(seen)[:3]
    for t, left in seen:  # the true time left, to within a second
        assert left == pytest.approx(total - t, abs=1.0), (t, left)


def test_noise_around_the_plan_does_not_make_it_climb():
    """Steps 20 % faster or slower than planned, alternately: it falls throughout, never back up."""
    total = sum(STEPS)
    seen = _run(STEPS, total, tuple(s / total for s in STEPS), jitter=(1.2, 0.8, 1.2, 0.8, 1.2, 0.8))
    assert not _rises(seen), _rises(seen)[:3]
    assert seen[-1][1] == 0.0


def test_between_two_steps_it_never_climbs_even_with_equal_weights():
    """Without per-step estimates (equal shares), a step running long holds the time left at what the steps after
    it need instead of raising it each second (before: time so far / share done grew with every second)."""
    seen = _run(STEPS, sum(STEPS), None)
    for i in range(len(seen) - 1):
        (t0, a), (t1, b) = seen[i], seen[i + 1]
        if b > a:  # only at a step's report, when the run's measured pace says it is slower than planned
            assert t1 in {sum(STEPS[:j]) for j in range(len(STEPS) + 1)}, (t0, a, t1, b)


def test_a_run_much_slower_than_its_plan_says_so_and_ends_near_the_truth():
    """Twice as slow as planned: the time left goes up (with cause: the measured pace), and at each step reported
    once a fifth of the plan is done it is within a quarter of the truth (before, the pace of two tiny steps)."""
    total = sum(STEPS)
    seen = _run(STEPS, total, tuple(s / total for s in STEPS), pace=2.0)
    end = seen[-1][0]
    assert end == pytest.approx(2 * total)
    assert _rises(seen)  # said, not hidden
    reports = {2 * sum(STEPS[:j]) for j in range(len(STEPS)) if sum(STEPS[:j]) >= total / 5}
    checked = [(t, left) for t, left in seen if t in reports]
    assert len(checked) >= len(reports) == 2
    for t, left in checked:
        assert left == pytest.approx(end - t, rel=0.25), (t, left, end - t)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_label_says_the_time_left_with_its_unit(lang):
    import ui
    from ui.i18n import speaking

    clock, box = Clock(), Box()
    with speaking(lang):
        status = ui.RunStatus(box, "cpu", steps=4, estimate_s=40.0, weights=(0.1, 0.2, 0.3, 0.4), clock=clock)
        status.start()
        clock.t += 4.0
        status.update(0.25, "fp16")
    first, second = box.labels[-2:]
    if lang == "en":
        assert first == "Running on cpu · step 1 of 4 · about 40 s left — starting"
        assert second == "Running on cpu · step 2 of 4 · about 36 s left — fp16"
    else:
        assert "约剩 40 s" in first and "约剩 36 s" in second and "left" not in second, (first, second)
