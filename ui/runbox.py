"""Live benchmarks on a page: the server's caps, the run box, the kept and shared results.

Every benchmark runs through ``run_benchmark``: a worker process of its own, the machine's FIFO
queue, a Stop button, and the run cancelled when its session ends (``gemmlib.measure.runner``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import streamlit as st

from gemmlib.core import results as results_store
from gemmlib.core.errors import InputError
from gemmlib.core.files import ServerSetupError
from gemmlib.core.i18n import N_, Msg, Text
from gemmlib.core.results import BenchResult
from gemmlib.measure import runner, runqueue, safety
from gemmlib.measure.plan import Plan
from gemmlib.measure.spec import BenchSpec

from .i18n import _, ngettext, tr
from .text import log, md, strip_paths


def bench_limits() -> safety.Limits:
    """The server's caps for live benchmarks: ``safety.limits`` (the one reader of the caps, the
    CLI's too) on the secrets files Streamlit is configured with, then the environment.

    A broken secrets file or a malformed value is an error on the page and in the server log,
    and the benchmarks fall back to the small classroom caps until it is fixed — never silently
    to no caps at all.
    """
    try:
        files = st.config.get_option("secrets.files")
    except Exception:  # noqa: BLE001 - an old Streamlit without the option
        files = None
    try:
        return safety.limits(files=files)
    except InputError as e:
        eid = uuid.uuid4().hex[:8]
        log.log(logging.ERROR, "error id %s: benchmark caps could not be read: %s", eid, e)
        why = (_("see error id {eid} in the server log").format(eid=eid) if isinstance(e, ServerSetupError)
               else md(strip_paths(tr(e))))  # the policy file's path and mode are the administrator's
        st.error(_("**The server's benchmark caps could not be read**: {why}. The small classroom caps apply "
                   "until the server's secrets file or GEMM_* settings are fixed (details in the server log).")
                 .format(why=why))
        return safety.CLASSROOM_LIMITS


CAP_PARTS = {  # the caps a page can name in its caption (``caps_caption``), N_-marked, filled from ``Limits``
    "dims": N_("dimensions ≤ {dim:,}"),
    "dims_bm": N_("dimensions ≤ {dim:,} (B·M included)"),
    "operands": N_("operands ≤ {gib:.3g} GiB"),
    "memory": N_("memory ≤ {gib:.3g} GiB"),
    "buffers": N_("{size} of buffers"),
    "ranks": N_("{ranks} ranks"),
    "time": N_("{seconds:g} s per run"),
}


def caps_caption(lim: safety.Limits, parts: tuple[str, ...] = ("dims", "time"), after: str = "") -> str:
    """The server's caps as a page's caption, in the reader's language: "Caps here: dimensions ≤
    4,096, 60 s per run — **classroom mode**." ``parts`` name the caps shown (keys of
    :data:`CAP_PARTS`); ``after``, a sentence already translated, follows it."""
    from gemmlib.core import format as fmt

    values = {"dim": lim.max_dim, "gib": lim.max_bytes / 1024**3, "size": fmt.nbytes(lim.max_bytes),
              "ranks": lim.max_ranks, "seconds": lim.time_limit_s}
    shown = _(", ").join(_(CAP_PARTS[p]).format(**values) for p in parts)
    text = _("Caps here: {caps}").format(caps=shown) + (_(" — **classroom mode**") if lim.classroom else "")
    text += _(".")
    # two sentences one after the other: a space in English, none after a Chinese full stop
    return _("{sentence} {next_sentence}").format(sentence=text, next_sentence=after) if after else text


@st.cache_resource(show_spinner=False)
def cuda_available() -> tuple[bool, str]:
    """(True, "") with a CUDA device, else (False, why); asked once per server, without importing torch
    (``gemmlib.core.machine.gpu_presence``: the torch build, then the driver's GPUs)."""
    from gemmlib.core.machine import gpu_presence

    n, why = gpu_presence()
    return n > 0, why


@st.cache_resource(show_spinner=False)
def gpu_count() -> int:
    """CUDA GPUs this server sees (0 without CUDA); asked once per server, without importing torch."""
    from gemmlib.core.machine import gpu_presence

    return gpu_presence()[0]


class RunStatus:
    """What a benchmark run shows while it runs: the label of its status box says the step it is on,
    how many there are and the time left, so it reads the same folded or open; a progress bar
    inside repeats it.

    The time left falls steadily: before the first step it is the run's estimate (its spec's ``Plan``,
    ``gemmlib.measure.plan``); at each step reported, the plan's seconds still to do (``weights``: each step's
    share of the plan, ``Plan.step_weights``, so a run of small shapes then large ones is not "half done" at half
    its steps), scaled by how fast this run has gone against its plan so far (its measured rate, weighed with the
    plan while little is done); between steps it counts down, never below what the steps after this one need.
    It goes up only when the run is clearly slower than shown (by more than 10 % and 3 s: ``RISE_SHARE``,
    ``RISE_S``), never from one step's noise. ``clock``: seconds (``time.monotonic``; a test's fake clock)."""

    RISE_SHARE, RISE_S = 1.1, 3.0  # a new time left above the one shown by more than this: shown, else the lower

    def __init__(self, box: Any, device: str, steps: int | None = None, estimate_s: float | None = None,
                 weights: tuple[float, ...] | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        from gemmlib.core import format as fmt

        self._fmt, self.box, self.device, self.clock = fmt, box, device, clock
        self.steps, self.estimate_s = steps, estimate_s
        self.weights = tuple(weights) if weights and steps and len(weights) == steps else (
            (1.0 / steps,) * steps if steps else ())
        self.bar = box.progress(0.0, text=_("queued"))
        self.frac, self.t0 = 0.0, None
        self._at: float | None = None  # when a step was last reported
        self._after, self._step_s = estimate_s, 0.0

    def start(self) -> None:
        self.t0 = self.clock()
        self.update(0.0, _("starting"))

    def _done(self) -> tuple[float, float]:
        """(the plan's share done, the share of the step now running) at the progress ``frac``."""
        if not self.weights:
            return self.frac, 1.0 - self.frac
        i = min(len(self.weights), int(self.frac * len(self.weights) + 1e-9))
        return sum(self.weights[:i]), (self.weights[i] if i < len(self.weights) else 0.0)

    def _replan(self) -> None:
        """At a step reported: the seconds the steps after this one need, and this one's, at the run's pace; not
        above the time left shown just before unless clearly so (``RISE_SHARE``, ``RISE_S``)."""
        now = self.clock()
        shown = self.left_s() if self._at is not None else None  # the time left shown until now
        self._at = now
        if self.t0 is None:
            return
        elapsed = now - self.t0
        done, step = self._done()
        if self.estimate_s:
            prior = max(1.0, 0.1 * self.estimate_s)  # the plan's own pace counts as this many seconds of run
            pace = (elapsed + prior) / (done * self.estimate_s + prior)
            after, this = pace * self.estimate_s * max(0.0, 1.0 - done - step), pace * self.estimate_s * step
        elif self.frac > 0.02:  # no plan: the run's own pace over its progress
            after, this = 0.0, elapsed / self.frac * (1 - self.frac)
        else:
            after, this = None, 0.0
        if after is not None and shown is not None and shown < after + this <= shown * self.RISE_SHARE + self.RISE_S:
            scale = shown / (after + this)  # not up for a step's noise: it goes on falling from where it was
            after, this = after * scale, this * scale
        self._after, self._step_s = after, this

    def left_s(self) -> float | None:
        """Seconds the run has left (None: not known yet): never more a second later while the same step runs."""
        if self.t0 is None:
            return self.estimate_s
        if self._after is None:
            return None
        return self._after + max(0.0, self._step_s - (self.clock() - (self._at or self.t0)))

    def label(self, text: str = "") -> str:
        f = self._fmt
        parts = [_("Running on {device}").format(device=self.device)]
        if self.steps:
            parts.append(_("step {n} of {total}").format(n=min(self.steps, int(self.frac * self.steps + 1e-9) + 1),
                                                         total=self.steps))
        else:
            parts.append(f.percent(self.frac, 0))
        left = self.left_s()
        if left is not None:
            parts.append(_("about {time} left").format(time=f.duration(max(1.0, round(left)))))
        return " · ".join(parts) + (f" — {text}" if text else "")

    def update(self, frac: float | None, text: str | Msg) -> None:
        text = tr(text) if isinstance(text, Msg) else text  # a gemmlib step's message, in the reader's language
        if frac is not None:
            new = min(1.0, max(0.0, frac))
            if new != self.frac or self._at is None:  # a step reached (the same step said again counts down on)
                self.frac = new
                self._replan()
        self.box.update(label=self.label(text), expanded=True)  # keeps the Stop button in view
        self.bar.progress(self.frac, text=text)


RATE_SOURCES = {"measured here": N_("measured here"), "probed here": N_("this machine's speed probed just now"),
                "measured ceilings": N_("measured ceilings"), "datasheet": N_("datasheet"),
                "recent runs": N_("scaled by how long recent runs took")}  # gemmlib.measure.plan.SOURCES, as shown


def plan_for(spec: BenchSpec, config: Any, lim: safety.Limits) -> Plan | None:
    """The run's plan for the estimate line beside its button, or None when the server's caps refuse it
    (the button then says why, as the run itself would)."""
    from gemmlib.measure import plan

    try:
        return plan.planned(spec, config, lim)  # the estimate the caps and the worker check too
    except InputError:
        return None


def _plan_or_refusal(spec: BenchSpec, config: Any, lim: safety.Limits) -> tuple[Plan | None, InputError | None]:
    """The run's plan (``plan_for``), or why the caps refuse to plan it (a size above the caps: the run would say
    the same on a press); a server set up wrongly is left to the run itself."""
    from gemmlib.measure import plan

    try:
        return plan.planned(spec, config, lim), None
    except ServerSetupError:
        return None, None
    except InputError as e:
        return None, e


def _probing(spec: BenchSpec, config: Any, est: Plan) -> tuple[str, ...]:
    """``plan.will_probe``: the formats the worker times before the run, where the estimate shown did not use its
    probe; empty where that cannot be told (a server set up wrongly, anything unexpected: the run itself says why)."""
    from gemmlib.measure import plan

    try:
        return plan.will_probe(spec, config, est)
    except Exception:  # noqa: BLE001 - a caption's note, never a page's error
        return ()


def refused_by_caps(est: Plan, config: Any, lim: safety.Limits) -> InputError | None:
    """Why the server's caps would refuse this run (``plan.check_caps`` on its plan ``est``, the one the estimate
    beside the button shows: time, bytes, a CPU GEMM's size, as the run itself checks them), or None. A server set up
    wrongly, or anything unexpected, is left to the run itself."""
    from gemmlib.measure import plan

    try:
        plan.check_caps(est, config, lim)
    except ServerSetupError:
        return None
    except InputError as e:
        return e
    except Exception:  # noqa: BLE001 - said by the run itself, with an error id
        return None
    return None


def run_estimate(est: Plan, device: str | None = None, probing: tuple[str, ...] = (),
                 limit_s: float | None = None) -> None:
    """The time a run will take, beside its button (its spec's ``Plan``: the one time model the
    server's caps refuse a run on too); with the run's ``device``, also what comes before it: its worker's
    start (a warm spare's hand-over, or a fresh worker's start-up, as the last one here took) and the runs
    queued and running on this machine now, by their own estimates. ``probing``: the formats the worker will time
    on this machine before the run and plan it again on (``plan.will_probe``): the caption says the estimate may
    change then, and that the run is refused at ``limit_s`` on the new one (it said "about 92 s" from the
    datasheet, and a press was refused at "about 500 s" from the probe, unexplained)."""
    from gemmlib.core import format as fmt

    sources = _(", ").join(_(RATE_SOURCES.get(s, s)) for s in est.sources)
    steps = est.count
    if sources:
        text = ngettext("This run: about {time} for {steps} step (rates: {sources}). The server caps one run at its "
                        "time limit.", "This run: about {time} for {steps} steps (rates: {sources}). The server caps "
                        "one run at its time limit.", steps)
    else:  # a multi-rank run or a calibration: timed by its own model, no rates to name (it said "rates: —")
        text = ngettext("This run: about {time} for {steps} step. The server caps one run at its time limit.",
                        "This run: about {time} for {steps} steps. The server caps one run at its time limit.", steps)
    text = text.format(time=fmt.duration(max(1.0, round(est.seconds))), steps=steps, sources=sources)
    if probing and limit_s is not None:
        text += " " + _("These rates are not yet this machine's own: just before the run, its worker times this "
                        "machine's speed in {formats} (a few seconds) and plans the same run again on it — if at "
                        "that speed it would pass the limit of {limit:g} s, it is refused then, before anything "
                        "runs.").format(formats=_(", ").join(probing), limit=limit_s)
    st.caption(text)
    if device is None:
        return
    start, warm = runner.start_estimate(device)
    try:
        load = runqueue.default_queue().load()
    except (InputError, OSError):  # a queue folder that cannot be read: the run itself says why
        load = runqueue.Load(0, 0.0, 0)
    total = fmt.duration(max(1.0, round(start + load.seconds + est.seconds)))  # "about 7 s", as the run's (not 7.03 s)
    worker = (_("{start} to hand it to the warm worker").format(start=fmt.duration(start)) if warm else
              _("{start} to start its worker").format(start=fmt.duration(start)))
    if load.runs:
        queue = ngettext("{wait} for the {n} run queued or running before it", "{wait} for the {n} runs queued or "
                         "running before it", load.runs).format(wait=fmt.duration(load.seconds), n=load.runs)
        if load.unknown:
            queue += " " + _("({n} without an estimate, counted as nothing)").format(n=load.unknown)
        st.caption(_("In all about **{total}** from a press now: {worker}, {queue}, then the run.").format(
            total=total, worker=worker, queue=queue))
    else:
        st.caption(_("In all about **{total}** from a press now: {worker}, then the run (nothing is queued).").format(
            total=total, worker=worker))


def noise_note(results: list) -> None:
    """Say so when timings spread too much (p80 / p20 above ``core.results.NOISE_RATIO``)."""
    from gemmlib.core import format as fmt
    from gemmlib.core.results import NOISE_RATIO, noisy, spread_ratio

    bad = noisy(results)
    if bad:
        worst = max(bad, key=lambda r: spread_ratio(r) or 0.0)
        st.warning(ngettext("{n} of {total} rows is noisy (p80 / p20 above {limit}×; the worst, {name}, {ratio}): "
                            "the machine was busy, rerun.",
                            "{n} of {total} rows are noisy (p80 / p20 above {limit}×; the worst, {name}, {ratio}): "
                            "the machine was busy, rerun.", len(bad)).format(n=len(bad), total=len(results), limit=f"{NOISE_RATIO:g}",
                                                        name=worst.name, ratio=fmt.ratio(spread_ratio(worst))))


# ----------------------------------------------------------------------------- benchmarks
_SID = "_bench_session"
_RUNNING = "_bench_running"  # what this session's run is running, until it ends (stopped_notice)


def _session_tag() -> str:
    if _SID not in st.session_state:
        st.session_state[_SID] = uuid.uuid4().hex[:6]
    return st.session_state[_SID]


def _session_gone() -> Callable[[], str | None]:
    """A check that says (after a second's grace for a reconnect) when this browser session has
    closed: Streamlit's runtime no longer lists it as active. Without a runtime (AppTest) it never fires."""
    try:
        from streamlit import runtime
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        rt = runtime.get_instance() if runtime.exists() else None
        sid = ctx.session_id if ctx is not None else None
    except Exception:  # noqa: BLE001
        rt, sid = None, None
    since: list[float | None] = [None]

    def gone() -> str | None:
        if rt is None or sid is None:
            return None
        if rt.is_active_session(sid):
            since[0] = None
            return None
        since[0] = since[0] or time.monotonic()
        return N_("the visitor's session ended") if time.monotonic() - since[0] > 1.0 else None

    return gone


def _browser_token() -> str | None:
    """The token of this browser's XSRF cookie (Tornado's ``_xsrf``, which Streamlit names
    ``_streamlit_xsrf``): the same in every tab of one browser, so a visitor's tabs are one session
    for the queue. Version 2 cookies hold it masked ("2|mask|masked|time"): unmasked here."""
    try:
        raw = st.context.cookies.get("_streamlit_xsrf")
    except Exception:  # noqa: BLE001 - no context (AppTest), an old Streamlit
        return None
    if not raw or not isinstance(raw, str):
        return None
    parts = raw.split("|")
    if len(parts) == 4 and parts[0] == "2":
        try:
            mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
        except ValueError:
            return None
        return bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked)).hex() if mask else None
    return raw[:200]


def visitor() -> runqueue.Visitor:
    """Who is asking, for the queue's per-visitor limits: this browser (its XSRF cookie, shared by
    its tabs; else this session) and its address (``st.context.ip_address``; None for a local one)."""
    try:
        address = st.context.ip_address
    except Exception:  # noqa: BLE001
        address = None
    return runqueue.Visitor.of(_browser_token() or f"session {_session_tag()}", address or None)


def queue_timeout_s(lim: safety.Limits) -> float:
    """How long a visitor waits in the queue before being told to try again."""
    return max(120.0, 4 * lim.time_limit_s)


def run_benchmark(spec: BenchSpec, config: Any, lim: safety.Limits, done: Callable[[Any], str] | None = None,
                  estimate: Plan | None = None) -> Any:
    """Run ``config`` of ``spec`` in a worker process (``gemmlib.measure.runner``), with a status box
    (``RunStatus``: the step of the total and the time left; ``estimate``, the plan the page showed
    beside its button, before the first step), the place in the machine's queue and a Stop button;
    return its result (of the spec's result type).

    The run is killed when its visitor presses Stop (or changes a setting, which reruns the page),
    when the session closes, or at the server's time limit. An InputError (refused by the caps,
    stopped, timed out in the queue) marks the box and propagates to the page's ``ui.guard``.
    """
    tag = _session_tag()
    what = spec.describe(config)
    owner = Text(runqueue.SESSION_OWNER, what=what, tag=tag)  # its template and values in the queue's files
    gone = _session_gone()
    with st.status(_("Waiting for the benchmark runner…"), expanded=True) as status:
        shown = RunStatus(status, config.device, (estimate.steps or None) if estimate is not None else None,
                          estimate.seconds if estimate is not None else None,
                          estimate.step_weights() if estimate is not None else None)
        st.button(_("⏹ Stop this run"), key=f"_bench_stop_{uuid.uuid4().hex[:6]}",
                  on_click=lambda: st.session_state.__setitem__("_bench_stopped", what),
                  help=_("stops the run at once; changing any setting on this page stops it too"))
        state = {"text": "", "shown": 0.0, "running": False}

        def show() -> None:
            now = time.monotonic()
            if state["running"] and now - state["shown"] >= 1.0:  # the time left, once a second
                state["shown"] = now
                shown.update(None, state["text"])

        def on_wait(place: runqueue.Place) -> None:
            who = _(" Running now: {what}.").format(what=md(tr(place.running))) \
                if place.running else ""
            status.update(label=_("Queued: you are number {n} in line.{who} Your run starts when the runs before "
                                  "it finish.").format(n=place.position, who=who), expanded=True)

        def on_progress(frac: float | None, text: str | Msg) -> None:
            if not state["running"]:
                state["running"] = True
                shown.start()
            state["text"] = md(tr(text))  # a step's message (a Msg or Text from the worker, or a constant), translated
            state["shown"] = time.monotonic()
            shown.update(frac, state["text"])

        def tick() -> None:
            st.session_state[_SID]  # noqa: B018 - a yield point: a Stop, a rerun or a closed session raises here
            show()

        # kept until the run ends here: a run a changed setting stopped (Streamlit's StopException, after which the
        # session state takes no more writes from this run) is still named on the page's next run (stopped_notice)
        st.session_state[_RUNNING] = what
        try:
            out = runner.run(spec, config, lim, owner=owner, on_wait=on_wait, on_progress=on_progress, cancelled=gone,
                             tick=tick, queue_timeout_s=queue_timeout_s(lim), visitor=visitor())
        except runqueue.VisitorLimit:
            st.session_state.pop(_RUNNING, None)  # ended here: its box and the page's guard say how
            status.update(label=_("Not queued: you already have a run"), state="error", expanded=False)
            raise
        except InputError:
            st.session_state.pop(_RUNNING, None)
            status.update(label=_("Not run"), state="error")
            raise
        except Exception:
            st.session_state.pop(_RUNNING, None)
            status.update(label=_("Failed"), state="error")
            raise
        except BaseException:  # Streamlit's own Stop, a rerun, a closed session: the worker is already killed
            with contextlib.suppress(BaseException):  # _RUNNING stays: the next run of the page says it stopped
                status.update(label=_("Stopped"), state="error", expanded=False)
            raise
        st.session_state.pop(_RUNNING, None)
        from gemmlib.core import format as fmt

        label = done(out.result) if done else _("Done")
        if out.stopped is not None:  # killed at its limit: the rows it finished, and why the rest are missing
            status.update(label=_("Stopped at the time limit · {time} in a worker process").format(
                time=fmt.duration(out.seconds)), state="error", expanded=False)
            st.warning(md(tr(out.stopped)))
            return out.result
        status.update(label=_("{label} · {time} in a worker process, peak memory {memory}").format(
            label=label, time=fmt.duration(out.seconds), memory=fmt.nbytes(out.peak_rss_bytes)),
            state="complete", expanded=False)
    return out.result


def stopped_notice() -> None:
    """Say once that this visitor's last run was stopped: with the Stop button, or by a setting changed (or a
    page left) while it ran, which stops the script and the run with it."""
    stopped, running = st.session_state.pop("_bench_stopped", None), st.session_state.pop(_RUNNING, None)
    what = stopped or running  # the Stop button's run, else one a changed setting or another page stopped
    if what:
        st.info(_("Stopped {what}; nothing from that run was kept.").format(what=md(tr(what))))


# ----------------------------------------------------------------------------- results per session
_MINE = "_my_results"
MAX_SESSION_RESULTS = 2000


def keep_results(rows: list[BenchResult]) -> None:
    """Keep this session's measured rows for its Roofline page (not shown to other sessions)."""
    mine = st.session_state.setdefault(_MINE, [])
    mine.extend(dataclasses.replace(r, shape=dict(r.shape), extra=dict(r.extra)) for r in rows)
    del mine[: max(0, len(mine) - MAX_SESSION_RESULTS)]


def session_results() -> list[BenchResult]:
    """What this session measured (Precision, Tiling, Batching, Devices, Profiler pages)."""
    return list(st.session_state.get(_MINE, []))


_SHARED = "_shared_rows"  # session-state key: digests of the rows this session already shared


def share_results(rows: list[BenchResult]) -> int:
    """Share rows with the whole class (every session's Roofline page); returns how many were shared
    now: a row this session shared before is not shared again (pressing the button twice)."""
    tag = _session_tag()
    done = st.session_state.setdefault(_SHARED, set())
    shared = []
    for r in rows:
        digest = hashlib.sha256(json.dumps(r.to_dict(), sort_keys=True, default=str).encode()).hexdigest()[:32]
        if digest in done:
            continue
        done.add(digest)
        shared.append(dataclasses.replace(r, shape=dict(r.shape), extra={**r.extra, "shared_by": f"session {tag}"}))
    results_store.record(shared)
    return len(shared)


def shared_results() -> list[BenchResult]:
    """Rows some session chose to share with the class."""
    return results_store.recorded()


# ----------------------------------------------------------------------------- one benchmark section
def bench_section(spec: BenchSpec, config: Any, lim: safety.Limits, *, key: str, button: str, what: str,
                  done: Callable[[Any], str] | None = None, at: Any = None, button_key: str | None = None,
                  estimate: bool = True, disabled: bool = False, primary: bool = True,
                  keep: Callable[[Any], list[BenchResult]] | None = list, store: Callable[[Any], Any] | None = None,
                  around: Callable[[Any], contextlib.AbstractContextManager] | None = None,
                  notice: bool = True) -> Any:
    """A benchmark page's run box, the same flow on every page: the run's button (in ``at``, the page's
    input box, else the page), the time it will take beside it (``estimate``, on by default: its spec's plan,
    and what comes before it: the worker's start and the queue; a run the caps would refuse has its button off,
    the reason as its help and beside it), the notice of a run this visitor stopped (``notice``), and on a press the
    run itself (``run_benchmark`` under ``guard(what)``), its rows kept for the Roofline page
    (``keep(result)``: the rows, by default the result's own; None keeps nothing) and the result kept in the
    session under ``key`` (``store(result)``, default as it is). ``config`` None disables the button; a
    function that builds it is called under the same guard (its InputError shown, the button disabled).
    ``around(config)``: a context manager the run happens inside, yielding the config to run (a
    temporary folder for what the run writes). Returns what the session keeps under ``key`` (None
    before the first run); the page draws it (its table through ``ui.table``, ``downloads``)."""
    from .nav import guard

    if callable(config):  # built here, under the section's guard: a refusal shows and disables the button
        build, config = config, None
        with guard(what):
            config = build() or None  # nothing chosen yet (an empty list of ranks, of collectives)
    where = at or st
    plan, refusal = None, None
    if estimate and config is not None:
        with guard(_("the time estimate")):
            plan, refusal = _plan_or_refusal(spec, config, lim)
    if plan is not None and not disabled:
        refusal = refused_by_caps(plan, config, lim)
    why = _("**The server's caps would refuse this run:** {message}").format(message=md(tr(refusal))) \
        if refusal is not None and not disabled else None
    # refused: the button is off, its reason beside it (before, it stayed on and only a press said "Not run")
    pressed = where.button(button, type="primary" if primary else "secondary", key=button_key,
                           disabled=disabled or config is None or why is not None, help=why)
    if plan is not None:
        with at or contextlib.nullcontext():
            run_estimate(plan, str(getattr(config, "device", "")) or None, probing=_probing(spec, config, plan),
                         limit_s=lim.time_limit_s)
    if why is not None:  # said before a press: an LLM layer on a CPU was "about 682 s", then "Not run" on a press
        with at or contextlib.nullcontext():
            st.warning(why)
    if notice:
        stopped_notice()
    if pressed:
        with guard(what), (around(config) if around else contextlib.nullcontext(config)) as cfg:
            out = run_benchmark(spec, cfg, lim, done=done, estimate=plan)
            st.session_state[key] = store(out) if store else out
            if keep is not None:
                keep_results(keep(out))
    return st.session_state.get(key)


def rows_done(rows: list) -> str:
    """A run's status label: "Done: 12 rows"."""
    from .i18n import ngettext

    return ngettext("Done: {n} row", "Done: {n} rows", len(rows)).format(n=len(rows))


def downloads(name: str, csv: str | None = None, json: str | None = None, *, key: str | None = None,
              json_first: bool = False) -> None:
    """A benchmark's results to download: CSV and JSON buttons side by side (``{name}.csv``,
    ``{name}.json``; ``key``: their widget keys' stem, ``{key}_csv`` and ``{key}_json``); one of them
    alone in the page's flow (``key``: its widget key)."""
    files = [(_("Download CSV"), csv, f"{name}.csv", "text/csv", "csv"),
             (_("Download JSON"), json, f"{name}.json", "application/json", "json")]
    files = [f for f in (files[::-1] if json_first else files) if f[1] is not None]
    places = st.columns([1, 1, 4]) if len(files) > 1 else [st]
    for where, (label, data, file_name, mime, ext) in zip(places, files, strict=False):
        name_key = (f"{key}_{ext}" if len(files) > 1 else key) if key else None
        where.download_button(label, data, file_name, mime, on_click="ignore", key=name_key)
