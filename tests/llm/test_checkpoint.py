"""Quantized checkpoints sized exactly: against the formats' own packing code and published totals.

Three independent references:

* the tensors each format's own code writes for one linear layer, recorded on the CPU from
  bitsandbytes 0.50.2 (``Linear4bit`` / ``Linear8bitLt`` state dicts), compressed-tensors 0.20.1
  (``compress_module``), AutoAWQ (``WQLinear_*.from_linear``) and AutoGPTQ (``QuantLinear.pack``) —
  ``tests/data/quant_layouts/`` (sources in its README): every name, shape and dtype must match;
* transformers' own quantized modules, built here: ``FP8Linear`` (fine-grained fp8) and the MXFP4
  experts of gpt-oss;
* published whole-checkpoint totals (the tensor bytes of the safetensors files), for real configs in
  ``tests/data/configs``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gemmlib.core.errors import InputError
from gemmlib.llm.accounting import Workload, memory
from gemmlib.llm.checkpoint import checkpoint_size, stored_linears, weight_format
from gemmlib.llm.hf import load_config_file, read_config
from gemmlib.llm.presets import from_name
from gemmlib.llm.quant import Quantization, for_weight_dtype, from_quantization_config

DATA = Path(__file__).resolve().parents[1] / "data"
LAYOUTS = DATA / "quant_layouts"


def _tensors(q: Quantization, o: int, i: int, bias: bool, dtype: str) -> dict:
    return {t.name: [list(t.shape), t.dtype, t.bytes] for t in q.linear_tensors(o, i, bias, dtype)}


# ----- against the libraries' packing code ---------------------------------------------------------

_BNB = json.loads((LAYOUTS / "bitsandbytes.json").read_text())


@pytest.mark.parametrize("case", list(_BNB))
def test_bitsandbytes_layout(case):
    real = {k: v for k, v in _BNB[case].items() if not k.startswith("_")}
    parts = case.split()
    o, i = (int(x) for x in parts[-2].split("x"))
    bias = parts[-1] == "bias=True"
    dtype = {"bfloat16": "bf16", "float16": "fp16"}[parts[-3]]
    if parts[0] == "int8":
        q = from_quantization_config({"quant_method": "bitsandbytes", "load_in_8bit": True})
    else:
        q = from_quantization_config({"quant_method": "bitsandbytes", "load_in_4bit": True,
                                      "bnb_4bit_quant_type": parts[1],
                                      "bnb_4bit_use_double_quant": parts[2] == "dq=True"})
    ours = _tensors(q, o, i, bias, dtype)
    state = next((k for k in real if "quant_state" in k), None)
    if state and "weight.nested_absmax" in real:  # double quantisation: the JSON holds a data-dependent float repr
        assert abs(ours.pop(state)[0][0] - real.pop(state)[0][0]) <= 10
    assert ours == real


_AWQ_GPTQ = json.loads((LAYOUTS / "awq_gptq.json").read_text())


@pytest.mark.parametrize("case", list(_AWQ_GPTQ))
def test_awq_and_gptq_layouts(case):
    real = _AWQ_GPTQ[case]
    parts = case.split()
    o, i = (int(x) for x in parts[-2].split("x"))
    bias = parts[-1] == "bias=True"
    g = int(parts[2].removeprefix("g"))
    if parts[0] == "awq":
        q = from_quantization_config({"quant_method": "awq", "bits": 4, "group_size": g, "version": parts[1]})
    else:
        q = from_quantization_config({"quant_method": "gptq", "bits": int(parts[1][1:]), "group_size": g})
    assert _tensors(q, o, i, bias, "fp16") == real


_CT = json.loads((LAYOUTS / "compressed_tensors.json").read_text())
_CT_CONFIGS = json.loads((LAYOUTS / "compressed_tensors_configs.json").read_text())


def _ct_config(scheme: str) -> dict:
    """The quantization_config of a compressed-tensors preset (library-generated where we have it)."""
    if scheme in _CT_CONFIGS:
        return _CT_CONFIGS[scheme]
    weights = {"W4A16_ASYM": dict(num_bits=4, type="int", symmetric=False, strategy="group", group_size=128),
               "W8A16": dict(num_bits=8, type="int", symmetric=True, strategy="group", group_size=128),
               "W3A16": dict(num_bits=3, type="int", symmetric=True, strategy="group", group_size=128),
               "W2A16": dict(num_bits=2, type="int", symmetric=True, strategy="group", group_size=128),
               "FP8": dict(num_bits=8, type="float", symmetric=True, strategy="tensor"),
               "NVFP4A16": dict(num_bits=4, type="float", symmetric=True, strategy="tensor_group", group_size=16),
               "MXFP4A16": dict(num_bits=4, type="float", symmetric=True, strategy="group", group_size=32)}[scheme]
    acts = dict(num_bits=8, type="float", symmetric=True, strategy="tensor", dynamic=False) if scheme == "FP8" else None
    return {"quant_method": "compressed-tensors",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights, "input_activations": acts}},
            "ignore": ["lm_head"]}


@pytest.mark.parametrize("case", list(_CT))
def test_compressed_tensors_layout(case):
    real = {k: v for k, v in _CT[case].items() if not k.startswith("_") and k != "format"}
    m = re.match(r"(\w+) (fp16 )?(\d+)x(\d+)(?: bias=(\w+))?", case)
    scheme, fp16, o, i, bias = m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), m.group(5) == "True"
    q = from_quantization_config(_ct_config(scheme))
    assert _tensors(q, o, i, bias, "fp16" if fp16 else "bf16") == real


# ----- against transformers' own quantized modules --------------------------------------------------

@pytest.mark.parametrize("shape, block, scale_fmt, static, bias", [
    ((576, 7168), [128, 128], "float", False, False),  # DeepSeek's kv_a_proj_with_mqa: a ragged row block
    ((4096, 1000), [128, 128], "ue8m0", True, True),
    ((300, 200), None, "float", False, False),
])
def test_fp8_layout_equals_transformers_fp8linear(shape, block, scale_fmt, static, bias):
    torch = pytest.importorskip("torch")
    from transformers.integrations.finegrained_fp8 import FP8Linear

    o, i = shape
    mod = FP8Linear(i, o, block_size=tuple(block) if block else None, scale_fmt=scale_fmt,
                    activation_scheme="static" if static else "dynamic", has_bias=bias)
    real = {k: (list(v.shape), str(v.dtype).removeprefix("torch."), v.numel() * v.element_size())
            for k, v in mod.state_dict().items() if k != "bias"}
    q = from_quantization_config({"quant_method": "fp8", "weight_block_size": block, "scale_fmt": scale_fmt,
                                  "activation_scheme": "static" if static else "dynamic"})
    ours = {k: tuple(v) for k, v in _tensors(q, o, i, False, "bf16").items()}
    assert ours == {k: tuple(v) for k, v in real.items()}
    assert torch is not None


@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")  # transformers' bitnet
@pytest.mark.parametrize("linear_class, mode", [("bitlinear", "offline"), ("autobitlinear", "offline"),
                                               ("autobitlinear", "online")])
@pytest.mark.parametrize("tied", [True, False])
def test_bitnet_checkpoint_equals_transformers_bitnet_linears(linear_class, mode, tied):
    """A BitNet model whose linears transformers' replace_with_bitnet_linear has swapped: BitLinear holds what a packed
    checkpoint stores (uint8 [O/4, I] and one scale), byte for byte and element for element, the LM head left as it
    is; the offline AutoBitLinear loads that same packed form (its deserializer unpacks four rows per stored row, so
    it is compared with BitLinear's), the online one stores the weights unquantized."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM, BitNetQuantConfig
    from transformers.integrations.bitnet import replace_with_bitnet_linear

    from gemmlib.llm.hf import read_config

    keys = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, vocab_size=128, max_position_embeddings=64, pad_token_id=None,
                bos_token_id=None, eos_token_id=None, tie_word_embeddings=tied)
    stored_as = "bitlinear" if mode == "offline" else linear_class
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model("bitnet", **keys), dtype=torch.bfloat16)
    replace_with_bitnet_linear(model, modules_to_not_convert=["lm_head"],
                               quantization_config=BitNetQuantConfig(linear_class=stored_as, quantization_mode=mode))
    sd = {k: v for k, v in model.state_dict().items() if not (tied and k == "lm_head.weight")}
    cfg = read_config(dict(keys, model_type="bitnet", torch_dtype="bfloat16", quantization_config=dict(
        quant_method="bitnet", linear_class=linear_class, quantization_mode=mode)))[0]
    size = checkpoint_size(cfg, "bf16")
    assert size.bytes == sum(v.numel() * v.element_size() for v in sd.values())
    assert size.elements == sum(v.numel() for v in sd.values())
    assert size.quantized_linears == 14  # the decoder's 2 × 7 linears, not the LM head


def test_mxfp4_experts_equal_transformers_gpt_oss_experts():
    """transformers holds gpt-oss's packed experts as [E, N, K/2] bytes and writes them to a checkpoint as
    blocks [E, N, K/32, 16] beside e8m0 scales of the blocks' leading shape (integrations/mxfp4.py)."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig
    from transformers.integrations.mxfp4 import Mxfp4GptOssExperts

    hf = AutoConfig.for_model("gpt_oss", hidden_size=64, intermediate_size=96, num_local_experts=4,
                              num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                              vocab_size=32)
    with torch.device("meta"):
        mod = Mxfp4GptOssExperts(hf)
    q = from_quantization_config({"quant_method": "mxfp4"})
    for name, (n, k) in (("gate_up_proj", (2 * 96, 64)), ("down_proj", (64, 96))):
        packed = getattr(mod, name)
        ours = {t.name: t for t in q.expert_tensors(4, n, k, True, "bf16", name)}
        blocks, scales = ours[f"{name}_blocks"], ours[f"{name}_scales"]
        assert blocks.bytes == packed.numel() * packed.element_size() and blocks.dtype == "uint8"
        assert blocks.shape[:-1] == scales.shape and blocks.shape[-1] == 16
        assert ours[f"{name}_bias"].shape == tuple(getattr(mod, f"{name}_bias").shape)


# ----- whole checkpoints against published totals ---------------------------------------------------

# (config file, published tensor bytes of the checkpoint, where the figure comes from)
PUBLISHED_BYTES = [
    ("gpt-oss-20b", 13_761_264_768, "openai/gpt-oss-20b model.safetensors.index.json total_size"),
    ("gpt-oss-120b", 65_248_815_744, "openai/gpt-oss-120b tensor bytes of its 15 safetensors files"),
    ("llama-3.1-8b", 16_060_522_496, "unsloth/Meta-Llama-3.1-8B-Instruct (bf16) safetensors data offsets"),
    ("llama-3.1-8b-fp8-dynamic", 9_083_953_152, "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic"),
    ("llama-3.3-70b-w4a16", 39_525_311_232, "RedHatAI/Llama-3.3-70B-Instruct-quantized.w4a16"),
    ("llama-3.3-70b-awq", 39_767_785_472, "a Llama-3.x-70B AWQ index total_size (9 shards)"),
    ("llama-3.3-70b-nvfp4", 42_709_045_632, "nvidia/Llama-3.3-70B-Instruct-FP4"),
]


@pytest.mark.parametrize("name, published, source", PUBLISHED_BYTES, ids=[p[0] for p in PUBLISHED_BYTES])
def test_checkpoint_bytes_equal_published_totals(name, published, source):
    cfg = load_config_file(str(DATA / "configs" / f"{name}.json"))
    assert checkpoint_size(cfg, cfg.dtype or "bf16").bytes == published, source


def test_deepseek_v3_fp8_checkpoint():
    cfg = load_config_file(str(DATA / "configs" / "deepseek-v3-fp8.json"))
    size = checkpoint_size(cfg, "bf16")
    assert size.elements == 684_531_386_000  # the Hub's count: every element, fp8 scales and the MTP layer included
    files = 688_586_727_753  # sum of the weight files (DeepSeek-V3 rev afb92e1f): tensors + safetensors headers
    assert 0 < files - size.bytes < 12_000_000  # ≈ 120 B of JSON header per tensor, 91,991 tensors
    assert size.mtp_bytes > 0 and checkpoint_size(cfg, "bf16", mtp=False).bytes == size.bytes - size.mtp_bytes


def test_the_compiled_skip_list_answers_as_each_pattern_does():
    """transformers' skip rule (an exact name, a dotted prefix or suffix, a glob alone or as a prefix) compiled into
    one pattern answers as the patterns one by one: every stored linear of the fixtures with a skip list (GLM-5.2's
    156 ModelOpt patterns included), and names built to trip a careless regex."""
    from gemmlib.llm.quant import Quantization

    cases = []
    for name in ("glm-5.2", "gpt-oss-120b", "llama-3.3-70b-nvfp4", "minimax-m2.7"):
        cfg = load_config_file(str(DATA / "configs" / f"{name}.json"))
        cases.append((cfg.quant, [x.module for x in stored_linears(cfg)]))
    odd = Quantization(method="fp8", bits=8, skip=("lm_head", "model.layers.1*", "re.dots", "[ab]x", "gate"))
    cases.append((odd, ["lm_head", "lm_headx", "model.layers.1", "model.layers.12.mlp", "model.layers.2.mlp",
                        "reXdots", "re.dots", "a.re.dots", "ax", "cx", "mlp.gate", "mlp.gate_proj", "gate.w"]))
    checked = 0
    for q, modules in cases:
        assert q.skip and q.skip_rule not in ("substring", "ct")
        for m in modules:
            assert bool(q.skip_regex.match(m)) == any(q._skips(p, m) for p in q.skip), (m, q.method)
            checked += 1
    assert checked > 2000
    assert [m for m in cases[-1][1] if odd.skip_regex.match(m)] == [
        "lm_head", "model.layers.1", "model.layers.12.mlp", "re.dots", "a.re.dots", "ax", "mlp.gate", "gate.w"]


def test_minimax_m2_fp8_checkpoint():
    """MiniMax-M2.7 as shipped: fp8 e4m3 weights in 128 × 128 blocks, the routers (``gate``), their score-correction
    buffers and the LM head left unconverted; every element of the checkpoint (weights, block scales, buffers)
    against the tensor total a public report of the checkpoint gives (search index id 62693775865)."""
    cfg = load_config_file(str(DATA / "configs" / "minimax-m2.7.json"))
    size = checkpoint_size(cfg, cfg.dtype or "bf16")
    assert size.elements == 228_703_644_928
    # besides the parameters: a 256-element fp32 buffer per layer and one fp32 scale per 128 × 128 block of each
    # converted weight: q 6144 × 3072 (48 × 24 blocks), k and v 1024 × 3072 (8 × 24), o 3072 × 6144 (24 × 48),
    # each expert's w1, w3 1536 × 3072 and w2 3072 × 1536 (12 × 24 = 24 × 12 blocks)
    assert size.elements - cfg.params == 62 * 256 + 62 * (48 * 24 + 2 * 8 * 24 + 24 * 48 + 256 * 3 * 12 * 24)
    assert size.by_role["router"] == 62 * 256 * 3072 * 2  # bf16: not converted
    assert size.quantized_linears == 62 * (4 + 3 * 256)  # q, k, v, o and every expert's w1, w2, w3


def test_what_each_format_leaves_unquantized():
    awq = load_config_file(str(DATA / "configs" / "zephyr-7b-alpha-awq.json"))
    lins = stored_linears(awq)
    q, rest = weight_format(awq, "fp16")
    assert [x.role for x in lins if not q.quantizes(x.module, x.role)] == ["lm_head"]
    size = checkpoint_size(awq, "fp16")
    # the LM head, the embedding and the norms stay fp16: 2 × 32000 × 4096 × 2 + (2 · 32 + 1) · 4096 · 2
    assert size.unquantized_bytes == 2 * 32000 * 4096 * 2 + 65 * 4096 * 2
    assert 4.1e9 < size.bytes < 4.2e9  # the "about 4.15 GB"
    oss = load_config_file(str(DATA / "configs" / "gpt-oss-20b.json"))
    q, _ = weight_format(oss, "bf16")
    assert {x.role for x in stored_linears(oss) if q.quantizes(x.module, x.role)} == {"expert"}
    bnb = load_config_file(str(DATA / "configs" / "llama-3-8b-bnb-nf4.json"))
    q, _ = weight_format(bnb, "bf16")
    assert not q.quantizes("lm_head", "lm_head")  # default skip of the output embedding
    assert q.quantizes("model.layers.0.mlp.down_proj", "mlp")
    with_list = from_quantization_config({"quant_method": "bitsandbytes", "load_in_4bit": True,
                                          "llm_int8_skip_modules": ["vision_tower"]})
    assert with_list.quantizes("lm_head", "lm_head")  # a given list replaces the defaults


def test_block_scaled_weight_dtypes():
    cfg = from_name("mistral-7b")
    int4 = checkpoint_size(cfg, "int4")
    fp4 = checkpoint_size(cfg, "fp4")
    bf16 = checkpoint_size(cfg, "bf16")
    rest = bf16.bytes - sum(b for r, b in bf16.by_role.items() if r in ("attention", "mlp"))
    blocks = (bf16.bytes - rest) / 2  # the decoder's linear weights, elements
    assert int4.unquantized_bytes == rest == fp4.unquantized_bytes
    assert int4.quantized_bytes == pytest.approx(blocks * (4 + 20 / 128) / 8)  # 4 bits + fp16 scale + 4-bit zero / 128
    assert fp4.quantized_bytes == pytest.approx(blocks * 4.5 / 8, rel=1e-6)  # 4 bits + one e4m3 per 16 (+8 B/linear)
    assert for_weight_dtype("int4").method == "int4"
    wl = Workload(weight_dtype="int4")
    assert memory(cfg, wl, __import__("gemmlib.core.hardware", fromlist=["x"]).get_hardware("h100")).weights_bytes \
        == checkpoint_size(cfg, "int4", mtp=False).bytes
    oss = from_name("gpt-oss-20b")
    with pytest.raises(InputError, match="already quantized"):
        checkpoint_size(oss, "int4")


@pytest.mark.parametrize("block, msg", [
    ({"quant_method": "awq", "bits": 8}, "4-bit"),
    ({"quant_method": "gptq", "bits": 5}, "bits must be"),
    ({"quant_method": "bitsandbytes"}, "load_in_4bit"),
    ({"quant_method": "fp8", "weight_block_size": [128]}, "weight_block_size"),
    ({"quant_method": "hqq"}, "not supported"),
    ({"bits": 4}, "quant_method"),
    ({"quant_method": "compressed-tensors"}, "config_groups"),
])
def test_bad_quantization_configs(block, msg):
    raw = json.loads((DATA / "configs" / "llama-3.1-8b.json").read_text())
    with pytest.raises(InputError, match=msg):
        read_config(dict(raw, quantization_config=block))


def test_mlx_quantization_is_sized_at_its_bits():
    """An MLX checkpoint (mlx_lm writes "quantization": {"group_size": 64, "bits": 4}): every Linear and the
    embedding as mlx.core.quantize stores them — 4 bits per weight in uint32 words plus a bf16 scale and bias per
    64, i.e. 4.5 bits per weight — the norms at bf16. Llama-3.2-1B: 695 MB (mlx-community's
    Llama-3.2-1B-Instruct-4bit is "~0.7 GB"), not the 2.47 GB of bf16. Overrides: a layer at 8 bits, one left
    unquantized."""
    raw = json.loads((Path(__file__).resolve().parents[1] / "data" / "configs" / "llama-3.2-1b-mlx-4bit.json").read_text())
    cfg, info = read_config(raw)
    assert cfg.quant.method == "mlx" and info["unknown_keys"] == []
    norms = cfg.param_breakdown()["norms"]
    size = checkpoint_size(cfg, "bf16")
    assert size.bytes * 8 == (cfg.params - norms) * (4 + 2 * 16 / 64) + norms * 16
    assert 690e6 < size.bytes < 700e6 and checkpoint_size(cfg.replace(quant=None), "bf16").bytes == 2 * cfg.params
    raw["quantization"] = dict(raw["quantization"], **{"model.layers.0.mlp.down_proj": {"group_size": 64, "bits": 8},
                                                     "model.layers.1.mlp.down_proj": False})
    over, _ = read_config(raw)
    down = cfg.hidden * cfg.ffn
    assert checkpoint_size(over, "bf16").bytes - size.bytes == down * (8 - 4) // 8 + (2 * down - down * 4.5 / 8)
    with pytest.raises(InputError, match="not an MLX affine layout"):
        read_config(dict(raw, quantization={"group_size": 48, "bits": 4}))
    mx4 = read_config(dict(raw, quantization={"mode": "mxfp4", "group_size": 32, "bits": 4}))[0]
    assert checkpoint_size(mx4, "bf16").bytes * 8 == (cfg.params - norms) * (4 + 8 / 32) + norms * 16
