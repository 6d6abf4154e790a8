"""Speed of the explainer pages (issue 2's targets), printed with PASS/FAIL.

(a) ``import gemmlib`` and the explainer modules: do they pull in torch or streamlit, and how long
    does the import take (a fresh subprocess each, median of several)?
(b) First render and rerun-after-a-widget-change of each explainer page through AppTest, each page
    in a fresh subprocess with streamlit's own imports already warm (what a running server has).
    Targets: first render ≤ 1 s, rerun ≤ 200 ms (medians). Also: does the page import torch?
(c) Animation: the time one step advance costs. AppTest reruns the whole script per advance (an
    upper bound: in a browser only the fragment reruns), and with ``--browser`` a real Chromium
    plays the animation on a live server and the steps per second are counted. Target ≥ 5 steps/s.

Run:  python benchmarks/bench_explainers.py [--browser] [--repeat N]
Timings are wall-clock on whatever this machine is doing; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["pages/1_Accumulate.py", "pages/2_FLOPs.py", "pages/3_Transformer_GEMMs.py"]
FIRST_TARGET_S = 1.0
RERUN_TARGET_S = 0.2
STEPS_TARGET = 5.0

MODULES = ["gemmlib", "gemmlib.explain.reference", "gemmlib.explain.accumulation", "gemmlib.core.flops", "gemmlib.core.hardware",
           "gemmlib.core.roofline", "gemmlib.core.dtypes", "gemmlib.charts.explain"]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def run_py(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- (a) imports
def bench_imports(repeat: int) -> bool:
    print("(a) imports (fresh interpreter each time)")
    ok_all = True
    for mod in MODULES:
        code = textwrap.dedent(f"""
            import json, sys, time
            t = time.perf_counter()
            import {mod}
            dt = time.perf_counter() - t
            print(json.dumps({{"s": dt, "heavy": [m for m in ("torch", "streamlit", "triton")
                                                  if m in sys.modules]}}))
        """)
        runs = [run_py(code) for _ in range(repeat)]
        times = [r["s"] for r in runs]
        heavy = runs[0]["heavy"]
        ok = not heavy
        ok_all &= ok
        print(f"    {mod:<24} {statistics.median(times) * 1e3:7.1f} ms  (p20 {pct(times, .2) * 1e3:.1f}, "
              f"p80 {pct(times, .8) * 1e3:.1f})  pulls in: {', '.join(heavy) or 'nothing heavy'}  {verdict(ok)}")
    return ok_all


# ----------------------------------------------------------------------------- (b) pages
PAGE_CODE = """
import json, statistics, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from streamlit.testing.v1 import AppTest
warm = Path({tmp!r})
if {warm!r}:  # what a running server has loaded once any page has been shown
    warm.write_text("import altair as alt, pandas as pd, streamlit as st\\n"
                    "df = pd.DataFrame({{'a': [1, 2]}})\\nst.dataframe(df)\\n"
                    "st.altair_chart(alt.Chart(df).mark_point().encode(x='a'))\\n")
else:  # a cold process: only streamlit itself imported
    warm.write_text("import streamlit as st\\nst.write('warm')\\n")
AppTest.from_file(str(warm)).run()
page = {page!r}
t = time.perf_counter()
at = AppTest.from_file(page, default_timeout=120).run()
first = time.perf_counter() - t
errors = [str(e.value) for e in at.exception]

def changes(at):
    name = Path(page).name
    if name.startswith("1_"):
        yield "loop order -> outer", lambda: at.radio(key="acc_order").set_value("outer")
        yield "step forward", lambda: at.button(key="acc_fwd").click()
        yield "loop order -> tiled", lambda: at.radio(key="acc_order").set_value("tiled")
        yield "step forward", lambda: at.button(key="acc_fwd").click()
        yield "loop order -> inner", lambda: at.radio(key="acc_order").set_value("inner")
        yield "slider step 2", lambda: at.slider(key="acc_slider").set_value(2)
        yield "alpha 2", lambda: at.number_input(key="acc_alpha").set_value(2.0)
    elif name.startswith("2_"):
        yield "metric -> MB moved", lambda: at.radio(key="fl_metric").set_value("MB moved")
        yield "metric -> time", lambda: at.radio(key="fl_metric").set_value("time µs")
        yield "K 2048", lambda: at.number_input(key="fl_k").set_value(2048)
        yield "hardware -> A100", lambda: at.selectbox(key="fl_gpu").set_value("A100 SXM 80GB")
        yield "dtype -> fp32", lambda: at.selectbox(key="fl_dtype").set_value("fp32")
        yield "SMs 100", lambda: at.number_input(key="fl_sms").set_value(100)
    else:  # another engineer's page: move its first sliders / number inputs
        for w in list(at.slider)[:3]:
            yield f"slider {{w.label}}", (lambda w=w: w.set_value(w.min if w.value != w.min else w.max))
        for w in list(at.number_input)[:3]:
            yield f"number {{w.label}}", (lambda w=w: w.set_value(w.min if w.min is not None and w.value != w.min
                                                                 else w.value + 1))

reruns = []
for label, act in changes(at):
    act()
    t = time.perf_counter()
    at.run()
    reruns.append((label, time.perf_counter() - t))
    errors += [str(e.value) for e in at.exception]
step = None
if Path(page).name.startswith("1_"):
    at.button(key="acc_play").click().run()
    ticks = []
    for _ in range(10):
        t = time.perf_counter()
        at.run()
        ticks.append(time.perf_counter() - t)
    step = {{"ticks": ticks, "advanced": at.session_state.acc_pos}}
print(json.dumps({{"first": first, "reruns": reruns, "errors": errors, "step": step,
                   "torch": "torch" in sys.modules}}))
"""


def bench_pages(repeat: int) -> tuple[bool, list[float]]:
    print("(b) pages through AppTest (fresh process per run, with streamlit, pandas and altair imported as on\n"
          "    a server that has shown any page; the cold-process figure includes those imports, for information)")
    ok_all = True
    ticks: list[float] = []
    for page in PAGES:
        if not (ROOT / page).exists():
            print(f"    {page}: not written yet, skipped")
            continue
        firsts, reruns, errors, torch = [], [], [], False
        for i in range(repeat):
            r = run_py(PAGE_CODE.format(root=str(ROOT), tmp=f"/tmp/bench_explainers_warm_{i}.py",
                                        page=str(ROOT / page), warm=True))
            firsts.append(r["first"])
            reruns += [dt for _, dt in r["reruns"]]
            errors += r["errors"]
            torch |= r["torch"]
            if r["step"]:
                ticks += r["step"]["ticks"]
        cold = run_py(PAGE_CODE.format(root=str(ROOT), tmp="/tmp/bench_explainers_cold.py",
                                       page=str(ROOT / page), warm=False))["first"]
        first, rerun = statistics.median(firsts), statistics.median(reruns) if reruns else float("nan")
        ok_first, ok_rerun = first <= FIRST_TARGET_S, rerun <= RERUN_TARGET_S
        ok_all &= ok_first and ok_rerun and not errors and not torch
        print(f"    {page}")
        print(f"        first render  median {first * 1e3:7.1f} ms (p20 {pct(firsts, .2) * 1e3:.0f}, "
              f"p80 {pct(firsts, .8) * 1e3:.0f}; {len(firsts)} runs)   target ≤ {FIRST_TARGET_S * 1e3:.0f} ms  "
              f"{verdict(ok_first)}")
        print(f"        first render in a cold process (pandas/altair imports included): {cold * 1e3:.0f} ms")
        if reruns:
            print(f"        widget rerun  median {rerun * 1e3:7.1f} ms (p20 {pct(reruns, .2) * 1e3:.0f}, "
                  f"p80 {pct(reruns, .8) * 1e3:.0f}; {len(reruns)} changes)  target ≤ "
                  f"{RERUN_TARGET_S * 1e3:.0f} ms  {verdict(ok_rerun)}")
        print(f"        imports torch: {torch}   exceptions: {len(errors)}"
              + (f" ({errors[0][:120]})" if errors else ""))
    return ok_all, ticks


# ----------------------------------------------------------------------------- (c) animation
def report_ticks(ticks: list[float]) -> bool:
    print("(c) animation (AppTest: one whole-script rerun per advance; an upper bound on the cost)")
    if not ticks:
        print("    no Accumulate page: skipped")
        return False
    med = statistics.median(ticks)
    rate = 1 / med
    ok = rate >= STEPS_TARGET
    print(f"    one step advance: median {med * 1e3:.1f} ms (p20 {pct(ticks, .2) * 1e3:.1f}, p80 "
          f"{pct(ticks, .8) * 1e3:.1f}) -> at most {rate:.1f} steps/s of script time   target ≥ {STEPS_TARGET:.0f}  "
          f"{verdict(ok)}")
    return ok


def bench_browser(seconds: float = 6.0) -> bool:
    """Play the animation in Chromium on a live server and count the steps it shows per second."""
    import re

    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    try:
        from browser_helpers import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, StreamlitServer, open_page
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        print(f"    browser: unavailable ({e})")
        return False
    print("(c') animation in a real browser (Chromium, live server, 8×8×8 inner product = 513 steps)")
    server = StreamlitServer("bench_explainers")
    ok_all = True
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_context(viewport=VIEWPORT).new_page()
            for speed in (5, 10, 20):
                open_page(page, server.url, "Accumulate",
                          f"acc_src=random&acc_m=8&acc_n=8&acc_k=8&acc_speed={speed}")

                def current() -> int:
                    txt = page.locator("text=/Step \\d+ of \\d+/").first.inner_text()
                    return int(re.search(r"Step (\d+) of", txt).group(1))

                start = current()
                page.get_by_role("button", name=re.compile("Play")).click()
                page.wait_for_timeout(1500)  # let it start
                s0, t0 = current(), time.monotonic()
                page.wait_for_timeout(seconds * 1000)
                s1, t1 = current(), time.monotonic()
                page.get_by_role("button", name=re.compile("Pause")).click()
                rate = (s1 - s0) / (t1 - t0)
                ok = rate >= min(STEPS_TARGET, speed) * 0.9
                if speed == 5:
                    ok_all &= ok
                print(f"    speed {speed:>2}/s: step {start} -> {s0} -> {s1} in {t1 - t0:.1f} s = {rate:.1f} steps/s"
                      f"   {verdict(ok) if speed == 5 else '(headroom)'}")
            browser.close()
    finally:
        server.stop()
    return ok_all


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (default 3)")
    ap.add_argument("--browser", action="store_true", help="also play the animation in Chromium")
    args = ap.parse_args()
    ok = bench_imports(args.repeat)
    ok_pages, ticks = bench_pages(args.repeat)
    ok &= ok_pages
    ok &= report_ticks(ticks)
    if args.browser:
        ok &= bench_browser()
    print(f"overall: {verdict(ok)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
