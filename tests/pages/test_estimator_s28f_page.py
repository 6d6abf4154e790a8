"""The LLM Estimator page, review s28 (F), through AppTest: a training run's CP ranks in the headline, as the CLI."""

from __future__ import annotations

import pytest
from estimator_app import estimator_app

LLAMA70 = dict(le_preset="llama-3-70b", le_pp=4, le_dp=8, le_gpus=32, le_batch=256, le_seq=4096, le_new=0)


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine."""


_app = estimator_app


@pytest.mark.parametrize("cp", ["2", "2.5"])  # 2.5: the int box takes 2, as Streamlit reads the link (it gave CP 1)
def test_a_link_to_a_cp_training_run_gives_the_clis_time_to_first_token_on_its_first_run(run_cli, cp):
    # llama-3-70b at PP 4, DP 8, CP 2 with the training run on: the headline's TTFT was 11.4 s (32 GPUs, the CP
    # ranks left out), `estimate ... --train --cp 2` says 5.68 s (64 GPUs, the CP ranks as data replicas)
    rc, out, err = run_cli(["estimate", "--preset", "llama-3-70b", "--pp", "4", "--dp", "8", "--cp", "2",
                            "--virtual-stages", "2", "--batch", "256", "--seq-len", "4096", "--new-tokens", "0",
                            "--train", "--train-tokens", "1e12"])
    assert rc == 0, err
    assert "prefill (time to first token) 5.68 s" in out
    at = _app(**LLAMA70, le_train="true", le_cp=cp, le_vs=2)
    assert not at.exception, [e.value for e in at.exception]  # (the training run does not fit: its tab says so)
    assert [m.value for m in at.metric][0] == "5.68 s", [(m.label, m.value) for m in at.metric]
    at.run()  # the Training tab's widgets now drawn: the same
    assert [m.value for m in at.metric][0] == "5.68 s"
    assert not at.info or not any("GPUs follow the parallel sizes" in i.value for i in at.info)
