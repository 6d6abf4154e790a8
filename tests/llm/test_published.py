"""The published-measurement table: the loader refuses bad files by name, the mapping derives each anchor's
inputs from its set-up's facts alone, and ``validate --published`` prints every row. (The error targets live in
benchmarks/bench_published.py, not here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gemmlib.cli import main
from gemmlib.llm import published as P

ROOT = Path(__file__).resolve().parents[2]
GOOD = {
    "id": "x", "kind": "training",
    "source": {"title": "a paper", "url": "https://example.org/p", "where": "Table 1"},
    "model": {"preset": "llama-3-8b"}, "hardware": {"gpu": "H100 SXM", "gpus": 16, "gpus_per_node": 8},
    "setup": {"tp": 2, "pp": 2, "global_batch": 32, "seq_len": 1024, "precision": "bf16"},
    "measured": {"metric": "tokens_per_s_per_gpu", "value": 1000, "unit": "tokens/s/GPU"},
}


def _write(tmp_path, name, d):
    p = tmp_path / f"{name}.json"
    p.write_text(d if isinstance(d, str) else json.dumps(d), encoding="utf-8")
    return p


def test_every_file_in_the_repository_loads():
    ms, bad = P.load()
    assert bad == []
    assert len(ms) >= 15
    kinds = {m.kind for m in ms}
    assert kinds == {"training", "inference"}
    assert len({m.id for m in ms}) == len(ms)
    for m in ms:
        assert m.source["url"].startswith("https://") and m.source["where"]
        assert m.metric in P.METRICS[m.kind]


@pytest.mark.parametrize("change, why", [
    (lambda d: d.pop("source"), "has no 'source'"),
    (lambda d: d.update(kind="serving"), "kind must be training or inference"),
    (lambda d: d["source"].update(url="example.org"), "must be a web address"),
    (lambda d: d.update(model={"preset": "a", "config": "b"}), "exactly one of preset or config"),
    (lambda d: d["hardware"].update(gpus=0), "whole numbers"),
    (lambda d: d["hardware"].update(bandwidth_tb_s=0), "bandwidth_tb_s must be a positive number"),
    (lambda d: d["hardware"].update(compute_between=["H100 SXM"]), "compute_between must name two different GPUs"),
    (lambda d: d["hardware"].update(compute_between=["H100 SXM", "H100 SXM"]), "two different GPUs"),
    (lambda d: d["hardware"].update(compute_between=["H100 SXM", "H101"]), "'H101', not a GPU of the catalogue"),
    (lambda d: d["hardware"].update(power_w=500), "hardware has keys this table does not know: power_w"),
    (lambda d: d["setup"].update(tp=3), "does not divide the 16 GPUs"),
    (lambda d: d["setup"].update(dp=3), "not the 16 GPUs"),
    (lambda d: d["setup"].update(warmup=10), "does not know: warmup"),
    (lambda d: d["setup"].update(ep_comm_sms=20), "it needs ep_comm_overlap true"),
    (lambda d: d["setup"].update(ep_comm_overlap=True, ep_comm_sms="20"), "ep_comm_sms must be a whole number"),
    (lambda d: d["setup"].update(ep_comm_overlap=True, ep_comm_sms=0), "ep_comm_sms must be a whole number ≥ 1"),
    (lambda d: d["setup"].pop("seq_len"), "setup has no 'seq_len'"),
    (lambda d: d["setup"].update(precision="int4"), "precision must be one of"),
    (lambda d: d["measured"].update(metric="ttft_ms"), "measured.metric must be one of"),
    (lambda d: d["measured"].update(value=-1), "positive number"),
    (lambda d: d["measured"].update(unit="tok/s"), "measured.unit"),
    (lambda d: d.update(id="y"), "is not the file's name"),
    (lambda d: d.update(extra=1), "unknown keys extra"),
    (lambda d: d.update(kind="inference", setup={"input_len": 8, "output_len": 8, "precision": "bf16",
                                                 "engine": "trtllm", "engine_version": "v0.6"},
                        measured={"metric": "ttft_ms", "value": 1, "unit": "ms"}), "engine_version must be"),
])
def test_a_bad_file_is_refused_with_its_name_and_why(tmp_path, change, why):
    d = json.loads(json.dumps(GOOD))
    change(d)
    p = _write(tmp_path, "x", d)
    with pytest.raises(P.PublishedError, match=why) as e:
        P.load_file(p)
    assert str(e.value).startswith("x.json: ")
    _write(tmp_path, "ok", {**GOOD, "id": "ok"})
    good, bad = P.load(tmp_path)
    assert [m.id for m in good] == ["ok"] and len(bad) == 1 and bad[0].startswith("x.json: ")


def test_not_json(tmp_path):
    with pytest.raises(P.PublishedError, match="is not JSON"):
        P.load_file(_write(tmp_path, "x", "{nope"))


def test_a_file_that_is_not_a_measurement_is_refused_without_reading_it_whole(tmp_path):
    """A FIFO once hung `validate --published`, a link to /dev/zero filled the memory (2.7 GB in 5 s), a deeply
    nested or a 5,000-digit file ended in a traceback: each is one line now, and read no further than needed."""
    import os

    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    _write(tmp_path, "deep", "[" * 100_000)
    _write(tmp_path, "digits", '{"id": ' + "9" * 5000 + "}")
    _write(tmp_path, "huge", " " * (P.MAX_FILE_BYTES + 1))
    for name, why in (("fifo", "the file is a FIFO, not a regular file"),
                      ("zero", "the file is a device, not a regular file"),
                      ("deep", "is nested too deeply to be a measurement"),
                      ("digits", "holds a value that cannot be read: Exceeds the limit (4300 digits) for integer "
                                 "string conversion"),
                      ("huge", f"the file is {P.MAX_FILE_BYTES + 1:,} bytes, above the limit of "
                               f"{P.MAX_FILE_BYTES:,}")):
        with pytest.raises(P.PublishedError) as e:
            P.load_file(tmp_path / f"{name}.json")
        assert str(e.value).startswith(f"{name}.json: {why}") and "set_int_max_str_digits" not in str(e.value)


def test_a_measurements_model_config_stays_in_its_folder(tmp_path):
    """``model.config`` names a file of the measurement's own folder: "/etc/…" or "../x.json" was read as given."""
    inside = tmp_path / "table"
    (inside / "models").mkdir(parents=True)
    (inside / "models" / "m.json").write_text((P.Path(__file__).parents[2] / "benchmarks" / "published" / "models"
                                               / "deepseek-v3.json").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "outside.json").write_text("{}", encoding="utf-8")
    for config, ok in (("models/m.json", True), ("../outside.json", False), (str(tmp_path / "outside.json"), False)):
        m = P.load_file(_write(inside, "x", {**GOOD, "model": {"config": config}}))
        if ok:
            assert P._model(m).layers == 61
        else:
            with pytest.raises(P.PublishedError, match=r"x.json: model.config .* is outside the measurement's "
                                                       r"folder"):
                P._model(m)


def test_training_mapping_uses_the_facts_and_fixed_rules_only(tmp_path):
    m = P.load_file(_write(tmp_path, "x", GOOD))
    mp = P.mapping(m)
    par, wl = mp.parallel, mp.workload
    assert (par.tp, par.pp, par.dp, par.cp, par.ep, par.virtual_stages) == (2, 2, 4, 1, 1, 1)  # dp: 16 / (2·2)
    assert (wl.batch, wl.seq_len, wl.act_dtype, wl.attention, wl.causal, wl.lm_head) == (
        32, 1024, "bf16", "fused", True, "all")
    assert mp.training == {"micro_batch": 1, "zero": 0, "recompute": None, "eager": False, "sdpa": False, "mtp": False,
                           "fp8_recipe": "delayed", "fp8_head": False,
                           "loss": "fused", "grad_reduce": "bf16", "recompute_layers": 0,
                           "recompute_modules": (), "grad_accum": "fused"}
    assert par.sequence_parallel and not par.tp_comm_overlap and not par.ep_comm_overlap  # SP: with TP, unstated
    no_sp = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"],
                                                                             "sequence_parallel": False}})))
    assert not no_sp.parallel.sequence_parallel
    meg = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "framework": "megatron",
                                                                           "micro_batch": 2, "vp": 2}})))
    assert meg.parallel.sequence_parallel and meg.training["zero"] == 1 and meg.parallel.virtual_stages == 2
    assert meg.training["micro_batch"] == 2
    # the loss: Megatron Core's default native cross-entropy unless the row states the provider's impl
    assert meg.training["loss"] == "megatron_native" and any("cross_entropy_fusion_impl" in x for x in meg.derived)
    te = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "framework": "megatron",
                                                                          "cross_entropy_fusion_impl": "te"}})))
    assert te.training["loss"] == "fused" and not any("cross_entropy" in x for x in te.derived)
    assert meg.training["grad_reduce"] == "bf16" and te.training["grad_reduce"] == "bf16"  # Megatron DDP's default
    titan = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "framework": "torchtitan"}})))
    assert titan.training["grad_reduce"] == "fp32" and titan.training["loss"] == "fused"
    # torchtitan's attention is SDPA's whether compiled or not; only compile: false makes the element-wise work eager
    assert titan.training["sdpa"] and not titan.training["eager"] and not meg.training["sdpa"]
    eager = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "framework": "torchtitan",
                                                                             "compile": False}})))
    assert eager.training["sdpa"] and eager.training["eager"]
    # the fp8 output projection only where the recipe states it
    head = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "precision": "fp8",
                                                                            "fp8_output_proj": True}})))
    assert head.training["fp8_head"] and not mp.training["fp8_head"]
    # the SMs the overlapped all-to-alls hold, only where the source (or the framework's default) states them
    held = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "ep_comm_overlap": True,
                                                                            "ep_comm_sms": 20}})))
    assert held.parallel.ep_comm_sms == 20 and mp.parallel.ep_comm_sms == 0
    with pytest.raises(P.PublishedError, match="fp8_output_proj must be true or false"):
        P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "fp8_output_proj": "yes"}}))
    stated = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"],
                                                                              "grad_reduce_dtype": "fp32"}})))
    assert stated.training["grad_reduce"] == "fp32" and mp.training["grad_reduce"] == "bf16"
    acc = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"],
                                                                           "grad_accumulation_dtype": "fp32"}})))
    assert acc.training["grad_accum"] == "fp32"
    with pytest.raises(P.InputError, match="grad_accumulation_dtype"):
        P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"],
                                                                         "grad_accumulation_dtype": "bf16"}})))
    with pytest.raises(P.InputError, match="grad_reduce_dtype"):
        P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "grad_reduce_dtype": "x"}})))
    with pytest.raises(P.InputError, match="cross_entropy_fusion_impl"):
        P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "framework": "megatron",
                                                                         "cross_entropy_fusion_impl": "x"}})))
    fsdp = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "fsdp": True}})))
    assert fsdp.training["zero"] == 3
    for compiled, eager in ((False, True), (True, False)):  # only a source that says torch.compile was off is eager
        m = P.mapping(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": {**GOOD["setup"], "compile": compiled}})))
        assert m.training["eager"] is eager


def test_a_stated_memory_bandwidth_replaces_the_catalogue_rows(tmp_path):
    """A source that states its GPUs' memory bandwidth (torchtitan's 2.4 TB/s HBM2e H100s) is estimated at that figure;
    the compute stays the catalogue row's: a memory-bound share of the step slows, nothing speeds up."""
    from gemmlib.core.hardware import get_hardware

    setup = {**GOOD["setup"], "framework": "torchtitan", "fsdp": True, "tp": 1, "pp": 1, "micro_batch": 2}
    plain = P.estimate(P.load_file(_write(tmp_path, "x", {**GOOD, "setup": setup})))
    hw = {**GOOD["hardware"], "bandwidth_tb_s": 2.4}
    slow = P.estimate(P.load_file(_write(tmp_path, "x", {**GOOD, "hardware": hw, "setup": setup})))
    assert slow.estimate < plain.estimate and get_hardware("H100 SXM").bandwidth > 2.4e12
    assert any("2.4 TB/s as the source states" in x for x in slow.derived)
    assert not any("as the source states" in x for x in plain.derived)


def test_a_stated_range_of_compute_peaks_is_read_at_its_middle(tmp_path):
    """A source that says only that its GPUs' compute lies between two catalogue GPUs' (torchtitan's H100s: "between
    SXM and NVL") is estimated at the middle of the two rows' peaks (the network and memory stay ``gpu``'s row's): slower than at
    the faster row's, faster than at a lower range, and the row says so."""
    from gemmlib.core.hardware import get_hardware

    setup = {**GOOD["setup"], "framework": "torchtitan", "fsdp": True, "tp": 1, "pp": 1, "micro_batch": 2}

    def row(hardware):
        return P.estimate(P.load_file(_write(tmp_path, "x", {**GOOD, "hardware": hardware, "setup": setup})))

    sxm = row(GOOD["hardware"])
    mid = row({**GOOD["hardware"], "compute_between": ["H100 SXM", "H100 NVL"]})
    low = row({**GOOD["hardware"], "compute_between": ["H100 NVL", "H100 PCIe"]})  # both below the SXM's peaks
    assert low.estimate < mid.estimate < sxm.estimate
    bf16 = (get_hardware("H100 SXM").peak("bf16") + get_hardware("H100 NVL").peak("bf16")) / 2
    assert any(f"bf16 {bf16 / 1e12:g} TFLOP/s" in x and "as the source states" in x for x in mid.derived), mid.derived
    assert not any("compute peaks" in x for x in sxm.derived)


def test_tensorrt_llm_before_0_7_decodes_gqa_per_query_head(tmp_path):
    """The one version rule: TensorRT-LLM older than 0.7.0 (no GQA decode kernel yet) reads the K/V heads once per
    query head; 0.7.0 and later, and vLLM, once per K/V head."""

    def row(engine, version):
        setup = {"input_len": 512, "output_len": 64, "precision": "bf16", "engine": engine, "batching": "static",
                 "concurrency": 16} | ({"engine_version": version} if version else {})
        d = {**GOOD, "kind": "inference", "hardware": {"gpu": "H100 SXM", "gpus": 1}, "setup": setup,
             "measured": {"metric": "output_tokens_per_s", "value": 1000, "unit": "tokens/s"}}
        return P.estimate(P.load_file(_write(tmp_path, "x", d)))

    old, new, vllm = row("trtllm", "0.6.1"), row("trtllm", "0.7.0"), row("vllm", "0.6.1")
    assert old.estimate < new.estimate and any("once per query head" in x for x in old.derived)
    assert new.estimate == pytest.approx(row("trtllm", None).estimate)
    assert not any("query head" in x for x in new.derived + vllm.derived)


def test_each_anchor_is_derived_from_its_own_facts():
    """Every anchor's estimator inputs equal what its file states (or the fixed rules give): no hidden per-row knob."""
    ms, _ = P.load()
    for m in ms:
        mp = P.mapping(m)
        s, par = m.setup, mp.parallel
        assert (par.tp, par.pp, par.ep, par.cp) == tuple(s.get(k) or 1 for k in ("tp", "pp", "ep", "cp")), m.id
        assert par.expert_tp == (s.get("etp") or s.get("tp") or 1), m.id
        assert par.gpus == m.hardware["gpus"], m.id
        assert par.tp_comm_overlap == bool(s.get("tp_comm_overlap")), m.id
        assert par.ep_comm_overlap == bool(s.get("ep_comm_overlap")), m.id
        if m.kind == "training":
            assert par.virtual_stages == (s.get("vp") or 1), m.id
            assert mp.training["recompute_layers"] == (s.get("recompute_layers") or 0), m.id
            assert mp.training["recompute_modules"] == tuple(s.get("recompute_modules") or ()), m.id
            assert (mp.workload.batch, mp.workload.seq_len) == (s["global_batch"], s["seq_len"]), m.id
            assert mp.workload.act_dtype == s["precision"], m.id
            # a replica's micro-batch: the per-GPU MBS on each of the attention's data replicas in one EP group
            # (ep of them; folded, etp × ep / tp)
            replicas = (s.get("etp") or s.get("tp") or 1) * (s.get("ep") or 1) // (s.get("tp") or 1)
            assert mp.training["micro_batch"] == (s.get("micro_batch") or 1) * replicas, m.id
            assert mp.training["recompute"] == s.get("recompute"), m.id
        else:
            sv = mp.serving
            assert (sv["input_len"], sv["output_len"], sv["engine"]) == (s["input_len"], s["output_len"],
                                                                        s["engine"]), m.id
            assert mp.workload.weight_dtype == s["precision"] and mp.workload.kv_dtype == (s.get("kv_dtype")
                                                                                          or s["precision"]), m.id


def test_one_anchor_is_the_estimators_own_answer():
    """The 8B 1000/1000 row equals the serving simulation run by hand with the same inputs."""
    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm.serving import Engine, Server

    ms, _ = P.load()
    m = next(x for x in ms if x.id == "trtllm-llama31-8b-h100-fp8-1000-1000")
    row = P.estimate(m)
    mp = P.mapping(m)
    srv = Server(mp.model, mp.workload, get_hardware("H100 SXM"), mp.parallel, engine=Engine("trtllm"),
                 input_len=1000, output_len=1000)  # the default efficiency: the shape model
    assert row.estimate == pytest.approx(srv.at_rate(float("inf"), 3000).tokens_per_s)
    assert row.error == pytest.approx(row.estimate / 15220 - 1)


def test_validate_published_prints_every_row(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    folder = tmp_path / "pub"
    folder.mkdir()
    ms, _ = P.load()
    keep = [m for m in ms if m.id in ("trtllm05-llama2-7b-h100-fp8-first-token-2048", "deepseek-v3-2048-h800-fp8",
                                     "torchtitan-llama31-8b-8-h100-fsdp")]
    for m in keep:
        (folder / Path(m.path).name).write_text(Path(m.path).read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "models").mkdir()
    (folder / "models" / "deepseek-v3.json").write_text(
        (Path(P.DEFAULT_DIR) / "models" / "deepseek-v3.json").read_text(encoding="utf-8"), encoding="utf-8")
    _write(folder, "broken", "[1]")
    assert main(["validate", "--published", "--published-dir", str(folder)]) == 0
    out = capsys.readouterr().out
    for m in keep:
        assert m.id in out
    assert "bad file: broken.json: must hold one JSON object" in out
    assert "concurrency 1, 1 request\n" in out  # one request, not "1 requests"
    assert "training: " in out and "median |error|" in out
    assert main(["validate", "--published", "--published-dir", str(folder), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in d["rows"]} == {m.id for m in keep}
    assert set(d["summary"]) == {"training", "inference"} and d["bad_files"]
    assert all(r["error"] is None or r["error"] == pytest.approx(r["estimate"] / r["measured"] - 1) for r in d["rows"])


def test_validate_published_refuses_a_folder_it_cannot_read_and_the_other_modes_flags(tmp_path, run_cli):
    """A --published-dir that is missing, a file, empty of *.json or holding no measurement is one line and exit 2
    (before: an empty table and exit 0); the live validation's flags with --published, and --published-dir without
    it, are refused by name instead of doing nothing."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "configs").mkdir()
    _write(tmp_path / "configs", "llama", {"model_type": "llama"})
    cases = [
        (["--published-dir", str(tmp_path / "nope")], "no such folder of published measurements"),
        (["--published-dir", str(_write(tmp_path, "one", GOOD))], "is a file, not a folder"),
        (["--published-dir", str(tmp_path / "empty")], "holds no measurement files (*.json)"),
        (["--published-dir", str(tmp_path / "configs")], "none of the 1 *.json files in"),
        (["--efficiency", "2"], "--efficiency: the live validation's flags, not --published's"),
        (["--device", "cpu", "--batch", "2"], "--device, --batch: the live validation's flags"),
    ]
    for argv, words in cases:
        for js in ([], ["--json"]):
            rc, out, err = run_cli(["validate", "--published", *argv, *js])
            assert rc == 2 and out == "" and len(err.splitlines()) == 1 and words in err, (argv, rc, out, err)
    rc, out, err = run_cli(["validate", "--published-dir", str(tmp_path / "nope")])
    assert rc == 2 and "--published-dir is a folder for --published" in err


def test_the_published_branch_imports_nothing_from_measure(tmp_path):
    code = ("import sys, argparse\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.startswith('gemmlib.measure'): raise ImportError('measure imported: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "from gemmlib.cli.validate import run_published\n"
            f"run_published(argparse.Namespace(json=True, published_dir={str(tmp_path)!r}))\n")
    one = Path(P.DEFAULT_DIR) / "deepseek-v3-2048-h800-fp8.json"
    (tmp_path / one.name).write_text(one.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "deepseek-v3.json").write_text(
        (Path(P.DEFAULT_DIR) / "models" / "deepseek-v3.json").read_text(encoding="utf-8"), encoding="utf-8")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={"GEMM_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert [r["id"] for r in json.loads(r.stdout)["rows"]] == ["deepseek-v3-2048-h800-fp8"]
