"""A profiler run's progress in the run box (``ui.RunStatus``): its stages are the plan's steps, weighed by the
plan's own time for each, so the time left falls steadily.

Before, ``profile_block`` reported fixed shares (building 0, warm-up up to 0.4, profiling 0.4, summing 0.85) and its
plan had no steps: a run whose profiled passes were 90 % of its time sat at "40 %" for most of its life, its time
left run down to "about 1 s" long before the end. The reports here come from a real (small) run; the clock is a
fake one on which each stage takes what the plan of a large run gives it.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from gemmlib.measure import profiler as pf  # noqa: E402
from gemmlib.measure import safety  # noqa: E402

SMALL = pf.BlockConfig.llama(hidden=64, heads=4, kv_heads=2, seq_len=16, batch=1, layers=1)
# planned, not run: 20 profiled passes of a block whose pass is long on a CPU (the profiling is most of the run)
LARGE = pf.ProfileConfig(pf.preset_config("llama-3-8b", 8, seq_len=2048, batch=1, layers=2, attention="sdpa",
                                          dtype="fp32"), "cpu", steps=20, monitor=False)


@pytest.fixture(scope="module")
def reports():
    """(fraction, text) of every progress report of a real profiler run with the page's settings but tiny sizes."""
    said: list[tuple[float, str]] = []
    pf.profile_block(SMALL, "cpu", steps=3, monitor=False, progress=lambda f, t: said.append((f, str(t))))
    return said


class Box:  # stands in for st.status
    def progress(self, frac, text=""):
        return self

    def update(self, label="", **kw):
        pass


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def _plan(cfg: pf.ProfileConfig):
    return pf.plan_profile(cfg, safety.DEFAULT_LIMITS)


def test_each_stage_reported_is_one_step_of_the_plan_in_order(reports):
    p = _plan(pf.ProfileConfig(SMALL, "cpu", steps=3, monitor=False))
    fracs = [f for f, _ in reports]
    assert fracs == sorted(fracs) and len(set(fracs)) == len(fracs) == p.steps, (fracs, p.steps)
    assert [int(f * p.steps + 1e-9) for f in fracs] == list(range(p.steps))
    texts = [t for _, t in reports]
    assert texts[0].startswith("building") and texts[-2].startswith("profiling 3 forward passes")
    assert texts[-1] == "summing the profiled ops"
    assert texts[1:-2] == [f"warming up: pass {i} of {p.steps - 3}" for i in range(1, p.steps - 2)]  # which one
    assert len(p.step_s) == p.steps and sum(p.step_s) == pytest.approx(p.seconds)


def test_the_profiled_passes_weigh_what_the_plan_gives_each_pass():
    """Each profiled pass costs the plan what a warm-up pass costs: ten more passes add ten warm-up steps to the
    profiling step and to the run, and nothing to building or warming up."""
    ten, twenty = _plan(pf.ProfileConfig(LARGE.block, "cpu", steps=10)), _plan(LARGE)
    warm = ten.step_s[1]
    assert warm > 0 and twenty.step_s[1] == pytest.approx(warm) and twenty.step_s[0] == pytest.approx(ten.step_s[0])
    profiling = len(ten.step_s) - 2
    assert twenty.step_s[profiling] - ten.step_s[profiling] == pytest.approx(10 * warm)
    more_summing = twenty.step_s[-1] - ten.step_s[-1]
    assert twenty.seconds - ten.seconds == pytest.approx(10 * warm + more_summing)
    assert max(twenty.step_weights()) == twenty.step_weights()[profiling] > 0.8


def test_a_run_at_its_plans_pace_counts_its_time_left_down_steadily(reports):
    """The run box built as ``ui.runbox.run_benchmark`` builds it from the plan; each stage takes the plan's own
    seconds for it: the time left shown each second is the plan's time still to run (the run goes at its plan's pace),
    and the share shown when the profiling starts is the plan's share of what came before, not a fixed 40 %."""
    import ui

    p = _plan(LARGE)
    fracs = [f for f, _ in reports]
    clock = Clock()
    status = ui.RunStatus(Box(), "cpu", p.steps or None, p.seconds, p.step_weights(), clock=clock)
    status.start()
    seen = []
    for i, (frac, text) in enumerate(reports):
        status.update(frac, text)
        seen.append((clock.t - 1000.0, status.left_s()))
        end = clock.t + (p.step_s[i] if i < len(p.step_s) else 0.0)
        while clock.t + 1.0 < end:
            clock.t += 1.0
            status.update(None, text)
            seen.append((clock.t - 1000.0, status.left_s()))
        clock.t = end
    bad = [(round(t, 1), round(left or 0, 1)) for t, left in seen
           if left is None or abs(left - (p.seconds - t)) > 0.05]
    assert not bad, (p.step_s, bad[:5])
    before_profiling = sum(p.step_s[:len(fracs) - 2]) / p.seconds
    assert status.steps and status._done()[0] == pytest.approx(1.0 - p.step_s[-1] / p.seconds)
    assert before_profiling < 0.2  # this run's profiled passes are most of it: not "40 % done" when they start
