"""The benchmark pages' presenters (gemmlib.views.tiling, .profiler, .multigpu), against figures worked
out here by hand: tile reads as ⌈N/t⌉ and ⌈M/t⌉, waves as ⌈tiles / SMs⌉, seconds in µs and ms, and the
reader's language reaching every text (a marking gettext)."""

from __future__ import annotations

import math
from types import SimpleNamespace as NS

from gemmlib.explain.tiling import traffic_table
from gemmlib.views import multigpu as mv
from gemmlib.views import profiler as pv
from gemmlib.views import tiling as tv


def mark(s: str) -> str:
    return f"«{s}»"


# ----------------------------------------------------------------------------- tiling
def test_traffic_rows_read_a_and_b_once_per_tile_column_and_row():
    m = n = k = 100
    rows = tv.traffic_rows(traffic_table(m, n, k, [32, 128], "fp32"))
    assert [set(r) for r in rows] == [set(tv.TRAFFIC_COLUMNS)] * 2
    t32, t128 = rows
    assert (t32["tile"], t32["A reads"], t32["B reads"]) == (32, math.ceil(n / 32), math.ceil(m / 32))
    assert (t128["A reads"], t128["B reads"]) == (1, 1)  # one tile covers the matrix: the minimum
    # fp32: A and B read that many times, D written once, in GiB (2**30 bytes: the project's byte unit)
    assert math.isclose(t32["traffic GiB"], 4 * (m * k * 4 + k * n * 4 + m * n) / 2**30)
    assert math.isclose(t128["traffic GiB"], 4 * (m * k + k * n + m * n) / 2**30) and t128["× minimum"] == 1


def _waves(mk: int, ns: list[int], tile: tuple[int, int], sms: int) -> list[dict]:
    out = []
    for n in ns:
        tiles = math.ceil(mk / tile[0]) * math.ceil(n / tile[1])
        out.append({"n": n, "tiles": tiles, "waves": math.ceil(tiles / sms)})
    return out


def test_wave_caption_names_both_ends_of_the_sweep():
    pred = _waves(8192, [8192, 8448, 8704], (128, 256), 132)
    text = tv.wave_caption(pred, (128, 256), 132)
    assert text.startswith("128×256 tiles on 132 SMs: N = 8,192: 2,048 tiles in 16 waves; N = 8,704: 2,176 tiles in "
                           "17 waves.")
    assert tv.wave_caption(pred, (128, 256), 132, gettext=mark).startswith("«128×256 tiles on 132 SMs: «N = 8,192")


def test_cliff_text_only_where_a_wave_starts():
    cliff = {"n_before": 8448, "n_after": 8449, "tiles_before": 2112, "tiles_after": 2176, "waves_before": 16,
             "waves_after": 17, "drop": 0.0559}
    text = tv.cliff_text(cliff, 132)
    assert "from N = 8,448 to 8,449" in text and "a wave 17 starts" in text and "falls by 5.6%" in text
    assert tv.cliff_text({**cliff, "waves_after": 16}, 132) is None
    assert tv.cliff_text(None, 132) is None


# ----------------------------------------------------------------------------- profiler
def _op(name: str, time_s: float, **kw) -> NS:
    d = {"name": name, "shapes": "[[2, 3]]", "calls": 1, "time_s": time_s, "share": 0.5, "is_gemm": True,
         "flops": 12, "tflops": None, "self_extra": 1, **kw}
    return NS(to_dict=lambda: dict(d))


def test_top_ops_rows_in_microseconds_with_the_unattributed_row_translated():
    rows = pv.top_ops_rows([_op("aten::mm", 2.5e-3), _op("(outside)", 1e-6)], "(outside)", gettext=mark)
    assert [list(r) for r in rows] == [list(pv.TOP_OPS_COLUMNS)] * 2  # the page's columns, in its order
    assert rows[0]["name"] == "aten::mm" and math.isclose(rows[0]["time µs"], 2500.0)
    assert rows[1]["name"] == "«(outside)»" and math.isclose(rows[1]["time µs"], 1.0)


def test_prediction_rows_write_time_and_words():
    rows = pv.prediction_rows([{"op": "q_proj", "kind": "gemm", "bound": "compute", "time_s": 0.0015},
                               {"op": "softmax", "kind": "other", "bound": "memory", "flops": 3}], gettext=mark)
    assert rows[0] == {"op": "q_proj", "kind": "«GEMM»", "bound": "«compute-bound»", "time": "1.5 ms"}
    assert rows[1] == {"op": "softmax", "kind": "«not GEMM»", "bound": "«memory-bound»", "flops": 3}


def test_block_text_and_heading():
    cfg = NS(hidden=256, heads=8, head_dim=32, kv_heads=2, intermediate=683, batch=1, seq_len=64, layers=2,
             dtype="fp32", attention="eager")
    text = pv.block_text(cfg, 3.5 * 2**20)
    assert "hidden 256, 8 heads of 32 (2 K/V heads), MLP 683, 1×64 tokens, 2 layers, fp32, eager attention" in text
    assert "1×64 tokens, 1 layer, fp32" in pv.block_text(NS(**{**vars(cfg), "layers": 1}), 1.0)  # not "layer(s)"
    assert text.endswith("about 3.5 MiB at its peak.")  # binary, as every amount of bytes
    res = NS(config=cfg, device_name="a *bold* CPU", device="cpu", time_basis="CPU self time", steps=3)
    one = pv.run_heading(res, lambda s, p, n: s if n == 1 else p, md=lambda t: t.replace("*", "\\*"))
    assert one.startswith("**2 blocks on a \\*bold\\* CPU** (cpu, fp32, eager attention, hidden 256, 1×64 tokens)")
    assert one.endswith("CPU self time, median of 3 passes.")
    single = pv.run_heading(NS(**{**vars(res), "steps": 1}), lambda s, p, n: s if n == 1 else p)
    assert single.endswith("median of 1 pass.")  # not "pass(es)"


def test_run_metrics_and_verdict_against_the_target():
    pred = NS(hardware="H100 SXM", time_share=0.7)
    res = NS(gemm_share=0.85, prediction=pred, total_time_s=0.0123, gemm_tflops=1.5, meets_target=True)
    share, predicted, per_pass, achieved = pv.run_metrics(res, 0.8)
    assert (share.value, share.delta) == ("85.0%", "+5.0 points vs the 80% target")
    assert (predicted.label, predicted.value, predicted.delta) == ("Predicted (H100 SXM)", "70.0%",
                                                                   "+15.0 points, measured − predicted")
    assert (per_pass.value, achieved.value) == ("12.3 ms", "1.5 TFLOP/s")
    assert pv.run_metrics(NS(**{**vars(res), "prediction": None}), 0.8)[1] is None
    assert pv.verdict(res, 0.8)[0] is True
    ok, words = pv.verdict(NS(**{**vars(res), "meets_target": False, "gemm_share": 0.5}), 0.8)
    assert not ok and "only 50.0% of the time (target 80%)" in words
    flops = pv.prediction_metrics(NS(flop_share=0.95, time_share=0.6, gemm_flops=3.4e10), 0.8)
    assert [m.value for m in flops] == ["95.0%", "60.0%", "34 GFLOP"] and flops[1].delta.startswith("-20.0 points")


# ----------------------------------------------------------------------------- multi-GPU
def test_collective_rows_keep_the_timed_sizes_in_microseconds():
    rows = [{"op": "all_reduce", "bytes": 8, "count": 2, "time_s": 2e-5, "p20_s": 1e-5, "p80_s": 3e-5,
             "algbw_gbps": 0.4, "busbw_gbps": 0.4, "correct": True, "extra": 1},
            {"op": "all_gather", "bytes": 8, "count": 2, "skipped": "too small"}]
    out = mv.collective_rows(rows, mark)
    assert len(out) == 1 and list(out[0]) == list(mv.COLLECTIVE_COLUMNS)
    assert out[0]["op"] == "«all_reduce»"
    assert [round(out[0][c], 6) for c in ("time µs", "p20 µs", "p80 µs")] == [20.0, 10.0, 30.0]


def test_references_by_id_with_their_labels():
    refs, labels = mv.references(("NVLink 4", 450.0), [NS(name="mine", busbw=123e9)], gettext=mark)
    # a measured link's name in the reader's language (views.multigpu.name_label: here, the catalogue's word for it)
    assert refs == {"none": None, "datasheet: NVLink 4": ("NVLink 4", 450.0), "measured: mine": ("«mine»", 123.0)}
    assert labels["none"] == "«none»" and labels["measured: mine"] == "«measured: {link}»".format(link="«mine»")
    assert mv.references(None, [])[0] == {"none": None}


def test_tensor_parallel_rows_points_and_captions():
    run = {"nproc": 2, "one_rank_s": 0.01, "tp_s": 0.006, "comm_s": 0.001, "speedup": 0.01 / 0.006,
           "scaling_efficiency": 0.01 / (2 * 0.006), "comm_share": 1 / 6, "rel_diff": 1e-6, "correct": True,
           "estimate": {"one_rank": {"time_s": 0.009}, "tp": {"time_s": 0.005}}}
    bare = {**run, "nproc": 4, "estimate": None}
    rows = mv.tp_rows([run, bare])
    assert set(rows[0]) == set(mv.TP_COLUMNS) - {"per rank ms", "hardware", "link"}
    assert math.isclose(rows[0]["n ranks ms"], 6.0) and math.isclose(rows[0]["estimate ms"], 5.0)
    assert math.isnan(rows[1]["estimate ms"])
    assert mv.tp_points([run, bare]) == [{"ranks": 1, "measured_s": 0.01, "estimated_s": 0.009},
                                         {"ranks": 2, "measured_s": 0.006, "estimated_s": 0.005},
                                         {"ranks": 4, "measured_s": 0.006, "estimated_s": None}]
    est = {"one_rank": {"time_s": 0.004}, "tp": {"time_s": 0.0025, "comm_s": None}, "speedup": 1.6,
           "hardware": "CPU", "link": ""}
    assert mv.preview_row(2, est) == {"ranks": 2, "one rank ms": 4.0, "per rank ms": 2.5, "all-reduces ms": None,
                                      "speed-up": 1.6, "hardware": "CPU", "link": "—"}
    assert mv.estimate_caption({"error": "no row"}) == "Estimate: not available (no row)."
    assert mv.estimate_caption({"hardware": "H100 SXM", "hardware_source": "datasheet", "link": "NVLink 4"}) == \
        "Estimate: H100 SXM (datasheet); all-reduces on NVLink 4."
    assert mv.estimate_caption({"hardware": "CPU", "hardware_source": "measured", "note": "gloo"}).endswith(
        "all-reduces on no link — gloo.")
    model = NS(name="llama ÷ 16", hidden=256, heads=32, kv_heads=8, head_dim=8, ffn=896, mlp="gated")
    assert mv.layer_caption(model, [2, 4], gettext=mark).startswith("«llama ÷ 16: hidden 256, 32 heads (8 K/V) of 8, "
                                                                    "MLP 896 «gated»; rank counts")
    assert mv.layer_caption(model, []).endswith("split it evenly here: none.")
