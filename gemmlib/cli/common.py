"""What the benchmark commands share: run a job the way the server does (the same caps, the
machine's FIFO queue, a worker process with its memory and time limits), progress on stderr."""

from __future__ import annotations

import sys
from typing import Any

from gemmlib.measure import jobs, runner, safety


def run_job(job: jobs.Job, *, quiet: bool = False, lim: safety.Limits | None = None) -> Any:
    """Run ``job`` through ``gemmlib.measure.runner`` and return its data.

    ``quiet`` (``--json``): no progress lines. The caps are the server's (``safety.limits``:
    secrets files, then the environment), so a command is refused exactly where a page is.
    """
    lim = lim or safety.limits()

    def on_wait(place: Any) -> None:
        sys.stderr.write(f"queued: {place.describe()}\n")

    def on_progress(frac: float | None, text: str) -> None:
        if not quiet:
            sys.stderr.write(("" if frac is None else f"[{frac:4.0%}] ") + f"{text}\n")

    out = runner.run(job, lim, owner=f"{job.describe()} (command line)", on_wait=on_wait, on_progress=on_progress)
    if not quiet:
        sys.stderr.write(f"done in {out.seconds:.1f} s in a worker process (peak memory "
                         f"{out.peak_rss_bytes / 2**20:.0f} MiB)\n")
    return out.data
