"""The README's example outputs are what the commands print: each ```bash block holding one `python -m gemmlib
estimate …` or `validate --published` command, followed by an output block, is run in this process and every line
the README shows (an excerpt: "..." marks lines left out) must be a line of the real output. Written after a
reviewer found fifteen stale lines (a training run's seconds, a serving table's best concurrency, a published row's
estimate) that no test read."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(r"```bash\n((?:(?!```).)*?)```\n```\n((?:(?!```).)*?)```", re.S)


def _examples() -> list[tuple[int, str, list[str]]]:
    text = README.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        cmds = [c for c in m.group(1).replace("\\\n", " ").strip().splitlines() if c.startswith("python -m gemmlib")]
        if len(cmds) != 1 or not re.match(r"python -m gemmlib (estimate|validate --published)", cmds[0]):
            continue
        shown = [ln.rstrip() for ln in m.group(2).splitlines() if ln.strip() and ln.strip() != "..."]
        out.append((text[:m.start()].count("\n") + 1, cmds[0].split(" #")[0].strip(), shown))
    return out


EXAMPLES = _examples()


def test_the_readme_has_its_examples():
    assert len(EXAMPLES) >= 6, [cmd for _, cmd, _ in EXAMPLES]


@pytest.mark.parametrize(("line", "cmd", "shown"), EXAMPLES, ids=[f"README:{n}" for n, _, _ in EXAMPLES])
def test_each_readme_example_prints_what_the_readme_shows(line, cmd, shown, run_cli):
    rc, out, err = run_cli(shlex.split(cmd)[3:])
    assert rc == 0, err
    printed = {ln.rstrip() for ln in out.splitlines()}
    stale = [ln for ln in shown if ln not in printed]
    assert not stale, f"README line {line}: {cmd}\nshown but not printed:\n" + "\n".join(stale)
