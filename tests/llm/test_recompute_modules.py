"""Megatron's selective recomputation by module (``--recompute-granularity selective --recompute-modules …``): each
module reruns its own forward ops in backward and keeps only its input. Checked against the forward ops of the
accounting picked by name (the module's own ops), the all-to-alls of the MoE layer and the activation terms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gemmlib.cli import main
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload, prefill_ops
from gemmlib.llm.hf import read_config_file
from gemmlib.llm.memory import RECOMPUTE_MODULES
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.training import Training, train

H100 = get_hardware("H100 SXM")
WL = Workload(batch=16, seq_len=2048, attention="fused", causal=True, lm_head="all")
# DeepSeek-V3 in bf16 (the published table's copy of its config; the preset is the fp8 checkpoint, which does not train)
DSV3 = Path(__file__).resolve().parents[2] / "benchmarks" / "published" / "models" / "deepseek-v3.json"


def _model(name):
    return read_config_file(str(DSV3))[0] if name == "deepseek-v3" else from_name(name)


def _step(cfg, par, modules=(), recompute="selective"):
    return train(cfg, WL, H100, par, Training(tokens=1e9, micro_batch=par.ep, recompute=recompute,
                                              recompute_modules=modules, zero=1))


def _fwd(cfg, names) -> int:
    return sum(o.flops for o in prefill_ops(cfg, WL) if o.name in names)


@pytest.mark.parametrize("preset, module, names", [
    ("qwen3-30b-a3b", "moe", ("router", "gate_proj", "up_proj", "down_proj")),
    ("deepseek-v3", "moe", ("router", "gate_proj", "up_proj", "down_proj", "shared_gate_proj", "shared_up_proj",
                            "shared_down_proj")),
    ("deepseek-v3", "shared_experts", ("shared_gate_proj", "shared_up_proj", "shared_down_proj")),
    ("deepseek-v3", "mla_up_proj", ("q_b_proj", "kv_b_proj")),
    ("deepseek-v3", "mlp", ("dense_gate_proj", "dense_up_proj", "dense_down_proj")),
    ("llama-3-8b", "mlp", ("gate_proj", "up_proj", "down_proj")),
    ("llama-3-8b", "core_attn", ("attn_scores", "attn_values")),
])
def test_each_module_reruns_its_own_gemms(preset, module, names):
    cfg = _model(preset)
    par = Parallel(ep=8 if cfg.is_moe else 1, dp=1)
    st = _step(cfg, par, (module,))
    assert st.flops["recompute"] == _fwd(cfg, names)
    assert st.training.recompute_modules == (module,)


def test_element_wise_modules_rerun_no_gemm_but_cost_time():
    cfg = from_name("qwen3-30b-a3b")
    par = Parallel(ep=8)
    none = _step(cfg, par, recompute="none")
    for mods in (("layernorm",), ("moe_act",), ("layernorm", "moe_act")):
        st = _step(cfg, par, mods)
        assert st.flops["recompute"] == 0
        assert st.recompute_s > 0 and st.step_time_s > none.step_time_s
    both = _step(cfg, par, ("layernorm", "moe_act")).recompute_s
    assert both == pytest.approx(_step(cfg, par, ("layernorm",)).recompute_s + _step(cfg, par, ("moe_act",)).recompute_s)


def test_the_moe_module_reruns_its_all_to_alls_and_keeps_less():
    cfg = from_name("qwen3-30b-a3b")
    par = Parallel(ep=8)
    none, moe = _step(cfg, par, recompute="none"), _step(cfg, par, ("moe",))
    a2a = {name: sum(c.count for c in st.collectives if c.op == "all_to_all") for name, st in (("none", none),
                                                                                               ("moe", moe))}
    assert a2a["moe"] == pytest.approx(1.5 * a2a["none"])  # forward 2, backward 2, the recomputed forward 2 more
    assert moe.memory.activation_bytes < none.memory.activation_bytes
    lnorm = _step(cfg, par, ("layernorm",))
    assert moe.memory.activation_bytes < lnorm.memory.activation_bytes < none.memory.activation_bytes


def test_selective_alone_is_megatrons_default_core_attn():
    cfg = from_name("llama-3-8b")
    default = train(cfg, WL, H100, Parallel(), Training(tokens=1e9, recompute="selective"))
    assert default.training.recompute_modules == ("core_attn",)
    assert default.step_time_s == _step(cfg, Parallel(), ("core_attn",)).step_time_s
    assert "core_attn" in RECOMPUTE_MODULES


def test_bad_modules_are_refused():
    for bad in (dict(recompute="selective", recompute_modules=("attention",)),
                dict(recompute="full", recompute_modules=("moe",)),
                dict(recompute="none", recompute_modules=("layernorm",)),
                dict(recompute="selective", recompute_modules="moe")):
        with pytest.raises(InputError):
            Training(tokens=1e9, **bad)


@pytest.mark.parametrize("preset, idle, useful", [
    ("llama-3-8b", "moe", "core_attn, layernorm, mlp"),
    ("llama-3-8b", "moe_act", "core_attn, layernorm, mlp"),
    ("llama-3-8b", "mla_up_proj", "core_attn, layernorm, mlp"),
    ("qwen3-30b-a3b", "mlp", "core_attn, layernorm, moe_act, moe"),  # every layer routed: no dense MLP
    ("qwen3-30b-a3b", "shared_experts", "core_attn, layernorm, moe_act, moe"),
])
def test_a_module_the_model_lacks_is_refused_with_the_models_own(preset, idle, useful):
    """A module the model does not have would rerun nothing (once ``--recompute-modules moe`` on a dense model said
    "recompute selective (moe)" and recomputed 0): refused, naming the modules this model has."""
    cfg = _model(preset)
    par = Parallel(ep=8 if cfg.is_moe else 1)
    with pytest.raises(InputError, match=rf"recomputed modules {idle} \(--recompute-modules\): {preset} has no such part.*model's are "
                                         rf"{useful}$"):
        _step(cfg, par, ("layernorm", idle))
    _step(cfg, par, tuple(useful.split(", ")))  # each of those is taken


def test_the_cli_takes_recompute_modules(capsys):
    base = ["estimate", "--preset", "qwen3-30b-a3b", "--train", "--train-tokens", "1e12", "--ep", "8", "--batch",
            "64", "--seq-len", "2048", "--micro-batch", "8", "--recompute", "selective"]
    assert main(base + ["--recompute-modules", "moe,layernorm", "--json"]) == 0
    t = json.loads(capsys.readouterr().out)["train"]
    assert t["recompute_modules"] == ["moe", "layernorm"]
    assert main(base + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["train"]["recompute_modules"] == ["core_attn"]
    assert main(base + ["--recompute-modules", "moe"]) == 0
    assert "recompute selective (moe)" in capsys.readouterr().out
    assert main(base + ["--recompute-modules", "attention"]) == 2
    assert "attention unknown" in capsys.readouterr().err


def test_a_published_row_names_its_modules_as_a_list(tmp_path):
    from gemmlib.llm import published as P

    src = Path(__file__).resolve().parents[2] / "benchmarks" / "published" / "nemo2604-nemotron-3-nano-16-h100-fp8.json"
    m = P.load_file(src)
    assert P.mapping(m).training["recompute_modules"] == ("moe", "layernorm", "core_attn", "moe_act")
    d = json.loads(src.read_text())
    d["setup"]["recompute_modules"] = "moe"
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "nemotron-3-nano-30b-a3b.json").write_text(
        (src.parent / "models" / "nemotron-3-nano-30b-a3b.json").read_text())
    bad = tmp_path / f"{d['id']}.json"
    bad.write_text(json.dumps(d))
    row = P.estimate(P.load_file(bad))
    assert row.estimate is None and "must be a list of module names" in row.problem
