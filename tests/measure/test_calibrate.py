"""calibrate and validate on the CPU: the points measured, the store, the validation's contract."""

import json

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
