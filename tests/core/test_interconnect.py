"""The measured-interconnect store: figures from a sweep, saved beside the ceilings, validated when
read back (malformed or impossible entries are dropped), offered to `estimate --interconnect`."""

import json

import pytest

from gemmlib.core import interconnect as ic
from gemmlib.core.ceilings import ceilings_path
from gemmlib.core.errors import InputError

pytestmark = pytest.mark.usefixtures("bench_env")


def _row(op, nbytes, t, busbw, correct=True):
    return {"op": op, "bytes": nbytes, "time_s": t, "busbw_gbps": busbw, "correct": correct}


SWEEP = [_row("all_reduce", 8, 20e-6, 0.0004), _row("all_reduce", 1 << 20, 30e-6, 61.0),
         _row("all_reduce", 1 << 30, 2.2e-3, 850.0, correct=False),  # a wrong row never counts
         _row("all_reduce", 1 << 28, 1.1e-3, 420.0), _row("all_gather", 8, 10e-6, 0.0007)]


def test_figures_from_a_sweep():
    m = ic.from_sweep(SWEEP, backend="nccl", device="cuda", device_name="NVIDIA H200", nproc=8)
    assert m.busbw == 420e9 and m.busbw_bytes == 1 << 28  # best correct all-reduce
    assert m.latency_s == 20e-6 and m.latency_bytes == 8  # smallest all-reduce
    lk = m.link()
    assert lk.name == "8 × NVIDIA H200, NCCL (measured interconnect)" and lk.kind == "measured"
    assert lk.time("all_reduce", 1 << 28, 8) == pytest.approx(20e-6 + (1 << 28) * 2 * 7 / 8 / 420e9)
    with pytest.raises(InputError, match="ran correctly"):
        ic.from_sweep([_row("all_reduce", 8, 1e-5, 1.0, correct=False)], backend="gloo", device="cpu",
                      device_name="cpu", nproc=2)


def test_saved_beside_the_ceilings_and_read_back(bench_env):
    m = ic.from_sweep(SWEEP, backend="nccl", device="cuda", device_name="NVIDIA H200", nproc=8)
    p = ic.save_interconnect(m)
    assert p == ceilings_path().with_name("interconnect.json") and p.parent == bench_env
    ic.clear_interconnects()  # only the file is left
    back = ic.find("nccl", "NVIDIA H200", 8)
    assert back is not None and back.busbw == m.busbw and back.rows == m.rows
    assert [lk.name for lk in ic.measured_links()] == [m.name]
    assert ic.get_link(m.name.upper()).busbw == 420e9
    with pytest.raises(InputError, match="no measured interconnect called 'nvlink 9'; known: 8 × NVIDIA H200"):
        ic.get_link("nvlink 9")


@pytest.mark.parametrize("bad", [
    {"busbw": -1.0}, {"busbw": "fast"}, {"latency_s": float("nan")}, {"nproc": 1}, {"nproc": 2.5},
    {"backend": "mpi"}, {"op": "gossip"}, {"rows": "x"}, {"device_name": " "},
])
def test_a_tampered_entry_is_dropped(bad):
    good = ic.MeasuredInterconnect("gloo", "cpu", "Some CPU", 2, busbw=1e9, latency_s=1e-4)
    other = ic.MeasuredInterconnect("gloo", "cpu", "Some CPU", 3, busbw=2e9, latency_s=1e-4)
    data = {good.key: {**good.to_dict(), **bad}, other.key: other.to_dict()}
    ic.interconnect_path().parent.mkdir(parents=True, exist_ok=True)
    ic.interconnect_path().write_text(json.dumps(data), encoding="utf-8")
    assert list(ic.all_interconnects()) == [other.key]


def test_a_broken_file_reads_as_empty():
    ic.interconnect_path().parent.mkdir(parents=True, exist_ok=True)
    for text in ("not json", "[1, 2]", json.dumps({"k": "v"})):
        ic.interconnect_path().write_text(text, encoding="utf-8")
        assert ic.all_interconnects() == {} and ic.measured_links() == []


def test_estimate_charges_the_tensor_parallel_allreduces(run_cli):
    m = ic.from_sweep(SWEEP, backend="nccl", device="cuda", device_name="NVIDIA H200", nproc=8)
    ic.save_interconnect(m)
    argv = ["estimate", "--preset", "llama-3-8b", "--gpus", "8", "--batch", "4", "--seq-len", "1024",
            "--new-tokens", "16", "--interconnect", m.name]
    rc, out, err = run_cli([*argv, "--json"])
    assert rc == 0, err
    d = json.loads(out)
    groups = d["parallel"]["groups"]
    assert [(g["group"], g["link"], g["busbw_bytes_per_s"]) for g in groups] == [("tp", m.name, 420e9)]
    # by hand: 32 layers × the all-reduce after o_proj, of batch·S tokens × 4096 × 2 bytes, on the link
    one = 20e-6 + 4 * 1024 * 4096 * 2 * (2 * 7 / 8) / 420e9
    after_o = [c for c in d["prefill"]["collectives"] if c["op"] == "all_reduce" and c["after"] == "o_proj"]
    assert len(after_o) == 1 and after_o[0]["count"] == 32
    assert after_o[0]["time_s"] == pytest.approx(32 * one)
    rc, out, _ = run_cli(argv)
    assert rc == 0 and "8 ranks (stride 1) over 8 × NVIDIA H200, NCCL (measured interconnect)" in out
    rc, out, err = run_cli(["estimate", "--preset", "llama-3-8b", "--interconnect", "nvlink 9"])
    assert rc == 2 and out == "" and err.count("\n") == 1 and "no measured interconnect" in err
    rc, out, err = run_cli([*argv, "--intra-busbw", "100"])
    assert rc == 2 and "not both" in err


def test_a_cpu_without_interconnect_figures_gets_the_measured_link():
    m = ic.MeasuredInterconnect("gloo", "cpu", "Some CPU", 2, busbw=2e9, latency_s=2e-4)
    ic.save_interconnect(m)
    from gemmlib.core.hardware import get_hardware
    hw, link = ic.hardware_with(get_hardware("cpu"), m.name, 2)
    assert link == m.link() and hw.interconnect.link_for(2) == link
    far = ic.MeasuredInterconnect("nccl", "cuda", "NVIDIA H100", 16, busbw=1e11, latency_s=5e-5, nodes=2)
    ic.save_interconnect(far)
    with pytest.raises(InputError, match="across 2 nodes"):
        ic.hardware_with(get_hardware("h100"), far.name, 16)


def test_a_read_only_policy_keeps_no_interconnect_and_no_calibration(bench_env, tmp_path, monkeypatch):
    """GEMM_CEILINGS_READ_ONLY kept the measured ceilings only: a visitor's Multi-GPU sweep still replaced the
    interconnect every estimate offers ("Kept as gloo, 2 CPU processes …"), and a Roofline calibration the
    "(calibrated)" rows. Both are shared measurements: under the policy neither is kept, and each says why."""
    import os

    from gemmlib.core import calibration as cs
    from gemmlib.core import policy

    pol = tmp_path / "policy.toml"
    pol.write_text("GEMM_CEILINGS_READ_ONLY = true\n")
    os.chmod(pol, 0o644)
    monkeypatch.setenv("GEMM_POLICY_FILE", str(pol))
    assert policy.shared_read_only()
    m = ic.from_sweep(SWEEP, backend="nccl", device="cuda", device_name="NVIDIA H200", nproc=8)
    assert ic.save_interconnect(m) is None
    assert ic.find("nccl", "NVIDIA H200", 8) is None and not ceilings_path().with_name("interconnect.json").exists()
    cal = cs.Calibration("cpu", "Test CPU", "llama-3-8b ÷ 16", ("fp32",), (), ())
    assert cs.save_calibration(cal) is None and not cs.calibration_path().exists()
    monkeypatch.delenv("GEMM_POLICY_FILE")
    assert not policy.shared_read_only()
    assert ic.save_interconnect(m) is not None
