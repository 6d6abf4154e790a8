"""Run a benchmark from the command line the way the server does: the same caps, the machine's FIFO
queue, a worker process with its memory and time limits, progress on stderr.

Light at import time: nothing of ``gemmlib.measure`` is loaded until a benchmark runs.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gemmlib.measure import safety
    from gemmlib.measure.spec import BenchSpec


def run_job(spec: BenchSpec, config: Any, *, quiet: bool = False, lim: safety.Limits | None = None) -> Any:
    """Run ``config`` of ``spec`` through ``gemmlib.measure.runner`` and return its result.

    ``quiet`` (``--json``): no progress lines. The caps are the server's (``safety.limits``:
    secrets files, then the environment, under the machine policy), so a command is refused
    exactly where a page is.
    """
    from gemmlib.core.files import private_dir
    from gemmlib.core.i18n import Text
    from gemmlib.measure import plan, runner, runqueue, safety

    lim = lim or safety.limits()
    private_dir()  # a cache folder open to others is the error, once, before the plan reads its measured rates
    admitted = plan.admit(spec, config, lim)  # what runner.run admits it on; its steps number the progress lines

    def on_wait(place: Any) -> None:
        sys.stderr.write(f"queued: {place.describe()}\n")

    def on_progress(frac: float | None, text: str) -> None:
        if not quiet:
            sys.stderr.write(progress_prefix(frac, admitted.steps) + f"{text}\n")

    out = runner.run(spec, config, lim, admitted=admitted, owner=Text(runqueue.CLI_OWNER, what=spec.describe(config)),
                     on_wait=on_wait, on_progress=on_progress,
                     warm=False)  # one run and the command exits: no spare behind it
    if out.stopped is not None:  # killed at its limit: the rows it finished come back, and why the rest are missing
        sys.stderr.write(f"warning: {out.stopped}\n")
    elif not quiet:
        sys.stderr.write(f"done in {out.seconds:.1f} s in a worker process (peak memory "
                         f"{out.peak_rss_bytes / 2**20:.0f} MiB)\n")
    return out.result


def progress_prefix(frac: float | None, steps: int = 0) -> str:
    """A progress line's head: ``"[step 2 of 5] "`` where the run's plan counts steps (``Plan.steps``: its
    progress is a share of its steps, not of its time, so a percentage misread it), as the pages' run box says it
    (``ui.runbox.RunStatus.label``); ``"[ 40%] "`` where it reports shares only; nothing without a share."""
    if frac is None:
        return ""
    if steps:
        return f"[step {min(steps, int(min(1.0, max(0.0, frac)) * steps + 1e-9) + 1)} of {steps}] "
    return f"[{frac:4.0%}] "
