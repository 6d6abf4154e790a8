"""The tensor-parallel layer on gloo with 2 and 3 CPU processes: the output equals the one-rank layer,
and both equal Hugging Face transformers' own LlamaAttention + LlamaMLP run in float64 on the same
weights (rotary set to the identity: cos = 1, sin = 0; its softmax is float32); the estimate beside
it; bad input."""

import json

import numpy as np
import pytest
import torch

from gemmlib.core import interconnect
from gemmlib.core.errors import InputError
from gemmlib.measure import tp

pytestmark = pytest.mark.usefixtures("bench_env")


def transformers_layer(model, w, x):
    """x + LlamaAttention(x) then + LlamaMLP, from transformers, float64, weights copied in."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaAttention, LlamaMLP

    conf = LlamaConfig(hidden_size=model.hidden, intermediate_size=model.ffn, num_attention_heads=model.heads,
                       num_key_value_heads=model.kv_heads, head_dim=model.head_dim, attention_bias=False,
                       mlp_bias=False, attn_implementation="eager")
    attn, mlp = LlamaAttention(conf, layer_idx=0).double(), LlamaMLP(conf).double()
    with torch.no_grad():
        for mod, name, key in ((attn, "q_proj", "q"), (attn, "k_proj", "k"), (attn, "v_proj", "v"),
                               (attn, "o_proj", "o"), (mlp, "gate_proj", "gate"), (mlp, "up_proj", "up"),
                               (mlp, "down_proj", "down")):
            getattr(mod, name).weight.copy_(w[key].double())
        xt = torch.as_tensor(x)
        b, s, _ = xt.shape
        ones = torch.ones(b, s, model.head_dim, dtype=torch.float64)
        h = xt + attn(xt, position_embeddings=(ones, torch.zeros_like(ones)), attention_mask=None)[0]
        return (h + mlp(h)).numpy()


@pytest.mark.parametrize("n,heads,kv", [(2, 4, 2), (3, 6, 3)])
def test_tp_layer_equals_one_rank_and_transformers(n, heads, kv):
    model = tp.model_for(hidden=heads * 8, heads=heads, kv_heads=kv, ffn=24 * n)
    cfg = tp.TPConfig(model=model, seq_len=9, batch=2, dtype="fp64", iters=2, warmup=1, return_output=True)
    run = tp.run_tp(cfg, nproc=n, backend="gloo", timeout_s=60)
    m = run.measured
    out = m["output"]
    ref = transformers_layer(model, tp.layer_weights(model, "fp64", "cpu", cfg.seed), out["x"])
    scale = np.abs(ref).max()
    # transformers' eager attention takes its softmax in float32: agreement to ~1e-7 is all it allows
    assert np.abs(out["one_rank"] - ref).max() / scale < 1e-6
    assert np.abs(out["tp"] - ref).max() / scale < 1e-6
    assert np.abs(out["tp"] - out["one_rank"]).max() / scale < 1e-12  # both float64: the split changes nothing
    assert m["correct"] and m["rel_diff"] < 1e-12 and m["nproc"] == n and m["backend"] == "gloo"
    # timings and derived figures are consistent
    assert m["tp_s"] > 0 and m["one_rank_s"] > 0 and 0 < m["comm_s"] < m["tp_s"] * 1.01
    assert m["speedup"] == pytest.approx(m["one_rank_s"] / m["tp_s"])
    assert m["scaling_efficiency"] == pytest.approx(m["one_rank_s"] / (n * m["tp_s"]))
    assert m["comm_share"] == pytest.approx(m["comm_s"] / m["tp_s"])
    assert m["allreduce_bytes"] == 2 * 9 * heads * 8 * 8  # tokens × hidden × 8 bytes
    assert {r.name for r in run.results()} == {"one rank", f"tp{n}"}


def test_fp32_matches_within_tolerance_and_the_estimate_uses_the_measured_link():
    model = tp.model_for(hidden=64, heads=4, kv_heads=2, ffn=96)
    # a measured link for this backend and rank count (as bench collective saves it)
    from gemmlib.core.machine import cpu_model
    m = interconnect.MeasuredInterconnect("gloo", "cpu", cpu_model(), 2, busbw=1e9, latency_s=1e-4,
                                          busbw_bytes=1 << 20, latency_bytes=8)
    interconnect.save_interconnect(m)
    run = tp.run_tp(tp.TPConfig(model=model, seq_len=16, dtype="fp32", iters=2, warmup=1), nproc=2,
                    backend="gloo", timeout_s=60)
    assert run.measured["correct"] and run.measured["rel_diff"] < tp.TOLERANCE["fp32"]
    e = run.estimate
    assert e["link"] == m.name
    # the estimate's communication: two all-reduces of 16 × 64 × 4 bytes on that link, by hand
    size = 16 * 64 * 4
    assert e["tp"]["comm_s"] == pytest.approx(2 * (1e-4 + size * (2 * 1 / 2) / 1e9))
    assert e["one_rank"]["comm_s"] == 0.0
    rows = run.rows()
    assert [r["ranks"] for r in rows] == [1, 2] and rows[1]["estimated_comm_s"] == e["tp"]["comm_s"]


def test_estimate_on_the_catalogue_link_of_eight_h100s():
    """Without a measurement the estimate uses the catalogue's link: the scale-out model's shares
    (every GEMM of the layer at 1/8) and two all-reduces, checked by hand."""
    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm.accounting import layer_ops
    model = tp.model_for("llama-3-8b", 1)
    e = tp.estimate_layer(model, seq_len=512, batch=1, dtype="bf16", kind="cuda", device_name="NVIDIA H100 80GB HBM3",
                          nproc=8, backend="nccl")
    assert e["hardware"] == "H100 SXM" and not e["link_measured"] and "catalogue" in e["note"]
    gemm = {o.name: o.flops for o in layer_ops(model, 512)}
    for o in e["tp"]["ops"]:
        if o["kind"] == "gemm":
            assert o["flops"] * 8 == gemm[o["name"]]
    by = {o["name"]: o for o in e["tp"]["ops"]}
    one = {o["name"]: o for o in e["one_rank"]["ops"]}
    assert by["residual"]["flops"] == one["residual"]["flops"]  # replicated on every rank
    assert {o["name"] for o in e["tp"]["ops"]} == set(gemm) | {"activation", "residual"}
    nvlink = get_hardware("h100").interconnect.intra
    size = 512 * 4096 * 2
    assert [(c["op"], c["after"], c["size_bytes"]) for c in e["tp"]["collectives"]] == [
        ("all_reduce", "o_proj", size), ("all_reduce", "down_proj", size)]
    assert e["tp"]["comm_s"] == pytest.approx(2 * (nvlink.latency_s + size * (2 * 7 / 8) / nvlink.busbw))
    assert e["one_rank"]["comm_s"] == 0.0 and e["tp"]["time_s"] < e["one_rank"]["time_s"]
    with pytest.raises(InputError, match="split evenly"):
        tp.estimate_layer(model, seq_len=8, batch=1, dtype="bf16", kind="cuda", device_name="NVIDIA H100",
                          nproc=3, backend="nccl")
    # between CPU processes with nothing measured: the CPU row's placeholder link inside the machine, said so
    cpu = tp.estimate_layer(tp.model_for(hidden=64, heads=4, ffn=64), seq_len=8, batch=1, dtype="fp32", kind="cpu",
                            device_name="Some CPU", nproc=2, backend="gloo")
    placeholder = get_hardware("cpu").interconnect.pcie_link
    assert cpu["link"] == placeholder.name and "placeholder" in cpu["note"] and "bench collective" in cpu["note"]
    assert cpu["tp"]["comm_s"] == pytest.approx(2 * (placeholder.latency_s + 8 * 64 * 4 / placeholder.busbw))


@pytest.mark.parametrize("argv,match", [
    (["--nproc", "99", "--backend", "gloo"], "more ranks than this machine may start"),
    (["--nproc", "3", "--backend", "gloo"], "split evenly across 3 ranks"),
    (["--nproc", "2", "--backend", "gloo", "--preset", "mixtral-8x7b"], "mixture of experts"),
    (["--nproc", "2", "--backend", "gloo", "--preset", "llama-3-8b", "--scale", "1", "--seq-len", "512"], "too much for a CPU"),
    (["--nproc", "2", "--backend", "gloo", "--interconnect", "warp drive"], "no measured interconnect called"),
    (["--nproc", "2", "--backend", "gloo", "--dtype", "int8"], "runs in fp32, bf16, fp16, fp64"),
])
def test_tp_cli_bad_input_exits_2_with_one_line(argv, match, run_cli):
    rc, out, err = run_cli(["bench", "tp", *argv])
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and match in err


def test_tp_cli_json(run_cli):
    rc, out, err = run_cli(["bench", "tp", "--nproc", "2", "--backend", "gloo", "--hidden", "64", "--heads", "4",
                         "--kv-heads", "2", "--ffn", "64", "--seq-len", "8", "--iters", "2", "--json"])
    assert rc == 0, err
    d = json.loads(out)
    assert d["correct"] and d["nproc"] == 2 and "output" not in d
    for k in ("one_rank_s", "tp_s", "comm_s", "comm_share", "speedup", "scaling_efficiency", "rel_diff", "estimate"):
        assert k in d
    # nothing measured: the CPU row's placeholder link, and the advice to measure one
    assert d["estimate"]["link"] == "shared memory (gloo)" and "bench collective" in d["estimate"]["note"]


# ----------------------------------------------------------------------------- a GPU rank's host memory
_RANK_HOST = r"""
import resource, sys
from gemmlib.measure import launch, tp

def vmdata():
    for line in open("/proc/self/status"):
        if line.startswith("VmData:"):
            return int(line.split()[1]) * 1024

cfg = tp.TPConfig(model=tp.model_for("llama-3-70b", 1), seq_len=2048, dtype="bf16")
# what the count gives a rank's own work on the host, beyond a fresh torch and its CUDA context
own = tp.host_bytes_per_rank(cfg, 8, "cuda") - launch.RANK_MEMORY_BYTES - launch.CUDA_RANK_HOST_BYTES
cap = vmdata() + int(own) + 256 * 1024**2
resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
# "meta" stands in for the GPU: a device whose memory is not the host's
w = tp.layer_weights(cfg.model, cfg.dtype, sys.argv[1])
x = tp.make_input(cfg, sys.argv[1])
print("built", sum(t.numel() for t in w.values()), "weights", x.shape[1], "tokens")
"""


def test_a_gpu_rank_builds_a_70b_layer_within_the_host_memory_its_plan_counts():
    # A rank inherits the worker's memory limit (its start-up + the plan's host bytes). The weights used to
    # be drawn in fp32 on the host first (0.94 GB for one 28672×8192 MLP matrix, twice over while / √in
    # ran): under a limit that counts no weights that fails with "can't allocate memory". Drawn on the
    # device, the layer needs no host memory beyond its input.
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", _RANK_HOST, "meta"], cwd=root, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)})
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert "built 855638016 weights 2048 tokens" in proc.stdout  # 8192·(2·8192 + 2·1024) + 3·8192·28672


def test_the_gpu_plan_counts_each_ranks_host_bytes(monkeypatch):
    from gemmlib.measure import launch, plan, safety

    monkeypatch.setattr(launch, "cuda_count", lambda: 8)
    monkeypatch.setattr(safety, "available_memory", lambda device: 10**13)
    cfg = tp.TPConfig(model=tp.model_for("llama-3-8b", 16), seq_len=128, dtype="bf16")
    p = plan.admit(tp.SPEC, tp.TPLaunch(cfg, ranks=(2, 4), backend="nccl"))
    assert p.host_bytes == max(tp.host_bytes_per_rank(cfg, n, "cuda") for n in (2, 4))
    assert p.host_bytes >= launch.RANK_MEMORY_BYTES + launch.CUDA_RANK_HOST_BYTES
    host, _device = plan.memory_limit(p, "cuda")
    assert host >= p.host_bytes  # the worker's allowance, which every rank inherits, covers a rank
    cpu = plan.admit(tp.SPEC, tp.TPLaunch(cfg, ranks=(2,), backend="gloo"))
    assert cpu.host_bytes == 0.0 and cpu.bytes >= cfg.bytes_per_rank(2)  # a CPU run's bytes are all host bytes


def test_weights_drawn_on_the_device_are_the_cpu_draws_of_before():
    import math

    m = tp.model_for(hidden=32, heads=4, kv_heads=2, ffn=48).replace(qkv_bias=True)
    w = tp.layer_weights(m, "fp32", "cpu", seed=5)
    g = torch.Generator(device="cpu").manual_seed(5)
    assert torch.equal(w["q"], torch.randn(m.q_dim, 32, generator=g) / math.sqrt(32))
    meta = tp.layer_weights(m, "bf16", "meta")
    assert {k: tuple(v.shape) for k, v in meta.items()} == {k: tuple(v.shape) for k, v in w.items()}


# ----------------------------------------------------------------------------- an unknown GPU
def test_an_unknown_gpu_gets_no_other_gpus_peaks():
    # (the GH200 this test once used is in the catalogue now: a name no row matches)
    UNKNOWN_GPU = "NVIDIA Z9 Imaginary 96GB"
    from gemmlib.core import ceilings
    from gemmlib.core.ceilings import Ceilings

    with pytest.raises(InputError, match="not in the catalogue"):
        tp.rank_hardware("cuda", UNKNOWN_GPU, 2)
    model = tp.model_for(hidden=64, heads=4, kv_heads=2, ffn=96)
    est = tp.estimate_layer(model, seq_len=16, batch=1, dtype="bf16", kind="cuda", device_name=UNKNOWN_GPU,
                            nproc=2, backend="nccl")
    assert "not in the catalogue" in est["error"] and "tp" not in est
    hw, src = tp.rank_hardware("cuda", "NVIDIA H100 80GB HBM3", 2)
    assert hw.name == "H100 SXM" and src == tp.SRC_DATASHEET
    # measured ceilings of the unknown GPU: those, named as measured
    ceilings.save_ceilings(Ceilings("cuda", UNKNOWN_GPU, {"bf16": 7.0e14}, 3.5e12, gemm_size=8192,
                                    copy_bytes=2**30))
    hw, src = tp.rank_hardware("cuda", UNKNOWN_GPU, 2)
    assert src == tp.SRC_MEASURED and hw.peak("bf16") == pytest.approx(7.0e14)
