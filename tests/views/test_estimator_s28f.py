"""The LLM Estimator's presenter, review s28 (F): the page and `python -m gemmlib estimate` agree on a context-parallel
layout; interconnect names in the reader's language; the serving chart's own title; the training memory chart and
advice."""

from __future__ import annotations

import json
from collections import ChainMap

import pytest

from gemmlib.core.hardware import CATALOGUE
from gemmlib.views import estimator as view

LLAMA70 = dict(preset="llama-3-70b", pp=4, dp=8, batch=256, seq=4096, new=0)


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine: the GPU list is the catalogue's."""


def _cli(run_cli, *extra: str) -> dict:
    rc, out, err = run_cli(["estimate", "--preset", "llama-3-70b", "--pp", "4", "--dp", "8", "--batch", "256",
                            "--seq-len", "4096", "--new-tokens", "0", *extra, "--json"])
    assert rc == 0, err
    return json.loads(out)


def test_a_training_runs_cp_ranks_are_the_headlines_replicas_as_in_the_cli(run_cli):
    """llama-3-70b at PP 4, DP 8, CP 2: the page's headline TTFT was 11.4 s (the inference on DP 8 × PP 4 = 32 GPUs,
    the CP ranks left out), the CLI's 5.68 s (64 GPUs, the CP ranks as 16 data replicas)."""
    cli = _cli(run_cli, "--train", "--train-tokens", "1e12", "--cp", "2", "--virtual-stages", "2")
    inp = view.Inputs(**LLAMA70, train=True, cp=2)
    est = view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])
    assert est.gpus == cli["parallel"]["gpus"] == 64
    assert est.ttft_s == pytest.approx(cli["times"]["ttft_s"], rel=1e-12)
    # the whole JSON download, training run included, is the CLI's
    tr = view.TrainingInputs(train=True, tokens=1e12, cp=2, vs=2)
    assert json.loads(view.download_json(inp, view.model(inp), CATALOGUE[inp.gpu], None, tr)) == cli
    v = view.present(est, escape=str)
    assert "CP 2" in v.scaleout.title and "= 64 ×" in v.scaleout.title


def test_cp_without_a_training_run_changes_nothing(run_cli):
    """The CLI refuses --cp without --train; the page's CP box (in the Training tab) counts only with the run on."""
    cli = _cli(run_cli)
    inp = view.Inputs(**LLAMA70, train=False, cp=2)
    est = view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])
    assert est.gpus == 32 and est.ttft_s == pytest.approx(cli["times"]["ttft_s"], rel=1e-12)
    assert view.gpus_note(view.Inputs(**LLAMA70, gpus=32, train=True, cp=2)) is None  # the box is the layout's


def test_the_headline_reads_the_training_layout_a_link_gives_before_its_tab_draws():
    """On a link's first run the Training tab's CP box is not drawn yet when the headline is made: the page peeks
    what the widget will take (``ui.url.Fields.peek``, tested with link values in tests/pages/test_url_numbers_s28j.py)
    and the headline uses it."""
    state = {"le_preset": "llama-3-70b"}
    assert view.Inputs.from_state(view.headline_state(state, True, 2)).cp == 2
    assert view.Inputs.from_state(view.headline_state(ChainMap({"le_cp": 4}, state), True, 2)).cp == 2
    assert view.Inputs.from_state(view.headline_state(state, False, 1)).train is False


def fake(s: str) -> str:
    """A stand-in catalogue that marks every text it translates."""
    return f"«{s}»"


def test_a_link_across_nodes_is_named_in_the_readers_language_and_in_english_as_before():
    """The Scale-out tables showed "400 Gb/s InfiniBand NIC across 4 nodes, 1 per node" in English on the Chinese
    page: the name was an English f-string the catalogue could not translate. Now a Text: its English as before,
    its template (and the catalogue's link name inside it) translated."""
    from gemmlib.core.hardware import CATALOGUE as HW
    from gemmlib.core.i18n import Text

    ic = HW["H100 SXM"].interconnect
    ring, a2a = ic.link_for(4, 8, 8), ic.all_to_all_link(8, 2, 8)
    nic = ic.inter.name
    assert ring.name == f"{nic} across 4 nodes, 1 per node" and isinstance(ring.name, Text)
    assert ring.source == f"1 NIC(s) per node × {ic.inter.busbw / 1e9:g} GB/s; {ic.inter.source}"
    assert ring.name.render(fake) == f"««{nic}» across 4 nodes, 1 per node»"
    assert a2a.name == f"{nic} across 2 nodes, all-to-all" and a2a.name.render(fake) == f"««{nic}» across 2 nodes, all-to-all»"
    assert a2a.source.startswith("each rank's 4/8 off-node share through its own NIC of ")
    assert a2a.source.render(fake).startswith("«each rank's 4/8 off-node share through its own NIC of ")
    gb = f"{ic.inter.busbw / 1e9:g}"
    assert ring.source.render(fake) == f"«1 NIC(s) per node × {gb} GB/s; «{ic.inter.source}»»"

    inp = view.Inputs(**LLAMA70)
    v = view.present(view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu]), gettext=fake, escape=str)
    pp = next(r for r in v.scaleout.groups.rows if r["group"] == "PP")
    assert pp["link"] == f"««{nic}» across 2 nodes, 1 per node»"
    assert pp["source"] == f"«1 NIC(s) per node × {gb} GB/s; «{ic.inter.source}»»"
    sends = [r for r in v.scaleout.collectives.rows if r["group"] == "PP"]
    assert sends and all(r["link"] == f"««{nic}» across 2 nodes, 1 per node»" for r in sends)  # one stage boundary


def test_the_serving_chart_takes_its_title():
    """The serving chart was always titled "Serving up to the KV limit (N requests)": at a request rate the presenter
    patched the finished spec, and the Altair chart (the report's) could not say it at all."""
    from gemmlib.charts import scaleout as cs
    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm.accounting import Workload
    from gemmlib.llm.parallel import Parallel
    from gemmlib.llm.presets import from_name
    from gemmlib.llm.scaleout import estimate

    sv = estimate(from_name("llama-3-8b"), Workload(batch=8, seq_len=512, new_tokens=8), get_hardware("h100"),
                  Parallel(tp=2), serve=True, tpot_target_s=0.02).serving
    assert cs.serving_spec(sv)["title"] == f"Serving up to the KV limit ({sv.kv_limit:,} requests)"
    full = cs.serving_chart(sv, title="At 5 requests/s").to_dict()
    fast = cs.serving_spec(sv, title="At 5 requests/s")
    assert full["title"] == fast["title"] == "At 5 requests/s"
    assert cs.serving_spec(sv, gettext=fake)["title"].startswith("«Serving up to the KV limit")


def _legend(spec: dict) -> list[str]:
    return spec["layer"][0]["encoding"]["color"]["scale"]["domain"]


def test_the_memory_legends_name_only_the_parts_the_gpu_holds():
    """The training chart's legend listed "KV cache" (training keeps none: 0 bytes) and the inference chart's
    "gradients" and "optimizer state"; each part keeps its colour."""
    inp = view.Inputs(**LLAMA70)
    est = view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])
    tv = view.training(est, view.TrainingInputs(train=True), gettext=fake)
    assert _legend(tv.memory_chart) == ["«weights»", "«gradients»", "«optimizer state»", "«activations»", "«workspace»"]
    v = view.present(est, escape=str)
    assert _legend(v.scaleout.memory_chart) == ["weights", "KV cache", "activations", "workspace"]
    colours = dict(zip(_legend(v.scaleout.memory_chart), v.scaleout.memory_chart["layer"][0]["encoding"]["color"]
                       ["scale"]["range"], strict=True))
    assert colours["weights"] == "#4c78a8" and colours["KV cache"] == "#72b7b2"  # as in a full legend


@pytest.mark.parametrize(("kw", "left"), [
    ({}, "more GPUs (TP, PP, DP with ZeRO) or recomputation"),
    ({"zero": 1, "rc": "selective", "mb": 2}, "more GPUs (TP, PP, or more DP ranks for ZeRO 1 to shard across), a "
     "higher ZeRO stage (3 shards the weights too), full recomputation or a smaller micro-batch"),
    ({"zero": 3, "rc": "full"}, "more GPUs (TP, PP, or more DP ranks for ZeRO 3 to shard across)"),
    ({"zero": 3, "rc": "full", "rcl": 4}, "more GPUs (TP, PP, or more DP ranks for ZeRO 3 to shard across) or full "
     "recomputation of every layer"),
])
def test_a_training_run_that_does_not_fit_is_told_what_is_left_to_try(kw, left):
    """With ZeRO 3 and full recomputation on, the advice still read "more GPUs (TP, PP, DP with ZeRO), recomputation
    or a smaller micro-batch" (at a micro-batch of 1)."""
    inp = view.Inputs(**{**LLAMA70, "pp": 1, "dp": 2, "batch": 16})  # 70 B on 2 GPUs: nothing makes it fit
    est = view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])
    tv = view.training(est, view.TrainingInputs(train=True, **kw))
    assert not tv.fits
    assert tv.status.endswith(f"not reachable on this set-up: {left}."), tv.status


def test_a_measured_links_source_reads_in_the_readers_language_and_in_english_as_before():
    """The Scale-out group table's source of a measured link was an English f-string on the Chinese page."""
    from gemmlib.core import interconnect as ic

    m = ic.from_sweep([{"op": "all_reduce", "bytes": 8, "time_s": 2e-5, "busbw_gbps": 0.0004, "correct": True},
                       {"op": "all_reduce", "bytes": 1 << 28, "time_s": 1e-3, "busbw_gbps": 420.0, "correct": True}],
                      backend="nccl", device="cuda", device_name="NVIDIA H200", nproc=8)
    src = m.link().source
    assert src.startswith("measured here ") and src.endswith(
        " by `python -m gemmlib bench collective --nproc 8` (NCCL between the GPUs): best all_reduce busbw at "
        "268,435,456 B, latency at 8 B")
    assert src.render(fake).startswith("«measured here ") and "(«NCCL between the GPUs»)" in src.render(fake)
