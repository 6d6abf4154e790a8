"""The Serving tab sends every request at once, as `estimate --serve --request-rate inf` does (review s29, F).

An offline throughput run (TensorRT-LLM's published throughput rows are measured so; benchmarks/published's
trtllm-* rows use `--request-rate inf`) could not be asked on the page: a number box holds no infinity. The tab now
has a switch "all at once (offline)" above the rate box, which it greys out. Here the page's "Everything as JSON" is
the CLI's for such states (or both refuse alike), and the tab's words say what an offline run is read by: tokens/s
and requests/s, the average and the 99th-percentile TTFT, and the requests in flight only where the engine held some
back (that all of them were "in flight at most" says nothing)."""

from __future__ import annotations

import json
import re

import pytest
from test_page_equals_cli_s28k import page
from test_serving_inputs_s29a import SMALL
from test_serving_inputs_s29a import argv as argv_s29a

from gemmlib.core.hardware import CATALOGUE
from gemmlib.views import estimator as view
from ui.i18n import translations


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine: the GPU list is the catalogue's."""


def argv(s: dict) -> list[str]:
    """The CLI's flags for the page state ``s``: s29a's, with ``--request-rate inf`` for every request at once
    (no ``--arrival``, no target: the rate box and the arrivals are greyed out, a target is read against)."""
    if not {**view.DEFAULTS, **s}["le_offline"]:
        return argv_s29a(s)
    a = argv_s29a({**s, "le_rate": 1.0, "le_arrival": "poisson"})  # a stand-in rate, then its flags replaced
    i = a.index("--request-rate")
    assert a[i:i + 4] == ["--request-rate", "1.0", "--arrival", "poisson"]
    return [*a[:i], "--request-rate", "inf", *a[i + 4:]]


CASES = [
    {**SMALL, "le_offline": True},  # 1,000 requests (the CLI's default at a rate)
    {**SMALL, "le_offline": True, "le_conc": 16, "le_nreq": 64},  # at most 16 in flight
    {**SMALL, "le_offline": True, "le_rate": 5.0, "le_arrival": "fixed", "le_engine": "trtllm", "le_nreq": 100,
     "le_ttft": 200.0},  # the rate and arrivals greyed out: they count for nothing; the target is read against
    {"le_preset": "qwen2.5-0.5b", "le_gpus": 2, "le_seq": 512, "le_new": 16, "le_serve": True, "le_offline": True,
     "le_nreq": 200, "le_maxseqs": 32},  # two GPUs, the engine's running requests capped
    {**SMALL, "le_offline": True, "le_nreq": 64},  # 64 requests, all taken in at once
    {**SMALL, "le_new": 0, "le_offline": True},  # refused by both: no generated tokens
]
REFUSED = CASES[-1:]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_the_pages_json_is_the_clis(run_cli, i):
    s = CASES[i]
    args = argv(s)
    assert "inf" in args and "--arrival" not in args and "--ttft-target-ms" not in args
    rc, out, err = run_cli(args)
    d, why = page(s)
    if s in REFUSED:
        assert rc != 0 and why == err.strip().removeprefix("error: ")
        return
    assert rc == 0 and why is None, (err, why)
    cli = json.loads(out)
    assert d == cli, " ".join(args)
    (p,) = cli["serving"]
    assert cli["serving_summary"]["arrival"] == "every request at once (request rate inf)"
    assert p["requests"] == s.get("le_nreq", 1000) and p["concurrency"] <= s.get("le_conc", p["requests"])


def _view(s: dict, lang: str = "en"):
    state = {**view.DEFAULTS, **s}
    inp = view.Inputs.from_state(state)
    est = view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])
    gettext = view.english if lang == "en" else translations(lang).gettext
    return view.serving(est, view.ServingInputs.from_state(state), gettext=gettext)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _ms(text: str) -> float:
    v, unit = re.fullmatch(r"([\d.,]+) (ms|s|µs)", text).groups()
    return _number(v) * {"ms": 1.0, "s": 1e3, "µs": 1e-3}[unit]


@pytest.mark.parametrize(("i", "held_back"), [(0, True), (1, True), (4, False)])
def test_the_words_read_an_offline_run_by_its_throughput_and_its_first_tokens(i, held_back):
    """1,000 requests of 288 tokens: more than the engine runs at once (its tokens per step); 16 in flight at most
    of 64: 48 wait; 64 alone: all in at once (1,024 running requests and the KV limit are far above)."""
    s = CASES[i]
    (p,) = page(s)[0]["serving"]
    v = _view(s)
    words = v.best or v.none
    m = re.fullmatch(r"All ([\d,]+) requests at once(, at most ([\d,]+) in flight)?: ([\d,]+) tokens/s \(([\d,]+) per "
                     r"GPU\), ([\d.,]+) requests/s, done in ([\d.,]+ m?s)\. TTFT ([\d.,]+ m?s) on average, ([\d.,]+ m?s) "
                     r"at the 99th percentile; TPOT ([\d.,]+ m?s)\. (.*)", words)
    assert m, words
    n, _, cap, tps, per_gpu, rps, took, ttft, p99, tpot, rest = m.groups()
    assert _number(n) == p["requests"] and (cap and _number(cap)) == s.get("le_conc")
    assert _number(tps) == pytest.approx(p["tokens_per_s"], abs=0.5)
    assert _number(rps) == pytest.approx(p["requests_per_s"], rel=5e-3)
    assert _number(rps) == pytest.approx(p["requests"] / p["duration_s"], rel=5e-3)  # requests over the run's time
    assert _ms(took) == pytest.approx(p["duration_s"] * 1e3, rel=5e-3)
    assert _ms(ttft) == pytest.approx(p["ttft_s"] * 1e3, rel=5e-3) and _ms(tpot) == pytest.approx(p["tpot_s"] * 1e3,
                                                                                                   rel=5e-3)
    assert _ms(p99) == pytest.approx(p["ttft_p99_s"] * 1e3, rel=5e-3) and p["ttft_p99_s"] >= p["ttft_s"]
    assert (p["concurrency"] < p["requests"]) is held_back
    if held_back:
        assert rest.startswith(f"The engine runs at most **{p['concurrency']:,}** of them at a time (mean ")
    else:
        assert rest.startswith("The engine takes them all in at once (mean ") and "at most" not in rest
    assert ("Within the 50 ms per-token target." in rest) is (p["tpot_s"] <= 0.05)  # the default target, read against
    assert v.chart["title"] == f"Serving all {p['requests']:,} requests at once (KV limit {v.chart['title'].split('KV limit ')[1]}"
    assert v.table.labels["concurrency"] == "in flight (peak)"
    assert "fixed gaps" not in v.caption


def test_in_chinese():
    s = CASES[1]
    (p,) = page(s)[0]["serving"]
    v = _view(s, "zh")
    words = v.best or v.none
    assert f"{p['requests']:,}" in words and "99" in words and "16" in words, words
    kept = ("TTFT", "TPOT", "GPU", "tokens", "token")  # the Chinese words keep these, as the rest of the tab does
    assert not re.search(r"[A-Za-z]{4,}", re.sub("|".join(kept), "", words)), words  # translated, none left out
    assert "第 99 百分位" in words and "引擎同时最多处理其中 **16** 个" in words
    assert "KV" in v.chart["title"] and str(p["requests"]) in v.chart["title"].replace(",", "")


def test_the_rate_and_the_arrivals_grey_out_with_every_request_at_once():
    g = view.greyed_serving(view.ServingInputs(serve=True, offline=True, rate=5.0))
    assert g["le_rate"] and g["le_arrival"] and not any(v for k, v in g.items() if k not in ("le_rate", "le_arrival"))
    assert not view.greyed_serving(view.ServingInputs(serve=True, rate=5.0))["le_rate"]
    assert view.ServingInputs(offline=True, rate=5.0).request_rate == float("inf")
    kw = view.serving_keywords(view.ServingInputs(serve=True, offline=True, rate=5.0, arrival="fixed", ttft=100.0),
                               as_cli=True)
    assert kw["request_rate"] == float("inf") and kw["arrival"] == "poisson" and kw["ttft_target_s"] is None


def test_the_cli_says_every_request_at_once(run_cli):
    rc, out, _ = run_cli(argv(CASES[1])[:-1])
    assert rc == 0 and "arrivals: every request at once (request rate inf)" in out
