"""What a command says while it works (review of the command line, H4): `bench tp` says it starts its ranks (after
its checks, before the seconds they take), the limits of --iters and --warmup read the same in `bench collective` and
`bench tp`, a run whose plan has steps says "step k of n" rather than a share of steps as a percentage, precision
names its shape once, and `validate --published` and `devices` say what they do on a terminal.

In this process (``run_cli``, ``capsys``); what would start ranks or a worker is replaced by a stand-in.
"""

from __future__ import annotations

import contextlib

import pytest


class _Started(Exception):
    """The command got as far as starting its ranks."""


def _no_queue(monkeypatch):
    from gemmlib.measure import safety

    monkeypatch.setattr(safety, "single_flight", lambda owner: contextlib.nullcontext())


def test_bench_tp_says_starting_ranks_on_stderr(capsys, bench_env, monkeypatch):
    from gemmlib.cli import main
    from gemmlib.measure import launch

    _no_queue(monkeypatch)
    seen = []

    def ranks(*a, **k):
        seen.append(capsys.readouterr().err)  # what the user had read when the ranks began to start
        raise _Started()

    monkeypatch.setattr(launch, "run_ranks", ranks)
    with pytest.raises(_Started):
        main(["bench", "tp", "--nproc", "2", "--backend", "gloo", "--hidden", "64", "--heads", "4", "--ffn", "128",
              "--seq-len", "8"])
    assert seen == ["starting 2 gloo ranks (CPU processes; a few seconds)\n"]


@pytest.mark.parametrize("argv, words", [
    (["--hidden", "96", "--heads", "3", "--ffn", "128"], "heads"),  # 3 heads do not split over 2 ranks
    (["--interconnect", "no-such-link"], "no-such-link"),
])
def test_bench_tp_refuses_before_it_queues_or_says_it_starts(argv, words, run_cli, bench_env, monkeypatch):
    """Its layer was checked only once it had its turn in the machine's queue and said nothing; now the refusal
    comes first, and alone."""
    from gemmlib.measure import launch, safety

    def started(*a, **k):
        raise _Started()

    monkeypatch.setattr(safety, "single_flight", started)
    monkeypatch.setattr(launch, "run_ranks", started)
    base = ["bench", "tp", "--nproc", "2", "--backend", "gloo", "--seq-len", "8"]
    if "--hidden" not in argv:
        base += ["--hidden", "64", "--heads", "4", "--ffn", "128"]
    rc, out, err = run_cli(base + argv)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "starting" not in err, err
    assert words in err


@pytest.mark.parametrize("cmd", [["collective"], ["tp"]])
@pytest.mark.parametrize("flag, value, most", [("--iters", "20000", "10,000"), ("--warmup", "20000", None)])
def test_iteration_limits_read_the_same_in_both_multi_rank_commands(cmd, flag, value, most, run_cli, bench_env,
                                                                    monkeypatch):
    """`bench collective` said "iters must be a whole number in 1..10000", `bench tp` "… in 1..10,000": now
    both name the flag and write the number one way, refused by the parser before anything runs."""
    from gemmlib.measure import launch, safety

    def started(*a, **k):
        raise _Started()

    monkeypatch.setattr(safety, "single_flight", started)
    monkeypatch.setattr(launch, "run_ranks", started)
    rc, out, err = run_cli(["bench", *cmd, "--nproc", "2", "--backend", "gloo", flag, value])
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert f"argument {flag}: must be at most " in err
    if most:
        assert most in err
    assert "10000" not in err.replace(value, "")


def _progress_lines(run_cli, monkeypatch, argv, fractions):
    """stderr of ``argv`` whose run reports ``fractions`` (a stand-in for the worker), then is refused."""
    from gemmlib.core.errors import InputError
    from gemmlib.measure import runner

    plans = []

    def fake_run(spec, config, lim=None, *, admitted=None, on_progress=None, **k):
        plans.append(admitted)
        for f in fractions:
            on_progress(f, "a step")
        raise InputError("stopped here")

    monkeypatch.setattr(runner, "run", fake_run)
    rc, out, err = run_cli(argv)
    assert rc == 2, err
    return [ln for ln in err.splitlines() if ln.endswith("a step")], plans


def test_a_run_whose_plan_counts_steps_says_step_k_of_n(run_cli, bench_env, monkeypatch):
    """`profile` printed "[ 20%]", "[ 60%]": a share of its steps (building, each warm-up pass, profiling, summing),
    not of its time. Now "step k of n", as the pages' run box says it."""
    from gemmlib.measure import plan
    from gemmlib.measure import profiler as pf

    argv = ["profile", "--device", "cpu", "--hidden", "64", "--heads", "4", "--seq-len", "8", "--steps", "2"]
    lines, _plans = _progress_lines(run_cli, monkeypatch, argv, [0.0, 0.2, 0.6, 1.0])
    steps = plan.admit(pf.SPEC, _profile_job(argv)).steps
    assert steps > 1  # the profiler's plan counts steps
    assert lines == [f"[step {k} of {steps}] a step" for k in (1, min(steps, int(0.2 * steps) + 1),
                                                                min(steps, int(0.6 * steps + 1e-9) + 1), steps)]
    assert not any("%" in ln for ln in lines)


def _profile_job(argv):
    from gemmlib.cli import build_parser
    from gemmlib.cli import profile as cli_profile
    from gemmlib.measure import profiler as pf

    args = build_parser().parse_args(argv)
    args.device = cli_profile.resolve_device(args.device)
    return pf.ProfileConfig(cli_profile.config_from_args(args), args.device, steps=args.steps,
                            monitor=not args.no_monitor, hardware=args.hardware)


def test_a_run_that_reports_shares_only_keeps_its_percentages():
    """A plan without steps (a calibration's): its progress is a share, said as a percentage; no share, no head."""
    from gemmlib.cli.running import progress_prefix

    assert [progress_prefix(f, 0) for f in (0.0, 0.5, 1.0)] == ["[  0%] ", "[ 50%] ", "[100%] "]
    assert progress_prefix(None, 0) == progress_prefix(None, 4) == ""


def test_precision_progress_names_a_command_lines_shape_once(bench_env):
    """`bench precision --m 32 --n 32 --k 32` said "fp32 on 32×32×32 (32×32×32)": its shape's label is its
    dimensions. A named shape keeps its name and its dimensions."""
    from gemmlib.core.i18n import Text
    from gemmlib.measure import precision as bp

    said = []
    cfg = bp.PrecisionConfig(device="cpu", shapes=((32, 32, 32, "32×32×32"), (16, 16, 16, Text(bp.SHAPE_LABELS["square"],
                                                                                                  n=16))),
                             dtypes=("fp32",), with_quant=False, check_error=False, min_run_time=0.01)
    bp.run_precision(cfg, progress=lambda f, text: said.append(str(text)))
    assert said[:2] == ["fp32 on 32×32×32", "fp32 on square 16 (16×16×16)"]


class _Terminal(__import__("io").StringIO):
    """stderr as a terminal: what a person running the command sees."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("argv, slow, words", [
    (["devices"], ("gemmlib.measure.devices", "detect"), "detecting this machine's devices"),
    (["devices", "--json"], ("gemmlib.measure.devices", "detect"), "detecting this machine's devices"),
    (["validate", "--published"], ("gemmlib.llm.published", "table"), "estimating every published measurement"),
    (["validate", "--published", "--json"], ("gemmlib.llm.published", "table"), "estimating every published"),
])
def test_slow_commands_say_what_they_do_on_a_terminal(argv, slow, words, bench_env, monkeypatch):
    """`devices` (2.5 s: torch's import) and `validate --published` (2.4–2.7 s) showed nothing while they worked.
    Now a line on a terminal's stderr before that work; stdout (its --json) as before, and nothing more on a
    stderr that is not a terminal (a script's pipe)."""
    import importlib
    import json
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO

    from gemmlib.cli import main

    mod = importlib.import_module(slow[0])
    real = getattr(mod, slow[1])
    for err in (_Terminal(), StringIO()):
        seen = []

        def watched(*a, _err=err, _seen=seen, **k):
            _seen.append(_err.getvalue())  # what the person had read when the slow part began
            return real(*a, **k)

        monkeypatch.setattr(mod, slow[1], watched)
        out = StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            assert main(argv) == 0
        if isinstance(err, _Terminal):
            assert len(seen) == 1 and words in seen[0] and seen[0].count("\n") == 1, seen
        else:
            assert seen == [""] and err.getvalue() == ""
        if "--json" in argv:
            json.loads(out.getvalue())
