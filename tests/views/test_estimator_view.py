"""The LLM Estimator's presenter (gemmlib.views.estimator) as plain data: its inputs, the one estimate, and
every tab's view model, against gemmlib's own estimate (the one-GPU accounting, the scale-out estimate with
training and serving, the CLI's --json) and through a stand-in gettext and escape."""

from __future__ import annotations

import itertools
import json
from dataclasses import fields, replace

import pytest

from gemmlib.charts.model import ops_records
from gemmlib.charts.scaleout import serving_records
from gemmlib.core import format as fmt
from gemmlib.core.errors import InputError
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU, get_hardware
from gemmlib.llm import accounting
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.scaleout import estimate as scaleout_estimate
from gemmlib.llm.training import Training
from gemmlib.views import estimator as view


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine: the GPU list is the catalogue's."""


def fake(s: str) -> str:
    """A stand-in catalogue that marks every text it translates (placeholders kept)."""
    assert s, "gettext('') is the catalogue's header: an empty text must stay empty"
    return f"«{s}»"


def esc(s) -> str:
    return f"<{s}>"


def _est(**inputs):
    inp = view.Inputs(**inputs)
    return view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])


# ----------------------------------------------------------------------------- inputs
def test_every_url_input_has_a_default_and_words():
    keys = {f"le_{f.name}" for cls in (view.Inputs, view.TrainingInputs, view.ServingInputs, view.CompareInputs)
            for f in fields(cls)}
    assert set(view.DEFAULTS) == keys | {"le_macs"}
    assert set(view.FIELDS) == set(view.DEFAULTS)  # every widget bound to the URL has its label and help
    for key, f in view.FIELDS.items():
        assert bool(f.label) != bool(f.name), key  # words to translate, or a name shown as written
        if isinstance(view.DEFAULTS[key], (int, float)) and not isinstance(view.DEFAULTS[key], bool) \
                and f.lo is not None:
            assert f.lo <= view.DEFAULTS[key] <= f.hi, key
    assert view.FIELDS["le_batch"].hi == view.MAXI["batch"] == 4096 and view.FIELDS["le_gpus"].name == "GPUs"


def test_inputs_are_read_from_the_widgets_state():
    state = {"le_batch": 8, "le_preset": "gpt2", "le_tokens": 1e10, "le_b_gpus": 4, "other": 1}
    assert view.Inputs.from_state(state) == view.Inputs(batch=8, preset="gpt2")  # the rest: defaults
    assert view.TrainingInputs.from_state(state).tokens == 1e10
    assert view.CompareInputs.from_state(state) == view.CompareInputs(b_gpus=4)
    assert view.Inputs().gpu == DEFAULT_GPU and view.Inputs().eff == DEFAULT_EFFICIENCY


def test_the_model_the_workload_and_the_parallel_sizes():
    assert view.model(view.Inputs(preset="gpt2")) == from_name("gpt2")
    gemma = view.model(view.Inputs(src="custom", layers=26, hidden=1152, heads=4, kv=1, hd=256, ffn=6912,
                                   vocab=262144, tied=True, sw=512, swp="5:1", qkn="head", npl=4))
    assert gemma.params == 999_885_952  # gemma-3-1b, exactly (its published count)
    with pytest.raises(InputError, match="KV heads"):
        view.model(view.Inputs(src="custom", kv=3))
    with pytest.raises(ValueError):
        view.model(view.Inputs(src="config.json"))
    cfg, hw = from_name("llama-3-8b"), get_hardware("h100")
    # the defaults are the CLI's: the engine convention, the checkpoint served as an engine serves it
    assert view.workload(view.Inputs(), cfg, hw) == accounting.Workload(
        batch=1, seq_len=1024, new_tokens=256, **{k: v for k, v in accounting.serving_dtypes(cfg, hw).items()
                                                  if k != "why"})
    assert view.workload(view.Inputs(), cfg, hw).overrides() == {}
    ref = view.workload(view.Inputs(conv="transformers"), cfg, hw)
    assert (ref.attention, ref.causal, ref.lm_head, ref.convention) == ("eager", False, "all", "transformers")
    wl = view.workload(view.Inputs(ctx=True, new=1, lmh="all", attn="eager", causal="dense"), cfg, hw)
    assert (wl.decode_only, wl.new_tokens, wl.lm_head, wl.weight_dtype) == (True, 1, "all", cfg.dtype or "bf16")
    assert set(wl.overrides()) == {"lm_head", "attention", "causal"}  # each widget off "auto" overrides
    assert view.parallel(view.Inputs(gpus=8)) == Parallel(tp=8)  # the GPUs alone: tensor parallel
    assert view.parallel(view.Inputs(gpus=8, tp=2, dp=4)).dp == 4
    # TP 8 with the GPUs left at 1: the GPUs follow the parallel sizes, and the page says so
    assert view.parallel(view.Inputs(tp=8)).gpus == 8 and _est(tp=8).gpus == 8
    words, n = view.gpus_note(view.Inputs(tp=8))
    assert n == 8 and "= **8** GPUs" in words and view.gpus_note(view.Inputs(gpus=8)) is None


def test_an_upload_is_parsed_and_a_huge_one_refused(tmp_path):
    data = json.dumps({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                       "num_attention_heads": 4, "vocab_size": 100}).encode()
    cfg, info = view.parse_upload(data, "tiny.json")
    assert cfg.name == "tiny" and cfg.layers == 2 and isinstance(info, dict)
    with pytest.raises(InputError, match="limit"):
        view.parse_upload(b" " * 1_100_000, "big.json")


def test_the_gpus_to_pick_from_are_the_catalogue_here():
    assert view.hardware_choices() == dict(CATALOGUE)


# ----------------------------------------------------------------------------- the one estimate and the headline
def test_the_estimate_is_the_accountings_on_one_gpu():
    est = _est()
    # the CLI's estimate with the same inputs: its defaults (the engine convention, the shape efficiency model)
    ref = accounting.estimate(from_name("llama-3-8b"), accounting.Workload(batch=1, seq_len=1024, new_tokens=256),
                              get_hardware("h100"))
    assert ref.efficiency_model and est.efficiency_model == ref.efficiency_model
    assert (est.prefill.flops, est.decode.flops) == (ref.prefill.flops, ref.decode.flops)
    assert est.prefill.time_s == pytest.approx(ref.prefill.time_s)
    assert est.decode.time_s == pytest.approx(ref.decode.time_s)
    v = view.present(est, escape=esc)
    assert [m.label for m in v.counts] == ["prefill FLOPs", "decode FLOPs", "memory per GPU",
                                           "GEMM share of prefill time"]
    assert v.counts[0].value == fmt.si(ref.prefill.flops) and v.counts[0].help == f"exactly {ref.prefill.flops:,}"
    assert v.times[0].value == fmt.duration(ref.prefill.time_s)
    assert v.times[1].value == fmt.duration(ref.decode.time_s / 256)
    assert v.fits and v.fit.startswith("Fits:") and v.counts[2].delta == "fits"
    assert "**<llama-3-8b>** — " in v.model and f"{ref.model.params:,} parameters" in v.model  # the name escaped
    assert "1 × <H100 SXM> · bf16**" in v.assumptions and "the engine convention" in v.assumptions
    assert "the efficiency model by shape" in v.assumptions and "overridden" not in v.assumptions
    # the reference convention with a flat efficiency forced: the old eager figure, and the headline says so
    old = _est(conv="transformers", flat=True, eff=DEFAULT_EFFICIENCY)
    eager = accounting.estimate(from_name("llama-3-8b"), accounting.Workload(
        batch=1, seq_len=1024, new_tokens=256, convention="transformers"), get_hardware("h100"),
        efficiency=DEFAULT_EFFICIENCY)
    assert (old.prefill.flops, old.prefill.time_s) == (eager.prefill.flops, pytest.approx(eager.prefill.time_s))
    words = view.present(old, escape=esc).assumptions
    assert "the reference convention" in words and "a flat efficiency of 70% for every op (forced)" in words
    over = view.present(_est(attn="eager"), escape=esc).assumptions
    assert "the engine convention" in over and "overridden: attention eager" in over


def test_macs_halve_the_counts_and_a_model_too_big_says_how_many_gpus():
    est = _est(preset="llama-3-70b")
    flops, macs = view.present(est, escape=esc), view.present(est, macs=True, escape=esc)
    assert macs.counts[0].label == "prefill MACs" and macs.counts[0].value == fmt.si(est.prefill.flops / 2)
    assert macs.ops.rows[0]["MACs"] == flops.ops.rows[0]["MACs"]  # the table keeps both, the chart switches
    assert not flops.fits and "at least 2 of them" in flops.fit and flops.counts[2].delta_color == "inverse"
    assert "not reachable" in flops.fit and all(m.delta == "not reachable" for m in flops.times)
    assert all(m.delta is None for m in view.present(_est(), escape=esc).times)


def test_the_download_is_the_clis_json(run_cli):
    est = _est(seq=512, new=4, gpus=4)
    rc, out, err = run_cli(["estimate", "--preset", "llama-3-8b", "--seq-len", "512", "--new-tokens", "4",
                            "--gpus", "4", "--json"])
    assert rc == 0, err
    v = view.present(est, escape=esc)
    inp = view.Inputs(seq=512, new=4, gpus=4)
    assert json.loads(view.download_json(inp, view.model(inp), CATALOGUE[inp.gpu])) == json.loads(out)
    assert v.stem == "estimate_llama-3-8b_b1_s512_n4"
    assert v.csv.splitlines()[0].startswith("phase,op,kind,M,N,K,count,FLOPs,MACs,value")
    assert len(v.csv.splitlines()) == 1 + len(ops_records(est))


# ----------------------------------------------------------------------------- the tabs
def test_the_ops_table_in_the_readers_language():
    est = _est(preset="gpt2", seq=128, new=8)
    v = view.present(est, gettext=fake, escape=esc)
    records = ops_records(est)
    assert len(v.ops.rows) == len(records)
    first = v.ops.rows[0]
    assert list(first)[-1] == "time" and "time_s" not in first and "value" not in first
    assert first["phase"] == "«prefill»" and first["kind"] in ("«not GEMM»", "«GEMM»")
    assert first["time"] == fmt.duration(records[0]["time_s"])
    assert v.ops.labels["bound"] == "«bound»" and v.ops.formats["FLOPs"] == "count"
    assert [m.label for m in v.times] == ["«time to first token»", "«per output token»", "«decode tokens/s»"]
    assert v.memory.startswith("««Weights: ")  # a sentence made of translated sentences


def test_memory_words_name_the_model_numbers():
    est = _est(preset="mistral-7b", wdt="int4")
    v = view.present(est, escape=esc)
    assert ("the decoder's linears in int4 (groups of 128, fp16 scale + 4-bit zero) with their scales, the rest "
            "(embedding, LM head, norms, routers) at bf16") in v.memory
    fp8 = view.present(_est(preset="mistral-7b", wdt="fp8"), escape=esc)
    assert ("the decoder's linears in fp8 (e4m3, a scale per tensor) with their scales, the rest (embedding, LM head, "
            "norms, routers) at bf16") in fp8.memory
    gib, mib = est.memory.weights_bytes / 2**30, est.memory.kv_cache_bytes / 2**20  # binary units, 3 digits
    assert 1 < gib < 1000 and 1 < mib < 1000
    assert f"**{gib:.3g} GiB**" in v.memory and f"**{mib:.3g} MiB**" in v.memory


def test_the_kv_line_names_each_layer_width_and_the_mixers_state():
    """A hybrid (Qwen3-Next: full attention every fourth layer, Gated DeltaNet elsewhere) caches K/V in some layers
    and a fixed state in the others: the line names both, and its numbers give the total it states."""
    import re

    from transformers import AutoConfig

    raw = json.loads(AutoConfig.for_model("qwen3_next").to_json_string())
    cfg, info = view.parse_upload(json.dumps(raw).encode(), "qwen3_next.json")
    est = view.estimate(view.Inputs(src="config.json", batch=4, seq=512, new=32, gpus=1), cfg, CATALOGUE["H100 SXM"],
                        info)
    text = view.present(est, escape=esc).memory
    parts = [(int(e.replace(",", "")), int(n)) for e, n in re.findall(r"([\d,]+) elements per token in (\d+) layers",
                                                                       text)]
    none = int(re.search(r"(\d+) layers keep none", text).group(1))
    state = int(re.search(r"fixed state adds ([\d,]+) elements", text).group(1).replace(",", ""))
    assert sum(n for _, n in parts) + none == cfg.layers and none == cfg.mixer_layer_count
    wl = est.workload
    total = (sum(e * n for e, n in parts) * wl.final_tokens + state) * 2 * wl.batch  # bf16 KV
    assert total == est.memory.kv_cache_bytes
    plain = view.present(_est(preset="llama-2-7b"), escape=esc).memory
    assert "by layer" not in plain and "fixed state" not in plain  # one width in every layer: the line as it was


def test_the_scale_out_tab_on_eight_gpus():
    est = _est(preset="llama-3-70b", batch=16, seq=2048, new=16, gpus=8)
    ref = scaleout_estimate(from_name("llama-3-70b"), accounting.Workload(batch=16, seq_len=2048, new_tokens=16),
                            get_hardware("h100"), Parallel(tp=8))
    so = view.present(est, escape=esc).scaleout
    assert so.title.startswith("**TP 8 × PP 1 × EP 1 × DP 1 = 8 × H100 SXM**")
    assert [m.label for m in so.metrics] == ["prefill time", "prefill communication", "decode time",
                                             "decode communication"]
    assert so.metrics[0].value == fmt.duration(ref.prefill.time_s)
    assert so.metrics[1].value == fmt.duration(ref.prefill.communication_s)
    assert so.groups.rows[0]["group"] == "TP" and "NVLink" in so.groups.rows[0]["link"]
    g = ref.to_dict()["parallel"]["groups"][0]
    assert so.groups.rows[0]["busbw_bytes_per_s"] == fmt.si(g["busbw_bytes_per_s"], "B/s") == "450 GB/s"
    assert so.groups.rows[0]["latency_s"] == fmt.duration(g["latency_s"]) and so.groups.wide == ("source",)
    ops = {r["op"] for r in so.collectives.rows}
    assert "all_reduce" in ops and not {"busbw", "latency_s"} & set(so.collectives.rows[0])
    first = next(c for c in ref.prefill.collectives if c.op == "all_reduce")
    row = next(r for r in so.collectives.rows if r["op"] == "all_reduce")
    assert (row["size_bytes"], row["time_s"]) == (fmt.nbytes(first.size_bytes), fmt.duration(first.time_s))
    assert set(so.collectives.labels) >= set(so.collectives.rows[0])  # every column has its header
    assert f"Weights {ref.per_gpu.weights_bytes / 2**30:.3g} GiB" in so.memory and so.comm_chart is not None


def test_the_scale_out_tab_says_when_not_one_sequence_fits():
    """405B on 8 × 80 GB: 101 GB of weights per GPU leave no room; the sentence said 'Largest batch
    that fits: **0**'."""
    so = view.present(_est(preset="llama-3.1-405b", batch=1, seq=2048, new=16, gpus=8), escape=esc).scaleout
    assert "No batch fits, not even 1." in so.memory and "Largest batch" not in so.memory
    so = view.present(_est(preset="llama-3-70b", batch=16, seq=2048, new=16, gpus=8), escape=esc).scaleout
    assert "Largest batch that fits: **" in so.memory and "No batch fits" not in so.memory


def test_one_gpu_has_no_communication_view():
    so = view.present(_est(), escape=esc).scaleout
    assert so.groups is None and so.comm_chart is None and so.collectives is None
    assert so.metrics[1].value == fmt.duration(0.0)


def test_switches_and_rules_of_thumb():
    v = view.present(_est(), gettext=fake, escape=esc)
    selected = [r for r in v.variants.rows if r["selected"]]
    assert len(selected) == 1 and selected[0]["lm_head"] == "«last»"  # the engine convention's
    ref = [r for r in view.present(_est(conv="transformers"), gettext=fake, escape=esc).variants.rows if r["selected"]]
    assert len(ref) == 1 and ref[0]["lm_head"] == "«all»"
    assert v.rules.rows and v.rules.columns == ("rule", "value", "exact", "ratio", "reason")
    assert all(r["rule"].startswith("«") for r in v.rules.rows)
    assert not view.present(_est(ctx=True, seq=4096, new=1), escape=esc).rules.rows  # decode only: no prefill


def test_what_was_read_is_escaped():
    est = _est(src="custom", sw=512, swp="5:1")
    r = view.present(est, escape=esc).read
    assert r.title == "What was read: <custom>"
    rows = dict(r.rows)
    assert rows["attention"].startswith("<") and "sliding" in rows["attention"]
    assert r.header == "read" and r.warnings == []


def test_what_was_read_shows_a_hybrids_mixer_state_and_a_vl_models_vision_tower():
    from pathlib import Path

    configs = Path(__file__).resolve().parents[1] / "data" / "configs"
    cfg, info = view.parse_upload((configs / "qwen3-next-80b-a3b.json").read_bytes(), "qwen3-next.json")
    est = view.estimate(view.Inputs(src="config.json", gpus=4), cfg, CATALOGUE["H100 SXM"], info)
    mixer = est.read()["mixer"]
    rows = dict(view.present(est, escape=esc).read.rows)
    assert f"in {mixer['layers']} layers" in rows["mixer"] and fmt.count(mixer["state_per_sequence"]) in rows["mixer"]
    assert "instead of a KV cache" in rows["mixer"] and rows["vision tower"] == esc(fmt.DASH)
    cfg, info = view.parse_upload((configs / "qwen3-vl-4b.json").read_bytes(), "qwen3-vl.json")
    est = view.estimate(view.Inputs(src="config.json"), cfg, CATALOGUE["H100 SXM"], info)
    vision = est.read()["vision"]
    rows = dict(view.present(est, escape=esc).read.rows)
    assert rows["vision tower"].startswith(f"<{fmt.count(sum(vision.values()))} parameters")
    assert rows["mixer"] == esc(fmt.DASH)
    # LLaVA-1.5-7B's shape (a CLIP ViT-L/14-336 named by vision_config's model_type, Vicuna's Llama decoder): the tower
    # and its projector beside the decoder: 7,063,427,072 together, numel() of LlavaForConditionalGeneration at this
    # shape on the meta device (transformers 5.24)
    llava = {"model_type": "llava", "vision_feature_layer": -2, "text_config": {
        "model_type": "llama", "vocab_size": 32064, "max_position_embeddings": 4096},
        "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096,
                          "num_hidden_layers": 24, "num_attention_heads": 16, "image_size": 336, "patch_size": 14}}
    cfg, info = view.parse_upload(json.dumps(llava).encode(), "llava.json")
    est = view.estimate(view.Inputs(src="config.json"), cfg, CATALOGUE["H100 SXM"], info)
    rows = dict(view.present(est, escape=esc).read.rows)
    assert rows["vision tower"].startswith(f"<{fmt.count(324_487_168)} parameters")
    assert cfg.params + 324_487_168 == 7_063_427_072


def test_training_matches_the_scale_out_estimate_with_training():
    est = _est(batch=32, new=64, gpus=8)
    tin = view.TrainingInputs(train=True, tokens=1e10, rc="selective", zero=1)
    tv = view.training(est, tin)
    ref = scaleout_estimate(from_name("llama-3-8b"), accounting.Workload(batch=32, seq_len=1024, new_tokens=64),
                            get_hardware("h100"), Parallel(tp=8), gpus=8,
                            training=Training(tokens=1e10, recompute="selective", zero=1)).train.to_dict()
    assert [m.label for m in tv.metrics] == ["step FLOPs", "step time", "MFU", "tokens/s", "GPU-hours"]
    assert tv.metrics[0].value == fmt.si(ref["step_flops"]) and tv.metrics[2].value == fmt.percent(ref["mfu"], 1)
    assert tv.metrics[4].value == fmt.si(ref["gpu_hours"])
    assert f"Step time **{fmt.duration(ref['step_time_s'])}**" in tv.words
    assert tv.fits and tv.status.startswith("Fits:") and all(m.delta is None for m in tv.metrics)
    # a set-up that does not fit says so first, and its times are marked as not reachable
    big = view.training(_est(preset="llama-3-70b", batch=8), view.TrainingInputs(train=True, tokens=1e10))
    ref_big = scaleout_estimate(from_name("llama-3-70b"), accounting.Workload(batch=8, seq_len=1024, new_tokens=256),
                                get_hardware("h100"), training=Training(tokens=1e10)).train
    assert not ref_big.memory.fits and not big.fits and big.status.startswith("**Does not fit**")
    assert [m.delta for m in big.metrics] == [None] + ["not reachable"] * 4
    with pytest.raises(InputError, match="does not split"):
        view.training(_est(batch=6, gpus=8, tp=2, dp=4), tin)


def test_the_training_words_give_the_data_parallel_time_the_step_pays_as_the_cli_does(run_cli):
    """The words said "communication 15.2 s (data parallel 91 ms)" where 4.55 ms of the 91 ms was exposed: the whole DP
    time read as part of the exposed communication. They now say it as `estimate --train` does."""
    est = _est(preset="llama-3.2-1b", batch=64, seq=1024, gpus=8, dp=8, gpu="H100 SXM")
    tv = view.training(est, view.TrainingInputs(train=True, tokens=1e9))
    rc, out, err = run_cli(["estimate", "--preset", "llama-3.2-1b", "--batch", "64", "--seq-len", "1024", "--gpus", "8",
                            "--dp", "8", "--gpu", "H100 SXM", "--new-tokens", "256", "--train", "--train-tokens", "1e9",
                            "--json"])
    assert rc == 0, err
    cli = json.loads(out)["train"]
    dp = cli["exposed_by_group"]["dp"]
    assert 0 < dp["exposed_s"] < dp["total_s"]
    assert (f"(data parallel {fmt.duration(dp['exposed_s'])} of its {fmt.duration(dp['total_s'])}, the rest hidden)"
            in tv.words), tv.words


def test_training_counts_no_overlap_or_module_the_layout_or_model_lacks():
    """The TP and EP overlaps at TP or EP 1 (their widgets grey out) and a recomputed module the model lacks (moe on
    a dense model) count for nothing and refuse nothing: the step equals the one without them, and the words say
    which module was left out."""
    est = _est(batch=8, gpus=1)
    plain = view.training(est, view.TrainingInputs(train=True, tokens=1e10, rc="selective", rcm=("mlp",)))
    extra = view.training(est, view.TrainingInputs(train=True, tokens=1e10, rc="selective", rcm=("mlp", "moe"),
                                                   tpo=True, epo="megatron", epsm=20))
    assert [m.value for m in extra.metrics] == [m.value for m in plain.metrics]
    assert extra.words.endswith("Left out of the recomputed modules, as llama-3-8b has no such part: moe.")
    assert "Left out" not in plain.words and "overlapped" not in extra.words
    # a MoE model's element-wise modules are its own (a first cut read only the GEMMs and dropped them)
    moe = _est(preset="qwen3-30b-a3b", batch=8, gpus=1)
    kept = view.training(moe, view.TrainingInputs(train=True, tokens=1e10, rc="selective", rcm=("layernorm", "moe_act")))
    assert "Left out" not in kept.words
    ref = view.training(moe, view.TrainingInputs(train=True, tokens=1e10, rc="selective"))  # core_attn alone
    assert [m.value for m in kept.metrics][1] != [m.value for m in ref.metrics][1]  # their recomputation is timed


def test_serving_matches_the_scale_out_estimate_with_a_target():
    est = _est(batch=32, new=64, gpus=8)
    sv = view.serving(est, view.ServingInputs(serve=True, tpot=20))
    ref = scaleout_estimate(from_name("llama-3-8b"), accounting.Workload(batch=32, seq_len=1024, new_tokens=64),
                            get_hardware("h100"), Parallel(tp=8), gpus=8, tpot_target_s=0.02).serving
    assert sv.best.startswith(f"Best concurrency under 20 ms per token: **{ref.best.concurrency:,}** requests")
    assert sv.none is None and sv.table.rows == serving_records(ref)
    assert sv.table.labels["TPOT ms"] == "TPOT ms"
    none = view.serving(est, view.ServingInputs(serve=True, tpot=0.01))
    assert none.best is None and none.none.startswith("No concurrency up to the KV limit")


def test_serving_and_training_take_the_clis_engine_rate_and_layout_inputs():
    """The Serving tab's engine, request rate and KV block size, and the Training tab's virtual stages, reach the
    library as --engine, --request-rate, --kv-block-size and --virtual-stages do."""
    from gemmlib.llm.serving import Engine

    est = _est(batch=8, seq=512, new=32, gpus=2)
    sv = view.serving(est, view.ServingInputs(serve=True, tpot=0, engine="trtllm", rate=4.0, kvb=64))
    ref = scaleout_estimate(from_name("llama-3-8b"), accounting.Workload(batch=8, seq_len=512, new_tokens=32),
                            get_hardware("h100"), Parallel(tp=2), gpus=2)
    from gemmlib.llm.serving import serving as serving_curve

    want = serving_curve(ref.model, ref.workload, ref.hardware, ref.parallel, None, engine=Engine("trtllm", 64),
                         request_rate=4.0, memory_utilization=ref.memory_utilization)
    assert want.engine.name == "trtllm" and want.pool.block_size == 64 and len(want.points) == 1
    assert sv.table.rows == serving_records(want)
    est = _est(preset="llama-3-70b", batch=16, seq=512, new=4, gpus=8, tp=2, pp=4)
    tv = view.training(est, view.TrainingInputs(train=True, tokens=1e10, vs=2))
    want = scaleout_estimate(from_name("llama-3-70b"), accounting.Workload(batch=16, seq_len=512, new_tokens=4),
                             get_hardware("h100"), Parallel(tp=2, pp=4, virtual_stages=2), gpus=8,
                             training=Training(tokens=1e10)).train.to_dict()
    assert want["virtual_stages"] == 2 and tv.metrics[1].value == fmt.duration(want["step_time_s"])
    flat = view.training(est, view.TrainingInputs(train=True, tokens=1e10))
    assert flat.metrics[1].value != tv.metrics[1].value  # interleaving shrinks the bubble


def test_a_vs_b_at_twice_the_batch():
    a = _est()
    cv = view.compare(a, view.CompareInputs(cmp=True, b_preset="llama-3-8b", b_batch=2, b_gpu="H100 SXM", b_gpus=1),
                      CATALOGUE["H100 SXM"], gettext=fake)
    b = accounting.estimate(from_name("llama-3-8b"), accounting.Workload(batch=2, seq_len=1024, new_tokens=256),
                            get_hardware("h100"), efficiency=DEFAULT_EFFICIENCY)
    rows = {r["«quantity»"]: r for r in cv.table.rows}
    assert cv.table.index == "«quantity»"
    assert rows["«prefill FLOPs»"]["B/A"] == fmt.ratio(b.prefill.flops / a.prefill.flops)
    assert rows["«fits in memory»"]["A"] == "«yes»" and rows["«model»"]["B"] == "llama-3-8b"
    assert view.PARTS == {"training": view.training, "serving": view.serving, "compare": view.compare,
                          "models": view.models_curve}


def test_b_starts_as_a_copy_of_a_and_names_what_differs():
    """B at its defaults is A (the model and weights "as A", A's defaults): every figure the same, B/A 1×,
    nothing highlighted; an uploaded or custom model is B's too. A changed input is named and highlighted."""
    a = _est(src="custom", layers=4, hidden=512, heads=8, ffn=1024, vocab=1000, ctx=True, seq=300, new=7)
    copy = view.CompareInputs(cmp=True, b_seq=300, b_new=7)
    cv = view.compare(a, copy, CATALOGUE[view.DEFAULT_GPU])
    rows = {r["quantity"]: r for r in cv.table.rows}
    assert cv.differs == () and "copy of A" in cv.words
    assert rows["model"]["B"] == rows["model"]["A"] == a.model.name  # a custom model is not in the presets
    for q in ("time to first token", "per output token", "decode FLOPs", "KV cache at the end"):
        assert rows[q]["A"] == rows[q]["B"], q
    assert rows["decode FLOPs"]["B/A"] == fmt.ratio(1.0)
    assert rows["prefill FLOPs"]["B"] == rows["prefill FLOPs"]["A"]  # decode-only follows A: no prefill in either
    assert cv.table.labels["B/A"] == "B/A (×)"
    cv2 = view.compare(a, replace(copy, b_batch=4, b_gpu="H200 SXM"), CATALOGUE["H200 SXM"])
    assert cv2.differs == ("le_b_batch", "le_b_gpu") and "B batch, B GPU" in cv2.words


def test_turning_b_on_copies_a():
    state = {"le_batch": 8, "le_seq": 512, "le_new": 64, "le_gpu": "H100 SXM", "le_gpus": 1, "le_tp": 2, "le_dp": 2}
    assert view.b_copy_of_a(state) == {"le_b_preset": view.SAME, "le_b_wdt": view.SAME, "le_b_batch": 8,
                                       "le_b_seq": 512, "le_b_new": 64, "le_b_gpu": "H100 SXM", "le_b_gpus": 4}


def test_several_models_on_one_throughput_chart():
    """Each point is the estimate at that batch (checked against the estimator called directly), a line stops at
    the largest batch that fits, and a model that fits at no batch is named."""
    inp = view.Inputs(gpu="H100 SXM")
    a = view.estimate(inp, view.model(inp), CATALOGUE["H100 SXM"])
    mv = view.models_curve(a, inp, ("mistral-7b", "llama-3-70b", "llama-3-8b"))
    rows = mv.chart["datasets"]["rows"]
    by = {}
    for r in rows:
        by.setdefault(r["model"], []).append(r)
    assert list(by) == ["llama-3-8b", "mistral-7b"] and "llama-3-70b" in mv.words  # 140 GB does not fit on one H100
    for name, pts in by.items():
        assert [p["batch"] for p in pts] == list(view.MODEL_BATCHES[:len(pts)])
        last = pts[-1]["batch"]
        cfg = from_name(name)
        one = scaleout_estimate(cfg, accounting.Workload(batch=last, seq_len=1024, new_tokens=256),
                                CATALOGUE["H100 SXM"], Parallel(), gpus=1)
        assert pts[-1]["tokens/s"] == pytest.approx(one.times()["decode_tokens_per_s"], rel=1e-12) and one.per_gpu.fits
        if last < view.MODEL_BATCHES[-1]:
            over = scaleout_estimate(cfg, accounting.Workload(batch=2 * last, seq_len=1024, new_tokens=256),
                                     CATALOGUE["H100 SXM"], Parallel(), gpus=1)
            assert not over.per_gpu.fits
        assert all(b["tokens/s"] > a["tokens/s"] for a, b in itertools.pairwise(pts))  # batching pays at decode


def test_a_picked_op_is_drawn_large_on_the_roofline():
    v = view.present(_est(), escape=esc)
    assert v.flops_chart["params"] == [{"name": "pick", "select": {"type": "point", "fields": ["op", "phase"]}}]
    assert view.picked({"pick": [{"op": "q_proj", "phase": "prefill", "value": 1}]}) == ("q_proj", "prefill")
    assert view.picked({}) is None and view.picked(None) is None and view.picked({"pick": [{"x": 1}]}) is None
    plain = view.roofline_view(v, None)
    assert plain.chart == v.roofline_chart and "Click a bar" in plain.words
    rv = view.roofline_view(v, ("down_proj", "decode"))
    point = next(layer for layer in rv.chart["layer"] if layer["mark"]["type"] == "point")
    assert point["encoding"]["size"]["condition"]["test"] == 'datum.op === "down_proj" && datum.phase === "decode"'
    hit = next(p for p in v.roofline_chart["datasets"]["pts"] if (p["op"], p["phase"]) == ("down_proj", "decode"))
    assert rv.words.startswith(f"**down_proj** (decode): {fmt.number(hit['intensity'])} FLOP/B")
    assert "memory-bound" in rv.words  # decode's GEMV reads the weights
    untouched = next(layer for layer in v.roofline_chart["layer"] if layer["mark"]["type"] == "point")
    assert "size" not in untouched["encoding"]  # the presenter's chart is not edited in place
    assert view.roofline_view(v, ("no_such_op", "prefill")).chart == v.roofline_chart


@pytest.mark.parametrize("preset", ["llama-3-8b", "deepseek-v3"])
def test_the_roofline_legend_names_the_ops_it_plots(preset):
    """The roofline's colour legend lists the ops drawn, each one (a reviewer saw 88 entries, MLA's and Gemma 3n's
    among Llama's, cut by Vega-Lite's symbol limit before o_proj); its title names the shape model, not a flat 1."""
    v = view.present(_est(preset=preset), escape=esc)
    point = next(layer for layer in v.roofline_chart["layer"] if layer["mark"]["type"] == "point")
    drawn = {p["op"] for p in v.roofline_chart["datasets"]["pts"]}
    legend = point["encoding"]["color"]["legend"]
    assert set(legend["values"]) == drawn and legend["symbolLimit"] == 0
    assert "o_proj" in legend["values"] and ("q_a_proj" in legend["values"]) == (preset == "deepseek-v3")
    assert "each op at its shape's efficiency" in v.roofline_chart["title"]


def test_every_label_goes_through_gettext():
    """Not vacuous: with the stand-in catalogue, no label, help, title or table header is left untranslated
    (numbers, units and names aside)."""
    est = _est(preset="llama-3-70b", batch=16, seq=2048, new=16, gpus=8)
    v = view.present(est, gettext=fake, escape=esc)
    metrics = v.times + v.counts + [m for m in v.scaleout.metrics if m]
    assert all(m.label.startswith("«") for m in metrics)
    assert all(m.help.startswith("«") for m in metrics if m.help)
    for t in (v.ops, v.variants, v.rules, v.scaleout.groups, v.scaleout.collectives):
        assert all(h.startswith("«") or h == "lm_head" for h in t.labels.values()), t.labels
    assert v.fit.startswith("«") and v.scaleout.title.startswith("«") and v.read.title.startswith("«")


def test_the_pages_cache_keys_name_every_field():
    """The page keys its cached calls on the inputs' repr (view.CACHE_KEYS): sound only if every field of every
    dataclass reachable from them is in the repr, and two inputs that differ anywhere have different keys."""
    import dataclasses
    import typing

    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm.presets import from_name

    seen: set[type] = set()

    def walk(cls: type) -> None:
        if cls in seen or not dataclasses.is_dataclass(cls):
            return
        seen.add(cls)
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            assert f.repr, f"{cls.__name__}.{f.name} is left out of the repr"
            for arg in (hints.get(f.name), *typing.get_args(hints.get(f.name))):
                if isinstance(arg, type):
                    walk(arg)

    assert view.CACHE_KEYS
    for cls, key in view.CACHE_KEYS.items():
        assert key is repr
        walk(cls)
    assert len(seen) > len(view.CACHE_KEYS)  # the walk reached nested dataclasses (the quantization, the links)
    a, b = from_name("llama-2-7b"), from_name("llama-2-13b")
    assert repr(a) == repr(from_name("llama-2-7b")) and repr(a) != repr(b)
    assert repr(dataclasses.replace(a, vocab=a.vocab + 1)) != repr(a)
    h = get_hardware("h100")
    assert repr(h) != repr(dataclasses.replace(h, bandwidth=h.bandwidth * 1.01))


def test_what_was_read_shows_phi4_multimodals_image_and_audio_encoders():
    import json

    from transformers import AutoConfig

    raw = json.loads(AutoConfig.for_model("phi4_multimodal").to_json_string())
    cfg, info = view.parse_upload(json.dumps(raw).encode(), "phi4mm.json")
    est = view.estimate(view.Inputs(src="config.json"), cfg, CATALOGUE["H100 SXM"], info)
    read = est.read()
    rows = dict(view.present(est, escape=esc).read.rows)
    assert rows["vision tower"].startswith(f"<{fmt.count(sum(read['vision'].values()))} parameters")
    assert rows["audio tower"].startswith(f"<{fmt.count(466_432_256)} parameters")
    assert "subsampling" in rows["audio tower"] and "per audio clip" in rows["audio tower"]
    # a model without an audio tower has no audio row
    cfg, info = view.parse_upload(json.dumps(dict(raw, model_type="phi3")).encode(), "phi3.json")
    est = view.estimate(view.Inputs(src="config.json"), cfg, CATALOGUE["H100 SXM"], info)
    assert "audio tower" not in dict(view.present(est, escape=esc).read.rows)


_NEW_FAMILIES = {  # config classes' defaults (with what a released file sets where they are not a model), and GPUs
    "rwkv": ({}, 1), "recurrent_gemma": (dict(intermediate_size=15360, num_key_value_heads=1), 1),
    "olmo_hybrid": ({}, 1), "gpt_neox_japanese": ({}, 1), "mistral4": ({}, 8), "qwen2_5_vl": ({}, 4), "glm4v": ({}, 1),
    "inkling_text": ({}, 32), "inkling_mm_model": ({}, 32), "inkling2_text": ({}, 16), "inkling2": ({}, 16),
    "inkling2_loop_text": ({}, 1), "dory": ({}, 1), "hrm_text": ({}, 1),
    # Qwen4-Exp: its class builds an indexer in every attention layer, so a file states one (and here a PLE layer)
    "qwen4_exp_text": (dict(indexer_n_heads=16, indexer_kv_heads=1, indexer_head_dim=128, indexer_budget=2048,
                            indexer_compress_ratio=64, ple_layer_ids=[2], eos_token_id=248044,
                            rope_parameters={"rope_type": "default", "rope_theta": 1e7,
                                             "partial_rotary_factor": 0.25}), 4),
    "dots3_note_text": ({}, 8), "dots3_note": ({}, 8), "zaya": ({}, 1),
    "step3p7": (dict(text_config=dict(layer_types=["sliding_attention", "full_attention"] * 22 + ["full_attention"],
                                      sliding_window=512, num_sliding_attention_heads=96)), 8),
    # Mistral Large 4 (1T): NoPE every fourth layer, and here the last four layers reading earlier latents
    "mistral_large4": (dict(text_config=dict(kv_source_layers=list(range(68)) + [64, 65, 66, 67])), 64),
    "chameleon": (dict(vocabulary_map={"<image>": 8711}), 1),
    "diffllama": ({}, 1),  # DiffLlama: two attention calls per head
    "modernbert-decoder": ({}, 1),  # ModernBERT's decoder: a prediction head before the LM head
    "jetmoe": ({}, 2),  # JetMoE: a mixture of attention heads beside the MLP experts
    "zamba": ({}, 1),  # Zamba: Mamba layers, one shared attention-and-MLP block
    "zamba2": (dict(num_mem_blocks=2, use_shared_attention_adapter=True), 1),  # Zamba2-2.7B's blocks and adapters
    "ernie4_5_vl_moe": ({}, 1),  # ERNIE 4.5 VL: image experts stored beside the text ones
    "glm5_next": ({}, 16),  # GLM-5.3-Flash: KDA beside NoPE MLA under an indexer over pools, hyper-connections
}


@pytest.mark.parametrize("model_type", list(_NEW_FAMILIES))
def test_an_uploaded_config_of_each_newly_read_family_is_sized_end_to_end(model_type):
    """The page's path for a config.json of a family read this round (RWKV's and RecurrentGemma's mixers, OLMo
    Hybrid's DeltaNet, GPT-NeoX-Japanese, Mistral 4's MLA, the Qwen2.5-VL and GLM-4.1V wrappers, Inkling's short
    convolutions and relative bias): upload, estimate,
    the presented model line and what-was-read rows, a training step and the serving curve — each with the model's
    parameter count."""
    import json

    from transformers import AutoConfig

    keys, gpus = _NEW_FAMILIES[model_type]
    raw = json.loads(AutoConfig.for_model(model_type, **keys).to_json_string())
    cfg, info = view.parse_upload(json.dumps(raw).encode(), f"{model_type}.json")
    est = view.estimate(view.Inputs(src="config.json", batch=4, seq=512, new=32, gpus=gpus), cfg, CATALOGUE["H100 SXM"],
                        info)
    shown = view.present(est, escape=esc)
    assert f"{cfg.params:,} parameters" in shown.model and f"{cfg.params:,} parameters" in shown.memory
    rows = dict(shown.read.rows)
    assert rows["family"] and (rows["mixer"] != esc(fmt.DASH)) == (cfg.mixer is not None)
    assert ("short convolutions" in rows and "relative bias" in rows) == bool(cfg.short_conv)  # Inkling's
    assert ("n-gram embeddings" in rows and "QSA" in rows["sparse attention"]) == bool(cfg.ngram_layers)  # Qwen4-Exp's
    assert ("the sliding layers:" in rows["MLA"]) == (cfg.has_sliding_shape and cfg.is_mla)  # Dots 3 Note's
    assert ("convolutional attention" in rows) == bool(cfg.cca_depthwise)  # ZAYA's
    assert ("query heads in the sliding layers" in rows["attention"]) == bool(cfg.sliding_heads and not cfg.is_mla)
    assert ("without rotary dims" in rows["MLA"]) == ("J" in cfg.layer_types and cfg.rope_head_dim > 0)  # ML4's
    assert ("latent of an earlier layer" in rows.get("K/V reuse", "")) == ("j" in cfg.layer_types)
    assert ("over pools" in rows["sparse attention"]) == bool(cfg.index_kpool)  # GLM-5-Next's
    assert ("image experts" in rows["experts"]) == bool(cfg.vision_expert_ffn)  # ERNIE 4.5 VL's
    assert ("shared blocks" in rows) == bool(cfg.shared_blocks)  # Zamba2's
    assert ("differential attention" in rows["attention"]) == cfg.diff_attention  # DiffLlama's
    assert ("prediction head" in rows) == cfg.head_dense  # ModernBERT decoder's
    assert ("mixture of attention heads" in rows["attention"]) == bool(cfg.attn_experts)  # JetMoE's
    assert ("no rotary dims" in rows["MLA"]) == (cfg.is_mla and not cfg.rope_head_dim)
    tv = view.training(est, view.TrainingInputs(train=True, tokens=1e9))
    assert tv.metrics[0].label == "step FLOPs" and tv.metrics[0].value
    sv = view.serving(est, view.ServingInputs())
    assert sv.table.rows and all(r["tokens/s"] > 0 for r in sv.table.rows)
