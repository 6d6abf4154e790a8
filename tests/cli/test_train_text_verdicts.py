"""A training estimate's text: the inference lines above TRAINING say they size serving, and a step that does not fit
says so beside its MFU (a reviewer read "fits" above and "does NOT fit" below, and an MFU for a run that cannot start)."""

ARGS = ["estimate", "--preset", "llama-3-70b", "--train", "--train-tokens", "1e12", "--gpus", "8", "--tp", "8",
        "--seq-len", "4096", "--batch", "64"]


def _line(out: str, start: str) -> str:
    found = [ln for ln in out.splitlines() if ln.startswith(start)]
    assert len(found) == 1, (start, found)
    return found[0]


def test_the_inference_lines_say_they_size_serving_and_the_training_step_says_it_does_not_fit(run_cli):
    rc, out, err = run_cli(ARGS)
    assert rc == 0, err
    # 70B on 8 × 80 GB: the weights and this batch's KV cache fit for serving; weights, gradients and Adam's states do not
    assert _line(out, "memory ").endswith(": fits (serving this batch; the training step's memory is under TRAINING)")
    assert _line(out, "per GPU ").endswith("(serving; the training step's memory is under TRAINING)")
    assert _line(out, "  MFU ").endswith(" if it fitted: it does not (per GPU, below)")
    assert _line(out, "  per GPU weights").endswith("does NOT fit; no micro-batch fits, not even 1")


def test_a_step_that_fits_and_an_inference_estimate_are_as_before(run_cli):
    rc, out, _ = run_cli(["estimate", "--preset", "llama-3-8b", "--batch", "512", "--seq-len", "4096", "--train",
                          "--train-tokens", "1e12", "--tp", "2", "--dp", "32", "--recompute", "selective", "--zero",
                          "1", "--sequence-parallel"])
    assert rc == 0
    assert "if it fitted" not in out
    assert _line(out, "  per GPU weights").endswith("fits; largest micro-batch that fits: 5")
    rc, out, _ = run_cli(["estimate", "--preset", "llama-3-8b", "--gpus", "8"])
    assert rc == 0
    assert "serving this batch" not in out and "under TRAINING" not in out


def test_a_serving_layout_where_not_one_sequence_fits_says_so(run_cli):
    # DeepSeek-V3's 627 GiB of weights (bf16 but its fp8 experts) over EP 8 leave each 80 GB GPU over its capacity
    # before any KV cache: the line said "largest batch that fits: 0"
    rc, out, err = run_cli(["estimate", "--preset", "deepseek-v3", "--gpus", "8", "--ep", "8", "--batch", "8",
                            "--seq-len", "1024", "--new-tokens", "0"])
    assert rc == 0, err
    assert _line(out, "per GPU ").endswith(": does NOT fit; no batch fits, not even 1")
