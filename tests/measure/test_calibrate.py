"""calibrate and validate on the CPU: the points measured, the store, the validation's contract."""

import json
from collections import Counter

import pytest

from gemmlib.cli import main
from gemmlib.core import calibration as cs
from gemmlib.core.errors import InputError
from gemmlib.measure import calibrate as cb
from gemmlib.measure import safety


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    for v in ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S"):
        monkeypatch.delenv(v, raising=False)


def _run(**kw):
    base = dict(preset="llama-3-8b", scale=32, layers=1, batch=1, seq_len=32, new_tokens=3)
    base.update(kw)
    return cb.make_run("cpu", **base)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("GEMM_CACHE_DIR", str(tmp_path_factory.mktemp("cal")))
    run = _run()
    cal = cb.run_calibration(run, "cpu", min_run_time=0.01, threads=1)
    yield run, cal
    mp.undo()


def test_every_weight_shape_is_swept_from_m_1_to_the_prefill(calibrated):
    run, cal = calibrated
    m = run.model
    assert (m.hidden, m.head_dim, m.ffn, m.vocab) == (128, 4, 448, 4008)  # llama-3-8b ÷ 32, vocabulary too
    want = {(m.q_dim, m.hidden), (m.kv_dim, m.hidden), (m.hidden, m.q_dim), (m.ffn, m.hidden), (m.hidden, m.ffn),
            (m.vocab, m.hidden)}  # q, k=v, o, gate=up, down, LM head as nn.Linear(K → N)
    lin = [p for p in cal.gemm if p.family == "linear"]
    assert {(p.n, p.k) for p in lin} == want
    for nk in want:
        assert sorted(p.m for p in lin if (p.n, p.k) == nk) == [1, 2, 4, 8, 16, 32]  # 1 … batch × prompt
    att = [(p.m, p.n) for p in cal.gemm if p.family == "attn_scores"]
    assert (32, 32) in att and (1, 33) in att and (1, 35) in att  # prefill, first and last decode step
    assert all(p.groups == run.batch * m.heads for p in cal.gemm if p.family != "linear")
    assert {p.name for p in cal.other} == {"embedding", "norms", "rotary", "kv_repeat", "attn_softmax",
                                           "activation", "residual"}
    assert {p.phase for p in cal.other} == {"prefill", "decode"}
    assert all(p.seconds > 0 and p.flops > 0 for p in cal.gemm) and cal.threads == 1


def test_the_calibration_is_saved_and_read_back_valid(calibrated):
    run, cal = calibrated
    back = cs.find_calibration("cpu", cal.device_name)
    assert back is None or back.model == cal.model  # saved in the module's own cache folder
    path = cs.save_calibration(cal)
    again = cs.find_calibration("cpu", cal.device_name)
    assert path.name == "calibration.json" and again.gemm == cal.gemm and again.threads == 1
    hw = again.hardware()
    assert hw.name.endswith("(calibrated)") and hw.peak("fp32") > 0 and hw.bandwidth > 0


def test_calibration_stops_at_the_deadline():
    with pytest.raises(InputError, match="time limit"):
        cb.run_calibration(_run(), "cpu", min_run_time=0.01, deadline=safety.Deadline(0.0))


def test_bad_runs_are_refused():
    with pytest.raises(InputError):
        cb.make_run("cpu", preset="mixtral-8x7b", scale=16)
    with pytest.raises(InputError, match="seq-len"):
        cb.make_run("cpu", seq_len=0)
    with pytest.raises(InputError, match="learned positions"):
        cb.make_run("cpu", preset="gpt2", scale=4, seq_len=1020, new_tokens=8)
    with pytest.raises(InputError, match="threads"):
        cb.run_calibration(_run(), "cpu", threads=0)


def test_validation_measures_both_phases_and_compares_both_estimates(calibrated):
    run, cal = calibrated
    v = cb.run_validation(run, "cpu", calibration=cal, min_run_time=0.05)
    d = v.to_dict()
    for phase in ("prefill", "decode"):
        p = d[phase]
        assert {"measured_s", "estimated_s", "calibrated_s"} <= set(p)
        assert p["measured_s"] > 0 and p["estimated_s"] > 0 and p["calibrated_s"] > 0
        assert p["calibrated_error"] == pytest.approx(p["calibrated_s"] / p["measured_s"] - 1)
        groups = p["groups"]
        assert set(groups) == {"gemm", "attention", "other"}
        assert sum(g["measured_s"] for g in groups.values()) == pytest.approx(p["measured_s"])
        assert sum(g["calibrated_s"] for g in groups.values()) == pytest.approx(p["calibrated_s"])
        assert all(g["measured_s"] > 0 for g in groups.values())
    assert v.threads == 1  # the calibration's thread count, so the two compare
    assert "CPU (edit me)" in v.datasheet
    rows = cb.validation_table(v)
    assert [r["group"] for r in rows[:4]] == ["weight GEMMs", "attention products", "non-GEMM ops", "total"]


def test_validate_cli_json_contract(calibrated, capsys):
    run, cal = calibrated
    cs.save_calibration(cal)
    rc = main(["validate", "--device", "cpu", "--preset", "llama-3-8b", "--scale", "32", "--layers", "1",
               "--seq-len", "32", "--new-tokens", "2", "--min-run-time", "0.05", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    for phase in ("prefill", "decode"):
        assert {"measured_s", "estimated_s", "calibrated_s"} <= set(d[phase])
    assert d["calibration"].endswith(f"({cal.model})")
    assert main(["validate", "--device", "cpu", "--efficiency", "2"]) == 2
    assert "--efficiency" in capsys.readouterr().err


def test_calibrate_cli_prints_and_saves(capsys):
    rc = main(["calibrate", "--device", "cpu", "--preset", "llama-3-8b", "--scale", "32", "--layers", "1",
               "--seq-len", "16", "--new-tokens", "1", "--min-run-time", "0.01", "--threads", "1"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "best fp32 GEMM" in out and "saved to" in out and "(calibrated)" in out
    assert cs.load_calibrations()[0]
    assert main(["calibrate", "--device", "cpu", "--dtypes", "int8"]) == 2


def test_profile_shares_split_by_group():
    from gemmlib.measure.profiler import OpStat

    ops = [OpStat("aten::mm", "8×64, 64×64", 10, 3e-3, 0, "gemm", 1.0),
           OpStat("aten::bmm", "32×1×8, 32×8×129", 4, 1e-3, 0, "gemm", 1.0),
           OpStat("aten::add", "8×64, 8×64", 90, 1e-3, 0, "other", 0.0)]
    assert cb.profile_shares(ops) == pytest.approx({"gemm": 0.6, "attention": 0.2, "other": 0.2})
    assert cb.group_of_profiled(OpStat("aten::linear", "1×128×256, 896×256", 1, 1e-6, 0, "gemm", 1.0)) == "gemm"
    assert cb.group_of_profiled(OpStat("aten::_scaled_dot_product_flash_attention_for_cpu", "", 1, 1e-6, 0,
                                       "attention", 1.0)) == "attention"


# ----------------------------------------------------------------------------- like with like
def test_the_calls_a_step_makes_beyond_its_calibrated_ops_are_the_uncounted_ones():
    # build_block's own code, read by hand: per layer a decode step writes K and V into the cache (two
    # copy_) and copies the transposed attention output into place (one reshape); everything else it
    # launches beyond its GEMMs and calibrated ops only makes views (slices of the cache, the mask and
    # the rotary tables, q/k/v views and transposes).
    import torch

    from gemmlib.llm.accounting import decode_other_ops
    from gemmlib.measure import profiler as pf

    run = _run(layers=2, new_tokens=3)
    m = run.model
    model = pf.build_model(run.config, "cpu", 0, max_len=run.seq_len + run.new_tokens)
    cache = model.new_cache(1)
    ids = torch.randint(0, m.vocab, (1, run.seq_len))
    toks = [torch.randint(0, m.vocab, (1, 1)) for _ in range(run.new_tokens)]
    with torch.inference_mode():
        model(ids, cache, 0)
        real = cb.dispatch_counts(lambda: [model(t, cache, run.seq_len + i) for i, t in enumerate(toks)])
    ops = decode_other_ops(m, run.workload())  # the non-GEMM ops a decode's estimate charges
    counted = cb.calibrated_calls(run, ops, "decode", "fp32")
    assert not (counted - real)  # every call a calibrated op stands for is one the model makes
    extra = Counter({k: v for k, v in real.items() if k not in cb.GEMM_CALLS}) - counted
    kernels = {k: v for k, v in extra.items() if cb.op_kind(k) == "kernel"}
    steps = run.new_tokens * m.layers
    assert kernels == {"aten.copy_.default": 2 * steps, "aten.reshape.default": steps}
    assert all(cb.op_kind(k) == "view" for k in extra if k not in kernels)
    seconds, n = cb.launch_term(real, counted, {"kernel": 3e-6, "view": 1e-6})
    assert n["kernel"] == 3 * steps and seconds == pytest.approx(3e-6 * n["kernel"] + 1e-6 * n["view"])


def test_the_cpu_validation_adds_the_measured_launch_cost_and_says_so(calibrated):
    run, cal = calibrated
    v = cb.run_validation(run, "cpu", calibration=cal, min_run_time=0.05)
    assert v.launch_costs["kernel"] > 0 and v.launch_costs["view"] > 0
    for p in v.phases():
        assert p.launch_s > 0 and "launches the step makes beyond its calibrated ops" in p.method
        assert p.groups["other"]["calibrated_s"] >= p.launch_s
        assert any(n.startswith(f"{p.phase}: eager;") for n in v.notes)
    d = v.to_dict()
    assert d["decode"]["method"] == v.decode.method and d["decode"]["eager_s"] is None and d["machine"] == {}


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA device")
def test_on_the_gpu_the_decode_is_a_cuda_graph_beside_its_eager_time():
    run = cb.make_run("cuda", preset="llama-3-8b", scale=16, layers=1, seq_len=64, new_tokens=4, dtype="bf16")
    cal = cb.run_calibration(run, "cuda", min_run_time=0.01, save=False)
    v = cb.run_validation(run, "cuda", calibration=cal, min_run_time=0.05)
    assert "CUDA graph" in v.decode.method and v.decode.eager_s > 0 and v.decode.launch_s is None
    assert "do_bench" in v.prefill.method and v.machine["before"]


def test_the_plan_times_every_point_of_the_sweep_and_the_validation():
    """The estimate beside the Roofline page's button: the sweep's points (the run's own list, per dtype and
    per repeat: 2 on a CPU) at their time each, and the validation's two phases — not 0 s."""
    run = cb.make_run("cpu", "llama-3-8b")
    lim = safety.limits()
    points = len(cb.sweep(run, (run.dtype,)))
    assert points > 20  # every GEMM family at every M, the attention lengths, the other ops
    only_cal = cb.plan_calibration(cb.CalibrationConfig(run, "cpu", min_run_time=0.05), lim).seconds
    assert only_cal == pytest.approx(2 * points * (0.05 + cb.CAL_POINT_FIXED_S))
    slower = cb.plan_calibration(cb.CalibrationConfig(run, "cpu", min_run_time=0.15), lim).seconds
    assert slower - only_cal == pytest.approx(2 * points * 0.10)
    both = cb.plan_calibration(cb.CalibrationConfig(run, "cpu", validate=True, validate_run_time=0.5), lim).seconds
    assert both - only_cal == pytest.approx(cb.VALIDATE_FIXED_S + 4 * 0.5)
    two = cb.plan_calibration(cb.CalibrationConfig(run, "cpu", dtypes=("fp32", "bf16")), lim).seconds
    assert two == pytest.approx(2 * only_cal)


def test_the_gpu_default_fits_the_default_dimension_cap(monkeypatch):
    # A GPU's default calibration is the whole llama-3-8b stack, whose LM head has N = 128,256: under the default
    # cap of 16,384 on any dimension the Roofline page's button and `calibrate --device cuda` were refused at once
    # ("vocab=128256 is above this server's cap"). The vocabulary is now divided to fit and the model's name says
    # so; every other GEMM keeps its full size, and a raised cap runs the whole vocabulary.
    monkeypatch.delenv("GEMM_MAX_DIM", raising=False)
    monkeypatch.delenv("GEMM_CLASSROOM", raising=False)
    lim = safety.limits()
    assert lim.max_dim == 16384
    run = cb.make_run("cuda")
    m = run.model
    assert (m.vocab, m.hidden, m.ffn) == (128256 // 8, 4096, 14336)
    assert "vocabulary ÷ 8" in run.describe() and "GEMM_MAX_DIM 16,384" in run.describe()
    p = cb.plan_calibration(cb.CalibrationConfig(run, "cuda", validate=True), lim)
    assert p.call_flops == 2.0 * 2048 * 4096 * 16032  # its largest GEMM is the LM head at the fitted vocabulary
    assert cb.make_run("cuda", max_dim=131072).model.vocab == 128256
    monkeypatch.setenv("GEMM_MAX_DIM", "131072")
    assert cb.make_run("cuda").model.vocab == 128256
    assert cb.make_run("cpu", "llama-3-8b").model.vocab == 128256 // 16  # ÷ 16 already fits: unchanged


def test_a_calibration_and_validation_report_progress_in_the_plans_proportions(monkeypatch):
    # The run box reads a run's progress fractions as the share done. The calibration reported 0 to 0.6 and the
    # validation 0.6 to 1, where the plan gives the calibration ~3/4 of the time: at its end the box showed 60 %
    # done with a quarter of the time left, and then the validation's stages ran slow against it.
    cfg = cb.CalibrationConfig(cb.make_run("cpu", scale=32, layers=1, seq_len=32, new_tokens=2), "cpu", validate=True)
    seen = []

    def cal(*a, progress, **k):
        progress(0.0, "start"), progress(1.0, "swept")
        return None

    def val(*a, progress, **k):
        progress(0.0, "validating"), progress(1.0, "done")
        return None

    monkeypatch.setattr(cb, "run_calibration", cal)
    monkeypatch.setattr(cb, "run_validation", val)
    cb._run_spec(cfg, lambda f, t: seen.append((round(f, 6), t)), safety.Deadline(60))
    lim = safety.limits()
    total = cb.plan_calibration(cfg, lim).seconds
    alone = cb.plan_calibration(cb.CalibrationConfig(cfg.run, "cpu"), lim).seconds  # the calibration's own plan
    share = round(alone / total, 6)
    assert 0.6 < share < 1
    assert seen == [(0.0, "start"), (share, "swept"), (share, "validating"), (1.0, "done")]


def test_a_cpu_validation_names_where_its_datasheet_row_comes_from():
    """On a CPU the "datasheet" estimate uses this CPU's measured ceilings once there are some (ceilings.cpu_row);
    the note called them "the catalogue's placeholder" with the measured figures beside it."""
    from gemmlib.core import ceilings as C

    C.clear_ceilings()
    hw = cb.pf.hardware_for("cpu")
    assert cb.cpu_row_note(hw, "fp32").startswith("the datasheet row of a CPU is the catalogue's placeholder (")
    C.save_ceilings(C.Ceilings("cpu", "Test CPU", {"fp32": 3.0e10}, 1.5e9, measured_at=0))
    hw = cb.pf.hardware_for("cpu")
    assert cb.cpu_row_note(hw, "fp32") == (f"the datasheet row of a CPU is this CPU's measured ceilings ({hw.name}: "
                                           "0.03 TFLOP/s fp32, 1.5 GB/s)")
    C.clear_ceilings()


@pytest.mark.parametrize("argv", [["calibrate", "--dtypes", "int8"], ["profile", "--dtype", "int8"]])
def test_a_format_the_model_cannot_be_built_in_is_refused_in_words_for_both_commands(argv, capsys):
    """calibrate's refusal named the profiler ("the profiler runs in …") to a user who never ran it."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "int8 is not supported here" in err and "the profiler runs" not in err
