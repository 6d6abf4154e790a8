"""Every real config.json in tests/data/configs: how fast the CLI answers, and the counts against published ones.

For each configuration:
* the answer time of ``python -m gemmlib estimate --config FILE --json`` (prompt 4096, 256 decode steps)
  (less for a model whose learned position table is shorter) inside one interpreter (parse + estimate + JSON: the work itself) and, for a few, in a fresh
  interpreter each run as a user runs it (Python start-up and imports included);
* the parameter count against the published checkpoint's (the Hub's safetensors total or the model
  card's exact figure), and for quantized checkpoints the tensor bytes against the published total.

Target: an answer in well under a second (< 1 s in a fresh interpreter, median).
Run:  python benchmarks/bench_families.py [--repeat N]
Wall-clock figures depend on what else the machine is doing; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gemmlib.cli import main  # noqa: E402
from gemmlib.llm.checkpoint import checkpoint_size  # noqa: E402
from gemmlib.llm.hf import load_config_file, read_config_file  # noqa: E402

CONFIGS = ROOT / "tests" / "data" / "configs"
TARGET_S = 1.0

# Published parameter counts (Hub safetensors totals or the model card's exact figure; see the README of
# tests/data/configs). The multimodal / MTP / quantized cases are explained where they differ.
PUBLISHED = {
    "llama-3.1-8b": 8_030_261_248, "llama-3.1-70b": 70_553_706_496, "llama-3.1-405b": 405_853_388_800,
    "llama-3.2-1b": 1_235_814_400, "llama-3.2-3b": 3_212_749_824, "mistral-7b-v0.1": 7_241_732_096,
    "mistral-small-24b": 23_572_403_200, "ministral-8b-2410": 8_019_808_256, "qwen2.5-7b": 7_615_616_512,
    "qwen1.5-moe-a2.7b": 14_315_784_192, "qwen3-8b": 8_190_735_360, "qwen3-32b": 32_762_123_264,
    "qwen3-30b-a3b": 30_532_122_624, "qwen3-235b-a22b-thinking-2507": 235_093_634_560, "gemma-2b": 2_506_172_416,
    "gemma-2-9b": 9_241_705_984, "gemma-3-1b": 999_885_952, "phi-2": 2_779_683_840, "phi-3.5-mini": 3_821_079_552,
    "phi-4-mini": 3_836_021_760, "phi-4": 14_659_507_200, "phi-3.5-moe": 41_873_153_344,
    "deepseek-v2-lite": 15_706_484_224, "olmo-7b-hf": 6_888_095_744, "olmo-2-7b": 7_298_617_344,
    "aya-23-8b": 8_028_033_024, "command-r-v01": 34_980_831_232, "command-r7b": 8_028_033_024,
    "falcon-7b": 6_921_720_704, "gpt-neox-20b": 20_554_567_680, "pythia-6.9b": 6_857_302_016,
    "starcoder2-7b": 7_173_923_840, "gpt-oss-20b": 20_914_757_184, "gpt-oss-120b": 116_829_156_672,
    "olmoe-1b-7b": 6_919_161_856, "smollm3-3b": 3_075_098_624, "internlm2.5-7b": 7_737_708_544,
}
# Published checkpoint totals: tensor bytes (or, for DeepSeek-V3, every stored element).
PUBLISHED_BYTES = {
    "gpt-oss-20b": 13_761_264_768, "gpt-oss-120b": 65_248_815_744, "llama-3.1-8b": 16_060_522_496,
    "llama-3.1-8b-fp8-dynamic": 9_083_953_152, "llama-3.3-70b-w4a16": 39_525_311_232,
    "llama-3.3-70b-awq": 39_767_785_472, "llama-3.3-70b-nvfp4": 42_709_045_632,
}
PUBLISHED_ELEMENTS = {"deepseek-v3-fp8": 684_531_386_000, "minimax-m2.7": 228_703_644_928}
# Rounded figures from model cards (no exact Hub total at hand): (what, which count, the card's figure, significant
# digits it is given to). "params" = every parameter, "active" = one token's, "no_embeddings" = params less the
# embedding and LM-head matrices; "with_vision" = decoder + vision tower.
PUBLISHED_CARD = {
    "jamba-1.5-mini": [("52B total", "params", 52e9, 2), ("12B active", "active", 12e9, 2)],
    "exaone-4.0-32b": [("30.95B without embeddings", "no_embeddings", 30.95e9, 4)],
    "kimi-k2-instruct": [("1T total", "params", 1e12, 1), ("32B activated", "active_no_embedding", 32e9, 2)],
    "nemotron-nano-9b-v2": [("9B", "params", 9e9, 1)],
    "qwen3-next-80b-a3b": [("80B total", "params", 80e9, 2), ("3B activated", "active_no_embeddings", 3e9, 1)],
    "qwen3-vl-30b-a3b": [("30B-A3B", "with_vision", 30e9, 1)],
    "qwen3.5-27b": [("27B", "with_vision", 27e9, 2)],
    "qwen3.5-35b-a3b": [("35B total", "with_vision", 35e9, 2)],
    "ernie-4.5-0.3b": [("0.36B", "params", 0.36e9, 2)],
    "glm-5": [("744B total", "params", 744e9, 3), ("40B active", "active_no_embeddings", 40e9, 2)],
    # Gemma 4's card: the decoder's counts (the vision tower, ~550M, apart); E2B's "effective" count leaves out the
    # per-layer embedding table (its E4B figure, 4.5B, is not matched: 4.6B comes out)
    "gemma-4-31b-it": [("30.7B", "params", 30.7e9, 3)],
    "gemma-4-26b-a4b-it": [("25.2B total", "params", 25.2e9, 3), ("3.8B active", "active", 3.8e9, 2)],
    "gemma-4-e2b-it": [("2.3B effective", "no_per_layer_table", 2.3e9, 2)],
    # DeepSeek-V4's cards: 284B / 13B activated (Flash), 1.6T / 49B (Pro), the activated counts without the embedding;
    # V4-Pro's every stored element is checked against its tensor listing in tests/llm/test_deepseek_v4.py
    "deepseek-v4-flash": [("284B total", "params", 284e9, 3), ("13B activated", "active_no_embedding", 13e9, 2)],
    "deepseek-v4-pro": [("1.6T total", "params", 1.6e12, 2), ("49B activated", "active_no_embedding", 49e9, 2)],
    # Falcon Mamba 7B: a pure Mamba model (its Hub file's intermediate_size over its expand)
    "falcon-mamba-7b": [("7.27B", "params", 7.27e9, 3)],
    # BitNet b1.58 2B4T: "~2 Billion" parameters, read as those besides the embedding
    "bitnet-b1.58-2b-4t": [("~2B", "no_embeddings", 2e9, 1)],
}


def _count(cfg, which: str, vision: int) -> int:
    emb = cfg.vocab * cfg.hidden
    head = 0 if cfg.tied_embeddings else emb
    return {"params": cfg.params, "active": cfg.active_params, "no_embeddings": cfg.params - emb - head,
            "active_no_embedding": cfg.active_params - emb, "active_no_embeddings": cfg.active_params - emb - head,
            "with_vision": cfg.params + vision,
            "no_per_layer_table": cfg.params - (cfg.per_layer_vocab or cfg.vocab) * cfg.layers * cfg.per_layer_input}[which]


def _rounded(x: float, digits: int) -> float:
    from math import floor, log10

    return round(x, -int(floor(log10(abs(x)))) + digits - 1)
ARGS = ["--seq-len", "4096", "--new-tokens", "256", "--json"]
FRESH = ["deepseek-v3-fp8", "llama-4-scout-text", "gemma-3-1b", "gpt-oss-120b", "qwen3-235b-a22b-thinking-2507"]


def load() -> str:
    try:
        return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        return "load average unknown"


def _args(path: Path) -> list[str]:
    """Prompt 4096 + 256 new tokens, or what fits a learned position table (GPT-2 style models refuse more)."""
    cfg = load_config_file(str(path))
    if cfg.learned_positions and cfg.learned_positions < 4096 + 256:
        return ["--seq-len", str(cfg.learned_positions - 256), *ARGS[2:]]
    return ARGS


def in_process(path: Path, repeat: int) -> float:
    times = []
    argv = _args(path)
    for _ in range(repeat):
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            rc = main(["estimate", "--config", str(path), *argv])
        times.append(time.perf_counter() - t)
        assert rc == 0, path
    return statistics.median(times)


def fresh(path: Path, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "gemmlib", "estimate", "--config", str(path), *_args(path)], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        out.append(time.perf_counter() - t)
        assert r.returncode == 0, r.stderr
    return out


def run(repeat: int) -> bool:
    print(f"python -m gemmlib estimate --config FILE {' '.join(ARGS)}  [{load()}]")
    print(f"{'config':32} {'family':12} {'answer':>9} {'parameters':>18} {'published':>18} {'':4} checkpoint")
    ok = True
    times = []
    for path in sorted(CONFIGS.glob("*.json")):
        cfg = load_config_file(str(path))
        t = in_process(path, repeat)
        times.append(t)
        pub = PUBLISHED.get(path.stem)
        mark = "" if pub is None else ("ok" if pub == cfg.params else "DIFF")
        ok &= mark != "DIFF"
        size = checkpoint_size(cfg, cfg.dtype or "bf16")
        ck = f"{size.bytes:,} B"
        if path.stem in PUBLISHED_BYTES:
            good = size.bytes == PUBLISHED_BYTES[path.stem]
            ok &= good
            ck += f" (published {PUBLISHED_BYTES[path.stem]:,}: {'ok' if good else 'DIFF'})"
        if path.stem in PUBLISHED_ELEMENTS:
            good = size.elements == PUBLISHED_ELEMENTS[path.stem]
            ok &= good
            ck += f"; {size.elements:,} elements (Hub {PUBLISHED_ELEMENTS[path.stem]:,}: {'ok' if good else 'DIFF'})"
        print(f"{path.stem:32} {cfg.family:12} {t * 1e3:7.1f} ms {cfg.params:>18,} "
              f"{'' if pub is None else f'{pub:,}':>18} {mark:4} {ck}")
        vision = sum((read_config_file(str(path))[1].get("vision") or {}).values())
        for what, which, figure, digits in PUBLISHED_CARD.get(path.stem, []):
            n = _count(cfg, which, vision)
            good = _rounded(n, digits) == _rounded(figure, digits)
            ok &= good
            print(f"{'':32} model card {what}: {which} = {n:,} -> {'ok' if good else 'DIFF'} to the card's "
                  f"{digits} digit{'s' if digits > 1 else ''}")
    print(f"in one interpreter: median {statistics.median(times) * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms "
          f"over {len(times)} configs")
    print(f"fresh interpreter each run (Python start-up and imports included)  [{load()}]")
    for stem in FRESH:
        ts = fresh(CONFIGS / f"{stem}.json", repeat)
        med = statistics.median(ts)
        good = med < TARGET_S
        ok &= good
        print(f"    {stem:32} median {med * 1e3:6.0f} ms (min {min(ts) * 1e3:.0f}, max {max(ts) * 1e3:.0f})  "
              f"{'PASS' if good else 'FAIL'} (< {TARGET_S:g} s)")
    print("ALL PASS" if ok else "SOME FAIL")
    return ok


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    sys.exit(0 if run(ap.parse_args().repeat) else 1)
