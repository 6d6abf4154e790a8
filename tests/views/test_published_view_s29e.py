"""The Roofline page's "Against published measurements" (gemmlib.views.published) against the CLI that prints the same
table, ``python -m gemmlib validate --published`` (its --json and its text), and the Estimator's captions that link
to it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gemmlib.core import format as fmt
from gemmlib.core.hardware import CATALOGUE
from gemmlib.llm.published import DEFAULT_DIR
from gemmlib.views import estimator as view
from gemmlib.views import published as pv

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "gemmlib", "validate", "--published", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def cli_json() -> dict:
    return json.loads(_cli("--json"))


@pytest.fixture(scope="module")
def cli_text() -> str:
    return _cli()


@pytest.fixture(scope="module")
def shown() -> tuple[dict, pv.PublishedView]:
    data = pv.compute()
    return data, pv.published_view(data)


def _file(run_id: str) -> dict:
    """A measurement's file as JSON, read here, not through gemmlib."""
    return next(json.loads(p.read_text()) for p in DEFAULT_DIR.glob("*.json") if json.loads(p.read_text())["id"] == run_id)


def test_the_rows_are_the_clis_rows_with_the_same_numbers(cli_json, shown):
    data, v = shown
    assert [r["id"] for r in data["rows"]] == [r["id"] for r in cli_json["rows"]]
    for mine, cli in zip(data["rows"], cli_json["rows"], strict=True):
        assert {k: mine[k] for k in cli} == cli  # every field of the CLI's row, the same value
    assert data["summary"] == cli_json["summary"] and data["bad_files"] == cli_json["bad_files"]
    # each kind's table: the CLI's rows of that kind, in its order
    for k in v.kinds:
        assert [r["id"] for r in k.data] == [r["id"] for r in cli_json["rows"] if r["kind"] == k.kind]
        assert len(k.rows) == len(k.data) and k.figures == cli_json["summary"][k.kind]


def test_the_shown_figures_are_what_the_cli_prints(cli_json, cli_text, shown):
    _data, v = shown
    lines = {line.split()[0]: line for line in cli_text.splitlines() if line.strip()}
    n = 0
    for k in v.kinds:
        for row, cli in zip(k.rows, [r for r in cli_json["rows"] if r["kind"] == k.kind], strict=True):
            assert row["measured"] == fmt.number(cli["measured"], 4)
            assert row["estimate"] == fmt.number(cli["estimate"], 4)
            assert row["error"] == f"{cli['error']:+.0%}"
            assert row["metric"] == f"{cli['metric']} ({cli['unit']})" and row["setup"] == cli["setup"]
            # the text CLI's line for this id holds the same cells
            cells = lines[cli["id"]].split()
            assert row["measured"] in cells and row["estimate"] in cells and row["error"] in cells
            n += 1
        # the summary line as the CLI prints it, the kind's name capitalised
        cli_line = next(line for line in cli_text.splitlines() if line.startswith(f"{k.kind}: "))
        assert k.summary == k.kind.capitalize() + cli_line[len(k.kind):]
        assert k.caption.startswith(k.summary + ". ")
    assert n == len(cli_json["rows"]) == 37


def test_each_run_is_named_by_the_facts_of_its_file(cli_json, shown):
    _data, v = shown
    for k in v.kinds:
        for row, cli in zip(k.rows, k.data, strict=True):
            f = _file(cli["id"])
            model = f["model"].get("preset") or Path(f["model"]["config"]).stem
            head = f"{model}, {f['hardware']['gpus']:,} × {f['hardware']['gpu']}"
            runner = f["setup"].get("engine") or f["setup"].get("framework")
            assert row["run"] == head if runner is None else row["run"].startswith(head + ", ")
            assert row["source"] == f["source"]["title"] and row["link"] == f["source"]["url"]
    runs = {r["run"] for k in v.kinds for r in k.rows}
    assert "deepseek-v3, 2,048 × H800 SXM" in runs  # the DeepSeek-V3 report names no framework: none is invented
    assert "llama-2-70b, 2 × H100 SXM, TensorRT-LLM 0.6.1" in runs
    assert "llama-3.1-8b, 128 × H100 SXM, torchtitan" in runs
    # the link column shows a link's site and first two steps
    link = re.compile(pv.LINK_TEXT)
    assert link.match("https://github.com/NVIDIA/TensorRT-LLM/blob/x/docs/a.md").group(1) == "github.com/NVIDIA/TensorRT-LLM"
    assert link.match("https://arxiv.org/abs/2407.21783").group(1) == "arxiv.org/abs/2407.21783"


def test_what_the_table_says_comes_from_the_rows(cli_json, shown):
    _data, v = shown
    for k in v.kinds:
        errs = [r["error"] for r in cli_json["rows"] if r["kind"] == k.kind]
        near = sum(round(abs(e) * 100) <= 15 for e in errs)  # as the CLI prints them, whole percent
        assert f"Within 15% of the measurement: {near} of {len(errs)} runs." in k.words
        far = [r for r in cli_json["rows"] if r["kind"] == k.kind and round(abs(r["error"]) * 100) > 15]
        assert ("Farther:" in k.words) == bool(far)
        for r in far:  # each farther run's error is in the words, under its model
            f = _file(r["id"])
            assert (f["model"].get("preset") or Path(f["model"]["config"]).stem) in k.words
            assert f"{r['error']:+.0%}" in k.words or "runs: " in k.words
        worst = max(far, key=lambda r: abs(r["error"]), default=None)
        if worst:
            assert f"{worst['error']:+.0%}" in k.words  # the farthest, always named
            assert "README" in k.words


def test_a_time_estimated_too_high_is_slower_and_a_rate_too_high_faster():
    rate = {"metric": "output_tokens_per_s", "error": 0.3}
    time = {"metric": "ttft_ms", "error": 0.3}
    assert pv._faster(rate) and not pv._faster(time)
    assert pv._faster({**time, "error": -0.3}) and not pv._faster({**rate, "error": -0.3})
    rows = [{"model": "m", "runner": "", "metric": "ttft_ms", "error": e} for e in (0.5, 0.2)]
    assert "m (2 runs: +20% … +50%, estimated slower)" in pv._said(rows, pv.english)


def test_a_bad_file_is_named_as_the_cli_names_it_and_a_changed_folder_is_computed_again(tmp_path):
    folder = tmp_path / "published"
    folder.mkdir()
    for name in ("trtllm-llama31-8b-h100-fp8-128-128.json", "trtllm05-llama2-7b-h100-fp8-first-token-2048.json"):
        shutil.copy(DEFAULT_DIR / name, folder / name)
    (folder / "broken.json").write_text("{not json")
    cli = json.loads(_cli("--json", "--published-dir", str(folder)))
    before = pv.cached(folder)
    assert before["bad_files"] == cli["bad_files"] and len(cli["bad_files"]) == 1
    assert [r["id"] for r in before["rows"]] == [r["id"] for r in cli["rows"]]
    v = pv.published_view(before)
    assert v.bad == [f"bad file: {cli['bad_files'][0]}"] and [k.kind for k in v.kinds] == ["inference"]
    assert pv.cached(folder) is before  # once per server while the files stay as they are
    assert pv.runs("inference", folder) == 2 and pv.runs("training", folder) == 0
    (folder / "broken.json").unlink()
    after = pv.cached(folder)
    assert after is not before and after["bad_files"] == []
    assert pv.link_sentence("training", folder=folder) == ""  # no training run: no sentence


def test_the_link_sentence_counts_the_runs_and_reads_the_readers_language(cli_json):
    import ui

    for kind in ("training", "inference"):
        n = sum(r["kind"] == kind for r in cli_json["rows"])
        en = pv.link_sentence(kind)
        assert en == (f"How such times compared with {n} published runs: [Roofline → Against published measurements]"
                      f"(/Roofline?lang=en&rf_published=true#published).")
        zh = pv.link_sentence(kind, ui.gettext_for("zh"))
        assert f"{n} 次公开实测" in zh and "(/Roofline?lang=zh&rf_published=true#published)" in zh


def _est(**inputs):
    inp = view.Inputs(**inputs)
    return view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])


def test_the_training_and_serving_captions_end_with_the_link(bench_env, cli_json):
    import ui

    est = _est(batch=8, seq=512, new=32, gpus=1)
    n_train = sum(r["kind"] == "training" for r in cli_json["rows"])
    n_serve = sum(r["kind"] == "inference" for r in cli_json["rows"])
    tv = view.training(est, view.TrainingInputs(train=True, tokens=1e9))
    assert tv.caption.endswith(f"How such times compared with {n_train} published runs: [Roofline → Against published "
                               f"measurements](/Roofline?lang=en&rf_published=true#published).")
    sv = view.serving(est, view.ServingInputs(serve=True, engine="trtllm"))
    assert sv.caption.endswith(f"with {n_serve} published runs: [Roofline → Against published "
                               f"measurements](/Roofline?lang=en&rf_published=true#published).")
    zh = view.training(est, view.TrainingInputs(train=True, tokens=1e9), gettext=ui.gettext_for("zh"))
    assert zh.caption.endswith(f"这类时间与 {n_train} 次公开实测的对比：[屋顶线模型 → 与公开测量对比]"
                               f"(/Roofline?lang=zh&rf_published=true#published)。")
    assert "。 这类" not in zh.caption  # no English space after a Chinese full stop
