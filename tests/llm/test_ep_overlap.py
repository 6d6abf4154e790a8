"""How much an overlapped schedule hides of the EP all-to-alls. Megatron's ``overlap_moe_expert_parallel_comm`` was
measured to run 36.55 % of the communication time concurrently with compute (Megatron-Bridge's Nsight comparison of
Qwen3-30B-A3B on 16 H100s); DeepSeek-V3's DualPipe is stated to hide all of it. Each exposed time is checked against
the same step's all-to-all and compute times, which the overlap does not change."""

from __future__ import annotations

import json

import pytest

from gemmlib.cli import main
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm import published as P
from gemmlib.llm.accounting import Workload
from gemmlib.llm.parallel import EP_OVERLAP_HIDDEN, Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.training import Training, train

H100 = get_hardware("H100 SXM")
QWEN = from_name("qwen3-30b-a3b")
WL = Workload(batch=64, seq_len=1024, attention="fused", causal=True, lm_head="all")
TR = Training(tokens=1e9, micro_batch=16, zero=1)


def _step(**kw):
    return train(QWEN, WL, H100, Parallel(ep=16, gpus_per_node=8, **kw), TR)


def test_megatrons_overlap_hides_its_measured_share_of_the_all_to_alls():
    off = _step()
    on = _step(ep_comm_overlap=True)
    e_off, t_off = off.exposed["ep"]
    e_on, t_on = on.exposed["ep"]
    assert t_on == pytest.approx(t_off) and e_off == pytest.approx(t_off)  # the same all-to-alls, all exposed off
    # inter-node EP16: the all-to-alls outweigh the compute, so the measured share is the bound, not the compute
    assert t_on * EP_OVERLAP_HIDDEN["megatron"] < on.compute_s
    assert e_on == pytest.approx(t_on * (1 - 0.3655))
    assert on.step_time_s == pytest.approx(off.step_time_s - 0.3655 * t_off)
    d = on.to_dict()
    assert (d["ep_overlap"], d["ep_overlap_hidden_share"]) == ("megatron", 0.3655)
    assert (off.to_dict()["ep_overlap"], off.to_dict()["ep_overlap_hidden_share"]) == (None, 0.0)


def test_dualpipe_hides_all_it_can_behind_the_compute():
    dual = _step(ep_comm_overlap=True, ep_overlap="dualpipe")
    e, t = dual.exposed["ep"]
    per_mb = dual.forward_s + dual.backward_s + dual.recompute_s  # the compute of one micro-batch period
    assert e == pytest.approx(max(0.0, t - dual.microbatches * per_mb), rel=1e-9)
    assert e < _step(ep_comm_overlap=True).exposed["ep"][0]


def test_an_unknown_schedule_is_refused():
    with pytest.raises(InputError, match="megatron, dualpipe"):
        Parallel(ep=2, ep_comm_overlap=True, ep_overlap="zero-bubble")


def test_an_overlap_with_nothing_to_overlap_is_refused(capsys):
    """--ep-comm-overlap at EP 1 (a dense model, or experts kept whole on each GPU) once said "EP all-to-alls
    overlapped" of all-to-alls that do not exist."""
    base = ["estimate", "--preset", "llama-3-8b", "--train", "--train-tokens", "1e9", "--gpus", "8"]
    assert main(base + ["--ep-comm-overlap"]) == 2
    assert capsys.readouterr().err.strip() == ("error: EP overlap (--ep-comm-overlap) overlaps the collectives of EP "
                                               "ranks: with EP 1 there are none")
    with pytest.raises(InputError, match="with EP 1 there are none"):
        train(QWEN, WL, H100, Parallel(dp=4, ep_comm_overlap=True), TR)


def test_the_cli_flag_names_the_schedule(capsys):
    base = ["estimate", "--preset", "qwen3-30b-a3b", "--train", "--train-tokens", "1e9", "--ep", "16",
            "--gpus-per-node", "8", "--batch", "64", "--seq-len", "1024", "--micro-batch", "16", "--json"]
    shares = {}
    for extra in ([], ["--ep-comm-overlap"], ["--ep-comm-overlap", "dualpipe"]):
        assert main(base + extra) == 0
        t = json.loads(capsys.readouterr().out)["train"]
        shares[tuple(extra)] = (t["ep_overlap"], t["ep_overlap_hidden_share"], t["step_time_s"])
    assert shares[()][:2] == (None, 0.0)
    assert shares[("--ep-comm-overlap",)][:2] == ("megatron", 0.3655)
    assert shares[("--ep-comm-overlap", "dualpipe")][:2] == ("dualpipe", 1.0)
    assert shares[()][2] > shares[("--ep-comm-overlap",)][2] > shares[("--ep-comm-overlap", "dualpipe")][2]
    assert main(base[:-1] + ["--ep-comm-overlap"]) == 0
    assert "EP all-to-alls overlapped (megatron: at most 37% hidden)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as bad:
        main(base + ["--ep-comm-overlap", "full"])
    assert bad.value.code == 2
    assert "invalid choice: 'full'" in capsys.readouterr().err


def test_a_published_dualpipe_row_overlaps_as_dualpipe_and_every_other_as_megatron():
    ms, _ = P.load()
    schedules = {m.id: P.mapping(m).parallel.ep_overlap for m in ms if m.setup.get("ep_comm_overlap")}
    assert schedules["deepseek-v3-2048-h800-fp8"] == "dualpipe"
    assert {s for i, s in schedules.items() if i != "deepseek-v3-2048-h800-fp8"} == {"megatron"}


def test_the_words_that_name_the_share_say_the_constant():
    """The page's labels and help, translated text that cannot be formatted from the constant, say its value."""
    from gemmlib.views.estimator import FIELDS, LABELS

    share = f"{EP_OVERLAP_HIDDEN['megatron'] * 100:.2f}%"
    assert share in LABELS["megatron"] and share in FIELDS["le_epo"].help
