"""Load: many browser sessions at once on the heaviest pages; all must render without error.

One Chromium, one browser context (an independent Streamlit session) per simulated user. For each
page, all sessions open it at the same moment; a session is done when the page's heading shows,
the script has finished its run, and no exception or error box is on the page. Prints the time of
every session and the p50/max per page; exits 1 if any session failed.

    python benchmarks/bench_load.py                      # starts its own server, 10 sessions
    python benchmarks/bench_load.py --sessions 20 --pages LLM_Estimator
    python benchmarks/bench_load.py --url http://127.0.0.1:8501   # an already running server

Needs Debian's /usr/bin/chromium (never a downloaded browser) and playwright for Python.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from browser_helpers import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, StreamlitServer, page_info  # noqa: E402

# The heaviest explainer pages and the estimator (the pages a class opens together).
DEFAULT_PAGES = ["Accumulate", "FLOPs", "Transformer_GEMMs", "LLM_Estimator"]
ERROR_SELECTORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'


def _page_file(url_path: str) -> str | None:
    if url_path in ("", "Home"):
        return "app.py"
    for f in sorted((Path(__file__).resolve().parents[1] / "pages").glob("*.py")):
        if f.stem.split("_", 1)[-1] == url_path:
            return f"pages/{f.name}"
    return None


async def _wait_rendered(pg, title: str | None, timeout: float, settle: float = 0.6) -> None:
    """Heading shown, and the script state 'notRunning' for ``settle`` s (or a live fragment ticking)."""
    deadline = time.monotonic() + timeout
    h1 = pg.locator("h1").first
    await h1.wait_for(state="visible", timeout=timeout * 1000)
    if title:
        while title not in (await h1.inner_text()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"heading never showed {title!r}")
            await asyncio.sleep(0.1)
    idle_since = None
    while time.monotonic() < deadline:
        state = await pg.get_attribute('[data-testid="stApp"]', "data-test-script-state")
        now = time.monotonic()
        if state == "notRunning":
            idle_since = idle_since or now
            if now - idle_since >= settle:
                return
        else:
            idle_since = None
        await asyncio.sleep(0.1)
    raise TimeoutError(f"script still running after {timeout:.0f} s")


def _cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds a process has used so far (Linux /proc), or None."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


async def _session(browser, url: str, title: str | None, timeout: float) -> tuple[float, float, str | None]:
    """(seconds to the page's heading, seconds until rendered and idle, error or None)."""
    ctx = await browser.new_context(viewport=VIEWPORT)
    t_head = float("nan")
    try:
        pg = await ctx.new_page()
        t0 = time.perf_counter()
        try:
            await pg.goto(url, wait_until="domcontentloaded", timeout=timeout * 1000)
            await pg.locator("h1").first.wait_for(state="visible", timeout=timeout * 1000)
            t_head = time.perf_counter() - t0
            await _wait_rendered(pg, title, timeout)
        except Exception as e:  # noqa: BLE001 - reported as this session's failure
            return t_head, time.perf_counter() - t0, f"{type(e).__name__}: {str(e).splitlines()[0]}"
        elapsed = time.perf_counter() - t0
        errors = await pg.locator(ERROR_SELECTORS).all_inner_texts()
        body = await pg.locator("body").text_content() or ""
        if "Traceback (most recent call last)" in body:
            errors.append("a traceback on the page")
        return t_head, elapsed, ("; ".join(e.splitlines()[0] for e in errors) if errors else None)
    finally:
        await ctx.close()


async def _run(url: str, pages: list[str], sessions: int, timeout: float, server_pid: int | None) -> int:
    from playwright.async_api import async_playwright

    failures = 0
    all_times: list[float] = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            for name in pages:
                f = _page_file(name)
                if f is None:
                    print(f"{name}: no page file, skipped")
                    continue
                title = page_info(f).title
                t0, cpu0 = time.perf_counter(), _cpu_seconds(server_pid)
                results = await asyncio.gather(
                    *[_session(browser, f"{url}/{'' if name == 'Home' else name}", title, timeout)
                      for _ in range(sessions)])
                wall = time.perf_counter() - t0
                cpu1 = _cpu_seconds(server_pid)
                heads = [h for h, _, _ in results]
                times = [t for _, t, _ in results]
                all_times += times
                bad = [(i, err) for i, (_, _, err) in enumerate(results) if err]
                failures += len(bad)
                print(f"\n{name}: {sessions} sessions at once, wall {wall:.1f} s"
                      + (f", server CPU {cpu1 - cpu0:.1f} s ({(cpu1 - cpu0) / sessions:.2f} s per session)"
                         if cpu0 is not None and cpu1 is not None else ""))
                print("  rendered, per session (s): " + " ".join(f"{t:.1f}" for t in times))
                print(f"  heading shown: p50 {statistics.median(heads):.2f} s   max {max(heads):.2f} s")
                print(f"  rendered:      p50 {statistics.median(times):.2f} s   max {max(times):.2f} s   "
                      f"errors {len(bad)}/{sessions}")
                for i, err in bad:
                    print(f"  session {i}: {err}")
        finally:
            await browser.close()
    if all_times:
        print(f"\nall pages: {len(all_times)} sessions, p50 {statistics.median(all_times):.2f} s, "
              f"max {max(all_times):.2f} s, failures {failures}")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=10, help="browser sessions opened at once per page")
    ap.add_argument("--pages", default=",".join(DEFAULT_PAGES), help="comma-separated URL paths")
    ap.add_argument("--url", help="use this running server instead of starting one")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds one session may take")
    args = ap.parse_args(argv)
    if args.sessions < 1:
        ap.error("--sessions must be at least 1")
    pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    server = None
    try:
        if args.url:
            url = args.url.rstrip("/")
        else:
            t0 = time.perf_counter()
            server = StreamlitServer("bench_load")
            url = server.url
            print(f"server {url} healthy after {time.perf_counter() - t0:.1f} s (log: {server.log_path})")
        print(f"{args.sessions} sessions per page, one Chromium on this machine ({os.cpu_count()} CPUs); "
              "the browser and the server share the CPUs here, unlike in a classroom")
        return asyncio.run(_run(url, pages, args.sessions, args.timeout,
                                server.proc.pid if server is not None else None))
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
