"""The precision benchmark on the CPU: every row, its error, its guards, its CLI."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gemmlib.cli import main
from gemmlib.core.errors import InputError
from gemmlib.core.results import BenchResult, clear_recorded, recorded
from gemmlib.measure import precision as bp
from gemmlib.measure import safety

ROOT = Path(__file__).resolve().parents[2]
SHAPE = (48, 40, 32, "tiny")


@pytest.fixture(scope="module")
def cpu_rows():
    cfg = bp.PrecisionConfig(device="cpu", shapes=(SHAPE,), min_run_time=0.02)
    return bp.run_precision(cfg, record_results=False)


def _by_name(rows):
    return {r.name: r for r in rows}


def test_every_format_has_a_row(cpu_rows):
    names = [r.name for r in cpu_rows]
    assert names[:4] == ["fp32", "tf32", "fp16", "bf16"]
    assert {"int8", "int8 + quant"} <= set(names)
    assert "fp8" in names
    assert all(r.bench == "precision" and r.device == "cpu" for r in cpu_rows)


def test_tf32_on_a_cpu_is_a_row_that_says_why(cpu_rows):
    r = _by_name(cpu_rows)["tf32"]
    assert not r.supported and "CPU" in r.reason and r.median_s is None


def test_errors_against_float64_follow_the_format(cpu_rows):
    rows = _by_name(cpu_rows)
    assert rows["fp32"].rel_error < 1e-5
    assert 1e-5 < rows["fp16"].rel_error < 5e-3  # 10-bit mantissa
    assert 1e-4 < rows["bf16"].rel_error < 3e-2  # 7-bit mantissa: about 8x fp16's error
    assert rows["bf16"].rel_error > rows["fp16"].rel_error
    assert 1e-4 < rows["int8"].rel_error < 3e-2
    assert rows["int8 + quant"].rel_error == pytest.approx(rows["int8"].rel_error, rel=1e-3)


def test_figures_are_consistent(cpu_rows):
    m, n, k, _ = SHAPE
    for r in cpu_rows:
        assert r.flops == 2 * m * n * k
        assert r.shape == {"m": m, "n": n, "k": k, "label": "tiny"}
        if r.supported:
            assert r.p20_s <= r.median_s <= r.p80_s
            assert r.tflops == pytest.approx(r.flops / r.median_s / 1e12)
            assert r.extra["share_datasheet"] is None  # no datasheet for a CPU
    rows = _by_name(cpu_rows)
    assert rows["fp32"].extra["bytes_per_element"] == 4 and rows["bf16"].extra["bytes_per_element"] == 2
    assert rows["int8"].extra["bytes_per_element"] == 1
    assert rows["fp32"].extra["operand_bytes"] == (m * k + k * n + m * n) * 4
    assert rows["int8"].extra["operand_bytes"] == (m * k + k * n) * 1 + m * n * 4  # int32 result
    assert rows["int8"].bytes == m * k + k * n + 4 * m * n


def test_fp8_on_the_cpu_is_labelled_as_a_reference_kernel(cpu_rows):
    r = _by_name(cpu_rows)["fp8"]
    if r.supported:
        assert "not an fp8 speed figure" in r.reason and r.rel_error < 0.1
    else:
        assert r.reason


def test_cpu_fp16_cap_turns_into_a_row():
    cfg = bp.PrecisionConfig(device="cpu", shapes=((64, 64, 64, "s"),), dtypes=("fp16",), cpu_fp16_max_flops=1000,
                             min_run_time=0.02)
    (r,) = bp.run_precision(cfg, record_results=False)
    assert not r.supported and r.reason.startswith("skipped")


def test_time_limit_turns_remaining_rows_into_skips():
    cfg = bp.PrecisionConfig(device="cpu", shapes=((16, 16, 16, "a"), (32, 32, 32, "b")), dtypes=("fp32", "int8"),
                             min_run_time=0.02)
    rows = bp.run_precision(cfg, deadline=safety.Deadline(0.0), record_results=False)
    assert rows and all(not r.supported and "time limit" in r.reason for r in rows)


def test_results_are_recorded_for_the_roofline():
    clear_recorded()
    cfg = bp.PrecisionConfig(device="cpu", shapes=((16, 16, 16, "a"),), dtypes=("fp32",), min_run_time=0.02)
    rows = bp.run_precision(cfg)
    assert recorded() == rows
    clear_recorded()


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("shape, dtypes, match", [
    ((0, 8, 8, "x"), ("fp32",), "at least 1"),
    ((8, -1, 8, "x"), ("fp32",), "at least 1"),
    ((8, 8, 10**6, "x"), ("fp32",), "cap"),
    ((8, 8, 8, "x"), ("fp99",), "unknown dtype"),
    ((8, 8, 8, "x"), ("fp64",), "not part of the precision benchmark"),
    ((8, 8, 8, "x"), (), "no dtype"),
    ((8192, 8192, 8192, "x"), ("fp32",), "too much for a CPU"),
])
def test_bad_input_is_refused_before_anything_is_allocated(monkeypatch, shape, dtypes, match):
    def no_alloc(*a, **k):
        raise AssertionError("allocated before validating")

    monkeypatch.setattr(torch, "randn", no_alloc)
    with pytest.raises(InputError, match=match):
        bp.run_precision(bp.PrecisionConfig(device="cpu", shapes=(shape,), dtypes=dtypes))


def test_memory_cap_is_checked_before_allocating(monkeypatch):
    monkeypatch.setenv("GEMM_MAX_BYTES", str(1024**2))
    cfg = bp.PrecisionConfig(device="cpu", shapes=((1024, 1024, 1024, "x"),), dtypes=("fp32",))
    assert bp.estimate_bytes(cfg) > 1024**2
    with pytest.raises(InputError, match="GEMM_MAX_BYTES"):
        bp.validate(cfg)


def test_cuda_without_a_gpu_is_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InputError, match="cuda"):
        bp.validate(bp.PrecisionConfig(device="cuda", shapes=((64, 64, 64, "x"),)))


def test_gpu_capability_guards(monkeypatch):
    cfg = bp.PrecisionConfig(device="cuda")
    monkeypatch.setattr(bp, "_cuda_capability", lambda: (7, 0))
    assert "8.0" in bp._unsupported_reason("bf16", "cuda", 64, 64, 64, cfg)
    assert "8.0" in bp._unsupported_reason("tf32", "cuda", 64, 64, 64, cfg)
    assert "7.5" in bp._unsupported_reason("int8", "cuda", 64, 64, 64, cfg)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (8, 0))
    monkeypatch.setattr(torch.version, "hip", None)
    assert "8.9" in bp._unsupported_reason("fp8", "cuda", 64, 64, 64, cfg)
    monkeypatch.setattr(bp, "_cuda_capability", lambda: (9, 0))
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
    for d in bp.PRECISION_DTYPES:
        assert bp._unsupported_reason(d, "cuda", 64, 64, 64, cfg) == ""


# ----------------------------------------------------------------------------- shapes and verdict
def test_llm_shapes_come_from_the_preset():
    from gemmlib.llm.presets import from_name
    cfg = from_name("llama-2-7b")
    shapes = bp.llm_shapes("llama-2-7b", batch=2, seq=64)
    qkv_prefill, up, down, qkv_decode, up_decode = shapes
    assert qkv_prefill[:3] == (128, cfg.q_dim + 2 * cfg.kv_dim, cfg.hidden)
    assert up[:3] == (128, cfg.ffn, cfg.hidden) and down[:3] == (128, cfg.hidden, cfg.ffn)
    assert qkv_decode[0] == 2 and up_decode[0] == 2
    with pytest.raises(InputError):
        bp.llm_shapes("llama-2-7b", batch=0)


def test_default_shapes():
    gpu = bp.default_shapes("cuda")
    assert (8192, 8192, 8192, "square 8192") in gpu and bp.ARTICLE_SHAPE in gpu
    assert any(s[0] == 1 for s in gpu)  # a decode GEMM
    assert max(s[0] * s[1] * s[2] for s in bp.default_shapes("cpu")) <= 1024**3 * 4


def _pair(fp32_s, int8_s, bf16_s=None):
    def row(name, dtype, t, nbytes):
        return BenchResult("precision", name, "cpu", "Test CPU", dtype, {"m": 8, "n": 8, "k": 8, "label": "s"},
                           1024.0, nbytes, median_s=t)
    rows = [row("fp32", "fp32", fp32_s, 768), row("int8", "int8", int8_s, 384)]
    if bf16_s:
        rows.append(row("bf16", "bf16", bf16_s, 384))
    return rows


@pytest.mark.parametrize("int8_s, word", [(1 / 3, "within"), (1 / 1.5, "below"), (1 / 5, "above")])
def test_int8_verdict(int8_s, word):
    v = bp.int8_verdict(_pair(1.0, int8_s, bf16_s=0.5))
    assert word in v and "75%" in v and "bf16" in v
    assert f"{1 / int8_s:.2f}× fp32" in v


# Kernel names as cuBLAS / CUTLASS spell them (the sm_90 int8 dispatch problem, item 3).
@pytest.mark.parametrize("name, arch", [
    ("sm80_xmma_gemm_i8i8_i32i32_tn_n_tilesize128x128x64_stage3", 80),
    ("void cutlass::Kernel2<cutlass_80_tensorop_i16832gemm_s8_128x128_64x3_tn_align16>(Params)", 80),
    ("sm90_xmma_gemm_s8s8_s32s32_tn_n_tilesize256x128x64_warpgroupsize1x1x1_execute_segment_k_off", 90),
    ("ampere_int8_gemm_128x128_ldg16_nt", 80),
    ("volta_sgemm_128x64_nn", 70),
    ("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN", 90),
    ("void at::native::elementwise_kernel<128, 2>", None),
])
def test_kernel_arch_reads_the_architecture_from_a_kernel_name(name, arch):
    assert bp.kernel_arch(name) == arch


def test_dispatch_note_blames_torch_when_an_old_kernel_ran():
    old = ["sm80_xmma_gemm_i8i8_i32i32_tn_n_tilesize128x128x64_stage3", "memset"]
    note = bp.dispatch_note(old, (9, 0))
    assert "sm_80" in note and "sm_90" in note and "torch's dispatch" in note and "sm80_xmma" in note
    assert bp.dispatch_note(["sm90_xmma_gemm_s8s8_s32s32_tn_n"], (9, 0)) == ""
    assert bp.dispatch_note(old, (8, 0)) == ""  # the right kernel on an A100
    assert bp.dispatch_note([], (9, 0)) == "" and bp.dispatch_note(old, None) == ""


def test_int8_verdict_says_when_the_dispatch_is_to_blame():
    rows = _pair(1.0, 0.6, bf16_s=0.5)
    i8 = rows[1]
    i8.extra["kernels"] = ["sm80_xmma_gemm_i8i8_i32i32_tn_n_tilesize128x128x64_stage3"]
    i8.extra["dispatch_note"] = bp.dispatch_note(i8.extra["kernels"], (9, 0))
    v = bp.int8_verdict(rows)
    assert "below the claimed" in v and "torch's dispatch, not the number format" in v
    i8.extra.pop("dispatch_note")
    assert "kernel `sm80_xmma" in bp.int8_verdict(rows)


def test_int8_verdict_without_a_pair():
    assert "not checked" in bp.int8_verdict(_pair(1.0, 0.5)[:1])


def test_markdown_table_lists_unsupported_rows(cpu_rows):
    md = bp.markdown_table(cpu_rows)
    assert md.count("\n") == len(cpu_rows) + 1
    assert "**not run:** tf32" in md


# ----------------------------------------------------------------------------- CLI
def test_cli_json(capsys):
    rc = main(["bench", "precision", "--device", "cpu", "--m", "24", "--n", "16", "--k", "8",
               "--dtypes", "fp32,tf32,int8", "--min-run-time", "0.02", "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["device"] == "cpu" and "verdict" in doc
    rows = {r["name"]: r for r in doc["results"]}
    assert set(rows) == {"fp32", "tf32", "int8", "int8 + quant"}
    for r in doc["results"]:
        assert {"dtype", "supported", "reason", "median_s", "tflops", "rel_error"} <= set(r)
    assert rows["tf32"]["supported"] is False and rows["tf32"]["tflops"] is None
    assert rows["fp32"]["tflops"] > 0 and rows["fp32"]["rel_error"] < 1e-5


def test_cli_text_table(capsys):
    assert main(["bench", "precision", "--device", "cpu", "--size", "16", "--dtypes", "fp32,int8",
                 "--no-quant", "--min-run-time", "0.02"]) == 0
    out = capsys.readouterr().out
    assert "16×16×16" in out and "INT8" in out and "int8 + quant" not in out


@pytest.mark.parametrize("args", [
    ["--m", "0"], ["--n", "-4"], ["--dtypes", "fp32,fp99"], ["--size", "100000"],
    ["--device", "tpu"], ["--shapes", "squares", "--m", "4"], ["--min-run-time", "0"],
])
def test_cli_bad_input_exits_2_with_one_line(capsys, args):
    assert main(["bench", "precision", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err


def test_cli_bad_input_is_refused_before_torch_loads_so_nothing_is_allocated():
    """Quick and allocation-free, shown by what it implies: in a fresh interpreter the refusal comes
    before torch is even imported (no tensor can exist, no torch start-up is paid)."""
    code = ("import json, sys\nfrom gemmlib.cli import main\n"
            "rc = main(['bench', 'precision', '--m', '0'])\n"
            "print(json.dumps([rc, 'torch' in sys.modules]))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert json.loads(out.stdout) == [2, False], out.stderr
    assert out.stderr.strip().splitlines() == ["error: --m must be at least 1, got 0"]


def test_cli_bench_without_a_name(capsys):
    assert main(["bench"]) == 2
    assert "precision" in capsys.readouterr().err


def test_tf32_switch_is_restored():
    m = torch.backends.cuda.matmul
    read = (lambda: m.fp32_precision) if hasattr(m, "fp32_precision") else (lambda: m.allow_tf32)
    before = read()
    with bp._tf32(True):
        assert read() in ("tf32", True)
    assert read() == before
    with bp._tf32(False):
        assert read() in ("ieee", False)
    assert read() == before


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_every_format_on_the_gpu_including_padding():
    # 5×20×30: int8 needs padding to 17×24×32 (M > 16, K and N multiples of 8), fp8 to K = N = 32.
    cfg = bp.PrecisionConfig(device="cuda", shapes=((5, 20, 30, "odd"), (256, 256, 256, "square")), min_run_time=0.05)
    rows = bp.run_precision(cfg, record_results=False)
    cap = torch.cuda.get_device_capability()
    for r in rows:
        assert r.supported or r.reason, r
        if r.supported:
            assert r.rel_error is not None and r.rel_error < 0.1, (r.name, r.rel_error)
            assert r.tflops > 0
    odd = {r.name: r for r in rows if r.shape["label"] == "odd"}
    assert odd["int8"].supported and "padded 5×30·30×20 to 17×32·32×24" in odd["int8"].reason
    assert odd["fp32"].rel_error < 1e-5  # TF32 must be off for the fp32 row
    square = {r.name: r for r in rows if r.shape["label"] == "square"}
    if cap >= (8, 0):
        assert square["tf32"].supported and square["tf32"].rel_error > square["fp32"].rel_error
    if cap >= (8, 9):
        assert odd["fp8"].supported and "K and N multiples of 16" in odd["fp8"].reason
    else:
        assert not square["fp8"].supported and "8.9" in square["fp8"].reason
