"""The LLM Estimator page through AppTest: render, deep links, widgets, upload, A vs B, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core import format as fmt
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload, estimate
from gemmlib.llm.presets import PUBLISHED_PARAMS, from_name

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "4_LLM_Estimator.py")
DATA = ROOT / "tests" / "data"


def _page_workload(**fields) -> Workload:
    """The workload the page builds from its widgets' defaults: the library's (and the CLI's) defaults, the
    engine convention; the estimates below take the library's default efficiency too (the shape model)."""
    return Workload(**fields)


def _app(**query) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = str(v)
    return at.run()


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_default_render_shows_the_default_preset():
    at = _app()
    _ok(at)
    m = _metrics(at)
    est = estimate(from_name("llama-3-8b"), _page_workload(batch=1, seq_len=1024, new_tokens=256), get_hardware("h100"))
    assert m["prefill FLOPs"] == f"{est.prefill.flops / 1e12:.3g} T"
    assert m["decode FLOPs"] == f"{est.decode.flops / 1e12:.3g} T"
    assert any(f"{PUBLISHED_PARAMS['llama-3-8b']:,} parameters" in md.value for md in at.markdown)
    assert [t.label for t in at.tabs] == ["FLOPs by op", "Memory", "Roofline", "Scale-out", "Training", "Serving",
                                          "Switches & rules of thumb", "A vs B", "Download"]


def test_deep_link_sets_the_view_and_widgets_write_the_url():
    at = _app(le_preset="gpt2", le_batch=4, le_seq=128, le_new=0, le_macs="true", le_gpu="A100 SXM 80GB")
    _ok(at)
    est = estimate(from_name("gpt2"), _page_workload(batch=4, seq_len=128, new_tokens=0), get_hardware("a100"))
    m = _metrics(at)
    assert m["prefill MACs"] == f"{est.prefill.macs / 1e9:.3g} G"
    assert m["per output token"] == "—"
    assert at.selectbox(key="le_gpu").value == "A100 SXM 80GB"
    at.number_input(key="le_batch").set_value(16).run()
    _ok(at)
    # bound to ?le_batch=: the browser writes the URL (tests/browser/test_browser_estimator.py checks it)
    assert at.number_input(key="le_batch").proto.query_param_key == "le_batch"


def test_bad_query_values_fall_back_to_defaults():
    at = _app(le_preset="no-such-model", le_batch="-4", le_eff="7", le_gpu="TPU")
    _ok(at)
    assert at.selectbox(key="le_preset").value == "llama-3-8b"
    assert at.number_input(key="le_batch").value == 1


def test_custom_model_and_bad_heads_message():
    at = _app(le_src="custom")
    _ok(at)
    at.number_input(key="le_kv").set_value(3).run()
    assert not at.exception
    assert any("KV heads" in e.value for e in at.error)
    at.number_input(key="le_kv").set_value(8).run()
    _ok(at)
    at.number_input(key="le_experts").set_value(8).run()
    assert any("experts per token" in e.value for e in at.error)
    at.number_input(key="le_topk").set_value(2).run()
    _ok(at)


@pytest.mark.parametrize("key, value", [
    ("le_batch", 1), ("le_batch", 4096), ("le_seq", 1), ("le_seq", 1_048_576), ("le_new", 0),
    ("le_new", 1_048_576), ("le_gpus", 4096), ("le_eff", 0.05),
])
def test_inputs_at_their_extremes(key, value):
    at = _app(le_flat="true") if key == "le_eff" else _app()  # (the slider acts with the flat override on)
    w = at.slider(key=key) if key == "le_eff" else at.number_input(key=key)
    w.set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]


def test_switches_dtypes_and_gpus():
    at = _app()
    at.selectbox(key="le_causal").set_value("dense").run()
    at.selectbox(key="le_lmh").set_value("all").run()
    md = " ".join(m.value for m in at.markdown)
    assert "the engine convention" in md and "overridden: attention counting dense, LM head in the prefill all" in md
    at.selectbox(key="le_wdt").set_value("int8").run()
    at.selectbox(key="le_gpu").set_value("H200 SXM").run()
    _ok(at)
    at.selectbox(key="le_adt").set_value("fp8").run()
    at.selectbox(key="le_gpu").set_value("A100 SXM 80GB").run()  # no fp8 on an A100: a message, not a crash
    assert not at.exception
    assert any("fp8" in e.value for e in at.error)


def test_upload_config_json_good_and_bad():
    at = _app(le_src="config.json")
    _ok(at)
    up = at.file_uploader(key="le_upload")
    up.set_value(("config.json", (DATA / "config_mixtral-8x7b.json").read_bytes(), "application/json")).run()
    _ok(at)
    assert any(f"{PUBLISHED_PARAMS['mixtral-8x7b']:,} parameters" in s.value for s in at.success)
    for content, words in ((b"{ not json", "not valid JSON"),
                           ((DATA / "config_wrong_type.json").read_bytes(), "hidden_size"),
                           (b"{}" + b" " * 1_100_000, "limit"),
                           (json.dumps({"model_type": "bert"}).encode(), "not supported")):
        at.file_uploader(key="le_upload").set_value(("config.json", content, "application/json")).run()
        assert not at.exception
        assert any(words in e.value for e in at.error), [e.value for e in at.error]


def test_compare_a_vs_b():
    at = _app(le_cmp="true", le_b_preset="mistral-7b", le_b_gpus=1)
    _ok(at)
    assert at.selectbox(key="le_b_preset").value == "mistral-7b"
    frames = [d.value for d in at.dataframe]
    table = next(f for f in frames if list(f.columns)[:2] == ["A", "B"])
    assert table.loc["model", "B"] == "mistral-7b"
    assert table.loc["model", "A"] == "llama-3-8b"


def test_turning_b_on_copies_a_and_highlights_what_then_differs():
    at = _app(le_batch=8, le_seq=512, le_gpu="H200 SXM", le_tab="A vs B")
    at.toggle(key="le_cmp").set_value(True).run()
    _ok(at)
    assert (at.number_input(key="le_b_batch").value, at.number_input(key="le_b_seq").value) == (8, 512)
    assert at.selectbox(key="le_b_gpu").value == "H200 SXM" and at.selectbox(key="le_b_preset").value == "same"
    table = next(d.value for d in at.dataframe if list(d.value.columns) == ["A", "B", "B/A"])
    assert table.loc["time to first token", "B/A"] == "1×" and table.loc["model", "B"] == "llama-3-8b"
    assert any("copy of A" in m.value for m in at.markdown)
    at.number_input(key="le_b_batch").set_value(16).run()
    _ok(at)
    styles = " ".join(h.proto.body for h in at.get("html"))
    assert ".st-key-le_b_batch" in styles and ".st-key-le_b_seq" not in styles
    assert any("B differs from A in: **B batch**" in m.value for m in at.markdown)
    assert at.number_input(key="le_b_batch").proto.query_param_key == "le_b_batch"  # the link keeps it


def test_a_use_case_sets_the_workload_and_the_serving_target():
    at = _app()
    at.selectbox(key="le_use").set_value("code").run()
    _ok(at)
    got = {k: at.number_input(key=k).value for k in ("le_batch", "le_seq", "le_new", "le_tpot")}
    assert got == {"le_batch": 1, "le_seq": 2048, "le_new": 128, "le_tpot": 20.0}
    assert at.toggle(key="le_serve").value and at.selectbox(key="le_use").value is None  # back to its placeholder
    est = estimate(from_name("llama-3-8b"), _page_workload(batch=1, seq_len=2048, new_tokens=128), get_hardware("h100"))
    assert _metrics(at)["prefill FLOPs"] == f"{est.prefill.flops / 1e12:.3g} T"
    at.selectbox(key="le_use").set_value("offline").run()
    _ok(at)
    assert (at.number_input(key="le_batch").value, at.number_input(key="le_tpot").value) == (256, 0.0)
    assert at.toggle(key="le_offline").value  # every request at once: the offline run the use case names
    # an interactive use case asks for the curve again: the offline switch and a point left from before are cleared
    at.number_input(key="le_conc").set_value(8).run()
    at.selectbox(key="le_use").set_value("chat").run()
    _ok(at)
    assert not at.toggle(key="le_offline").value
    assert (at.number_input(key="le_rate").value, at.number_input(key="le_conc").value) == (0.0, 0)


def test_several_models_share_one_throughput_chart():
    at = _app()
    _ok(at)
    assert not [c for c in at.get("vega_lite_chart") if "Decode throughput" in str(c.proto.spec)]
    at.multiselect(key="le_more").set_value(["mistral-7b", "llama-3-70b"]).run()
    _ok(at)
    chart = next(c.proto for c in at.get("vega_lite_chart") if "Decode throughput" in str(c.proto.spec))
    rows = next(d for d in chart.datasets if d.name == "rows").data.data  # Arrow IPC bytes
    assert b"llama-3-8b" in rows and b"mistral-7b" in rows and b"llama-3-70b" not in rows
    assert any("No decode that fits: llama-3-70b" in c.value for c in at.caption)


def test_an_op_picked_on_the_flops_chart_is_named_on_the_roofline():
    at = _app(le_tab="Roofline")  # the tab a click opens (the browser test clicks: test_browser_estimator.py)
    _ok(at)
    flops = next(c.proto for c in at.get("vega_lite_chart") if '"pick"' in c.proto.spec)
    assert flops.selection_mode == ["pick"] and flops.id  # a click reruns the page with the selection
    assert any("Click a bar" in m.value for m in at.markdown)
    at.session_state["le_op"] = ("o_proj", "prefill")  # what the chart's callback keeps from a click
    at.run()
    _ok(at)
    assert any(m.value.startswith("**o_proj** (prefill): ") for m in at.markdown)


def test_a_vs_b_is_formatted_with_units_times_first_and_a_ratio():
    at = _app(le_cmp="true", le_b_preset="llama-3-8b", le_b_batch=2, le_b_gpu="H100 SXM", le_b_gpus=1)
    _ok(at)
    table = next(d.value for d in at.dataframe if list(d.value.columns) == ["A", "B", "B/A"])
    assert list(table.index[:3]) == ["time to first token", "per output token", "decode tokens/s (whole batch)"]
    a = estimate(from_name("llama-3-8b"), _page_workload(batch=1, seq_len=1024, new_tokens=256), get_hardware("h100"))
    b = estimate(from_name("llama-3-8b"), _page_workload(batch=2, seq_len=1024, new_tokens=256), get_hardware("h100"))
    ratio = b.prefill.flops / a.prefill.flops
    assert table.loc["prefill FLOPs", "B/A"] == f"{ratio:.3g}×"  # the same model at twice the batch: 2×
    assert table.loc["prefill FLOPs", "A"].endswith(" TFLOP") and table.loc["weights", "A"].endswith(" GiB")
    assert table.loc["time to first token", "A"].endswith(" ms")
    assert table.loc["model", "B/A"] == "—" and table.loc["fits in memory", "A"] == "yes"
    text = " ".join(str(v) for v in table.to_numpy().ravel())
    assert "None" not in text and "nan" not in text and "True" not in text


def test_headline_says_what_it_assumes_and_a_model_too_big_says_so():
    at = _app(le_preset="llama-3-70b", le_gpu="H100 SXM")
    _ok(at)
    md = " ".join(m.value for m in at.markdown)
    assert "**Predicted on 1 × H100 SXM · bf16** · counted by the engine convention" in md
    assert "timed with the efficiency model by shape" in md
    warn = " ".join(w.value for w in at.warning)
    assert "Does not fit" in warn and "at least 2 of them" in warn  # 131 GiB of weights on one 80-GB H100
    assert "not reachable" in warn
    times = [m for m in at.metric if m.label in ("time to first token", "per output token", "decode tokens/s")]
    assert len(times) == 3 and all("not reachable" in str(m.proto.delta) for m in times)
    assert at.slider(key="le_eff").value == DEFAULT_EFFICIENCY and at.toggle(key="le_flat").value is False
    assert at.slider(key="le_eff").disabled  # it acts only with the override on (a reviewer moved it: nothing)
    # the reference convention and a flat efficiency, chosen: the headline says so
    at = _app(le_conv="transformers", le_flat="true", le_eff=0.5)
    _ok(at)
    assert not at.slider(key="le_eff").disabled
    md = " ".join(m.value for m in at.markdown)
    assert "counted by the reference convention" in md and "a flat efficiency of 50% for every op (forced)" in md
    ref = estimate(from_name("llama-3-8b"), Workload(batch=1, seq_len=1024, new_tokens=256, convention="transformers"),
                   get_hardware("h100"), efficiency=0.5)
    assert _metrics(at)["time to first token"] == f"{ref.prefill.time_s * 1e3:.3g} ms"


def test_downloads_present_while_their_tab_is_open():
    at = _app(le_preset="qwen2.5-0.5b")
    _ok(at)
    assert not at.get("download_button")  # the JSON is made only while the Download tab shows it
    at = _app(le_preset="qwen2.5-0.5b", le_tab="Download")
    _ok(at)
    labels = [b.label for b in at.get("download_button")]
    assert "Ops as CSV" in labels and "Everything as JSON" in labels


# ----- the scale-out view: parallelism inputs, per-GPU memory, communication, training, serving --------------

def test_scale_out_tab_matches_the_library():
    from gemmlib.llm.parallel import Parallel
    from gemmlib.llm.scaleout import estimate as scaleout_estimate

    at = _app(le_preset="llama-3-70b", le_batch=16, le_seq=2048, le_new=16, le_gpus=8, le_tab="Scale-out")
    _ok(at)
    est = scaleout_estimate(from_name("llama-3-70b"), _page_workload(batch=16, seq_len=2048, new_tokens=16),
                            get_hardware("h100"), Parallel(tp=8))
    m = _metrics(at)
    assert m["time to first token"] == f"{est.prefill.time_s:.3g} s"
    assert m["prefill communication"] == f"{est.prefill.communication_s * 1e3:.3g} ms"
    assert m["memory per GPU"].endswith("B")
    frames = [d.value for d in at.dataframe]
    assert any("link" in f.columns and "NVLink" in str(f["link"].iloc[0]) for f in frames)
    assert any("op" in f.columns and "all_reduce" in set(f["op"]) for f in frames)


def test_the_gpus_follow_the_parallel_sizes():
    at = _app(le_preset="llama-3-70b", le_gpus=8, le_tp=4, le_pp=4, le_tab="Scale-out")  # its title says the count
    _ok(at)
    assert any("= **16** GPUs (the GPUs box says 8)" in i.value for i in at.info)
    assert any("TP 4 × PP 4 × EP 1 × DP 1 = 16" in md.value for md in at.markdown)
    at = _app(le_preset="llama-3-8b", le_tp=8, le_tab="Scale-out")  # TP 8 with the GPUs left at 1: never blank
    _ok(at)
    assert "time to first token" in _metrics(at) and any("TP 8 × PP 1 × EP 1 × DP 1 = 8" in md.value
                                                         for md in at.markdown)
    at.button(key="le_gpus_fix").click().run()  # one click puts the count into the GPUs box
    _ok(at)
    assert at.number_input(key="le_gpus").value == 8 and not any("GPUs box" in i.value for i in at.info)
    at = _app(le_preset="llama-3-70b", le_gpus=16, le_tp=8, le_pp=2, le_seq=512, le_new=4, le_tab="Scale-out")
    _ok(at)
    assert any("TP 8 × PP 2 × EP 1 × DP 1 = 16" in md.value for md in at.markdown)
    at = _app(le_preset="llama-3-8b", le_gpus=3)  # 3 does not divide 32 heads: a message, not a crash
    assert not at.exception and any("does not divide" in e.value for e in at.error)


def test_a_folded_expert_layout_from_the_sidebar():
    """DeepSeek-V3 served vLLM-style on two 8-GPU nodes: attention TP 8, the experts over all 16 GPUs (ETP 1). The
    GPUs follow ETP × PP × EP × DP, the title says the attention's split, and the numbers are the library's."""
    from gemmlib.llm.parallel import Parallel
    from gemmlib.llm.scaleout import estimate as scaleout_estimate

    at = _app(le_preset="deepseek-v3", le_gpus=8, le_tp=8, le_ep=16, le_etp=1, le_batch=8, le_seq=1024, le_new=16,
              le_tab="Scale-out")
    _ok(at)
    assert any("ETP 1 × PP 1 × EP 16 × DP 1 = **16** GPUs (the GPUs box says 8)" in i.value for i in at.info)
    at.button(key="le_gpus_fix").click().run()
    _ok(at)
    assert any("ETP 1 × PP 1 × EP 16 × DP 1 = 16" in md.value and "attention TP 8 × 2 data replicas" in md.value
               for md in at.markdown)
    cfg = from_name("deepseek-v3")
    hw = get_hardware("h100")
    from gemmlib.views.estimator import Inputs, workload
    wl = workload(Inputs.from_state({k: at.session_state[k] for k in Inputs.keys() if k in at.session_state}), cfg, hw)
    est = scaleout_estimate(cfg, wl, hw, Parallel(tp=8, ep=16, etp=1))
    assert _metrics(at)["time to first token"] == fmt.duration(est.prefill.time_s)
    at.number_input(key="le_etp").set_value(3).run()  # 3 × 16 is not the GPUs and 3 does not divide the experts
    assert not at.exception and at.error


def test_training_and_serving_tabs():
    at = _app(le_preset="llama-3-8b", le_batch=32, le_seq=1024, le_new=64, le_gpus=8, le_train="true",
              le_tokens="1e10", le_rc="selective", le_zero=1, le_serve="true", le_tpot=20, le_tab="Serving")
    _ok(at)
    m = _metrics(at)
    for label in ("step FLOPs", "step time", "MFU", "tokens/s", "GPU-hours"):
        assert label in m
    assert any("Best concurrency under 20 ms" in s.value for s in at.success)
    frames = [d.value for d in at.dataframe]
    assert any("TPOT ms" in f.columns for f in frames)
    at.number_input(key="le_tpot").set_value(0.01).run()  # nothing is that fast
    assert not at.exception and any("No concurrency" in w.value for w in at.warning)
    at = _app(le_preset="llama-3-8b", le_batch=6, le_gpus=8, le_tp=2, le_dp=4, le_train="true")
    assert not at.exception and any("does not split" in e.value for e in at.error)


def test_a_serving_link_costs_the_server_a_bounded_simulation(monkeypatch):
    """A link with the serving curve on and 700,000 new tokens once simulated ~30 M engine steps one at a time (66 s
    of the server's CPU, not interruptible, and again for every new-token count). The curve is simulated only when its
    tab is open; a run of pure decode steps is summed at once (the same answer, to rounding: test_serving.py), so that
    link costs a fraction of a second; and a page's answer works out at most PAGE_STEP_BUDGET scheduler steps one at
    a time, refused past it with the reason."""
    from gemmlib.llm import serving
    from gemmlib.views import estimator as view

    sims = []
    real = serving.simulate

    def counted(*a, **k):
        out = real(*a, **k)
        sims.append(out)
        return out

    monkeypatch.setattr(serving, "simulate", counted)
    assert view.PAGE_STEP_BUDGET == serving.PAGE_STEP_BUDGET == 1_000_000  # what the page allows ...
    q = dict(le_serve="true", le_preset="llama-3.2-1b", le_gpus=8, le_seq=16, le_new=700000)
    _ok(_app(**q))  # the tab closed: nothing simulated
    assert sims == []
    _ok(_app(**q, le_tab="Serving"))
    assert sum(x.steps for x in sims) > 4 * 700_000 and sum(x.work for x in sims) < 20_000
    monkeypatch.setattr(view, "PAGE_STEP_BUDGET", 20_000)  # ... and here a smaller one: the same rule, in less time
    sims.clear()
    at = _app(**{**q, "le_new": 64}, le_tab="Serving")  # short requests up to a KV limit of ~60,000 in flight
    assert not at.exception and [e.value for e in at.error] == [
        "**Check the input:** the serving curve needs more than the 20,000 scheduler steps a page may simulate one at "
        "a time (each prefill chunk, arrival and finish is one; a run of decode steps counts once); give fewer "
        "requests or a shorter prompt, or run \\`python -m gemmlib estimate --serve\\` for the whole curve"]
    assert sum(x.work for x in sims) <= 20_000  # the simulation that passed the budget stopped there
    _ok(_app(**{**q, "le_new": 8, "le_rate": 1000}, le_tab="Serving"))


# ----- families, quantized uploads, sliding windows, MLA, workloads (issue 11) -------------------------

CONFIGS = DATA / "configs"


def _upload(name: str, data: bytes | None = None) -> AppTest:
    """The page after uploading tests/data/configs/<name>.json (or ``data``) as config.json."""
    at = _app(le_src="config.json")
    data = (CONFIGS / f"{name}.json").read_bytes() if data is None else data
    at.file_uploader(key="le_upload").set_value(("config.json", data, "application/json")).run()
    _ok(at)
    return at


def _read_table(at: AppTest) -> dict:
    t = next(t for t in at.table if "read" in t.value.columns)
    return t.value["read"].to_dict()


def test_upload_shows_what_was_read_and_sizes_a_quantized_checkpoint():
    from gemmlib.llm.hf import load_config_file

    at = _upload("gpt-oss-20b")
    read = _read_table(at)
    assert read["family"] == "gpt_oss"
    assert "12 full, 12 sliding" in read["attention"] and "window 128" in read["attention"]
    assert "32 experts, top-4" in read["experts"] and "mxfp4" in read["quantization"]
    assert read["MLA"] == "—"
    from gemmlib.llm.scaleout import estimate as scaleout_estimate

    cfg = load_config_file(str(CONFIGS / "gpt-oss-20b.json"))
    est = scaleout_estimate(cfg, _page_workload(batch=1, seq_len=1024, new_tokens=256), get_hardware("h100"))
    assert est.memory.weights_bytes == 13_761_264_768  # the mxfp4 checkpoint, not 41.8 GB of bf16
    assert _metrics(at)["memory per GPU"] == f"{est.per_gpu.total_bytes / 2**30:.3g} GiB"  # binary, as every page
    assert any("initial_context_length" in c.value for c in at.caption)  # an ignored key, listed


def test_upload_of_gemma4_e2b_shows_its_own_layers():
    """Gemma 4 E2B's Hub file: the read table names its full layers' shape, the layers reusing K/V and the per-layer
    inputs."""
    at = _upload("gemma-4-e2b-it")
    read = _read_table(at)
    assert read["full layers"] == "head dim 512, 1 KV heads"
    assert read["K/V reuse"].startswith("the last 20 layers") and read["per-layer inputs"].startswith("256 wide")
    assert "7 full, 28 sliding" in read["attention"] and "vision" in " ".join(read)


def test_upload_of_deepseek_v4_names_its_compressed_attention():
    """DeepSeek-V4-Flash's Hub file: the read table names its compressed layers, the indexer and the hyper-connections;
    the memory sizes the fp8 checkpoint with its fp4 experts."""
    at = _upload("deepseek-v4-flash")
    read = _read_table(at)
    assert read["compressed attention"].startswith("a window of 128 keys in every layer; 21 layers add an entry per 4")
    assert read["hyper-connections"].startswith("the residual as 4 streams") and "experts fp4" in read["quantization"]
    assert "256 experts, top-6" in read["experts"]


def test_the_read_table_names_hy_v4s_hyper_connections_without_a_mix():
    """HY-V4's independent hyper-connections (no stream mix, no compressed attention) have their own row."""
    from gemmlib.llm.hf import read_config
    from gemmlib.views.estimator import _hyper_rows

    cfg = read_config(dict(model_type="hy_v4", hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                           num_attention_heads=4, vocab_size=128, q_lora_rank=40, kv_lora_rank=32,
                           qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12, n_routed_experts=4,
                           num_experts_per_tok=2, moe_intermediate_size=32, hc_mult=3))[0]
    ((name, text),) = _hyper_rows(cfg.describe(), lambda m: m)
    assert name == "hyper-connections" and text.startswith("the residual as 3 streams, collapsed to one")


def test_upload_of_minimax_m3_names_its_block_sparse_layers():
    """A MiniMax-M3 config.json in its remote code's spelling (``sparse_attention_config``, ``moe_layer_freq``): the read
    table names the block-sparse layers and their indexer, the KV line the indexer's cached key."""
    layers = 8
    raw = {"model_type": "minimax_m3_vl_text", "hidden_size": 1024, "intermediate_size": 512, "num_hidden_layers": layers,
           "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 64, "vocab_size": 32000,
           "num_local_experts": 8, "num_experts_per_tok": 2, "torch_dtype": "bfloat16",
           "sparse_attention_config": {"sparse_attention_freq": [int(i % 4 != 3) for i in range(layers)],
                                       "sparse_num_index_heads": 4, "sparse_index_dim": 128, "sparse_block_size": 128,
                                       "sparse_topk_blocks": 16, "sparse_local_block": 1},
           "moe_layer_freq": [0] + [1] * (layers - 1)}
    at = _upload("", json.dumps(raw).encode())
    read = _read_table(at)
    assert read["sparse attention"].replace("\\:", ":") == ("block-sparse attention: the top 16 blocks of 128 keys per query, chosen by an "
                                        "indexer of 4 × 128 in 6 of 8 layers (its key cached too); the others see "
                                        "every key")
    assert "8 experts, top-2" in read["experts"]
    from gemmlib.llm.hf import read_config
    from gemmlib.llm.scaleout import estimate as scaleout_estimate
    from gemmlib.views.estimator import _memory_words

    est = scaleout_estimate(read_config(raw)[0], _page_workload(batch=1, seq_len=1024, new_tokens=256),
                            get_hardware("h100"))
    # the memory tab's words (drawn when the tab is opened)
    assert "(128 more, the indexer's key, in the 6 block-sparse layers)" in _memory_words(est, lambda m: m)


def test_upload_of_a_pure_state_space_model_says_it_has_no_attention():
    """Falcon Mamba 7B's Hub file: no attention row to fill, the mixer in every layer with its fixed state, and the
    model line names the mixer instead of attention heads and an MLP width."""
    at = _upload("falcon-mamba-7b")
    read = _read_table(at)
    assert read["attention"] == "none (every layer a mixer)"
    mixer = read["mixer"].replace("\\:", ":")  # (the table escapes a colon for Markdown)
    assert mixer.startswith("mamba in every layer: a fixed state of 10,485,760 elements") and "no KV cache" in mixer
    assert any("each a mamba mixer (no attention, no MLP)" in m.value for m in at.markdown)


def test_upload_of_gemma3n_names_altup_and_laurel():
    read = _read_table(_upload("gemma-3n-e2b"))
    assert read["AltUp / LAuReL"].startswith("4 streams") and "rank-64" in read["AltUp / LAuReL"]
    assert read["K/V reuse"].startswith("the last 10 layers") and "full layers" not in read


def test_upload_of_an_mla_model_and_the_absorbed_switch():
    at = _upload("deepseek-v2-lite")
    read = _read_table(at)
    assert "latent 512 + rotary 64" in read["MLA"] and "1 dense" in read["experts"] or "26 MoE" in read["experts"]
    eager = _metrics(at)["decode FLOPs"]
    at.radio(key="le_mla").set_value("eager").run()  # the engine convention absorbs; eager is the reference
    _ok(at)
    assert _metrics(at)["decode FLOPs"] != eager


def test_custom_inputs_express_sliding_windows_mla_and_shared_experts():
    at = _app(le_src="custom", le_layers=26, le_hidden=1152, le_heads=4, le_kv=1, le_hd=256, le_ffn=6912,
              le_vocab=262144, le_tied="true", le_sw=512, le_swp="5:1", le_qkn="head", le_npl=4)
    _ok(at)
    assert any("999,885,952 parameters" in md.value for md in at.markdown)  # gemma-3-1b, exactly
    read = _read_table(at)
    assert "22 sliding" in read["attention"] and "SSSSSF ×4 + SS" in read["attention"]
    v3 = _app(le_src="custom", le_layers=61, le_hidden=7168, le_heads=128, le_kv=128, le_hd=192, le_vhd=128,
              le_ffn=18432, le_vocab=129280, le_experts=256, le_topk=8, le_effn=2048, le_sffn=2048, le_dense=3,
              le_mla_kv=512, le_mla_q=1536, le_mla_rope=64)
    _ok(v3)
    assert any("671,026,404,352 parameters" in md.value for md in v3.markdown)  # DeepSeek-V3, exactly


def test_decode_only_attention_and_block_scaled_weights():
    at = _app(le_preset="llama-3.1-8b", le_seq=32768, le_ctx="true", le_new=1)
    _ok(at)
    m = _metrics(at)
    assert m["prefill FLOPs"] == "0" or m["prefill FLOPs"].startswith("0")
    assert m["time to first token"] == "—"
    fused = _app(le_preset="llama-3.1-8b", le_attn="fused")
    _ok(fused)
    int4 = _app(le_preset="mistral-7b", le_wdt="int4", le_tab="Memory")  # the checkpoint's size, on its tab
    _ok(int4)
    from gemmlib.llm.checkpoint import checkpoint_size

    assert any(f"{checkpoint_size(from_name('mistral-7b'), 'int4').bytes / 2**30:.3g} GiB" in md.value
               for md in int4.markdown)
    bad = _app(le_preset="gpt-oss-20b", le_wdt="int4")  # already quantized: a message, not a crash
    assert not bad.exception and any("already quantized" in e.value for e in bad.error)


def test_a_hardware_file_adds_the_users_gpus_to_pick_from():
    """The page reads a hardware file as `--hardware-file` does: its GPUs join the list and are estimated on; a bad
    one says which row is wrong and the catalogue stays."""
    mine = {"gpus": [{"name": "Lab GPU", "kind": "gpu", "peaks_tflops": {"fp32": 40, "bf16": 300},
                      "bandwidth_bytes_per_s": 1.5e12, "memory": {"datasheet_gb": 48, "what": "48 GB"},
                      "source": "https://example.org/lab-gpu.pdf", "interconnect": "h100"}]}
    at = _app()
    at.file_uploader(key="le_hw_file").set_value(("lab.json", json.dumps(mine).encode(), "application/json")).run()
    _ok(at)
    assert "Lab GPU" in at.selectbox(key="le_gpu").options and "H100 SXM" in at.selectbox(key="le_gpu").options
    at.selectbox(key="le_gpu").set_value("Lab GPU").run()
    _ok(at)
    from gemmlib.core.hardware import parse_hardware

    lab = parse_hardware(json.dumps(mine), "lab.json")["Lab GPU"]
    est = estimate(from_name("llama-3-8b"), _page_workload(batch=1, seq_len=1024, new_tokens=256), lab)
    assert _metrics(at)["time to first token"] == fmt.duration(est.times()["ttft_s"])
    bad = {"gpus": [{**mine["gpus"][0], "bandwith": 1}]}
    at.file_uploader(key="le_hw_file").set_value(("bad.json", json.dumps(bad).encode(), "application/json")).run()
    assert not at.exception
    assert any("bad.json" in e.value and "bandwith" in e.value for e in at.error), [e.value for e in at.error]
    assert "H100 SXM" in at.selectbox(key="le_gpu").options


def test_the_training_tab_names_the_overlaps():
    """Qwen3-30B-A3B on 16 H100s as Megatron-Bridge's recipe lays it out (EP16 over two 8-GPU nodes): with the EP overlap
    off every all-to-all is exposed; Megatron's overlap hides its measured 36.55 % of them, DualPipe all it can: the same
    all-to-alls, less of them exposed, three step times; the TP overlap on a TP2 layout says what it hides."""
    q = dict(le_preset="qwen3-30b-a3b", le_gpus=16, le_ep=16, le_gpn=8, le_batch=64, le_seq=2048, le_new=16,
             le_train="true", le_tokens="1e10", le_mb=16, le_tab="Training")
    exposed, steps = {}, set()
    for epo in ("none", "megatron", "dualpipe"):
        at = _app(**q, le_epo=epo)
        _ok(at)
        steps.add(_metrics(at)["step time"])
        words = " ".join(md.value for md in at.markdown)
        if epo == "none":
            assert "EP all-to-alls overlapped" not in words
            continue
        share = "36.55%" if epo == "megatron" else "100%"
        head = f"EP all-to-alls overlapped ({epo}: at most {share} of their time hidden): "
        assert head in words
        exposed[epo] = words.split(head)[1].split(" exposed.")[0]  # "{exposed} of {total}"
    (m_exp, m_tot), (d_exp, d_tot) = (exposed[k].split(" of ") for k in ("megatron", "dualpipe"))
    assert m_tot == d_tot and m_exp != d_exp  # the same all-to-alls, less exposed under DualPipe
    assert len(steps) == 3
    at = _app(le_preset="llama-3-8b", le_gpus=8, le_tp=2, le_dp=4, le_sp="true", le_batch=8, le_seq=2048,
              le_train="true", le_tpo="true", le_tab="Training")
    _ok(at)
    assert any("TP communication overlapped with the GEMMs beside it" in md.value for md in at.markdown)


def test_the_training_tab_takes_context_parallelism_and_what_recomputation_reruns(run_cli):
    """CP, the recomputed layers and the recomputed modules set on the Training tab give the step time the CLI gives
    with --cp, --recompute-layers and --recompute-modules; the layers' box counts under full recomputation only and
    the modules' under selective (each greyed out otherwise), and CP's words say how many GPUs the run takes."""
    q = dict(le_preset="llama-3-8b", le_gpus=8, le_tp=2, le_dp=4, le_sp="true", le_batch=8, le_seq=8192,
             le_train="true", le_tokens="1e10", le_zero=1, le_tab="Training")
    argv = ["estimate", "--preset", "llama-3-8b", "--tp", "2", "--dp", "4", "--sequence-parallel", "--batch", "8",
            "--seq-len", "8192", "--new-tokens", "0", "--train", "--train-tokens", "1e10", "--zero", "1", "--json"]
    cases = [({}, []), ({"le_cp": 2}, ["--cp", "2"]),
             ({"le_rc": "full", "le_rcl": 4}, ["--recompute", "full", "--recompute-layers", "4"]),
             ({"le_rc": "full"}, ["--recompute", "full"]),
             ({"le_rc": "selective", "le_rcm": ["core_attn", "mlp"]},
              ["--recompute", "selective", "--recompute-modules", "core_attn,mlp"])]
    steps = set()
    for page_q, flags in cases:
        at = AppTest.from_file(PAGE, default_timeout=60)
        for k, v in {**q, **page_q}.items():
            at.query_params[k] = v if isinstance(v, list) else str(v)
        at.run()
        _ok(at)
        rc, out, err = run_cli(argv + flags)
        assert rc == 0, err
        want = fmt.duration(json.loads(out)["train"]["step_time_s"])
        assert _metrics(at)["step time"] == want, (page_q, flags)
        steps.add(want)
        rc_kind = page_q.get("le_rc", "none")
        assert at.toggle(key="le_tpo").disabled is False  # TP 2: there is TP communication to overlap
        assert at.selectbox(key="le_epo").disabled is True  # a dense model: EP 1, no all-to-alls
        assert at.number_input(key="le_rcl").disabled is (rc_kind != "full")
        assert at.multiselect(key="le_rcm").disabled is (rc_kind != "selective")
        assert at.multiselect(key="le_rcm").placeholder == "none chosen: core_attn"  # not Streamlit's "Choose options"
        words = " ".join(md.value for md in at.markdown)
        if page_q.get("le_cp"):
            assert "Context parallel CP 2: the run takes 16 GPUs (the layout's 8 × CP)" in words
        else:
            assert "Context parallel" not in words
    assert len(steps) == len(cases)  # each setting moves the step time


def test_the_sms_the_all_to_alls_hold_slow_the_training_step_as_the_cli_says(run_cli):
    """With an EP overlap, the SMs its all-to-alls hold (DeepSeek-V3: 20 of 132) give the step time `--ep-comm-sms`
    gives, and the words say what they cost; with the overlap off the box is greyed out and counts for nothing."""
    q = dict(le_preset="qwen3-30b-a3b", le_gpus=16, le_ep=16, le_gpn=8, le_batch=64, le_seq=2048, le_new=16,
             le_train="true", le_tokens="1e10", le_mb=16, le_tab="Training")
    argv = ["estimate", "--preset", "qwen3-30b-a3b", "--ep", "16", "--gpus-per-node", "8", "--batch", "64",
            "--seq-len", "2048", "--new-tokens", "16", "--train", "--train-tokens", "1e10", "--micro-batch", "16",
            "--json"]
    steps = {}
    for epo, sms, flags in (("dualpipe", 0, ["--ep-comm-overlap", "dualpipe"]),
                            ("dualpipe", 20, ["--ep-comm-overlap", "dualpipe", "--ep-comm-sms", "20"]),
                            ("none", 20, [])):
        at = _app(**q, le_epo=epo, le_epsm=sms)
        _ok(at)
        assert at.number_input(key="le_epsm").disabled is (epo == "none")
        assert at.selectbox(key="le_epo").disabled is False and at.toggle(key="le_tpo").disabled is True  # EP 16, TP 1
        rc, out, err = run_cli(argv + flags)
        assert rc == 0, err
        t = json.loads(out)["train"]
        assert _metrics(at)["step time"] == fmt.duration(t["step_time_s"])
        steps[(epo, sms)] = t["step_time_s"]
        words = " ".join(md.value for md in at.markdown)
        if epo != "none" and sms:
            assert t["held_sms_s"] > 0
            assert (f"They hold 20 of the GPU's 132 SMs while they run: the compute beside them runs on the rest, "
                    f"{fmt.duration(t['held_sms_s'])} longer over the step.") in words
        else:
            assert "SMs while they run" not in words
    assert steps[("dualpipe", 20)] > steps[("dualpipe", 0)]
