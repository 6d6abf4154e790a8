"""The one helper the exactness tests share: a workload counted under the reference convention.

The estimator's default is what an engine runs (fused causal attention, the LM head on the last prompt
position, routed experts, absorbed MLA); FlopCounterMode on transformers' eager models (and on the
eager reference modules of ``estimator_reference.py``) counts what transformers' eager code runs. Every
test that compares the accounting with FlopCounterMode builds its workload here, so that the reference
convention (``--reference transformers``) stays exact, family by family.
"""

from __future__ import annotations

from gemmlib.llm.accounting import REFERENCE, Workload


def reference_workload(**fields) -> Workload:
    """``Workload(**fields)`` under the reference convention (a switch given in ``fields`` still overrides it)."""
    return Workload(convention=REFERENCE, **fields)
