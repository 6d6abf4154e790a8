"""The Roofline page's "Against published measurements": ``python -m gemmlib validate --published`` for the app.

:func:`compute` runs the CLI's table (:func:`gemmlib.llm.published.table`: every file of ``benchmarks/published/``
estimated from the facts of its set-up) and joins each row with the facts of its file the page shows beside it (the
model, the GPUs, the framework or engine, the source's title and link). It takes a few seconds: the page calls it only
when its expander is opened, cached per server on :func:`stamp` (the folder's files and their times), so a changed
file is estimated again. :func:`published_view` turns that into what the page draws — a table per kind, the CLI's
summary line, and what the table says (the runs within :data:`CLOSE` of their measurement, the ones farther, which
way) — in the reader's language. :func:`runs` counts the runs of a kind for the LLM Estimator's captions, which link
here (:func:`link_sentence`). Nothing here imports streamlit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from gemmlib.core import format as fmt
from gemmlib.core.i18n import N_, Translate, english
from gemmlib.llm.published import DEFAULT_DIR, KINDS, Measurement, load, table

# how close a run counts as close: the README's target for the table's median |error| (issue 21)
CLOSE = 0.15
# metrics that are times (a larger estimate is a slower one); every other metric is a rate
TIME_METRICS = ("ttft_ms", "tpot_ms", "gpu_hours_per_trillion_tokens")
ENGINES = {"trtllm": "TensorRT-LLM", "vllm": "vLLM"}
FRAMEWORKS = {"megatron": "Megatron", "torchtitan": "torchtitan"}
KIND_TITLES = {"training": N_("Training"), "inference": N_("Inference")}
LINK_TEXT = r"https?://(?:www\.)?([^/]+/[^/]+/[^/#?]+)"  # a link shown as its site and first two steps
# pixels: the run, its figures and the metric side by side in the page's column at 1280 px (784 px wide)
WIDTHS = {"run": 305, "measured": 72, "estimate": 74, "error": 56, "metric": 265}
ANCHOR = "published"  # the section's anchor on the Roofline page
EXPANDER_KEY = "rf_published"  # its expander's key, bound to the URL: a link opens it
EXPANDER_LABEL = N_("The estimate against published training and serving runs (opens in a few seconds)")
# the columns in their order: what was run and how far off first, then the metric, what was estimated, the source
COLUMNS = {"run": N_("run"), "measured": N_("measured"), "estimate": N_("estimated"), "error": N_("error"),
           "metric": N_("metric"), "setup": N_("set-up as estimated"), "source": N_("source"), "link": N_("source link")}


def stamp(folder: str | Path = DEFAULT_DIR) -> tuple:
    """The folder's measurement files and model configs, each with its size and modification time: the key under
    which a server keeps the table (a changed, added or removed file changes it)."""
    out = []
    for p in sorted(Path(folder).glob("*.json")) + sorted(Path(folder).glob("models/*.json")):
        try:
            st = p.stat()
        except OSError:
            continue
        out.append((str(p.relative_to(folder)), st.st_size, st.st_mtime_ns))
    return tuple(out)


def _model_name(m: Measurement) -> str:
    return m.model.get("preset") or Path(str(m.model.get("config", "?"))).stem


def _runner(m: Measurement) -> str:
    """The framework or engine the source ran, as it names it; "" where the source names none."""
    s = m.setup
    if s.get("engine"):
        name = ENGINES.get(s["engine"], s["engine"])
        return f"{name} {s['engine_version']}" if s.get("engine_version") else name
    return FRAMEWORKS.get(s.get("framework", ""), s.get("framework", ""))


def compute(folder: str | Path = DEFAULT_DIR) -> dict:
    """``validate --published --json``'s object (rows, summary, bad_files), each row with its file's facts added:
    ``model``, ``gpus``, ``gpu``, ``runner`` (framework or engine), ``source_title``, ``source_url``."""
    rows, bad, summary = table(folder)
    facts = {m.id: m for m in load(folder)[0]}
    out = []
    for r in rows:
        m = facts[r.id]
        out.append({**r.to_dict(), "model": _model_name(m), "gpus": int(m.hardware["gpus"]), "gpu": m.hardware["gpu"],
                    "runner": _runner(m), "source_title": m.source.get("title", ""), "source_url": m.source.get("url", "")})
    return {"rows": out, "summary": summary, "bad_files": list(bad)}


@lru_cache(maxsize=2)
def _computed(folder: str, key: tuple) -> dict:
    return compute(folder)


def cached(folder: str | Path = DEFAULT_DIR) -> dict:
    """:func:`compute`'s object, computed once per process (a server) while the folder's files stay as they are
    (:func:`stamp`). The same object each time: read it, never change it."""
    return _computed(str(folder), stamp(folder))


@lru_cache(maxsize=4)
def _counts(folder: str, key: tuple) -> dict[str, int]:
    ms, _bad = load(folder)
    return {k: sum(m.kind == k for m in ms) for k in KINDS}


def runs(kind: str, folder: str | Path = DEFAULT_DIR) -> int:
    """How many published runs of ``kind`` the table holds (its readable files; a few ms, kept per :func:`stamp`)."""
    return _counts(str(folder), stamp(folder)).get(kind, 0)


_HEADER = ""  # gettext's msgid of the catalogue's header


def _lang(gettext: Translate) -> str:
    """The language a gettext reads: its catalogue's ``Language`` header (gettext("") is the header); English for
    the identity."""
    m = re.search(r"^Language: *([\w-]+)", gettext(_HEADER) or "", re.M)
    return m.group(1) if m else "en"


def roofline_href(gettext: Translate = english) -> str:
    """The address of the Roofline page's section, its expander open, in the reader's language."""
    return f"/Roofline?lang={_lang(gettext)}&{EXPANDER_KEY}=true#{ANCHOR}"


def link_sentence(kind: str, gettext: Translate = english, folder: str | Path = DEFAULT_DIR) -> str:
    """The Estimator's Training (``training``) or Serving (``inference``) caption's last sentence: how many published
    runs of the kind were estimated, a link to where they are compared; "" where there are none."""
    n = runs(kind, folder)
    if not n:
        return ""
    return gettext("How such times compared with {n} published runs: [Roofline → Against published measurements]"
                   "({href}).").format(n=n, href=roofline_href(gettext))


# ----------------------------------------------------------------------------- the section's view
@dataclass(frozen=True)
class KindView:
    kind: str
    title: str
    rows: list[dict]  # shown, keyed by COLUMNS' names: the numbers as the CLI prints them (4 digits, signed %)
    summary: str  # the CLI's summary line
    words: str  # what the table says
    caption: str  # the summary and the words, as the caption under the table
    data: list[dict] = field(default_factory=list)  # the rows as compute() gives them (the CLI's JSON rows, ids)
    figures: dict = field(default_factory=dict)  # the summary's numbers, as the CLI's JSON holds them


@dataclass(frozen=True)
class PublishedView:
    kinds: list[KindView]
    bad: list[str]  # "bad file: …" lines
    labels: dict[str, str]  # the columns' headers

    def column_config(self, cc) -> dict:
        """The tables' ``column_config`` from Streamlit's ``st.column_config`` (``cc``): the headers; the run, the
        figures and the metric at :data:`WIDTHS` (in view without a sideways scroll at 1280 px), the numbers
        right-aligned; the set-up and the source after them, wide; the link a link showing its site and first two
        steps."""
        lab, w = self.labels, WIDTHS
        return {"run": cc.TextColumn(lab["run"], width=w["run"]), "metric": cc.TextColumn(lab["metric"], width=w["metric"]),
                **{c: cc.TextColumn(lab[c], alignment="right", width=w[c]) for c in ("measured", "estimate", "error")},
                **{c: cc.TextColumn(lab[c], width="large") for c in ("setup", "source")},
                "link": cc.LinkColumn(lab["link"], display_text=LINK_TEXT)}


def _pct(x: float | None, signed: bool = False) -> str:
    return "—" if x is None else format(x, "+.0%" if signed else ".0%")


def _run_words(r: dict, gettext: Translate) -> str:
    words = gettext("{model}, {gpus:,} × {gpu}").format(model=r["model"], gpus=r["gpus"], gpu=gettext(r["gpu"]))
    return gettext("{run}, {runner}").format(run=words, runner=r["runner"]) if r["runner"] else words


def _faster(r: dict) -> bool:
    """The estimate is faster than the measurement (a higher rate, or a shorter time)."""
    return (r["error"] < 0) if r["metric"] in TIME_METRICS else (r["error"] > 0)


def _near(error: float) -> bool:
    """Within CLOSE as the table prints it (in whole percent: a −15% row is within 15%)."""
    return round(abs(error) * 100) <= round(CLOSE * 100)


def _said(rows: list[dict], gettext: Translate) -> str:
    """What the rows of one kind say: how many within CLOSE, and the farther ones grouped by model and runner, each
    group's errors and which way they lie."""
    est = [r for r in rows if r["error"] is not None]
    if not est:
        return ""
    close = [r for r in est if _near(r["error"])]
    far = sorted((r for r in est if not _near(r["error"])), key=lambda r: -abs(r["error"]))
    first = gettext("Within {close} of the measurement: {k} of {n} runs.").format(
        close=_pct(CLOSE), k=len(close), n=len(est))
    if not far:
        return first
    groups: dict[tuple, list[dict]] = {}
    for r in far:
        groups.setdefault((r["model"], r["runner"]), []).append(r)
    parts = []
    for (model, runner), rs in groups.items():
        errs = sorted(r["error"] for r in rs)
        ways = {_faster(r) for r in rs}
        way = (gettext("estimated faster") if ways == {True} else gettext("estimated slower") if ways == {False}
               else gettext("both ways"))
        who = gettext("{model} on {runner}").format(model=model, runner=runner) if runner else model
        parts.append(gettext("{who} ({error}, {way})").format(who=who, error=_pct(errs[0], True), way=way)
                     if len(rs) == 1 else
                     gettext("{who} ({n} runs: {lo} … {hi}, {way})").format(
                         who=who, n=len(rs), lo=_pct(errs[0], True), hi=_pct(errs[-1], True), way=way))
    second = gettext("Farther: {groups}. The README's `Against published measurements` says, run by run, what the "
                     "model leaves out where it is farther off than that.").format(groups=gettext("; ").join(parts))
    return first + (" " if not first.endswith("。") else "") + second


def published_view(data: dict, *, gettext: Translate = english) -> PublishedView:
    """What the section draws from :func:`compute`'s object: per kind its rows, the CLI's summary line and what the
    rows say; the bad files; the headers."""
    kinds = []
    for kind in KINDS:
        mine = [r for r in data["rows"] if r["kind"] == kind]
        if not mine:
            continue
        s = data["summary"][kind]
        rows = [{"run": _run_words(r, gettext), "measured": fmt.number(r["measured"], 4),
                 "estimate": fmt.DASH if r["estimate"] is None else fmt.number(r["estimate"], 4),
                 "error": _pct(r["error"], True), "metric": f"{r['metric']} ({r['unit']})",
                 "setup": r["setup"] if r["estimate"] is not None else gettext("not estimated: {why}").format(
                     why=r["problem"].split("; ")[0]),
                 "source": r["source_title"], "link": r["source_url"]} for r in mine]
        summary = gettext("{kind}: {estimated} of {rows} estimated; median |error| {median}, worst {worst}").format(
            kind=gettext(KIND_TITLES[kind]), estimated=s["estimated"], rows=s["rows"],
            median=_pct(s["median_abs_error"]), worst=_pct(s["worst_abs_error"]))
        said = _said(mine, gettext)
        caption = gettext("{summary}. {words}").format(summary=summary, words=said) if said else summary
        kinds.append(KindView(kind, gettext(KIND_TITLES[kind]), rows, summary, said, caption, mine, dict(s)))
    bad = [gettext("bad file: {why}").format(why=b) for b in data["bad_files"]]
    return PublishedView(kinds, bad, {c: gettext(h) for c, h in COLUMNS.items()})
