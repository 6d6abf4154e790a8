"""The LLM Estimator's Serving tab takes every `estimate --serve` flag, and its JSON is the CLI's (review s29, A).

The tab took only the TPOT target, the engine, a request rate and the KV block size: a reader could not ask "the
best concurrency with TTFT <= 500 ms and TPOT <= 50 ms" nor "what does concurrency 32 give", which the CLI answers.
Now it also takes the TTFT target, one concurrency, the arrivals, the requests per point, and the engine's running
requests and tokens per step. Here page states with those inputs go through the page's "Everything as JSON" and
through `estimate --json` with the README's flags (tests/views/test_page_equals_cli_s28k.py's ``argv`` for the
rest): the same object, or both refuse with the same reason. What the CLI refuses and the page does not run (a
target beside one point, the arrivals without a rate) is greyed out or said on the page."""

from __future__ import annotations

import json

import pytest
from test_page_equals_cli_s28k import argv as argv_s28k
from test_page_equals_cli_s28k import page

from gemmlib.core.hardware import CATALOGUE
from gemmlib.views import estimator as view


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine: the GPU list is the catalogue's."""


SERVING_FLAGS = {"le_kvb": "--kv-block-size", "le_maxseqs": "--max-num-seqs", "le_maxtok": "--max-num-batched-tokens",
                 "le_nreq": "--num-requests", "le_conc": "--concurrency"}  # a box at 0 leaves its flag out


def argv(s: dict) -> list[str]:
    """The CLI's flags for the page state ``s``: the s28k mapping with the serving flags of every Serving box. A
    target beside one point (a rate or one concurrency) is left out (the CLI refuses it: the tab reads the point
    against it), as are the arrivals without a rate (greyed out)."""
    g = {**view.DEFAULTS, **s}.__getitem__
    a = argv_s28k({**s, "le_serve": False})[1:-1]  # without "estimate" and "--json"
    if g("le_serve"):
        a += ["--serve", "--engine", g("le_engine")]
        a += [x for key, flag in SERVING_FLAGS.items() if g(key) for x in (flag, str(g(key)))]
        if g("le_rate"):
            a += ["--request-rate", repr(g("le_rate")), "--arrival", g("le_arrival")]
        elif not g("le_conc"):
            a += [x for key, flag in (("le_tpot", "--tpot-target-ms"), ("le_ttft", "--ttft-target-ms")) if g(key)
                  for x in (flag, repr(g(key)))]
    return ["estimate", *a, "--json"]


SMALL = {"le_preset": "llama-3-8b", "le_batch": 4, "le_seq": 256, "le_new": 32, "le_serve": True}
CASES = [  # each new input at least twice; the last three refused by both (no generated tokens, decode only)
    {**SMALL, "le_tpot": 0.0, "le_ttft": 50.0},  # the best concurrency under a TTFT target alone
    {**SMALL, "le_tpot": 20.0, "le_ttft": 100.0},  # ... under both targets
    {**SMALL, "le_conc": 32},  # one concurrency (the default TPOT target reads it, the JSON has none)
    {**SMALL, "le_conc": 8, "le_engine": "trtllm", "le_nreq": 16, "le_ttft": 100.0},
    {**SMALL, "le_rate": 5.0, "le_arrival": "fixed", "le_conc": 4, "le_nreq": 50},  # a rate, at most 4 in flight
    {**SMALL, "le_rate": 10.0, "le_nreq": 200, "le_maxseqs": 4},
    {**SMALL, "le_tpot": 20.0, "le_maxseqs": 16, "le_maxtok": 512},  # the curve under the engine's own limits
    {**SMALL, "le_conc": 64, "le_maxtok": 2048, "le_kvb": 32, "le_gpu": "A100 SXM 80GB"},
    {**SMALL, "le_arrival": "fixed", "le_tpot": 0.0},  # greyed without a rate: counts for nothing
    {"le_preset": "qwen2.5-0.5b", "le_gpus": 2, "le_seq": 512, "le_new": 16, "le_serve": True, "le_conc": 16,
     "le_nreq": 32, "le_arrival": "fixed", "le_maxseqs": 8},  # two GPUs, tensor parallel
    {**SMALL, "le_new": 0, "le_conc": 8, "le_ttft": 100.0, "le_maxtok": 1024},
    {**SMALL, "le_ctx": True, "le_rate": 5.0, "le_arrival": "fixed", "le_nreq": 10, "le_maxseqs": 8},
    {**SMALL, "le_new": 0, "le_tpot": 0.0, "le_ttft": 30.0, "le_nreq": 8, "le_engine": "trtllm"},
]
REFUSED = CASES[-3:]


def test_each_new_input_is_set_at_least_twice_and_some_are_refused():
    for key in ("le_ttft", "le_conc", "le_arrival", "le_nreq", "le_maxseqs", "le_maxtok"):
        set_ = [c for c in CASES if c.get(key, view.DEFAULTS[key]) != view.DEFAULTS[key]]
        assert len(set_) >= 2 and any(c in REFUSED for c in set_), key


@pytest.mark.parametrize("i", range(len(CASES)))
def test_the_pages_json_is_the_clis(run_cli, i):
    s = CASES[i]
    args = argv(s)
    rc, out, err = run_cli(args)
    d, why = page(s)
    if s in REFUSED:
        said = err.strip().removeprefix("error: ")
        assert rc != 0 and why == said, f"{' '.join(args)}\nCLI: {err.strip()}\npage: {why}"
        # the JSON download says why the serving curve is not in it (it left the key out without a word)
        inp = view.Inputs.from_state({**view.DEFAULTS, **s})
        cfg = view.model(inp)
        d = json.loads(view.download_json(inp, cfg, CATALOGUE[inp.gpu], None, None,
                                          view.ServingInputs.from_state({**view.DEFAULTS, **s})))
        assert d["serving_error"] == said and "serving" not in d
        return
    assert rc == 0 and why is None, (err, why)
    cli = json.loads(out)
    assert d == cli, " ".join(args)
    sv = cli["serving_summary"]
    point = bool(s.get("le_rate") or s.get("le_conc"))
    assert (len(cli["serving"]) == 1) is point  # one point, or the curve
    if point:
        assert sv["tpot_target_s"] is None and sv["ttft_target_s"] is None and sv["best"] is None
        asked = s.get("le_nreq") or (1000 if s.get("le_rate") else 4 * s["le_conc"])  # the CLI's defaults
        assert cli["serving"][0]["requests"] == asked
    else:
        assert (sv["tpot_target_s"], sv["ttft_target_s"]) == tuple(
            s.get(k, view.DEFAULTS[k]) / 1e3 or None for k in ("le_tpot", "le_ttft"))
    # the engine's limits: the boxes', else the engine's defaults (README: vLLM 16-token blocks, 1,024 requests and
    # 8,192 tokens a step on a GPU of 70 GiB or more but an A100, else 256 and 2,048; TensorRT-LLM 32, 2,048, 8,192)
    name, gpu = s.get("le_engine", "vllm"), s.get("le_gpu", view.DEFAULTS["le_gpu"])
    own = (32, 2048, 8192) if name == "trtllm" else (16, 256, 2048) if "A100" in gpu else (16, 1024, 8192)
    engine = sv["engine"]
    assert (engine["engine"], engine["block_size"], engine["max_num_seqs"], engine["max_num_batched_tokens"]) == (
        name, *(s.get(k) or d for k, d in zip(("le_kvb", "le_maxseqs", "le_maxtok"), own, strict=True)))
    if s.get("le_rate"):
        assert sv["arrival"] == f"{s.get('le_arrival', 'poisson')} at {s['le_rate']:g} req/s"
    else:
        assert sv["arrival"] == "closed loop"


def test_the_best_concurrency_under_both_targets_is_the_largest_that_meets_them(run_cli):
    """Against the simulation itself: the best concurrency meets both targets, one more request does not."""
    from gemmlib.llm.serving import Server

    s = CASES[1]
    d, _ = page(s)
    best = d["serving_summary"]["best"]
    assert best["ttft_s"] <= 0.1 and best["tpot_s"] <= 0.02
    inp = view.Inputs.from_state({**view.DEFAULTS, **s})
    est = view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])
    srv = Server(est.model, est.workload, est.hardware, est.parallel, view._efficiency_of(est),
                 memory_utilization=est.memory_utilization)
    nxt = srv.point(best["concurrency"] + 1)
    assert nxt.ttft_s > 0.1 or nxt.tpot_s > 0.02
    words = view.serving(est, view.ServingInputs.from_state({**view.DEFAULTS, **s})).best
    assert words.startswith(f"Best concurrency under 20 ms per token and 100 ms to the first token: "
                            f"**{best['concurrency']:,}** requests")


@pytest.mark.parametrize(("extra", "flag"), [({"le_conc": 32}, "--concurrency"), ({"le_rate": 5.0}, "--request-rate")])
def test_a_target_beside_one_point_is_read_against_on_the_page_and_refused_by_the_cli(run_cli, extra, flag):
    s = {**SMALL, "le_ttft": 500.0, **extra}
    rc, _, err = run_cli([*argv(s)[:-1], "--ttft-target-ms", "500", "--json"])
    assert rc != 0 and "--ttft-target-ms searches the concurrencies for the best one, but " + flag in err
    state = {**view.DEFAULTS, **s}
    inp = view.Inputs.from_state(state)
    est = view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])
    v = view.serving(est, view.ServingInputs.from_state(state))
    p = v.table.rows[0]
    assert len(v.table.rows) == 1 and "best" not in v.table.columns
    words = v.best or v.none
    met = p["TPOT ms"] <= 50 and p["TTFT ms"] <= 500
    assert (v.best is not None) is met
    assert ("Within the 500 ms time-to-first-token target." in words) is (p["TTFT ms"] <= 500)
    assert ("Within the 50 ms per-token target." in words) is (p["TPOT ms"] <= 50)
    assert "The CLI refuses a target beside `--concurrency` or `--request-rate`" in v.caption  # said, not silent
    d, _ = page(s)
    assert d["serving_summary"]["ttft_target_s"] is None  # the JSON is the CLI's point, without the targets


def test_the_arrivals_are_greyed_out_without_a_rate_as_the_cli_refuses_them(run_cli):
    greyed = view.greyed_serving(view.ServingInputs(serve=True, arrival="fixed"))
    assert greyed["le_arrival"] and not any(v for k, v in greyed.items() if k != "le_arrival")
    assert not view.greyed_serving(view.ServingInputs(serve=True, rate=5.0))["le_arrival"]
    assert all(view.greyed_serving(view.ServingInputs(rate=5.0)).values())  # the switch off: every box
    rc, _, err = run_cli([*argv(SMALL)[:-1], "--arrival", "fixed"])
    assert rc != 0 and "--arrival is for --request-rate" in err


def test_a_refused_training_run_is_named_in_the_json_not_left_out(run_cli):
    """The JSON left ``train`` out where the Training tab refused its run, as if its switch were off; the CLI
    refuses the whole command there (it has no such silent case): the JSON now says why."""
    s = {"le_preset": "llama-3-8b", "le_batch": 4, "le_seq": 256, "le_new": 4, "le_train": True, "le_tokens": 1e9,
         "le_mb": 3}
    rc, _, err = run_cli(argv(s))
    state = {**view.DEFAULTS, **s}
    inp = view.Inputs.from_state(view.headline_state(state, True, 1))
    d = json.loads(view.download_json(inp, view.model(inp), CATALOGUE[inp.gpu], None,
                                      view.TrainingInputs.from_state(state), None))
    assert rc != 0 and d["train_error"] == err.strip().removeprefix("error: ") and "train" not in d
