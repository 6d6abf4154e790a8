"""The helpers the exactness tests share: a workload counted under the reference convention, and the
FlopCounterMode totals of a transformers model's prefill and first decode step.

The estimator's default is what an engine runs (fused causal attention, the LM head on the last prompt
position, routed experts, absorbed MLA); FlopCounterMode on transformers' eager models (and on the
eager reference modules of ``estimator_reference.py``) counts what transformers' eager code runs. Every
test that compares the accounting with FlopCounterMode builds its workload here, so that the reference
convention (``--reference transformers``) stays exact, family by family.
"""

from __future__ import annotations

import torch
from torch.utils.flop_counter import FlopCounterMode

from gemmlib.llm.accounting import REFERENCE, Workload


def reference_workload(**fields) -> Workload:
    """``Workload(**fields)`` under the reference convention (a switch given in ``fields`` still overrides it)."""
    return Workload(convention=REFERENCE, **fields)


def prefill_and_decode(model, ids: torch.Tensor, *, carry: str = "cache", prefill_kwargs: dict | None = None,
                       step_kwargs: dict | None = None) -> tuple[int, int, object]:
    """FlopCounterMode totals of a prefill over ``ids`` and of one greedy decode step after it, and what the model
    carries from one to the other after that step: its ``cache`` (or, for RWKV, its ``state``), the one the prefill
    returned unless ``prefill_kwargs`` hands one in (RecurrentGemma returns none); ``step_kwargs`` go to the step."""
    prefill_kwargs = prefill_kwargs or {}
    with torch.no_grad():
        with FlopCounterMode(display=False) as fc:
            out = model(ids, use_cache=True, **prefill_kwargs)
        prefill = fc.get_total_flops()
        carried = prefill_kwargs.get(carry, getattr(out, carry, None))
        with FlopCounterMode(display=False) as fc:
            out = model(out.logits[:, -1:].argmax(-1), use_cache=True, **{carry: carried}, **(step_kwargs or {}))
        decode = fc.get_total_flops()
    after = getattr(out, carry, None)
    return prefill, decode, carried if after is None else after
