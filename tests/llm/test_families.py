"""Every family, exact against Hugging Face transformers' own classes (the ground truth).

For each family a 2-layer random-weight model is built from transformers' classes
(``AutoConfig.for_model`` + ``AutoModelForCausalLM.from_config`` with eager attention and eager experts,
the settings under which FlopCounterMode sees every GEMM), run on the CPU for a prefill of 2 × 7
tokens and one decode step with the cache it returns, and compared with the estimator read from the
same configuration — both the keys as typed and the full ``config.json`` transformers writes
(``to_dict()``):

* parameters: ``sum(p.numel())`` against ``ModelConfig.params``;
* FLOPs: FlopCounterMode's totals of the prefill and of the decode step against the accounting's under the
  reference convention (``--reference transformers``: what transformers' eager code runs;
  ``reference_convention.reference_workload``);
* KV cache: the elements the returned ``DynamicCache`` holds, layer by layer, against the estimator's
  (sliding layers keep window − 1 tokens, MLA keeps the latent, Falcon's new decoder every head).

The windows (4) are shorter than the prompt (7), so sliding layers truncate their cache and the
decode step meets min(c, W − 1) + 1 keys. Full-size parameter counts of the real configurations in
``tests/data/configs`` are checked on the meta device (no memory, no weights).
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from pathlib import Path

import pytest
import torch
from reference_convention import prefill_and_decode, reference_workload
from torch.utils.flop_counter import FlopCounterMode
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.utils import logging as hf_logging

from gemmlib.core.hardware import get_hardware
from gemmlib.llm import efficiency as ef
from gemmlib.llm.accounting import Workload, decode_ops, kv_cache_bytes, prefill_ops
from gemmlib.llm.checkpoint import checkpoint_size
from gemmlib.llm.efficiency import ShapeEfficiency
from gemmlib.llm.hf import read_config, read_config_file
from gemmlib.llm.presets import _PRESET_SOURCES, PRESETS
from gemmlib.llm.ssm import MIXER_LETTERS

hf_logging.set_verbosity_error()
warnings.filterwarnings("ignore", module="transformers")

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
BATCH, PROMPT = 2, 7
B = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
         vocab_size=128, max_position_embeddings=64)
MOE = dict(num_experts_per_tok=2)
MLA = dict(num_key_value_heads=4, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12,
           n_routed_experts=4, moe_intermediate_size=32, first_k_dense_replace=1)

# Gemma 4: sliding layers of head dim 16, full ones of 32 (the last layer is always full), no per-layer embeddings
G4 = dict(B, num_hidden_layers=3, head_dim=16, global_head_dim=32, sliding_window=4, hidden_size_per_layer_input=0,
          layer_types=["sliding_attention", "full_attention", "sliding_attention"])
# name -> (model_type, keys); each exercises one family and the features it brings
TINY: dict[str, tuple[str, dict]] = {
    "llama": ("llama", dict(B, head_dim=24, attention_bias=True, mlp_bias=True)),
    "mistral": ("mistral", dict(B, head_dim=24, sliding_window=4)),
    "mistral_full": ("mistral", dict(B, sliding_window=None)),
    "ministral": ("ministral", dict(B, head_dim=24, sliding_window=4,
                                    layer_types=["sliding_attention", "full_attention"])),
    "mixtral": ("mixtral", dict(B, num_local_experts=4, **MOE)),
    "mixtral_sw": ("mixtral", dict(B, num_local_experts=4, sliding_window=4, **MOE)),
    "qwen2": ("qwen2", dict(B, use_sliding_window=True, sliding_window=4, max_window_layers=1)),
    "qwen2_moe": ("qwen2_moe", dict(B, num_experts=4, moe_intermediate_size=32, shared_expert_intermediate_size=48,
                                    mlp_only_layers=[0], **MOE)),
    "qwen2_moe_sw": ("qwen2_moe", dict(B, num_experts=4, moe_intermediate_size=32,
                                       shared_expert_intermediate_size=48, use_sliding_window=True, sliding_window=4,
                                       max_window_layers=2, **MOE)),
    "qwen3": ("qwen3", dict(B, head_dim=24)),
    "qwen3_moe": ("qwen3_moe", dict(B, head_dim=24, num_experts=4, moe_intermediate_size=32, decoder_sparse_step=2,
                                    **MOE)),
    "gemma": ("gemma", dict(B, head_dim=24)),
    "gemma2": ("gemma2", dict(B, head_dim=24, sliding_window=4)),
    "gemma3_text": ("gemma3_text", dict(B, head_dim=24, sliding_window=4, sliding_window_pattern=2)),
    "phi": ("phi", dict(B, qk_layernorm=True)),
    "phi3": ("phi3", dict(B, sliding_window=4, pad_token_id=None)),  # its default pad id is past a tiny vocab
    "phimoe": ("phimoe", dict(B, num_local_experts=4, attention_bias=True, lm_head_bias=True, **MOE)),
    "deepseek_v2": ("deepseek_v2", dict(B, q_lora_rank=None, n_shared_experts=2, **MLA, **MOE)),
    "deepseek_v2_qlora": ("deepseek_v2", dict(B, q_lora_rank=40, n_shared_experts=2, attention_bias=True, mlp_bias=True,
                                              **MLA, **MOE)),
    "deepseek_v3": ("deepseek_v3", dict(B, q_lora_rank=40, n_shared_experts=1, n_group=2, topk_group=1,
                                        num_nextn_predict_layers=0, **MLA, **MOE)),
    "olmo": ("olmo", dict(B, clip_qkv=8.0)),
    "olmo2": ("olmo2", dict(B)),
    "olmo3": ("olmo3", dict(B, sliding_window=4, layer_types=["sliding_attention", "full_attention"])),
    "olmoe": ("olmoe", dict(B, num_experts=4, **MOE)),
    "granite": ("granite", dict(B, attention_bias=True, embedding_multiplier=12.0, logits_scaling=8.0,
                                residual_multiplier=0.22, attention_multiplier=0.0078125)),
    "granitemoe": ("granitemoe", dict(B, num_local_experts=4, embedding_multiplier=12.0, **MOE)),
    "cohere": ("cohere", dict(B, use_qk_norm=True)),
    "cohere2": ("cohere2", dict(B, sliding_window=4, sliding_window_pattern=2)),
    "falcon": ("falcon", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=128)),
    "falcon_new": ("falcon", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_kv_heads=2,
                                  vocab_size=128, new_decoder_architecture=True)),
    "falcon_alibi": ("falcon", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=128,
                                    alibi=True, multi_query=False, parallel_attn=False, bias=True)),
    "gpt_neox": ("gpt_neox", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=96,
                                  vocab_size=128, max_position_embeddings=64, use_parallel_residual=False)),
    # GPT-NeoX-Japanese: no biases but the last layer's attention output's, an MLP of 2 × hidden, partial rotary
    "gpt_neox_japanese": ("gpt_neox_japanese", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                    intermediate_multiple_size=2, vocab_size=128,
                                                    max_position_embeddings=64, bos_token_id=None, eos_token_id=None,
                                                    rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                                     "partial_rotary_factor": 0.5})),
    "starcoder2": ("starcoder2", dict(B, sliding_window=4)),
    "gpt2": ("gpt2", dict(n_embd=64, n_layer=2, n_head=4, n_positions=64, vocab_size=128)),
    "gpt_bigcode": ("gpt_bigcode", dict(n_embd=64, n_layer=2, n_head=4, n_positions=64, vocab_size=128)),
    "gpt_bigcode_mha": ("gpt_bigcode", dict(n_embd=64, n_layer=2, n_head=4, n_positions=64, vocab_size=128,
                                            multi_query=False)),
    "gpt_oss": ("gpt_oss", dict(B, head_dim=24, intermediate_size=32, num_local_experts=4, sliding_window=4, **MOE)),
    "glm4_moe": ("glm4_moe", dict(B, head_dim=24, n_routed_experts=4, moe_intermediate_size=32, n_shared_experts=1,
                                  first_k_dense_replace=1, attention_bias=True, use_qk_norm=True, **MOE)),
    "llama4_text": ("llama4_text", dict(B, head_dim=24, num_local_experts=4, num_experts_per_tok=1,
                                        intermediate_size_mlp=80, interleave_moe_layer_step=2, attention_chunk_size=4,
                                        no_rope_layer_interval=2)),
    "smollm3": ("smollm3", dict(B, use_sliding_window=True, sliding_window=4, no_rope_layer_interval=2,
                                pad_token_id=None)),
    "exaone4": ("exaone4", dict(B, head_dim=24, sliding_window=4, sliding_window_pattern=2)),
    "exaone4_letters": ("exaone4", dict(B, sliding_window=4, sliding_window_pattern="LG",
                                        layer_types=["sliding_attention", "full_attention"])),
    "ernie4_5_moe": ("ernie4_5_moe", dict(B, use_bias=True, moe_num_experts=4, moe_k=2, moe_intermediate_size=32,
                                          moe_num_shared_experts=1, moe_layer_start_index=1, pad_token_id=None)),
    "glm4_moe_lite": ("glm4_moe_lite", dict(B, q_lora_rank=40, n_shared_experts=1, n_group=1, topk_group=1,
                                            **{k: v for k, v in MLA.items() if k != "first_k_dense_replace"}, **MOE)),
    "seed_oss": ("seed_oss", dict(B, head_dim=24, attention_out_bias=True, mlp_bias=True)),
    "ernie4_5": ("ernie4_5", dict(B, head_dim=24, use_bias=True, pad_token_id=None)),
    "glm": ("glm", dict(B, head_dim=24, pad_token_id=None)),
    "glm4": ("glm4", dict(B, head_dim=24, pad_token_id=None)),
    "ministral3": ("ministral3", dict(B, head_dim=24, sliding_window=4, pad_token_id=None)),
    "ministral3_full": ("ministral3", dict(B, pad_token_id=None)),
    "apertus": ("apertus", dict(B, attention_bias=True, pad_token_id=None)),
    "minimax_m2": ("minimax_m2", dict(B, head_dim=24, num_local_experts=4, **MOE)),
    "deepseek_v32": ("deepseek_v32", dict(B, q_lora_rank=40, n_shared_experts=1, n_group=1, topk_group=1,
                                          index_n_heads=2, index_head_dim=16, index_topk=4, **MLA, **MOE)),
    "glm_moe_dsa": ("glm_moe_dsa", dict(B, q_lora_rank=40, n_shared_experts=1, n_group=1, topk_group=1,
                                        index_n_heads=2, index_head_dim=16, index_topk=4,
                                        indexer_types=["full", "shared"], **MLA, **MOE)),
    "glm_moe_dsa_freq": ("glm_moe_dsa", dict(B, num_hidden_layers=4, q_lora_rank=40, n_shared_experts=1, n_group=1,
                                             topk_group=1, index_n_heads=2, index_head_dim=16, index_topk=4,
                                             index_topk_freq=2, index_skip_topk_offset=1, **MLA, **MOE)),
    "hunyuan_v1_dense": ("hunyuan_v1_dense", dict(B, head_dim=24, attention_bias=True, pad_token_id=None)),
    "arcee": ("arcee", dict(B, head_dim=24, mlp_bias=True, pad_token_id=None)),
    "exaone": ("exaone", dict(B, head_dim=24, attention_bias=True, pad_token_id=None)),
    "exaone_num_layers": ("exaone", dict({k: v for k, v in B.items() if k != "num_hidden_layers"}, num_layers=2,
                                         pad_token_id=None)),
    "flex_olmo": ("flex_olmo", dict(B, num_experts=4, pad_token_id=None, **MOE)),
    "dots1": ("dots1", dict(B, head_dim=24, n_routed_experts=4, moe_intermediate_size=32, n_shared_experts=1,
                            first_k_dense_replace=1, sliding_window=4, max_window_layers=1, **MOE)),
    # config classes transformers builds with Llama's, GLM-4.5's and DeepSeek-V3's models (their attribute_map names)
    "internlm3": ("internlm3", dict(B, head_dim=24, qkv_bias=True, bias=True, pad_token_id=None)),
    "iquestcoder": ("iquestcoder", dict(B, head_dim=24, pad_token_id=None)),
    "sarvam_moe": ("sarvam_moe", dict(B, head_dim=24, num_experts=4, num_shared_experts=1, moe_intermediate_size=32,
                                      use_qkv_bias=True, pad_token_id=None, **MOE)),
    "sarvam_mla": ("sarvam_mla", dict(B, n_shared_experts=1, num_mtp_layers=0,
                                      **{k: v for k, v in MLA.items() if k != "n_routed_experts"}, num_experts=4,
                                      **MOE)),
    "helium": ("helium", dict(B, head_dim=16, attention_bias=True, mlp_bias=True)),
    "cwm": ("cwm", dict(B, head_dim=24, sliding_window=4, mlp_bias=True)),
    "solar_open": ("solar_open", dict({k: v for k, v in B.items() if k != "intermediate_size"}, head_dim=24,
                                      n_routed_experts=4, moe_intermediate_size=32, n_shared_experts=1,
                                      attention_bias=True, **MOE)),
    "youtu": ("youtu", dict(B, q_lora_rank=40, attention_bias=True,
                            **{k: v for k, v in MLA.items() if k in ("num_key_value_heads", "kv_lora_rank",
                                                                     "qk_nope_head_dim", "qk_rope_head_dim",
                                                                     "v_head_dim")})),
    "hunyuan_v1_moe": ("hunyuan_v1_moe", dict(B, head_dim=24, num_experts=4, moe_topk=2, attention_bias=True,
                                              pad_token_id=None)),
    "vaultgemma": ("vaultgemma", dict(B, head_dim=24, sliding_window=4)),
    "granitemoeshared": ("granitemoeshared", dict(B, num_local_experts=4, shared_intermediate_size=48,
                                                  attention_bias=True, **MOE)),
    "exaone_moe": ("exaone_moe", dict(B, head_dim=24, sliding_window=4, sliding_window_pattern=2, num_experts=4,
                                      moe_intermediate_size=32, num_shared_experts=1, pad_token_id=None, **MOE)),
    "exaone_moe_types": ("exaone_moe", dict(B, sliding_window=4, layer_types=["sliding_attention", "full_attention"],
                                            mlp_layer_types=["sparse", "dense"], num_experts=4,
                                            moe_intermediate_size=32, num_shared_experts=2, pad_token_id=None, **MOE)),
    "cohere2_moe": ("cohere2_moe", dict(B, head_dim=24, sliding_window=4, sliding_window_pattern=2, num_experts=4,
                                        num_shared_experts=1, first_k_dense_replace=1,
                                        prefix_dense_intermediate_size=80, attention_bias=True, **MOE)),
    "cohere2_moe_rms": ("cohere2_moe", dict(B, sliding_window=4, num_experts=4, rms_norm_eps=1e-5, **MOE)),
    "nemotron": ("nemotron", dict(B, head_dim=24, attention_bias=True, mlp_bias=True)),
    "lfm2_all_attention": ("lfm2", dict(B, block_multiple_of=16, pad_token_id=None)),  # LFM2's default: no conv layer
    "afmoe": ("afmoe", dict(B, head_dim=24, num_hidden_layers=3, global_attn_every_n_layers=3, sliding_window=4,
                            moe_intermediate_size=32, num_dense_layers=1, num_experts=4, num_shared_experts=1,
                            **MOE)),
    "hy_v3": ("hy_v3", dict(B, head_dim=24, num_experts=4, moe_intermediate_size=32, num_shared_experts=1,
                            attention_bias=True, **MOE)),
    "minicpm3": ("minicpm3", dict(B, q_lora_rank=40, head_dim=8, attention_bias=True, mlp_bias=True,
                                  **{k: v for k, v in MLA.items() if k in ("num_key_value_heads", "kv_lora_rank",
                                                                           "qk_nope_head_dim", "qk_rope_head_dim",
                                                                           "v_head_dim")})),
    "minicpm3_no_qlora": ("minicpm3", dict(B, q_lora_rank=None, head_dim=8, num_key_value_heads=4,
                                           **{k: v for k, v in MLA.items() if k in ("kv_lora_rank", "qk_nope_head_dim",
                                                                                    "qk_rope_head_dim", "v_head_dim")})),
    "gptj": ("gptj", dict(n_embd=64, n_layer=2, n_head=4, n_positions=64, vocab_size=128, rotary_dim=8)),
    "codegen": ("codegen", dict(n_embd=64, n_layer=2, n_head=4, n_positions=64, n_ctx=64, vocab_size=128, rotary_dim=8,
                                n_inner=80)),
    "persimmon": ("persimmon", dict(B, pad_token_id=None)),
    "mpt": ("mpt", dict(d_model=64, n_heads=4, n_layers=2, max_seq_len=64, vocab_size=128)),
    "gpt_neo": ("gpt_neo", dict(hidden_size=64, num_layers=2, num_heads=4, max_position_embeddings=64, vocab_size=128,
                                attention_types=[[["global", "local"], 1]], window_size=4)),
    "stablelm": ("stablelm", dict(B, use_qkv_bias=True)),
    "stablelm_parallel": ("stablelm", dict(B, use_parallel_residual=True)),
    "hy_v3_biases": ("hy_v3", dict(B, head_dim=24, num_experts=4, moe_intermediate_size=32, num_shared_experts=2,
                                   mlp_bias=True, mlp_layer_types=["sparse", "dense"], **MOE)),
    "granite_swa": ("granite_swa", dict(B, sliding_window=4, attention_bias=True, embedding_multiplier=12.0)),
    "granitemoe_swa": ("granitemoe_swa", dict(B, num_local_experts=4, shared_intermediate_size=48, sliding_window=4,
                                              layer_types=["sliding_attention", "full_attention"], **MOE)),
    "kolibri1": ("kolibri1", dict({k: v for k, v in B.items() if k != "intermediate_size"}, num_hidden_layers=5,
                                  head_dim=24, sliding_window=4, num_experts=4, moe_intermediate_size=32,
                                  shared_expert_intermediate_size=48, **MOE)),
    "gemma4_text": ("gemma4_text", dict(G4, attention_k_eq_v=True, num_global_key_value_heads=1)),
    "gemma4_text_plain_kv": ("gemma4_text", dict(G4, num_global_key_value_heads=1, final_logit_softcapping=30.0)),
    "gemma4_text_ple": ("gemma4_text", dict(G4, hidden_size_per_layer_input=8, vocab_size_per_layer_input=160)),
    # E2B's layout: per-layer inputs, the last two layers reading the K/V of the last earlier layer of their kind,
    # their MLPs twice as wide
    "gemma4_text_kv_shared": ("gemma4_text", dict(G4, num_hidden_layers=4, hidden_size_per_layer_input=8,
                                                  vocab_size_per_layer_input=160, num_kv_shared_layers=2,
                                                  use_double_wide_mlp=True, layer_types=["sliding_attention",
                                                  "full_attention", "sliding_attention", "full_attention"])),
    "gemma4_unified_text": ("gemma4_unified_text", dict({k: v for k, v in G4.items() if "per_layer" not in k},
                                                        num_hidden_layers=4, num_kv_shared_layers=2,
                                                        use_double_wide_mlp=True, attention_k_eq_v=True,
                                                        num_global_key_value_heads=1,
                                                        layer_types=["sliding_attention", "full_attention",
                                                                     "sliding_attention", "full_attention"])),
    # Gemma 3n: per-layer inputs and K/V reuse as Gemma 4's small models, AltUp's streams (3 here) and LAuReL
    "gemma3n_text": ("gemma3n_text", dict(B, num_hidden_layers=4, head_dim=16, sliding_window=4,
                                          layer_types=["sliding_attention", "full_attention", "sliding_attention",
                                                       "full_attention"], hidden_size_per_layer_input=8,
                                          vocab_size_per_layer_input=160, num_kv_shared_layers=2, laurel_rank=8,
                                          altup_num_inputs=3)),
    "jais2": ("jais2", dict(B, head_dim=24, pad_token_id=None)),
    "jais2_no_biases": ("jais2", dict(B, attention_bias=False, mlp_bias=False, pad_token_id=None)),
    # MiMo-V2-Flash: q/k heads of 24, values of 16; its sliding layers with twice the KV heads and sinks
    "mimo_v2_flash": ("mimo_v2_flash", dict(B, num_hidden_layers=3, head_dim=24, v_head_dim=16, sliding_window=4,
                                            num_key_value_heads=1, n_routed_experts=4, moe_intermediate_size=32,
                                            attention_bias=True, **MOE)),
    "laguna": ("laguna", dict(B, num_hidden_layers=3, head_dim=16, num_experts=4, moe_intermediate_size=32,
                              shared_expert_intermediate_size=48, sliding_window=4, attention_bias=True,
                              layer_types=["sliding_attention", "full_attention", "sliding_attention"], **MOE)),
    "laguna_per_element": ("laguna", dict(B, num_hidden_layers=2, num_experts=4, moe_intermediate_size=32,
                                          shared_expert_intermediate_size=24, gating="per-element",
                                          num_attention_heads_per_layer=[4, 4], mlp_layer_types=["sparse", "dense"],
                                          **MOE)),
    "dbrx": ("dbrx", dict(d_model=64, n_heads=4, n_layers=2, max_seq_len=64, vocab_size=128,
                          attn_config=dict(kv_n_heads=2, clip_qkv=8.0, rope_theta=10000.0), ffn_config=dict(ffn_hidden_size=48,
                                                                                       moe_num_experts=4, moe_top_k=2))),
    "bloom": ("bloom", dict(hidden_size=64, n_layer=2, n_head=4, vocab_size=128)),
    "bloom_n_embed": ("bloom", dict(n_embed=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=128)),
    "opt": ("opt", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, ffn_dim=96, vocab_size=128,
                        max_position_embeddings=64)),
    "opt_plain_norms": ("opt", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, ffn_dim=96,
                                    vocab_size=128, max_position_embeddings=64, enable_bias=False,
                                    layer_norm_elementwise_affine=False, word_embed_proj_dim=64)),
    "biogpt": ("biogpt", {k: v for k, v in B.items() if k != "num_key_value_heads"}),  # (multi-head only)
    "gemma4_text_moe": ("gemma4_text", dict(G4, attention_k_eq_v=True, num_global_key_value_heads=1,
                                            enable_moe_block=True, num_experts=4, top_k_experts=2,
                                            moe_intermediate_size=32)),
    # Mellum 2: Qwen3-MoE's attention, sliding and full layers, a dense layer among MoE ones
    "mellum": ("mellum", dict(B, head_dim=24, num_experts=4, moe_intermediate_size=32, sliding_window=4,
                              attention_bias=True, layer_types=["sliding_attention", "full_attention"],
                              mlp_layer_types=["dense", "sparse"], **MOE)),
    "nanochat": ("nanochat", dict(B, attention_bias=True, pad_token_id=None)),
    "hyperclovax": ("hyperclovax", dict(B, head_dim=24, attention_bias=True, mlp_bias=True)),
    "hyperclovax_no_post_norm": ("hyperclovax", dict(B, use_post_norm=False)),
    # Flint: sinks, a sliding layer, a dense first layer, an ungated shared expert
    "flint": ("flint", dict(B, head_dim=24, num_experts=4, moe_intermediate_size=32, shared_expert_intermediate_size=48,
                            sliding_window=4, attention_bias=True, mlp_only_layers=[0],
                            layer_types=["full_attention", "sliding_attention"], **MOE)),
    # HY-V4: GLM-5's MLA + DSA (an indexer in the first and third layers, the second reusing it), a gate per element and
    # a sink per head on the attention output, iHC over 3 streams, a dense first layer
    "hy_v4": ("hy_v4", dict(B, num_hidden_layers=3, q_lora_rank=40, n_shared_experts=1, n_group=1, topk_group=1,
                            index_n_heads=2, index_head_dim=16, index_topk=4, hc_mult=3,
                            indexer_types=["full", "shared", "full"], mlp_layer_types=["dense", "sparse", "sparse"],
                            pad_token_id=None, bos_token_id=None, eos_token_id=None,
                            **{k: v for k, v in MLA.items() if k != "first_k_dense_replace"}, **MOE)),
    # LongCat-Flash: one block of two MLA layers, two dense MLPs and a shortcut MoE (no zero-computation expert here:
    # with them the experts a token reaches depend on the data; their count is checked below)
    "longcat_flash": ("longcat_flash", dict(hidden_size=64, num_layers=1, num_attention_heads=4, vocab_size=128,
                                            max_position_embeddings=64, ffn_hidden_size=96, expert_ffn_hidden_size=32,
                                            n_routed_experts=4, zero_expert_num=0, moe_topk=2, q_lora_rank=40,
                                            kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, head_dim=8,
                                            v_head_dim=12, pad_token_id=None, bos_token_id=None, eos_token_id=None)),
    # North's decoder (cohere_compass_text): Cohere 2's parallel block, a sliding layer beside a full one
    "cohere_compass_text": ("cohere_compass_text", dict(B, sliding_window=4,
                                                        layer_types=["sliding_attention", "full_attention"],
                                                        rope_parameters={t: {"rope_type": "default", "rope_theta": 1e4}
                                                                         for t in ("sliding_attention",
                                                                                   "full_attention")})),
    "cohere_compass_text_full": ("cohere_compass_text", dict(B, rope_parameters={
        "full_attention": {"rope_type": "default", "rope_theta": 1e4}})),
    # Apertus 1.5's decoder: its LM head pruned to the first 128 of 160 rows
    "apertus1p5_text": ("apertus1p5_text", dict(B, vocab_size=160, output_vocab_size=128, pad_token_id=None)),
    # Beam: a gated attention output with a bias per head, a sliding layer and a full (NoPE) one, four norms per layer
    "beam": ("beam", dict(B, head_dim=24, num_experts=4, moe_intermediate_size=32, sliding_window=4, attention_bias=True,
                          n_group=2, topk_group=1, mlp_layer_types=["dense", "sparse"], **MOE)),
    # Aria's decoder: every layer 4 experts top-2 beside two shared experts run as one MLP twice as wide
    "aria_text": ("aria_text", dict(B, moe_num_experts=4, moe_topk=2, moe_num_shared_experts=2, pad_token_id=None)),
    # XGLM: sinusoidal positions, LayerNorms, biases everywhere, a GELU MLP, the head tied
    "xglm": ("xglm", dict(d_model=64, ffn_dim=96, num_layers=2, attention_heads=4, vocab_size=128,
                          max_position_embeddings=64, pad_token_id=None)),
    # CTRL: the same block with a ReLU MLP, the tied head with a bias of its own
    "ctrl": ("ctrl", dict(n_embd=64, dff=96, n_layer=2, n_head=4, vocab_size=128, n_positions=64)),
    # BitNet b1.58: Llama's block with a norm before o_proj and one over the MLP's intermediate before down_proj
    "bitnet": ("bitnet", dict(B, attention_bias=True, pad_token_id=None)),
    # A.X K1: DeepSeek-V3 with a norm after each MoE block; its older keys: the first layer dense, then every other
    "axk1": ("axk1", dict(B, num_hidden_layers=3, q_lora_rank=40, n_shared_experts=1, n_group=1, topk_group=1,
                          moe_layer_freq=2, **{k: v for k, v in MLA.items() if k != "first_k_dense_replace"},
                          first_k_dense_replace=1, **MOE)),
    # A.X-K2: DeepSeek-V3.2's indexer and mixture, queries and an output gate from the query latent and its norm
    # (q_gate_proj), a low-rank gate after each input norm and each MoE layer's post-attention norm
    "axk2": ("axk2", dict(B, num_hidden_layers=3, q_lora_rank=40, n_shared_experts=1, index_n_heads=2,
                          index_head_dim=16, index_topk=4, gated_norm_rank=6, mlp_layer_types=["dense", "sparse", "sparse"],
                          **{k: v for k, v in MLA.items() if k != "first_k_dense_replace"}, **MOE)),
    # MiniMax-M3: a full layer and two block-sparse ones (blocks of 2, the top 2 kept: a 7-token prompt spans four),
    # per-head q/k norms, a dense first MLP, then experts beside a shared expert, gate|up fused everywhere
    "minimax_m3_vl_text": ("minimax_m3_vl_text", dict(B, num_hidden_layers=3, head_dim=16, rotary_dim=8,
                                                      num_local_experts=4, dense_intermediate_size=80,
                                                      shared_intermediate_size=24, index_n_heads=2, index_head_dim=12,
                                                      index_block_size=2, index_topk_blocks=2,
                                                      layer_types=["full_attention", "minimax_m3_sparse",
                                                                   "minimax_m3_sparse"],
                                                      mlp_layer_types=["dense", "sparse", "sparse"], pad_token_id=None,
                                                      bos_token_id=None, eos_token_id=None, **MOE)),
}


def _build(model_type: str, keys: dict):
    torch.manual_seed(0)
    hf = AutoConfig.for_model(model_type, **copy.deepcopy(keys))  # a config class may edit a list it is given
    model = AutoModelForCausalLM.from_config(hf, attn_implementation="eager", experts_implementation="eager")
    model.requires_grad_(False)  # (FlopCounterMode's module tracker fails on DBRX's views of its expert parameters)
    return hf, model.eval()


def _run(model, vocab: int):
    """FlopCounterMode totals of a prefill and one decode step, and the cache after the step."""
    prefill, decode, cache = prefill_and_decode(model, torch.randint(0, vocab, (BATCH, PROMPT)))
    per_layer, nbytes = _cache_nbytes(cache)
    return prefill, decode, per_layer, nbytes


_RESULTS: dict[str, tuple] = {}


def _truth(name: str):
    if name not in _RESULTS:
        mt, keys = TINY[name]
        hf, model = _build(mt, keys)
        params = sum(p.numel() for p in model.parameters())
        _RESULTS[name] = (hf, params, *_run(model, hf.vocab_size))
    return _RESULTS[name]


@pytest.mark.parametrize("source", ["keys", "to_dict"])
@pytest.mark.parametrize("name", list(TINY))
def test_tiny_model_is_exact(name, source):
    mt, keys = TINY[name]
    hf, params, prefill, decode, per_layer, nbytes = _truth(name)
    raw = dict(keys, model_type=mt) if source == "keys" else json.loads(hf.to_json_string())
    cfg, info = read_config(raw, name=name)
    assert cfg.params == params
    wl = reference_workload(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    tokens = PROMPT + 1
    assert per_layer == [BATCH * cfg.cached_tokens(k, tokens) * cfg.kv_elements_of(k) for k in cfg.attention_kinds]
    assert kv_cache_bytes(cfg, wl) == nbytes
    if source == "to_dict":
        assert info["unknown_keys"] == [], info["unknown_keys"]


def test_the_tiny_models_exercise_the_features():
    """The cases above are not vacuous: windows truncate, MLA caches a latent, experts are skipped or not."""
    cfgs = {n: read_config(dict(k, model_type=mt))[0] for n, (mt, k) in TINY.items()}
    assert cfgs["mistral"].layer_types == "SS" and cfgs["mistral"].sliding_window == 4 < PROMPT
    assert cfgs["gemma2"].layer_types == "SF" and cfgs["qwen2"].layer_types == "FS"
    assert cfgs["llama4_text"].layer_types == "CF" and cfgs["llama4_text"].moe_layers == "DM"
    assert cfgs["qwen2_moe"].moe_layers == "DM" and cfgs["qwen2_moe"].shared_expert_gate
    assert cfgs["qwen3_moe"].moe_layers == "DM"
    assert cfgs["deepseek_v3"].is_mla and cfgs["deepseek_v3"].kv_elements_per_token_layer == 32 + 8
    assert cfgs["falcon_new"].kv_cache_heads == 4 and cfgs["falcon_new"].kv_heads == 2
    assert cfgs["falcon"].kv_heads == 1 and cfgs["falcon"].parallel_block
    assert cfgs["gpt_oss"].attention_sinks and cfgs["gpt_oss"].router_bias
    assert cfgs["apertus"].activation_params == 2 and cfgs["apertus"].mlp == "plain" and cfgs["arcee"].mlp == "plain"
    assert cfgs["glm4"].norms_per_layer == 4 and cfgs["glm"].norms_per_layer == 2 and cfgs["glm4"].fused_gate_up
    assert cfgs["seed_oss"].qkv_bias and cfgs["seed_oss"].o_bias and cfgs["ernie4_5"].mlp_bias
    assert cfgs["minimax_m2"].qk_norm == "width" and cfgs["minimax_m2"].router_score_bias
    assert cfgs["dots1"].layer_types == "FS" and cfgs["dots1"].moe_layers == "DM" and cfgs["dots1"].shared_expert_ffn
    assert cfgs["mellum"].layer_types == "SF" and cfgs["mellum"].moe_layers == "DM" and cfgs["mellum"].qk_norm == "head"
    assert cfgs["nanochat"].qk_norm == "l2" and cfgs["nanochat"].mlp == "plain" and cfgs["nanochat"].norm_weights == 0
    assert cfgs["hyperclovax"].norms_per_layer == 4 and cfgs["hyperclovax_no_post_norm"].norms_per_layer == 2
    assert cfgs["flint"].attention_sinks and cfgs["flint"].moe_layers == "DM" and cfgs["flint"].layer_types == "FS"
    assert cfgs["axk1"].moe_layers == "DDM" and cfgs["axk1"].moe_norms == 1 and cfgs["axk1"].is_mla
    assert cfgs["beam"].layer_types == "SF" and cfgs["beam"].attn_gate_bias and cfgs["beam"].norms_per_layer == 4
    m3 = cfgs["minimax_m3_vl_text"]
    assert m3.layer_types == "FII" and m3.is_block_sparse and not m3.is_dsa and m3.moe_layers == "DMM"
    assert m3.index_block * m3.index_topk < PROMPT and m3.kv_elements_of("I") == m3.kv_elements_of("F") + 12
    assert cfgs["bitnet"].norms_per_layer == 3 and cfgs["bitnet"].ffn_norm and cfgs["bitnet"].qkv_bias
    assert cfgs["hy_v4"].layer_types == "IFI" and not cfgs["hy_v4"].hyper_mix and cfgs["hy_v4"].attn_gate == "element"
    assert cfgs["longcat_flash"].moe_layers == "MD" and cfgs["longcat_flash"].shared_expert_ffn == 96
    assert cfgs["ministral3"].layer_types == "SS" and cfgs["ministral3_full"].layer_types == ""
    assert cfgs["exaone_num_layers"].layers == 2 and cfgs["hunyuan_v1_dense"].qk_norm == "head"
    assert cfgs["deepseek_v32"].is_dsa and cfgs["deepseek_v32"].kv_elements_of("I") == 32 + 8 + 16
    assert cfgs["deepseek_v32"].index_topk == 4 < PROMPT and cfgs["deepseek_v32"].moe_layers == "DM"
    assert cfgs["deepseek_v32"].layer_types == "II" and cfgs["glm_moe_dsa"].layer_types == "IF"
    assert cfgs["glm_moe_dsa_freq"].layer_types == "IFIF"  # full where max(i - 1 + 1, 0) % 2 == 0
    assert cfgs["internlm3"].qkv_bias and cfgs["internlm3"].o_bias and cfgs["internlm3"].mlp_bias  # qkv_bias, bias
    assert cfgs["sarvam_moe"].qkv_bias and cfgs["sarvam_moe"].qk_norm == "head" and cfgs["sarvam_moe"].moe_layers == "DM"
    assert cfgs["sarvam_mla"].is_mla and cfgs["sarvam_mla"].experts == 4 and cfgs["sarvam_mla"].router_score_bias
    assert cfgs["helium"].qkv_bias and not cfgs["helium"].o_bias and cfgs["helium"].mlp_bias
    assert cfgs["cwm"].layer_types == "FS" and cfgs["cwm"].sliding_window == 4 < PROMPT
    assert cfgs["solar_open"].moe_layers == "" and cfgs["solar_open"].shared_expert_ffn == 32
    assert cfgs["youtu"].is_mla and not cfgs["youtu"].is_moe and cfgs["youtu"].tied_embeddings
    assert cfgs["hunyuan_v1_moe"].shared_expert_ffn == cfgs["hunyuan_v1_moe"].expert_ffn == 96
    assert cfgs["vaultgemma"].norms_per_layer == 2 and cfgs["vaultgemma"].layer_types == "SF"
    assert cfgs["granitemoeshared"].shared_expert_ffn == 48
    assert cfgs["exaone_moe"].layer_types == "SF" and cfgs["exaone_moe"].moe_layers == "DM"
    assert cfgs["exaone_moe_types"].moe_layers == "MD" and cfgs["exaone_moe_types"].shared_expert_ffn == 64
    assert cfgs["cohere2_moe"].moe_layers == "DM" and cfgs["cohere2_moe"].ffn == 80 != cfgs["cohere2_moe"].expert_ffn
    assert cfgs["cohere2_moe"].layer_types == "FS" and cfgs["cohere2_moe"].norm == "layer_weight"  # prefix pattern 1
    assert cfgs["cohere2_moe_rms"].norm == "rms" and cfgs["cohere2_moe_rms"].parallel_block
    assert cfgs["nemotron"].mlp == "plain" and cfgs["nemotron"].norm == "layer"
    assert cfgs["granite_swa"].attention_sinks and cfgs["granite_swa"].layer_types == "FS"
    assert cfgs["granitemoe_swa"].layer_types == "SF" and cfgs["granitemoe_swa"].shared_expert_ffn == 48
    assert cfgs["kolibri1"].layer_types == "SSSSF" and cfgs["kolibri1"].norms_per_layer == 4
    assert cfgs["afmoe"].layer_types == "SSF" and cfgs["afmoe"].attn_output_gate and cfgs["afmoe"].score_bias_param
    assert cfgs["afmoe"].moe_layers == "DMM" and cfgs["afmoe"].norms_per_layer == 4
    assert cfgs["hy_v3"].moe_layers == "DM" and cfgs["hy_v3_biases"].moe_layers == "MD"
    assert cfgs["hy_v3_biases"].mlp_bias and cfgs["hy_v3_biases"].shared_expert_ffn == 64
    assert cfgs["minicpm3"].is_mla and not cfgs["minicpm3"].is_moe and cfgs["minicpm3"].mlp_bias
    assert cfgs["minicpm3_no_qlora"].q_lora_rank == 0 and cfgs["minicpm3_no_qlora"].tied_embeddings
    assert cfgs["gptj"].parallel_block and cfgs["gptj"].lm_head_bias and not cfgs["gptj"].fused_qkv
    assert cfgs["codegen"].fused_qkv and cfgs["codegen"].ffn == 80 and cfgs["gptj"].ffn == 256
    assert cfgs["persimmon"].qk_norm == "head" and cfgs["persimmon"].norm == "layer"
    assert cfgs["stablelm"].qkv_bias and cfgs["stablelm_parallel"].parallel_block
    assert cfgs["gpt_neo"].layer_types == "" and cfgs["gpt_neo"].learned_positions == 64 and cfgs["gpt_neo"].o_bias
    assert cfgs["mpt"].alibi and cfgs["mpt"].fused_qkv and cfgs["mpt"].norm == "layer_weight" and cfgs["mpt"].ffn == 256
    assert any("local layers" in str(n) for n in read_config(dict(TINY["gpt_neo"][1], model_type="gpt_neo"))[1]["notes"])
    g4 = {n: read_config(dict(k, model_type=mt)) for n, (mt, k) in TINY.items() if n.startswith("gemma4")}
    assert all(c.layer_types == "SFF" and c.full_head_dim == 32 and any("last layer" in str(n) for n in i["notes"])
               for n, (c, i) in g4.items() if len(c.layer_types) == 3)  # transformers makes the last layer full
    assert g4["gemma4_text"][0].full_kv_heads == 1 and g4["gemma4_text"][0].full_k_eq_v
    assert g4["gemma4_text_plain_kv"][0].full_kv_heads == 0 and not g4["gemma4_text_plain_kv"][0].full_k_eq_v
    shared = g4["gemma4_text_kv_shared"][0]
    assert shared.layer_types == "SFsf" and shared.kv_shared_ffn == 192 and shared.per_layer_vocab == 160
    assert [shared.kv_elements_of(k) for k in "sf"] == [0, 0] and shared.attention_pattern()["kv_shared"] == 2
    unified = read_config(dict(TINY["gemma4_unified_text"][1], model_type="gemma4_unified_text"))[0]
    assert unified.layer_types == "SFsf" and unified.per_layer_input == 0 and unified.full_k_eq_v
    g3n, g3n_info = read_config(dict(TINY["gemma3n_text"][1], model_type="gemma3n_text"))
    assert g3n.layer_types == "SFsf" and (g3n.altup_inputs, g3n.laurel_rank, g3n.per_layer_input) == (3, 8, 8)
    assert any("activation sparsity" in str(n) for n in read_config(dict(
        TINY["gemma3n_text"][1], model_type="gemma3n_text", num_hidden_layers=12, layer_types=None,
        num_kv_shared_layers=4))[1]["notes"])  # its default: the first 10 of more than 10 layers sparse
    lag = {n: read_config(dict(k, model_type=mt))[0] for n, (mt, k) in TINY.items() if n.startswith("laguna")}
    assert lag["laguna"].attn_gate == "head" and lag["laguna"].layer_types == "SFS" and lag["laguna"].o_bias
    assert lag["laguna_per_element"].attn_gate == "element" and lag["laguna_per_element"].moe_layers == "MD"
    assert read_config(dict(TINY["jais2"][1], model_type="jais2"))[0].mlp == "plain"
    moe = g4["gemma4_text_moe"][0]
    assert moe.experts == 4 and moe.shared_expert_ffn == 96 and moe.router_scales and moe.moe_norms == 3
    q35 = {n: read_config(dict(k, model_type=mt))[0] for n, (mt, k) in HYBRID.items() if n.startswith("qwen3_5")}
    assert all(c.mixer.split_proj and c.layer_types == "LF" for c in q35.values())
    assert not q35["qwen3_5_text"].is_moe and q35["qwen3_5_moe_text"].shared_expert_gate
    lfm = {n: read_config(dict(k, model_type=mt))[0] for n, (mt, k) in HYBRID.items() if n.startswith("lfm2")}
    assert lfm["lfm2"].layer_types == "VFV" and lfm["lfm2"].ffn == 64  # 2/3 of 96, rounded up to 16
    assert lfm["lfm2_idxs"].layer_types == "VF" and lfm["lfm2_idxs"].ffn == 80 and lfm["lfm2_idxs"].mixer.conv_bias
    assert lfm["lfm2_moe"].moe_layers == "DMM" and lfm["lfm2_moe"].router_score_bias
    plain = read_config(dict(HYBRID["lfm2"][1], model_type="lfm2", layer_types=["full_attention"] * 3))[0]
    assert plain.mixer is None and plain.layer_types == ""  # LFM2's defaults: every layer attention
    lfm3 = {n: read_config(dict(k, model_type=mt))[0] for n, (mt, k) in HYBRID.items() if n.startswith("lfm3")}
    assert lfm3["lfm3"].layer_types == "VVFVS" and lfm3["lfm3"].attn_gate == "head" and lfm3["lfm3"].norms_per_layer == 4
    assert lfm3["lfm3_plain"].attn_gate == "" and lfm3["lfm3_plain"].norms_per_layer == 2
    bamba = read_config(dict(HYBRID["bamba"][1], model_type="bamba"))[0]
    assert bamba.layer_types == "2F2" and bamba.mixer.inner == 128 and bamba.mlp_bias
    latent = read_config(dict(HYBRID["nemotron_h_latent"][1], model_type="nemotron_h"))[0]
    assert latent.expert_width == 40 and latent.moe_layers == "-M-M" and latent.mlp_bias
    _, _, prefill, _, per_layer, _ = _truth("mistral")
    _, _, prefill_full, _, per_layer_full, _ = _truth("mistral_full")
    assert per_layer[0] < per_layer_full[0]  # the window truncated the cache


def test_gemma3_multimodal_wrapper_counts_the_text_decoder():
    torch.manual_seed(0)
    text = dict(B, head_dim=24, sliding_window=4, sliding_window_pattern=2)
    vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, image_size=28,
                  patch_size=14)
    hf = AutoConfig.for_model("gemma3", text_config=text, vision_config=vision, mm_tokens_per_image=4)
    model = AutoModelForCausalLM.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "gemma3" and cfg.family == "gemma3_text"
    text_params = sum(p.numel() for n, p in model.named_parameters() if ".language_model." in f".{n}")
    assert cfg.params == text_params  # the head is tied to the text embedding
    assert sum(info["vision"].values()) == sum(p.numel() for p in model.parameters()) - text_params  # tower + projector
    prefill, decode, per_layer, _ = _run(model, 128)
    wl = reference_workload(batch=BATCH, seq_len=PROMPT, new_tokens=1)
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    assert any("vision" in n for n in info["notes"])


@pytest.mark.parametrize("source", ["keys", "to_dict"])
def test_emu3_is_exact_and_names_its_image_tokenizer(source):
    """Emu3: the causal LM transformers builds from the wrapper's config is its decoder alone (Llama's block over a
    vocabulary that holds the VQ-VAE's image tokens): parameters, prefill and decode FLOPs and the cache exact; the
    VQ-VAE named and counted beside it."""
    keys = dict(text_config=dict(B, pad_token_id=1, bos_token_id=2, eos_token_id=3))
    hf, model = _build("emu3", keys)
    prefill, decode, cache = prefill_and_decode(model, torch.randint(0, B["vocab_size"], (BATCH, PROMPT)))
    per_layer, nbytes = _cache_nbytes(cache)
    raw = dict(keys, model_type="emu3") if source == "keys" else json.loads(hf.to_json_string())
    cfg, info = read_config(raw)
    assert info["wrapper"] == "emu3" and cfg.family == "emu3_text_model"
    assert cfg.params == sum(p.numel() for p in model.parameters())
    wl = reference_workload(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    assert per_layer == [BATCH * (PROMPT + 1) * cfg.kv_elements_of(k) for k in cfg.attention_kinds]
    assert kv_cache_bytes(cfg, wl) == nbytes
    if source == "to_dict":  # the file as transformers writes it: its VQ-VAE counted beside it, no key left unread
        assert any("projector (270,740,287 parameters)" in str(n) for n in info["notes"]) and not info["unknown_keys"]


def test_aria_wrapper_counts_its_decoder_and_reports_the_vision_tower():
    """Aria (the image-text-to-text wrapper): its aria_text decoder counted to the parameter (the model built on the
    meta device), the vision tower and its cross-attention projector reported beside it, equal to numel() of the rest
    (tiny, with its own query table, and at the class defaults)."""
    from transformers import AutoModelForImageTextToText

    text = dict(TINY["aria_text"][1], model_type="aria_text")
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, image_size=28,
                  patch_size=14)
    hf = AutoConfig.for_model("aria", text_config=text, vision_config=vision,
                              projector_patch_to_query_dict={"4": 8}, pad_token_id=None)
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "aria" and cfg.family == "aria_text"
    assert cfg.params == sum(p.numel() for n, p in model.named_parameters()
                             if ".language_model." in f".{n}" or n.startswith("lm_head"))
    assert sum(info["vision"].values()) == _outside_decoder(model)
    assert any("reported beside it" in str(n) for n in info["notes"])
    _wrapper_defaults_are_exact("aria")
    from gemmlib.core.errors import InputError

    with pytest.raises(InputError, match="projector_patch_to_query_dict"):
        read_config(dict(json.loads(hf.to_json_string()), projector_patch_to_query_dict=[4, 8]))


def _meta_params(raw: dict) -> int:
    return _meta_counts(raw)[0]


def _meta_counts(raw: dict, family: str | None = None) -> tuple[int, int]:
    """(decoder parameters, vision-tower parameters) of the model transformers builds from ``raw`` on the meta
    device. ``family``: the transformers model_type to build when the file's own is a remote-code name (Kimi K2's
    "kimi_k2" is DeepseekV3ForCausalLM)."""
    from transformers import AutoModelForImageTextToText

    raw = {k: v for k, v in raw.items() if k not in ("architectures", "auto_map", "torch_dtype", "dtype",
                                                     "transformers_version", "_name_or_path", "quantization_config",
                                                     "quantization")}
    mt = raw.pop("model_type")
    hf = AutoConfig.for_model(family or mt, **raw)
    with torch.device("meta"):
        try:  # a vision-language wrapper with its tower (Qwen3.5's also builds as a text-only causal LM)
            model = AutoModelForImageTextToText.from_config(hf) if "text_config" in raw else None
        except ValueError:
            model = None
        if model is None:
            model = AutoModelForCausalLM.from_config(hf)
    named = dict(model.named_parameters())
    if "text_config" not in raw:
        return sum(p.numel() for p in named.values()), 0
    text = sum(p.numel() for n, p in named.items() if ".language_model." in f".{n}" or n.startswith("lm_head"))
    return text, sum(p.numel() for p in named.values()) - text


_REAL = sorted(p for p in CONFIGS.glob("*.json") if not p.stem.startswith("internlm2"))  # internlm2: remote code


@pytest.mark.parametrize("path", _REAL, ids=lambda p: p.stem)
def test_full_size_params_equal_numel_on_the_meta_device(path):
    """Every real config.json: the decoder's parameters, and a vision-language wrapper's vision tower, equal
    numel() of what transformers builds from the file (a remote-code model_type built as the family its
    architectures field names)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    raw = json.loads(path.read_text())
    cfg, info = read_config(raw)
    family = None if raw["model_type"] in CONFIG_MAPPING_NAMES else cfg.family
    text, vision = _meta_counts(raw, family)
    assert cfg.params == text
    assert sum((info.get("vision") or {}).values()) == vision


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_equal_numel_on_the_meta_device(name):
    assert PRESETS[name].params == _meta_params(dict(_PRESET_SOURCES[name][1]))


@pytest.mark.parametrize("name, prompt, steps", [("mistral", 2, 4), ("gemma2", 2, 4), ("deepseek_v3", 3, 2),
                                                  ("falcon_new", 2, 2)])
def test_several_decode_steps_across_the_window(name, prompt, steps):
    """Decode steps from a short prompt: a sliding layer's keys grow until the cache holds window − 1
    tokens (here 2, 3 then 3 cached of a window of 4), then stay; full and MLA layers keep growing."""
    mt, keys = TINY[name]
    hf, model = _build(mt, keys)
    cfg, _ = read_config(dict(keys, model_type=mt))
    ids = torch.randint(0, hf.vocab_size, (BATCH, prompt))
    with torch.no_grad():
        out = model(ids, use_cache=True)
        with FlopCounterMode(display=False) as fc:
            for _ in range(steps):
                out = model(ids[:, :1], cache=out.cache, use_cache=True)
    wl = reference_workload(batch=BATCH, seq_len=prompt, new_tokens=steps)
    assert sum(o.flops for o in decode_ops(cfg, wl)) == fc.get_total_flops()


def test_absorbed_mla_equals_eager_mla_and_its_flops_are_counted():
    """The absorbed form serving engines run (W_UK folded into the query, W_UV into the output, every head
    against the shared latent) gives the eager layer's output, and FlopCounterMode on that computation
    equals the estimator's absorbed decode of one layer's attention."""
    torch.manual_seed(0)
    keys = dict(B, num_hidden_layers=1, q_lora_rank=40, n_shared_experts=1, n_group=2, topk_group=1,
                num_nextn_predict_layers=0, rope_interleave=False, **MLA, **MOE)
    hf = AutoConfig.for_model("deepseek_v3", **keys)
    model = AutoModelForCausalLM.from_config(hf, attn_implementation="eager").eval().double()
    att = model.model.layers[0].self_attn
    seen = []
    hook = att.register_forward_hook(lambda m, a, kw, out: seen.append((kw["hidden_states"], out[0],
                                                                         kw["position_embeddings"])),
                                     with_kwargs=True)
    ids = torch.randint(0, 128, (BATCH, 6))
    with torch.no_grad():
        out = model(ids, use_cache=True)
        model(ids[:, :1], cache=out.cache, use_cache=True)
    hook.remove()
    x, y_eager, (cos, sin) = seen[1]
    c_kv, k_pe = out.cache.layers[0].keys, out.cache.layers[0].values  # the latent and the rotary key, 7 tokens
    h, dn, dr, dv, r = 4, 16, 8, 12, 32
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import apply_rotary_pos_emb

    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        q = att.q_b_proj(att.q_a_layernorm(att.q_a_proj(x))).view(BATCH, 1, h, dn + dr).transpose(1, 2)
        att.kv_a_proj_with_mqa(x)  # the new token's latent (already in c_kv: the cache was updated)
        q_nope, q_pe = q[..., :dn], q[..., dn:]
        q_pe, _ = apply_rotary_pos_emb(q_pe, q_pe, cos, sin)
        w = att.kv_b_proj.weight.view(h, dn + dv, r)
        q_lat = torch.einsum("bhqd,hdr->bhqr", q_nope, w[:, :dn])
        scores = (torch.matmul(q_lat, c_kv.transpose(-1, -2)) + torch.matmul(q_pe, k_pe.transpose(-1, -2)))
        o_lat = torch.matmul((scores * att.scaling).softmax(-1), c_kv)
        o = torch.einsum("bhqr,hvr->bhqv", o_lat, w[:, dn:])
        y = att.o_proj(o.transpose(1, 2).reshape(BATCH, 1, h * dv))
    assert (y - y_eager).abs().max() < 1e-7 * y_eager.abs().max()  # float64; the rest is fp32 RMSNorm rounding
    cfg, _ = read_config(dict(keys, model_type="deepseek_v3"))
    wl = reference_workload(batch=BATCH, seq_len=6, new_tokens=1, mla="absorbed")
    attention = ("q_a_proj", "q_b_proj", "kv_a_proj", "q_absorb", "attn_scores", "attn_values", "o_absorb", "o_proj")
    ops = decode_ops(cfg, wl)
    assert {o.name for o in ops} >= set(attention) and "kv_b_proj" not in {o.name for o in ops}
    assert sum(o.flops for o in ops if o.name in attention) == fc.get_total_flops()
    eager = decode_ops(cfg, reference_workload(batch=BATCH, seq_len=6, new_tokens=1))
    assert sum(o.flops for o in eager) > sum(o.flops for o in ops)


_H35 = dict(B, head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
            linear_value_head_dim=12, linear_conv_kernel_dim=4, pad_token_id=None)
_VL_VISION = dict(depth=2, hidden_size=32, intermediate_size=48, num_heads=2, out_hidden_size=64, patch_size=4,
                  temporal_patch_size=2, spatial_merge_size=2, num_position_embeddings=16, deepstack_visual_indexes=[0])
_MROPE = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}  # head_dim 16: 8 frequencies
_GLM_MROPE = dict(_MROPE, mrope_section=[1, 1, 2], partial_rotary_factor=0.5)
VL: dict[str, tuple[dict, dict]] = {
    # Qwen2-VL and Qwen2.5-VL: Qwen2's decoder (M-RoPE), their own towers
    "qwen2_vl": (dict(B, rope_parameters=_MROPE), {}),
    "qwen2_5_vl": (dict(B, rope_parameters=_MROPE, use_sliding_window=True, sliding_window=4, max_window_layers=1), {}),
    "qwen2_5_vl_tied": (dict(B, rope_parameters=_MROPE), dict(tie_word_embeddings=True)),
    # GLM-4.1V (and 4.6V's wrapper): GLM-4-0414's block; GLM-4.5V: GLM-4.5's MoE; M-RoPE on half of each head
    "glm4v": (dict(B, head_dim=16, pad_token_id=None, rope_parameters=_GLM_MROPE), {}),
    "glm46v": (dict(B, head_dim=16, pad_token_id=None, rope_parameters=_GLM_MROPE), dict(tie_word_embeddings=True)),
    "glm4v_moe": (dict(B, head_dim=16, n_routed_experts=4, moe_intermediate_size=32, n_shared_experts=1,
                       first_k_dense_replace=1, n_group=1, topk_group=1, pad_token_id=None,
                       rope_parameters=_GLM_MROPE, **MOE), {}),
    "qwen3_vl": (dict(B, head_dim=24), {}),
    "qwen3_vl_tied": (dict(B, head_dim=24), dict(tie_word_embeddings=True)),
    "qwen3_vl_moe": (dict(B, head_dim=24, num_experts=4, moe_intermediate_size=32, decoder_sparse_step=2, **MOE), {}),
    # Qwen3.5: the hybrid decoders under the same tower without its DeepStack mergers
    "qwen3_5": (dict(_H35, layer_types=["linear_attention", "full_attention"]), {}),
    "qwen3_5_moe": (dict(_H35, num_experts=4, moe_intermediate_size=32, shared_expert_intermediate_size=48,
                         full_attention_interval=2, **MOE), {}),
}


def test_apertus1p5_wrapper_counts_its_decoder_and_names_its_tokenizers():
    """Apertus 1.5 (apertus1p5): the decoder of its text_config with the pruned LM head, the top-level tie flag; its
    image tokenizer counted beside it, its audio tokenizer (run once per clip) named and not counted."""
    from transformers import AutoModelForImageTextToText

    text = dict(B, output_vocab_size=131072)
    text.pop("vocab_size")  # the wrapper checks its image and audio codes lie inside the (default) vocabulary
    hf = AutoConfig.for_model("apertus1p5", text_config=text)
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    cfg, info = read_config(json.loads(hf.to_json_string()))
    named = dict(model.named_parameters())
    assert cfg.params == sum(p.numel() for n, p in named.items() if ".language_model." in f".{n}" or n.startswith("lm_head"))
    assert cfg.head_vocab == 131072 < cfg.vocab and not cfg.tied_embeddings and not info["unknown_keys"]
    assert any("audio tower" in str(n) for n in info["notes"]) and any("not" in str(n) for n in info["notes"])


def test_north_wrapper_counts_its_decoder_and_its_qwen3_vl_tower():
    """North (cohere_compass): Cohere 2's decoder under Qwen3-VL's wrapper; the decoder's parameters with the top-level
    tie flag (False by default: an LM head of its own), the vision tower reported exactly as Qwen3-VL's."""
    from transformers import AutoModelForImageTextToText

    text = dict(B, rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1e4}})
    vision = dict(depth=2, hidden_size=32, intermediate_size=48, num_heads=2, out_hidden_size=64, patch_size=8,
                  spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=16, deepstack_visual_indexes=[0])
    for top in ({}, {"tie_word_embeddings": True}):
        hf = AutoConfig.for_model("cohere_compass", text_config=text, vision_config=vision, **top)
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(hf)
        cfg, info = read_config(json.loads(hf.to_json_string()))
        named = dict(model.named_parameters())
        text_params = sum(p.numel() for n, p in named.items() if ".language_model." in f".{n}" or n.startswith("lm_head"))
        assert cfg.params == text_params and cfg.tied_embeddings == bool(top) and not info["unknown_keys"]
        assert sum(info["vision"].values()) == sum(p.numel() for p in model.parameters()) - text_params


@pytest.mark.parametrize("top", [{}, dict(tie_word_embeddings=True, projector_hidden_size=40)])
def test_minimax_m3_wrapper_counts_its_decoder_and_reports_its_vision_tower(top):
    """MiniMax-M3's image-text model: its text_config's decoder exact to the parameter and the FLOP (block-sparse
    layers included), tied when the top-level config says so; the vision tower and projector reported apart, equal to
    numel() of everything outside the language model and the head."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    mt, text = TINY["minimax_m3_vl_text"]
    vision = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=2, patch_size=4)
    hf = AutoConfig.for_model("minimax_m3_vl", text_config=copy.deepcopy(text), vision_config=vision, **top)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "minimax_m3_vl" and cfg.family == mt and not info["unknown_keys"], info["unknown_keys"]
    named = dict(model.named_parameters())
    text_params = sum(p.numel() for n, p in named.items() if ".language_model." in f".{n}" or n.startswith("lm_head"))
    assert cfg.params == text_params and cfg.tied_embeddings == bool(top)
    assert sum(info["vision"].values()) == sum(p.numel() for p in named.values()) - text_params
    prefill, decode, per_layer, _ = _run(model, 128)
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert (sum(o.flops for o in prefill_ops(cfg, wl)), sum(o.flops for o in decode_ops(cfg, wl))) == (prefill, decode)
    assert per_layer == [BATCH * cfg.cached_tokens(k, PROMPT + 1) * cfg.kv_elements_of(k) for k in cfg.attention_kinds]


_MLLAMA_TEXT = dict(B, num_hidden_layers=3, cross_attention_layers=[1], pad_token_id=None, bos_token_id=0, eos_token_id=1)
_MLLAMA_VISION = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_global_layers=1, attention_heads=2,
                      image_size=28, patch_size=14, vision_output_dim=64, intermediate_layers_indices=[0],
                      supported_aspect_ratios=[[1, 1], [1, 2]], max_num_tiles=2)


@pytest.mark.parametrize("source", ["keys", "to_dict"])
def test_mllama_counts_its_cross_attention_layers_and_runs_none_on_text(source):
    """Llama 3.2 Vision's decoder (MllamaForCausalLM, what transformers runs on text): a cross-attention layer between
    two self-attention ones, its weights counted (the checkpoint's too), its attention and MLP skipped on a text prompt
    (no FLOP, no cache: FlopCounterMode and the returned cache), the embedding 8 rows wider than the LM head."""
    torch.manual_seed(0)
    hf = AutoConfig.for_model("mllama", text_config=copy.deepcopy(_MLLAMA_TEXT), vision_config=_MLLAMA_VISION)
    model = AutoModelForCausalLM.from_config(hf, attn_implementation="eager").eval()
    raw = dict(_MLLAMA_TEXT, model_type="mllama_text_model") if source == "keys" else json.loads(hf.to_json_string())
    cfg, info = read_config(raw)
    assert cfg.layer_types == "FXF" and cfg.mlp_kinds == "D-D" and (cfg.vocab, cfg.head_vocab) == (136, 128)
    assert cfg.params == sum(p.numel() for p in model.parameters()) == checkpoint_size(cfg, "fp32").elements
    assert not info["unknown_keys"] and any("cross-attention layers" in str(n) for n in info["notes"])
    prefill, decode, per_layer, nbytes = _run(model, 128)
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert (sum(o.flops for o in prefill_ops(cfg, wl)), sum(o.flops for o in decode_ops(cfg, wl))) == (prefill, decode)
    assert per_layer == [BATCH * cfg.cached_tokens(k, PROMPT + 1) * cfg.kv_elements_of(k) for k in cfg.attention_kinds]
    assert per_layer[1] == 0 and kv_cache_bytes(cfg, wl) == nbytes


def test_a_cross_attention_layer_is_read_only_as_llama_3_2_vision_builds_it():
    from gemmlib.core.errors import InputError
    from gemmlib.llm.config import ModelConfig

    base = dict(layers=3, hidden=64, heads=4, kv_heads=2, ffn=96, vocab=128, layer_types="FXF")
    assert ModelConfig(**base, moe_layers="D-D").param_breakdown()["cross_attention"] > 0
    with pytest.raises(InputError, match="carries its own MLP"):
        ModelConfig(**base, moe_layers="DDD")
    with pytest.raises(InputError, match="plain grouped-query attention only"):
        ModelConfig(**dict(base, heads=4, kv_heads=4), moe_layers="D-D", kv_lora_rank=32, rope_head_dim=8)
    with pytest.raises(InputError, match="every layer is a cross-attention layer"):
        read_config(dict(_MLLAMA_TEXT, model_type="mllama_text_model", cross_attention_layers=[0, 1, 2]))
    with pytest.raises(InputError, match="outside 0 … 2"):
        read_config(dict(_MLLAMA_TEXT, model_type="mllama_text_model", cross_attention_layers=[3]))


@pytest.mark.parametrize("text, vision, card", [
    (_MLLAMA_TEXT, _MLLAMA_VISION, None),
    ({}, {}, "10.6"),  # the config classes' defaults: Llama 3.2 11B Vision (its card: 10.6 B parameters)
    (dict(hidden_size=8192, intermediate_size=28672, num_attention_heads=64, num_hidden_layers=100,
          cross_attention_layers=list(range(3, 100, 5))), {}, "88.6"),  # Llama 3.2 90B Vision's card: 88.6 B
])
def test_mllama_vision_tower_is_reported_exactly(text, vision, card):
    """The decoder counted, the vision tower (its local and gated global encoders, tile and position embeddings) and
    projector reported apart, each equal to numel() of what transformers builds on the meta device; the two releases'
    totals come to their cards'."""
    from transformers import AutoModelForImageTextToText

    hf = AutoConfig.for_model("mllama", text_config=copy.deepcopy(text), vision_config=copy.deepcopy(vision))
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "mllama" and not info["unknown_keys"], info["unknown_keys"]
    named = dict(model.named_parameters())
    text_params = sum(p.numel() for n, p in named.items() if ".language_model." in f".{n}" or n.startswith("lm_head"))
    tower = sum(info["vision"].values())
    assert cfg.params == text_params and tower == sum(p.numel() for p in named.values()) - text_params
    if card:
        assert f"{(cfg.params + tower) / 1e9:.1f}" == card


def test_mistral3_vision_tower_is_reported_exactly():
    from transformers import AutoModelForImageTextToText

    vision = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=2, image_size=64,
                  patch_size=8, head_dim=16)
    for text_type, top in ((None, {}), (None, dict(multimodal_projector_bias=True, vision_feature_layer=[-1, -2])),
                           ("ministral3", {})):  # Mistral 3's own checkpoints: a ministral3 decoder
        text = dict(B, head_dim=16, sliding_window=None, **({"model_type": text_type} if text_type else {}))
        hf = AutoConfig.for_model("mistral3", text_config=text, vision_config=vision, **top)
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(hf)
        cfg, info = read_config(json.loads(hf.to_json_string()))
        assert cfg.family == (text_type or "mistral")
        named = dict(model.named_parameters())
        text_params = sum(p.numel() for n, p in named.items() if ".language_model." in f".{n}" or n.startswith("lm_head"))
        assert cfg.params == text_params
        assert sum(info["vision"].values()) == sum(p.numel() for p in named.values()) - text_params


@pytest.mark.parametrize("name", list(VL))
def test_vision_language_wrappers_count_the_decoder_and_report_the_vision_tower(name):
    """Qwen2-VL, Qwen2.5-VL, GLM-4.1V / 4.5V / 4.6V, Qwen3-VL (dense and MoE), Qwen3.5: the text decoder exact to the FLOP and the parameter, the vision tower's
    parameters reported apart and equal to numel() of everything outside the language model and the head."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    text, top = VL[name]
    mt = name.removesuffix("_tied")
    vision_cfg = {k: v for k, v in _VL_VISION.items() if k != "deepstack_visual_indexes" or "qwen3_5" not in mt}
    if mt.startswith("glm4"):
        vision_cfg = dict(depth=2, hidden_size=32, num_heads=2, out_hidden_size=64, intermediate_size=40, patch_size=4,
                          image_size=32)
    if mt.startswith("qwen2"):  # Qwen2-VL's tower is sized by embed_dim and mlp_ratio, hidden_size is its output
        vision_cfg = dict(depth=2, embed_dim=32, mlp_ratio=3, num_heads=2, hidden_size=64, patch_size=4) \
            if mt == "qwen2_vl" else dict(depth=2, hidden_size=32, intermediate_size=48, num_heads=2,
                                          out_hidden_size=64, patch_size=4, fullatt_block_indexes=[1])
    hf = AutoConfig.for_model(mt, text_config=text, vision_config=vision_cfg, **top)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == mt and info["unknown_keys"] == [], info["unknown_keys"]
    named = dict(model.named_parameters())
    text_params = sum(p.numel() for n, p in named.items() if ".language_model." in f".{n}" or n.startswith("lm_head"))
    assert cfg.params == text_params
    assert cfg.tied_embeddings == bool(top.get("tie_word_embeddings"))
    vision = sum(p.numel() for n, p in named.items() if ".visual." in f".{n}")
    assert vision == sum(p.numel() for p in model.parameters()) - text_params
    assert sum(info["vision"].values()) == vision
    prefill, decode, per_layer, _ = _run(model, 128)
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1)
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    state = cfg.mixer.state_elements(engine=False) if cfg.mixer else 0
    assert per_layer == [BATCH * (cfg.cached_tokens(k, PROMPT + 1) * cfg.kv_elements_of(k)
                                  + (state if k in "LM2P" else 0)) for k in cfg.attention_kinds]


def test_the_family_tables_follow_transformers():
    """The architectures field's classes and the list of known model types are transformers 5.24's own."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
    )

    from gemmlib.llm.families_known import NOT_SIZED, TRANSFORMERS_MODEL_TYPES
    from gemmlib.llm.hf import ARCHITECTURES, SUPPORTED_MODEL_TYPES

    assert TRANSFORMERS_MODEL_TYPES == frozenset(CONFIG_MAPPING_NAMES)
    assert set(NOT_SIZED) <= TRANSFORMERS_MODEL_TYPES and not set(NOT_SIZED) & set(SUPPORTED_MODEL_TYPES)
    for cls, family in ARCHITECTURES.items():
        assert cls in (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(family), MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES.get(family))
    # internlm2: remote code; the rest that no class names are config classes transformers builds with another
    # family's model (EXAONE 3.x, InternLM3 and IQuest-Coder with Llama's, Sarvam's with GLM-4.5's and DeepSeek-V3's)
    # (mllama_text_model: transformers files its causal LM, MllamaForCausalLM, under the wrapper's model_type)
    assert MODEL_FOR_CAUSAL_LM_MAPPING_NAMES["mllama"] == "MllamaForCausalLM"
    borrowed = set(SUPPORTED_MODEL_TYPES) - set(ARCHITECTURES.values()) - {"internlm2", "mllama_text_model"}
    assert borrowed == {"exaone", "internlm3", "iquestcoder", "sarvam_moe", "sarvam_mla"}
    for family in borrowed:
        cls = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[family]
        assert ARCHITECTURES[cls] != family, (family, cls)


# ----- hybrid families: linear attention and state-space mixers (gemmlib.llm.ssm) -------------------------------

_H = dict(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2, vocab_size=128,
          max_position_embeddings=64)
HYBRID: dict[str, tuple[str, dict]] = {
    # Kimi Linear: Kimi delta attention beside MLA (a query projection, no query latent), a dense first layer, then
    # DeepSeek-V3's mixture with a shared expert
    "kimi_linear": ("kimi_linear", dict(_H, num_hidden_layers=2, num_key_value_heads=4, linear_num_heads=2,
                                        linear_head_dim=16,
                                        linear_conv_kernel_dim=4, kv_lora_rank=32, qk_nope_head_dim=16,
                                        qk_rope_head_dim=8, v_head_dim=12, num_local_experts=4, num_experts_per_tok=2,
                                        moe_intermediate_size=32, layer_types=["linear_attention", "full_attention"],
                                        mlp_layer_types=["dense", "sparse"], pad_token_id=None, bos_token_id=None,
                                        eos_token_id=None)),
    # Ling's hybrid: KDA with full-rank gates, an MLA layer, a dense first layer
    "bailing_hybrid": ("bailing_hybrid", dict(_H, num_hidden_layers=2, num_key_value_heads=4, head_dim=16,
                                              short_conv_kernel_size=4, kv_lora_rank=32, qk_nope_head_dim=16,
                                              qk_rope_head_dim=8, v_head_dim=12, num_experts=4, num_experts_per_token=2,
                                              moe_intermediate_size=32, layer_group_size=2, first_k_dense_replace=1,
                                              n_group=1, topk_group=1, pad_token_id=None, eos_token_id=None)),
    # MiniMax: lightning attention (blocks of 4, so a 7-token prompt spans two) beside softmax attention, Mixtral's MoE
    "minimax": ("minimax", dict(_H, num_hidden_layers=2, head_dim=16, num_local_experts=4, num_experts_per_tok=2,
                                block_size=4, layer_types=["linear_attention", "full_attention"])),
    "minimax_sliding": ("minimax", dict(_H, num_hidden_layers=2, num_local_experts=4, num_experts_per_tok=2,
                                        block_size=4, sliding_window=4)),
    # Lara Mini: DeltaNet, sliding and NoPE full layers, every layer a MoE with an ungated shared expert
    "lara_mini": ("lara_mini", dict({k: v for k, v in _H.items() if k != "intermediate_size"}, num_hidden_layers=3,
                                    head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4,
                                    linear_key_head_dim=8, linear_value_head_dim=12, linear_conv_kernel_dim=4,
                                    num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                                    shared_expert_intermediate_size=48, sliding_window=4, attention_bias=True,
                                    layer_types=["linear_attention", "sliding_attention", "full_attention"],
                                    pad_token_id=None)),
    # OLMo Hybrid: its DeltaNet's linears stored apart, OLMo 3's attention (q/k norms over the whole width) with
    # rotary positions, then without (the released checkpoint's null rope_theta) and with biased projections
    "olmo_hybrid": ("olmo_hybrid", dict(_H, num_hidden_layers=3, linear_num_key_heads=2, linear_num_value_heads=4,
                                        linear_key_head_dim=8, linear_value_head_dim=12,
                                        layer_types=["linear_attention", "full_attention", "linear_attention"],
                                        pad_token_id=None, eos_token_id=None)),
    "olmo_hybrid_nope": ("olmo_hybrid", dict(_H, num_hidden_layers=4, head_dim=8, attention_bias=True,
                                             rope_parameters={"rope_type": "default", "rope_theta": None},
                                             pad_token_id=None, eos_token_id=None)),
    "qwen3_next": ("qwen3_next", dict(_H, num_hidden_layers=2, head_dim=16, linear_num_key_heads=2,
                                      linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=12,
                                      linear_conv_kernel_dim=4, num_experts=4, num_experts_per_tok=2,
                                      moe_intermediate_size=32, shared_expert_intermediate_size=48,
                                      full_attention_interval=2)),
    "jamba": ("jamba", dict(_H, num_hidden_layers=2, attn_layer_period=2, attn_layer_offset=1, expert_layer_period=2,
                            expert_layer_offset=1, num_experts=4, num_experts_per_tok=2, mamba_d_state=8,
                            mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=6, pad_token_id=None)),
    "nemotron_h": ("nemotron_h", dict(_H, layers_block_type=["mamba", "attention", "mlp"], head_dim=16,
                                      ssm_state_size=8, mamba_num_heads=4, mamba_head_dim=16, n_groups=2,
                                      conv_kernel=4, chunk_size=4, pad_token_id=None)),
    "nemotron_h_moe": ("nemotron_h", dict(_H, layers_block_type=["mamba", "moe", "attention", "mlp"], head_dim=16,
                                          ssm_state_size=8, mamba_num_heads=4, mamba_head_dim=16, n_groups=2,
                                          conv_kernel=4, chunk_size=4, n_routed_experts=4, num_experts_per_tok=2,
                                          moe_intermediate_size=32, moe_shared_expert_intermediate_size=24,
                                          pad_token_id=None)),
    # Nemotron 3's latent experts: the hidden state projected to moe_latent_size before them and back after (biased)
    "nemotron_h_latent": ("nemotron_h", dict(_H, layers_block_type=["mamba", "moe", "attention", "moe"], head_dim=16,
                                             ssm_state_size=8, mamba_num_heads=4, mamba_head_dim=16, n_groups=2,
                                             conv_kernel=4, chunk_size=4, n_routed_experts=4, num_experts_per_tok=2,
                                             moe_intermediate_size=32, moe_shared_expert_intermediate_size=24,
                                             moe_latent_size=40, mlp_bias=True, pad_token_id=None)),
    "qwen3_5_text": ("qwen3_5_text", dict(_H, num_hidden_layers=2, head_dim=16, linear_num_key_heads=2,
                                          linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=12,
                                          linear_conv_kernel_dim=4, layer_types=["linear_attention", "full_attention"],
                                          pad_token_id=None)),
    "qwen3_5_moe_text": ("qwen3_5_moe_text", dict(_H, num_hidden_layers=2, head_dim=16, linear_num_key_heads=2,
                                                  linear_num_value_heads=4, linear_key_head_dim=8,
                                                  linear_value_head_dim=12, linear_conv_kernel_dim=4, num_experts=4,
                                                  num_experts_per_tok=2, moe_intermediate_size=32,
                                                  shared_expert_intermediate_size=48, full_attention_interval=2,
                                                  pad_token_id=None)),
    "granitemoehybrid": ("granitemoehybrid", dict(_H, num_hidden_layers=2, layer_types=["mamba", "attention"],
                                                  num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=48,
                                                  mamba_n_heads=4, mamba_n_groups=2, mamba_d_state=8, mamba_d_conv=4,
                                                  mamba_chunk_size=4, attention_bias=True, pad_token_id=None)),
    "granitemoehybrid_dense": ("granitemoehybrid", dict(_H, num_hidden_layers=2, num_local_experts=0,
                                                        layer_types=["attention", "mamba"], shared_intermediate_size=48,
                                                        mamba_n_heads=4, mamba_d_state=8, mamba_chunk_size=4,
                                                        position_embedding_type="rope", pad_token_id=None)),
    "lfm2": ("lfm2", dict(_H, num_hidden_layers=3, layer_types=["conv", "full_attention", "conv"], conv_L_cache=3,
                          block_multiple_of=16, pad_token_id=None)),
    "lfm2_idxs": ("lfm2", dict(_H, num_hidden_layers=2, full_attn_idxs=[1], conv_bias=True, block_ff_dim=80,
                               block_auto_adjust_ff_dim=False, pad_token_id=None)),
    "lfm2_moe": ("lfm2_moe", dict(_H, num_hidden_layers=3, layer_types=["conv", "full_attention", "conv"],
                                  moe_intermediate_size=32, num_dense_layers=1, num_experts=4, num_experts_per_tok=2,
                                  pad_token_id=None)),
    "lfm3": ("lfm3", dict(_H, num_hidden_layers=5, head_dim=16, sliding_window=4, conv_L_cache=3, pad_token_id=None,
                          bos_token_id=None, eos_token_id=None)),  # its default layers: conv, conv, full, conv, sliding
    "lfm3_plain": ("lfm3", dict(_H, num_hidden_layers=2, layer_types=["conv", "full_attention"], conv_bias=True,
                                use_attention_gate=False, use_sandwich_norm=False, pad_token_id=None, bos_token_id=None,
                                eos_token_id=None)),
    "bamba": ("bamba", dict(_H, num_hidden_layers=3, attn_layer_indices=[1], mamba_n_heads=4, mamba_d_head=32,
                            mamba_n_groups=2, mamba_d_state=8, mamba_d_conv=4, mamba_chunk_size=4, attention_bias=True,
                            mlp_bias=True, pad_token_id=None)),
    # the pure state-space models: every block a norm and a mixer, no attention and no MLP
    "mamba": ("mamba", dict(hidden_size=64, num_hidden_layers=2, vocab_size=128, state_size=8, conv_kernel=4,
                            pad_token_id=None)),
    "falcon_mamba": ("falcon_mamba", dict(hidden_size=64, num_hidden_layers=2, vocab_size=128, state_size=8,
                                          expand=16, intermediate_size=96, time_step_rank=8, use_bias=True,
                                          tie_word_embeddings=False, pad_token_id=None)),
    "mamba2": ("mamba2", dict(hidden_size=64, num_hidden_layers=2, vocab_size=128, num_heads=4, head_dim=32,
                              n_groups=2, state_size=8, conv_kernel=4, chunk_size=4, pad_token_id=None)),
    "falcon_h1": ("falcon_h1", dict(_H, num_hidden_layers=2, head_dim=16, mamba_d_ssm=64, mamba_n_heads=4,
                                    mamba_n_groups=2, mamba_d_state=8, mamba_d_conv=4, mamba_chunk_size=4,
                                    mamba_rms_norm=True, pad_token_id=None)),
}


_reference = reference_workload  # the hybrid and VL cases too: the reference convention (transformers' eager code)


def _cache_nbytes(cache) -> tuple[list[int], int]:
    """(elements per layer, bytes) of a returned cache: K and V of attention layers, conv + recurrent states of
    the linear-attention / state-space layers."""
    per, nbytes = [], 0
    linear = getattr(cache, "linear_cache", [])  # MiniMax: the lightning layers' states, by layer index
    for i in range(max(len(cache.layers), len(linear))):
        layer = cache.layers[i] if i < len(cache.layers) else None
        tensors = [getattr(layer, "keys", None), getattr(layer, "values", None),
                   getattr(layer, "indexer_keys", None),  # DeepSeek Sparse Attention's indexer keys
                   getattr(layer, "indexer_position_ids", None),  # Qwen4-Exp's (its first indexed layer keeps them)
                   getattr(layer, "idx_keys", None)]  # MiniMax-M3's
        for d in ("conv_states", "recurrent_states"):
            tensors += list(getattr(layer, d, {}).values())
        tensors += [linear[i]] if i < len(linear) else []
        tensors = [t for t in tensors if isinstance(t, torch.Tensor)]
        per.append(sum(int(t.numel()) for t in tensors))
        nbytes += sum(int(t.nbytes) for t in tensors)
    return per, nbytes


@pytest.mark.parametrize("source", ["keys", "to_dict"])
@pytest.mark.parametrize("name", list(HYBRID))
def test_hybrid_model_is_exact(name, source):
    """A 2–4 layer hybrid from transformers' own class (the PyTorch paths: no fla / mamba_ssm kernels are
    installed): parameters to the parameter, prefill and decode to the FLOP (matmuls and the convolution,
    FlopCounterMode), and the cache — KV of the attention layers, conv + recurrent state of the others — to the
    element and the byte."""
    mt, keys = HYBRID[name]
    hf, model = _build(mt, keys)
    params = sum(p.numel() for p in model.parameters())
    raw = dict(keys, model_type=mt) if source == "keys" else json.loads(hf.to_json_string())
    cfg, info = read_config(raw, name=name)
    assert cfg.is_hybrid and cfg.params == params
    prefill, decode, cache = prefill_and_decode(model, torch.randint(0, hf.vocab_size, (BATCH, PROMPT)))
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    per_layer, nbytes = _cache_nbytes(cache)
    mixer = cfg.mixer.state_elements(engine=False)
    assert per_layer == [BATCH * (cfg.cached_tokens(k, PROMPT + 1) * cfg.kv_elements_of(k)
                                  + (mixer if k in MIXER_LETTERS else 0)) for k in cfg.attention_kinds]
    assert kv_cache_bytes(cfg, wl) == nbytes
    if source == "to_dict":
        assert info["unknown_keys"] == [], info["unknown_keys"]


def test_the_engine_convention_of_each_mixer_counts_what_the_kernels_run():
    """The engine convention (gemmlib.llm.ssm) against the reference one on the same layer: the convolution over
    exactly the new tokens, conv state k − 1 inputs, FLA's extra W/U products and triangular inverse, Mamba's
    scan and Mamba-2's decode fused (no GEMM), Mamba-2's C·Bᵀ per group."""
    from gemmlib.llm.ssm import DELTA_CHUNK, work

    for mt, keys in HYBRID.values():
        cfg = read_config(dict(keys, model_type=mt))[0]
        mx, h = cfg.mixer, cfg.hidden
        if not mx.conv_channels:  # MiniMax's lightning attention: no convolution; an engine runs the same blocks
            for decode, t in ((False, PROMPT), (True, 1)):
                ref, eng = (sum(w.flops for w in work(mx, h, batch=BATCH, tokens=t, runs=1, decode=decode, engine=e)
                                if w.kind == "gemm") for e in (False, True))
                assert ref == eng > 0
            continue
        assert cfg.mixer.conv_state(engine=True) == mx.conv_channels * (mx.conv - 1)
        for decode, t in ((False, PROMPT), (True, 1)):
            ref = {w.name: w for w in work(mx, h, batch=BATCH, tokens=t, runs=1, decode=decode, engine=False)}
            eng = {w.name: w for w in work(mx, h, batch=BATCH, tokens=t, runs=1, decode=decode, engine=True)}
            assert eng["conv1d"].flops == 2 * BATCH * t * mx.conv * mx.conv_channels < ref["conv1d"].flops
            for proj in ("in_proj", "in_proj_qkvz", "out_proj", "x_proj"):
                if proj in ref:
                    assert eng[proj].flops == ref[proj].flops  # the projections are the same GEMMs
            if mx.kind == "gated_deltanet" and not decode:
                c, dk, dv = DELTA_CHUNK, mx.key_dim, mx.head_dim
                extra = BATCH * mx.heads * (2 * c * c * (dk + dv) + 2 * c ** 3 // 3)  # one chunk per sequence
                assert eng["ssm_chunks"].flops - ref["ssm_chunks"].flops == extra
            if mx.kind == "mamba" or (mx.kind == "mamba2" and decode):
                assert "ssm_scan_out" in ref and "ssm_scan_out" not in eng and eng["ssm_scan"].kind == "other"
            if mx.kind == "mamba2" and not decode:
                assert eng["ssm_chunks"].flops < ref["ssm_chunks"].flops  # C·Bᵀ per group, no (chunks+1)² recurrence


@pytest.mark.parametrize("name", ["nemotron-nano-9b-v2", "falcon-h1-1.5b", "jamba-1.5-mini"])
def test_a_chunked_scan_batches_its_gemms_into_a_few_kernels(name):
    """A hybrid's chunked scan runs its many small per-chunk, per-head GEMMs as a few batched kernels per layer
    (mamba_ssm's Triton SSD kernels, flash-linear-attention's chunked delta rule, transformers' batched einsums), so
    its fixed kernel time is a few launches per layer, not one per small GEMM: at 8 × 8,192 prompt tokens the 23
    Mamba-2 layers of a Nemotron-H model had come to 3.9 s of launch time alone (753,664 GEMMs × 5.25 µs)."""
    cfg = read_config_file(str(CONFIGS / f"{name}.json"))[0]
    for convention, per_layer in (("engine", 4), ("transformers", 5)):
        wl = Workload(batch=8, seq_len=8192, convention=convention, attention="fused", causal=True)
        ops = [o for o in prefill_ops(cfg, wl) if o.name == "ssm_chunks"]
        if not ops:
            assert cfg.mixer.kind == "mamba"  # Jamba's Mamba-1 scan has no chunked GEMMs
            continue
        (op,) = ops
        if cfg.mixer.kind == "mamba2":
            layers = sum(1 for k in cfg.attention_kinds if k in MIXER_LETTERS)
            assert op.kernels == per_layer * layers
        assert op.count > 1000 * op.kernels  # many small GEMMs in each launch
        eff = ShapeEfficiency(get_hardware("H100 SXM"), cfg, wl)
        t, t_comp, t_mem, _ = eff.breakdown(op)
        assert t < 0.1 * op.count * ef.T0_S  # far below one launch per GEMM
        assert op.kernels * ef.T0_S < t == max(t_comp, t_mem)  # each launch's fixed time, then compute or memory


def test_hunyuan_moe_reads_per_layer_lists_and_names_the_remote_codes_switches():
    """Hunyuan-A13B's Hub file gives moe_topk per layer and keys of its own code (moe_intermediate_size,
    num_shared_expert, use_cla) that transformers' class does not read: a uniform list is read with a note, a list
    that varies or has the wrong length is refused, and a remote key that would change a count is named. Its totals
    are the card's: 80 B parameters, 13 B active."""
    from gemmlib.core.errors import InputError

    layers = 32
    raw = dict(model_type="hunyuan_v1_moe", architectures=["HunYuanMoEV1ForCausalLM"], hidden_size=4096,
               num_hidden_layers=layers, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
               intermediate_size=3072, vocab_size=128167, num_experts=64, moe_topk=[8] * layers,
               moe_intermediate_size=[3072] * layers, num_shared_expert=[1] * layers, use_mixed_mlp_moe=True,
               use_qk_norm=True, use_cla=False, tie_word_embeddings=True)
    cfg, info = read_config(raw)
    assert cfg.experts_per_token == 8 and info["unknown_keys"] == []
    assert round(cfg.params / 1e9) == 80 and round(cfg.active_params / 1e9) == 13
    assert any("moe_topk is given per layer" in str(n) for n in info["notes"])
    assert not any("hunyuan_v1_moe is read as" in str(n) for n in info["notes"])
    _, info = read_config(dict(raw, moe_intermediate_size=[1024] * layers))
    assert any("hunyuan_v1_moe is read as" in str(n) for n in info["notes"])
    for bad, says in (([8] * 31 + [4], "differs between layers"), ([8] * 3, "lists 3 layers")):
        with pytest.raises(InputError, match=says):
            read_config(dict(raw, moe_topk=bad))


def test_lfm2_reads_its_first_checkpoints_spellings_and_comes_to_the_cards_count():
    """LFM2-1.2B's config.json (the first LFM2 checkpoints' keys: ``block_ff_dim``, ``tie_embedding``,
    ``full_attn_idxs`` and shapes named twice) is read with no unknown key, the MLP width adjusted as LFM2 does
    (2/3 of 12,288, rounded up to 256: 8,192), and comes to numel() of what transformers builds from it on the meta
    device and to the card's 1,170,340,608 parameters; its ten short-convolution layers keep 3 inputs of 2,048
    channels per sequence, its six attention layers a KV cache."""
    raw = dict(model_type="lfm2", architectures=["Lfm2ForCausalLM"], block_auto_adjust_ff_dim=True, block_dim=2048,
               block_ff_dim=12288, block_ffn_dim_multiplier=1.0, block_mlp_init_scale=1.0, block_multiple_of=256,
               block_norm_eps=1e-05, block_out_init_scale=1.0, block_use_swiglu=True, block_use_xavier_init=True,
               conv_L_cache=3, conv_bias=False, conv_dim=2048, conv_dim_out=2048, conv_use_xavier_init=True,
               full_attn_idxs=[2, 5, 8, 10, 12, 14], hidden_size=2048, max_position_embeddings=128000, norm_eps=1e-05,
               num_attention_heads=32, num_heads=32, num_hidden_layers=16, num_key_value_heads=8, rope_theta=1e6,
               theta=1e6, tie_embedding=True, torch_dtype="bfloat16", use_pos_enc=True, vocab_size=65536)
    cfg, info = read_config(raw)
    assert info["unknown_keys"] == [] and cfg.ffn == 8192 and cfg.tied_embeddings
    assert cfg.layer_types == "VVFVVFVVFVFVFVFV" and cfg.mixer.state_elements(engine=False) == 2048 * 3
    assert cfg.params == _meta_params(raw) == 1_170_340_608


def test_afmoe_with_attention_biases_is_refused_with_the_reason():
    """AFMoE's output gate has no bias while the estimator counts the gate with q_proj (and its bias): rather than a
    count off by heads × head_dim per layer, a config with ``attention_bias`` is refused in one line."""
    from gemmlib.core.errors import InputError

    mt, keys = TINY["afmoe"]
    with pytest.raises(InputError, match="output gate has no bias"):
        read_config(dict(keys, model_type=mt, attention_bias=True))


def test_stablelm_with_per_head_layernorms_is_refused_with_the_reason():
    """StableLM 2 12B's per-head q/k LayerNorms have no bias while its block's LayerNorms have one: no qk-norm kind
    here counts that, so such a config is refused in one line rather than counted wrong."""
    from gemmlib.core.errors import InputError

    with pytest.raises(InputError, match="per-head LayerNorms have no bias"):
        read_config(dict(B, model_type="stablelm", qk_layernorm=True))


def test_gemma4_full_layers_read_their_own_weights_and_split_their_own_kv_heads():
    """Gemma 4 31B (the Hub file): a decode step reads every projection once, the full layers' at their own shape
    (head dim 512, 4 KV heads, no v_proj) and the sliding layers' at theirs: the bytes read are 2 × the weights a token
    multiplies. Under TP 8 the sliding layers' 16 KV heads split 8 ways and the full layers' 4 only 4 ways."""
    from gemmlib.llm.parallel import kv_share_per_gpu

    cfg, _ = read_config_file(CONFIGS / "gemma-4-31b-it.json")
    assert (cfg.head_dim, cfg.kv_heads, cfg.full_head_dim, cfg.full_kv_heads, cfg.full_k_eq_v) == (256, 16, 512, 4, True)
    wl = Workload(batch=1, seq_len=16, new_tokens=1, decode_only=True)
    ops = {o.name: o for o in decode_ops(cfg, wl) if o.is_gemm}
    assert sum(o.weight_bytes for o in ops.values()) == 2 * cfg.matmul_params
    assert ops["v_proj"].count == 50 and ops["k_proj"].count == 60  # the 10 full layers have no v_proj
    assert ops["q_proj"].weight_bytes == 2 * 5376 * 32 * (50 * 256 + 10 * 512)
    tokens = 32768  # the sliding layers keep 1,023 tokens, the full ones all 32,768
    s, f = 50 * 1023 * 2 * 16 * 256, 10 * tokens * 2 * 4 * 512
    assert cfg.kv_cache_elements(tokens) == s + f
    assert kv_share_per_gpu(cfg, 8, tokens) == pytest.approx((s / 8 + f / 4) / (s + f))


def test_mimo_v2_flash_comes_to_its_cards_counts_and_names_its_own_codes_keys():
    """MiMo-V2-Flash's shape (the keys public code quotes from its config.json) comes to the card's 309 B total and
    15 B active parameters; the keys of its own code that transformers' class does not read are named when they would
    change the count."""
    keys = dict(model_type="mimo_v2_flash", hidden_size=4096, num_hidden_layers=48, num_attention_heads=64,
                num_key_value_heads=4, intermediate_size=16384, vocab_size=152576, n_routed_experts=256,
                num_experts_per_tok=8, moe_intermediate_size=2048, head_dim=192, v_head_dim=128, sliding_window=128,
                sliding_window_size=128, hybrid_layer_pattern=[0 if i == 0 or (i + 1) % 6 == 0 else 1 for i in range(48)],
                moe_layer_freq=[0] + [1] * 47, swa_num_key_value_heads=8, add_swa_attention_sink_bias=True,
                add_full_attention_sink_bias=False)
    cfg, info = read_config(keys)
    assert (round(cfg.params / 1e9), round(cfg.active_params / 1e9)) == (309, 15)
    assert cfg.layer_types.count("F") == 9 and (cfg.kv_heads, cfg.full_kv_heads, cfg.sliding_window) == (8, 4, 129)
    assert not info["notes"] and not info["unknown_keys"]
    _, info = read_config(dict(keys, swa_num_key_value_heads=16, add_full_attention_sink_bias=True))
    assert any("swa_num_key_value_heads, add_full_attention_sink_bias" in str(n) for n in info["notes"])


def test_mellum2_comes_to_its_names_total():
    """Mellum 2.1 (JetBrains/Mellum2-12B-A2.5B): its shape as public code quotes its config.json (search index ids
    63122993845 and 70114785462: 28 layers, each fourth full, the rest sliding over 1,024; 64 experts of 896, top 8)
    comes to the 12 B total of its name (12,149,923,072; its 2.44 B active against the name's "A2.5B")."""
    cfg, info = read_config(dict(model_type="mellum", hidden_size=2304, num_hidden_layers=28, num_attention_heads=32,
                                 num_key_value_heads=4, head_dim=128, num_experts=64, num_experts_per_tok=8,
                                 moe_intermediate_size=896, intermediate_size=7168, vocab_size=98304,
                                 sliding_window=1024, use_sliding_window=True, mlp_layer_types=["sparse"] * 28,
                                 layer_types=["full_attention" if i % 4 == 3 else "sliding_attention"
                                              for i in range(28)]))
    assert round(cfg.params / 1e9) == 12 and cfg.layer_types.count("F") == 7 and not info["unknown_keys"]


def test_axk1_comes_to_its_cards_counts():
    """A.X K1 (skt/A.X-K1): the shape its card states — 61 layers (1 dense, 60 MoE), 64 heads, 192 routed experts of
    2,048 and one shared, 8 per token, a 163,840 vocabulary — with the MLA and widths of transformers' AXK1Config
    (whose defaults are this checkpoint's) comes to the card's 519 B total and 33 B active parameters."""
    cfg, info = read_config(dict(model_type="axk1", hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048,
                                 num_hidden_layers=61, num_attention_heads=64, n_routed_experts=192, n_shared_experts=1,
                                 num_experts_per_tok=8, vocab_size=163840, kv_lora_rank=512, q_lora_rank=1536,
                                 qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128,
                                 max_position_embeddings=131072))
    assert (round(cfg.params / 1e9), round(cfg.active_params / 1e9)) == (519, 33) and cfg.moe_layers.count("D") == 1
    assert not info["unknown_keys"]


def test_beam_config_defaults_come_to_its_names_counts():
    """BeamConfig's defaults (its docstring names reflection/Beam-1.0-501B-A23B as their checkpoint) come to the name's
    501 B total and 23 B active parameters; every sixth layer and the last attend in full."""
    from transformers import AutoConfig

    cfg, info = read_config(json.loads(AutoConfig.for_model("beam").to_json_string()))
    assert (round(cfg.params / 1e9), round(cfg.active_params / 1e9)) == (501, 23) and not info["unknown_keys"]
    assert cfg.layer_types.count("F") == 9 and cfg.moe_layers.startswith("DDDM")


def test_longcat_flash_counts_its_zero_computation_experts():
    """LongCat-Flash: the config class's defaults (its docstring names meituan-longcat/LongCat-Flash-Chat as their
    checkpoint) come to the card's 560 B total and 27 B activated on average (without the embedding), its 12 choices
    among 512 experts and 256 zero-computation ones counted at their share, 8 that compute; the router scores all 768.
    transformers 5.24 allocates gate/up rows for the zero-computation experts too, never used: numel() exceeds the
    checkpoint's count by exactly those rows."""
    from transformers import AutoConfig

    cfg, info = read_config(json.loads(AutoConfig.for_model("longcat_flash").to_json_string()))
    assert round(cfg.params / 1e10) == 56 and round((cfg.active_params - cfg.vocab * cfg.hidden) / 1e9) == 27
    assert (cfg.layers, cfg.computing_per_token, cfg.router_width) == (56, 8, 768) and not info["unknown_keys"]
    ops = {o.name: o for o in prefill_ops(cfg, Workload(batch=1, seq_len=64, new_tokens=0))}
    assert ops["gate_proj"].count == 28 * 8 and ops["router"].n == 768 and ops["shared_gate_proj"].count == 28
    keys = dict(num_layers=2, zero_expert_num=3, n_routed_experts=4, moe_topk=3, hidden_size=64, ffn_hidden_size=96,
                expert_ffn_hidden_size=32, num_attention_heads=4, vocab_size=128, q_lora_rank=40, kv_lora_rank=32,
                qk_nope_head_dim=16, qk_rope_head_dim=8, head_dim=8, v_head_dim=12)
    hf = AutoConfig.for_model("longcat_flash", **keys)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(hf)
    small = read_config(dict(keys, model_type="longcat_flash"))[0]
    assert sum(p.numel() for p in model.parameters()) - small.params == 2 * 3 * (2 * 32 * 64)


def test_minimax_m1_comes_to_its_cards_counts():
    """MiniMax-M1 (the shape of its Hub config.json as a public test quotes it, search index id 59165385622: 80 layers,
    every eighth softmax attention and the rest lightning attention by its own code's attn_type_list, 32 experts of
    9,216, top 2) comes to the card's 456 B total and 45.9 B activated (without the embedding and the LM head), its
    remote-code model_type read as transformers' minimax."""
    cfg, info = read_config(dict(model_type="minimax_m1", architectures=["MiniMaxM1ForCausalLM"], hidden_size=6144,
                                 intermediate_size=9216, num_hidden_layers=80, num_attention_heads=64,
                                 num_key_value_heads=8, head_dim=128, vocab_size=200064, num_local_experts=32,
                                 num_experts_per_tok=2, attn_type_list=[0, 0, 0, 0, 0, 0, 0, 1] * 10, postnorm=True,
                                 layernorm_mlp_alpha=3.5565588200778455, max_position_embeddings=10240000))
    emb = 2 * cfg.vocab * cfg.hidden
    assert round(cfg.params / 1e9) == 456 and round((cfg.active_params - emb) / 1e8) == 459
    assert cfg.layer_types.count("F") == 10 and cfg.mixer.kind == "lightning" and not info["unknown_keys"]
    assert cfg.state_elements() == 70 * 64 * 128 * 128  # a d × d state per head in the 70 lightning layers


def test_dbrx_comes_to_its_cards_counts():
    """DBRX's shape (d_model 6144, 40 layers, 48 heads of which 8 KV, 16 experts of 10,752, 4 per token, the 100,352
    vocabulary) comes to the card's 132 B total and 36 B active parameters."""
    cfg, info = read_config(dict(model_type="dbrx", d_model=6144, n_heads=48, n_layers=40, max_seq_len=32768,
                                 vocab_size=100352, attn_config=dict(kv_n_heads=8, clip_qkv=8, rope_theta=500000),
                                 ffn_config=dict(ffn_hidden_size=10752, moe_num_experts=16, moe_top_k=4)))
    assert (round(cfg.params / 1e9), round(cfg.active_params / 1e9)) == (132, 36) and not info["unknown_keys"]


@pytest.mark.parametrize("hidden, layers, published", [  # state-spaces/mamba-*-hf (search index id 49071488734)
    (768, 24, 129_135_360), (1024, 48, 371_516_416), (1536, 48, 793_204_224), (2048, 48, 1_372_178_432),
    (2560, 64, 2_768_345_600),
])
def test_mamba_comes_to_its_published_counts(hidden, layers, published):
    """The five Mamba checkpoints in transformers' format come to their published parameter counts to the
    parameter (the LM head tied, as MambaConfig ties it by default)."""
    cfg, info = read_config(dict(model_type="mamba", architectures=["MambaForCausalLM"], hidden_size=hidden,
                                 num_hidden_layers=layers, vocab_size=50280, state_size=16, expand=2,
                                 intermediate_size=2 * hidden, conv_kernel=4, time_step_rank="auto"))
    assert cfg.params == published and cfg.attention_free and not info["unknown_keys"]


def test_the_pure_state_space_models_come_to_their_cards_counts():
    """Mamba-Codestral-7B's shape (Mamba2Config's defaults are that model's: 64 layers of 128 heads × 64, 8 groups,
    state 128) comes to Mistral's published 7,285,403,648 parameters exactly; Falcon Mamba 7B's Hub file, whose
    ``intermediate_size`` 8192 wins over its ``expand`` 16 as FalconMambaConfig lets it, to the card's 7.27 B. A
    Mamba-2 width that is not its heads × head dim is refused; TP splits the mixer's heads (or channels)."""
    from gemmlib.core.errors import InputError
    from gemmlib.llm.parallel import Parallel

    codestral = dict(model_type="mamba2", num_heads=128, head_dim=64, vocab_size=32768, hidden_size=4096,
                     state_size=128, num_hidden_layers=64, expand=2, n_groups=8, conv_kernel=4, chunk_size=256)
    cfg = read_config(codestral)[0]
    assert cfg.params == 7_285_403_648 and cfg.attention_free and cfg.state_elements() == 64 * (
        128 * 64 * 128 + (8192 + 2 * 8 * 128) * 4)
    fm, info = read_config_file(str(CONFIGS / "falcon-mamba-7b.json"))
    assert round(fm.params / 1e7) == 727 and fm.mixer.inner == 8192 and not info["unknown_keys"]
    with pytest.raises(InputError, match="must equal expand × hidden_size"):
        read_config(dict(codestral, head_dim=32))
    Parallel(tp=8).check(cfg)
    with pytest.raises(InputError, match="mixer's 8192 channels"):
        Parallel(tp=3).check(fm)


@pytest.mark.parametrize("model_type, keys, name, digits", [
    # Salesforce's CTRL: "a 1.63 billion-parameter conditional transformer language model" (1,637,964,550 cut, not
    # rounded, to three digits)
    ("ctrl", dict(n_embd=1280, dff=8192, n_layer=48, n_head=16, vocab_size=246534, n_positions=256), 1.63e9, -3),
    # facebook/xglm-564M, -1.7B and -7.5B: the sizes in their names
    ("xglm", dict(d_model=1024, ffn_dim=4096, num_layers=24, attention_heads=16, vocab_size=256008), 564e6, 3),
    ("xglm", dict(d_model=2048, ffn_dim=8192, num_layers=24, attention_heads=16, vocab_size=256008), 1.7e9, 2),
    ("xglm", dict(d_model=4096, ffn_dim=16384, num_layers=32, attention_heads=32, vocab_size=256008), 7.5e9, 2),
])
def test_ctrl_and_xglm_come_to_their_published_sizes(model_type, keys, name, digits):
    """CTRL (its tied head's own bias counted) and XGLM (sinusoidal positions: no position parameter) at the sizes
    their releases name, to the digits named (negative: the figure cut there, not rounded)."""
    from math import floor, log10

    cfg, info = read_config(dict(keys, model_type=model_type))
    scale = 10 ** (floor(log10(name)) - abs(digits) + 1)
    ours = cfg.params // scale if digits < 0 else round(cfg.params / scale)
    assert ours == round(name / scale) and cfg.sinusoidal and not info["unknown_keys"]


def test_bitnet_2b4t_comes_to_its_cards_figures():
    """BitNet b1.58 2B4T's config.json: ~2 B parameters besides the embedding (its card), its linears' ternary
    content (log2 3 bits a weight) the report's 0.4 GB, and the packed checkpoint (2 bits a weight, the embedding in
    bf16) ~1.2 GB, as public notes on the packed repository give it."""
    from math import log2

    cfg, info = read_config_file(str(CONFIGS / "bitnet-b1.58-2b-4t.json"))
    assert cfg.quant.method == "bitnet" and cfg.tied_embeddings and not info["unknown_keys"]
    body = cfg.params - cfg.vocab * cfg.hidden
    assert round(body / 1e9) == 2
    linears = cfg.layers * (cfg.hidden * (cfg.q_dim + 2 * cfg.kv_dim) + cfg.q_dim * cfg.hidden + 3 * cfg.hidden * cfg.ffn)
    assert round(linears * log2(3) / 8 / 1e9, 1) == 0.4
    size = checkpoint_size(cfg, "bf16")
    assert round(size.bytes / 1e9, 1) == 1.2 and size.quantized_bytes == linears // 4 + cfg.layers * 7 * 2


@pytest.mark.parametrize("keys, published", [
    (dict(n_embed=14336, n_layer=70, num_attention_heads=112), 176_247_271_424),  # bigscience/bloom (its card)
    (dict(hidden_size=1024, n_layer=24, n_head=16), 559_214_592),  # bigscience/bloom-560m
])
def test_bloom_comes_to_its_published_counts(keys, published):
    """BLOOM's shapes as its config.json files spell them (n_embed in the 176B's) come to the published counts, the
    LayerNorm after the embedding included."""
    cfg, info = read_config(dict(keys, model_type="bloom", vocab_size=250880))
    assert cfg.params == published and cfg.embedding_norm and not info["unknown_keys"]


@pytest.mark.parametrize("hidden, layers, heads, published", [
    (768, 12, 12, 125_239_296),  # facebook/opt-125m
    (4096, 32, 32, 6_658_473_984),  # facebook/opt-6.7b
])
def test_opt_comes_to_its_published_counts(hidden, layers, heads, published):
    """OPT's shapes come to their published counts, the position table's 2 extra rows included; OPT-350m's projected
    embedding is refused with the reason."""
    from gemmlib.core.errors import InputError

    keys = dict(model_type="opt", hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                ffn_dim=4 * hidden, vocab_size=50272, max_position_embeddings=2048, word_embed_proj_dim=hidden)
    assert read_config(keys)[0].params == published
    with pytest.raises(InputError, match="OPT-350m"):
        read_config(dict(keys, word_embed_proj_dim=512))


@pytest.mark.parametrize("model_type, keys", [
    ("opt", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, ffn_dim=96, vocab_size=128,
                 max_position_embeddings=64, word_embed_proj_dim=64)),
    ("biogpt", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=96, vocab_size=128,
                    max_position_embeddings=64)),
    ("modernbert-decoder", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=96,
                                vocab_size=50368, max_position_embeddings=64)),  # (its pad id is 50283)
])
def test_a_stray_kv_heads_key_leaves_a_multi_head_family_multi_head(model_type, keys):
    """OPT's, BioGPT's and ModernBERT's decoders are multi-head whatever a file says: their modeling code never reads
    num_key_value_heads, so a file that carries one (a converted or hand-written config) builds full-width keys and
    values in transformers; the reader sizes the same model and names the key as not read (before: grouped k/v, 4 %
    of OPT-125m's parameters missing)."""
    keys = dict(keys, num_key_value_heads=1)
    hf = AutoConfig.for_model(model_type, **keys)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(hf)
    cfg, info = read_config(dict(keys, model_type=model_type))
    assert cfg.kv_heads == cfg.heads == 4
    assert cfg.params == model.num_parameters()
    assert info["unknown_keys"] == ["num_key_value_heads"]


@pytest.mark.parametrize("model_type, keys, says", [
    ("gemma3n_text", dict(num_kv_shared_layers=4), "needs an earlier layer of its kind"),
    ("gemma4_text", dict(num_kv_shared_layers=9), "is more than the 3 layers"),
    ("gemma4_text", dict(per_layer_config={"0": {"head_dim": 32}}), "the same overrides to every full-attention layer"),
    ("gemma4_text", dict(per_layer_config={"1": {"intermediate_size": 8}, "2": {"intermediate_size": 8}}),
     "overrides what is not read here"),
    ("gemma4_text", dict(enable_moe_block=True, num_experts=4, top_k_experts=2, moe_intermediate_size=32,
                         num_kv_shared_layers=1, use_double_wide_mlp=True), "no such model is published"),
    ("gemma3n_text", dict(intermediate_size=[96, 80, 96]), "different widths"),
    ("laguna", dict(num_attention_heads_per_layer=[4, 2, 4]), "the same head count"),
    ("laguna", dict(gating="sigmoid"), "must be true, \"per-head\" or \"per-element\""),
])
def test_the_new_layouts_refuse_what_they_do_not_read(model_type, keys, says):
    """Gemma 3n / 4 and Laguna: a layout this estimator does not count is refused in one line that says why."""
    from gemmlib.core.errors import InputError

    base = dict(B, num_hidden_layers=3, head_dim=16, sliding_window=4, hidden_size_per_layer_input=0,
                layer_types=["sliding_attention", "full_attention", "full_attention"], num_experts=4,
                moe_intermediate_size=32, **MOE)
    if model_type != "laguna":
        base = {k: v for k, v in base.items() if k not in ("num_experts", "moe_intermediate_size", "num_experts_per_tok")}
    with pytest.raises(InputError, match=re.escape(says)):
        read_config(dict(base, **keys, model_type=model_type))


def test_olmo_hybrid_reads_its_defaults_positions_and_tensor_names():
    """OLMo Hybrid: the config class's derived defaults (every fourth layer full, the DeltaNet's key heads = heads,
    key dim ¾·hidden / heads, value dim twice that) at its full shape equal numel() on the meta device; a null
    rope_theta is NoPE; the checkpoint names every linear transformers stores, q, k and v of the DeltaNet apart; a
    layout the config class refuses is refused with the reason."""
    from gemmlib.core.errors import InputError
    from gemmlib.llm.checkpoint import stored_linears

    hf = AutoConfig.for_model("olmo_hybrid")
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(hf)
    cfg = read_config({k: v for k, v in hf.to_dict().items() if not k.startswith("linear_") and k != "layer_types"})[0]
    assert cfg.params == sum(p.numel() for p in model.parameters()) == 7_430_870_688
    assert cfg.layer_types == "LLLF" * 8 and not cfg.no_positions and cfg.mixer.key_dim == 96
    assert read_config(dict(HYBRID["olmo_hybrid_nope"][1], model_type="olmo_hybrid"))[0].no_positions
    keys = HYBRID["olmo_hybrid"][1]
    _, tiny = _build("olmo_hybrid", keys)
    weights = {k.removesuffix(".weight") for k in tiny.state_dict() if k.endswith(".weight") and "norm" not in k}
    stored = {x.module for x in stored_linears(read_config(dict(keys, model_type="olmo_hybrid"))[0])}
    assert stored == weights - {"model.embed_tokens"}
    assert "model.layers.0.linear_attn.q_proj" in stored and "model.layers.0.linear_attn.g_proj" in stored
    for types in (["linear_attention"] * 3, ["full_attention"] * 3):
        with pytest.raises(InputError, match="at least one linear_attention and one full_attention"):
            read_config(dict(keys, layer_types=types, model_type="olmo_hybrid"))


RG = dict(hidden_size=64, intermediate_size=192, num_attention_heads=4, num_key_value_heads=1, vocab_size=128,
          num_hidden_layers=3, attention_window_size=4, conv1d_width=4, pad_token_id=None, bos_token_id=None,
          eos_token_id=None)


@pytest.mark.parametrize("source", ["keys", "to_dict"])
@pytest.mark.parametrize("keys", [RG, dict(RG, lru_width=48, attention_bias=True, num_hidden_layers=4,
                                           num_key_value_heads=2, block_types=["recurrent", "attention"])],
                         ids=["2b-layout", "own-width"])
def test_recurrent_gemma_is_exact(keys, source):
    """RecurrentGemma from transformers' own class: parameters to the parameter, prefill and one decode step to the
    FLOP (the recurrent blocks' linears, convolution and block-diagonal gates, the local attention over a window of
    4 that a 7-token prompt overflows), and the state the model keeps — the window's keys and values in the cache,
    the convolution's last inputs and the RG-LRU's state in the recurrent blocks — to the element and the byte.
    (Its forward returns no cache: the cache is handed in, the position of the decode step given.)"""
    from transformers import DynamicCache

    hf, model = _build("recurrent_gemma", keys)
    raw = dict(keys, model_type="recurrent_gemma") if source == "keys" else json.loads(hf.to_json_string())
    cfg, info = read_config(raw)
    assert cfg.params == sum(p.numel() for p in model.parameters())
    prefill, decode, cache = prefill_and_decode(model, torch.randint(0, hf.vocab_size, (BATCH, PROMPT)),
                                                prefill_kwargs={"cache": DynamicCache(config=hf)},
                                                step_kwargs={"position_ids": torch.full((BATCH, 1), PROMPT)})
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    held = []
    for i, layer in enumerate(model.model.layers):
        block = layer.temporal_block
        if hasattr(block, "rg_lru"):
            held.append([block.conv1d_state, block.rg_lru.recurrent_states])
        else:
            held.append([cache.layers[i].keys, cache.layers[i].values])
    per_layer = [sum(t.numel() for t in ts) for ts in held]
    assert per_layer == [BATCH * (cfg.cached_tokens(k, PROMPT + 1) * cfg.kv_elements_of(k)
                                  + (cfg.mixer.state_elements(engine=False) if k in MIXER_LETTERS else 0))
                         for k in cfg.attention_kinds]
    assert kv_cache_bytes(cfg, wl) == sum(t.nbytes for ts in held for t in ts)
    if source == "to_dict":
        assert info["unknown_keys"] == [], info["unknown_keys"]
    # the engine convention: the convolution over exactly the new tokens, a GEMM in decode too
    eng = Workload(batch=BATCH, seq_len=PROMPT, new_tokens=1)
    conv = {o.phase: o.flops for o in prefill_ops(cfg, eng) + decode_ops(cfg, eng) if o.name == "conv1d"}
    w, n = cfg.mixer.inner, cfg.attention_kinds.count("R")
    assert conv == {"prefill": 2 * BATCH * PROMPT * 4 * w * n, "decode": 2 * BATCH * 4 * w * n}


def test_recurrent_gemma_comes_to_its_papers_size_and_refuses_what_it_does_not_build():
    """RecurrentGemma-2B's shape (its config class's, with the released MLP width and one KV head) comes to the
    paper's 2.7 B parameters; block_types other than recurrent / attention are refused with the reason."""
    from gemmlib.core.errors import InputError

    cfg = read_config(dict(model_type="recurrent_gemma", hidden_size=2560, num_hidden_layers=26,
                           num_attention_heads=10, num_key_value_heads=1, intermediate_size=15360,
                           vocab_size=256000))[0]
    assert cfg.params == 2_682_862_080 and round(cfg.params / 1e9, 1) == 2.7
    assert cfg.layer_types == "RRS" * 8 + "RR" and cfg.sliding_window == 2048
    with pytest.raises(InputError, match="block_types must be a list of 'recurrent' and 'attention'"):
        read_config(dict(RG, block_types=["recurrent", "mlp"], model_type="recurrent_gemma"))


PHI4MM = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
              vocab_size=128, pad_token_id=None, bos_token_id=None, eos_token_id=[0], tie_word_embeddings=True,
              vision_config=dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                                 image_size=56, patch_size=14, crop_size=56),
              audio_config=dict(hidden_size=32, intermediate_size=40, num_blocks=2, num_attention_heads=4,
                                ext_pw_out_channel=32, depthwise_separable_out_channel=32, nemo_conv_channels=16,
                                time_reduction=4, input_size=40, bias_max_distance=50, kernel_size=5,
                                downsample_rate=2))


@pytest.mark.parametrize("source", ["keys", "to_dict"])
def test_phi4_multimodal_counts_its_decoder_and_reports_its_image_and_audio_encoders(source):
    """Phi-4-multimodal from transformers' own class: its decoder (Phi-3's block, read from the top-level keys) exact
    to the parameter, the FLOP (a text prompt never runs the encoders) and the cache; the image encoder (SigLIP with
    its pooling head, the projection up and down) and the audio encoder (NeMo subsampling, relative attention bias,
    conformer blocks, two projection pairs) reported beside it, each equal to numel() of its modules — at tiny
    shapes and at the config class's defaults."""
    from gemmlib.llm.hf import describe_read

    hf, model = _build("phi4_multimodal", PHI4MM)
    raw = dict(PHI4MM, model_type="phi4_multimodal") if source == "keys" else json.loads(hf.to_json_string())
    cfg, info = read_config(raw)
    towers = {part: sum(p.numel() for n, p in model.named_parameters() if f"{part}_embed." in n)
              for part in ("image", "audio")}
    assert sum(info["vision"].values()) == towers["image"] and sum(info["audio"].values()) == towers["audio"]
    assert cfg.params == sum(p.numel() for p in model.parameters()) - towers["image"] - towers["audio"]
    prefill, decode, per_layer, nbytes = _run(model, hf.vocab_size)
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    assert kv_cache_bytes(cfg, wl) == nbytes
    read = describe_read(cfg, info)
    assert read["audio"] == info["audio"] and read["vision"] == info["vision"]
    if source == "to_dict":
        assert info["unknown_keys"] == [], info["unknown_keys"]
        full = AutoConfig.for_model("phi4_multimodal")
        with torch.device("meta"):
            big = AutoModelForCausalLM.from_config(full)
        cfg, info = read_config(json.loads(full.to_json_string()))
        sizes = {part: sum(p.numel() for n, p in big.named_parameters() if f"{part}_embed." in n)
                 for part in ("image", "audio")}
        assert (sum(info["vision"].values()), sum(info["audio"].values())) == (sizes["image"], sizes["audio"]) \
            == (441_550_016, 466_432_256)
        assert cfg.params == sum(p.numel() for p in big.parameters()) - sum(sizes.values())


RWKV4 = dict(hidden_size=64, num_hidden_layers=3, intermediate_size=96, vocab_size=128, context_length=64,
             bos_token_id=None, eos_token_id=None)


@pytest.mark.parametrize("source", ["keys", "to_dict"])
def test_rwkv_is_exact(source):
    """RWKV-4 from transformers' own class: parameters to the parameter, a prefill and one decode step (fed the state
    the prefill returned) to the FLOP — the time mixing's key, value, receptance and output, the channel mixing's key,
    value and receptance, the head; the WKV recurrence is element-wise — and the state it hands back (the previous
    token of both mixings and WKV's three vectors per layer) to the element and the byte."""
    hf, model = _build("rwkv", RWKV4)
    raw = dict(RWKV4, model_type="rwkv") if source == "keys" else json.loads(hf.to_json_string())
    cfg, info = read_config(raw)
    assert cfg.params == sum(p.numel() for p in model.parameters())
    for batch in (BATCH, 1):  # transformers' decode step broadcasts the shifted token across the batch (B² rows for
        # B > 1, wrong logits): the step is compared where it is right, at one sequence
        prefill, decode, state = prefill_and_decode(model, torch.randint(0, hf.vocab_size, (batch, PROMPT)),
                                                    carry="state")
        wl = _reference(batch=batch, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
        assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
        assert batch * cfg.state_elements() == sum(t.numel() for t in state)
        assert kv_cache_bytes(cfg, wl) == sum(t.nbytes for t in state)
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    if source == "to_dict":
        assert info["unknown_keys"] == [], info["unknown_keys"]
    with pytest.raises(Exception, match="attention_hidden_size 32 differs from hidden_size 64"):
        read_config(dict(RWKV4, attention_hidden_size=32, model_type="rwkv"))


def test_a_flat_qwen2_5_vl_config_reads_as_its_nested_form():
    """Qwen2-VL / Qwen2.5-VL's Hub files keep the decoder's keys at the top level beside vision_config (the config
    class builds text_config from them): read the same as the nested form, the towers at the class defaults equal to
    numel() on the meta device, tied when the top level says so."""
    from transformers import AutoModelForImageTextToText

    for mt in ("qwen2_vl", "qwen2_5_vl"):
        hf = AutoConfig.for_model(mt)
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(hf)
        nested = json.loads(hf.to_json_string())
        flat = {k: v for k, v in nested.items() if k != "text_config"}
        flat.update({k: v for k, v in nested["text_config"].items() if k != "model_type"})
        for raw in (nested, flat):
            cfg, info = read_config(raw)
            assert info["wrapper"] == mt and info["unknown_keys"] == [], info["unknown_keys"]
            named = dict(model.named_parameters())
            assert sum(info["vision"].values()) == sum(p.numel() for n, p in named.items() if ".visual." in f".{n}")
            assert cfg.params == sum(p.numel() for n, p in named.items() if ".visual." not in f".{n}")
        assert read_config(dict(flat, tie_word_embeddings=True))[0].tied_embeddings


_OMNI_AUDIO = dict(num_mel_bins=16, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=32, d_model=16,
                   output_dim=64, downsample_hidden_size=8, max_source_positions=64)


@pytest.mark.parametrize("omni", ["qwen3_omni_moe", "qwen2_5_omni"])
@pytest.mark.parametrize("whole", [False, True], ids=["thinker", "whole"])
def test_the_omni_models_count_their_thinker_and_report_its_vision_tower(omni, whole):
    """Qwen3-Omni and Qwen2.5-Omni: the thinker (``…_thinker``, or the whole config's thinker_config) is Qwen3-MoE's
    and Qwen2's decoder — exact to the parameter, the FLOP and the cache against transformers' thinker on a text
    prompt, its LM head untied as the thinker's own flag says (Qwen2.5-Omni's text_config says tied) — its vision
    tower Qwen3-VL's and Qwen2.5-VL's (reported exactly), its audio tower and the talker not counted (said so)."""
    import transformers

    torch.manual_seed(0)
    if omni == "qwen3_omni_moe":
        text = dict(B, head_dim=24, num_experts=4, moe_intermediate_size=32, decoder_sparse_step=1, **MOE)
        vision, cls = dict(_VL_VISION), transformers.Qwen3OmniMoeThinkerForConditionalGeneration
    else:
        text = dict(B, rope_parameters=_MROPE, tie_word_embeddings=True)
        vision = dict(depth=2, hidden_size=32, intermediate_size=48, num_heads=2, out_hidden_size=64, patch_size=4,
                      fullatt_block_indexes=[1])
        cls = transformers.Qwen2_5OmniThinkerForConditionalGeneration
    hf = AutoConfig.for_model(f"{omni}_thinker", text_config=text, vision_config=vision, audio_config=_OMNI_AUDIO)
    model = cls._from_config(hf, attn_implementation="eager", experts_implementation="eager").eval()
    raw = json.loads(hf.to_json_string())
    if whole:
        raw = dict(model_type=omni, thinker_config=raw, talker_config={"text_config": {}}, enable_audio_output=True)
    cfg, info = read_config(raw)
    assert cfg.family == ("qwen3_moe" if omni == "qwen3_omni_moe" else "qwen2") and not cfg.tied_embeddings
    assert info["unknown_keys"] == [], info["unknown_keys"]
    named = dict(model.named_parameters())
    assert cfg.params == sum(p.numel() for n, p in named.items() if ".language_model." in f".{n}" or n.startswith("lm_head"))
    assert sum(info["vision"].values()) == sum(p.numel() for n, p in named.items() if ".visual." in f".{n}")
    notes = " ".join(str(n) for n in info["notes"])
    assert "audio tower" in notes and (not whole or "talker" in notes)
    prefill, decode, per_layer, _ = _run(model, 128)
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1)
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode


def test_hunyuan_vl_counts_its_hunyuan_dense_decoder():
    """HunYuan-VL: the decoder of its text_config is HunYuan-Dense's, exact to the parameter and the FLOP on a text
    prompt; its vision tower and merger reported beside it, equal to numel() of the rest (tiny; with a head dim of its
    own, one channel, no merge and a small image; at the class defaults, whose text_config needs a head_dim to build)."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    text = dict(B, head_dim=16, pad_token_id=None, bos_token_id=None, eos_token_id=None, eod_token_id=None,
                sep_token_id=None, rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "alpha": 1000.0,
                                                    "mrope_section": [2, 2, 2, 2]})
    vision = dict(hidden_size=32, intermediate_size=48, num_attention_heads=2, num_key_value_heads=2,
                  num_hidden_layers=1, out_hidden_size=64, text_hidden_size=64, patch_size=4)
    hf = AutoConfig.for_model("hunyuan_vl", text_config=text, vision_config=vision)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert cfg.family == "hunyuan_v1_dense" and info["unknown_keys"] == [], info["unknown_keys"]
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)
    for kw in (dict(text_config=text, vision_config=dict(vision, head_dim=12, num_channels=1, spatial_merge_size=1,
                                                          max_image_size=64)),
               dict(text_config=dict(head_dim=128))):
        hf = AutoConfig.for_model("hunyuan_vl", **kw)
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(hf)
        cfg, info = read_config(json.loads(hf.to_json_string()))
        assert cfg.params == model.num_parameters() - _outside_decoder(model)
        assert sum(info["vision"].values()) == _outside_decoder(model)


def test_hunyuan_ocr_flat_config_and_its_tied_head():
    """HunyuanOCR's published config.json keeps the decoder's keys at the top level with HunYuan's legacy spellings
    (org_vocab_size, attention_head_dim, pad_id, use_qk_norm) beside vision_config: read with no unknown key and exact
    to the parameter and the FLOP against the model transformers builds from the same file (the legacy spelling winning
    over the canonical one, as the config class's attribute_map makes it); its head tied unless the wrapper and its
    text config both say not, in either layout; HunyuanOCR's own shape comes to its published "1B" (996,208,112)."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    flat = dict(vocab_size=100, org_vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, head_dim=8, attention_head_dim=16, use_qk_norm=True,
                pad_id=0, tie_word_embeddings=False, im_start_id=120, im_end_id=121, image_token_id=122,
                im_newline_id=123, rope_scaling={"type": "xdrope", "alpha": 1000.0, "factor": 1.0,
                                                 "xdrope_section": [2, 2, 2, 2]},
                vision_config=dict(hidden_size=32, intermediate_size=48, num_attention_heads=2, num_hidden_layers=1,
                                   patch_size=4))
    hf = AutoConfig.for_model("hunyuan_vl", **copy.deepcopy(flat))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(dict(flat, model_type="hunyuan_vl", architectures=["HunYuanVLForConditionalGeneration"]))
    assert info["unknown_keys"] == [] and cfg.vocab == 128 and cfg.head_dim == 16 and cfg.tied_embeddings
    assert any("org_vocab_size (128) read as vocab_size" in str(n) for n in info["notes"])
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)
    text = {k: flat[k] for k in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                                 "num_attention_heads", "num_key_value_heads", "head_dim")}
    for top, inner in ((None, False), (False, None), (False, False), (True, False)):
        keys = dict(text_config=dict(text) | ({} if inner is None else {"tie_word_embeddings": inner}),
                    vision_config=flat["vision_config"]) | ({} if top is None else {"tie_word_embeddings": top})
        hf = AutoConfig.for_model("hunyuan_vl", **copy.deepcopy(keys))
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(hf)
        cfg = read_config(dict(keys, model_type="hunyuan_vl"))[0]
        assert cfg.tied_embeddings is (top is not False or inner is not False)
        assert cfg.params == model.num_parameters() - _outside_decoder(model), (top, inner)
    ocr = dict(model_type="hunyuan_vl", vocab_size=120818, hidden_size=1024, intermediate_size=3584,
               num_hidden_layers=24, num_attention_heads=16, num_key_value_heads=8, head_dim=128,
               vision_config=dict(out_hidden_size=1024))
    cfg, info = read_config(ocr)
    hf = AutoConfig.for_model("hunyuan_vl", **{k: v for k, v in ocr.items() if k != "model_type"})
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    assert cfg.params + sum(info["vision"].values()) == model.num_parameters() == 996_208_112


def _decoder_is_exact(model, cfg) -> None:
    """A wrapper's decoder read as ``cfg``: its parameters (the language model's and the LM head's), a prefill and
    one decode step on a text prompt (FlopCounterMode) and the fp32 cache's bytes."""
    named = dict(model.named_parameters())
    assert cfg.params == sum(p.numel() for n, p in named.items()
                             if ".language_model." in f".{n}" or ".text_model." in f".{n}" or n.startswith("lm_head"))
    prefill, decode, _, nbytes = _run(model, 128)
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    assert kv_cache_bytes(cfg, wl) == nbytes


_TINY_TOWER = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=1, depth=1, num_attention_heads=2,
                   num_heads=2, patch_size=4, image_size=32, out_hidden_size=64, num_key_value_heads=2)


@pytest.mark.parametrize("keys", [
    dict(vision_config=dict(_TINY_TOWER)),
    dict(vision_config=dict(_TINY_TOWER, scale_factor=2, use_fine_route=False, deepstack_visual_indexes=[0]),
         density_router_hidden_size=None),
    dict(vision_config=dict(_TINY_TOWER, num_hidden_layers=4, deepstack_visual_indexes=[1, 3]),
         density_router_hidden_size=24),
])
def test_granite_docling_counts_its_decoder_exactly_and_its_tower_beside_it(keys):
    """Granite-Docling (Granite's decoder, its head tied): the decoder of the text_config exact to the parameter and the
    FLOP against the wrapper's own class on a text prompt; the tower beside it — its SigLIP-like encoder, the coarse
    and fine connector paths with their DeepStack mergers, the density router when set — equal to numel() of
    everything outside the decoder, from the file's keys and from to_dict()."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    text = dict(B, pad_token_id=None, bos_token_id=None, eos_token_id=None)
    keys = dict(copy.deepcopy(keys), text_config=text, pad_token_id=None)
    keys["vision_config"]["out_hidden_size"] = text["hidden_size"]  # (the config class requires the decoder's width)
    hf = AutoConfig.for_model("granite_docling", **copy.deepcopy(keys))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    for raw in (dict(keys, model_type="granite_docling"), json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert info["wrapper"] == "granite_docling" and info["unknown_keys"] == [], info["unknown_keys"]
        assert sum(info["vision"].values()) == _outside_decoder(model)
    _decoder_is_exact(model, cfg)


def test_deepseek_ocr2_counts_its_mha_moe_decoder():
    """DeepSeek-OCR-2: Llama's multi-head attention under DeepSeek-V2's mixture (routed
    and shared experts, dense layers by mlp_layer_types), exact to the parameter and the FLOP against the wrapper's own
    class on a text prompt; the SAM + Qwen2 vision encoder named, not counted; a config without mlp_layer_types
    refused with the reason (the model indexes it per layer)."""
    from transformers import AutoModelForImageTextToText

    from gemmlib.core.errors import InputError

    torch.manual_seed(0)
    text = dict(B, n_routed_experts=4, n_shared_experts=1, moe_intermediate_size=32, num_experts_per_tok=2,
                mlp_layer_types=["dense", "sparse"], pad_token_id=None, bos_token_id=None, eos_token_id=None)
    vision = dict(sam_config=dict(hidden_size=16, output_channels=8, num_hidden_layers=1, num_attention_heads=2,
                                  image_size=32, patch_size=8, mlp_dim=32, global_attn_indexes=[0],
                                  downsample_channels=[8, 16]),
                  encoder_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=1, num_attention_heads=2,
                                      num_key_value_heads=2, vocab_size=16))
    hf = AutoConfig.for_model("deepseek_ocr2", text_config=text, vision_config=vision)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["unknown_keys"] == [], info["unknown_keys"]
    _decoder_is_exact(model, cfg)
    with pytest.raises(InputError, match="needs 'mlp_layer_types'"):
        read_config({k: v for k, v in text.items() if k != "mlp_layer_types"} | {"model_type": "deepseek_ocr2_text"})


@pytest.mark.parametrize("source", ["keys", "to_dict"])
def test_mistral4_is_deepseek_v3s_layout(source):
    """Mistral 4 (``mistral4``, whose causal LM transformers files under its image-text mapping): DeepSeek-V3's MLA and
    mixture with a shared expert and no score-correction bias, exact to the parameter, the FLOP and the cache against
    Mistral4ForCausalLM; the config class's defaults come to numel() on the meta device (118,972,826,624)."""
    import transformers

    torch.manual_seed(0)
    keys = dict(B, num_key_value_heads=4, kv_lora_rank=32, q_lora_rank=24, qk_nope_head_dim=16, qk_rope_head_dim=8,
                v_head_dim=12, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, moe_intermediate_size=32,
                first_k_dense_replace=1, pad_token_id=None)
    hf = AutoConfig.for_model("mistral4", **keys)
    model = transformers.Mistral4ForCausalLM._from_config(hf, attn_implementation="eager",
                                                          experts_implementation="eager").eval()
    raw = dict(keys, model_type="mistral4") if source == "keys" else json.loads(hf.to_json_string())
    cfg, info = read_config(raw)
    assert cfg.params == sum(p.numel() for p in model.parameters()) and not cfg.router_score_bias
    prefill, decode, per_layer, nbytes = _run(model, 128)
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    assert kv_cache_bytes(cfg, wl) == nbytes
    if source == "to_dict":
        assert info["unknown_keys"] == [], info["unknown_keys"]
        full = AutoConfig.for_model("mistral4")
        with torch.device("meta"):
            big = transformers.Mistral4ForCausalLM(full)
        assert read_config(json.loads(full.to_json_string()))[0].params == sum(p.numel() for p in big.parameters()) \
            == 118_972_826_624


@pytest.mark.parametrize("qk", ["qwen3", "olmo"])
def test_molmo2_counts_its_decoder_with_the_extra_vocabulary(qk):
    """Molmo2: Llama's block with q/k/v biases, q/k norms per head (qwen3) or over the projection (olmo), norms after
    the sublayers; the embedding's additional rows beyond the LM head's — exact to the parameter, the FLOP and the
    cache against Molmo2ForConditionalGeneration on a text prompt; its vision tower and adapter reported beside it,
    equal to numel() of the rest (tiny, with the released files' spellings and a biased projector, and at the class
    defaults)."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    text = dict(B, head_dim=16, additional_vocab_size=8, attention_bias=True, qk_norm_type=qk, norm_after=True,
                pad_token_id=None, bos_token_id=None, eos_token_id=None)
    vision = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                  head_dim=16, image_size=[28, 28], patch_size=14, num_position_embeddings=4)
    adapter = dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=2, head_dim=16, intermediate_size=40,
                   text_hidden_size=64, vision_feature_layer=[-1, -2])
    hf = AutoConfig.for_model("molmo2", text_config=text, vision_config=vision, adapter_config=adapter)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["unknown_keys"] == [], info["unknown_keys"]
    assert (cfg.vocab, cfg.head_vocab, cfg.qk_norm) == (136, 128, "head" if qk == "qwen3" else "width")
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)
    spelled = dict(vision, image_default_input_size=[42, 28], image_patch_size=7, attention_bias=False, num_key_value_heads=1)
    for key in ("image_size", "patch_size", "num_position_embeddings"):
        del spelled[key]
    adapter2 = dict(adapter, vit_layers=[-1], mlp_bias=True, num_key_value_heads=1)
    del adapter2["vision_feature_layer"]
    hf = AutoConfig.for_model("molmo2", text_config=text, vision_config=spelled, adapter_config=adapter2)
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    raw = dict(model_type="molmo2", text_config=dict(text, model_type="molmo2_text"), vision_config=spelled,
               adapter_config=adapter2)
    assert sum(read_config(raw)[1]["vision"].values()) == _outside_decoder(model)
    _wrapper_defaults_are_exact("molmo2")
    from gemmlib.core.errors import InputError

    for bad, match in ((dict(vision_config=dict(vision, num_position_embeddings=None, image_size=378)), "image_size"),
                       (dict(adapter_config=dict(adapter, vision_feature_layer=-1)), "vision_feature_layer")):
        with pytest.raises(InputError, match=match):
            read_config(dict(raw, **bad))


@pytest.mark.parametrize("inner", ["qwen2", "internlm2", "llama"])
def test_internvl_chat_reads_the_llm_of_its_llm_config(inner):
    """InternVL's remote code (``internvl_chat``) keeps its LLM's config in ``llm_config``: read as that decoder,
    to the parameter and the FLOP what the decoder alone reads (Qwen2's and Llama's exact against their transformers
    classes in this file, InternLM2's read from its remote code's layout), its top-level vision keys known; a file without llm_config refused with the reason."""
    from gemmlib.core.errors import InputError

    mt, keys = TINY[inner] if inner in TINY else (inner, dict(B, bias=False))  # (InternLM2: remote code itself)
    llm = dict(keys, model_type=mt)
    alone = read_config(llm)[0]
    cfg, info = read_config(dict(model_type="internvl_chat", architectures=["InternVLChatModel"], llm_config=llm,
                                 vision_config=dict(model_type="intern_vit_6b", hidden_size=32), template="chat",
                                 downsample_ratio=0.5, force_image_size=448, ps_version="v2", select_layer=-1,
                                 dynamic_image_size=True, use_thumbnail=True, max_dynamic_patch=12))
    assert info["wrapper"] == "internvl_chat" and info["unknown_keys"] == [], info["unknown_keys"]
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1)
    assert cfg.params == alone.params and cfg.family == alone.family
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == sum(o.flops for o in prefill_ops(alone, wl))
    with pytest.raises(InputError, match="needs an 'llm_config' object"):
        read_config(dict(model_type="internvl_chat", vision_config={}))


def _causal_is_exact(hf, model, cfg, vocab: int) -> tuple[list[int], int]:
    """A causal LM read as ``cfg``: a prefill and one decode step to the FLOP (FlopCounterMode), the fp32 cache to the
    byte, and its bf16 checkpoint (state_dict, the modules its class keeps in fp32 included) to the byte; the cache's
    elements per layer and its bytes."""
    prefill, decode, per_layer, nbytes = _run(model, vocab)
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    assert kv_cache_bytes(cfg, wl) == nbytes
    torch.manual_seed(0)
    sd = AutoModelForCausalLM.from_config(hf, dtype=torch.bfloat16).state_dict()
    stored = {t.data_ptr(): t for t in sd.values()}  # a tied LM head is the embedding's tensor, stored once
    assert checkpoint_size(cfg, "bf16").bytes == sum(t.nbytes for t in stored.values())
    return per_layer, nbytes


def _reads_as_numel(model_type: str, keys: dict, hf, model):
    """A config read from its keys and from the config class's to_dict(): parameters equal to numel() and no key
    unknown, both ways; the config read."""
    for raw in (dict(keys, model_type=model_type), json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert cfg.params == sum(p.numel() for p in model.parameters())
        assert info["unknown_keys"] == [], info["unknown_keys"]
    return cfg


def _defaults_are_exact(model_type: str):
    """The config class's defaults read as a model: its parameters equal numel() of the causal LM on the meta device."""
    big = AutoConfig.for_model(model_type)
    with torch.device("meta"):
        full = AutoModelForCausalLM.from_config(big)
    cfg, info = read_config(json.loads(big.to_json_string()))
    assert cfg.params == sum(p.numel() for p in full.parameters()) and info["unknown_keys"] == []
    return cfg


INKLING = dict(vocab_size=128, hidden_size=64, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=1,
               head_dim=16, swa_num_attention_heads=4, swa_num_key_value_heads=2, swa_head_dim=16, sliding_window_size=4,
               d_rel=3, rel_extent=6, intermediate_size=96, moe_intermediate_size=32, n_routed_experts=4,
               num_experts_per_tok=2, n_shared_experts=2, pad_token_id=None, bos_token_id=None, eos_token_id=None)


@pytest.mark.parametrize("keys", [
    dict(INKLING, local_layer_ids=[0, 2], dense_mlp_idx=1),  # sliding layers 0 and 2 (window 4 < the prompt), 1 dense
    # a checkpoint's spellings: dense_intermediate_size (intermediate_size is then the experts' width), sconv_kernel_size,
    # the default pattern (every sixth layer full: all three sliding here), every layer a mixture
    dict({k: v for k, v in INKLING.items() if k != "moe_intermediate_size"}, intermediate_size=32,
         dense_intermediate_size=96, sconv_kernel_size=3, num_hidden_layers=2),
])
def test_inkling_is_exact(keys):
    """Inkling (Thinking Machines) from transformers' own class: the short convolutions on K, V, the attention's and the
    MLP's outputs (FlopCounterMode counts each convolution at transformers' output length), the relative bias (r_proj
    and each head's states times the layer's bank, the full and the sliding extents), the full and sliding layers' own
    KV heads, the routed, shared and router-scored shared experts — parameters, a prefill and one decode step to the
    FLOP, the cache (K/V and the four fp32 convolution states per layer) to the byte, and the bf16 checkpoint (the
    convolutions, the router's scale and score bias kept in fp32) to the byte."""
    hf, model = _build("inkling_text", keys)
    cfg = _reads_as_numel("inkling_text", keys, hf, model)
    _, nbytes = _causal_is_exact(hf, model, cfg, hf.vocab_size)
    # in bf16 the K/V halve, the convolution states stay fp32 (transformers computes and keeps them so)
    half = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="bf16")
    assert kv_cache_bytes(cfg, half) == nbytes - (nbytes - BATCH * cfg.short_conv_state() * 4) // 2
    sd = AutoModelForCausalLM.from_config(hf, dtype=torch.bfloat16).state_dict()
    assert any(t.dtype == torch.float32 for t in sd.values())  # (the convolutions: the checkpoint check sees them)


def test_inkling_default_shape_and_refusals():
    """The config class's defaults (the released Inkling's shape) equal numel() on the meta device — 975,340,270,146
    parameters, 41,059,054,146 active per token; a top-level multi-token-prediction count is named and not counted;
    sliding and full layers with different query-head counts are refused with the reason."""
    from gemmlib.core.errors import InputError

    hf = AutoConfig.for_model("inkling_text")
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(hf)
    raw = json.loads(hf.to_json_string())
    cfg, info = read_config(dict(raw, num_mtp_layers=1))
    assert cfg.params == sum(p.numel() for p in model.parameters()) == 975_340_270_146
    assert cfg.active_params == 41_059_054_146 and info["unknown_keys"] == []
    assert cfg.layer_types == "SSSSSF" * 11 and cfg.router_width == 258
    assert any("multi-token-prediction" in str(n) for n in info["notes"])
    with pytest.raises(InputError, match="sliding layers' 32 heads differ from the full layers' 64"):
        read_config(dict(raw, swa_num_attention_heads=32))


def test_the_inkling_wrapper_counts_its_decoder_and_audio_tower():
    """Inkling's multimodal config (inkling_mm_model, its Hub files' model_type): the decoder of its text_config exact to
    the parameter and the FLOP against InklingForConditionalGeneration on a text prompt, the audio tower (a table of
    mel-bin levels at the decoder's width and a norm) counted exactly beside it, the hMLP vision tower named and not
    counted, and the multi-token-prediction count of a top-level mtp_config noted, as the config class moves it."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    text = dict(INKLING, local_layer_ids=[0, 2], dense_mlp_idx=1)
    hf = AutoConfig.for_model("inkling_mm_model", text_config=text, audio_config=dict(n_mel_bins=4, mel_vocab_size=8),
                              vision_config=dict(patch_size=2, temporal_patch_size=2, n_layers=3))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    raw = json.loads(hf.to_json_string())
    raw["text_config"].pop("num_mtp_layers")
    cfg, info = read_config(dict(raw, mtp_config={"num_nextn_predict_layers": 2}))
    assert info["wrapper"] == "inkling_mm_model" and info["unknown_keys"] == [], info["unknown_keys"]
    _decoder_is_exact(model, cfg)
    named = dict(model.named_parameters())
    assert sum(info["audio"].values()) == sum(p.numel() for n, p in named.items() if ".audio_tower." in n) == 4 * 8 * 64 + 64
    assert info["vision"] is None and any("2 multi-token-prediction" in str(n) for n in info["notes"])


def test_axk2_default_shape_and_checkpoint():
    """A.X-K2 (skt/A.X-K2): the config class's defaults (A.X-K2-Light's shape) equal numel() on the meta device, and a
    tiny model's bf16 checkpoint — its routers kept in fp32, as the class keeps them — to the byte."""
    hf = AutoConfig.for_model("axk2")
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(hf)
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert cfg.params == sum(p.numel() for p in model.parameters()) and info["unknown_keys"] == []
    assert cfg.q_gate_latent and cfg.gated_norms == 48 + 47 and cfg.moe_layers == "D" + "M" * 47
    mt, keys = TINY["axk2"]
    tiny_hf, _ = _build(mt, keys)
    torch.manual_seed(0)
    sd = AutoModelForCausalLM.from_config(tiny_hf, dtype=torch.bfloat16).state_dict()
    assert any(t.dtype == torch.float32 for k, t in sd.items() if k.endswith("mlp.gate.weight"))
    assert checkpoint_size(read_config(dict(keys, model_type=mt))[0], "bf16").bytes == sum(t.nbytes for t in sd.values())


INKLING2 = dict(vocab_size=128, unpadded_vocab_size=120, hidden_size=64, num_hidden_layers=8, num_attention_heads=4,
                num_key_value_heads=1, head_dim=16, swa_num_attention_heads=4, swa_num_key_value_heads=2,
                swa_head_dim=16, sliding_window_size=4, d_rel=3, rel_extent=6, moe_intermediate_size=32,
                n_routed_experts=4, num_experts_per_tok=2, n_layers_per_attn_res_block=3,
                layer_types=["hybrid_sliding", "hybrid_sliding", "hybrid", "hybrid_sliding", "hybrid",
                             "hybrid_sliding", "hybrid_sliding", "hybrid"],
                pad_token_id=None, bos_token_id=None, eos_token_id=None)


def test_inkling2_is_exact():
    """Inkling 2 from transformers' own class: the block attention residuals (8 layers in blocks of 3: each input's
    learned queries over the block states so far), the full layers' per-token convolution taps (their filter is
    element-wise: no FLOP FlopCounterMode counts) and three input norms, the projected sinks, the gated output
    projection, the scaled and clipped queries and relative states, the LM head's unpadded rows — parameters, a prefill
    and one decode step to the FLOP, the cache to the byte, the bf16 checkpoint (routers, residual queries and static
    convolutions in fp32, the dynamic ones' static taps not) to the byte; the class defaults' shape equal to numel() on
    the meta device."""
    hf, model = _build("inkling2_text", INKLING2)
    for raw in (dict(INKLING2, model_type="inkling2_text"), json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert cfg.params == sum(p.numel() for p in model.parameters())
        assert info["unknown_keys"] == [], info["unknown_keys"]
    # by hand: layer i's inputs see ceil(i / 3) block states and the running one (a block's first layer's MLP one more);
    # attention inputs 2+6+2+9+3+3+12 query-states (a full layer's three queries), MLP inputs 2+2+2+3+3+3+4+4, final 4
    assert cfg.attn_res_pairs() == (37 + 23 + 4, 19 + 23 + 4, 7 + 8 + 1) and cfg.head_vocab == 120
    _causal_is_exact(hf, model, cfg, 120)
    _defaults_are_exact("inkling2_text")


def test_the_inkling2_wrapper_counts_its_decoder_and_vision_tower():
    """Inkling 2's multimodal config (inkling2): the decoder of its text_config exact to the parameter and the FLOP
    against Inkling2ForConditionalGeneration on a text prompt; its vision tower (patch and position embeddings, a class
    token, biased ViT blocks with layer scales, the two-linear merger with biases here) counted exactly beside it, and
    at the class defaults equal to numel() on the meta device (327,693,312), and so is Inkling-2-Mini's (inkling2_loop),
    whose decoder is the rest of its parameters."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    vision = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=1, num_attention_heads=2, patch_size=4,
                  posemb_grid_size=4, projection_hidden_dim=40, projector_bias=True, text_hidden_size=64)
    hf = AutoConfig.for_model("inkling2", text_config=INKLING2, vision_config=vision)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    raw = json.loads(hf.to_json_string())
    cfg, info = read_config(raw)
    assert info["wrapper"] == "inkling2" and info["unknown_keys"] == [], info["unknown_keys"]
    _decoder_is_exact(model, cfg)
    named = dict(model.named_parameters())
    assert sum(info["vision"].values()) == sum(p.numel() for n, p in named.items() if ".vision_tower." in n)
    # (Inkling-2-Mini's merger ends at its narrower decoder: 4,096 × (4,608 − 2,304) fewer)
    for wrapper, size in (("inkling2", 327_693_312), ("inkling2_loop", 327_693_312 - 4096 * 2304)):
        big = AutoConfig.for_model(wrapper)
        with torch.device("meta"):
            full = AutoModelForImageTextToText.from_config(big)
        cfg, info = read_config(json.loads(big.to_json_string()))
        tower = sum(p.numel() for n, p in full.named_parameters() if ".vision_tower." in n)
        assert sum(info["vision"].values()) == tower == size and info["unknown_keys"] == [], info["unknown_keys"]
        assert cfg.params + tower == sum(p.numel() for p in full.parameters())


def test_inkling2_loop_is_exact():
    """Inkling-2-Mini (inkling2_loop_text) from transformers' own class: 6 layers whose layers 2 and 3 run 3 times,
    each pass with its own cache and restarting from the blocks before the loop, the later passes' message queries over
    the previous pass's blocks and the message gates of every q, k, v and MLP input — parameters (the looped layers'
    weights once), a prefill and one decode step to the FLOP, the cache of every pass to the byte, the bf16 checkpoint
    (the gates' forget and message projections in fp32) to the byte; its checkpoints' loop_config read the same; the
    class defaults equal to numel() on the meta device."""
    keys = dict(INKLING2, num_hidden_layers=6, n_layers_per_attn_res_block=2, loop_layer_index_start=2,
                loop_layer_index_end=4, loop_num_passes=3, loop_gate_rank=5,
                layer_types=["hybrid_sliding", "hybrid", "hybrid_sliding", "hybrid", "hybrid_sliding", "hybrid"])
    hf, model = _build("inkling2_loop_text", keys)
    raw = json.loads(hf.to_json_string())
    cfg, info = read_config(raw)
    assert cfg.params == sum(p.numel() for p in model.parameters()) and info["unknown_keys"] == []
    assert cfg.executed_layers == 10 and cfg.executed_attention_kinds == "SF" + "SF" * 3 + "SF"
    assert len(_causal_is_exact(hf, model, cfg, 120)[0]) == 10  # a cache layer per layer run
    # on GPUs the weights are the stored ones, a looped layer's once: all of them on one, fewer on each of two
    from gemmlib.llm.memory import weights_per_gpu
    from gemmlib.llm.parallel import Parallel

    bf = Workload(batch=1, seq_len=8)
    hw = get_hardware("H100 SXM")
    one, two = (weights_per_gpu(cfg, bf, hw, Parallel(tp=t))["first"] for t in (1, 2))
    assert one == checkpoint_size(cfg, "bf16", mtp=False).bytes and one / 2 < two < one
    for k in ("loop_layer_index_start", "loop_layer_index_end", "loop_num_passes", "loop_gate_rank"):
        raw.pop(k)
    assert read_config(dict(raw, loop_config=dict(core_start=2, core_end=4, num_passes=3, gate_rank=5)))[0] == cfg
    _defaults_are_exact("inkling2_loop_text")


DORY = dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=5, num_attention_heads=4,
            num_key_value_heads=2, head_dim=16, sliding_window=4, n_input_layers=1, n_output_layers=1,
            n_recurrent_loops=3, pad_token_id=None, bos_token_id=None, eos_token_id=None)


@pytest.mark.parametrize("mode, cache_layers", [("per_loop", 11), ("last_loop", 5)])
def test_dory_is_exact(mode, cache_layers):
    """Dory (a looped nGPT) from transformers' own class: one input layer, three recurrent layers run 3 times, one output
    layer; the gated attention with its learned scales, the scaled MLP, parameter-free L2 norms, the residual rates, the
    logit scale — parameters, a prefill and one decode step to the FLOP, and the cache to the byte: a copy of the
    recurrent layers' cache per loop ("per_loop"), or one the last loop writes ("last_loop"); its released layout (an
    attention and an mlp block per layer, the counts doubled) read the same; the bf16 checkpoint and the class
    defaults exact."""
    keys = dict(DORY, recurrent_kv_cache_mode=mode)
    hf, model = _build("dory", keys)
    for raw in (dict(keys, model_type="dory"), json.loads(hf.to_json_string())):  # (to_json: the released layout)
        cfg, info = read_config(raw)
        assert cfg.params == sum(p.numel() for p in model.parameters()) and info["unknown_keys"] == []
    assert cfg.executed_layers == 1 + 3 * 3 + 1 and cfg.loop_shared_cache == (mode == "last_loop")
    assert len(_causal_is_exact(hf, model, cfg, hf.vocab_size)[0]) == cache_layers
    _defaults_are_exact("dory")
    from gemmlib.llm.accounting import rules_of_thumb  # the 2·N rule says why it undercounts a looped stack

    assert "5 stored layers once while 11 layer runs" in str(rules_of_thumb(cfg, Workload(batch=1, seq_len=8))[2]["reason"])


def test_hrm_text_is_exact():
    """HRM-Text from transformers' own class: two stacks of 2 layers, the low-level one run 3 times per high-level
    cycle and the high-level one once, over 2 cycles — 16 layer runs, each its own cache slot; multi-head attention
    with an output gate, parameter-free norms, the learned initial state — parameters, a prefill and one decode step
    to the FLOP, the cache to the byte; the config class's rewritten num_hidden_layers (the runs) and a file's stack
    count read the same; the class defaults (HRM-Text-1B's shape) equal to numel() on the meta device."""
    keys = dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                head_dim=16, H_cycles=2, L_cycles=3, pad_token_id=None, bos_token_id=None, eos_token_id=None)
    hf, model = _build("hrm_text", keys)
    for raw in (dict(keys, model_type="hrm_text"), json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert cfg.params == sum(p.numel() for p in model.parameters()) and info["unknown_keys"] == []
    assert cfg.layers == 4 and cfg.executed_layers == 2 * 2 * (3 + 1)
    assert len(_causal_is_exact(hf, model, cfg, hf.vocab_size)[0]) == 16
    _defaults_are_exact("hrm_text")


def _wrapper_defaults_are_exact(wrapper: str) -> int:
    """A wrapper config class's defaults: the decoder read from its text_config equals numel() of the language model and
    the LM head on the meta device, no key unknown; that count."""
    from transformers import AutoModelForImageTextToText

    big = AutoConfig.for_model(wrapper)
    with torch.device("meta"):
        full = AutoModelForImageTextToText.from_config(big)
    cfg, info = read_config(json.loads(big.to_json_string()))
    decoder = sum(p.numel() for n, p in full.named_parameters()
                  if ".language_model." in f".{n}" or n.startswith("lm_head"))
    assert cfg.params == decoder and info["unknown_keys"] == [], info["unknown_keys"]
    if info["vision"] is not None:  # a counted tower: everything else the wrapper holds but its audio side
        rest = sum(p.numel() for n, p in full.named_parameters() if "audio" not in n)
        assert sum(info["vision"].values()) == rest - decoder
    return decoder


def test_hy_v4_vl_counts_its_hy_v4_decoder():
    """HY-V4-VL (hy_v4_vl): HY-V4's decoder (MLA with DeepSeek Sparse Attention, gated output and sinks, iHC) from its
    text_config, with M-RoPE sections, exact to the parameter and the FLOP against the wrapper's own class on a text
    prompt; its vision tower and merger reported beside it, equal to numel() of the rest (tiny, with fewer KV heads
    than query heads written and a head dim of its own, and at the class defaults); at the class defaults the decoder
    equal to numel() of the language model and the head on the meta device."""
    from transformers import AutoModelForImageTextToText

    mt, keys = TINY["hy_v4"]
    text = dict(keys, rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1]})
    vision = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=1, num_attention_heads=2, patch_size=4,
                  out_hidden_size=64)
    torch.manual_seed(0)
    hf = AutoConfig.for_model("hy_v4_vl", text_config=text, vision_config=vision)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "hy_v4_vl" and info["unknown_keys"] == []
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)
    other = dict(vision, num_key_value_heads=1, head_dim=12, spatial_merge_size=1, max_image_size=64, num_channels=1)
    hf = AutoConfig.for_model("hy_v4_vl", text_config=text, vision_config=other)
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    assert sum(read_config(json.loads(hf.to_json_string()))[1]["vision"].values()) == _outside_decoder(model)
    _wrapper_defaults_are_exact("hy_v4_vl")


def test_cosmos3_edge_counts_its_decoder():
    """Cosmos 3 Edge (cosmos3_edge): Llama's attention with M-RoPE and a plain ReLU² MLP, biased here, from its
    text_config, exact to the parameter and the FLOP against the wrapper's own class on a text prompt; the vision tower
    and merger reported beside it (equal to numel() of the rest), the generation branch its checkpoints carry noted;
    the class defaults' decoder equal to numel() on the meta device (1,946,273,792)."""
    from transformers import AutoModelForImageTextToText

    text = dict(B, head_dim=16, attention_bias=True, mlp_bias=True, pad_token_id=None, bos_token_id=None,
                eos_token_id=None, rope_parameters={"rope_type": "default", "rope_theta": 1e4, "mrope_section": [4, 2, 2]})
    vision = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=1, num_attention_heads=2, patch_size=4)
    torch.manual_seed(0)
    hf = AutoConfig.for_model("cosmos3_edge", text_config=text, vision_config=vision)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "cosmos3_edge" and info["unknown_keys"] == [] and cfg.mlp == "plain"
    assert any("generation branch" in str(n) for n in info["notes"])
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)  # the tower and merger, beside the decoder
    hf = AutoConfig.for_model("cosmos3_edge", text_config=text, vision_config=dict(vision, num_patches=16,
                                                                                   spatial_merge_size=1),
                              projector_hidden_size=24)
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    assert sum(read_config(json.loads(hf.to_json_string()))[1]["vision"].values()) == _outside_decoder(model)
    assert _wrapper_defaults_are_exact("cosmos3_edge") == 1_946_273_792


def test_glm_ocr_counts_its_decoder():
    """GLM-OCR (glm_ocr): GLM-4.1V's decoder without q/k/v biases from its text_config, exact to the parameter and the
    FLOP against the wrapper's own class on a text prompt; the vision tower and merger reported beside it, equal to
    numel() of everything outside the language model and the head (biased or not); the class defaults' decoder and
    tower equal to numel() on the meta device."""
    from transformers import AutoModelForImageTextToText

    text = dict(B, head_dim=16, pad_token_id=None, rope_parameters=_GLM_MROPE)
    torch.manual_seed(0)
    hf = AutoConfig.for_model("glm_ocr", text_config=text, vision_config=dict(_TINY_TOWER))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "glm_ocr" and info["unknown_keys"] == [] and not cfg.qkv_bias
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)
    for tower in (dict(_TINY_TOWER, attention_bias=False), dict(_TINY_TOWER, in_channels=1, spatial_merge_size=1)):
        hf = AutoConfig.for_model("glm_ocr", text_config=text, vision_config=tower)
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(hf)
        assert sum(read_config(json.loads(hf.to_json_string()))[1]["vision"].values()) == _outside_decoder(model)
    _wrapper_defaults_are_exact("glm_ocr")


def _outside_decoder(model) -> int:
    """numel() of a wrapper's parameters outside its language model and LM head: the tower and its projector."""
    return sum(p.numel() for n, p in model.named_parameters()
               if ".language_model." not in f".{n}" and ".text_model." not in f".{n}" and not n.startswith("lm_head"))


def test_muse_glimmer_counts_its_decoder():
    """Muse Glimmer (muse_glimmer): Gemma 2's sandwich block with Afmoe's gated attention, parameter-free q/k norms and
    biases here, every fourth layer counted back from the last full, from its text_config — exact to the parameter and
    the FLOP against the wrapper's own class on a text prompt; the vision tower, its adapter and projection reported
    beside it, equal to numel() of the rest; the class defaults' decoder equal to numel() on the meta device
    (27,854,780,928), and its tower to the rest."""
    from transformers import AutoModelForImageTextToText

    text = dict(B, num_hidden_layers=5, head_dim=16, sliding_window=4, attention_bias=True, pad_token_id=None,
                bos_token_id=None, eos_token_id=None)
    vision = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=2, patch_size=4,
                  layer_types=["window_attention", "full_attention"], pos_emb_height=4, pos_emb_width=4)
    torch.manual_seed(0)
    hf = AutoConfig.for_model("muse_glimmer", text_config=text, vision_config=vision, projector_hidden_size=48)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "muse_glimmer" and info["unknown_keys"] == [] and cfg.layer_types == "FSSSF"
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)
    assert _wrapper_defaults_are_exact("muse_glimmer") == 27_854_780_928


def test_muse_spark_counts_its_latent_moe_decoder():
    """Muse Spark (muse_spark): Muse Glimmer's attention in a block of three weighted norms and two gated residual adds,
    a dense first layer, then latent mixtures — the hidden state projected to the experts' narrower width and normed,
    each expert's output normed, projected back — from its text_config, exact to the parameter and the FLOP against
    the wrapper's own class on a text prompt, its bf16 decoder (routers in fp32) to the byte; the vision tower, its
    adapter and projection reported beside it (numel() of the vision modules), the audio tower named; the class
    defaults' decoder equal to numel() on the meta device."""
    from transformers import AutoModelForImageTextToText

    text = dict(B, num_hidden_layers=3, head_dim=16, sliding_window=4, moe_intermediate_size=24, num_local_experts=4,
                num_experts_per_tok=2, moe_hidden_size=40, mlp_layer_types=["dense", "sparse", "sparse"],
                pad_token_id=None, bos_token_id=None, eos_token_id=None)
    vision = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=2, patch_size=4,
                  layer_types=["window_attention", "full_attention"], pos_emb_height=4, pos_emb_width=4)
    audio = dict(out_hidden_size=64, hidden_sizes=[8, 16], depths=[1, 1], patch_sizes=[16, 2], num_hidden_layers=2)
    torch.manual_seed(0)
    hf = AutoConfig.for_model("muse_spark", text_config=text, vision_config=vision, audio_config=audio,
                              projector_hidden_size=48)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "muse_spark" and info["unknown_keys"] == [] and cfg.expert_width == 40
    assert cfg.moe_layers == "DMM" and any("audio tower" in str(n) for n in info["notes"])
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == sum(p.numel() for n, p in model.named_parameters() if ".vision_" in n)
    torch.manual_seed(0)
    sd = AutoModelForImageTextToText.from_config(hf, dtype=torch.bfloat16).state_dict()
    assert checkpoint_size(cfg, "bf16").bytes == sum(
        t.nbytes for k, t in sd.items() if ".language_model." in f".{k}" or k.startswith("lm_head"))
    _wrapper_defaults_are_exact("muse_spark")


def test_granite4_vision_counts_its_granite_decoder():
    """Granite 4 Vision (granite4_vision): Granite's decoder (biased here) from its text_config, exact to the parameter
    and the FLOP against the wrapper's own class on a text prompt (its forward returns no cache: one is handed in), the
    cache to the byte; the vision tower, the Q-Former projector and the layers they feed named, not counted."""
    from transformers import AutoModelForImageTextToText, DynamicCache

    text = dict(B, attention_bias=True, pad_token_id=None, bos_token_id=None, eos_token_id=None)
    vision = dict(model_type="siglip_vision_model", hidden_size=64, intermediate_size=48, num_hidden_layers=2,
                  num_attention_heads=2, patch_size=4, image_size=32)
    torch.manual_seed(0)
    hf = AutoConfig.for_model("granite4_vision", text_config=text, vision_config=vision,
                              deepstack_layer_map=[[0, 0], [1, 1]], downsample_rate="1/2", spatial_target_layers=[0, 1])
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "granite4_vision" and info["unknown_keys"] == [] and cfg.qkv_bias
    assert cfg.params == sum(p.numel() for n, p in model.named_parameters()
                             if ".language_model." in f".{n}" or n.startswith("lm_head"))
    prefill, decode, cache = prefill_and_decode(model, torch.randint(0, hf.text_config.vocab_size, (BATCH, PROMPT)),
                                                prefill_kwargs={"cache": DynamicCache(config=hf.text_config)})
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    assert kv_cache_bytes(cfg, wl) == _cache_nbytes(cache)[1]


# Qwen4-Exp: DeltaNet layers and QSA-indexed attention, 3 gated hyper-connection streams, prime-sized n-gram tables
QWEN4 = dict(vocab_size=128, hidden_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
             head_dim=16, linear_conv_kernel_dim=4, linear_key_head_dim=8, linear_value_head_dim=8,
             linear_num_key_heads=2, linear_num_value_heads=4, moe_intermediate_size=32,
             shared_expert_intermediate_size=48, num_experts=4, num_experts_per_tok=2, hc_count=3, hc_lowrank=10,
             indexer_n_heads=2, indexer_kv_heads=1, indexer_head_dim=16, indexer_budget=4, indexer_compress_ratio=2,
             ngram_vocab_size_base=50, eos_token_id=1, pad_token_id=None, bos_token_id=None)


@pytest.mark.parametrize("keys", [
    dict(QWEN4, ple_layer_ids=[2]),  # layers L L L I: n-gram embeddings in the second; 2 blocks of 2 keys kept
    dict(QWEN4),  # no n-gram embeddings
    # two PLE layers, 4-grams of 2 heads each over 48 channels, a kernel of 3 (dilation 4), tables padded to 7 rows
    dict(QWEN4, ple_layer_ids=[1, 3], heads_per_ngram=2, ngram_size=4, ple_embed_dim=48, ple_conv_kernel_size=3,
         make_ngram_vocab_size_divisible_by=7),
    # the checkpoints' spelling (full_attention for an indexed layer), 2 streams, blocks of 3 keys, a sigmoid gate
    dict(QWEN4, num_hidden_layers=5, layer_types=["linear_attention", "full_attention", "linear_attention",
                                                  "indexed_attention", "linear_attention"],
         ple_layer_ids=[5], hc_count=2, indexer_compress_ratio=3, indexer_budget=3, output_gate_type="sigmoid"),
])
def test_qwen4_exp_is_exact(keys):
    """Qwen4-Exp (qwen4_exp_text) from transformers' own class: Gated DeltaNet layers, gated attention whose QSA indexer
    scores each query against the mean of every complete block of keys it sees (one query at a time, FlopCounterMode
    counts each product), the residual as n streams through gated hyper-connections (their grouped norms in place of
    the input and final norms), hashed n-gram embeddings with a dilated convolution — parameters (the n-gram tables'
    prime sizes included), a prefill and one decode step to the FLOP, the fp32 cache (K/V, indexer keys, the DeltaNet
    and n-gram states, the int64 token ids and rotary positions) to the byte, the bf16 checkpoint (the hash buffers in
    int64) to the byte."""
    hf, model = _build("qwen4_exp_text", keys)
    cfg = _reads_as_numel("qwen4_exp_text", keys, hf, model)
    assert cfg.index_mean_pool and cfg.hyper_gate_rank == 10 and cfg.layer_types.count("I") >= 1
    _causal_is_exact(hf, model, cfg, hf.vocab_size)


def test_qwen4_exp_at_scale_and_its_engine_counts():
    """The class defaults with a QSA indexer and n-gram embeddings in layers 2 and 6 equal numel() on the meta device
    (149,329,106,048 parameters, 81,920,851,968 of them the two layers' n-gram tables, which no token multiplies); an
    engine's QSA kernel reads at most the budget plus the incomplete block per query; bad configs are refused with
    the reason."""
    from gemmlib.core.errors import InputError
    from gemmlib.llm.accounting import rules_of_thumb

    keys = dict(indexer_n_heads=16, indexer_kv_heads=1, indexer_head_dim=128, indexer_budget=2048,
                indexer_compress_ratio=64, ple_layer_ids=[2, 6], eos_token_id=248044,
                rope_parameters={"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25})
    hf = AutoConfig.for_model("qwen4_exp_text", **keys)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(hf)
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert cfg.params == sum(p.numel() for p in model.parameters()) == 149_329_106_048 and info["unknown_keys"] == []
    tables = sum(p.numel() for n, p in model.named_parameters() if n.endswith("ngram_embedding.weight"))
    # beside the tables, each PLE layer's key and value projections, three norms and a convolution of 4 taps
    assert cfg.param_breakdown()["ngram_embeddings"] - tables == 2 * (2048 * 8192 + 2048 * 2048 + 8192 * (3 + 4))
    assert tables == 81_920_851_968 and cfg.matmul_params < cfg.active_params - tables
    # the 2·N rule's reason names the tables with the embedding among the weights looked up
    reason = str(rules_of_thumb(cfg, Workload(batch=1, seq_len=8))[2]["reason"])
    assert f"counts {248320 * 2048 + tables:,} embedding" in reason
    wl = Workload(batch=1, seq_len=32768, new_tokens=8)
    att = {o.name: o for o in prefill_ops(cfg, wl)}["attn_scores_sparse"]
    dense = {o.name: o for o in prefill_ops(cfg, Workload(batch=1, seq_len=32768, attention="eager", causal=True))}
    assert att.flops < dense["attn_scores"].flops / 7  # 2,048 + ≤ 63 keys per query past the first 2,111 positions
    # decode step i: the query at position 32,768 + i reads 32 blocks of 64 and the 1 + i keys of its incomplete one
    step = {o.name: o for o in decode_ops(cfg, wl)}["attn_scores_sparse"]
    assert step.flops == 2 * 256 * 16 * 10 * (8 * 2048 + sum(range(1, 9)))
    raw = json.loads(hf.to_json_string())
    with pytest.raises(InputError, match="every attention layer has a QSA indexer"):
        read_config({k: v for k, v in raw.items() if k != "indexer_budget"})
    with pytest.raises(InputError, match="linear-attention layers only"):
        read_config(dict(raw, ple_layer_ids=[4]))
    with pytest.raises(InputError, match="must be a multiple of indexer_compress_ratio"):
        read_config(dict(raw, indexer_budget=2000))
    with pytest.raises(InputError, match="256 rotary dims must fit the QSA index head"):  # (the class refuses it too)
        read_config(dict(raw, rope_parameters={"rope_type": "default", "rope_theta": 1e7}))


def test_qsa_key_counts_against_brute_force():
    """QSA's keys per query (every key up to topk complete blocks, then topk blocks and the incomplete block's keys) and
    the complete blocks each query's indexer scores, summed in closed form, equal a loop over the positions."""
    from gemmlib.llm.accounting import _pooled_blocks, _qsa_prefix

    for topk, block in ((1, 1), (2, 2), (3, 4), (32, 64)):
        keys = [p + 1 if (p + 1) // block <= topk else topk * block + (p + 1) % block for p in range(3000)]
        for n in (0, 1, 5, 63, 64, 65, 200, 2111, 2112, 3000):
            assert _qsa_prefix(n, topk, block) == sum(keys[:n])
        for a, b in ((0, 0), (0, 6), (3, 40), (7, 7), (100, 2999)):
            assert _pooled_blocks(a, b, block) == sum((p + 1) // block for p in range(a, b + 1))


def test_the_qwen4_exp_wrapper_counts_its_decoder_and_vision_tower():
    """Qwen4-Exp's multimodal config (qwen4_exp): the decoder of its text_config exact to the parameter and the FLOP
    against Qwen4ExpForConditionalGeneration on a text prompt (M-RoPE), its vision tower (Qwen3.5-MoE's) counted
    exactly beside it, and at the class's vision defaults too."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    text = dict(QWEN4, ple_layer_ids=[2], rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                             "mrope_section": [2, 3, 3]})
    vision = dict(depth=1, hidden_size=32, intermediate_size=48, num_heads=2, patch_size=4, out_hidden_size=64,
                  num_position_embeddings=16)
    hf = AutoConfig.for_model("qwen4_exp", text_config=text, vision_config=vision)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "qwen4_exp" and info["unknown_keys"] == [], info["unknown_keys"]
    _decoder_is_exact(model, cfg)
    named = dict(model.named_parameters())
    assert sum(info["vision"].values()) == sum(p.numel() for n, p in named.items() if ".visual." in n)
    big = AutoConfig.for_model("qwen4_exp", text_config=dict(QWEN4))
    with torch.device("meta"):
        full = AutoModelForImageTextToText.from_config(big)
    _, info = read_config(json.loads(big.to_json_string()))
    assert sum(info["vision"].values()) == sum(p.numel() for n, p in full.named_parameters() if ".visual." in n)


# Dots 3 Note: two indexed layers then sliding ones whose MLA has its own shape (2 heads, latents 12 / 24, head dim 20)
DOTS3 = dict(vocab_size=128, hidden_size=64, intermediate_size=96, moe_intermediate_size=32,
             shared_experts_intermediate_size=40, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=4,
             q_lora_rank=16, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12, head_dim=24,
             n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=2, index_n_heads=2, index_head_dim=16,
             index_topk=4, sliding_window_size=4, swa_num_attention_heads=2, swa_num_key_value_heads=2,
             swa_q_lora_rank=12, swa_kv_lora_rank=24, swa_head_dim=20, swa_qk_nope_head_dim=12, swa_v_head_dim=10,
             pad_token_id=None, bos_token_id=None, eos_token_id=None)


@pytest.mark.parametrize("keys", [
    DOTS3,  # the released file's spelling (swa_* keys): layers I I S S, the first dense
    dict(DOTS3, use_dsa=False),  # no indexer: full attention beside the sliding layers
    dict(DOTS3, num_hidden_layers=6, first_k_dense_replace=2, moe_layer_freq=2),  # I I S S S I, MoE in layers 2, 4
    dict(DOTS3, num_hidden_layers=5, use_sliding_window=False),  # every layer indexed
    dict(DOTS3, mlp_layer_types=["sparse", "dense", "sparse", "sparse"],
         layer_types=["full_attention", "sliding_attention", "full_attention", "sliding_attention"]),
])
def test_dots3_note_is_exact(keys):
    """Dots 3 Note (dots3_note_text) from transformers' own class: DeepSeek-V3.2's MLA, indexer and mixture with a
    per-head gate and a rotary-key norm, sliding layers (window 4 < the prompt) whose MLA has a shape of its own (read
    from the swa_* keys and from the per_layer_config transformers writes), the dense layers by first_k_dense_replace
    and moe_layer_freq — parameters, a prefill and one decode step to the FLOP, the fp32 cache (each kind of layer's
    latent and rotary key, the indexer's keys) to the byte, the bf16 checkpoint (the routers in fp32) to the byte."""
    hf, model = _build("dots3_note_text", keys)
    cfg = _reads_as_numel("dots3_note_text", keys, hf, model)
    per_layer, _ = _causal_is_exact(hf, model, cfg, hf.vocab_size)
    assert [cfg.kv_elements_of(k) * BATCH * cfg.cached_tokens(k, PROMPT + 1) for k in cfg.attention_kinds] == per_layer


def test_dots3_note_defaults_wrapper_and_engine_counts():
    """The class defaults (46 layers, 13 indexed and 33 sliding with their own MLA) equal numel() on the meta device,
    279,551,718,016 parameters; the multimodal dots3_note reads the same decoder from its text_config and from the
    top-level keys its released files keep, its vision and audio towers named, not counted; an engine's sliding layers
    read their window whatever the indexer's top-k; a sliding shape that differs between layers is refused."""
    from transformers import AutoModelForImageTextToText

    from gemmlib.core.errors import InputError

    cfg = _defaults_are_exact("dots3_note_text")
    assert cfg.params == 279_551_718_016 and cfg.layer_types.count("S") == 33
    assert cfg.attention_shape("S").kv_elements_per_token_layer == 1024 + 64 and cfg.kv_elements_of("I") == 576 + 128
    big = AutoConfig.for_model("dots3_note")
    with torch.device("meta"):
        full = AutoModelForImageTextToText.from_config(big)
    raw = json.loads(big.to_json_string())
    flat = dict(raw["text_config"], model_type="dots3_note")
    for config in (raw, flat):
        wrapped, info = read_config(config)
        assert wrapped.params == cfg.params == sum(
            p.numel() for n, p in full.named_parameters() if ".language_model." in f".{n}" or n.startswith("lm_head"))
        assert info["wrapper"] == "dots3_note" and info["unknown_keys"] == []
    ops = {o.name: o for o in prefill_ops(cfg, Workload(batch=1, seq_len=32768))}
    sl = cfg.attention_shape("S")
    assert ops["attn_scores_sliding"].flops == 2 * sl.head_dim * sl.heads * 33 * (512 * 513 // 2 + (32768 - 512) * 512)
    text = json.loads(AutoConfig.for_model("dots3_note_text").to_json_string())
    text["per_layer_config"]["03"] = dict(text["per_layer_config"]["03"], kv_lora_rank=512)
    with pytest.raises(InputError, match="entries differ"):
        read_config(text)


# ZAYA1: CCA's two convolutions (2 taps each), 2 KV heads of 16, a router MLP of 24, top-1 of 4 experts and a skip
ZAYA = dict(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            head_dim=16, moe_intermediate_size=32, num_experts=4, num_experts_per_tok=1, router_hidden_size=24,
            pad_token_id=None, bos_token_id=None, eos_token_id=None)


@pytest.mark.parametrize("keys", [
    ZAYA,  # full layers, the head tied
    # a sliding layer (window 4 < the prompt), wider kernels (3 and 2), biases on attention and the LM head, untied
    dict(ZAYA, num_hidden_layers=3, layer_types=["hybrid", "hybrid_sliding", "hybrid"], sliding_window=4, cca_time0=3,
         attention_bias=True, lm_head_bias=True, tie_word_embeddings=False),
])
def test_zaya_is_exact(keys):
    """ZAYA1 (zaya) from transformers' own class: compressed convolutional attention (q|k through a depthwise and a
    head-grouped convolution, FlopCounterMode counting each at the lengths transformers convolves; the delayed values'
    zero row in the prefill), the router MLP with the previous layer's state, the top-1 mixture with a skip choice,
    the residual scales — parameters, a prefill and one decode step to the FLOP, the fp32 cache (K/V, the convolution
    state and the delayed values) to the byte, the bf16 checkpoint (the balancing biases in fp32) to the byte."""
    hf, model = _build("zaya", keys)
    cfg = _reads_as_numel("zaya", keys, hf, model)
    assert cfg.cca_depthwise and cfg.router_hidden == 24 and cfg.zero_experts == 1
    _causal_is_exact(hf, model, cfg, hf.vocab_size)


def test_zaya_defaults_and_engine_counts():
    """The class defaults (ZAYA1-8B's shape) equal numel() on the meta device; an engine counts no zero row for the
    delayed values; two experts per token are refused as the config class refuses them."""
    from gemmlib.core.errors import InputError

    cfg = _defaults_are_exact("zaya")
    assert cfg.params == 8_840_488_784
    ref = {o.name for o in prefill_ops(cfg, _reference(batch=1, seq_len=16))}
    eng = {o.name for o in prefill_ops(cfg, Workload(batch=1, seq_len=16))}
    assert "cca_v_init" in ref and "cca_v_init" not in eng and "cca_conv_grouped" in eng
    raw = json.loads(AutoConfig.for_model("zaya").to_json_string())
    with pytest.raises(InputError, match="picks one expert per token"):
        read_config(dict(raw, num_experts_per_tok=2))


# Step 3.7 Flash's decoder: full and sliding layers (8 query heads in the sliding ones, 4 in the full), a dense first
# layer, then experts (fused gate|up) beside a shared expert
STEP3P5 = dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
               num_key_value_heads=2, head_dim=16, moe_intermediate_size=32, n_routed_experts=4, num_experts_per_tok=2,
               share_expert_dim=40, sliding_window=4, num_sliding_attention_heads=8,
               layer_types=["full_attention", "sliding_attention", "full_attention", "sliding_attention"],
               mlp_layer_types=["dense", "sparse", "sparse", "sparse"], pad_token_id=1, bos_token_id=None,
               eos_token_id=None)


@pytest.mark.parametrize("keys", [
    STEP3P5,
    dict(STEP3P5, mlp_layer_types=None, moe_layers_enum="1,3"),  # a released file's MoE layer list
    dict(STEP3P5, num_sliding_attention_heads=None, attention_other_setting={"num_attention_heads": 2}),
    dict(STEP3P5, layer_types=None),  # every layer full
])
def test_step3p7_counts_its_decoder_exactly(keys):
    """Step 3.7 Flash (step3p7, its decoder step3p5, which transformers builds only inside the multimodal class): Laguna's
    attention with a gate per head, the sliding layers' own query-head count (read from num_sliding_attention_heads,
    a released file's attention_other_setting and the per_layer_config transformers writes), the dense and MoE layers by
    mlp_layer_types or moe_layers_enum — parameters, a prefill and one decode step on a text prompt to the FLOP, the
    fp32 cache to the byte, the decoder's bf16 tensors (the score-correction buffer at the model's dtype) to the byte;
    the vision tower, its downsamplers and projector reported beside it, equal to numel() of the rest (its MLP
    int(hidden × mlp_ratio) wide; the checkpoints' width / layers spellings read as the config class reads them)."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    vision = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, image_size=28, patch_size=14,
                  mlp_ratio=1.5)
    hf = AutoConfig.for_model("step3p7", text_config=copy.deepcopy(keys), vision_config=vision)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    for raw in (dict(model_type="step3p7", text_config=dict(keys, model_type="step3p5")),
                json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert info["wrapper"] == "step3p7" and info["unknown_keys"] == [], info["unknown_keys"]
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)
    sd = AutoModelForImageTextToText.from_config(hf, dtype=torch.bfloat16).state_dict()
    assert checkpoint_size(cfg, "bf16").bytes == sum(t.nbytes for k, t in sd.items()
                                                    if ".language_model." in f".{k}" or k.startswith("lm_head"))
    spelled = dict(width=24, layers=2, heads=2, image_size=28, patch_size=7, mlp_ratio=2.5, intermediate_size=9)
    hf = AutoConfig.for_model("step3p7", text_config=copy.deepcopy(keys), vision_config=spelled, projector_bias=True)
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    raw = dict(model_type="step3p7", text_config=dict(keys, model_type="step3p5"), vision_config=spelled,
               projector_bias=True)
    assert sum(read_config(raw)[1]["vision"].values()) == _outside_decoder(model)
    from gemmlib.core.errors import InputError

    with pytest.raises(InputError, match="mlp_ratio"):
        read_config(dict(raw, vision_config=dict(spelled, mlp_ratio="wide")))


def test_step3p7_released_layout_and_defaults():
    """A released file's spelling (its per-layer lists padded with three multi-token-prediction layers, aliases such as
    moe_num_experts and share_expert_dims) reads as the config class reads it, the MTP layers named, not counted; the
    class defaults' decoder equals numel() of the language model and the head on the meta device."""
    from transformers import AutoModelForImageTextToText

    text = dict(STEP3P5, num_nextn_predict_layers=3, layer_types=STEP3P5["layer_types"] + ["full_attention"] * 3,
                mlp_layer_types=STEP3P5["mlp_layer_types"] + ["sparse"] * 3)
    text["moe_num_experts"], text["share_expert_dims"] = text.pop("n_routed_experts"), text.pop("share_expert_dim")
    hf = AutoConfig.for_model("step3p7", text_config=copy.deepcopy(text))
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    cfg, info = read_config(dict(model_type="step3p7", text_config=dict(text, model_type="step3p5")))
    assert cfg.params == sum(p.numel() for n, p in model.named_parameters()
                             if ".language_model." in f".{n}" or n.startswith("lm_head"))
    assert cfg.layer_types == "FSFS" and any("multi-token-prediction" in str(n) for n in info["notes"])
    assert _wrapper_defaults_are_exact("step3p7") > 0


# Mistral Large 4: MLA without a query latent under GLM-5's DSA (4 heads, latent 32 + rotary 8, an indexer of 2 × 16)
ML4 = dict(vocab_size=128, hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=4,
           num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8,
           v_head_dim=12, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1, index_n_heads=2,
           index_head_dim=16, index_topk=4, pad_token_id=None, bos_token_id=None, eos_token_id=None)
_ML4_TOWER = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=1, num_attention_heads=2, patch_size=4,
                  image_size=32, head_dim=16)


@pytest.mark.parametrize(("keys", "letters"), [
    (ML4, "IIIJ"),  # the defaults' layout: NoPE every fourth layer, every layer its own indexer and latent
    (dict(ML4, kv_source_layers=[0, 1, 0, 3], indexer_types=["full", "shared", "full", "shared"]), "IFiG"),
    # every kind: NoPE every other layer, the last four reading the latents of layers 0 and 1 (of their rotary kind)
    (dict(ML4, num_hidden_layers=6, no_rope_layers=[1, 0, 1, 0, 1, 0], kv_source_layers=[0, 1, 0, 1, 0, 1],
          indexer_types=["full", "full", "shared", "full", "full", "shared"]), "IJfjig"),
    (dict(ML4, num_hidden_layers=5, no_rope_layer_interval=2, index_topk_pattern="FSFFS",
          mlp_layer_types=["dense", "sparse", "dense", "sparse", "sparse"]), "IGIJF"),
])
def test_mistral_large4_counts_its_decoder_exactly(keys, letters):
    """Mistral Large 4 (mistral_large4, decoder mistral_large4_text, which transformers builds only inside the
    multimodal class): MLA without a query latent, the indexer's queries from the normed hidden state and a learned
    log-position scale per head on both, NoPE layers whose MLA has no rotary dims (read from no_rope_layers or
    no_rope_layer_interval), layers reading an earlier layer's latent (kv_source_layers: no kv_a_proj, the indexer's
    keys their only cache), indexers by indexer_types or index_topk_pattern — parameters, a prefill and one decode
    step on a text prompt to the FLOP, the fp32 cache to the byte, the decoder's bf16 tensors (the router and LeRoPE's
    scales in fp32) to the byte; the Pixtral tower and projector counted exactly beside it."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    hf = AutoConfig.for_model("mistral_large4", text_config=copy.deepcopy(keys), vision_config=dict(_ML4_TOWER))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    for raw in (dict(model_type="mistral_large4", text_config=dict(keys, model_type="mistral_large4_text"),
                     vision_config=dict(_ML4_TOWER)), json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert info["wrapper"] == "mistral_large4" and info["unknown_keys"] == [], info["unknown_keys"]
        assert cfg.layer_types == letters
        assert sum(info["vision"].values()) == sum(p.numel() for n, p in model.named_parameters()
                                                   if ".language_model." not in f".{n}" and not n.startswith("lm_head"))
    _decoder_is_exact(model, cfg)
    sd = AutoModelForImageTextToText.from_config(hf, dtype=torch.bfloat16).state_dict()
    assert checkpoint_size(cfg, "bf16").bytes == sum(t.nbytes for k, t in sd.items()
                                                    if ".language_model." in f".{k}" or k.startswith("lm_head"))


def test_mistral_large4_defaults_engine_counts_and_refusals():
    """The class defaults (72 layers, NoPE every fourth) read from the wrapper and from its text config: the decoder
    equal to numel() of the language model and the head on the meta device, 1,050,118,202,912 parameters (the model
    card's 1T) with 53,098,587,680 active (A52B, with the embedding); the cache per token and layer is the latent and
    rotary key (576) and the indexer's key (128), 512 + 128 in a NoPE layer, the indexer's key alone in a layer
    reading another's latent; an engine's absorbed decode scores a NoPE layer over the latent alone. A latent read
    from a layer that does not keep its own, or across rotary kinds, is refused with the reason."""
    from gemmlib.core.errors import InputError

    assert _wrapper_defaults_are_exact("mistral_large4") == 1_050_118_202_912
    text = json.loads(AutoConfig.for_model("mistral_large4_text").to_json_string())
    cfg, info = read_config(text)
    assert cfg.params == 1_050_118_202_912 and cfg.active_params == 53_098_587_680 and info["unknown_keys"] == []
    assert cfg.layer_types == "IIIJ" * 18 and cfg.describe()["mla"]["without_rope"]["layers"] == 18
    assert (cfg.kv_elements_of("I"), cfg.kv_elements_of("J")) == (576 + 128, 512 + 128)
    shared, _ = read_config(dict(text, kv_source_layers=list(range(68)) + [64, 65, 66, 67]))
    assert shared.layer_types.endswith("iiij") and shared.kv_elements_of("i") == shared.kv_elements_of("j") == 128
    assert shared.params == cfg.params - 4 * (6144 * 512 + 512) - 3 * 6144 * 64  # no kv_a_proj nor latent norm
    wl = Workload(batch=1, seq_len=4096, new_tokens=2)
    scores = sum(o.flops for o in decode_ops(cfg, wl) if o.name == "attn_scores")
    # two steps, each query against DSA's top 2,048 keys: 64 heads over latent + rotary key (a NoPE layer: the latent)
    assert scores == 2 * 64 * (54 * 576 + 18 * 512) * 2 * 2048
    for bad, match in ((dict(kv_source_layers=[0, 0, 1] + list(range(3, 72))), "keeps its own"),
                       (dict(kv_source_layers=[0, 1, 2, 2] + list(range(4, 72))), "both use RoPE"),
                       (dict(no_rope_layers=[1] * 71), "0 \\(NoPE\\) or 1")):
        with pytest.raises(InputError, match=match):
            read_config(dict(text, **bad))


# GLM-5-Next: KDA layers and MLA without rotary dims under an indexer over pools of 4 keys (the prompt, 7, leaves a
# pool incomplete), two hyper-connection streams
GLM5N = dict(vocab_size=128, hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=4,
             num_attention_heads=4, num_key_value_heads=4, q_lora_rank=16, kv_lora_rank=32, qk_nope_head_dim=16,
             v_head_dim=12, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1, index_n_heads=2,
             index_head_dim=16, index_topk=8, index_kpool=4, linear_head_dim=8, linear_num_heads=4, hc_mult=2,
             mlp_layer_types=["dense", "sparse", "sparse", "sparse"], pad_token_id=None)
_GLM5N_TOWER = dict(hidden_size=32, intermediate_size=48, depth=1, num_heads=2, patch_size=4, out_hidden_size=64,
                    projection_intermediate_size=40)


@pytest.mark.parametrize(("keys", "letters"), [
    (GLM5N, "KKKJ"),  # the defaults' layout: an attention layer every fourth
    (dict(GLM5N, layer_types=["linear_attention", "indexed_attention", "indexed_attention", "linear_attention"],
          indexer_types=["full", "full", "shared", "full"], linear_attn_config=dict(num_heads=2, head_dim=4)),
     "KJGK"),  # the second attention layer reuses the top-k; a checkpoint's KDA shape in linear_attn_config
    (dict(GLM5N, num_hidden_layers=3, layer_types=["indexed_attention"] * 3, index_topk=4, index_kpool=2,
          mlp_layer_types=["dense", "sparse", "sparse"]), "JJJ"),
])
def test_glm5_next_counts_its_decoder_exactly(keys, letters):
    """GLM-5-Next (glm5_next, decoder glm5_next_text, built only inside the multimodal class): Kimi delta attention
    beside MLA without rotary dims whose DSA indexer scores the gated averages of complete pools (the pools' gate
    projection counted, every query against every complete pool of the cache in transformers), a layer reusing the
    previous one's choice, hyper-connections that mix the streams and end in a plain mean, 3-D experts with a
    score-corrected fp32 router — parameters, a prefill and one decode step on a text prompt to the FLOP, the fp32
    cache (the latent; the indexer's key, gate scores and validity flag; KDA's states) to the byte, the decoder's bf16
    tensors (the convolutions, dt_bias, A_log and the hyper-connections' biases and scales in fp32) to the byte."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    hf = AutoConfig.for_model("glm5_next", text_config=copy.deepcopy(keys), vision_config=dict(_GLM5N_TOWER))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    for raw in (dict(model_type="glm5_next", text_config=dict(keys, model_type="glm5_next_text")),
                json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert info["wrapper"] == "glm5_next" and info["unknown_keys"] == [], info["unknown_keys"]
        assert cfg.layer_types == letters
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)  # GLM-OCR's tower, its merger's own width
    sd = AutoModelForImageTextToText.from_config(hf, dtype=torch.bfloat16).state_dict()
    assert checkpoint_size(cfg, "bf16").bytes == sum(t.nbytes for k, t in sd.items()
                                                    if ".language_model." in f".{k}" or k.startswith("lm_head"))


def _glm5_engine_keys(n: int, topk: int, kpool: int) -> tuple[int, int]:
    """Brute force over query positions 0 … n − 1: (keys attended, complete pools scored) under GLM-5-Next's
    selection — a query sees p + 1 keys, scores their complete pools, keeps topk / kpool of them and the keys of its
    incomplete pool."""
    keys = pools = 0
    for p in range(n):
        complete = (p + 1) // kpool
        keys += min(complete, topk // kpool) * kpool + (p + 1) - complete * kpool
        pools += complete
    return keys, pools


def test_glm5_next_defaults_engine_counts_and_refusals():
    """The class defaults (45 layers: 34 KDA, 11 attention) read from the wrapper, flat and nested: the decoder equal to
    numel() of the language model and the head on the meta device, 313,326,816,766 parameters; an engine's prefill
    attends, per query, to its chosen pools and its incomplete one and scores only the complete pools it sees (both
    against a brute force over positions); a shared layer not right after an indexing attention layer, rotary dims
    and an indexer that drops the incomplete pool are refused with the reason."""
    from gemmlib.core.errors import InputError

    assert _wrapper_defaults_are_exact("glm5_next") == 313_326_816_766
    raw = json.loads(AutoConfig.for_model("glm5_next").to_json_string())
    flat, info = read_config(dict(raw["text_config"], model_type="glm5_next"))
    assert flat.params == 313_326_816_766 and info["wrapper"] == "glm5_next" and flat.layer_types == "KKKJ" * 11 + "K"
    assert flat.kv_elements_of("J") == 512 + 2 * 128 + 1
    n = 5003
    ops = {o.name: o for o in prefill_ops(flat, Workload(batch=1, seq_len=n))}
    keys, pools = _glm5_engine_keys(n, 2048, 16)
    assert ops["attn_scores"].flops == 2 * 256 * 64 * 11 * keys
    assert ops["index_scores"].flops == 2 * 128 * 32 * 11 * pools
    text = raw["text_config"]
    for bad, match in ((dict(indexer_types=["full", "full", "full", "shared"] + ["full"] * 41), "must be an attention"),
                       (dict(qk_rope_head_dim=64), "no rotary dims"),
                       (dict(index_kpool_always_select_tail=False), "incomplete pool")):
        with pytest.raises(InputError, match=match):
            read_config(dict(text, **bad))


# ERNIE 4.5 VL: text experts 32 wide and image experts 16 wide in every MoE layer; M-RoPE sections for a 16-dim head
ERNIE_VL = dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
                num_key_value_heads=2, moe_intermediate_size=[32, 16], moe_k=2, moe_num_experts=4,
                moe_num_shared_experts=1, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                           "mrope_section": [3, 3, 2]})


@pytest.mark.parametrize(("keys", "top"), [
    (ERNIE_VL, {}),  # the first layer dense, the head tied (the wrapper's default)
    (dict(ERNIE_VL, use_bias=True, mlp_layer_types=["sparse", "dense", "sparse"]), dict(tie_word_embeddings=False)),
])
def test_ernie4_5_vl_counts_its_decoder_exactly(keys, top):
    """ERNIE 4.5 VL (ernie4_5_vl_moe, decoder ernie4_5_vl_moe_text): ERNIE 4.5 MoE's block with, in every MoE layer,
    the image tokens' experts and router beside the text ones — stored (parameters, the bf16 checkpoint with both
    routers in fp32, to the byte) and never run on a text prompt (a prefill and one decode step to the FLOP, the fp32
    cache to the byte); active parameters leave them out, and each GPU holds its share of them as of the text
    experts."""
    from transformers import AutoModelForImageTextToText

    from gemmlib.llm.memory import weights_per_gpu
    from gemmlib.llm.parallel import Parallel

    torch.manual_seed(0)
    hf = AutoConfig.for_model("ernie4_5_vl_moe", text_config=copy.deepcopy(keys), vision_config=dict(_TINY_TOWER),
                              **top)
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager",
                                                     experts_implementation="eager").eval()
    for raw in (dict(model_type="ernie4_5_vl_moe", text_config=dict(keys, model_type="ernie4_5_vl_moe_text"), **top),
                json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert info["wrapper"] == "ernie4_5_vl_moe" and info["unknown_keys"] == [], info["unknown_keys"]
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)  # the tower and its resampler, beside the decoder
    sd = AutoModelForImageTextToText.from_config(hf, dtype=torch.bfloat16).state_dict()
    stored = {t.data_ptr(): t for k, t in sd.items() if ".language_model." in f".{k}" or k.startswith("lm_head")}
    assert checkpoint_size(cfg, "bf16").bytes == sum(t.nbytes for t in stored.values())
    image = sum(p.numel() for n, p in model.named_parameters() if ".vision_moe." in n)
    assert cfg.param_breakdown()["vision_experts"] == image and cfg.active_params < cfg.params - image
    wl, hw = Workload(batch=1, seq_len=8), get_hardware("H100 SXM")
    one = weights_per_gpu(cfg, wl, hw, Parallel())["first"]
    experts = sum(t.nbytes for k, t in sd.items() if ".experts." in k)  # text and image experts, bf16
    assert one - weights_per_gpu(cfg, wl, hw, Parallel(ep=2))["first"] == pytest.approx(experts / 2)


def test_ernie4_5_vl_defaults():
    """The class defaults (ERNIE-4.5-VL-28B-A3B's shape): the decoder equal to numel() of the language model and the
    head on the meta device, 28,624,635,776 parameters, 3,352,150,208 active on text (the card's A3B), the image
    experts 6,799,197,888 of them, the vision tower and resampler beside it; two widths are needed."""
    from gemmlib.core.errors import InputError

    assert _wrapper_defaults_are_exact("ernie4_5_vl_moe") == 28_624_635_776
    text = json.loads(AutoConfig.for_model("ernie4_5_vl_moe").to_json_string())["text_config"]
    cfg, _ = read_config(text)
    assert (cfg.active_params, cfg.param_breakdown()["vision_experts"]) == (3_352_150_208, 6_799_197_888)
    with pytest.raises(InputError, match="widths"):
        read_config(dict(text, moe_intermediate_size=[1536]))


CHAMELEON = dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocabulary_map={"<image>": 127},
                 vq_config=dict(embed_dim=8, num_embeddings=16, latent_channels=8, base_channels=32,
                                channel_multiplier=[1, 1], resolution=16, num_res_blocks=1))


@pytest.mark.parametrize("keys", [CHAMELEON, dict(CHAMELEON, swin_norm=True, attention_bias=True, mlp_bias=True)])
def test_chameleon_is_exact(keys):
    """Chameleon (Meta) from transformers' own class: Llama's block with a LayerNorm over each query and key head
    (a weight and a bias per head and dim), the norms before or after each sublayer (swin_norm), biases by
    attention_bias and mlp_bias — parameters, a prefill and one decode step to the FLOP, the fp32 cache and the bf16
    checkpoint to the byte; its VQ-VAE image tokenizer named, not counted. At the class defaults (Chameleon-7B's
    shape) the decoder equals numel() on the meta device: 7,013,666,816 parameters."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    hf = AutoConfig.for_model("chameleon", **copy.deepcopy(keys))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    for raw in (dict(keys, model_type="chameleon"), json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert info["unknown_keys"] == [] and any("VQ-VAE" in str(n) for n in info["notes"])
        assert cfg.params == sum(p.numel() for n, p in model.named_parameters() if ".vqmodel." not in f".{n}")
    prefill, decode, _, nbytes = _run(model, hf.vocab_size)
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert (sum(o.flops for o in prefill_ops(cfg, wl)), sum(o.flops for o in decode_ops(cfg, wl))) == (prefill, decode)
    assert kv_cache_bytes(cfg, wl) == nbytes
    sd = AutoModelForImageTextToText.from_config(hf, dtype=torch.bfloat16).state_dict()
    assert checkpoint_size(cfg, "bf16").bytes == sum(t.nbytes for k, t in sd.items() if ".vqmodel." not in f".{k}")
    big = AutoConfig.for_model("chameleon", vocabulary_map={"<image>": 8711})  # (the model needs the image token)
    with torch.device("meta"):
        full = AutoModelForImageTextToText.from_config(big)
    cfg, _ = read_config(json.loads(big.to_json_string()))
    assert cfg.params == sum(p.numel() for n, p in full.named_parameters() if ".vqmodel." not in f".{n}") == 7_013_666_816


# Zamba2: Mamba-2 layers and three hybrid ones running two shared blocks in turn (the third reuses the first)
ZAMBA2 = dict(vocab_size=128, hidden_size=32, num_hidden_layers=6, intermediate_size=48, mamba_d_state=8,
              n_mamba_heads=4, mamba_ngroups=1, num_attention_heads=4, num_key_value_heads=4, num_mem_blocks=2,
              use_shared_attention_adapter=True, adapter_rank=4, chunk_size=4, pad_token_id=0,
              layers_block_type=["mamba", "hybrid", "mamba", "hybrid", "mamba", "hybrid"])


@pytest.mark.parametrize("keys", [
    ZAMBA2,  # adapters on q, k, v and gate|up; the third hybrid layer reuses the first block
    dict(ZAMBA2, use_shared_attention_adapter=False, num_mem_blocks=1, use_mem_rope=True, add_bias_linear=True),
    dict(ZAMBA2, num_mem_blocks=4, num_key_value_heads=2, use_shared_attention_adapter=False),  # more blocks than runs
])
def test_zamba2_is_exact(keys):
    """Zamba2 (Zyphra) from transformers' own class: Mamba-2 layers, and hybrid ones that first run a shared attention-
    and-MLP block (num_mem_blocks of them, used in turn and stored once) on [hidden state; embedding], with each run's
    own low-rank adapters and output projection — parameters (tied blocks once), a prefill and one decode step to the
    FLOP (every run of a block counted), the fp32 cache (the hybrid layers' K/V and every layer's Mamba-2 state) and the
    bf16 checkpoint (tied tensors once) to the byte; on one GPU the weights held are the checkpoint's bytes."""
    from gemmlib.llm.memory import weights_per_gpu
    from gemmlib.llm.parallel import Parallel

    hf, model = _build("zamba2", keys)
    cfg = _reads_as_numel("zamba2", keys, hf, model)
    assert cfg.layer_types == "2P2P2P" and cfg.stored_blocks == min(keys["num_mem_blocks"], 3)
    _causal_is_exact(hf, model, cfg, hf.vocab_size)
    one = weights_per_gpu(cfg, Workload(batch=1, seq_len=8), get_hardware("H100 SXM"), Parallel())["first"]
    assert one == checkpoint_size(cfg, "bf16").bytes


def test_zamba2_defaults_and_refusals():
    """The class defaults (54 layers, 9 hybrid, one block) equal numel() on the meta device, 2,481,848,336 parameters;
    untied embeddings (which untie the blocks too in transformers), adapters on k and v with fewer KV heads, and a
    model without a hybrid layer are refused with the reason."""
    from gemmlib.core.errors import InputError

    cfg = _defaults_are_exact("zamba2")
    assert cfg.params == 2_481_848_336 and cfg.block_layers == 9 and cfg.stored_blocks == 1
    raw = json.loads(AutoConfig.for_model("zamba2").to_json_string())
    for bad, match in ((dict(tie_word_embeddings=False), "unties its shared"),
                       (dict(use_shared_attention_adapter=True, num_key_value_heads=8), "num_key_value_heads"),
                       (dict(layers_block_type=["mamba"] * 54, hybrid_layer_ids=[]), "no hybrid")):
        with pytest.raises(InputError, match=match):
            read_config(dict(raw, **bad))


@pytest.mark.parametrize("keys", [dict(B), dict(B, num_key_value_heads=4, head_dim=24, attention_bias=True)])
def test_diffllama_is_exact(keys):
    """DiffLlama (the Differential Transformer on Llama's block) from transformers' own class: each head's queries and
    keys scored twice, once against each half of the value heads, λ vectors per layer and an unweighted RMSNorm —
    parameters, a prefill and one decode step to the FLOP, the fp32 cache and the bf16 checkpoint to the byte; the
    engine convention runs the same two calls (transformers' flash path does too). At the class defaults the model
    equals numel() on the meta device: 1,204,885,504 parameters."""
    from gemmlib.core.errors import InputError

    hf, model = _build("diffllama", keys)
    cfg = _reads_as_numel("diffllama", keys, hf, model)
    assert cfg.diff_attention and cfg.attn_calls == 2
    _causal_is_exact(hf, model, cfg, hf.vocab_size)
    engine = Workload(batch=BATCH, seq_len=PROMPT, new_tokens=1)
    scores = next(o for o in prefill_ops(cfg, engine) if o.name == "attn_scores")
    plain, _ = read_config(dict(keys, model_type="llama"))
    once = next(o for o in prefill_ops(plain, engine) if o.name == "attn_scores")
    assert scores.flops == 2 * once.flops and "differential" in str(scores.note)
    assert _defaults_are_exact("diffllama").params == 1_204_885_504
    for bad, match in ((dict(num_key_value_heads=1), "even"), (dict(attention_dropout=0.1), "attention_dropout")):
        with pytest.raises(InputError, match=match):
            read_config(dict(keys, **bad, model_type="diffllama"))


MBD = dict(B, num_key_value_heads=None, local_attention=8, layer_types=None, num_hidden_layers=4, pad_token_id=0,
           bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2)


@pytest.mark.parametrize("keys", [MBD, dict(MBD, norm_bias=True, attention_bias=True, mlp_bias=True, classifier_bias=True,
                                            decoder_bias=False, global_attn_every_n_layers=2, tie_word_embeddings=False)])
def test_modernbert_decoder_is_exact(keys):
    """ModernBERT's decoder (Ettin's) from transformers' own class: an embedding LayerNorm and none before the first
    layer's attention, GeGLU in one fused Wi, local layers of window local_attention // 2 (4 here, shorter than the
    prompt) beside global ones, and the prediction head (dense, activation, norm) before the LM head with its bias —
    parameters, a prefill and one decode step to the FLOP, the fp32 cache and the bf16 checkpoint to the byte. At the
    class defaults the model equals numel() on the meta device: 149,655,232 parameters."""
    keys = {k: v for k, v in keys.items() if v is not None}
    hf, model = _build("modernbert-decoder", keys)
    cfg = _reads_as_numel("modernbert-decoder", keys, hf, model)
    assert cfg.head_dense and not cfg.first_attn_norm
    assert cfg.layer_types == ("FSFS" if keys.get("global_attn_every_n_layers") == 2 else "FSSF")
    _causal_is_exact(hf, model, cfg, hf.vocab_size)
    engine = prefill_ops(cfg, Workload(batch=BATCH, seq_len=PROMPT, new_tokens=1))
    assert next(o for o in engine if o.name == "head_dense").m == BATCH  # the last positions only, as the LM head
    assert _defaults_are_exact("modernbert-decoder").params == 149_655_232


JETMOE = dict(B, num_key_value_heads=2, kv_channels=16, num_local_experts=4, num_experts_per_tok=2)


@pytest.mark.parametrize("keys", [JETMOE, dict(JETMOE, num_local_experts=3, num_experts_per_tok=3, num_key_value_heads=1,
                                               kv_channels=24, tie_word_embeddings=False)])
def test_jetmoe_is_exact(keys):
    """JetMoE from transformers' own class: a mixture of attention heads (each token's k attention experts make its
    queries from the hidden state and project its heads' outputs back; keys and values from one shared projection)
    beside a mixture of GLU experts, both with a bias after the weighted sum — parameters, active parameters (k of each
    mixture), a prefill and one decode step to the FLOP, the fp32 cache and the bf16 checkpoint to the byte. At the
    class defaults the model equals numel() on the meta device: 4,293,888,000 parameters."""
    hf, model = _build("jetmoe", keys)
    cfg = _reads_as_numel("jetmoe", keys, hf, model)
    assert cfg.attn_experts == hf.num_local_experts
    _causal_is_exact(hf, model, cfg, hf.vocab_size)
    # active: every weight but the unrouted experts of both mixtures (computed from the model's own tensors)
    layer0 = model.model.layers[0]
    idle = (hf.num_local_experts - hf.num_experts_per_tok) / hf.num_local_experts * sum(
        m.weight.numel() for m in (layer0.mlp.input_linear, layer0.mlp.output_linear,
                                   layer0.self_attention.experts.input_linear, layer0.self_attention.experts.output_linear))
    assert cfg.active_params == sum(p.numel() for p in model.parameters()) - hf.num_hidden_layers * idle
    assert _defaults_are_exact("jetmoe").params == 4_293_888_000


# Zamba: Mamba layers split into heads and two hybrid ones running the one shared block
ZAMBA = dict(vocab_size=128, hidden_size=32, num_hidden_layers=5, intermediate_size=48, mamba_d_state=8,
             n_mamba_heads=2, num_attention_heads=4, num_key_value_heads=4, pad_token_id=0,
             layers_block_type=["mamba", "hybrid", "mamba", "mamba", "hybrid"])


@pytest.mark.parametrize("keys", [
    ZAMBA,
    dict(ZAMBA, n_mamba_heads=4, num_key_value_heads=2, mamba_proj_bias=True, mamba_conv_bias=False, mamba_dt_rank=3,
         attention_head_dim=12, tie_word_embeddings=False),
    dict({k: v for k, v in ZAMBA.items() if k != "layers_block_type"}, num_hidden_layers=6, attn_layer_period=2,
         attn_layer_offset=1),  # the default layout: two Mamba layers, a hybrid, then every period-th from offset
])
def test_zamba_is_exact(keys):
    """Zamba (Zyphra) from transformers' own class: Mamba layers split into heads with their own x_proj, dt_proj, A and
    D (the counts of one full-width Mamba mixer), and hybrid layers running the one shared attention-and-MLP block on
    [hidden state; embedding] before a per-layer projection — parameters (the block once), a prefill and one decode
    step to the FLOP (every run of the block), the fp32 cache (the hybrid layers' K/V, every layer's conv and SSM state)
    and the bf16 checkpoint (A_log in fp32, as the class builds it) to the byte. Untied embeddings untie the block's
    copies in transformers: each hybrid layer then holds its own. The class defaults (Zamba-7B's shape) come to
    7,232,490,496 parameters."""
    hf, model = _build("zamba", keys)
    cfg = _reads_as_numel("zamba", keys, hf, model)
    tied = keys.get("tie_word_embeddings", True)  # (untied, transformers unties the block's copies too)
    assert cfg.stored_blocks == (1 if tied else 2) and cfg.block_layers == cfg.layer_types.count("P") >= 2
    _causal_is_exact(hf, model, cfg, hf.vocab_size)
    assert _defaults_are_exact("zamba").params == 7_232_490_496


@pytest.mark.parametrize("vision", [
    dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=32, patch_size=8,
         vision_output_dim=48, projector_input_dim=40, projector_output_dim=40),
    dict(hidden_size=30, intermediate_size=48, num_hidden_layers=1, num_attention_heads=4, image_size=28, patch_size=7,
         num_channels=1, vision_output_dim=24, projector_input_dim=36, projector_output_dim=36),  # 4 heads of 7 in 30
])
def test_llama4_vision_tower_is_reported_exactly(vision):
    """Llama 4 (Scout / Maverick): the decoder counted, the vision tower, its pixel-shuffle adapter and the projector
    reported beside it, equal to numel() of everything outside the language model and the head — on tiny towers and at
    the class defaults (the meta device)."""
    from transformers import AutoModelForImageTextToText

    text = dict(B, head_dim=24, num_local_experts=4, num_experts_per_tok=1, intermediate_size_mlp=80,
                interleave_moe_layer_step=2)
    for hf in (AutoConfig.for_model("llama4", text_config=text, vision_config=vision), AutoConfig.for_model("llama4")):
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(hf)
        cfg, info = read_config(json.loads(hf.to_json_string()))
        named = dict(model.named_parameters())
        text_params = sum(p.numel() for n, p in named.items() if ".language_model." in f".{n}" or n.startswith("lm_head"))
        assert cfg.params == text_params
        assert sum(info["vision"].values()) == sum(p.numel() for p in named.values()) - text_params


def test_paddleocr_vl_counts_its_decoder_and_reports_its_vision_tower():
    """PaddleOCR-VL: ERNIE-4.5's dense decoder exact to the parameter and the FLOP against the wrapper's own class on a
    text prompt; the SigLIP tower and its merging projector reported beside it, equal to numel() of everything outside
    the language model and the head — on a tiny tower and at the class defaults (the meta device)."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    text = dict(B, pad_token_id=None, bos_token_id=None, eos_token_id=None)
    hf = AutoConfig.for_model("paddleocr_vl", text_config=text, vision_config=dict(_TINY_TOWER, spatial_merge_size=2))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "paddleocr_vl" and info["unknown_keys"] == [], info["unknown_keys"]
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)
    _wrapper_defaults_are_exact("paddleocr_vl")  # (the tower at the defaults too)


def test_paddleocr_vl_flat_hub_config_and_its_head():
    """PaddleOCR-VL's Hub config.json is flat (the decoder's keys beside vision_config, whose model_type is the old
    "paddleocr_vl"): read with no unknown key, exact to the parameter and the FLOP against the model transformers builds
    from the same file. The head: tied as transformers ties it where the file's flags leave no doubt (none given, or a
    v5 wrapper flag beside text_config's); where the flat file or a pre-v5 text_config says false, counted apart as
    the checkpoint stores it, with a note (transformers 5.24 ties it anyway) — PaddleOCR-VL-0.9B comes to 905,601,648
    parameters, its name's 0.9 B and its 1.8 GB of bf16 weights, against 799,695,472 tied."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    text = dict(B, head_dim=16, rope_theta=500000.0,
                rope_scaling={"mrope_section": [2, 3, 3], "rope_type": "default", "type": "default"})
    tower = dict(_TINY_TOWER, spatial_merge_size=2, model_type="paddleocr_vl")
    flat = dict(text, tie_word_embeddings=True, image_token_id=100295, video_token_id=101307,
                vision_start_token_id=101305, vision_end_token_id=101306, vision_config=tower)
    hf = AutoConfig.for_model("paddleocr_vl", **copy.deepcopy(flat))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(dict(flat, model_type="paddleocr_vl", architectures=["PaddleOCRVLForConditionalGeneration"]))
    assert info["unknown_keys"] == [] and cfg.tied_embeddings, info["unknown_keys"]
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)

    def built(**keys) -> int:  # the decoder transformers builds from these keys
        with torch.device("meta"):
            m = AutoModelForImageTextToText.from_config(AutoConfig.for_model("paddleocr_vl", **copy.deepcopy(keys)))
        return m.num_parameters() - _outside_decoder(m)

    untied = built(text_config=dict(text, tie_word_embeddings=False), tie_word_embeddings=False, vision_config=tower)
    for keys in (dict(text_config=text, vision_config=tower), dict(text, vision_config=tower),
                 dict(text_config=dict(text, tie_word_embeddings=False), tie_word_embeddings=True, vision_config=tower),
                 dict(text_config=text, tie_word_embeddings=False, vision_config=tower),
                 dict(text_config=dict(text, tie_word_embeddings=False), tie_word_embeddings=False,
                      vision_config=tower)):
        cfg, info = read_config(dict(keys, model_type="paddleocr_vl"))
        assert cfg.params == built(**keys) and not any("counted apart" in str(n) for n in info["notes"]), keys
    for keys in (dict(text, tie_word_embeddings=False, vision_config=tower),
                 dict(text_config=dict(text, tie_word_embeddings=False), vision_config=tower)):
        cfg, info = read_config(dict(keys, model_type="paddleocr_vl"))
        assert cfg.params == untied != built(**keys) and any("counted apart" in str(n) for n in info["notes"]), keys
    hub = dict(model_type="paddleocr_vl", hidden_size=1024, intermediate_size=3072, num_hidden_layers=18,
               num_attention_heads=16, num_key_value_heads=2, head_dim=128, vocab_size=103424,
               tie_word_embeddings=False, vision_config=dict(model_type="paddleocr_vl"))
    cfg, info = read_config(hub)
    keys = {k: v for k, v in hub.items() if k not in ("model_type", "tie_word_embeddings", "vision_config")}
    with torch.device("meta"):
        m = AutoModelForImageTextToText.from_config(AutoConfig.for_model(
            "paddleocr_vl", text_config=dict(keys, tie_word_embeddings=False), tie_word_embeddings=False))
    assert cfg.params + sum(info["vision"].values()) == m.num_parameters() == 905_601_648


_CLIP_T = dict(model_type="clip_vision_model", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
               num_attention_heads=2, patch_size=4, image_size=32)
_SIGLIP_T = dict(_CLIP_T, model_type="siglip_vision_model")
_SIGLIP2_T = dict(_CLIP_T, model_type="siglip2_vision_model", num_patches=64)
_PIXTRAL_T = dict(_CLIP_T, model_type="pixtral", head_dim=16)
_LLAMA_T = dict(B, model_type="llama")


@pytest.mark.parametrize(("wrapper", "keys"), [
    ("llava", dict(vision_config=_CLIP_T)), ("llava", dict(vision_config=_SIGLIP_T)),
    ("llava", dict(vision_config=dict(_SIGLIP_T, vision_use_head=False), vision_feature_layer=[-2, -3],
                   multimodal_projector_bias=False)),
    ("llava", dict(vision_config=_PIXTRAL_T)), ("llava", {}),
    ("llava_next", dict(vision_config=_CLIP_T)), ("llava_next_video", dict(vision_config=_SIGLIP_T)),
    ("llava_onevision", dict(vision_config=_SIGLIP_T)), ("llava_onevision", {}),
    ("vipllava", dict(vision_config=_CLIP_T)), ("vipllava", dict(vision_config=_CLIP_T, vision_feature_layers=[-2, -3])),
    ("video_llava", dict(vision_config=_CLIP_T)), ("video_llava", {}),
    ("paligemma", dict(vision_config=_SIGLIP_T, projection_dim=64, text_config=dict(B, model_type="gemma", head_dim=16))),
    ("paligemma", dict(text_config=dict(B, model_type="gemma", head_dim=16))),
    ("aya_vision", dict(vision_config=_SIGLIP_T, text_config=dict(B, model_type="cohere2"))),
    ("aya_vision", dict(vision_config=_SIGLIP_T, alignment_intermediate_size=96, downsample_factor=1,
                        text_config=dict(B, model_type="cohere2"))),
    ("cohere2_vision", dict(vision_config=_SIGLIP_T, alignment_intermediate_size=96,
                            text_config=dict(B, model_type="cohere2"))),
    ("cohere2_vision", dict(text_config=dict(B, model_type="cohere2"))),
    ("lfm2_vl", dict(vision_config=_SIGLIP2_T, projector_hidden_size=80, text_config=dict(B, model_type="lfm2"))),
    ("lfm2_vl", dict(vision_config=dict(_SIGLIP2_T, vision_use_head=False), projector_bias=False,
                     projector_use_layernorm=False, text_config=dict(B, model_type="lfm2"))),
    ("lfm2_vl", dict(text_config=dict(B, model_type="lfm2"))),
    ("lighton_ocr", dict(vision_config=_PIXTRAL_T, text_config=dict(B, model_type="qwen3"))),
    ("lighton_ocr", dict(text_config=dict(B, model_type="qwen3"))),
    ("shieldgemma2", dict(vision_config=_SIGLIP_T, text_config=dict(B, model_type="gemma3_text", head_dim=16))),
    ("internvl", dict(vision_config=dict(_CLIP_T, model_type="internvl_vision"))),
    ("internvl", dict(vision_config=dict(_CLIP_T, model_type="internvl_vision", attention_bias=True, use_qk_norm=True,
                                         norm_type="rms_norm", use_mask_token=True, use_mean_pooling=False,
                                         image_size=[32, 16], patch_size=[4, 8]), downsample_ratio=0.25)),
    ("internvl", dict(vision_config=dict(_CLIP_T, model_type="internvl_vision",
                                         use_absolute_position_embeddings=False))),
    ("internvl", {}),
    ("kimi_k25", dict(vision_config=dict(_CLIP_T, model_type="kimi_k25_vision", pos_emb_height=8, pos_emb_width=4,
                                         merge_kernel_size=[2, 1]), projection_hidden_size=32,
                      text_config=dict(_LLAMA_T, model_type="deepseek_v3", **MLA, num_experts_per_tok=2))),
    ("kimi_k25", dict(text_config=dict(_LLAMA_T, model_type="deepseek_v3", **MLA, num_experts_per_tok=2))),
    ("kimi_k25", dict(text_config=dict(_LLAMA_T, model_type="kimi_k2", **MLA, num_experts_per_tok=2))),  # (its Hub's)
    ("idefics3", dict(vision_config=dict(_CLIP_T, model_type="idefics3_vision"))),
    ("idefics3", dict(vision_config=dict(_CLIP_T, model_type="idefics3_vision"), scale_factor=4)),
    ("smolvlm", dict(vision_config=dict(_CLIP_T, model_type="smolvlm_vision"), scale_factor=1)), ("smolvlm", {}),
    ("hyperclovax_vision_v2", dict(vision_config=dict(model_type="qwen2_5_vl_vision", depth=1, hidden_size=32,
                                                      intermediate_size=48, num_heads=2, out_hidden_size=40,
                                                      fullatt_block_indexes=[0]),
                                   text_config=dict(B, model_type="hyperclovax", head_dim=16))),
    ("qianfan_ocr", dict(vision_config=dict(_CLIP_T, model_type="qianfan_ocr_vision"))),
    ("qianfan_ocr", dict(vision_config=dict(_CLIP_T, model_type="qianfan_ocr_vision", attention_bias=False))),
    ("qianfan_ocr", {}),
    ("video_llama_3", dict(vision_config=dict(_CLIP_T, model_type="video_llama_3_vision"),
                           text_config=dict(B, model_type="qwen2"))),
    ("video_llama_3", dict(text_config=dict(B, model_type="qwen2"))),
    ("deepseek_vl", dict(vision_config=_SIGLIP_T)), ("deepseek_vl", dict(vision_config=dict(_SIGLIP_T,
                                                                                          vision_use_head=False))),
    ("deepseek_vl", {}),
    ("minicpmv4_6", dict(vision_config=dict(_CLIP_T, model_type="minicpmv4_6_vision"),
                         text_config=dict(B, model_type="qwen3", head_dim=16))),
    ("minicpmv4_6", dict(vision_config=dict(_CLIP_T, model_type="minicpmv4_6_vision", window_kernel_size=[1, 2]),
                         merger_times=3, text_config=dict(B, model_type="qwen3", head_dim=16))),
    ("minicpmv4_7", dict(vision_config=dict(_CLIP_T, model_type="minicpmv4_7_vision"),
                         text_config=dict(B, model_type="qwen3", head_dim=16))),
    ("minicpm_ocr", dict(text_config=dict(B, model_type="qwen3", head_dim=16))),
    ("exaone4_5", dict(vision_config=dict(model_type="exaone4_5_vision", depth=2, hidden_size=32, intermediate_size=48,
                                          num_heads=4, num_key_value_heads=2, out_hidden_size=40,
                                          fullatt_block_indexes=[1]),
                       text_config=dict(B, model_type="exaone4", head_dim=16))),
    ("exaone4_5", dict(text_config=dict(B, model_type="exaone4", head_dim=16))),
    ("exaone4_5", dict(text_config=dict(B, model_type="exaone4_5_text", head_dim=16))),  # (its older files')
    ("got_ocr2", dict(vision_config=dict(model_type="got_ocr2_vision", hidden_size=32, output_channels=16,
                                         num_hidden_layers=3, num_attention_heads=2, image_size=64, patch_size=8,
                                         window_size=4, mlp_dim=48, global_attn_indexes=[1]),
                      text_config=dict(B, model_type="qwen2"))),
    ("got_ocr2", dict(vision_config=dict(model_type="got_ocr2_vision", hidden_size=32, output_channels=16,
                                         num_hidden_layers=2, num_attention_heads=2, image_size=64, patch_size=8,
                                         qkv_bias=False, use_abs_pos=False, use_rel_pos=False, mlp_dim=48,
                                         global_attn_indexes=[]),
                      text_config=dict(B, model_type="qwen2"))),
    ("got_ocr2", dict(text_config=dict(B, model_type="qwen2"))),
    ("pp_chart2table", dict(text_config=dict(B, model_type="qwen2"))),
    ("ovis2", dict(vision_config=dict(_CLIP_T, model_type="ovis2_vision", vocab_size=40, hidden_stride=2),
                   hidden_size=64, text_config=dict(B, model_type="qwen2"))),
    ("ovis2", dict(vision_config=dict(_CLIP_T, model_type="ovis2_vision", qkv_bias=True, mlp_bias=True,
                                      num_visual_indicator_tokens=3),
                   text_config=dict(B, model_type="qwen2"))),
    ("ovis2", dict(text_config=dict(B, model_type="qwen2"))),
    ("cosmos3_omni", dict(vision_config=dict(model_type="qwen3_vl_vision", depth=2, hidden_size=32,
                                             intermediate_size=48, num_heads=2, out_hidden_size=64,
                                             num_position_embeddings=16, deepstack_visual_indexes=[0]),
                          text_config=dict(B, model_type="qwen3_vl_text", head_dim=16,
                                           rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                            "mrope_section": [2, 3, 3]}))),
    ("blip-2", dict(vision_config=dict(_CLIP_T, model_type="blip_2_vision_model"), num_query_tokens=4,
                    qformer_config=dict(hidden_size=24, intermediate_size=40, num_hidden_layers=3, num_attention_heads=2,
                                        cross_attention_frequency=2))),
    ("blip-2", dict(vision_config=dict(_CLIP_T, model_type="blip_2_vision_model", qkv_bias=False),
                    qformer_config=dict(hidden_size=24, intermediate_size=40, num_hidden_layers=3, num_attention_heads=2,
                                        cross_attention_frequency=1, use_qformer_text_input=True),
                    text_config=dict({k: v for k, v in B.items() if k not in ("intermediate_size", "num_key_value_heads")},
                                     model_type="opt", ffn_dim=96, word_embed_proj_dim=64))),
    ("blip-2", {}),
    ("instructblip", dict(vision_config=dict(_CLIP_T, model_type="instructblip_vision_model"), num_query_tokens=4,
                          qformer_config=dict(hidden_size=24, intermediate_size=40, num_hidden_layers=3,
                                              num_attention_heads=2, cross_attention_frequency=3, vocab_size=50,
                                              max_position_embeddings=20))),
    ("instructblipvideo", dict(vision_config=dict(_CLIP_T, model_type="instructblipvideo_vision_model"))),
    ("idefics2", dict(vision_config=dict(_CLIP_T, model_type="idefics2_vision"),
                      perceiver_config=dict(resampler_n_latents=4, resampler_depth=2, resampler_n_heads=2,
                                            resampler_head_dim=8, num_key_value_heads=1))),
    ("idefics2", dict(text_config=dict(_LLAMA_T, intermediate_size=80))),
    ("deepseek_vl_hybrid", dict(vision_config=_SIGLIP_T,
                                high_res_vision_config=dict(model_type="sam_vision_model", hidden_size=32,
                                                            output_channels=16, num_hidden_layers=3,
                                                            num_attention_heads=2, image_size=64, patch_size=8,
                                                            window_size=4, global_attn_indexes=[1], mlp_ratio=2.0))),
    ("deepseek_vl_hybrid", dict(vision_config=dict(_SIGLIP_T, vision_use_head=False),
                                high_res_vision_config=dict(model_type="sam_vision_model", hidden_size=32,
                                                            output_channels=8, num_hidden_layers=2,
                                                            num_attention_heads=2, image_size=64, patch_size=8,
                                                            qkv_bias=False, use_rel_pos=False, mlp_dim=40,
                                                            global_attn_indexes=[0]))),
    ("deepseek_vl_hybrid", {}),
    ("lfm3_vl", dict(vision_config=dict(model_type="lfm3_vl_vision", hidden_size=32, intermediate_size=48,
                                        num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, patch_size=4),
                     text_config=dict(B, model_type="lfm2", layer_types=["conv", "full_attention"]))),
    ("lfm3_vl", dict(vision_config=dict(model_type="lfm3_vl_vision", hidden_size=32, intermediate_size=48,
                                        num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=1, patch_size=4,
                                        temporal_patch_size=1, spatial_merge_size=1, conv_kernel_size=5,
                                        layer_types=["full_attention", "conv", "full_attention"]),
                     projector_hidden_size=40, projector_bias=False,
                     text_config=dict(B, model_type="lfm2", layer_types=["conv", "full_attention"]))),
    ("lfm3_vl", dict(text_config=dict(B, model_type="lfm2", layer_types=["conv", "full_attention"]))),
])
def test_llava_style_wrappers_count_the_encoder_their_vision_config_names(wrapper, keys):
    """LLaVA and the wrappers built like it (transformers' AutoModel over vision_config: CLIP, SigLIP with or without
    its pooling head, SigLIP 2, Pixtral) and their projectors — LLaVA's two linears over one or several layers' outputs,
    with or without biases, NeXT's and OneVision's image newline, VipLLaVA's LayerNorm, Video-LLaVA's two towers,
    PaliGemma's projection, Aya Vision's and Command A Vision's SwiGLU over shuffled patches, LFM2-VL's, LightOn OCR's
    and ShieldGemma 2's — and the wrappers with towers of their own: InternVL's InternViT (its switches: attention bias,
    q/k norms, RMSNorms, a mask token, no absolute positions, a final LayerNorm, rectangular images and patches, another
    downsample ratio; Qianfan-OCR's the same with biased q/k/v by default), Kimi K2.5's MoonViT (its Hub file's
    text model_type kimi_k2 read as DeepSeek-V3's, as transformers reads it), Idefics3's and
    SmolVLM's connector at several scale factors, VideoLLaMA 3's encoder and projector, DeepSeek-VL's aligner,
    MiniCPM-V's window merger and mergers (4.6, 4.7, OCR; other windows and rounds), EXAONE 4.5's grouped-KV Qwen
    tower, GOT-OCR2's and PP-Chart2Table's SAM ViT, neck and convolutional projector (global and windowed layers'
    relative position tables; without biases or positions), Ovis2's tower, visual head and visual embedding table,
    HyperCLOVA X Vision's and Cosmos 3 Omni's Qwen towers, BLIP-2's and InstructBLIP's EVA ViT and Q-Former (its
    cross-attention every N layers, the text MLP, InstructBLIP's embeddings, the ViT's qkv without bias), Idefics2's
    modality projection (through the decoder's intermediate size) and perceiver resampler, DeepSeek-VL-Hybrid's SigLIP
    and SAM encoders (SAM's MLP from mlp_ratio or mlp_dim), second neck, convolutions and aligner, LFM3-VL's tower of
    convolution and attention layers (its default layout and another) and projector: the tower reported beside the decoder equals numel() of everything outside
    the language model and the head, from the file's keys and from to_dict(), with no key unknown; with no vision_config, the wrapper's own
    default encoder (CLIP ViT-L/14-336 for LLaVA, SigLIP so400m for OneVision and PaliGemma)."""
    from transformers import AutoModelForImageTextToText

    keys = {"text_config": _LLAMA_T} | copy.deepcopy(keys)
    hf = AutoConfig.for_model(wrapper, **copy.deepcopy(keys))
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    for raw in (dict(keys, model_type=wrapper), json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert info["unknown_keys"] == [], info["unknown_keys"]
        assert sum(info["vision"].values()) == _outside_decoder(model)
        assert cfg.params == model.num_parameters() - _outside_decoder(model)


def test_idefics2_8b_as_its_hub_file_writes_it_comes_to_the_model_transformers_builds():
    """HuggingFaceM4/idefics2-8b's config.json (its vision and perceiver blocks typed "idefics2", a Mistral 7B decoder
    with three added tokens): the decoder and the tower beside it add up to numel() of
    Idefics2ForConditionalGeneration built from that file, 8,402,768,112 (the card's "8B")."""
    from transformers import AutoModelForImageTextToText

    raw = {"model_type": "idefics2", "architectures": ["Idefics2ForConditionalGeneration"], "image_token_id": 32001,
           "tie_word_embeddings": False, "use_cache": True,
           "perceiver_config": {"hidden_act": "silu", "model_type": "idefics2", "num_key_value_heads": 4,
                                "resampler_depth": 3, "resampler_head_dim": 96, "resampler_n_heads": 16,
                                "resampler_n_latents": 64},
           "vision_config": {"hidden_size": 1152, "image_size": 980, "intermediate_size": 4304,
                             "model_type": "idefics2", "num_attention_heads": 16, "num_hidden_layers": 27,
                             "patch_size": 14},
           "text_config": {"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
                           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                           "vocab_size": 32003, "max_position_embeddings": 32768, "rms_norm_eps": 1e-5,
                           "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": False}}
    hf = AutoConfig.for_model("idefics2", **{k: copy.deepcopy(v) for k, v in raw.items() if k != "model_type"})
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    cfg, info = read_config(copy.deepcopy(raw))
    assert info["unknown_keys"] == []
    assert sum(info["vision"].values()) == _outside_decoder(model)
    assert cfg.params + sum(info["vision"].values()) == model.num_parameters() == 8_402_768_112


def test_a_mistral_file_with_layer_types_is_read_as_ministral_as_autoconfig_does(tmp_path):
    """AutoConfig reads a model_type "mistral" file that has layer_types as Ministral (alternating sliding and full
    attention); so does this reader, noted — the same decoder as the ministral file, exact to the FLOP against the model
    AutoConfig's class builds (before: every layer sliding, layer_types reported unknown)."""
    import transformers

    keys = dict(B, sliding_window=16, layer_types=["sliding_attention", "full_attention"], head_dim=16)
    (tmp_path / "config.json").write_text(json.dumps(dict(keys, model_type="mistral")))
    hf = transformers.AutoConfig.from_pretrained(tmp_path)
    assert type(hf).__name__ == "MinistralConfig"
    cfg, info = read_config(dict(keys, model_type="mistral"))
    assert cfg.family == "ministral" and info["unknown_keys"] == [] and any("ministral" in str(n) for n in info["notes"])
    assert cfg.layer_types == read_config(dict(keys, model_type="ministral"))[0].layer_types == "SF"
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(hf, attn_implementation="eager").eval()
    assert cfg.params == sum(p.numel() for p in model.parameters())
    prefill, decode, _, nbytes = _run(model, 128)
    wl = _reference(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    assert kv_cache_bytes(cfg, wl) == nbytes


def test_every_attribute_map_spelling_is_read():
    """A config class's attribute_map lets a file spell a field either way (GPT-2's n_embd or hidden_size, DBRX's d_model
    or hidden_size, a DSA model's n_routed_experts or num_local_experts): for every family read here, each class
    default's canonical key written instead under its other spelling is read (not reported unknown) and gives the same
    parameters."""
    from transformers import CONFIG_MAPPING

    from gemmlib.core.errors import InputError
    from gemmlib.llm.hf import SUPPORTED_MODEL_TYPES

    checked, wrong = 0, []
    for mt in SUPPORTED_MODEL_TYPES:
        amap = getattr(CONFIG_MAPPING[mt], "attribute_map", None) if mt in CONFIG_MAPPING else None
        try:
            d = json.loads(CONFIG_MAPPING[mt]().to_json_string())
            base = read_config(d)[0].params
        except Exception:  # (a class whose defaults do not build or are refused has its own test)
            continue
        for alias, canon in (amap or {}).items():
            if canon not in d or alias in d:
                continue
            moved = {k: v for k, v in d.items() if k != canon} | {alias: d[canon]}
            checked += 1
            try:
                cfg, info = read_config(moved)
            except InputError as e:
                wrong.append((mt, alias, canon, str(e)))
                continue
            if alias in info["unknown_keys"] or cfg.params != base:
                wrong.append((mt, alias, canon))
    assert checked >= 100 and wrong == [], (checked, wrong)


def _tie_rule_wrappers() -> list[str]:
    from gemmlib.llm.hf import _NEVER_TIED, _TIE_EITHER, _TIE_FROM_TOP

    # (whose class defaults transformers cannot build or this reader refuses: cohere_compass and qwen4_exp fail to
    # build, glm4v_moe's and the Qwen3-Omni thinker's default heads do not divide the width; each has its own test)
    broken = {"cohere_compass", "qwen4_exp", "glm4v_moe", "qwen3_omni_moe_thinker"}
    return sorted((set(_TIE_FROM_TOP) | set(_TIE_EITHER) | set(_NEVER_TIED)) - broken)


@pytest.mark.parametrize("wrapper", _tie_rule_wrappers())
def test_a_wrappers_head_is_tied_as_its_config_class_ties_it(wrapper):
    """Whether a wrapper's LM head is its embedding follows its config class: the wrapper's own flag alone (its class
    default when absent), either flag (the class forwards a text_config's true), or never (no tied weights) — read from
    the file's keys with the wrapper's flag absent, false or true beside a text_config's, against the model
    transformers builds (the head's weight the embedding's or not), on the class's default text config at the meta
    device."""
    from transformers import CONFIG_MAPPING, AutoModelForImageTextToText

    text = CONFIG_MAPPING[wrapper]().text_config.to_dict()
    text.pop("tie_word_embeddings", None)
    extra = {"vision_config": {"model_type": "siglip_vision_model"}} if wrapper == "aya_vision" else {}
    for top, inner in ((None, True), (False, True), (True, False)):  # (these three tell the rules apart)
        keys = dict(extra, text_config=dict(text) | ({} if inner is None else {"tie_word_embeddings": inner}))
        keys |= {} if top is None else {"tie_word_embeddings": top}
        hf = AutoConfig.for_model(wrapper, **copy.deepcopy(keys))
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(hf)
        tied = model.get_output_embeddings().weight is model.get_input_embeddings().weight
        assert read_config(dict(keys, model_type=wrapper))[0].tied_embeddings is tied, (top, inner, tied)


def test_fuyu_flat_hub_config_counts_persimmons_decoder_and_its_patch_projection():
    """Fuyu (fuyu): its Hub config.json is flat, and its config class moves only Persimmon's own keys into the text
    config (the rotary fraction 0.5 whatever the top level says): Persimmon's decoder exact to the parameter and the FLOP
    against FuyuForCausalLM on a text prompt, from the flat keys and from to_dict(), with no key unknown; the patch
    projection (no encoder: one linear from each patch's pixels) reported beside it; Fuyu-8B's shape equal to numel()
    on the meta device (9,408,238,592)."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    flat = dict(B, num_key_value_heads=4, qk_layernorm=True, hidden_act="relu2", layer_norm_eps=1e-5, image_size=32,
                patch_size=4, num_channels=3, rope_theta=25000.0, partial_rotary_factor=0.25,
                tie_word_embeddings=False, pad_token_id=None)
    flat.pop("num_key_value_heads")
    hf = AutoConfig.for_model("fuyu", **copy.deepcopy(flat))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    for raw in (dict(flat, model_type="fuyu", architectures=["FuyuForCausalLM"]), json.loads(hf.to_json_string())):
        cfg, info = read_config(raw)
        assert info["wrapper"] == "fuyu" and info["unknown_keys"] == [], info["unknown_keys"]
        _decoder_is_exact(model, cfg)
        assert sum(info["vision"].values()) == _outside_decoder(model)
    fuyu8b = dict(vocab_size=262144, hidden_size=4096, intermediate_size=16384, num_hidden_layers=36,
                  num_attention_heads=64, qk_layernorm=True, patch_size=30, num_channels=3)
    cfg, info = read_config(dict(fuyu8b, model_type="fuyu"))
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(AutoConfig.for_model("fuyu", **fuyu8b))
    assert cfg.params + sum(info["vision"].values()) == model.num_parameters() == 9_408_238_592


@pytest.mark.parametrize(("wrapper", "keys", "named"), [
    ("llava", dict(vision_feature_layer="last"), "vision_feature_layer"),
    ("llava", dict(vision_feature_layer=[]), "vision_feature_layer"),
    ("internvl", dict(downsample_ratio=0), "downsample_ratio"),
    ("internvl", dict(vision_config=dict(model_type="internvl_vision", image_size=[448])), "image_size"),
    ("kimi_k25", dict(vision_config=dict(model_type="kimi_k25_vision", merge_kernel_size=2)), "merge_kernel_size"),
    ("paligemma", dict(projection_dim=-1), "projection_dim"),
    ("lfm2_vl", dict(downsample_factor=0), "downsample_factor"),
    ("blip-2", dict(qformer_config=[1]), "'qformer_config' must be an object"),
    ("blip-2", dict(qformer_config=dict(num_hidden_layers=0)), "qformer_config.num_hidden_layers"),
    ("blip-2", dict(vision_config=dict(model_type="blip_2_vision_model", qkv_bias="yes")), "qkv_bias"),
    ("idefics2", dict(perceiver_config="x"), "'perceiver_config' must be an object"),
    ("deepseek_vl_hybrid", dict(high_res_vision_config=5), "'high_res_vision_config' must be an object"),
    ("deepseek_vl_hybrid", dict(high_res_vision_config=dict(model_type="sam_vision_model", mlp_ratio=-1)),
     "mlp_ratio"),
    ("granite_docling", dict(vision_config=dict(model_type="granite_docling_vision", deepstack_visual_indexes=3)),
     "deepstack_visual_indexes"),
    ("lfm3_vl", dict(vision_config=dict(model_type="lfm3_vl_vision", num_hidden_layers=3, layer_types=["conv"])),
     "layer_types"),
    ("emu3", dict(vq_config=dict(channel_multiplier=[])), "vq_config.channel_multiplier"),
    ("apertus1p5", dict(vision_config=dict(attn_resolutions=16)), "vision_config.attn_resolutions"),
    ("dots3_note", dict(vision_config=dict(num_hidden_layers=2, mlp_layer_types=["dense"])), "mlp_layer_types"),
    ("dots3_note", dict(vision_config=dict(num_hidden_layers=2, pyramid_num_routed=[4, "8"])), "pyramid_num_routed"),
    ("dots3_note", dict(vision_config=dict(num_hidden_layers=1, mlp_layer_types=["sparse"],
                                           per_layer_config={"0": {"hidden_size": 8}})), "per_layer_config"),
])
def test_a_malformed_tower_key_is_refused_with_its_name(wrapper, keys, named):
    """A vision tower's key that cannot be counted is refused with the key named (exit 2 at the CLI), not guessed."""
    from gemmlib.core.errors import InputError

    with pytest.raises(InputError, match=named):
        read_config(dict(keys, model_type=wrapper, text_config=_LLAMA_T))


def test_llava_decoder_is_exact_and_an_unknown_encoder_is_named():
    """LLaVA read by its structure: the Llama decoder of its text_config exact to the parameter and the FLOP against
    LlavaForConditionalGeneration on a text prompt; an encoder this module does not count (a vision_config whose
    model_type names another class) is named, not counted."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    hf = AutoConfig.for_model("llava", text_config=dict(_LLAMA_T, pad_token_id=None), vision_config=dict(_CLIP_T))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)
    cfg, info = read_config(dict(model_type="llava", text_config=_LLAMA_T,
                                 vision_config=dict(model_type="intern_vit_6b", hidden_size=3200)))
    assert info["vision"] is None and any("not" in str(n) for n in info["notes"])


def test_glmga_counts_its_decoder_and_glm4v_tower():
    """GLM-GA: GLM-4.1V's decoder exact to the parameter and the FLOP against the wrapper's own class on a text prompt,
    and GLM-4.1V's vision tower reported beside it, equal to numel() of everything outside the language model and the
    head (tiny and at the class defaults)."""
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    text = dict(B, head_dim=16, pad_token_id=None, rope_parameters=_GLM_MROPE)
    hf = AutoConfig.for_model("glmga", text_config=text, vision_config=dict(_TINY_TOWER))
    model = AutoModelForImageTextToText.from_config(hf, attn_implementation="eager").eval()
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == "glmga" and info["unknown_keys"] == [], info["unknown_keys"]
    _decoder_is_exact(model, cfg)
    assert sum(info["vision"].values()) == _outside_decoder(model)
    _wrapper_defaults_are_exact("glmga")


@pytest.mark.parametrize("name", ["ctrl", "modernbert"])
def test_a_tied_head_keeps_its_own_bias_in_the_checkpoint(name):
    """A head tied to the embedding but with a bias of its own (CTRL's lm_head, ModernBERT decoder's decoder.bias): the
    bf16 checkpoint stores the bias beside the shared matrix, to the byte."""
    mt, keys = TINY[name] if name in TINY else ("modernbert-decoder", dict(MBD, layer_types=None))
    keys = {k: v for k, v in keys.items() if v is not None}
    hf = AutoConfig.for_model(mt, **copy.deepcopy(keys))
    cfg, _ = read_config(json.loads(hf.to_json_string()))
    assert cfg.tied_embeddings and cfg.lm_head_bias
    sd = AutoModelForCausalLM.from_config(hf, dtype=torch.bfloat16).state_dict()
    stored = {t.data_ptr(): t for t in sd.values()}  # the tied matrix once
    assert checkpoint_size(cfg, "bf16").bytes == sum(t.nbytes for t in stored.values())


def _towers_are_exact(wrapper: str, keys: dict | None = None) -> tuple[int, int]:
    """A wrapper built on the meta device from ``keys`` (its config class's defaults for the rest): the vision tower read
    from to_dict() equals numel() of everything outside the language model, the LM head and the audio side; the audio
    tower, when counted, numel() of the parameters named for audio. The two counts (0 for a tower not built)."""
    from transformers import AutoModelForImageTextToText

    hf = AutoConfig.for_model(wrapper, **copy.deepcopy(keys or {}))
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    cfg, info = read_config(json.loads(hf.to_json_string()))
    assert info["wrapper"] == wrapper and info["unknown_keys"] == [], info["unknown_keys"]
    named = {n: p.numel() for n, p in model.named_parameters()}
    audio = sum(v for n, v in named.items() if "audio" in n)
    outside = sum(v for n, v in named.items() if ".language_model." not in f".{n}" and ".text_model." not in f".{n}"
                  and not n.startswith("lm_head"))
    assert cfg.params == sum(named.values()) - outside
    assert sum((info["vision"] or {}).values()) == outside - audio
    if info["audio"] is not None:
        assert sum(info["audio"].values()) == audio
    return outside - audio, audio


_G4_TEXT = dict(G4, vocab_size_per_layer_input=128)


def test_gemma4_vision_tower_is_counted_exactly():
    """Gemma 4's vision encoder and projector (Gemma4VisionConfig's defaults: 169,134,080 parameters before the default
    decoder; the wrapper's own defaults build none: {}) and a small tower with fewer KV heads and a head dim of its own,
    equal to numel() outside the decoder."""
    assert _towers_are_exact("gemma4") == (0, 0)
    assert _towers_are_exact("gemma4", dict(vision_config={}))[0] == 169_134_080
    small = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                 head_dim=8, patch_size=4, position_embedding_size=64)
    assert _towers_are_exact("gemma4", dict(text_config=_G4_TEXT, vision_config=small))[0] == 20_256


def test_gemma4_unified_image_embedder_and_audio_projection_are_counted_exactly():
    """Gemma 4 Unified's encoder-free image embedder (LayerNorms, a linear over 48-pixel patches, the factorized
    position table, the projection: 44,024,064 at Gemma4UnifiedVisionConfig's defaults before the default decoder)
    and its audio projection (1,474,560 at Gemma4UnifiedAudioConfig's), and a small shape, equal to numel(); the
    wrapper's own defaults build neither."""
    assert _towers_are_exact("gemma4_unified") == (0, 0)
    assert _towers_are_exact("gemma4_unified", dict(vision_config={}, audio_config={})) == (44_024_064, 1_474_560)
    small = dict(patch_size=4, pooling_kernel_size=2, mm_embed_dim=24, mm_posemb_size=16, output_proj_dims=24)
    text = TINY["gemma4_unified_text"][1]
    assert _towers_are_exact("gemma4_unified", dict(text_config=text, vision_config=small,
                                                    audio_config=dict(audio_embed_dim=40))) == (5064 + 816 + 24 * 64,
                                                                                                40 * 64)


def test_dots3_note_vision_tower_is_counted_exactly():
    """dots.note 3's vision tower (dense blocks, then blocks of routed experts, each layer's count by per_layer_config)
    and its merger: 6,871,277,312 parameters at Dots3NoteVisionConfig's defaults (25 dense layers, 17 of 4 to 64
    experts); a small tower with biased attention and experts of a width of their own in one layer, written as
    mlp_layer_types and per_layer_config, and with the released files' spellings (pyramid_num_routed, embed_dim,
    num_heads, use_bias): each equal to numel() outside the decoder and the audio tower."""
    assert _towers_are_exact("dots3_note")[0] == 6_871_277_312
    small = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=2, patch_size=4,
                 moe_intermediate_size=24, num_local_experts=4, adapter_in_dim=32, adapter_out_dim=64,
                 attention_bias=True, mlp_layer_types=["dense", "sparse", "sparse"],
                 per_layer_config={"2": {"num_local_experts": 2, "moe_intermediate_size": 16}})
    audio = dict(num_hidden_layers=1, adapter_out_dim=64)  # (the config class requires the decoder's width)
    _towers_are_exact("dots3_note", dict(text_config=DOTS3, vision_config=small, audio_config=audio))
    released = dict(embed_dim=32, intermediate_size=48, num_hidden_layers=3, num_heads=2, patch_size=4, use_bias=True,
                    moe_intermediate_size=24, adapter_in_dim=32, adapter_out_dim=64, pyramid_num_routed=[-1, 4, 2])
    from transformers import AutoModelForImageTextToText

    hf = AutoConfig.for_model("dots3_note", text_config=DOTS3, vision_config=copy.deepcopy(released), audio_config=audio)
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hf)
    info = read_config(dict(model_type="dots3_note", text_config=DOTS3, vision_config=released))[1]
    assert sum(info["vision"].values()) == sum(p.numel() for n, p in model.named_parameters()
                                               if n.startswith("model.vision_tower."))


def test_emu3_image_tokenizer_is_counted_exactly():
    """Emu3's VQ-VAE as Emu3ForConditionalGeneration holds it (encoder, codebook, the convolutions around it, decoder):
    270,740,287 parameters at Emu3VQVAEConfig's defaults; a small one with a doubled latent, attention at both levels
    and one temporal halving, equal to numel() outside the decoder."""
    text = dict(B, pad_token_id=1, bos_token_id=2, eos_token_id=3)
    vocab = {"vocabulary_map": {"<|visual token 000000|>": 5}}  # (the class maps image codes to tokens through it)
    assert _towers_are_exact("emu3", vocab)[0] == 270_740_287
    small = dict(base_channels=32, channel_multiplier=[1, 2], attn_resolutions=[0, 1], num_res_blocks=1, hidden_size=64,
                 embed_dim=8, latent_channels=8, double_latent=True, temporal_downsample_factor=2, codebook_size=64,
                 out_channels=1)
    _towers_are_exact("emu3", dict(vocab, text_config=text, vq_config=small))


def test_apertus1p5_image_tokenizer_is_counted_exactly():
    """Apertus 1.5's image tokenizer (its encoder, the 1×1 convolution and the codebook; the model holds no decoder):
    218,153,984 parameters at Apertus1p5VisionTokenizerConfig's defaults; a small one with attention at two of its
    three resolutions, equal to numel() outside the decoder and the audio tokenizer."""
    text = dict(B, output_vocab_size=131072)
    text.pop("vocab_size")  # (the wrapper checks its image and audio codes lie inside the default vocabulary)
    assert _towers_are_exact("apertus1p5")[0] == 218_153_984
    small = dict(base_channels=32, channel_multiplier=[1, 2, 2], num_res_blocks=1, resolution=32, attn_resolutions=[16, 8],
                 latent_channels=16, embed_dim=8, codebook_size=64)
    _towers_are_exact("apertus1p5", dict(text_config=text, vision_config=small, audio_token_offset=131272 + 64))
