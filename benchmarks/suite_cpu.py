"""Where a command's CPU goes, by kind of process: run it and sample every process on the machine.

    python benchmarks/suite_cpu.py [--interval 0.5] -- python3 -m pytest -n 2 --dist loadfile tests/browser

Every ``interval`` seconds each process's user + system time is read from ``/proc/<pid>/stat`` (the
highest value seen per process counts, so a process that exits keeps what it used until its last
sample: a process shorter than one interval is missed or undercounted). At the end the CPU seconds are
summed by kind (Chromium's renderer, browser, GPU and utility processes; Streamlit servers; the pytest
workers; benchmark workers; ranks, spawned or forked from a fork server; the rest by their command line) and printed beside the
command's wall time and the machine's core count. Linux only. The sampler's own CPU is printed too.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


WORKER = "benchmark worker (gemm-worker: forked, or gemmlib.measure.worker)"


def kind(cmd: str) -> str:
    if "chromium" in cmd or "/chrome" in cmd:
        m = re.search(r"--type=([\w-]+)", cmd)
        return f"chromium {m.group(1) if m else 'browser'}"
    if "streamlit" in cmd:
        return "streamlit server"
    if "execnet" in cmd or "exec(eval(sys.stdin.readline()))" in cmd:
        return "pytest-xdist worker"
    if "pytest" in cmd:
        return "pytest"
    if "gemmlib.measure.worker" in cmd:
        return WORKER
    if "multiprocessing.spawn" in cmd or "spawn_main" in cmd:
        return "spawned process (multiprocessing: ranks)"
    if "multiprocessing.forkserver" in cmd:
        return "fork server and its forks (multiprocessing: ranks)"
    if "playwright" in cmd:
        return "playwright driver"
    if not cmd:
        return "(no command line: exited before it was seen, or a kernel thread)"
    words = cmd.split()
    return " ".join(words[:3])[:70]


def sample(seen: dict) -> None:
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            cpu = (int(fields[11]) + int(fields[12])) / HZ
            key = (pid, fields[19])  # pid and start time: a reused pid is another process
            with open(f"/proc/{pid}/comm") as f:
                worker = f.read().strip() == "gemm-worker"  # a forked worker names itself after the fork
            if key in seen:
                seen[key][1] = max(seen[key][1], cpu)
                if worker:
                    seen[key][0] = WORKER
            else:
                with open(f"/proc/{pid}/cmdline") as f:
                    cmd = f.read().replace("\0", " ").strip()
                seen[key] = [WORKER if worker else kind(cmd), cpu]
        except (OSError, ValueError, IndexError):
            continue  # gone between the listing and the read


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--interval", type=float, default=0.5, help="seconds between samples (default 0.5)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("give the command to run after --")
    if not os.path.isdir("/proc/self"):
        print("needs Linux's /proc", file=sys.stderr)
        return 2
    seen: dict = {}
    sample(seen)
    before = {k: v[1] for k, v in seen.items()}  # what the processes already running had used
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd)
    while proc.poll() is None:
        sample(seen)
        time.sleep(args.interval)
    sample(seen)
    wall = time.monotonic() - t0
    by = collections.Counter()
    count = collections.Counter()
    for key, (k, cpu) in seen.items():
        used = cpu - before.get(key, 0.0)
        if used > 0:
            by[k] += used
            count[k] += 1
    own = time.process_time()
    total = sum(by.values())
    print(f"\n{' '.join(cmd)}: exit {proc.returncode}, {wall:.1f} s wall, {total:.1f} CPU s "
          f"({total / wall:.2f} of {os.cpu_count()} cores busy on average); the sampler itself {own:.1f} CPU s")
    for k, v in by.most_common(20):
        print(f"{v:9.1f} s  {v / total:6.1%}  {count[k]:5d} processes  {k}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
