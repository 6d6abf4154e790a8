"""Hugging Face ``config.json`` -> :class:`ModelConfig`: plain data is read and validated, nothing
is executed. Missing or mistyped fields raise InputError naming the field.

Every family is read as transformers 5.24 builds it (``models/<family>/configuration_<family>.py``
for the defaults of absent keys, ``modeling_<family>.py`` for what each key changes): a key absent
from the file takes the config class's default (Mistral's ``sliding_window`` is 4096 when absent, but
``null`` in the file turns the window off). :func:`read_config` also reports what it read: the family,
the attention pattern, MLA, experts, quantization, the dtype, and the keys it did not use — split into
keys known not to change a GEMM, a parameter or a byte (token ids, dropout, RoPE settings, ...) and
keys it does not know.

Multimodal wrappers (``gemma3``, ``llama4``, ``mistral3``) are read through their ``text_config``: the
decoder is what the estimator counts; the vision tower is left out (and said so).
"""

from __future__ import annotations

import json

from gemmlib.core.errors import InputError
from gemmlib.core.files import read_regular
from gemmlib.core.i18n import N_, Text
from gemmlib.llm.config import ModelConfig, _whole, moe_pattern
from gemmlib.llm.quant import from_quantization_config

MAX_CONFIG_BYTES = 1_000_000  # a config.json is a few kB; refuse anything this large
# The reasons Python's json module gives (json.JSONDecodeError.msg), marked so that a page shows them translated
# (the CLI prints them as they are).
JSON_REASONS = frozenset((
    N_("Expecting value"), N_("Expecting property name enclosed in double quotes"), N_("Expecting ':' delimiter"),
    N_("Expecting ',' delimiter"), N_("Unterminated string starting at"), N_("Invalid control character at"),
    N_("Invalid \\escape"), N_("Invalid \\uXXXX escape"), N_("Extra data"),
    N_("Illegal trailing comma before end of object"), N_("Illegal trailing comma before end of array")))

# The families read exactly (model_type as config.json spells it).
SUPPORTED_MODEL_TYPES = (
    "llama", "mistral", "ministral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2",
    "gemma3_text", "gemma3", "phi", "phi3", "phimoe", "deepseek_v2", "deepseek_v3", "olmo", "olmo2", "olmo3",
    "olmoe", "granite", "granitemoe", "cohere", "cohere2", "internlm2", "falcon", "gpt_neox", "starcoder2", "gpt2",
    "gpt_bigcode", "gpt_oss", "glm4_moe", "llama4_text", "llama4", "smollm3", "mistral3",
)
# Multimodal configs whose decoder lives in text_config (and the model_type it takes when the block has none).
_WRAPPERS = {"gemma3": "gemma3_text", "llama4": "llama4_text", "mistral3": "mistral"}
# Old spellings of a family.
_LEGACY = {"refinedweb": "falcon", "refinedwebmodel": "falcon"}

# Keys read nowhere because they change no GEMM, no parameter and no byte the estimator counts.
IRRELEVANT_KEYS = frozenset({
    "architectures", "auto_map", "_name_or_path", "transformers_version", "model_type", "bos_token_id",
    "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id", "initializer_range",
    "initializer_factor", "attention_dropout", "hidden_dropout", "embd_pdrop", "resid_pdrop", "attn_pdrop",
    "summary_first_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob", "embedding_dropout", "dropout",
    "classifier_dropout", "layer_norm_eps", "layer_norm_epsilon", "rms_norm_eps", "norm_eps", "norm_epsilon",
    "use_cache", "hidden_act", "hidden_activation", "activation_function", "rope_theta", "rope_scaling",
    "rope_parameters", "rope_type", "partial_rotary_factor", "rotary_pct", "rotary_emb_base", "rope_interleave",
    "original_max_position_embeddings", "pretraining_tp", "logit_scale", "final_logit_softcapping",
    "attn_logit_softcapping", "query_pre_attn_scalar", "embedding_multiplier", "residual_multiplier",
    "attention_multiplier", "logits_scaling", "router_aux_loss_coef", "output_router_logits", "router_jitter_noise",
    "input_jitter_noise", "norm_topk_prob", "routed_scaling_factor", "scoring_func", "topk_method", "n_group",
    "topk_group", "aux_loss_alpha", "seq_aux", "clip_qkv", "swiglu_limit", "swiglu_alpha", "use_bidirectional_attention",
    "scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "summary_type",
    "summary_use_proj", "summary_activation", "summary_proj_to_labels", "task_specific_params", "n_ctx",
    "tokenizer_class", "chat_template", "attn_temperature_tuning", "floor_scale", "attn_scale", "rope_local_base_freq",
    "cache_implementation", "use_qk_norm_first", "lm_head_dtype", "experts_per_token", "moe_layer_freq",
    "ep_size", "use_parallel_residual_dropout", "layer_norm_type", "rotary_dim", "max_window_layers_dense",
    "full_attn_mod", "interpolate_factor", "mlp_only_layers_dense", "bias_dropout_fusion", "image_token_index",
    "image_token_id", "boi_token_index", "eoi_token_index", "mm_tokens_per_image", "vision_config",
    "vision_feature_layer", "projector_hidden_act", "multimodal_projector_bias", "spatial_merge_size",
    "vision_feature_select_strategy", "text_config", "quantization_config", "torch_dtype", "dtype",
    "output_attentions", "output_hidden_states", "return_dict", "is_decoder", "tie_encoder_decoder",
    "num_nextn_predict_layers_dense", "max_batch_size", "max_sequence_length", "use_sliding_window_dense",
    "tie_weights", "keys_to_ignore_at_inference", "gradient_checkpointing", "fp32_residual_connection",
    "apply_residual_connection_post_layernorm", "attention_softmax_in_fp32", "add_cross_attention",
    "initial_context_length", "attention_sink_size", "prefill_chunk_size", "runner_max_sequence_length",
    "scale_attention_softmax_in_fp32", "activation", "mlp_type", "norm_type", "residual_dropout", "attn_implementation",
    # generic PretrainedConfig fields (what save_pretrained writes for every model)
    "chunk_size_feed_forward", "is_encoder_decoder", "id2label", "label2id", "problem_type", "prefix",
    "torchscript", "pruned_heads", "tf_legacy_loss", "use_bfloat16", "finetuning_task", "cross_attention_hidden_size",
    "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups", "diversity_penalty",
    "temperature", "top_k", "top_p", "typical_p", "repetition_penalty", "length_penalty", "no_repeat_ngram_size",
    "encoder_no_repeat_ngram_size", "bad_words_ids", "num_return_sequences", "output_scores",
    "return_dict_in_generate", "forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values",
    "exponential_decay_length_penalty", "suppress_tokens", "begin_suppress_tokens", "_attn_implementation_autoset",
    "_experts_implementation", "experts_implementation", "base_model_tp_plan", "base_model_pp_plan",
})
# Keys a family's config class accepts (or a Hub file carries) that transformers' modeling code of that
# family does not read: listed as ignored, with no effect on the count.
UNUSED_BY_FAMILY: dict[str, frozenset[str]] = {
    "qwen2": frozenset({"attention_bias"}),  # q/k/v biases are always on, o_proj has none
    "phi3": frozenset({"attention_bias", "lm_head_bias", "mlp_bias"}),
    "qwen3_moe": frozenset({"max_window_layers"}),  # a sliding window applies to every layer
    "gemma2": frozenset({"sliding_window_size"}),
    "deepseek_v2": frozenset({"moe_layer_freq", "head_dim", "qk_head_dim"}),  # head dims derive from nope + rope
    "deepseek_v3": frozenset({"moe_layer_freq", "head_dim", "qk_head_dim"}),
    "cohere": frozenset({"head_dim"}),  # always hidden_size / heads
    "cohere2": frozenset({"head_dim"}),
    "gpt_bigcode": frozenset({"num_key_value_heads"}),  # follows multi_query
    "olmoe": frozenset({"head_dim"}),
    "gpt_neox": frozenset({"head_dim", "num_key_value_heads"}),
}

_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float8_e4m3fn": "fp8", "float": "fp32",
           "half": "fp16", "float64": "fp64"}


# The shape keys a config.json must give itself (transformers would fill them with its flagship model's
# values, which is a silent wrong number for any other model); a wrapper's text_config may rely on the
# text config class's defaults, as Gemma 3's do.
REQUIRED_KEYS = frozenset({"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                           "vocab_size", "num_local_experts", "num_experts", "n_routed_experts",
                           "num_experts_per_tok", "n_embd", "n_layer", "n_head"})


class _Read:
    """A config.json's fields with the family's defaults, remembering which keys were used."""

    def __init__(self, raw: dict, family: str, defaults: dict, aliases: dict | None = None, *,
                 defaults_for_shape: bool = False) -> None:
        self.raw, self.family, self.defaults = raw, family, defaults
        self.aliases = aliases or {}
        self.used: set[str] = {"model_type"}
        self.notes: list[str] = []
        self.defaulted: dict[str, object] = {}
        self.defaults_for_shape = defaults_for_shape

    def has(self, key: str) -> bool:
        return key in self.raw or any(a in self.raw for a in self.aliases.get(key, ()))

    def get(self, key: str):
        """The value in the file (null included), else the family default (None when it has none)."""
        present = [k for k in (key, *self.aliases.get(key, ())) if k in self.raw]
        if present:
            self.used.update(present)  # every spelling given is read (the first one wins)
            return self.raw[present[0]]
        if key in REQUIRED_KEYS and not self.defaults_for_shape:
            return None
        v = self.defaults.get(key)
        if v is not None:
            self.defaulted[key] = v
        return v

    def whole(self, key: str, *, minimum: int = 1, default=None) -> int:
        v = self.get(key)
        if v is None:
            v = default
        if v is None:
            raise InputError(N_("config.json has no {key!r} field"), key=key)
        return _whole(key, v, minimum=minimum)

    def opt_whole(self, key: str, *, minimum: int = 0) -> int | None:
        v = self.get(key)
        return None if v is None else _whole(key, v, minimum=minimum)

    def flag(self, key: str, default: bool = False) -> bool:
        v = self.get(key)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise InputError(N_("config.json field {key!r} must be true or false, got {v!r}"),
                             key=key, v=v)
        return v

    def ints(self, key: str) -> list[int]:
        v = self.get(key)
        if v is None:
            return []
        if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise InputError(N_("config.json field {key!r} must be a list of whole numbers"), key=key)
        return v

    def layer_types(self, layers: int) -> list[str] | None:
        v = self.get("layer_types")
        if v is None:
            return None
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise InputError(N_("config.json field 'layer_types' must be a list of strings"))
        if len(v) != layers:
            raise InputError(N_("layer_types lists {n} layers but num_hidden_layers is {layers}"),
                             n=len(v), layers=layers)
        bad = sorted(set(v) - {"full_attention", "sliding_attention", "chunked_attention"})
        if bad:
            raise InputError(N_("layer_types holds {kind!r}: this estimator reads full, sliding and chunked attention layers "
                                "only (linear-attention and state-space layers are not supported)"),
                             kind=bad[0])
        return v


def _pattern(types: list[str]) -> str:
    return "".join({"full_attention": "F", "sliding_attention": "S", "chunked_attention": "C"}[t] for t in types)


# ----- family defaults (transformers 5.24 dataclass defaults of the keys that change a shape) ----------
_LLAMA = dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
              num_attention_heads=32, tie_word_embeddings=False, max_position_embeddings=2048)
DEFAULTS: dict[str, dict] = {
    "llama": dict(_LLAMA),
    "granite": dict(_LLAMA),
    "granitemoe": dict(_LLAMA, num_local_experts=8, num_experts_per_tok=2),
    "internlm2": dict(_LLAMA, vocab_size=103168, bias=True),
    "smollm3": dict(_LLAMA, vocab_size=128256, hidden_size=2048, intermediate_size=11008, num_hidden_layers=36,
                    num_attention_heads=16, num_key_value_heads=4, no_rope_layer_interval=4,
                    tie_word_embeddings=True, max_position_embeddings=32768),
    "mistral": dict(_LLAMA, intermediate_size=14336, num_key_value_heads=8, sliding_window=4096,
                    max_position_embeddings=131072),
    "ministral": dict(_LLAMA, intermediate_size=14336, num_key_value_heads=8, sliding_window=4096,
                      max_position_embeddings=131072),
    "mixtral": dict(_LLAMA, intermediate_size=14336, num_key_value_heads=8, num_local_experts=8,
                    num_experts_per_tok=2, max_position_embeddings=131072),
    "qwen2": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=32, sliding_window=4096, max_window_layers=28,
                  use_sliding_window=False, tie_word_embeddings=False, max_position_embeddings=32768),
    "qwen2_moe": dict(vocab_size=151936, hidden_size=2048, intermediate_size=5632, num_hidden_layers=24,
                      num_attention_heads=16, num_key_value_heads=16, sliding_window=4096, max_window_layers=28,
                      use_sliding_window=False, decoder_sparse_step=1, moe_intermediate_size=1408,
                      shared_expert_intermediate_size=5632, num_experts_per_tok=4, num_experts=60, qkv_bias=True,
                      tie_word_embeddings=False, max_position_embeddings=32768),
    "qwen3": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=32, head_dim=128, sliding_window=4096,
                  max_window_layers=28, use_sliding_window=False, tie_word_embeddings=False,
                  max_position_embeddings=32768),
    "qwen3_moe": dict(vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=24,
                      num_attention_heads=32, num_key_value_heads=4, sliding_window=4096, use_sliding_window=False,
                      decoder_sparse_step=1, moe_intermediate_size=768, num_experts_per_tok=8, num_experts=128,
                      tie_word_embeddings=False, max_position_embeddings=32768),
    "gemma": dict(vocab_size=256000, hidden_size=3072, intermediate_size=24576, num_hidden_layers=28,
                  num_attention_heads=16, num_key_value_heads=16, head_dim=256, tie_word_embeddings=True,
                  max_position_embeddings=8192),
    "gemma2": dict(vocab_size=256000, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                   num_attention_heads=8, num_key_value_heads=4, head_dim=256, sliding_window=4096,
                   tie_word_embeddings=True, max_position_embeddings=8192),
    "gemma3_text": dict(vocab_size=262208, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                        num_attention_heads=8, num_key_value_heads=4, head_dim=256, sliding_window=4096,
                        sliding_window_pattern=6, tie_word_embeddings=True, max_position_embeddings=131072),
    "phi": dict(vocab_size=51200, hidden_size=2048, intermediate_size=8192, num_hidden_layers=24,
                num_attention_heads=32, tie_word_embeddings=False, max_position_embeddings=2048),
    "phi3": dict(vocab_size=32064, hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
                 num_attention_heads=32, tie_word_embeddings=False, max_position_embeddings=4096),
    "phimoe": dict(vocab_size=32064, hidden_size=4096, intermediate_size=6400, num_hidden_layers=32,
                   num_attention_heads=32, num_key_value_heads=8, num_local_experts=16, num_experts_per_tok=2,
                   tie_word_embeddings=False, max_position_embeddings=131072),
    "deepseek_v2": dict(vocab_size=102400, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                        num_attention_heads=32, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                        qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=64, n_shared_experts=2,
                        moe_intermediate_size=1407, first_k_dense_replace=0, tie_word_embeddings=False,
                        max_position_embeddings=2048),
    "deepseek_v3": dict(vocab_size=129280, hidden_size=7168, intermediate_size=18432, num_hidden_layers=61,
                        num_attention_heads=128, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                        qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=256, n_shared_experts=1,
                        moe_intermediate_size=2048, first_k_dense_replace=3, num_experts_per_tok=8,
                        num_nextn_predict_layers=1, tie_word_embeddings=False, max_position_embeddings=4096),
    "olmo": dict(_LLAMA, vocab_size=50304),
    "olmo2": dict(_LLAMA, vocab_size=50304),
    "olmo3": dict(_LLAMA, vocab_size=50304, sliding_window=4096),
    "olmoe": dict(vocab_size=50304, hidden_size=2048, intermediate_size=2048, num_hidden_layers=16,
                  num_attention_heads=16, num_experts=64, num_experts_per_tok=8, tie_word_embeddings=False,
                  max_position_embeddings=4096),
    "cohere": dict(vocab_size=256000, hidden_size=8192, intermediate_size=22528, num_hidden_layers=40,
                   num_attention_heads=64, tie_word_embeddings=True, max_position_embeddings=8192),
    "cohere2": dict(vocab_size=256000, hidden_size=8192, intermediate_size=22528, num_hidden_layers=40,
                    num_attention_heads=64, sliding_window=4096, sliding_window_pattern=4, tie_word_embeddings=True,
                    max_position_embeddings=8192),
    "falcon": dict(vocab_size=65024, hidden_size=4544, num_hidden_layers=32, num_attention_heads=71,
                   new_decoder_architecture=False, multi_query=True, parallel_attn=True, bias=False, alibi=False,
                   tie_word_embeddings=True, max_position_embeddings=2048),
    "gpt_neox": dict(vocab_size=50432, hidden_size=6144, num_hidden_layers=44, num_attention_heads=64,
                     intermediate_size=24576, attention_bias=True, use_parallel_residual=True,
                     tie_word_embeddings=False, max_position_embeddings=2048),
    "starcoder2": dict(vocab_size=49152, hidden_size=3072, intermediate_size=12288, num_hidden_layers=30,
                       num_attention_heads=24, num_key_value_heads=2, use_bias=True, tie_word_embeddings=True,
                       max_position_embeddings=4096),
    "gpt2": dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12, tie_word_embeddings=True),
    "gpt_bigcode": dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12, multi_query=True,
                        tie_word_embeddings=True),
    "gpt_oss": dict(vocab_size=201088, hidden_size=2880, intermediate_size=2880, num_hidden_layers=36,
                    num_attention_heads=64, num_key_value_heads=8, head_dim=64, sliding_window=128,
                    num_local_experts=128, num_experts_per_tok=4, attention_bias=True, tie_word_embeddings=False,
                    max_position_embeddings=131072),
    "glm4_moe": dict(vocab_size=151552, hidden_size=4096, intermediate_size=10944, num_hidden_layers=46,
                     num_attention_heads=96, num_key_value_heads=8, moe_intermediate_size=1408, num_experts_per_tok=8,
                     n_shared_experts=1, n_routed_experts=128, first_k_dense_replace=1, tie_word_embeddings=False,
                     max_position_embeddings=131072),
    "llama4_text": dict(vocab_size=202048, hidden_size=5120, intermediate_size=8192, intermediate_size_mlp=16384,
                        num_hidden_layers=48, num_attention_heads=40, num_key_value_heads=8, head_dim=128,
                        num_local_experts=16, num_experts_per_tok=1, interleave_moe_layer_step=1, use_qk_norm=True,
                        no_rope_layer_interval=4, attention_chunk_size=8192, tie_word_embeddings=False,
                        max_position_embeddings=131072),
}
# attribute_map aliases (a key -> other spellings the config class accepts)
ALIASES: dict[str, dict[str, tuple[str, ...]]] = {
    "mixtral": {"num_local_experts": ("num_experts",)},
    "qwen3_moe": {"num_experts": ("num_local_experts",)},
    "qwen2_moe": {"num_experts": ("num_local_experts",)},
    "gpt_oss": {"num_local_experts": ("num_experts",)},
    "granitemoe": {"num_local_experts": ("num_experts",)},
    "phimoe": {"num_local_experts": ("num_experts",)},
    "olmoe": {"num_experts": ("num_local_experts",)},
    "deepseek_v2": {"n_routed_experts": ("num_experts",)},
    "deepseek_v3": {"n_routed_experts": ("num_local_experts",), "num_nextn_predict_layers": ("num_mtp_layers",)},
    "glm4_moe": {"n_routed_experts": ("num_local_experts",)},
    "falcon": {"hidden_size": ("n_embed",)},
    "gemma3_text": {"sliding_window_pattern": ("_sliding_window_pattern",)},
    "cohere2": {"sliding_window_pattern": ("_sliding_window_pattern",)},
}


def _torch_dtype(r: _Read) -> str:
    for key in ("torch_dtype", "dtype"):
        v = r.raw.get(key)
        if isinstance(v, str):
            r.used.add(key)
            name = _DTYPES.get(v.replace("torch.", "").lower())
            if name is None:
                raise InputError(N_("config.json {key} {v!r} is not a dtype this estimator knows"),
                                 key=key, v=v)
            return name
    return ""


# ----- the readers --------------------------------------------------------------------------------

def _common(r: _Read, *, head_dim_key: bool = True) -> dict:
    """hidden, layers, heads, kv heads, head dim, ffn, vocab, tie, positions of a llama-like config."""
    heads = r.whole("num_attention_heads")
    h = r.whole("hidden_size")
    layers = r.whole("num_hidden_layers")
    kv = r.opt_whole("num_key_value_heads", minimum=1) or heads  # null or absent without a default: MHA
    hd = r.opt_whole("head_dim", minimum=1) if head_dim_key else None
    if hd is None and h % heads:
        raise InputError(N_("hidden_size {h} is not divisible by {heads} heads and config.json gives no head_dim"),
                         h=h, heads=heads)
    return dict(hidden=h, layers=layers, heads=heads, kv_heads=kv, head_dim=hd or h // heads,
                ffn=r.whole("intermediate_size"), vocab=r.whole("vocab_size"),
                tied_embeddings=r.flag("tie_word_embeddings", False),
                max_positions=r.opt_whole("max_position_embeddings") or 0)


def _sliding_all(r: _Read, c: dict, *, key: str = "sliding_window") -> None:
    """Every layer sliding when the window is set (no layer_types in the config: transformers' cache
    and mask then treat each layer as sliding)."""
    w = r.opt_whole(key, minimum=0)
    if w:
        c.update(sliding_window=w, layer_types="S" * c["layers"])


def _explicit_or(r: _Read, c: dict, default_types: list[str] | None, window: int | None) -> None:
    types = r.layer_types(c["layers"]) or default_types
    if types and window and any(t != "full_attention" for t in types):
        c.update(sliding_window=window, layer_types=_pattern(types))
    elif types and any(t != "full_attention" for t in types) and not window:
        raise InputError(N_("layer_types has sliding layers but sliding_window is null"))


def _read_llama(r: _Read) -> dict:
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, mlp_bias=r.flag("mlp_bias"))
    return c


def _read_granitemoe(r: _Read) -> dict:
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, experts=r.whole("num_local_experts"),
             experts_per_token=r.whole("num_experts_per_tok"))
    return c


def _read_mistral(r: _Read) -> dict:
    c = _common(r)
    _sliding_all(r, c)
    return c


def _read_ministral(r: _Read) -> dict:
    c = _common(r)
    if not r.has("head_dim"):
        r.notes.append(Text(N_("no head_dim in config.json: hidden_size / heads is used (transformers 5.24 needs it "
                               "set)")))
    w = r.opt_whole("sliding_window", minimum=0)
    _explicit_or(r, c, ["sliding_attention"] * c["layers"] if w else None, w)
    return c


def _read_mixtral(r: _Read) -> dict:
    c = _common(r)
    _sliding_all(r, c)
    c.update(experts=r.whole("num_local_experts"), experts_per_token=r.whole("num_experts_per_tok"))
    return c


def _qwen_window(r: _Read, c: dict, rule: str) -> None:
    layers = c["layers"]
    use = r.flag("use_sliding_window")
    w = r.opt_whole("sliding_window", minimum=0)
    mwl = r.opt_whole("max_window_layers") if rule != "all" else None
    if rule == "from":  # qwen2 / qwen3: layers i >= max_window_layers slide
        default = ["sliding_attention" if use and w and i >= (mwl or 0) else "full_attention" for i in range(layers)]
    elif rule == "odd":  # qwen2_moe: (i + 1) % 2 and i < max_window_layers
        default = ["sliding_attention" if use and w and (i + 1) % 2 and i < (mwl or 0) else "full_attention"
                   for i in range(layers)]
    else:  # qwen3_moe: every layer
        default = ["sliding_attention" if use and w else "full_attention"] * layers
    _explicit_or(r, c, default, w if use or r.has("layer_types") else None)


def _read_qwen2(r: _Read) -> dict:
    c = _common(r)
    c.update(qkv_bias=True)
    _qwen_window(r, c, "from")
    return c


def _read_qwen3(r: _Read) -> dict:
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="head")
    _qwen_window(r, c, "from")
    return c


def _qwen_moe_layers(r: _Read, c: dict) -> str:
    return moe_pattern(c["layers"], every=r.whole("decoder_sparse_step", default=1),
                       dense_layers=tuple(r.ints("mlp_only_layers")))


def _read_qwen2_moe(r: _Read) -> dict:
    c = _common(r)
    c.update(qkv_bias=r.flag("qkv_bias", True), experts=r.whole("num_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=r.whole("moe_intermediate_size"),
             shared_expert_ffn=r.whole("shared_expert_intermediate_size", minimum=0))
    c["shared_expert_gate"] = c["shared_expert_ffn"] > 0
    c["moe_layers"] = _qwen_moe_layers(r, c)
    _qwen_window(r, c, "odd")
    return c


def _read_qwen3_moe(r: _Read) -> dict:
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="head", experts=r.whole("num_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=r.whole("moe_intermediate_size"))
    c["moe_layers"] = _qwen_moe_layers(r, c)
    _qwen_window(r, c, "all")
    return c


def _read_gemma(r: _Read) -> dict:
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab)
    return c


def _read_gemma2(r: _Read) -> dict:
    c = _read_gemma(r)
    c["norms_per_layer"] = 4
    w = r.opt_whole("sliding_window", minimum=0)
    default = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(c["layers"])]
    _explicit_or(r, c, default, w)
    return c


def _read_gemma3_text(r: _Read) -> dict:
    c = _read_gemma(r)
    c.update(norms_per_layer=4, qk_norm="head")
    w = r.opt_whole("sliding_window", minimum=0)
    if w and r.flag("use_bidirectional_attention"):
        w = w // 2 + 1
    p = r.whole("sliding_window_pattern", default=6)
    default = ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(c["layers"])]
    _explicit_or(r, c, default, w)
    return c


def _read_phi(r: _Read) -> dict:
    c = _common(r)
    c.update(qkv_bias=True, o_bias=True, mlp="plain", mlp_bias=True, norm="layer", norms_per_layer=1,
             parallel_block=True, lm_head_bias=True, qk_norm="head" if r.flag("qk_layernorm") else "none")
    if c["head_dim"] * c["heads"] != c["hidden"]:
        raise InputError(N_("phi: head_dim must be hidden_size / num_attention_heads"))
    return c


def _read_phi3(r: _Read) -> dict:
    c = _common(r)
    c.update(fused_qkv=True, fused_gate_up=True)
    _sliding_all(r, c)
    return c


def _read_phimoe(r: _Read) -> dict:
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, norm="layer", lm_head_bias=r.flag("lm_head_bias"),
             experts=r.whole("num_local_experts"), experts_per_token=r.whole("num_experts_per_tok"))
    _sliding_all(r, c)
    return c


def _read_deepseek(r: _Read) -> dict:
    h = r.whole("hidden_size")
    layers = r.whole("num_hidden_layers")
    heads = r.whole("num_attention_heads")
    r.get("num_key_value_heads")  # read and unused: kv_b_proj makes keys and values for every head
    dn, dr, dv = r.whole("qk_nope_head_dim"), r.whole("qk_rope_head_dim"), r.whole("v_head_dim")
    rq = r.opt_whole("q_lora_rank") or 0
    ab = r.flag("attention_bias")
    if not r.has("num_experts_per_tok") and "num_experts_per_tok" not in r.defaults:
        raise InputError(N_("a deepseek_v2 config.json needs 'num_experts_per_tok' (transformers cannot route without "
                            "it)"))
    fm = r.whole("moe_intermediate_size")
    e = r.whole("n_routed_experts")
    shared = r.whole("n_shared_experts", minimum=0) * fm
    c = dict(hidden=h, layers=layers, heads=heads, kv_heads=heads, head_dim=dn + dr, v_head_dim=dv,
             q_lora_rank=rq, kv_lora_rank=r.whole("kv_lora_rank"), rope_head_dim=dr,
             vocab=r.whole("vocab_size"), tied_embeddings=r.flag("tie_word_embeddings"),
             max_positions=r.opt_whole("max_position_embeddings") or 0, qkv_bias=ab, o_bias=ab,
             mlp_bias=r.flag("mlp_bias") if r.family == "deepseek_v2" else False,
             ffn=r.whole("intermediate_size"), experts=e, experts_per_token=r.whole("num_experts_per_tok"),
             expert_ffn=fm, shared_expert_ffn=shared,
             moe_layers=moe_pattern(layers, first_dense=r.whole("first_k_dense_replace", minimum=0, default=0)))
    if r.family == "deepseek_v3":
        c.update(router_score_bias=True, mtp_layers=r.whole("num_nextn_predict_layers", minimum=0, default=0))
    if r.has("moe_layer_freq") and r.raw.get("moe_layer_freq") not in (None, 1):
        r.notes.append(Text(N_("moe_layer_freq is ignored by transformers (every layer after the dense ones is MoE)")))
    return c


def _read_glm4_moe(r: _Read) -> dict:
    c = _common(r)
    c.update(qkv_bias=r.flag("attention_bias"), qk_norm="head" if r.flag("use_qk_norm") else "none",
             experts=r.whole("n_routed_experts"), experts_per_token=r.whole("num_experts_per_tok"),
             expert_ffn=r.whole("moe_intermediate_size"), router_score_bias=True,
             mtp_layers=r.whole("num_nextn_predict_layers", minimum=0, default=0))
    c["shared_expert_ffn"] = r.whole("n_shared_experts", minimum=0) * c["expert_ffn"]
    c["moe_layers"] = moe_pattern(c["layers"], first_dense=r.whole("first_k_dense_replace", minimum=0, default=0))
    return c


def _read_olmo(r: _Read) -> dict:
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, norm="plain")
    return c


def _read_olmo2(r: _Read) -> dict:
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="width")
    if r.family == "olmo3":
        w = r.opt_whole("sliding_window", minimum=0)
        default = ["sliding_attention" if (i + 1) % 4 else "full_attention" for i in range(c["layers"])]
        _explicit_or(r, c, default, w)
    return c


def _read_olmoe(r: _Read) -> dict:
    c = _common(r, head_dim_key=False)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="width", experts=r.whole("num_experts"),
             experts_per_token=r.whole("num_experts_per_tok"))
    return c


def _read_cohere(r: _Read) -> dict:
    c = _common(r, head_dim_key=False)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, norm="layer_weight", norms_per_layer=1, parallel_block=True,
             tied_embeddings=r.flag("tie_word_embeddings", True))
    if r.family == "cohere":
        c["qk_norm"] = "width" if r.flag("use_qk_norm") else "none"
    else:
        w = r.opt_whole("sliding_window", minimum=0)
        p = r.whole("sliding_window_pattern", default=4)
        default = ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(c["layers"])]
        _explicit_or(r, c, default, w)
    return c


def _read_falcon(r: _Read) -> dict:
    h = r.whole("hidden_size")
    heads = r.whole("num_attention_heads")
    if h % heads:
        raise InputError(N_("falcon: hidden_size {h} must be a multiple of num_attention_heads {heads}"),
                         h=h, heads=heads)
    new = r.flag("new_decoder_architecture")
    mq = r.flag("multi_query", True)
    kvh = r.opt_whole("num_kv_heads", minimum=1) or heads
    if new:
        kv, cache = kvh, heads  # K/V are broadcast to every head before the cache (modeling_falcon.py)
    elif mq:
        kv, cache = 1, 1
    else:
        kv, cache = heads, heads
    parallel = r.flag("parallel_attn", True)
    n_ln = r.opt_whole("num_ln_in_parallel_attn", minimum=1)
    if n_ln is None and new:
        n_ln = 2
    norms = 2 if not parallel or n_ln == 2 else 1
    b = r.flag("bias")
    ffn = r.opt_whole("ffn_hidden_size", minimum=1) or 4 * h
    return dict(hidden=h, layers=r.whole("num_hidden_layers"), heads=heads, kv_heads=kv, kv_cache_heads=cache,
                head_dim=h // heads, ffn=ffn, vocab=r.whole("vocab_size"), mlp="plain", norm="layer",
                norms_per_layer=norms, parallel_block=parallel or new, qkv_bias=b, o_bias=b, mlp_bias=b,
                fused_qkv=True, alibi=r.flag("alibi"), tied_embeddings=r.flag("tie_word_embeddings", True),
                max_positions=r.opt_whole("max_position_embeddings") or 0)


def _read_gpt_neox(r: _Read) -> dict:
    c = _common(r, head_dim_key=False)
    ab = r.flag("attention_bias", True)
    c.update(kv_heads=c["heads"], qkv_bias=ab, o_bias=ab, mlp="plain", mlp_bias=True, norm="layer",
             parallel_block=r.flag("use_parallel_residual", True), fused_qkv=True)
    return c


def _read_starcoder2(r: _Read) -> dict:
    c = _common(r)
    b = r.flag("use_bias", True)
    c.update(qkv_bias=b, o_bias=b, mlp="plain", mlp_bias=b, norm="layer",
             tied_embeddings=r.flag("tie_word_embeddings", True))
    _sliding_all(r, c)
    return c


def _read_gpt2(r: _Read) -> dict:
    h = r.whole("n_embd")
    heads = r.whole("n_head")
    if h % heads:
        raise InputError(N_("n_embd {h} must be a multiple of n_head {heads}"), h=h, heads=heads)
    inner = r.get("n_inner")
    kv = 1 if r.family == "gpt_bigcode" and r.flag("multi_query", True) else heads
    positions = r.whole("n_positions")
    return dict(layers=r.whole("n_layer"), hidden=h, heads=heads, kv_heads=kv, head_dim=h // heads,
                ffn=4 * h if inner is None else _whole("n_inner", inner), vocab=r.whole("vocab_size"),
                mlp="plain", norm="layer", qkv_bias=True, o_bias=True, mlp_bias=True, fused_qkv=True,
                tied_embeddings=r.flag("tie_word_embeddings", True), learned_positions=positions,
                max_positions=positions)


def _read_gpt_oss(r: _Read) -> dict:
    c = _common(r)
    ab = r.flag("attention_bias", True)
    w = r.opt_whole("sliding_window", minimum=0)
    c.update(qkv_bias=ab, o_bias=ab, attention_sinks=True, experts=r.whole("num_local_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), router_bias=True, expert_bias=True,
             fused_gate_up=True)
    default = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(c["layers"])]
    _explicit_or(r, c, default, w)
    return c


def _read_internlm2(r: _Read) -> dict:
    c = _common(r, head_dim_key=False)
    b = r.flag("bias", True)
    c.update(qkv_bias=b, o_bias=b, fused_qkv=True)
    r.notes.append(Text(N_("internlm2 is remote code (not in transformers): read from its modeling_internlm2.py "
                           "layout")))
    return c


def _read_llama4_text(r: _Read) -> dict:
    c = _common(r)
    layers = c["layers"]
    ab = r.flag("attention_bias")
    step = r.whole("interleave_moe_layer_step", default=1)
    moe = r.ints("moe_layers") if r.get("moe_layers") is not None else list(range(step - 1, layers, step))
    interval = r.whole("no_rope_layer_interval", default=4)
    nrl = r.ints("no_rope_layers") or [int((i + 1) % interval != 0) for i in range(layers)]
    if len(nrl) != layers:
        raise InputError(N_("no_rope_layers lists {n} layers but num_hidden_layers is {layers}"),
                         n=len(nrl), layers=layers)
    chunk = r.opt_whole("attention_chunk_size", minimum=0)
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="l2" if r.flag("use_qk_norm", True) else "none",
             experts=r.whole("num_local_experts"), experts_per_token=r.whole("num_experts_per_tok"),
             experts_compute="all",
             moe_layers="".join("M" if i in moe else "D" for i in range(layers)))
    c["ffn"] = r.whole("intermediate_size_mlp")  # the dense layers' MLP
    c["expert_ffn"] = r.whole("intermediate_size")
    c["shared_expert_ffn"] = c["expert_ffn"]
    default = ["chunked_attention" if nr and chunk else "full_attention" for nr in nrl]
    _explicit_or(r, c, default, chunk)
    return c


def _read_smollm3(r: _Read) -> dict:
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, mlp_bias=r.flag("mlp_bias"), tied_embeddings=r.flag("tie_word_embeddings", True))
    layers = c["layers"]
    interval = r.whole("no_rope_layer_interval", default=4)
    nrl = r.ints("no_rope_layers") or [int((i + 1) % interval != 0) for i in range(layers)]
    use = r.flag("use_sliding_window")
    w = r.opt_whole("sliding_window", minimum=0)
    default = ["sliding_attention" if use and w and not nrl[i] else "full_attention" for i in range(layers)]
    _explicit_or(r, c, default, w)
    return c


_READERS = {
    "llama": _read_llama, "granite": _read_llama, "granitemoe": _read_granitemoe, "mistral": _read_mistral,
    "ministral": _read_ministral, "mixtral": _read_mixtral, "qwen2": _read_qwen2, "qwen2_moe": _read_qwen2_moe,
    "qwen3": _read_qwen3, "qwen3_moe": _read_qwen3_moe, "gemma": _read_gemma, "gemma2": _read_gemma2,
    "gemma3_text": _read_gemma3_text, "phi": _read_phi, "phi3": _read_phi3, "phimoe": _read_phimoe,
    "deepseek_v2": _read_deepseek, "deepseek_v3": _read_deepseek, "olmo": _read_olmo, "olmo2": _read_olmo2,
    "olmo3": _read_olmo2, "olmoe": _read_olmoe, "cohere": _read_cohere, "cohere2": _read_cohere,
    "internlm2": _read_internlm2, "falcon": _read_falcon, "gpt_neox": _read_gpt_neox, "starcoder2": _read_starcoder2,
    "gpt2": _read_gpt2, "gpt_bigcode": _read_gpt2, "gpt_oss": _read_gpt_oss, "glm4_moe": _read_glm4_moe,
    "llama4_text": _read_llama4_text, "smollm3": _read_smollm3,
}
FAMILIES = tuple(_READERS)  # the decoder families (wrappers resolve to one of these)


def _unwrap(cfg: dict, mtype: str, notes: list[str]) -> tuple[dict, str, str]:
    """The decoder's config of a multimodal wrapper, its model_type and the wrapper's name."""
    tc = cfg.get("text_config")
    if not isinstance(tc, dict):
        if mtype == "gemma3" or mtype == "llama4":
            raise InputError(N_("a {mtype} config.json needs a 'text_config' object (the decoder's fields)"),
                             mtype=mtype)
        raise InputError(N_("a {mtype} config.json needs a 'text_config' object"), mtype=mtype)
    inner = dict(tc)
    inner_type = str(inner.get("model_type") or _WRAPPERS[mtype]).lower()
    if inner_type not in _READERS:
        raise InputError(N_("{mtype}'s text_config has model_type {inner_type!r}, which is not supported"),
                         mtype=mtype, inner_type=inner_type)
    if mtype == "gemma3" and "tie_word_embeddings" not in inner and "tie_word_embeddings" in cfg:
        inner["tie_word_embeddings"] = cfg["tie_word_embeddings"]
    for key in ("torch_dtype", "dtype", "quantization_config"):
        if key in cfg and key not in inner:
            inner[key] = cfg[key]
    notes.append(Text(N_("{wrapper} is multimodal: its decoder (text_config, {decoder}) is counted, the vision "
                         "tower and projector are not"), wrapper=mtype, decoder=inner_type))
    return inner, inner_type, mtype


def read_config(cfg: dict, name: str = "custom", source: str = "") -> tuple[ModelConfig, dict]:
    """A ModelConfig from a parsed config.json, and what was read: ``{"model_type", "wrapper",
    "dtype_source", "ignored_keys", "unknown_keys", "notes"}`` (see :func:`describe_read`)."""
    if not isinstance(cfg, dict):
        raise InputError(N_("config.json must hold a JSON object ({...}) at the top level"))
    mtype = cfg.get("model_type")
    if not isinstance(mtype, str):
        raise InputError(N_("config.json has no 'model_type' string field (e.g. \"llama\")"))
    mtype = mtype.strip().lower()
    notes: list[str] = []
    if mtype in _LEGACY:
        cfg = _legacy_falcon(cfg, mtype, notes)
        mtype = "falcon"
    wrapper = None
    outer = cfg
    if mtype in _WRAPPERS:
        cfg, mtype, wrapper = _unwrap(cfg, mtype, notes)
    if mtype not in _READERS:
        raise InputError(N_("model_type {mtype!r} is not supported; supported: {choices}"),
                         mtype=mtype, choices=", ".join(SUPPORTED_MODEL_TYPES))
    r = _Read(cfg, mtype, DEFAULTS.get(mtype, {}), ALIASES.get(mtype), defaults_for_shape=wrapper is not None)
    r.notes = notes
    fields_ = _READERS[mtype](r)
    if fields_.get("experts") and "M" not in fields_.get("moe_layers", "M"):
        for k in ("experts", "experts_per_token", "expert_ffn", "shared_expert_ffn", "moe_layers"):
            fields_.pop(k, None)
        for k in ("shared_expert_gate", "router_bias", "expert_bias", "router_score_bias"):
            fields_.pop(k, None)
        fields_.pop("experts_compute", None)
        r.notes.append(Text(N_("no layer is a mixture of experts (every layer is dense): read as a dense model")))
    dtype = _torch_dtype(r)
    quant = None
    q = cfg.get("quantization_config")
    if q is not None:
        r.used.add("quantization_config")
        quant = from_quantization_config(q)
    fields_.setdefault("tied_embeddings", r.flag("tie_word_embeddings", False))
    model = ModelConfig(family=mtype, name=name, source=source, dtype=dtype, quant=quant, **fields_)
    unused = sorted(k for k in cfg if k not in r.used)
    if wrapper:
        unused += sorted(f"(top level) {k}" for k in outer if k not in ("text_config", "model_type") and k not in cfg)
    known = IRRELEVANT_KEYS | UNUSED_BY_FAMILY.get(mtype, frozenset())
    ignored = [k for k in unused if k.removeprefix("(top level) ") in known]
    unknown = [k for k in unused if k.removeprefix("(top level) ") not in known]
    info = {"model_type": mtype, "wrapper": wrapper,
            "dtype_source": "torch_dtype" if dtype else "",
            "ignored_keys": ignored, "unknown_keys": unknown, "defaults": dict(sorted(r.defaulted.items())),
            "notes": r.notes}
    return model, info


def _legacy_falcon(cfg: dict, mtype: str, notes: list[str]) -> dict:
    """Falcon's old remote-code configs (RefinedWeb / RefinedWebModel) in the names transformers uses."""
    out = dict(cfg)
    for old, new in (("n_head", "num_attention_heads"), ("n_layer", "num_hidden_layers"),
                     ("n_head_kv", "num_kv_heads"), ("n_embed", "hidden_size")):
        if old in out and new not in out:
            out[new] = out.pop(old)
    if mtype == "refinedweb":
        out.setdefault("new_decoder_architecture", True)
    notes.append(Text(N_("model_type {mtype!r} is Falcon's old remote-code name; read as falcon"), mtype=mtype))
    return out


def describe_read(model: ModelConfig, info: dict | None = None) -> dict:
    """What was read, for ``--json`` ("read") and the page: the model's description plus the parser's
    report (for a preset or custom inputs: no ignored keys)."""
    d = model.describe()
    info = info or {}
    d.update(model_type=info.get("model_type", model.family), wrapper=info.get("wrapper"),
             ignored_keys=list(info.get("ignored_keys", [])), unknown_keys=list(info.get("unknown_keys", [])),
             defaults=dict(info.get("defaults", {})), notes=list(info.get("notes", [])))
    d["dtype_source"] = info.get("dtype_source", "")
    return d


def from_hf_config(cfg: dict, name: str = "custom", source: str = "") -> ModelConfig:
    """A ModelConfig from the fields of a Hugging Face ``config.json`` (already parsed).

    Only plain data is read; nothing is executed. Missing or mistyped fields raise InputError naming
    the field; an unknown family raises one naming the supported ones.
    """
    return read_config(cfg, name=name, source=source)[0]


def _parse_json(data: bytes | str) -> dict:
    if isinstance(data, str):
        data = data.encode("utf-8", errors="replace")
    if len(data) > MAX_CONFIG_BYTES:
        raise InputError(N_("config.json is {n:,} bytes; a real one is a few kB (limit {limit:,})"),
                         n=len(data), limit=MAX_CONFIG_BYTES)
    if not data.strip():
        raise InputError(N_("config.json is empty"))
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(N_("config.json is not UTF-8 text")) from None
    except json.JSONDecodeError as e:
        raise InputError(N_("config.json is not valid JSON: {msg} at line {lineno}, column {colno}"),
                         msg=Text(e.msg) if e.msg in JSON_REASONS else e.msg, lineno=e.lineno,
                         colno=e.colno) from None
    except RecursionError:
        raise InputError(N_("config.json is nested too deeply to be a model configuration")) from None
    except ValueError as e:  # e.g. an integer of thousands of digits (Python's int conversion limit)
        raise InputError(N_("config.json holds a value that cannot be read: {reason}"),
                         reason=str(e).split(';')[0]) from None


def read_config_json(data: bytes | str, name: str = "uploaded") -> tuple[ModelConfig, dict]:
    """Parse the text of a config.json (an upload or a file) with size and type checks, and report
    what was read."""
    return read_config(_parse_json(data), name=name)


def parse_config_json(data: bytes | str, name: str = "uploaded") -> ModelConfig:
    """Parse the text of a config.json (an upload or a file) with size and type checks."""
    return read_config_json(data, name=name)[0]


def _read_file(path: str) -> bytes:
    """A regular file only (not a FIFO or a device such as /dev/zero), at most MAX_CONFIG_BYTES read."""
    return read_regular(path, MAX_CONFIG_BYTES, what=f"--config {path}")


def _file_name(path: str) -> str:
    import os

    base = os.path.basename(path)
    if base.lower() in ("config.json", ""):
        return os.path.basename(os.path.dirname(os.path.abspath(path))) or "config"
    return base.removesuffix(".json")


def read_config_file(path: str) -> tuple[ModelConfig, dict]:
    """Read and parse a config.json from disk, and report what was read (the CLI's ``--config``)."""
    return read_config(_parse_json(_read_file(path)), name=_file_name(path))


def load_config_file(path: str) -> ModelConfig:
    """Read and parse a config.json from disk (the CLI's ``--config``)."""
    return read_config_file(path)[0]
