"""The LLM Estimator page and `python -m gemmlib estimate --json` agree, input for input (review s28, K).

Two reviews found them apart for the same inputs (the JSON download without the training and serving keys; CP
counted for the training run only on the page). Here a fixed sample of what a reader can set on the page — presets of
every kind (dense, GQA, MoE, MLA, sliding windows), a custom shape, the workload, the convention and its switches, the
dtypes, the GPU and its parallel layout, the Training tab and the Serving tab — is made into the widgets' state, the
page's "Everything as JSON" is made from it as the page makes it, and the same inputs go to the CLI as the README's
flags: the whole JSON object is the same, or both refuse, with the same words where the page shows the CLI's."""

from __future__ import annotations

import json
import random

import pytest

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import CATALOGUE
from gemmlib.llm.training import modules_the_model_lacks
from gemmlib.views import estimator as view


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine: the GPU list is the catalogue's."""


PRESETS = {  # the kinds of model, each with the parallel sizes that suit it
    "llama-3-8b": "GQA", "gpt2": "dense", "qwen2.5-0.5b": "GQA", "mixtral-8x7b": "MoE", "qwen3-30b-a3b": "MoE",
    "deepseek-v3": "MLA", "gemma-3-1b": "sliding", "gpt-oss-20b": "sliding MoE", "mistral-7b": "sliding",
}
GPUS = ["H100 SXM", "H200 SXM", "A100 SXM 80GB", "CPU (edit me)"]
CUSTOM = [  # a custom shape with its architecture features (the sidebar's "custom" source)
    {"le_src": "custom", "le_layers": 4, "le_hidden": 512, "le_heads": 8, "le_kv": 2, "le_ffn": 1536, "le_vocab": 1000},
    {"le_src": "custom", "le_layers": 6, "le_hidden": 256, "le_heads": 4, "le_kv": 4, "le_ffn": 512, "le_vocab": 500,
     "le_experts": 8, "le_topk": 2, "le_sffn": 256, "le_dense": 1, "le_sw": 64, "le_swp": "alternate",
     "le_qkn": "head", "le_tied": True},
    {"le_src": "custom", "le_layers": 3, "le_hidden": 512, "le_heads": 8, "le_kv": 8, "le_ffn": 1024, "le_vocab": 800,
     "le_mla_kv": 64, "le_mla_q": 96, "le_mla_rope": 16, "le_mlp": "plain", "le_norm": "layer", "le_par": True},
]


def _case(r: random.Random, i: int) -> dict:
    """One page state (the widgets' keys, ``le_*``): every input a reader can set, drawn at random."""
    s: dict = dict(CUSTOM[i // 20 % len(CUSTOM)]) if i % 20 == 19 else {"le_preset": r.choice(list(PRESETS))}
    moe = s.get("le_experts") or "MoE" in PRESETS.get(s.get("le_preset", ""), "")
    s.update(le_batch=r.choice([1, 4, 16]), le_seq=r.choice([128, 512, 2048]), le_new=r.choice([0, 1, 16, 64]),
             le_ctx=r.random() < 0.15, le_conv=r.choice(view.CONVENTION_NAMES), le_gpu=r.choice(GPUS))
    for key, options in {**view.RADIO_OVERRIDES, **view.OVERRIDES}.items():
        if r.random() < 0.2:
            s[key] = r.choice([o for o in options if o not in ("fp64", "tf32", "fp4", "int8")])
    if r.random() < 0.2:
        s.update(le_flat=True, le_eff=r.choice([0.3, 0.7]))
    if r.random() < 0.35:  # the GPUs alone: tensor parallel
        s["le_gpus"] = r.choice([2, 4, 8])
    elif r.random() < 0.75:
        s.update(le_tp=r.choice([1, 2, 4]), le_pp=r.choice([1, 1, 2, 4]), le_dp=r.choice([1, 2]),
                 le_ep=r.choice([1, 2, 4]) if moe else 1, le_gpus=r.choice([1, 8]))
        if moe and r.random() < 0.5:
            s["le_etp"] = 1
    if r.random() < 0.2:
        s["le_gpn"] = r.choice([2, 4])
    s.update(le_overlap=r.random() < 0.2, le_sp=r.random() < 0.2)
    if r.random() < 0.45:
        s.update(le_train=True, le_tokens=r.choice([1e9, 1e12]), le_mb=r.choice([1, 2]), le_zero=r.choice([0, 1, 2, 3]),
                 le_rc=r.choice(view.RECOMPUTE), le_vs=r.choice([1, 1, 2]) if s.get("le_pp", 1) > 1 else 1, le_cp=r.choice([1, 1, 2]),
                 le_tpo=r.random() < 0.3, le_epo=r.choice(view.EP_OVERLAPS), le_epsm=r.choice([0, 20]),
                 le_rcl=r.choice([0, 2]), le_rcm=tuple(r.sample(["core_attn", "mlp", "layernorm", "moe"],
                                                               r.choice([0, 1, 2]))))
    else:  # the Training tab's boxes set, its switch off: they count for nothing
        s.update(le_cp=r.choice([1, 2]), le_zero=r.choice([0, 1]))
    if r.random() < 0.3 and s["le_new"] and not s["le_ctx"]:  # (serving needs whole requests, generated tokens)
        s.update(le_serve=True, le_tpot=r.choice([0.0, 50.0]), le_engine=r.choice(view.ENGINE_NAMES),
                 le_rate=r.choice([0.0, 20.0]), le_kvb=r.choice([0, 32]))
        if s.get("le_gpus", 1) > 1 or s.get("le_tp", 1) > 1:  # a curve to the KV limit of many GPUs takes seconds:
            s["le_rate"] = 20.0  # one rate there
    return s


def _r() -> random.Random:
    return random.Random(28)


ANSWERED = [  # besides the draw, one of each run both sides answer (the draw's curves are refused or one rate)
    {"le_preset": "llama-3-8b", "le_batch": 4, "le_seq": 256, "le_new": 32, "le_serve": True, "le_tpot": 20.0},
    {"le_preset": "llama-3-8b", "le_seq": 512, "le_new": 16, "le_serve": True, "le_tpot": 0.0, "le_engine": "trtllm",
     "le_kvb": 32, "le_train": True, "le_tokens": 1e9, "le_zero": 1, "le_rc": "selective", "le_rcm": ("mlp",)},
    {"le_preset": "mixtral-8x7b", "le_batch": 16, "le_seq": 1024, "le_new": 0, "le_tp": 2, "le_ep": 4, "le_etp": 1,
     "le_dp": 2, "le_train": True, "le_tokens": 1e12, "le_mb": 2, "le_cp": 2, "le_epo": "dualpipe", "le_epsm": 20,
     "le_rc": "full", "le_rcl": 2, "le_sp": True, "le_tpo": True},
]
CASES = (lambda r: [_case(r, i) for i in range(57)])(_r()) + ANSWERED


def argv(s: dict) -> list[str]:
    """The CLI's flags for the page state ``s``, as the README's LLM Estimator section names them. Boxes the page
    greys out (and does not count) are left out, as are a tab's boxes while its switch is off."""
    g = {**view.DEFAULTS, **s}.__getitem__
    if g("le_src") == "preset":
        a = ["--preset", g("le_preset")]
    else:
        a = [f"--{flag}={g(key)}" for flag, key in (("layers", "le_layers"), ("hidden", "le_hidden"),
                                                    ("heads", "le_heads"), ("kv-heads", "le_kv"), ("ffn", "le_ffn"),
                                                    ("vocab", "le_vocab"), ("mlp", "le_mlp"))]
        a += [f"--{flag}={g(key)}" for flag, key in (
            ("head-dim", "le_hd"), ("experts", "le_experts"), ("experts-per-token", "le_topk"),
            ("sliding-window", "le_sw"), ("v-head-dim", "le_vhd"), ("mla-kv-rank", "le_mla_kv"),
            ("mla-q-rank", "le_mla_q"), ("mla-rope-dim", "le_mla_rope")) if g(key)]
        if g("le_sw"):
            a.append(f"--sliding-pattern={g('le_swp')}")
        if g("le_experts"):
            a += [f"--{flag}={g(key)}" for flag, key in (("expert-ffn", "le_effn"), ("shared-expert-ffn", "le_sffn"),
                                                         ("dense-layers", "le_dense")) if g(key)]
            a += [f"--moe-every={g('le_every')}"] + ["--shared-expert-gate"] * g("le_sgate")
        a += [f"--qk-norm={g('le_qkn')}", f"--norm={g('le_norm')}", f"--norms-per-layer={g('le_npl')}"]
        a += ["--tied-embeddings"] * g("le_tied") + ["--parallel-block"] * g("le_par")
    # decode only with new tokens 0: both refuse (the CLI's rule: at least one decode step)
    a += ["--batch", str(g("le_batch")), "--new-tokens", str(g("le_new"))]
    a += ["--context" if g("le_ctx") else "--seq-len", str(g("le_seq"))]
    a += ["--reference", g("le_conv")]
    causal = {"causal": ["--causal"], "dense": ["--no-causal"]}
    a += causal.get(g("le_causal"), [])
    for flag, key in (("attention", "le_attn"), ("mla", "le_mla"), ("lm-head", "le_lmh"),
                      ("experts-compute", "le_exp"), ("weight-dtype", "le_wdt"), ("act-dtype", "le_adt"),
                      ("kv-dtype", "le_kvdt")):
        if g(key) != view.AUTO:
            a += [f"--{flag}", g(key)]
    a += ["--gpu", g("le_gpu")] + (["--efficiency", str(g("le_eff"))] if g("le_flat") else [])
    train, cp = g("le_train"), g("le_cp") if g("le_train") else 1
    sizes = {k: g(f"le_{k}") for k in ("tp", "pp", "ep", "dp")}
    if all(v == 1 for v in sizes.values()) and not g("le_etp"):  # the GPUs alone: --gpus N (--tp N beside --cp)
        a += ["--tp" if cp > 1 else "--gpus", str(g("le_gpus"))]
    else:
        a += [x for k, v in sizes.items() if v > 1 for x in (f"--{k}", str(v))]
        a += ["--etp", str(g("le_etp"))] if g("le_etp") else []
    tp = sizes["tp"] if not all(v == 1 for v in sizes.values()) or g("le_etp") else g("le_gpus")
    a += ["--gpus-per-node", str(g("le_gpn"))] if g("le_gpn") else []
    a += ["--overlap"] * g("le_overlap") + ["--sequence-parallel"] * (g("le_sp") and tp > 1)  # greyed at TP 1
    if train:
        a += ["--train", "--train-tokens", repr(g("le_tokens")), "--micro-batch", str(g("le_mb")),
              "--recompute", g("le_rc"), "--zero", str(g("le_zero"))]
        a += ["--cp", str(cp)] if cp > 1 else []
        a += ["--virtual-stages", str(g("le_vs"))] if g("le_vs") > 1 else []
        a += ["--tp-comm-overlap"] if g("le_tpo") and tp > 1 else []
        if g("le_epo") != "none" and sizes["ep"] > 1:
            a += [f"--ep-comm-overlap={g('le_epo')}"] + (["--ep-comm-sms", str(g("le_epsm"))] if g("le_epsm") else [])
        a += ["--recompute-layers", str(g("le_rcl"))] if g("le_rc") == "full" and g("le_rcl") else []
        # a module the model lacks: left out (and named) by the page, refused by the CLI (the README says both)
        modules = [m for m in g("le_rcm") if m not in _lacks(s, tuple(g("le_rcm")))]
        a += (["--recompute-modules", ",".join(modules)] if g("le_rc") == "selective" and modules else [])
    if g("le_serve"):
        a += ["--serve", "--engine", g("le_engine")]
        a += ["--kv-block-size", str(g("le_kvb"))] if g("le_kvb") else []
        if g("le_rate"):
            a += ["--request-rate", repr(g("le_rate"))]
        elif g("le_tpot"):
            a += ["--tpot-target-ms", repr(g("le_tpot"))]
    return ["estimate", *a, "--json"]


def _lacks(s: dict, modules: tuple[str, ...]) -> list[str]:
    inp = view.Inputs.from_state({**view.DEFAULTS, **s})
    try:
        cfg = view.model(inp)
        return modules_the_model_lacks(cfg, view.workload(inp, cfg, CATALOGUE[inp.gpu]), modules)
    except InputError:  # (refused on both sides before the modules matter)
        return []


def page(s: dict) -> tuple[dict | None, str | None]:
    """The page's "Everything as JSON" for the state ``s`` (made as the page makes it: the headline's inputs, the
    Training and Serving tabs' own), or the refusal the page shows: the estimate's, or its Training or Serving
    tab's while that tab's switch is on."""
    state = {**view.DEFAULTS, **s}
    inp = view.Inputs.from_state(view.headline_state(state, state["le_train"], state["le_cp"]))
    tr, sv = view.TrainingInputs.from_state(state), view.ServingInputs.from_state(state)
    try:
        cfg = view.model(inp)
        hw = CATALOGUE[inp.gpu]
        d = json.loads(view.download_json(inp, cfg, hw, None, tr, sv))
        est = view.estimate(inp, cfg, hw)
        if tr.train and "train" not in d:
            view.training(est, tr)  # the tab's words
        if sv.serve and "serving" not in d:
            view.serving(est, sv)
    except InputError as e:
        return None, str(e)
    return d, None


def test_the_sample_holds_every_kind_of_input():
    """The sample is what the brief asks for: each kind of model, GPU, the switches and both tabs."""
    kinds = {PRESETS.get(c.get("le_preset"), "custom") for c in CASES}
    assert kinds == set(PRESETS.values()) | {"custom"}
    assert {c.get("le_gpu", view.DEFAULTS["le_gpu"]) for c in CASES} == set(GPUS)
    for key in ("le_train", "le_serve", "le_ctx", "le_flat", "le_etp", "le_gpn", "le_sp", "le_overlap"):
        assert any(c.get(key) for c in CASES), key
    assert any(c.get("le_train") and c.get("le_cp") == 2 for c in CASES)
    assert any(c.get("le_serve") and c.get("le_rate") for c in CASES)
    assert {c.get("le_conv", view.DEFAULTS["le_conv"]) for c in CASES} == set(view.CONVENTION_NAMES)


@pytest.mark.parametrize("i", range(len(CASES)))
def test_the_pages_json_is_the_clis(run_cli, i):
    s = CASES[i]
    args = argv(s)
    rc, out, err = run_cli(args)
    d, why = page(s)
    assert rc == 0 or s not in ANSWERED, err
    if rc != 0 or why is not None:
        assert (rc != 0, why is not None) == (True, True), f"{' '.join(args)}\nCLI: {err.strip()}\npage: {why}"
        said = err.strip().removeprefix("error: ")
        if why.startswith("The ") and " GPUs are tensor parallel (" in why:  # the GPUs alone: each names its own
            assert said.split("): ", 1)[-1] in why  # input (README: "--gpus N alone …"), then the same reason
        else:
            assert why == said
        return
    cli = json.loads(out)
    apart = _apart(d, cli)
    assert d == cli, f"{' '.join(args)}\npage vs CLI: {apart[:6]}"


def _apart(a, b, at: str = "") -> list[str]:
    """Where two JSON objects differ: the paths and the two values (for the failure's message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [x for k in sorted(set(a) | set(b), key=str) for x in _apart(a.get(k, "<absent>"), b.get(k, "<absent>"),
                                                                          f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [x for i, (u, v) in enumerate(zip(a, b, strict=True)) for x in _apart(u, v, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: {str(a)[:80]} != {str(b)[:80]}"]


@pytest.mark.parametrize("gpus", [1, 4])
def test_sequence_parallelism_counts_from_tp_2_as_the_cli_takes_it(run_cli, gpus):
    """The CLI refuses --sequence-parallel below TP 2 (it splits nothing); the page took the box at TP 1 and put
    ``"sequence_parallel": true`` in its JSON. Now the box greys out at TP 1 and counts for nothing there."""
    s = {"le_preset": "llama-3-8b", "le_gpus": gpus, "le_sp": True, "le_batch": 4, "le_seq": 512, "le_new": 4}
    inp = view.Inputs.from_state({**view.DEFAULTS, **s})
    assert view.greyed_layout(inp) == {"le_sp": gpus == 1}
    assert view.parallel(inp).sequence_parallel is (gpus > 1)
    rc, out, err = run_cli(argv(s))
    assert rc == 0, err
    assert page(s) == (json.loads(out), None)
    assert json.loads(out)["parallel"]["sequence_parallel"] is (gpus > 1)
    rc, _, err = run_cli([*argv(s)[:-1], "--sequence-parallel", "--json"] if gpus == 1 else argv(s))
    assert (rc != 0) is (gpus == 1)  # what the page greys out, the CLI refuses


@pytest.mark.parametrize(("query", "greyed"), [({"le_gpus": "1"}, True), ({"le_gpus": "4"}, False),
                                               ({"le_tp": "2", "le_gpus": "2"}, False)])
def test_the_pages_sequence_parallel_box_greys_out_at_tp_1(query, greyed):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).parents[2] / "pages" / "4_LLM_Estimator.py"), default_timeout=60)
    for k, v in {"le_preset": "llama-3-8b", "le_sp": "true", "le_new": "4", **query}.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception and not at.error
    assert at.toggle(key="le_sp").value is True and at.toggle(key="le_sp").disabled is greyed
