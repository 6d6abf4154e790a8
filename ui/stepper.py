"""The step-through of a GEMM trace, drawn in the browser (Streamlit's components v2).

Its JS and CSS are plain files in ``ui_assets/``, read when ui is first imported.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import streamlit as st

from gemmlib.core.i18n import N_

from .i18n import _, gettext_for, lang
from .url import link_note

# ----------------------------------------------------------------------------- the step-through
_ASSETS = Path(__file__).resolve().parents[1] / "ui_assets"
_STEPPER_HTML = """
<div class="gst" tabindex="0" role="group">
  <div class="stage">
    <div class="grids"></div>
    <div class="side">
      <div class="pos"></div>
      <div class="kind"></div>
      <div class="text" aria-live="polite" aria-atomic="true"></div>
      <div class="loads"></div>
    </div>
  </div>
  <div class="bar">
    <button class="first"></button><button class="back"></button><button class="play"></button>
    <button class="fwd"></button><button class="last"></button>
    <span class="hint"></span>
    <input class="scrub" type="range" min="0" max="0" step="1" value="0">
  </div>
</div>
"""
# Registered once, when ui is first imported; mounted by each page under its own key. The JS and
# CSS are plain files in ui_assets/ beside the package (step_through.js, step_through.css: named apart
# from this module, one file each), read here: no build step, no iframe.
_stepper_component = st.components.v2.component(
    "gemm_stepper", html=_STEPPER_HTML, css=(_ASSETS / "step_through.css").read_text(encoding="utf-8"),
    js=(_ASSETS / "step_through.js").read_text(encoding="utf-8"))

# Every word the step-through shows, translated where it is sent ({n}, {a}, ... are filled in the browser).
STEPPER_LABELS = {
    "step": N_("Step {n} of {total}"),
    "play": N_("Play"),
    "pause": N_("Pause"),
    "first": N_("first step (Home)"),
    "back": N_("one step back (← or PageUp)"),
    "forward": N_("one step forward (→ or PageDown)"),
    "last": N_("last step (End)"),
    "scrub": N_("step"),
    "keys": N_("Click the grids, then: → or PageDown next, ← or PageUp back, Space play/pause, Home/End "
               "first/last."),
    "edit": N_("Click a cell of A or B to change it (Enter keeps it, Esc puts it back; PageDown and PageUp keep it "
               "and step)."),
    "loads": N_("so far: A loads {a}, B loads {b}, D stores {d}"),
    "epilogue": N_("the epilogue: D = α·(A·B) + β·C, once per element of D"),
}
MATRIX_CAPTION = "{name} ({rows}×{cols})"  # no words: the same in every language
STEPPER_MAX_SPEED = 30  # steps per second the browser can play
STEPPER_EVERY_STEP_SPEED = 10  # up to this pace every step is drawn (a late frame slows the pace); above, steps may be skipped


@functools.lru_cache(maxsize=32)
def _stepper_data(tr: Any, code: str = "en") -> dict:
    """The trace as the browser draws it in language ``code``: frames with their counts as text,
    the matrices as text (the arithmetic lines translated; the trace id is the same in every language)."""
    from gemmlib.core import format as fmt

    frames = [{**f, "loads": [fmt.count(v) for v in f["loads"]]} for f in tr.frames(gettext_for(code))]
    text = tr.matrices_text()
    p = tr.problem
    caption = {name: MATRIX_CAPTION.format(name=name, rows=r, cols=c)
               for name, r, c in (("A", p.m, p.k), ("B", p.k, p.n), ("C", p.m, p.n), ("D", p.m, p.n))}
    data = {"frames": frames, "A": text["A"], "B": text["B"], "C": text["C"] if p.beta != 0 else None,
            "m": p.m, "n": p.n}
    english = {**data, "frames": [{**f, "text": s.expression} for f, s in zip(frames, tr.steps, strict=True)]}
    data["traceId"] = hashlib.sha1(json.dumps(english, sort_keys=True).encode()).hexdigest()[:12]
    # the steps' shape: which cells of A, B and D each step touches (not the values, not C's reads under β ≠ 0)
    shape = [[f["a"], f["b"], f["d"]] for f in frames]
    data["shapeId"] = hashlib.sha1(json.dumps(shape).encode()).hexdigest()[:12]
    data["labels"] = {"a": caption["A"], "b": caption["B"], "c": caption["C"], "d": caption["D"]}
    return data


def _ignore() -> None:
    pass


def _number(v: float) -> str:
    """A matrix value as text the page's matrix parser reads back exactly (no thousands separators)."""
    return f"{float(v):.15g}"


def edited_matrices(tr: Any, name: str, i: int, j: int, value: str) -> dict[str, str]:
    """A, B and C of ``tr``'s problem as the Accumulate page's text (one row per line), with cell
    ``name[i, j]`` set to ``value``; C is empty when β = 0 (it is not read)."""
    p = tr.problem
    mats = {"A": [list(r) for r in p.a], "B": [list(r) for r in p.b], "C": [list(r) for r in p.c]}
    mats[name][i][j] = float(value)
    text = {k: "\n".join(" ".join(_number(v) for v in row) for row in m) for k, m in mats.items()}
    if p.beta == 0 and name != "C":
        text["C"] = ""
    return text


def stepper(key: str, tr: Any, *, speed: int, presentation: bool = False, pos_key: str | None = None,
            on_edit: Callable[[dict[str, str]], None] | None = None) -> int:
    """Step through a GEMM trace (``gemmlib.explain.reference.Trace``) in the browser.

    The browser draws A, B, C (when β ≠ 0) and D, the arithmetic line and the loads beside them,
    all from the same step, and plays the trace at ``speed`` steps per second (1 to 30) without
    asking the server. Up to ``STEPPER_EVERY_STEP_SPEED`` (10) every step is drawn: when the browser
    falls behind the pace slows rather than skip a step; faster, the pace holds and a late frame
    skips. Pause stops on the frame shown. Keys, while the stepper has the focus (a click on the grids
    gives it): → / PageDown next, ← / PageUp back, Space play/pause, Home / End. ``presentation``:
    A, B, C and D in one row with the arithmetic line and the controls under them, the cells sized to
    the window's width and height so that the whole step-through fits on one screen, no text outside
    the cells under 24 px.

    ``on_edit(matrices)``: the cells of A, B and C can be edited in place; a changed cell calls it
    (before the next run) with the three matrices as text (``edited_matrices``), and the new trace
    opens at the step shown when the cell was changed.

    Returns the step the browser last reported (0-based). It reports only when it stops (pause, the
    end, a button, a key, the scrubber released), so a page reruns once per stop, never per frame.
    Session-state keys: ``key`` (the component's state), ``pos_key`` (default ``{key}_pos``: the step,
    also the unbound URL parameter ``?{pos_key}=N`` so that a link opens at that step), and
    ``{key}_trace`` (the trace's id: a new trace starts at step 0; an edited one, or one with new values in the same
    steps, where it was) and ``{key}_shape`` (which cells each step touches).
    """
    ss = st.session_state
    data = _stepper_data(tr, lang())
    data = {**data, "labels": {**data["labels"], **{k: _(v) for k, v in STEPPER_LABELS.items()}},
            "editable": on_edit is not None}
    tid, last, shape = data["traceId"], len(data["frames"]) - 1, data.pop("shapeId")  # (a copy: the cache keeps it)
    k_pos, k_trace, k_keep, k_shape = pos_key or f"{key}_pos", f"{key}_trace", f"{key}_keep", f"{key}_shape"
    asked = None  # the step a link names, on the first run of this page in the session
    if k_pos not in ss:
        asked = st.query_params.get(k_pos)
        try:
            ss[k_pos] = int(str(asked or "0"))
        except ValueError:
            ss[k_pos] = 0
            link_note(k_pos, asked, N_("is not a whole number"), 0)
        ss[k_trace] = tid
    elif ss.get(k_trace) != tid:
        # an edited cell, or new values in the same steps (α, β, the seed, typed numbers of the same sizes): the
        # same step (a teacher at step 5 who sets β = 1 stays at step 5); a new loop order, tile or size: step 0
        keep = ss.pop(k_keep, None)
        if not isinstance(keep, int):
            keep = ss[k_pos] if ss.get(k_shape) == shape else 0
        ss[k_trace], ss[k_pos] = tid, keep
    ss[k_shape] = shape

    def reported(state: Any) -> int | None:
        step = state.get("step") if isinstance(state, Mapping) else None
        if isinstance(step, Mapping) and step.get("id") == tid and isinstance(step.get("step"), int):
            return int(step["step"])
        return None  # nothing reported yet, or a report about an earlier trace

    def edited() -> None:  # a cell of the trace drawn last run was changed (runs before this run's script)
        ev = (ss.get(key) or {}).get("edit")
        if on_edit is None or not isinstance(ev, Mapping) or ev.get("id") != tid or ev.get("m") not in ("A", "B", "C"):
            return
        try:
            mats = edited_matrices(tr, ev["m"], int(ev["i"]), int(ev["j"]), str(ev["value"]))
        except (KeyError, IndexError, TypeError, ValueError):
            return  # not a number, or not a cell of these matrices: nothing changes
        if isinstance(ev.get("step"), int):
            ss[k_keep] = ev["step"]
        on_edit(mats)

    got = reported(ss.get(key))
    if got is not None:
        ss[k_pos] = got
    linked = ss[k_pos]
    ss[k_pos] = max(0, min(last, int(ss[k_pos])))
    if asked is not None and ss[k_pos] != linked:
        link_note(k_pos, asked, N_("is outside {lo}–{hi}"), ss[k_pos], then=N_("{used} is used"), lo=0, hi=last)
    res = _stepper_component(
        key=key, data={**data, "speed": max(1, min(STEPPER_MAX_SPEED, int(speed))),
                       "presentation": bool(presentation), "start": ss[k_pos]},
        default={"step": None}, on_step_change=_ignore, on_edit_change=edited, width="stretch", height="content")
    got = reported(res)
    if got is not None:
        ss[k_pos] = max(0, min(last, got))
    pos = ss[k_pos]
    if st.query_params.get(k_pos) != (str(pos) if pos else None):
        if pos:
            st.query_params[k_pos] = str(pos)
        else:
            st.query_params.pop(k_pos, None)
    return pos
