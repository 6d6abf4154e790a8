"""What crosses the GPUs in an 8-bit run: only the GEMMs' inputs are 8-bit, so the TP reductions, the pipeline's
activations, Megatron's all-to-alls and every gradient go at 16 bits, while Transformer Engine's sequence-parallel
all-gather of a GEMM input goes at 8; DeepSeek-V3 dispatches in FP8 and combines in BF16. Each size is checked
against the same collective of the bf16 run (tokens × width × bytes, nothing else changes)."""

from __future__ import annotations

import pytest

from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload, prefill_ops
from gemmlib.llm.parallel import Parallel, forward_collectives, pipeline_send, wire_bytes
from gemmlib.llm.presets import from_name
from gemmlib.llm.training import Training, train

H100 = get_hardware("H100 SXM")
LLAMA = from_name("llama-3-8b")
MIXTRAL = from_name("mixtral-8x7b")


def _wl(dtype: str, batch: int = 8) -> Workload:
    return Workload(batch=batch, seq_len=512, act_dtype=dtype, weight_dtype="bf16", attention="fused", causal=True,
                    lm_head="all")


def _by(colls, op, after):
    return next(c for c in colls if c.op == op and c.after == after)


def test_wire_bytes_by_dtype():
    assert wire_bytes(_wl("fp8")) == (2.0, 1.0)
    assert wire_bytes(_wl("bf16")) == (2.0, 2.0)
    assert wire_bytes(_wl("fp32")) == (4.0, 4.0)


def test_an_fp8_runs_reductions_are_16_bit_and_its_sp_gathers_8_bit():
    par = Parallel(tp=4, sequence_parallel=True)
    f8 = forward_collectives(prefill_ops(LLAMA, _wl("fp8")), LLAMA, _wl("fp8"), par, H100)
    b16 = forward_collectives(prefill_ops(LLAMA, _wl("bf16")), LLAMA, _wl("bf16"), par, H100)
    assert _by(f8, "reduce_scatter", "o_proj").size_bytes == _by(b16, "reduce_scatter", "o_proj").size_bytes
    assert _by(f8, "all_gather", "o_proj").size_bytes == _by(b16, "all_gather", "o_proj").size_bytes / 2
    no_sp = Parallel(tp=4)
    f8 = forward_collectives(prefill_ops(LLAMA, _wl("fp8")), LLAMA, _wl("fp8"), no_sp, H100)
    b16 = forward_collectives(prefill_ops(LLAMA, _wl("bf16")), LLAMA, _wl("bf16"), no_sp, H100)
    assert _by(f8, "all_reduce", "down_proj").size_bytes == _by(b16, "all_reduce", "down_proj").size_bytes


def test_the_pipelines_activations_are_16_bit():
    par = Parallel(pp=2)
    assert (pipeline_send(LLAMA, 4096, 1, _wl("fp8"), par, H100).size_bytes
            == pipeline_send(LLAMA, 4096, 1, _wl("bf16"), par, H100).size_bytes == 4096 * LLAMA.hidden * 2)


@pytest.mark.parametrize("fp8_dispatch, bytes_per_element", [(False, 2.0), (True, 1.5)])
def test_the_all_to_all_is_16_bit_unless_the_dispatch_is_8_bit(fp8_dispatch, bytes_per_element):
    """One entry for dispatch + combine: its size per call is the mean of the two (2 and 2, or 1 and 2)."""
    par = Parallel(ep=4, ep_fp8_dispatch=fp8_dispatch)
    wl = _wl("fp8")
    a2a = _by(forward_collectives(prefill_ops(MIXTRAL, wl), MIXTRAL, wl, par, H100), "all_to_all", "down_proj")
    tokens = 8 * 512 / 4  # each EP rank's own sequences
    assert a2a.size_bytes == tokens * MIXTRAL.experts_per_token * MIXTRAL.hidden * bytes_per_element


def test_training_mirrors_carry_the_gradients_as_they_travel():
    """Backward: a reduce-scatter's mirror all-gathers the output gradient at 8 bits, an all-gather's mirror
    reduce-scatters the input gradient at 16 bits; the all-to-alls as forward."""
    par = Parallel(tp=2, ep=2, sequence_parallel=True)
    tr = train(MIXTRAL, _wl("fp8", batch=16), H100, par, Training(tokens=1e9, micro_batch=4))
    o = [c for c in tr.collectives if c.after == "o_proj"]
    fwd_rs = next(c for c in o if c.op == "reduce_scatter" and str(c.note) == "sequence parallel")
    back_ag = next(c for c in o if c.op == "all_gather" and "backward of the reduce-scatter" in str(c.note))
    back_rs = next(c for c in o if c.op == "reduce_scatter" and "backward of the all-gather" in str(c.note))
    assert back_ag.size_bytes == fwd_rs.size_bytes / 2 and back_rs.size_bytes == fwd_rs.size_bytes
    assert back_ag.time_s < fwd_rs.time_s  # timed again at its own size
    a2a = [c for c in tr.collectives if c.op == "all_to_all"]
    assert len({c.size_bytes for c in a2a}) == 1


def test_an_fp8_runs_loss_sort_and_mtp_move_16_bit_tensors():
    """The logits (the LM head's output), the tokens the all-to-all received and the MTP projection's activations
    are 16-bit in an 8-bit run: the same bytes as the bf16 run's."""
    from gemmlib.llm.training import _cross_entropy, _expert_sort, _mtp_ops

    par = Parallel(ep=4)
    f8, b16 = _wl("fp8"), _wl("bf16")
    assert _cross_entropy(LLAMA, f8, par).act_bytes == _cross_entropy(LLAMA, b16, par).act_bytes
    assert _expert_sort(MIXTRAL, f8, par, 8).act_bytes == _expert_sort(MIXTRAL, b16, par, 8).act_bytes
    ds = from_name("deepseek-v3")
    mtp = {w.act_dtype: [o for o in _mtp_ops(ds, w, par, [], [], [], 4) if o.name == "mtp_proj"] for w in (f8, b16)}
    assert mtp["fp8"] and [o.act_bytes for o in mtp["fp8"]] == [o.act_bytes for o in mtp["bf16"]]
