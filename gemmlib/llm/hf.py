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

import difflib
import json
from dataclasses import replace

from gemmlib.core.errors import InputError
from gemmlib.core.files import not_json, read_regular
from gemmlib.core.i18n import N_, Text
from gemmlib.llm.config import ModelConfig, _whole, moe_pattern
from gemmlib.llm.families_known import NOT_SIZED, TRANSFORMERS_MODEL_TYPES
from gemmlib.llm.quant import from_mlx_quantization, from_quantization_config
from gemmlib.llm.remote import PORTS as REMOTE_PORTS
from gemmlib.llm.remote import translate as translate_remote
from gemmlib.llm.remote import unused as remote_unused
from gemmlib.llm.ssm import RGLRU, RWKV, KimiDelta, Lightning, Mixer, ShortConv
from gemmlib.llm.vision import audio_params, vision_params

MAX_CONFIG_BYTES = 1_000_000  # a config.json is a few kB; refuse anything this large
# The reasons Python's json module gives (json.JSONDecodeError.msg), marked so that a page shows them translated
# (the CLI prints them as they are).
# The families read exactly (model_type as config.json spells it).
SUPPORTED_MODEL_TYPES = (
    "llama", "mistral", "ministral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2",
    "gemma3_text", "gemma3", "phi", "phi3", "phimoe", "deepseek_v2", "deepseek_v3", "olmo", "olmo2", "olmo3",
    "olmoe", "granite", "granitemoe", "cohere", "cohere2", "internlm2", "falcon", "gpt_neox", "starcoder2", "gpt2",
    "gpt_bigcode", "gpt_oss", "glm4_moe", "llama4_text", "llama4", "smollm3", "mistral3", "exaone4", "ernie4_5_moe",
    "glm4_moe_lite", "qwen3_vl", "qwen3_vl_moe", "qwen3_next", "jamba", "nemotron_h", "falcon_h1", "seed_oss",
    "ernie4_5", "glm", "glm4", "ministral3", "apertus", "minimax_m2", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_5",
    "qwen3_5_moe", "qwen4_exp_text", "qwen4_exp", "dots3_note_text", "dots3_note", "zaya", "step3p7", "mistral_large4", "glm5_next", "ernie4_5_vl_moe", "chameleon", "diffllama", "modernbert-decoder", "jetmoe", "zamba", "zamba2", "hunyuan_v1_dense", "arcee", "exaone", "flex_olmo", "dots1", "deepseek_v32", "glm_moe_dsa",
    "granitemoehybrid", "internlm3", "iquestcoder", "sarvam_moe", "sarvam_mla", "helium", "cwm", "solar_open", "youtu",
    "hunyuan_v1_moe", "vaultgemma", "granitemoeshared", "exaone_moe", "cohere2_moe", "nemotron", "granite_swa",
    "granitemoe_swa", "kolibri1", "lfm2", "lfm2_moe", "bamba", "afmoe", "hy_v3", "minicpm3", "gptj", "codegen",
    "persimmon", "stablelm", "gpt_neo", "mpt", "gemma4_text", "gemma4", "gemma4_unified_text", "gemma4_unified",
    "gemma3n_text", "gemma3n", "jais2", "mimo_v2_flash", "lfm3", "laguna", "dbrx", "bloom", "opt", "biogpt",
    "deepseek_v4", "mellum", "nanochat", "hyperclovax", "flint", "axk1", "axk2", "beam", "lara_mini", "olmo_hybrid",
    "recurrent_gemma", "phi4_multimodal",
    "gpt_neox_japanese", "rwkv", "mistral4", "inkling_text", "inkling_mm_model", "inkling2_text", "inkling2",
    "inkling2_loop_text", "inkling2_loop", "dory", "hrm_text", "hy_v4_vl", "cosmos3_edge", "glm_ocr", "muse_glimmer", "granite4_vision",
    "muse_spark",
    "apertus1p5_text", "apertus1p5", "hy_v4", "longcat_flash", "minimax", "kimi_linear", "bailing_hybrid",
    "cohere_compass_text", "cohere_compass", "mamba", "falcon_mamba", "mamba2", "bitnet", "aria_text", "aria", "xglm", "ctrl", "emu3",
    "minimax_m3_vl_text", "minimax_m3_vl", "mllama_text_model", "mllama", "fuyu",
)
# The causal-LM (or image-text-to-text) class transformers 5.24 names each family by: a config.json's
# ``architectures`` field recognises a family whose model_type is a remote-code name (Kimi K2 says
# "kimi_k2" and "DeepseekV3ForCausalLM"). Checked against transformers' own mappings by the tests.
ARCHITECTURES = {
    "LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "MinistralForCausalLM": "ministral",
    "MixtralForCausalLM": "mixtral", "Qwen2ForCausalLM": "qwen2", "Qwen2MoeForCausalLM": "qwen2_moe",
    "Qwen3ForCausalLM": "qwen3", "Qwen3MoeForCausalLM": "qwen3_moe", "GemmaForCausalLM": "gemma",
    "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3_text", "Gemma3ForConditionalGeneration": "gemma3",
    "PhiForCausalLM": "phi", "Phi3ForCausalLM": "phi3", "PhimoeForCausalLM": "phimoe",
    "DeepseekV2ForCausalLM": "deepseek_v2", "DeepseekV3ForCausalLM": "deepseek_v3", "OlmoForCausalLM": "olmo",
    "Olmo2ForCausalLM": "olmo2", "Olmo3ForCausalLM": "olmo3", "OlmoeForCausalLM": "olmoe",
    "GraniteForCausalLM": "granite", "GraniteMoeForCausalLM": "granitemoe", "CohereForCausalLM": "cohere",
    "Cohere2ForCausalLM": "cohere2", "FalconForCausalLM": "falcon", "GPTNeoXForCausalLM": "gpt_neox",
    "Starcoder2ForCausalLM": "starcoder2", "GPT2LMHeadModel": "gpt2", "GPTBigCodeForCausalLM": "gpt_bigcode",
    "GptOssForCausalLM": "gpt_oss", "Glm4MoeForCausalLM": "glm4_moe", "Llama4ForCausalLM": "llama4_text",
    "Llama4ForConditionalGeneration": "llama4", "SmolLM3ForCausalLM": "smollm3",
    "Mistral3ForConditionalGeneration": "mistral3", "Exaone4ForCausalLM": "exaone4",
    "MistralLarge4ForConditionalGeneration": "mistral_large4", "Glm5NextForConditionalGeneration": "glm5_next",
    "Ernie4_5_VLMoeForConditionalGeneration": "ernie4_5_vl_moe", "ChameleonForConditionalGeneration": "chameleon",
    "DiffLlamaForCausalLM": "diffllama", "ModernBertDecoderForCausalLM": "modernbert-decoder",
    "JetMoeForCausalLM": "jetmoe", "ZambaForCausalLM": "zamba",
    "Zamba2ForCausalLM": "zamba2",
    "Ernie4_5_MoeForCausalLM": "ernie4_5_moe", "Glm4MoeLiteForCausalLM": "glm4_moe_lite",
    "Qwen3VLForConditionalGeneration": "qwen3_vl", "Qwen3VLMoeForConditionalGeneration": "qwen3_vl_moe",
    "Qwen3NextForCausalLM": "qwen3_next", "JambaForCausalLM": "jamba", "NemotronHForCausalLM": "nemotron_h",
    "FalconH1ForCausalLM": "falcon_h1", "SeedOssForCausalLM": "seed_oss", "Ernie4_5ForCausalLM": "ernie4_5",
    "GlmForCausalLM": "glm", "Glm4ForCausalLM": "glm4", "Ministral3ForCausalLM": "ministral3",
    "ApertusForCausalLM": "apertus", "MiniMaxM2ForCausalLM": "minimax_m2", "Qwen3_5ForCausalLM": "qwen3_5_text",
    "Qwen3_5MoeForCausalLM": "qwen3_5_moe_text", "Qwen3_5ForConditionalGeneration": "qwen3_5",
    "Qwen3_5MoeForConditionalGeneration": "qwen3_5_moe", "Qwen4ExpForCausalLM": "qwen4_exp_text",
    "Qwen4ExpForConditionalGeneration": "qwen4_exp", "Dots3NoteForCausalLM": "dots3_note_text",
    "Dots3NoteForConditionalGeneration": "dots3_note", "ZayaForCausalLM": "zaya",
    "Step3p7ForConditionalGeneration": "step3p7", "HunYuanDenseV1ForCausalLM": "hunyuan_v1_dense",
    "ArceeForCausalLM": "arcee", "FlexOlmoForCausalLM": "flex_olmo",
    "Dots1ForCausalLM": "dots1", "DeepseekV32ForCausalLM": "deepseek_v32",
    "GraniteMoeHybridForCausalLM": "granitemoehybrid", "GlmMoeDsaForCausalLM": "glm_moe_dsa",
    "HeliumForCausalLM": "helium", "CwmForCausalLM": "cwm", "SolarOpenForCausalLM": "solar_open",
    "YoutuForCausalLM": "youtu", "HunYuanMoEV1ForCausalLM": "hunyuan_v1_moe",
    "VaultGemmaForCausalLM": "vaultgemma", "GraniteMoeSharedForCausalLM": "granitemoeshared",
    "ExaoneMoeForCausalLM": "exaone_moe", "Cohere2MoeForCausalLM": "cohere2_moe", "NemotronForCausalLM": "nemotron",
    "GraniteSWAForCausalLM": "granite_swa", "GraniteMoeSWAForCausalLM": "granitemoe_swa",
    "Kolibri1ForCausalLM": "kolibri1", "Lfm2ForCausalLM": "lfm2", "Lfm2MoeForCausalLM": "lfm2_moe",
    "BambaForCausalLM": "bamba", "AfmoeForCausalLM": "afmoe", "HYV3ForCausalLM": "hy_v3",
    "MiniCPM3ForCausalLM": "minicpm3", "GPTJForCausalLM": "gptj", "CodeGenForCausalLM": "codegen",
    "PersimmonForCausalLM": "persimmon", "StableLmForCausalLM": "stablelm", "GPTNeoForCausalLM": "gpt_neo",
    "MptForCausalLM": "mpt", "Gemma4ForCausalLM": "gemma4_text", "Gemma4ForConditionalGeneration": "gemma4",
    "Gemma4UnifiedForCausalLM": "gemma4_unified_text", "Gemma4UnifiedForConditionalGeneration": "gemma4_unified",
    "Gemma3nForCausalLM": "gemma3n_text", "Gemma3nForConditionalGeneration": "gemma3n",
    "Jais2ForCausalLM": "jais2", "MiMoV2FlashForCausalLM": "mimo_v2_flash", "Lfm3ForCausalLM": "lfm3",
    "LagunaForCausalLM": "laguna", "DbrxForCausalLM": "dbrx", "BloomForCausalLM": "bloom", "OPTForCausalLM": "opt",
    "BioGptForCausalLM": "biogpt", "DeepseekV4ForCausalLM": "deepseek_v4", "MellumForCausalLM": "mellum",
    "NanoChatForCausalLM": "nanochat", "HyperCLOVAXForCausalLM": "hyperclovax", "FlintForCausalLM": "flint",
    "AXK1ForCausalLM": "axk1", "AXK2ForCausalLM": "axk2", "BeamForCausalLM": "beam", "LaraMiniForCausalLM": "lara_mini",
    "OlmoHybridForCausalLM": "olmo_hybrid", "RecurrentGemmaForCausalLM": "recurrent_gemma",
    "Phi4MultimodalForCausalLM": "phi4_multimodal", "GPTNeoXJapaneseForCausalLM": "gpt_neox_japanese",
    "RwkvForCausalLM": "rwkv", "Mistral4ForCausalLM": "mistral4", "InklingForCausalLM": "inkling_text", "Inkling2ForCausalLM": "inkling2_text",
    "Inkling2ForConditionalGeneration": "inkling2", "Inkling2LoopForCausalLM": "inkling2_loop_text",
    "Inkling2LoopForConditionalGeneration": "inkling2_loop", "DoryForCausalLM": "dory", "HrmTextForCausalLM": "hrm_text",
    "HYV4VLForConditionalGeneration": "hy_v4_vl", "Cosmos3EdgeForConditionalGeneration": "cosmos3_edge",
    "GlmOcrForConditionalGeneration": "glm_ocr", "MuseGlimmerForConditionalGeneration": "muse_glimmer",
    "MuseSparkForConditionalGeneration": "muse_spark", "Granite4VisionForConditionalGeneration": "granite4_vision",
    "InklingForConditionalGeneration": "inkling_mm_model",
    "Apertus1p5TextForCausalLM": "apertus1p5_text", "Apertus1p5ForConditionalGeneration": "apertus1p5",
    "HYV4ForCausalLM": "hy_v4", "LongcatFlashForCausalLM": "longcat_flash", "MiniMaxForCausalLM": "minimax",
    "KimiLinearForCausalLM": "kimi_linear", "BailingHybridForCausalLM": "bailing_hybrid",
    "CohereCompassForCausalLM": "cohere_compass_text",
    "CohereCompassForConditionalGeneration": "cohere_compass", "MambaForCausalLM": "mamba",
    "FalconMambaForCausalLM": "falcon_mamba", "Mamba2ForCausalLM": "mamba2", "BitNetForCausalLM": "bitnet",
    "AriaTextForCausalLM": "aria_text", "AriaForConditionalGeneration": "aria", "FuyuForCausalLM": "fuyu", "XGLMForCausalLM": "xglm",
    "CTRLLMHeadModel": "ctrl", "Emu3ForCausalLM": "emu3", "Emu3ForConditionalGeneration": "emu3",
    "MiniMaxM3VLForCausalLM": "minimax_m3_vl_text", "MiniMaxM3SparseForConditionalGeneration": "minimax_m3_vl",
    "MllamaForConditionalGeneration": "mllama",
}
# Multimodal configs whose decoder lives in text_config (and the model_type it takes when the block has none).
_WRAPPERS = {"granite4_vision": "granite4_vision_text", "muse_spark": "muse_spark_text", "muse_glimmer": "muse_glimmer_text", "glm_ocr": "glm_ocr_text", "cosmos3_edge": "cosmos3_edge_text", "hy_v4_vl": "hy_v4_vl_text", "inkling_mm_model": "inkling_text", "inkling2": "inkling2_text", "inkling2_loop": "inkling2_loop_text", "internvl_chat": "", "molmo2": "molmo2_text", "granite_docling": "granite_docling_text", "deepseek_ocr2": "deepseek_ocr2_text", "paddleocr_vl": "paddleocr_vl_text", "glmga": "glm4v_text", "qwen2_5_omni_thinker": "qwen2_5_omni_text", "qwen3_omni_moe_thinker": "qwen3_omni_moe_text", "hunyuan_vl": "hunyuan_vl_text", "qwen2_vl": "qwen2_vl_text", "qwen2_5_vl": "qwen2_5_vl_text", "glm4v": "glm4v_text", "glm46v": "glm4v_text",
             "glm4v_moe": "glm4v_moe_text", "minimax_m3_vl": "minimax_m3_vl_text", "mllama": "mllama_text_model", "aria": "aria_text", "fuyu": "persimmon", "emu3": "emu3_text_model", "apertus1p5": "apertus1p5_text", "cohere_compass": "cohere_compass_text", "gemma3": "gemma3_text", "gemma3n": "gemma3n_text", "gemma4": "gemma4_text", "gemma4_unified": "gemma4_unified_text", "llama4": "llama4_text", "mistral3": "mistral", "qwen3_vl": "qwen3_vl_text",
             "qwen3_vl_moe": "qwen3_vl_moe_text", "qwen3_5": "qwen3_5_text", "qwen3_5_moe": "qwen3_5_moe_text", "qwen4_exp": "qwen4_exp_text", "dots3_note": "dots3_note_text", "step3p7": "step3p5", "mistral_large4": "mistral_large4_text",
             "glm5_next": "glm5_next_text", "ernie4_5_vl_moe": "ernie4_5_vl_moe_text"}
# Wrappers whose own top-level tie_word_embeddings (at the class default given here when absent) decides whether the
# LM head is tied, whatever the text_config says (transformers 5.24 ties by the top-level config).
_TIE_FROM_TOP = {"molmo2": False, "glmga": False, "qwen2_5_omni_thinker": False, "qwen3_omni_moe_thinker": False, "glm46v": False, "apertus1p5": False, "cohere_compass": False, "qwen3_vl": False, "qwen3_vl_moe": False, "qwen3_5": False, "qwen3_5_moe": False, "qwen4_exp": False, "mistral3": True, "mistral_large4": False, "glm5_next": False, "ernie4_5_vl_moe": True,
                 "llava_next": False, "vipllava": False, "video_llava": False, "paligemma": True, "aya_vision": True,
                 "cohere2_vision": True, "lfm2_vl": True, "lighton_ocr": True, "aria": False, "cosmos3_omni": False,
                 "fuyu": False, "idefics2": False, "idefics3": False, "smolvlm": False, "deepseek_vl": True,
                 "deepseek_vl_hybrid": True, "hyperclovax_vision_v2": True, "janus": True, "kimi_k25": True,
                 "dots3_note": False, "exaone4_5": False, "hy_v4_vl": False, "minicpmv4_6": False, "minicpmv4_7": False,
                 "muse_glimmer": False, "qianfan_ocr": False, "step3p7": False, "gemma3": True, "gemma4": True,
                 "gemma4_unified": True, "lfm3_vl": True, "got_ocr2": True, "granite_docling": True, "internvl": True,
                 "minicpm_ocr": True, "ovis2": True, "pp_chart2table": True}
# Wrappers whose class never ties the head (no tied weights), whatever the flags say
_NEVER_TIED = ("cosmos3_edge", "muse_spark")
# Wrappers whose config class ties the head when its own flag or its text_config's says so (the text config's class
# default when it gives none)
_TIE_EITHER = ("llava", "llava_next_video", "llava_onevision", "shieldgemma2", "minimax_m3_vl", "glm4v", "glm4v_moe",
               "glm_ocr", "video_llama_3")
# Old spellings of a family.
_LEGACY = {"refinedweb": "falcon", "refinedwebmodel": "falcon"}

# Keys read nowhere because they change no GEMM, no parameter and no byte the estimator counts.
IRRELEVANT_KEYS = frozenset({
    "architectures", "auto_map", "_name_or_path", "transformers_version", "model_type", "bos_token_id",
    "eos_token_id", "pad_token_id", "sep_token_id", "eod_token_id", "decoder_start_token_id", "initializer_range",
    "initializer_factor", "embedding_initializer_range", "expert_selection_fn", "shared_expert_combination_strategy",
    "attention_dropout", "hidden_dropout", "embd_pdrop", "resid_pdrop", "attn_pdrop",
    "summary_first_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob", "embedding_dropout", "dropout",
    "classifier_dropout", "layer_norm_eps", "layer_norm_epsilon", "rms_norm_eps", "norm_eps", "norm_epsilon",
    "use_cache", "hidden_act", "hidden_activation", "activation_function", "rope_theta", "rope_scaling",
    "rope_parameters", "layer_rope_theta", "rope_type", "partial_rotary_factor", "rotary_pct", "rotary_emb_base", "rope_interleave",
    "original_max_position_embeddings", "pretraining_tp", "logit_scale", "final_logit_softcapping",
    "attn_logit_softcapping", "query_pre_attn_scalar", "embedding_multiplier", "residual_multiplier",
    "attention_multiplier", "logits_scaling", "router_aux_loss_coef", "output_router_logits", "router_jitter_noise",
    "z_loss_coefficient", "route_scale", "mup_enabled", "scale_emb", "scale_depth", "dim_model_base", "embed_dropout",
    "resid_dropout", "router_scaling_factor", "enable_moe_fp32_combine",
    "input_jitter_noise", "norm_topk_prob", "routed_scaling_factor", "scoring_func", "topk_method", "n_group",
    "topk_group", "aux_loss_alpha", "seq_aux", "clip_qkv", "swiglu_limit", "swiglu_alpha", "use_bidirectional_attention",
    "scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "summary_type",
    "summary_use_proj", "summary_activation", "summary_proj_to_labels", "task_specific_params", "n_ctx",
    "tokenizer_class", "chat_template", "attn_temperature_tuning", "floor_scale", "attn_scale", "rope_local_base_freq",
    "cache_implementation", "use_qk_norm_first", "lm_head_dtype", "experts_per_token", "moe_layer_freq",
    "ep_size", "use_parallel_residual_dropout", "layer_norm_type", "rotary_dim", "max_window_layers_dense",
    "full_attn_mod", "interpolate_factor", "mlp_only_layers_dense", "bias_dropout_fusion", "image_token_index",
    "image_token_id", "llm_config", "template", "downsample_ratio", "force_image_size", "ps_version", "select_layer",
    "dynamic_image_size", "use_thumbnail", "min_dynamic_patch", "max_dynamic_patch", "use_backbone_lora",
    "use_llm_lora", "pad2square", "image_fold", "adapter_config", "low_res_image_start_token_id", "image_patch_id", "frame_start_token_id",
    "frame_end_token_id", "density_router_hidden_size", "density_router_threshold", "density_router_loss_weight",
    "audio_start_token_id", "audio_end_token_id", "audio_token_index", "seconds_per_chunk", "position_id_per_seconds", "user_token_id", "im_start_id", "im_end_id",
    "im_newline_id", "image_start_token_id", "image_end_token_id", "video_start_token_id", "video_end_token_id",
    "boi_token_index", "eoi_token_index", "mm_tokens_per_image", "vision_config",
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
    "moe_norm_min", "base_model_ep_plan", "mlp_layer_types_dense", "video_token_id", "vision_start_token_id",
    "vision_end_token_id", "audio_token_id", "video_token_index", "boa_token_id", "boi_token_id", "eoa_token_id",
    "eoa_token_index", "eoi_token_id", "vision_soft_tokens_per_image", "audio_config", "image_token_offset",
    "audio_token_offset", "vq_config", "vocabulary_map",
    # multimodal wrappers' own keys: the vision tower's count reads them (gemmlib/llm/vision.py) or they shape the
    # image tokens, not the decoder
    "image_seq_length", "video_seq_length", "image_grid_pinpoints", "spatial_pool_mode", "spatial_pool_stride",
    "vision_aspect_ratio", "projector_layernorm_eps", "vision_feature_layers", "projection_dim", "adapter_layer_norm_eps",
    "downsample_factor", "alignment_intermediate_size", "projector_bias", "projector_use_layernorm",
    "projector_hidden_size", "num_image_tokens", "projection_hidden_size", "projection_layer_norm_eps", "scale_factor",
    "_pad_token_id", "image_size", "patch_size", "num_channels", "ignore_index", "downsample_mode", "insert_layer_id",
    "merge_kernel_size", "merger_times", "drop_vision_last_layer", "image_start_id", "image_end_id", "newline_id",
    "slice_start_id", "slice_end_id", "visual_indicator_token_ids", "qformer_config", "num_query_tokens",
    "use_decoder_only_language_model", "image_text_hidden_size", "perceiver_config",
    "high_res_vision_config",
    # state-space families: kernel choices, activations, time-step clamps, init and muP multipliers
    "use_associative_scan", "use_mamba_kernels", "use_mambapy", "mamba_hidden_act", "mlp_hidden_act",
    "num_logits_to_keep", "rescale_prenorm_residual", "residual_in_fp32", "time_step_floor", "time_step_limit",
    "time_step_max", "time_step_min", "time_step_rank_init", "moe_shared_expert_overlap", "mamba_norm_before_gate",
    "attention_in_multiplier", "attention_out_multiplier", "key_multiplier", "lm_head_multiplier", "mlp_multipliers",
    "ssm_in_multiplier", "ssm_multipliers", "ssm_out_multiplier", "mamba_dt_min", "mamba_dt_max", "mamba_dt_limit",
    "mamba_dt_init_floor", "mamba_ssm_cache_dtype",
})
# Keys a family's config class accepts (or a Hub file carries) that transformers' modeling code of that
# family does not read: listed as ignored, with no effect on the count.
UNUSED_BY_FAMILY: dict[str, frozenset[str]] = {
    "qwen2": frozenset({"attention_bias"}),  # q/k/v biases are always on, o_proj has none
    "phi3": frozenset({"attention_bias", "lm_head_bias", "mlp_bias"}),
    # Phi-4-multimodal: Phi-3's decoder; its image and audio towers are reported apart (gemmlib.llm.vision)
    "phi4_multimodal": frozenset({"attention_bias", "lm_head_bias", "mlp_bias", "vision_config", "audio_config"}),
    # Inkling: logit scalings (no weight, no FLOP FlopCounterMode counts), the router's epsilon, the logits sliced to the
    # unpadded vocabulary after the full head, the multi-token-prediction layers transformers does not build (noted),
    # the cache's count of conv states; the head is never tied (its checkpoints store embed and unembed apart)
    # Inkling 2: clip thresholds and softcaps (no weight, no FLOP FlopCounterMode counts)
    "inkling2_text": frozenset({"log_scaling_n_floor", "log_scaling_alpha", "qk_l2_clip_threshold",
                                "rel_l2_clip_threshold", "mlp_gate_softcap", "mlp_up_softcap", "tie_word_embeddings",
                                "number_of_conv_states"}),
    "dory": frozenset({"ngpt_alpha_init"}),  # (the residual rates' initial value)
    # HRM-Text: training-time gradient routing, the embedding's scale, the prefix-LM mask (no weight, no FLOP)
    "hrm_text": frozenset({"L_bp_cycles", "embedding_scale", "prefix_lm"}),
    "inkling2_loop_text": frozenset({"log_scaling_n_floor", "log_scaling_alpha", "qk_l2_clip_threshold",
                                     "rel_l2_clip_threshold", "mlp_gate_softcap", "mlp_up_softcap",
                                     "tie_word_embeddings", "number_of_conv_states"}),
    "inkling_text": frozenset({"log_scaling_n_floor", "log_scaling_alpha", "logits_mup_width_multiplier",
                               "rms_norm_eps_moe_gate", "shared_expert_sink", "unpadded_vocab_size", "num_mtp_layers",
                               "chain_hidden_post_norm", "mtp_hidden_states_first", "mtp_local_layer_ids",
                               "number_of_conv_states", "tie_word_embeddings", "local_layer_ids", "dense_mlp_idx",
                               # the multimodal wrapper's: its MTP block (its count noted), its image and audio markers
                               "mtp_config", "image_bos_token_id", "audio_bos_token_id"}),
    "qwen3_moe": frozenset({"max_window_layers"}),  # a sliding window applies to every layer
    "gemma2": frozenset({"sliding_window_size"}),
    "gemma4_text": frozenset({"expert_intermediate_size"}),
    # removed by their config classes (AttributeError): transformers reads none of them
    # DBRX: its config class mirrors attn_config.kv_n_heads at the top level, which the model does not read
    "dbrx": frozenset({"num_key_value_heads", "emb_pdrop"}),
    "bloom": frozenset({"slow_but_exact"}),
    "opt": frozenset({"init_std", "layerdrop"}),  # initialisation and training-time layer dropping
    # XGLM: the same, and the embedding's scale by √d_model (an element-wise multiply)
    "xglm": frozenset({"init_std", "layerdrop", "activation_dropout", "scale_embedding"}),
    "biogpt": frozenset({"layerdrop", "activation_dropout", "scale_embedding"}),  # slices o_proj and down_proj by pretraining_tp: the same FLOPs
    "lfm3": frozenset({"block_multiple_of", "block_ffn_dim_multiplier", "block_auto_adjust_ff_dim", "full_attn_idxs"}),
    "laguna": frozenset({"decoder_sparse_step", "mlp_only_layers", "qkv_bias", "norm_topk_prob", "use_sliding_window",
                         "max_window_layers", "moe_routed_scaling_factor", "moe_apply_router_weight_on_input",
                         "moe_router_logit_softcapping"}),
    # DeepSeek-V4: no attention bias anywhere; rotary bases, the hyper-connections' Sinkhorn iterations, the routers'
    # scoring and the checkpoint's expert dtype (read with its quantization) change no count
    "deepseek_v4": frozenset({"attention_bias", "compress_rope_theta", "hc_sinkhorn_iters", "hc_eps",
                              "num_nextn_predict_layers", "expert_dtype", "use_attn_sink"}),
    # Mellum: its config class removes Qwen3-MoE's window switches; the MTP layer's own types are not built
    "mellum": frozenset({"use_sliding_window", "max_window_layers", "decoder_sparse_step", "mlp_only_layers",
                         "mtp_layer_types", "mtp_mlp_layer_types", "num_nextn_predict_layers"}),
    "nanochat": frozenset({"head_dim"}),  # always hidden_size / heads
    "flint": frozenset({"use_sliding_window", "max_window_layers", "qkv_bias"}),  # removed by its config class
    # Beam: removed by its config class (its MLP kinds come from mlp_layer_types only)
    # Ling's hybrid: its KDA gate's safety bound, the routing groups and the MTP loss scale change no count
    "bailing_hybrid": frozenset({"qk_head_dim", "short_conv_kernel_size", "kda_safe_gate", "kda_lower_bound", "num_expert_group",
                                 "moe_renormalize", "mtp_loss_scaling_factor", "num_nextn_predict_layers"}),
    # Mamba and Falcon Mamba: the time-step initialisation changes no shape
    "mamba": frozenset({"time_step_scale", "time_step_init_scheme"}),
    "falcon_mamba": frozenset({"time_step_scale", "time_step_init_scheme"}),
    # Kimi Linear: head dims derive from nope + rope; its router's groups change no count
    "kimi_linear": frozenset({"head_dim", "qk_head_dim", "pretraining_tp", "moe_layer_freq", "num_expert_group",
                              "model_max_length", "moe_renormalize", "mla_use_nope", "moe_router_activation_func"}),
    # MiniMax: the residual scales of each kind of block change no count
    "minimax": frozenset({"full_attn_alpha_factor", "full_attn_beta_factor", "linear_attn_alpha_factor",
                          "linear_attn_beta_factor", "mlp_alpha_factor", "mlp_beta_factor",
                          # the remote-code checkpoints' spellings of the same scales and of the norm placement
                          "layernorm_full_attention_alpha", "layernorm_full_attention_beta",
                          "layernorm_linear_attention_alpha", "layernorm_linear_attention_beta",
                          "layernorm_mlp_alpha", "layernorm_mlp_beta", "postnorm", "shared_intermediate_size",
                          "shared_moe_mode"}),
    # LongCat-Flash: head dims derive from nope + rope; its MLA scales change no count
    "longcat_flash": frozenset({"head_dim", "qk_head_dim", "mla_scale_q_lora", "mla_scale_kv_lora"}),
    # HY-V4: head dims derive from nope + rope; its routing groups, the iHC output scale and the sinks' initial value
    # change no count
    "hy_v4": frozenset({"head_dim", "qk_head_dim", "hc_magnitude", "hc_eps", "learnable_sink_init"}),
    "cosmos3_edge_text": frozenset({"projector_hidden_size", "pretraining_tp"}),
    "glm_ocr_text": frozenset({"attention_bias"}),
    # Granite 4 Vision: the vision side's keys at the top level (its Q-Former projector, the layers it reads features from
    # and injects them into: additions, on images only)
    "granite4_vision_text": frozenset({"qformer_config", "deepstack_layer_map", "downsample_rate", "image_seq_length",
                                       "projector_dropout", "spatial_target_layers", "spatial_vision_layer",
                                       "image_grid_pinpoints"}),
    # Muse Glimmer: scales, epsilons and per-layer rotary bases (NoPE layers: no weight, no FLOP FlopCounterMode counts);
    # the wrapper's projector keys
    "muse_glimmer_text": frozenset({"qk_scale_factor", "output_multiplier", "post_norm_eps", "out_hidden_size",
                                    "projector_hidden_size", "projector_hidden_act"}),
    "muse_spark_text": frozenset({"qk_scale_factor", "output_multiplier", "post_norm_eps", "out_hidden_size",
                                  "projector_hidden_size", "projector_hidden_act", "residual_gate_temperature"}),  # (GLM-OCR's q/k/v projections have no bias, whatever it says)  # (the wrapper's projector width)
    "hy_v4_vl_text": frozenset({"head_dim", "qk_head_dim", "hc_magnitude", "hc_eps", "learnable_sink_init"}),
    # Lara Mini: removed by its config class; Qwen3-Next's interval is not read (layer_types always set)
    "lara_mini": frozenset({"intermediate_size", "decoder_sparse_step", "mlp_only_layers", "full_attention_interval",
                            "partial_rotary_factor"}),
    "molmo2_text": frozenset({"rope_scaling_layers"}),  # which layers scale their rotary frequencies
    # DeepSeek-OCR-2: its routing groups and method change no count
    "deepseek_ocr2_text": frozenset({"n_group", "topk_group", "topk_method", "routed_scaling_factor"}),
    # OLMo Hybrid: the DeltaNet's initial values, its negative eigenvalues (β × 2, element-wise); the config class
    # removes mlp_bias and pretraining_tp
    "olmo_hybrid": frozenset({"linear_a_log_min", "linear_a_log_max", "linear_dt_min", "linear_dt_max",
                              "linear_dt_init_floor", "linear_allow_neg_eigval", "mlp_bias", "pretraining_tp"}),
    # RecurrentGemma: initial scales, the logits' soft cap and the embedding's √hidden scale (element-wise)
    "recurrent_gemma": frozenset({"w_init_variance_scale", "final_w_init_variance_scale", "logits_soft_cap",
                                  "embeddings_scale_by_sqrt_dim"}),
    "beam": frozenset({"decoder_sparse_step", "mlp_only_layers", "use_sliding_window", "max_window_layers"}),
    # A.X K1: head dims derive from nope + rope; the config class removes num_mtp_layers
    "axk1": frozenset({"head_dim", "qk_head_dim", "num_mtp_layers", "num_nextn_predict_layers"}),
    "axk2": frozenset({"head_dim", "qk_head_dim", "num_mtp_layers", "num_nextn_predict_layers", "mlp_bias"}),
    "mimo_v2_flash": frozenset({"first_k_dense_replace", "n_shared_experts", "num_mtp_layers", "use_qk_norm",
                                "attention_value_scale", "num_nextn_predict_layers", "attention_chunk_size",
                                "swa_rope_theta", "layernorm_epsilon", "moe_router_dtype",
                                "attention_projection_layout", "hybrid_block_size"}),
    # AltUp's active stream and coefficient clip, its output scaling: no count changes with them
    "gemma3n_text": frozenset({"altup_active_idx", "altup_coef_clip", "altup_correct_scale"}),  # an early spelling the Hub's E2B / E4B files keep, null
    "deepseek_v2": frozenset({"moe_layer_freq", "head_dim", "qk_head_dim"}),  # head dims derive from nope + rope
    "deepseek_v3": frozenset({"moe_layer_freq", "head_dim", "qk_head_dim"}),
    # Mistral 4: DeepSeek-V3's layout; its routing groups and scale change no count
    "mistral4": frozenset({"head_dim", "qk_head_dim", "n_group", "topk_group", "routed_scaling_factor",
                           "norm_topk_prob"}),
    "sarvam_mla": frozenset({"moe_layer_freq", "head_dim", "qk_head_dim", "q_head_dim"}),  # (q_head_dim: dropped, = qk)
    "youtu": frozenset({"head_dim", "qk_head_dim"}),
    # MPT in transformers: ALiBi always (no position table), no biases anywhere, LayerNorms without bias, no qk-norm
    "mpt": frozenset({"learned_pos_emb", "no_bias", "norm_type", "init_device", "embedding_fraction", "emb_pdrop"}),
    "minicpm3": frozenset({"head_dim", "qk_head_dim"}),
    # LFM2's first checkpoints: the same shapes again under their own names (hidden_size, num_attention_heads, the
    # rotary base, norm_eps), initialisation switches, the positional encoding (always rotary)
    "lfm2": frozenset({"block_dim", "conv_dim", "conv_dim_out", "num_heads", "theta", "block_norm_eps",
                       "block_mlp_init_scale", "block_out_init_scale", "block_use_swiglu", "block_use_xavier_init",
                       "conv_use_xavier_init", "use_pos_enc"}),
    # Hunyuan MoE: its remote code's switches (transformers' class: experts and the shared MLP intermediate_size wide,
    # one shared MLP, qk-norm always, no cross-layer attention)
    "hunyuan_v1_moe": frozenset({"moe_intermediate_size", "num_shared_expert", "use_mixed_mlp_moe", "use_qk_norm",
                                 "use_cla", "cla_share_factor", "use_rotary_pos_emb", "attention_head_dim"}),
    # Hunyuan dense (and HunYuan-VL's decoder): its remote code's switches (qk-norm always, rotary always, no
    # cross-layer attention; transformers' dense class reads no attention_head_dim); HunYuan-VL's legacy spellings
    # (already read as head_dim / vocab_size by the wrapper) and its padding id
    "hunyuan_v1_dense": frozenset({"use_qk_norm", "use_cla", "cla_share_factor", "use_rotary_pos_emb",
                                   "attention_head_dim", "org_vocab_size", "pad_id"}),
    # Nemotron-H: attention has no bias and the Mamba width is heads × head_dim whatever these say; the MoE keys
    # matter only with MoE blocks; transformers builds no MTP layers
    "nemotron_h": frozenset({"attention_bias", "expand", "mamba_proj_bias", "sliding_window", "moe_intermediate_size",
                             "moe_latent_size", "moe_shared_expert_intermediate_size", "n_routed_experts",
                             "n_shared_experts", "num_experts_per_tok", "mtp_layers_block_type", "mtp_hybrid_override_pattern",
                             "num_nextn_predict_layers", "routed_scaling_factor"}),
    "falcon_h1": frozenset({"mamba_expand"}),  # the Mamba width is mamba_d_ssm when that is given
    # Qwen3.5: transformers builds no MTP layers; the MoE text config has no dense MLP width
    # (attn_output_gate: transformers gates the attention output whatever it says; mlp_only_layers: not a Qwen3.5 key)
    "qwen3_5_text": frozenset({"mtp_num_hidden_layers", "mtp_use_dedicated_embeddings", "mamba_ssm_dtype",
                               "attn_output_gate", "mlp_only_layers"}),
    # Qwen4-Exp: the n-gram hashes' seed and the checkpoint's shards of each table change no count; the number of
    # cache states follows from ple_layer_ids
    "qwen4_exp_text": frozenset({"seed", "split_ngram_parts", "number_of_conv_states", "intermediate_size",
                                 "mtp_num_hidden_layers", "mtp_use_dedicated_embeddings", "mamba_ssm_dtype",
                                 "attn_output_gate", "mlp_only_layers"}),
    "qwen3_5_moe_text": frozenset({"intermediate_size", "mtp_num_hidden_layers", "mtp_use_dedicated_embeddings",
                                   "mamba_ssm_dtype", "attn_output_gate", "mlp_only_layers"}),
    # MiniMax-M2: its remote code's switches, which transformers' class does not read (qk-norm and the routing bias
    # always on, every layer full attention, no shared expert, no MTP modules built)
    "minimax_m2": frozenset({"attn_type_list", "qk_norm_type", "use_qk_norm", "use_routing_bias",
                             "shared_intermediate_size", "use_mtp", "num_mtp_modules", "mtp_transformer_layers"}),
    "jamba": frozenset({"sliding_window"}),  # JambaConfig has none; its attention layers see every key
    # MiniMax-M3's wrapper: the projector's width and its merged input (gemmlib.llm.vision counts the projector)
    "minimax_m3_vl_text": frozenset({"projector_hidden_size", "merged_hidden_size"}),
    # GLM-4.7-Flash: qk_head_dim derives from nope + rope; the dense layers come from mlp_layer_types only
    "glm4_moe_lite": frozenset({"qk_head_dim", "moe_layer_freq", "first_k_dense_replace"}),
    # head_dim: transformers points it at the rotary dims; mlp_bias: its MLPs and experts have no biases
    "deepseek_v32": frozenset({"qk_head_dim", "head_dim", "moe_layer_freq", "mlp_bias"}),
    # Step 3.7: its attention's scaling, the routed output's scale and the mtp layers' own kinds change no count
    "step3p5": frozenset({"query_pre_attn_scalar", "moe_router_scaling_factor", "mtp_layer_types",
                          "mtp_mlp_layer_types", "projector_bias"}),  # (the wrapper's projector, not counted)
    # Dots 3 Note: the routing groups change no count; the rotary bases of its two kinds of layer; the MLPs and experts
    # have no biases; a released file's qk_head_dim follows from nope + rope
    "dots3_note_text": frozenset({"n_group", "topk_group", "routed_scaling_factor", "swa_rope_theta", "mlp_bias",
                                  "qk_head_dim"}),
    # (indexer_rope_interleave: transformers' GLM-5 indexer always interleaves its rotary dims)
    # Mistral Large 4: head_dim is the rotary dims, qk_head_dim nope + rope; the routing groups and scale, the logits'
    # soft cap change no count
    "mistral_large4_text": frozenset({"qk_head_dim", "head_dim", "n_group", "topk_group", "routed_scaling_factor",
                                      "final_logit_softcapping"}),
    # GLM-5-Next: head_dim is the (absent) rotary dims; the SwiGLU clamps, the gates' bound, the hyper-connections'
    # Sinkhorn settings and the routing groups and scale change no count
    "glm5_next_text": frozenset({"qk_head_dim", "head_dim", "swiglu_limit", "linear_lower_bound", "hc_eps",
                                 "hc_sinkhorn_iters", "n_group", "topk_group", "routed_scaling_factor",
                                 "norm_topk_prob", "router_aux_loss_coef", "first_k_dense_replace"}),
    # Chameleon: the norms' placement, its training's shard count, the VQ-VAE and its token map change no decoder count
    "diffllama": frozenset({"lambda_std_dev"}),  # (λ's initialisation)
    # Aria: the wrapper's query table (its projector's learned queries, counted with the vision tower)
    "aria_text": frozenset({"projector_patch_to_query_dict", "max_value_projector_patch_to_query_dict"}),
    "jetmoe": frozenset({"aux_loss_coef", "output_router_logits"}),
    # Zamba: the kernels' switches, the scan's and the time step's initialisation, the logits kept by generate
    "zamba": frozenset({"hidden_mamba_act", "use_mamba_kernels", "use_associative_scan", "time_step_min",
                        "time_step_max", "time_step_floor", "num_logits_to_keep"}),
    # ModernBERT's decoder: transformers derives sliding_window from local_attention (it overwrites a stored one)
    "modernbert-decoder": frozenset({"classifier_activation", "cls_token_id", "sep_token_id", "initializer_cutoff_factor",
                                     "mlp_dropout", "embedding_dropout", "classifier_dropout", "sliding_window",
                                     "global_rope_theta", "local_rope_theta"}),
    "chameleon": frozenset({"swin_norm", "model_parallel_size", "vq_config", "vocabulary_map", "image_token_id"}),
    # Zamba2: the time-step range and floor, the kernels' switches, the logits kept and a longer context's rotary
    # scaling change no count
    "zamba2": frozenset({"time_step_min", "time_step_max", "time_step_floor", "use_mamba_kernels", "use_mem_eff_path",
                         "num_logits_to_keep", "use_long_context", "use_conv_bias"}),
    "glm_moe_dsa": frozenset({"qk_head_dim", "head_dim", "moe_layer_freq", "mlp_bias", "indexer_rope_interleave",
                              "index_share_for_mtp_iteration"}),  # (no MTP layer is built)
    "cohere": frozenset({"head_dim"}),  # always hidden_size / heads
    "cohere2": frozenset({"head_dim"}),
    # North (CohereLabs' Compass decoder): an embedding model's pooling and Qwen3-VL's multimodal rotary sections
    "cohere_compass_text": frozenset({"head_dim", "pooling", "sliding_window_pattern"}),
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
        self.asked: set[str] = set()  # every key (and alias) a reader looked for, present or not
        self.notes: list[str] = []
        self.defaulted: dict[str, object] = {}
        self.defaults_for_shape = defaults_for_shape

    def has(self, key: str) -> bool:
        return key in self.raw or any(a in self.raw for a in self.aliases.get(key, ()))

    def get(self, key: str):
        """The value in the file (null included), else the family default (None when it has none)."""
        spellings = (key, *self.aliases.get(key, ()))
        self.asked.update(spellings)
        present = [k for k in spellings if k in self.raw]
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
            near = self.misspelling_of(key)
            if near:
                raise InputError(N_("config.json has no {key!r} field; it has {near!r}: a misspelling of {key!r}?"),
                                 key=key, near=near)
            raise InputError(N_("config.json has no {key!r} field"), key=key)
        return _whole(key, v, minimum=minimum)

    def misspelling_of(self, key: str) -> str | None:
        """A key of the file no reader asked for that is probably ``key`` misspelled (difflib, ratio ≥ 0.85)."""
        spare = [k for k in self.raw if k not in self.asked and k not in IRRELEVANT_KEYS and isinstance(k, str)]
        near = difflib.get_close_matches(key, spare, n=1, cutoff=0.85)
        return near[0] if near else None

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
    "granite4_vision_text": dict(_LLAMA),
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
    "phi4_multimodal": dict(vocab_size=200064, hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
                            num_attention_heads=32, num_key_value_heads=8, tie_word_embeddings=False,
                            max_position_embeddings=131072),
    "mistral4": dict(vocab_size=131072, hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
                     num_attention_heads=32, kv_lora_rank=256, q_lora_rank=1024, qk_nope_head_dim=64,
                     qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=128, n_shared_experts=1,
                     num_experts_per_tok=4, moe_intermediate_size=2048, first_k_dense_replace=0,
                     tie_word_embeddings=False, attention_bias=False, max_position_embeddings=1048576),
    "hrm_text": dict(vocab_size=151808, hidden_size=1536, intermediate_size=4096, num_hidden_layers=16,
                     num_attention_heads=12, head_dim=128, H_cycles=2, L_cycles=3, tie_word_embeddings=False,
                     max_position_embeddings=2048),
    "dory": dict(vocab_size=131072, hidden_size=2560, intermediate_size=7168, num_hidden_layers=36,
                 num_attention_heads=16, num_key_value_heads=4, head_dim=256, max_position_embeddings=8192,
                 sliding_window=1024, n_input_layers=8, n_output_layers=8, n_recurrent_loops=2,
                 tie_word_embeddings=False),
    "inkling2_loop_text": dict(vocab_size=201024, unpadded_vocab_size=200058, hidden_size=2304, num_hidden_layers=24,
                               num_attention_heads=24, num_key_value_heads=8, head_dim=128, swa_num_attention_heads=24,
                               swa_num_key_value_heads=8, swa_head_dim=128, sliding_window_size=1024, d_rel=16,
                               rel_extent=1024, conv_kernel_size=4, moe_intermediate_size=1152, n_routed_experts=128,
                               num_experts_per_tok=8, n_layers_per_attn_res_block=6, max_position_embeddings=1048576,
                               loop_layer_index_start=6, loop_layer_index_end=18, loop_num_passes=3, loop_gate_rank=64),
    "inkling2_text": dict(vocab_size=201024, unpadded_vocab_size=200058, hidden_size=4608, num_hidden_layers=48,
                          num_attention_heads=48, num_key_value_heads=8, head_dim=128, swa_num_attention_heads=48,
                          swa_num_key_value_heads=8, swa_head_dim=128, sliding_window_size=1024, d_rel=16,
                          rel_extent=1024, conv_kernel_size=4, moe_intermediate_size=2304, n_routed_experts=384,
                          num_experts_per_tok=8, n_layers_per_attn_res_block=6, max_position_embeddings=1048576),
    "inkling_text": dict(vocab_size=201024, hidden_size=6144, num_hidden_layers=66, num_attention_heads=64,
                         num_key_value_heads=8, head_dim=128, swa_num_attention_heads=64, swa_num_key_value_heads=16,
                         swa_head_dim=128, sliding_window_size=512, d_rel=16, rel_extent=1024, conv_kernel_size=4,
                         intermediate_size=24576, moe_intermediate_size=3072, n_routed_experts=256, num_experts_per_tok=6,
                         n_shared_experts=2, max_position_embeddings=131072),
    "rwkv": dict(vocab_size=50277, hidden_size=4096, num_hidden_layers=32, context_length=1024, rescale_every=6,
                 tie_word_embeddings=False),
    "molmo2_text": dict(vocab_size=151936, additional_vocab_size=128, hidden_size=4096, intermediate_size=12288,
                        num_hidden_layers=36, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                        attention_bias=False, qk_norm_type="qwen3", tie_word_embeddings=False,
                        max_position_embeddings=36864),
    "deepseek_ocr2_text": dict(vocab_size=102400, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                               num_attention_heads=32, tie_word_embeddings=False, attention_bias=False, mlp_bias=False,
                               n_routed_experts=64, n_shared_experts=2, moe_intermediate_size=1407,
                               max_position_embeddings=2048),
    "gpt_neox_japanese": dict(vocab_size=32000, hidden_size=2560, num_hidden_layers=32, num_attention_heads=32,
                              intermediate_multiple_size=4, max_position_embeddings=2048, tie_word_embeddings=True),
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
    "cohere_compass_text": dict(vocab_size=256000, hidden_size=8192, intermediate_size=22528, num_hidden_layers=40,
                                num_attention_heads=64, sliding_window=4096, tie_word_embeddings=True,
                                max_position_embeddings=8192),
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
    "exaone4": dict(vocab_size=102400, hidden_size=4096, intermediate_size=16384, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=32, sliding_window=4096, tie_word_embeddings=False,
                    max_position_embeddings=2048),
    "ernie4_5_moe": dict(vocab_size=103424, hidden_size=2560, intermediate_size=12288, num_hidden_layers=28,
                         num_attention_heads=20, num_key_value_heads=4, tie_word_embeddings=True, use_bias=False,
                         moe_intermediate_size=1536, moe_k=6, moe_num_experts=64, moe_num_shared_experts=2,
                         moe_layer_start_index=1, moe_layer_end_index=-1, moe_layer_interval=1,
                         max_position_embeddings=131072),
    "ernie4_5_vl_moe_text": dict(vocab_size=103424, hidden_size=2560, intermediate_size=12288, num_hidden_layers=28,
                                 num_attention_heads=20, num_key_value_heads=4, tie_word_embeddings=True,
                                 use_bias=False, moe_k=6, moe_num_experts=64, moe_num_shared_experts=2,
                                 max_position_embeddings=131072),
    "zamba2": dict(vocab_size=32000, hidden_size=2560, num_hidden_layers=54, mamba_d_state=64, mamba_d_conv=4,
                   mamba_expand=2, mamba_ngroups=1, n_mamba_heads=8, chunk_size=256, add_bias_linear=False,
                   num_attention_heads=32, num_mem_blocks=1, use_shared_attention_adapter=False, adapter_rank=128,
                   use_mem_rope=False, tie_word_embeddings=True, max_position_embeddings=4096),
    "modernbert-decoder": dict(vocab_size=50368, hidden_size=768, intermediate_size=1152, num_hidden_layers=22,
                               num_attention_heads=12, max_position_embeddings=8192, norm_bias=False,
                               attention_bias=False, mlp_bias=False, decoder_bias=True, classifier_bias=False,
                               local_attention=128, tie_word_embeddings=True),
    "zamba": dict(vocab_size=32000, tie_word_embeddings=True, hidden_size=3712, intermediate_size=14848,
                  num_hidden_layers=76, num_attention_heads=16, num_key_value_heads=16, n_mamba_heads=2,
                  max_position_embeddings=4096, attn_layer_period=6, attn_layer_offset=4, mamba_d_state=16,
                  mamba_d_conv=4, mamba_expand=2, mamba_dt_rank="auto", mamba_conv_bias=True,
                  mamba_proj_bias=False),
    "jetmoe": dict(vocab_size=32000, hidden_size=2048, num_hidden_layers=12, num_key_value_heads=16, kv_channels=128,
                   intermediate_size=5632, max_position_embeddings=4096, num_local_experts=8, num_experts_per_tok=2,
                   tie_word_embeddings=True),
    "diffllama": dict(vocab_size=32000, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                      num_attention_heads=32, attention_bias=False, tie_word_embeddings=False,
                      max_position_embeddings=2048),
    "chameleon": dict(vocab_size=65536, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                      num_attention_heads=32, num_key_value_heads=32, attention_bias=False, mlp_bias=False,
                      tie_word_embeddings=False, max_position_embeddings=4096),
    "seed_oss": dict(vocab_size=155136, hidden_size=4096, intermediate_size=27648, num_hidden_layers=64,
                     num_attention_heads=80, num_key_value_heads=8, head_dim=128, attention_bias=True,
                     attention_out_bias=False, mlp_bias=False, tie_word_embeddings=False,
                     max_position_embeddings=524288),
    "ernie4_5": dict(vocab_size=103424, hidden_size=1024, intermediate_size=3072, num_hidden_layers=18,
                     num_attention_heads=16, num_key_value_heads=2, head_dim=128, use_bias=False,
                     tie_word_embeddings=True, max_position_embeddings=131072),
    "glm": dict(vocab_size=151552, hidden_size=4096, intermediate_size=13696, num_hidden_layers=40,
                num_attention_heads=32, num_key_value_heads=2, head_dim=128, attention_bias=True,
                tie_word_embeddings=False, max_position_embeddings=131072),
    "glm4": dict(vocab_size=151552, hidden_size=4096, intermediate_size=13696, num_hidden_layers=40,
                 num_attention_heads=32, num_key_value_heads=2, head_dim=128, attention_bias=True,
                 tie_word_embeddings=False, max_position_embeddings=131072),
    "ministral3": dict(vocab_size=131072, hidden_size=4096, intermediate_size=14336, num_hidden_layers=34,
                       num_attention_heads=32, num_key_value_heads=8, head_dim=128, tie_word_embeddings=False,
                       max_position_embeddings=262144),
    "apertus1p5_text": dict(vocab_size=266752, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                            num_attention_heads=32, attention_bias=False, hidden_act="xielu",
                            tie_word_embeddings=False, max_position_embeddings=65536),
    "apertus": dict(vocab_size=131072, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, attention_bias=False, hidden_act="xielu", tie_word_embeddings=False,
                    max_position_embeddings=65536),
    "mllama_text_model": dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=40,
                              num_attention_heads=32, num_key_value_heads=8, tie_word_embeddings=False,
                              max_position_embeddings=131072, cross_attention_layers=[3, 8, 13, 18, 23, 28, 33, 38]),
    "minimax_m3_vl_text": dict(vocab_size=200064, hidden_size=6144, intermediate_size=3072, num_hidden_layers=60,
                               num_attention_heads=64, num_key_value_heads=4, head_dim=128, num_local_experts=128,
                               num_experts_per_tok=4, dense_intermediate_size=12288, shared_intermediate_size=3072,
                               index_n_heads=4, index_head_dim=128, index_block_size=128, index_topk_blocks=16,
                               index_local_blocks=1, tie_word_embeddings=False, max_position_embeddings=524288),
    "minimax_m2": dict(vocab_size=200064, hidden_size=3072, intermediate_size=1536, num_hidden_layers=62,
                       num_attention_heads=48, num_key_value_heads=8, head_dim=128, num_local_experts=256,
                       num_experts_per_tok=8, tie_word_embeddings=False, max_position_embeddings=196608),
    "qwen3_5_text": dict(vocab_size=248320, hidden_size=4096, intermediate_size=12288, num_hidden_layers=32,
                         num_attention_heads=16, num_key_value_heads=4, head_dim=256, linear_conv_kernel_dim=4,
                         linear_key_head_dim=128, linear_value_head_dim=128, linear_num_key_heads=16,
                         linear_num_value_heads=32, tie_word_embeddings=False, max_position_embeddings=32768),
    "qwen4_exp_text": dict(vocab_size=248320, hidden_size=2048, num_hidden_layers=40, num_attention_heads=16,
                           num_key_value_heads=2, head_dim=256, linear_conv_kernel_dim=4, linear_key_head_dim=128,
                           linear_value_head_dim=128, linear_num_key_heads=16, linear_num_value_heads=32,
                           moe_intermediate_size=512, shared_expert_intermediate_size=512, num_experts_per_tok=10,
                           num_experts=512, tie_word_embeddings=False, max_position_embeddings=32768, hc_count=4,
                           hc_lowrank=320, ple_conv_kernel_size=4, ngram_size=3, heads_per_ngram=8,
                           ngram_vocab_size_base=20_000_000, make_ngram_vocab_size_divisible_by=128,
                           attention_bias=False),
    "qwen3_5_moe_text": dict(vocab_size=248320, hidden_size=2048, num_hidden_layers=40, num_attention_heads=16,
                             num_key_value_heads=2, head_dim=256, linear_conv_kernel_dim=4, linear_key_head_dim=128,
                             linear_value_head_dim=128, linear_num_key_heads=16, linear_num_value_heads=32,
                             moe_intermediate_size=512, shared_expert_intermediate_size=512, num_experts_per_tok=8,
                             num_experts=256, tie_word_embeddings=False, max_position_embeddings=32768),
    "hunyuan_v1_dense": dict(vocab_size=290943, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                             num_attention_heads=32, attention_bias=False, tie_word_embeddings=False,
                             max_position_embeddings=2048),
    "arcee": dict(vocab_size=32000, hidden_size=2560, intermediate_size=18432, num_hidden_layers=32,
                  num_attention_heads=32, attention_bias=False, mlp_bias=False, tie_word_embeddings=False,
                  max_position_embeddings=4096),
    "exaone": dict(_LLAMA, vocab_size=102400, intermediate_size=14336, num_key_value_heads=8,
                   max_position_embeddings=4096),
    "flex_olmo": dict(vocab_size=100352, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                      num_attention_heads=32, num_experts=7, num_experts_per_tok=5, attention_bias=False,
                      tie_word_embeddings=False, max_position_embeddings=4096),
    "dots1": dict(vocab_size=152064, hidden_size=4608, intermediate_size=10944, moe_intermediate_size=1408,
                  num_hidden_layers=62, num_attention_heads=32, first_k_dense_replace=0, attention_bias=False,
                  sliding_window=4096, max_window_layers=62, tie_word_embeddings=False, max_position_embeddings=2048),
    "deepseek_v32": dict(vocab_size=129280, hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048,
                         num_hidden_layers=61, num_attention_heads=128, num_key_value_heads=128, n_shared_experts=1,
                         n_routed_experts=256, kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64,
                         v_head_dim=128, qk_nope_head_dim=128, num_experts_per_tok=8, first_k_dense_replace=3,
                         index_topk=2048, index_head_dim=128, index_n_heads=64, attention_bias=False,
                         mlp_bias=False, tie_word_embeddings=False, max_position_embeddings=163840),
    "step3p5": dict(vocab_size=128815, hidden_size=4096, intermediate_size=11264, num_hidden_layers=45,
                    num_attention_heads=64, num_key_value_heads=8, head_dim=128, moe_intermediate_size=1280,
                    n_routed_experts=288, num_experts_per_tok=8, share_expert_dim=1280, attention_bias=False,
                    mlp_bias=False, tie_word_embeddings=False, max_position_embeddings=128000),
    "zaya": dict(vocab_size=262272, hidden_size=2048, num_hidden_layers=40, num_attention_heads=8, num_key_value_heads=2,
                 head_dim=128, moe_intermediate_size=2048, num_experts=16, num_experts_per_tok=1, router_hidden_size=256,
                 cca_time0=2, cca_time1=2, attention_bias=False, lm_head_bias=False, tie_word_embeddings=True,
                 max_position_embeddings=131072),
    "dots3_note_text": dict(vocab_size=152064, hidden_size=5120, intermediate_size=13824, moe_intermediate_size=1536,
                            shared_experts_intermediate_size=1536, num_hidden_layers=46, num_attention_heads=128,
                            num_key_value_heads=128, n_shared_experts=1, n_routed_experts=256, kv_lora_rank=512,
                            q_lora_rank=1024, qk_rope_head_dim=64, v_head_dim=128, qk_nope_head_dim=128,
                            num_experts_per_tok=8, index_topk=2048, index_head_dim=128, index_n_heads=64, head_dim=256,
                            attention_bias=False, tie_word_embeddings=False, max_position_embeddings=524288),
    "mistral_large4_text": dict(vocab_size=204800, hidden_size=6144, intermediate_size=24576,
                                moe_intermediate_size=6144, num_hidden_layers=72, num_attention_heads=64,
                                num_key_value_heads=64, n_shared_experts=1, n_routed_experts=128, kv_lora_rank=512,
                                qk_rope_head_dim=64, v_head_dim=128, qk_nope_head_dim=64, num_experts_per_tok=4,
                                first_k_dense_replace=1, index_topk=2048, index_head_dim=128, index_n_heads=32,
                                attention_bias=False, tie_word_embeddings=False, max_position_embeddings=1048576),
    "glm5_next_text": dict(vocab_size=154880, hidden_size=4096, intermediate_size=12288, moe_intermediate_size=2048,
                           num_hidden_layers=45, num_attention_heads=64, num_key_value_heads=64, n_shared_experts=1,
                           n_routed_experts=288, kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=0,
                           v_head_dim=256, qk_nope_head_dim=256, num_experts_per_tok=8, index_topk=2048,
                           index_head_dim=128, index_n_heads=32, index_kpool=16, linear_head_dim=128,
                           linear_num_heads=64, linear_conv_kernel_dim=4, hc_mult=4, attention_bias=False,
                           tie_word_embeddings=False, max_position_embeddings=1048576),
    "glm_moe_dsa": dict(vocab_size=154880, hidden_size=6144, intermediate_size=12288, moe_intermediate_size=2048,
                        num_hidden_layers=78, num_attention_heads=64, num_key_value_heads=64, n_shared_experts=1,
                        n_routed_experts=256, kv_lora_rank=512, q_lora_rank=2048, qk_rope_head_dim=64,
                        v_head_dim=256, qk_nope_head_dim=192, num_experts_per_tok=8, first_k_dense_replace=3,
                        index_topk=2048, index_head_dim=128, index_n_heads=32, attention_bias=False,
                        mlp_bias=False, tie_word_embeddings=False, max_position_embeddings=202752),
    "granitemoehybrid": dict(_LLAMA, num_local_experts=8, num_experts_per_tok=2, shared_intermediate_size=1024,
                             mamba_n_heads=128, mamba_n_groups=1, mamba_d_state=256, mamba_d_head="auto",
                             mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=256, mamba_conv_bias=True,
                             mamba_proj_bias=False, attention_bias=False),
    "glm4_moe_lite": dict(vocab_size=154880, hidden_size=2048, intermediate_size=10240, moe_intermediate_size=1536,
                          num_hidden_layers=47, num_attention_heads=20, num_key_value_heads=20, n_shared_experts=1,
                          n_routed_experts=64, kv_lora_rank=512, q_lora_rank=768, qk_rope_head_dim=64,
                          v_head_dim=256, qk_nope_head_dim=192, num_experts_per_tok=4, tie_word_embeddings=False,
                          max_position_embeddings=202752),
    # config classes that transformers builds with another family's model (Llama, GLM-4.5, DeepSeek-V3)
    "internlm3": dict(_LLAMA, vocab_size=128512, intermediate_size=10240, num_hidden_layers=48,
                      num_key_value_heads=2, head_dim=128, max_position_embeddings=32768),
    "iquestcoder": dict(_LLAMA, vocab_size=76800, hidden_size=5120, intermediate_size=27648, num_hidden_layers=80,
                        num_attention_heads=40, num_key_value_heads=8, head_dim=128, max_position_embeddings=131072),
    "sarvam_moe": dict(vocab_size=262144, hidden_size=4096, intermediate_size=8192, num_hidden_layers=19,
                       num_attention_heads=64, num_key_value_heads=4, head_dim=64, moe_intermediate_size=1024,
                       num_experts_per_tok=6, n_shared_experts=1, n_routed_experts=128, first_k_dense_replace=1,
                       use_qk_norm=True, num_nextn_predict_layers=0, attention_bias=False,
                       tie_word_embeddings=False, max_position_embeddings=131072),
    "sarvam_mla": dict(vocab_size=262144, hidden_size=4096, intermediate_size=16384, num_hidden_layers=32,
                       num_attention_heads=64, q_lora_rank=None, kv_lora_rank=512, qk_nope_head_dim=128,
                       qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=128, n_shared_experts=1,
                       moe_intermediate_size=2048, first_k_dense_replace=1, num_experts_per_tok=8,
                       num_nextn_predict_layers=0, tie_word_embeddings=False, max_position_embeddings=4096),
    "helium": dict(vocab_size=48000, hidden_size=2560, intermediate_size=7040, num_hidden_layers=24,
                   num_attention_heads=20, num_key_value_heads=20, head_dim=128, attention_bias=False, mlp_bias=False,
                   tie_word_embeddings=False, max_position_embeddings=4096),
    "cwm": dict(vocab_size=128256, hidden_size=6144, intermediate_size=21504, num_hidden_layers=64,
                num_attention_heads=48, num_key_value_heads=8, head_dim=128, sliding_window=8192, mlp_bias=False,
                tie_word_embeddings=False, max_position_embeddings=131072),
    "solar_open": dict(vocab_size=196608, hidden_size=4096, moe_intermediate_size=1280, num_hidden_layers=48,
                       num_attention_heads=64, num_key_value_heads=8, head_dim=128, n_routed_experts=128,
                       n_shared_experts=1, num_experts_per_tok=8, attention_bias=False, tie_word_embeddings=False,
                       max_position_embeddings=131072),
    "youtu": dict(vocab_size=128256, hidden_size=2048, intermediate_size=6144, num_hidden_layers=32,
                  num_attention_heads=16, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                  qk_rope_head_dim=64, v_head_dim=128, attention_bias=False, tie_word_embeddings=True,
                  max_position_embeddings=131072),
    "hunyuan_v1_moe": dict(vocab_size=290943, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                           num_attention_heads=32, num_experts=1, moe_topk=1, attention_bias=False,
                           tie_word_embeddings=False, max_position_embeddings=2048),
    "gemma4_text": dict(vocab_size=262144, hidden_size=2304, intermediate_size=9216, num_hidden_layers=30,
                        num_attention_heads=8, num_key_value_heads=4, head_dim=256, global_head_dim=512,
                        sliding_window=512, tie_word_embeddings=True, max_position_embeddings=131072,
                        hidden_size_per_layer_input=256, vocab_size_per_layer_input=262144),
    "gemma3n_text": dict(vocab_size=262400, hidden_size=2048, intermediate_size=16384, num_hidden_layers=35,
                         num_attention_heads=8, num_key_value_heads=2, head_dim=256, sliding_window=512,
                         tie_word_embeddings=True, max_position_embeddings=32768, hidden_size_per_layer_input=256,
                         vocab_size_per_layer_input=262144, altup_num_inputs=4, num_kv_shared_layers=15, laurel_rank=64),
    "gemma4_unified_text": dict(vocab_size=262144, hidden_size=2304, intermediate_size=9216, num_hidden_layers=30,
                                num_attention_heads=8, num_key_value_heads=4, head_dim=256, global_head_dim=512,
                                sliding_window=1024, tie_word_embeddings=True, max_position_embeddings=262144,
                                use_bidirectional_attention="vision", hidden_size_per_layer_input=0),
    "vaultgemma": dict(vocab_size=256000, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                       num_attention_heads=8, num_key_value_heads=4, head_dim=256, sliding_window=4096,
                       attention_bias=False, tie_word_embeddings=True, max_position_embeddings=8192),
    "granitemoeshared": dict(_LLAMA, num_local_experts=8, num_experts_per_tok=2, shared_intermediate_size=0,
                             attention_bias=False),
    "exaone_moe": dict(vocab_size=102400, hidden_size=4096, intermediate_size=16384, num_hidden_layers=32,
                       num_attention_heads=32, num_key_value_heads=32, sliding_window=4096, sliding_window_pattern=4,
                       first_k_dense_replace=1, moe_intermediate_size=1024, num_experts=64, num_experts_per_tok=8,
                       num_shared_experts=1, tie_word_embeddings=False, max_position_embeddings=2048),
    "cohere2_moe": dict(vocab_size=256000, hidden_size=8192, intermediate_size=22528, num_hidden_layers=40,
                        num_attention_heads=64, head_dim=128, sliding_window=4096, sliding_window_pattern=4,
                        prefix_dense_sliding_window_pattern=1, num_experts=8, num_experts_per_tok=2,
                        num_shared_experts=0, attention_bias=False, tie_word_embeddings=True,
                        max_position_embeddings=8192),
    "nemotron": dict(vocab_size=256000, hidden_size=6144, intermediate_size=24576, num_hidden_layers=32,
                     num_attention_heads=48, head_dim=128, attention_bias=False, mlp_bias=False,
                     tie_word_embeddings=False, max_position_embeddings=4096),
    "jais2": dict(_LLAMA, vocab_size=150272, hidden_size=3328, intermediate_size=26624, num_attention_heads=26,
                  max_position_embeddings=8192, attention_bias=True, mlp_bias=True),
    "mellum": dict(vocab_size=98304, hidden_size=2304, intermediate_size=7168, num_hidden_layers=28,
                   num_attention_heads=32, num_key_value_heads=4, head_dim=128, sliding_window=1024,
                   num_local_experts=64, num_experts_per_tok=8, moe_intermediate_size=896, attention_bias=False,
                   tie_word_embeddings=False, max_position_embeddings=131072),
    "nanochat": dict(vocab_size=50304, hidden_size=768, intermediate_size=8192, num_hidden_layers=12,
                     num_attention_heads=6, attention_bias=False, tie_word_embeddings=False,
                     max_position_embeddings=2048),
    "hyperclovax": dict(_LLAMA, attention_bias=False, mlp_bias=False, use_post_norm=True),
    "flint": dict(vocab_size=150144, hidden_size=2048, intermediate_size=6144, num_hidden_layers=49,
                  num_attention_heads=32, num_key_value_heads=4, head_dim=128, attention_bias=False,
                  sliding_window=513, moe_intermediate_size=512, shared_expert_intermediate_size=1024,
                  num_experts_per_tok=6, num_experts=256, decoder_sparse_step=1, mlp_only_layers=[0, 1],
                  tie_word_embeddings=False, max_position_embeddings=262144),
    "kimi_linear": dict(vocab_size=163840, hidden_size=2304, intermediate_size=9216, moe_intermediate_size=1024,
                        num_hidden_layers=27, num_attention_heads=32, num_key_value_heads=32, n_shared_experts=1,
                        kv_lora_rank=512, qk_rope_head_dim=64, v_head_dim=128, qk_nope_head_dim=128,
                        num_experts_per_tok=8, num_local_experts=256, linear_head_dim=128, linear_num_heads=32,
                        linear_conv_kernel_dim=4, attention_bias=False, tie_word_embeddings=False,
                        max_position_embeddings=1048576),
    "bailing_hybrid": dict(vocab_size=157184, hidden_size=2560, intermediate_size=6144, moe_intermediate_size=768,
                           num_hidden_layers=42, num_attention_heads=32, num_key_value_heads=32, num_experts=512,
                           num_experts_per_token=8, num_shared_experts=1, first_k_dense_replace=2, kv_lora_rank=512,
                           qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, head_dim=128,
                           short_conv_kernel_size=4, layer_group_size=6, attention_bias=False,
                           tie_word_embeddings=False, model_max_length=262144),
    "minimax": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8, num_experts_per_tok=2, num_local_experts=8,
                    block_size=256, tie_word_embeddings=False, max_position_embeddings=131072),
    "longcat_flash": dict(vocab_size=131072, hidden_size=6144, num_layers=28, num_attention_heads=64,
                          ffn_hidden_size=12288, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                          qk_rope_head_dim=64, v_head_dim=128, moe_topk=12, n_routed_experts=512, zero_expert_num=256,
                          expert_ffn_hidden_size=2048, attention_bias=False, tie_word_embeddings=False,
                          max_position_embeddings=131072),
    "muse_glimmer_text": dict(vocab_size=202048, hidden_size=6656, intermediate_size=19968, num_hidden_layers=52,
                              num_attention_heads=32, num_key_value_heads=2, head_dim=128, sliding_window=2048,
                              attention_bias=False, tie_word_embeddings=False, max_position_embeddings=131072),
    "muse_spark_text": dict(vocab_size=202048, hidden_size=8192, intermediate_size=16384, num_hidden_layers=62,
                            num_attention_heads=128, num_key_value_heads=16, head_dim=64, sliding_window=2048,
                            moe_intermediate_size=4096, num_local_experts=256, num_experts_per_tok=8,
                            moe_hidden_size=4096, attention_bias=False, tie_word_embeddings=False,
                            max_position_embeddings=1048576),
    "glm_ocr_text": dict(vocab_size=59392, hidden_size=1024, intermediate_size=4096, num_hidden_layers=16,
                         num_attention_heads=16, num_key_value_heads=8, max_position_embeddings=131072),
    "cosmos3_edge_text": dict(vocab_size=131072, hidden_size=2048, intermediate_size=9216, num_hidden_layers=28,
                              num_attention_heads=16, num_key_value_heads=8, head_dim=128, attention_bias=False,
                              mlp_bias=False, tie_word_embeddings=False, max_position_embeddings=131072),
    # HY-V4-VL's decoder: HY-V4's block at its own defaults (its M-RoPE sections change no count)
    "hy_v4_vl_text": dict(vocab_size=120832, hidden_size=6144, intermediate_size=18432, moe_intermediate_size=2048,
                          num_hidden_layers=78, num_attention_heads=64, num_key_value_heads=64, n_routed_experts=256,
                          n_shared_experts=1, num_experts_per_tok=8, q_lora_rank=2048, kv_lora_rank=512,
                          qk_nope_head_dim=192, qk_rope_head_dim=64, v_head_dim=256, index_topk=2048, index_head_dim=128,
                          index_n_heads=32, hc_mult=4, attention_bias=False, tie_word_embeddings=False,
                          max_position_embeddings=262144),
    "hy_v4": dict(vocab_size=120832, hidden_size=2816, intermediate_size=6912, moe_intermediate_size=768,
                  num_hidden_layers=34, num_attention_heads=32, num_key_value_heads=32, n_routed_experts=256,
                  n_shared_experts=1, num_experts_per_tok=8, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=192,
                  qk_rope_head_dim=64, v_head_dim=256, index_topk=2048, index_head_dim=128, index_n_heads=16,
                  hc_mult=4, attention_bias=False, tie_word_embeddings=False, max_position_embeddings=262144),
    "lara_mini": dict(vocab_size=151936, hidden_size=1024, num_hidden_layers=34, num_attention_heads=16,
                      num_key_value_heads=4, head_dim=128, moe_intermediate_size=512,
                      shared_expert_intermediate_size=512, num_experts=128, num_experts_per_tok=4,
                      tie_word_embeddings=True, attention_bias=False, sliding_window=512,
                      max_position_embeddings=131072, linear_conv_kernel_dim=4, linear_key_head_dim=128,
                      linear_value_head_dim=128, linear_num_key_heads=8, linear_num_value_heads=16),
    "olmo_hybrid": dict(vocab_size=100352, hidden_size=3840, intermediate_size=11008, num_hidden_layers=32,
                        num_attention_heads=30, max_position_embeddings=65536, tie_word_embeddings=False,
                        attention_bias=False, linear_conv_kernel_dim=4),
    "recurrent_gemma": dict(vocab_size=256000, hidden_size=2560, intermediate_size=7680, num_hidden_layers=26,
                            num_attention_heads=10, attention_window_size=2048, conv1d_width=4,
                            block_types=["recurrent", "recurrent", "attention"], tie_word_embeddings=True,
                            attention_bias=False),
    "beam": dict(vocab_size=151936, hidden_size=5120, intermediate_size=20480, num_hidden_layers=52,
                 num_attention_heads=48, num_key_value_heads=8, head_dim=128, moe_intermediate_size=2560,
                 num_experts=256, num_experts_per_tok=8, attention_bias=False, sliding_window=512,
                 tie_word_embeddings=False, max_position_embeddings=8192),
    "axk2": dict(vocab_size=163840, hidden_size=2048, intermediate_size=5120, moe_intermediate_size=512,
                 num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=32, n_shared_experts=1,
                 n_routed_experts=128, kv_lora_rank=128, q_lora_rank=384, qk_rope_head_dim=32, v_head_dim=64,
                 qk_nope_head_dim=64, num_experts_per_tok=8, attention_bias=False, tie_word_embeddings=False,
                 index_topk=2048, index_head_dim=128, index_n_heads=16, gated_norm_rank=16,
                 max_position_embeddings=131072),
    "axk1": dict(vocab_size=163840, hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048,
                 num_hidden_layers=61, num_attention_heads=64, num_key_value_heads=64, n_shared_experts=1,
                 n_routed_experts=192, kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64, v_head_dim=128,
                 qk_nope_head_dim=128, num_experts_per_tok=8, attention_bias=False, tie_word_embeddings=False,
                 max_position_embeddings=32768),
    "deepseek_v4": dict(vocab_size=129280, hidden_size=4096, moe_intermediate_size=2048, num_hidden_layers=43,
                        num_attention_heads=64, num_key_value_heads=1, head_dim=512, q_lora_rank=1024,
                        num_experts_per_tok=6, n_routed_experts=256, n_shared_experts=1, max_position_embeddings=1048576,
                        sliding_window=128, o_groups=8, o_lora_rank=1024, index_n_heads=64, index_head_dim=128,
                        index_topk=512, hc_mult=4, tie_word_embeddings=False, mlp_bias=False),
    "mimo_v2_flash": dict(vocab_size=152576, hidden_size=4096, intermediate_size=16384, num_hidden_layers=48,
                          num_attention_heads=64, num_key_value_heads=4, head_dim=192, v_head_dim=128,
                          sliding_window=129, tie_word_embeddings=False, max_position_embeddings=131072,
                          moe_intermediate_size=2048, n_routed_experts=256, num_experts_per_tok=8),
    "lfm3": dict(vocab_size=128000, hidden_size=2048, intermediate_size=7680, num_hidden_layers=24,
                 num_attention_heads=16, num_key_value_heads=4, head_dim=128, conv_L_cache=7, sliding_window=256,
                 tie_word_embeddings=True, max_position_embeddings=128000),
    "laguna": dict(vocab_size=100352, hidden_size=2048, intermediate_size=8192, num_hidden_layers=40,
                   num_attention_heads=48, num_key_value_heads=8, head_dim=128, num_experts=256, num_experts_per_tok=8,
                   moe_intermediate_size=512, shared_expert_intermediate_size=512, sliding_window=512,
                   tie_word_embeddings=False, max_position_embeddings=131072),
    "granite_swa": dict(_LLAMA, vocab_size=100352, hidden_size=2560, intermediate_size=8192, num_hidden_layers=24,
                        num_attention_heads=20, num_key_value_heads=4, sliding_window=128, attention_bias=False,
                        mlp_bias=False, tie_word_embeddings=True, max_position_embeddings=8192),
    "granitemoe_swa": dict(_LLAMA, num_local_experts=8, num_experts_per_tok=2, shared_intermediate_size=0,
                           sliding_window=128, attention_bias=False),
    "kolibri1": dict(vocab_size=128000, hidden_size=2560, num_hidden_layers=50, num_attention_heads=48,
                     num_key_value_heads=4, head_dim=128, sliding_window=513, moe_intermediate_size=512,
                     shared_expert_intermediate_size=512, num_experts_per_tok=6, num_experts=384,
                     tie_word_embeddings=False, max_position_embeddings=262144),
    "lfm2": dict(vocab_size=65536, hidden_size=2560, intermediate_size=12288, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=8, conv_L_cache=3, conv_bias=False, block_multiple_of=256,
                 block_ffn_dim_multiplier=1.0, block_auto_adjust_ff_dim=True, tie_word_embeddings=True,
                 max_position_embeddings=128000),
    "lfm2_moe": dict(vocab_size=65536, hidden_size=2048, intermediate_size=7168, moe_intermediate_size=1792,
                     num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, conv_L_cache=3,
                     conv_bias=False, num_dense_layers=2, num_experts_per_tok=4, num_experts=32, use_expert_bias=True,
                     tie_word_embeddings=True, max_position_embeddings=128000),
    "bamba": dict(vocab_size=128000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=8, mamba_n_heads=128, mamba_d_head=64, mamba_n_groups=1,
                  mamba_d_state=256, mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=256, mamba_conv_bias=True,
                  mamba_proj_bias=False, attention_bias=False, mlp_bias=False, tie_word_embeddings=False,
                  max_position_embeddings=262144),
    "afmoe": dict(vocab_size=200192, hidden_size=2048, intermediate_size=6144, moe_intermediate_size=1408,
                  num_hidden_layers=32, num_dense_layers=1, num_attention_heads=16, num_key_value_heads=16, head_dim=128,
                  num_experts=64, num_experts_per_tok=6, num_shared_experts=2, global_attn_every_n_layers=4,
                  sliding_window=1024, attention_bias=False, tie_word_embeddings=False, max_position_embeddings=16384),
    "hy_v3": dict(vocab_size=120832, hidden_size=4096, intermediate_size=13312, num_hidden_layers=80,
                  num_attention_heads=64, num_key_value_heads=8, head_dim=128, num_experts=192, num_experts_per_tok=8,
                  num_shared_experts=1, moe_intermediate_size=1536, attention_bias=False, mlp_bias=False,
                  tie_word_embeddings=False, max_position_embeddings=131072),
    "minicpm3": dict(vocab_size=73448, hidden_size=2560, intermediate_size=6400, num_hidden_layers=62,
                     num_attention_heads=40, q_lora_rank=768, kv_lora_rank=256, qk_nope_head_dim=64,
                     qk_rope_head_dim=32, v_head_dim=64, attention_bias=False, mlp_bias=False,
                     tie_word_embeddings=True, max_position_embeddings=32768),
    "gptj": dict(vocab_size=50400, n_positions=2048, n_embd=4096, n_layer=28, n_head=16, n_inner=None,
                 tie_word_embeddings=False),
    "codegen": dict(vocab_size=50400, n_positions=2048, n_embd=4096, n_layer=28, n_head=16, n_inner=None,
                    tie_word_embeddings=False),
    "persimmon": dict(vocab_size=262144, hidden_size=4096, intermediate_size=16384, num_hidden_layers=36,
                      num_attention_heads=64, qk_layernorm=True, tie_word_embeddings=False,
                      max_position_embeddings=16384),
    "stablelm": dict(vocab_size=50304, intermediate_size=6912, hidden_size=2560, num_hidden_layers=32,
                     num_attention_heads=32, num_key_value_heads=32, use_qkv_bias=False, qk_layernorm=False,
                     use_parallel_residual=False, tie_word_embeddings=False, max_position_embeddings=4096),
    "gpt_neo": dict(vocab_size=50257, max_position_embeddings=2048, hidden_size=2048, num_layers=24, num_heads=16,
                    intermediate_size=None, window_size=256, tie_word_embeddings=True),
    "opt": dict(vocab_size=50272, hidden_size=768, num_hidden_layers=12, ffn_dim=3072, max_position_embeddings=2048,
                num_attention_heads=12, tie_word_embeddings=True),
    "biogpt": dict(vocab_size=42384, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                   intermediate_size=4096, max_position_embeddings=1024, tie_word_embeddings=True),
    "bloom": dict(vocab_size=250880, hidden_size=64, n_layer=2, n_head=8, tie_word_embeddings=True),
    "dbrx": dict(d_model=2048, n_heads=16, n_layers=24, max_seq_len=2048, vocab_size=32000, tie_word_embeddings=False),
    "mpt": dict(d_model=2048, n_heads=16, n_layers=24, expansion_ratio=4, max_seq_len=2048, vocab_size=50368,
                tie_word_embeddings=True),
    "qwen3_next": dict(vocab_size=151936, hidden_size=2048, intermediate_size=5632, num_hidden_layers=48,
                       num_attention_heads=16, num_key_value_heads=2, head_dim=256, linear_conv_kernel_dim=4,
                       linear_key_head_dim=128, linear_value_head_dim=128, linear_num_key_heads=16,
                       linear_num_value_heads=32, decoder_sparse_step=1, moe_intermediate_size=512,
                       shared_expert_intermediate_size=512, num_experts_per_tok=10, num_experts=512,
                       tie_word_embeddings=False, max_position_embeddings=32768),
    "jamba": dict(vocab_size=65536, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=8, num_experts_per_tok=2, num_experts=16,
                  expert_layer_period=2, expert_layer_offset=1, attn_layer_period=8, attn_layer_offset=4,
                  mamba_d_state=16, mamba_d_conv=4, mamba_expand=2, tie_word_embeddings=False,
                  max_position_embeddings=262144),
    "bitnet": dict(vocab_size=128256, hidden_size=2560, intermediate_size=6912, num_hidden_layers=30,
                   num_attention_heads=20, num_key_value_heads=5, max_position_embeddings=2048,
                   tie_word_embeddings=False),
    "aria_text": dict(_LLAMA, intermediate_size=4096, moe_num_experts=8, moe_topk=2, moe_num_shared_experts=2),
    # Emu3's decoder (Emu3TextConfig): Llama's block over a vocabulary of text and image tokens
    "emu3_text_model": dict(_LLAMA, vocab_size=184622, intermediate_size=14336, num_key_value_heads=8,
                            max_position_embeddings=9216),
    "ctrl": dict(vocab_size=246534, n_positions=256, n_embd=1280, dff=8192, n_layer=48, n_head=16,
                 tie_word_embeddings=True),
    "xglm": dict(vocab_size=256008, max_position_embeddings=2048, d_model=1024, ffn_dim=4096, num_layers=24,
                 attention_heads=16, tie_word_embeddings=True),
    # the pure state-space families: their config classes' defaults (MambaConfig, FalconMambaConfig, Mamba2Config)
    "mamba": dict(vocab_size=50280, hidden_size=768, state_size=16, num_hidden_layers=32, expand=2, conv_kernel=4,
                  use_bias=False, use_conv_bias=True, time_step_rank="auto", tie_word_embeddings=True),
    "falcon_mamba": dict(vocab_size=50280, hidden_size=768, state_size=16, num_hidden_layers=32, expand=2,
                         conv_kernel=4, use_bias=False, use_conv_bias=True, time_step_rank="auto",
                         tie_word_embeddings=True),
    "mamba2": dict(num_heads=128, head_dim=64, vocab_size=32768, hidden_size=4096, state_size=128,
                   num_hidden_layers=64, expand=2, conv_kernel=4, n_groups=8, use_bias=False, use_conv_bias=True,
                   chunk_size=256, tie_word_embeddings=False),
    "nemotron_h": dict(vocab_size=131072, hidden_size=4096, num_attention_heads=32, num_key_value_heads=8,
                       head_dim=128, intermediate_size=21504, ssm_state_size=128, mamba_num_heads=128,
                       mamba_head_dim=64, n_groups=8, conv_kernel=4, chunk_size=128, n_routed_experts=8,
                       moe_intermediate_size=7688, moe_shared_expert_intermediate_size=7688, num_experts_per_tok=2,
                       tie_word_embeddings=False, max_position_embeddings=4096),
    "falcon_h1": dict(vocab_size=128000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                      num_attention_heads=32, num_key_value_heads=8, mamba_d_ssm=1024, mamba_n_heads=128,
                      mamba_n_groups=1, mamba_d_state=256, mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=256,
                      tie_word_embeddings=False, max_position_embeddings=8192),
    "qwen3_vl_text": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                          num_attention_heads=32, num_key_value_heads=32, head_dim=128, tie_word_embeddings=False,
                          max_position_embeddings=128000),
    "qwen3_vl_moe_text": dict(vocab_size=151936, hidden_size=2048, intermediate_size=5632, num_hidden_layers=24,
                              num_attention_heads=16, num_key_value_heads=16, decoder_sparse_step=1,
                              moe_intermediate_size=1408, num_experts_per_tok=4, num_experts=60,
                              tie_word_embeddings=False, max_position_embeddings=128000),
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
    "ernie4_5_moe": {"moe_num_experts": ("num_experts",), "moe_k": ("num_experts_per_tok",)},
    "ernie4_5_vl_moe_text": {"moe_num_experts": ("num_experts",), "moe_k": ("num_experts_per_tok",)},
    "glm4_moe_lite": {"n_routed_experts": ("num_local_experts",), "qk_rope_head_dim": ("head_dim",)},
    "qwen3_vl_moe_text": {"num_experts": ("num_local_experts",)},
    "qwen3_next": {"num_experts": ("num_local_experts",)},
    "qwen3_5_moe_text": {"num_experts": ("num_local_experts",)},
    "minimax_m2": {"num_local_experts": ("num_experts",)},
    "minimax_m3_vl_text": {"num_local_experts": ("num_experts",)},
    "step3p5": {"n_routed_experts": ("num_local_experts", "moe_num_experts"), "num_key_value_heads":
                ("num_attention_groups",), "num_experts_per_tok": ("moe_top_k",), "share_expert_dim":
                ("share_expert_dims",), "num_nextn_predict_layers": ("num_mtp_layers",)},
    "exaone": {"num_hidden_layers": ("num_layers",)},
    "deepseek_v32": {"n_routed_experts": ("num_experts",)},
    "mellum": {"num_local_experts": ("num_experts",), "num_nextn_predict_layers": ("num_mtp_layers",)},
    "axk1": {"n_routed_experts": ("num_local_experts",)},
    "axk2": {"n_routed_experts": ("num_local_experts",)},
    "hy_v4": {"n_routed_experts": ("num_local_experts",)},
    "hy_v4_vl_text": {"n_routed_experts": ("num_local_experts",)},
    "minimax": {"num_local_experts": ("num_experts",)},
    "bailing_hybrid": {"num_experts": ("num_local_experts",), "num_experts_per_token": ("num_experts_per_tok",),
                       "num_shared_experts": ("n_shared_experts",), "model_max_length": ("max_position_embeddings",),
                       "num_nextn_predict_layers": ("num_mtp_layers",)},
    "kimi_linear": {"num_local_experts": ("num_experts", "n_routed_experts"),
                    "num_experts_per_tok": ("num_experts_per_token",), "n_shared_experts": ("num_shared_experts",)},
    "longcat_flash": {"n_routed_experts": ("num_local_experts",), "moe_topk": ("num_experts_per_tok",),
                      "ffn_hidden_size": ("intermediate_size",), "expert_ffn_hidden_size": ("moe_intermediate_size",)},
    "deepseek_v4": {"n_routed_experts": ("num_local_experts",), "moe_intermediate_size": ("intermediate_size",)},
    "glm_moe_dsa": {"n_routed_experts": ("num_experts",)},
    "granitemoehybrid": {"layer_types": ("layers_block_type",)},
    "flex_olmo": {"num_experts": ("num_local_experts",)},
    "jamba": {"num_experts": ("num_local_experts",)},
    "nemotron_h": {"layers_block_type": ("layer_types",), "n_routed_experts": ("num_local_experts",),
                   "n_groups": ("mamba_n_groups",), "conv_kernel": ("mamba_d_conv",), "chunk_size": ("mamba_chunk_size",),
                   "use_conv_bias": ("mamba_conv_bias",)},
    "falcon_h1": {"layers_block_type": ("layer_types",)},
    "internlm3": {"attention_bias": ("qkv_bias",), "mlp_bias": ("bias",)},
    "sarvam_moe": {"n_routed_experts": ("num_local_experts", "num_experts"), "n_shared_experts": ("num_shared_experts",),
                   "attention_bias": ("use_qkv_bias",), "num_nextn_predict_layers": ("num_mtp_layers",)},
    "sarvam_mla": {"n_routed_experts": ("num_local_experts", "num_experts"), "n_shared_experts": ("num_shared_experts",),
                   "num_nextn_predict_layers": ("num_mtp_layers",)},
    "solar_open": {"n_routed_experts": ("num_local_experts",)},
    "hunyuan_v1_moe": {"moe_topk": ("num_experts_per_tok",), "num_experts": ("num_local_experts",)},
    "granitemoeshared": {"num_local_experts": ("num_experts",)},
    "exaone_moe": {"sliding_window_pattern": ("_sliding_window_pattern",)},
    "granitemoe_swa": {"num_local_experts": ("num_experts",)},
    "hy_v3": {"num_experts": ("num_local_experts",)},
    "gpt_neo": {"num_hidden_layers": ("num_layers",), "num_attention_heads": ("num_heads",)},
    "bloom": {"hidden_size": ("n_embed",), "n_layer": ("num_hidden_layers",), "n_head": ("num_attention_heads",)},
    "ctrl": {"n_embd": ("hidden_size",), "n_head": ("num_attention_heads",), "n_layer": ("num_hidden_layers",),
             "n_positions": ("max_position_embeddings",)},
    "xglm": {"d_model": ("hidden_size",), "attention_heads": ("num_attention_heads",), "num_layers": ("num_hidden_layers",)},
    "mpt": {"d_model": ("hidden_size",), "n_heads": ("num_attention_heads",), "n_layers": ("num_hidden_layers",)},
    "kolibri1": {"num_experts": ("num_local_experts",)},
    "inkling2_text": {"sliding_window_size": ("sliding_window",), "n_routed_experts": ("num_local_experts",),
                      "conv_kernel_size": ("sconv_kernel_size",), "max_position_embeddings": ("model_max_length",),
                      "moe_intermediate_size": ("intermediate_size",)},
    "inkling2_loop_text": {"sliding_window_size": ("sliding_window",), "n_routed_experts": ("num_local_experts",),
                           "conv_kernel_size": ("sconv_kernel_size",), "max_position_embeddings": ("model_max_length",),
                           "moe_intermediate_size": ("intermediate_size",)},
    "inkling_text": {"sliding_window_size": ("sliding_window",), "n_routed_experts": ("num_local_experts",),
                     "conv_kernel_size": ("sconv_kernel_size",), "max_position_embeddings": ("model_max_length",),
                     "logits_mup_width_multiplier": ("embedding_multiplier",)},
}

# More attribute_map spellings of the config classes (a key written the other way round, which transformers reads the
# same: GPT-2's family written with hidden_size, DBRX's with hidden_size, a DSA model's num_local_experts…)
_GPT2_NAMES = {"n_embd": ("hidden_size",), "n_positions": ("max_position_embeddings",), "n_head": ("num_attention_heads",),
               "n_layer": ("num_hidden_layers",)}
for _family, _more in {
    **dict.fromkeys(("gpt2", "gpt_bigcode", "gptj", "codegen"), _GPT2_NAMES),
    **dict.fromkeys(("deepseek_v32", "glm_moe_dsa", "mimo_v2_flash", "dots3_note_text", "mistral4"),
                    {"n_routed_experts": ("num_local_experts",)}),
    "jetmoe": {"kv_channels": ("head_dim",)},
    **dict.fromkeys(("zamba", "zamba2"), {"layers_block_type": ("layer_types",), "attention_head_dim": ("head_dim",)}),
    "dbrx": {"n_heads": ("num_attention_heads",), "d_model": ("hidden_size",), "n_layers": ("num_hidden_layers",),
             "max_seq_len": ("max_position_embeddings",)},
    "recurrent_gemma": {"attention_window_size": ("sliding_window",)},
    "rwkv": {"context_length": ("max_position_embeddings",)},
}.items():
    for _key, _spellings in _more.items():
        _have = ALIASES.setdefault(_family, {}).get(_key, ())
        ALIASES[_family][_key] = _have + tuple(x for x in _spellings if x not in _have)


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

def _common(r: _Read, *, head_dim_key: bool = True, ffn_key: str = "intermediate_size", kv_key: bool = True) -> dict:
    """hidden, layers, heads, kv heads, head dim, ffn (``ffn_key``), vocab, tie, positions of a llama-like config.
    ``kv_key=False``: a family whose attention is always multi-head (its modeling code never reads
    ``num_key_value_heads``; a stray one in the file is left unread, as transformers leaves it)."""
    heads = r.whole("num_attention_heads")
    h = r.whole("hidden_size")
    layers = r.whole("num_hidden_layers")
    kv = (r.opt_whole("num_key_value_heads", minimum=1) if kv_key else None) or heads  # null or absent: MHA
    hd = r.opt_whole("head_dim", minimum=1) if head_dim_key else None
    if hd is None and h % heads:
        raise InputError(N_("hidden_size {h} is not divisible by {heads} heads and config.json gives no head_dim"),
                         h=h, heads=heads)
    return dict(hidden=h, layers=layers, heads=heads, kv_heads=kv, head_dim=hd or h // heads,
                ffn=r.whole(ffn_key), vocab=r.whole("vocab_size"),
                tied_embeddings=r.flag("tie_word_embeddings", False),
                max_positions=r.opt_whole("max_position_embeddings") or 0)


def _note_mtp_not_built(r: _Read) -> None:
    """The note for a checkpoint's multi-token-prediction layers (``num_nextn_predict_layers``), which
    transformers does not build and the estimate does not count."""
    n = r.get("num_nextn_predict_layers")
    r.notes.append(Text(N_("the checkpoint's multi-token-prediction layer (num_nextn_predict_layers = 1) is not "
                           "counted: transformers 5.24 does not build it") if n == 1 else
                        N_("the checkpoint's {n} multi-token-prediction layers (num_nextn_predict_layers) are not "
                           "counted: transformers 5.24 does not build them"), n=n))


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


def _read_chameleon(r: _Read) -> dict:
    """Chameleon (Meta): Llama's block whose queries and keys are LayerNormed per head, with a weight and a bias for
    every head and dim (``swin_norm`` moves the norms after each sublayer: the same parameters); images become tokens of
    its vocabulary through a VQ-VAE (``vq_config``), named, not counted."""
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, mlp_bias=r.flag("mlp_bias"), qk_norm="width", qk_norm_bias=True)
    if c["heads"] * c["head_dim"] != c["hidden"]:  # (its o_proj is hidden × hidden)
        raise InputError(N_("chameleon: num_attention_heads × head_dim ({q}) must equal hidden_size ({hidden})"),
                         q=c["heads"] * c["head_dim"], hidden=c["hidden"])
    r.notes.append(Text(N_("chameleon: its VQ-VAE image tokenizer (vq_config), which turns an image into tokens of the "
                           "vocabulary, is named, not counted")))
    return c


def _read_diffllama(r: _Read) -> dict:
    """DiffLlama (the Differential Transformer on Llama's block): every head's queries and keys scored twice, once
    against each half of the value heads (each half repeated to the full KV heads); the two halves of the heads'
    outputs combined by a learned λ per layer (four head_dim vectors, λ_q1, λ_k1, λ_q2, λ_k2) and an RMSNorm without
    weights; the MLP without biases. transformers refuses attention dropout here (the paper defines none)."""
    c = _common(r)
    ab = r.flag("attention_bias")
    drop = r.get("attention_dropout")
    if isinstance(drop, (int, float)) and not isinstance(drop, bool) and drop > 0:
        raise InputError(N_("diffllama: attention_dropout {value} > 0 is refused by transformers' class (the paper "
                            "defines no dropout for differential attention)"), value=drop)
    if c["kv_heads"] % 2:
        raise InputError(N_("diffllama: num_key_value_heads ({n}) must be even: the values' heads are split in two "
                            "halves"), n=c["kv_heads"])
    c.update(qkv_bias=ab, o_bias=ab, diff_attention=True, attn_scale_params=4 * c["head_dim"])
    return c


def _read_modernbert_decoder(r: _Read) -> dict:
    """ModernBERT's decoder (Ettin's decoders): a LayerNorm after the embedding, none before the first layer's attention;
    q, k, v and Wo without biases by default; a GeGLU MLP in one fused input|gate matrix (Wi); local (sliding) layers
    of window ``local_attention`` // 2 beside global ones (``layer_types``, or every ``global_attn_every_n_layers``-th
    from the first); LayerNorms with a bias only with ``norm_bias``; before the tied LM head (its own bias,
    ``decoder_bias``) a prediction head: a dense hidden → hidden (``classifier_bias``), its activation and a norm."""
    c = _common(r, head_dim_key=False, kv_key=False)
    if c["hidden"] % c["heads"]:
        raise InputError(N_("hidden_size {h} is not divisible by {heads} heads"), h=c["hidden"], heads=c["heads"])
    ab, cb = r.flag("attention_bias"), r.flag("classifier_bias")
    c.update(qkv_bias=ab, o_bias=ab, mlp_bias=r.flag("mlp_bias"), fused_gate_up=True,
             norm="layer" if r.flag("norm_bias") else "layer_weight", embedding_norm=True, first_attn_norm=False,
             lm_head_bias=r.flag("decoder_bias", True), head_dense=True, head_dense_bias=cb)
    types = r.layer_types(c["layers"])
    every = r.whole("global_attn_every_n_layers", default=3)  # (the layout when layer_types is absent)
    if types is None:
        types = ["full_attention" if i % every == 0 else "sliding_attention" for i in range(c["layers"])]
    local = r.opt_whole("local_attention", minimum=0)
    if "sliding_attention" in types and not (local and local // 2):
        raise InputError(N_("modernbert-decoder: sliding layers need local_attention of at least 2 (their window is "
                            "half of it)"))
    _explicit_or(r, c, types, local // 2 if local else None)
    return c


def _read_jetmoe(r: _Read) -> dict:
    """JetMoE: a mixture of attention heads and a mixture of MLP experts in every layer, both routing each token to
    ``num_experts_per_tok`` of ``num_local_experts`` experts. An attention expert is a query projection (hidden →
    kv_heads × kv_channels) and an output projection back; keys and values come from one shared k|v projection, so a
    token has k × kv_heads query heads (transformers sets num_attention_heads so). An MLP expert is a GLU in one fused
    input matrix. Both mixtures add a bias after the weighted sum; neither has other biases."""
    heads, h, kv = r.opt_whole("num_attention_heads", minimum=1), r.whole("hidden_size"), r.whole("num_key_value_heads")
    e, k = r.whole("num_local_experts"), r.whole("num_experts_per_tok")
    if k > e:
        raise InputError(N_("jetmoe: num_experts_per_tok ({k}) exceeds num_local_experts ({e})"), k=k, e=e)
    if heads and heads != kv * k:  # (transformers overwrites it with kv × k)
        r.notes.append(Text(N_("jetmoe: num_attention_heads {heads} replaced by num_key_value_heads × "
                               "num_experts_per_tok = {n}, as transformers sets it"), heads=heads, n=kv * k))
    ffn = r.whole("intermediate_size")
    return dict(hidden=h, layers=r.whole("num_hidden_layers"), heads=kv * k, kv_heads=kv,
                head_dim=r.whole("kv_channels"), ffn=ffn, vocab=r.whole("vocab_size"),
                tied_embeddings=r.flag("tie_word_embeddings", True),
                max_positions=r.opt_whole("max_position_embeddings") or 0, experts=e, experts_per_token=k,
                expert_ffn=ffn, fused_gate_up=True, attn_experts=e, moe_out_bias=True)


def _read_bitnet(r: _Read) -> dict:
    """BitNet b1.58: Llama's block with an RMSNorm over the attention output before o_proj (``attn_sub_norm``) and
    one over the MLP's intermediate before down_proj (``ffn_sub_norm``), a ReLU² gated MLP; its linears are stored
    ternary (``quantization_config`` ``bitnet``)."""
    c = _common(r)
    if c["heads"] * c["head_dim"] != c["hidden"]:
        raise InputError(N_("bitnet: its attn_sub_norm is hidden_size wide over the heads' output, so "
                            "num_attention_heads × head_dim ({q}) must equal hidden_size ({hidden})"),
                         q=c["heads"] * c["head_dim"], hidden=c["hidden"])
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, norms_per_layer=3, ffn_norm=True)
    return c

def _read_aria_text(r: _Read) -> dict:
    """Aria's decoder: Llama's attention, every layer a MoE of ``moe_num_experts`` experts of intermediate_size (top
    ``moe_topk``, no router bias) beside ``moe_num_shared_experts`` shared experts run as one MLP that many times
    wider."""
    c = _common(r)
    ab = r.flag("attention_bias")
    f = c["ffn"]
    c.update(qkv_bias=ab, o_bias=ab, mlp_bias=r.flag("mlp_bias"), experts=r.whole("moe_num_experts"),
             experts_per_token=r.whole("moe_topk"), expert_ffn=f,
             shared_expert_ffn=f * r.whole("moe_num_shared_experts", minimum=0), fused_gate_up=True)
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


def _mla(r: _Read) -> dict:
    """DeepSeek's multi-head latent attention block of a config (the head dims, the latents, the biases) with the
    model's hidden size, layers, vocabulary and head."""
    heads = r.whole("num_attention_heads")
    r.get("num_key_value_heads")  # read and unused: kv_b_proj makes keys and values for every head
    # (GLM-5-Next's attention has no rotary dims: every layer NoPE)
    dn, dv = r.whole("qk_nope_head_dim"), r.whole("v_head_dim")
    dr = r.whole("qk_rope_head_dim", minimum=0 if r.family == "glm5_next_text" else 1)
    ab = r.flag("attention_bias")
    return dict(hidden=r.whole("hidden_size"), layers=r.whole("num_hidden_layers"), heads=heads, kv_heads=heads,
                head_dim=dn + dr, v_head_dim=dv, q_lora_rank=r.opt_whole("q_lora_rank") or 0,
                kv_lora_rank=r.whole("kv_lora_rank"), rope_head_dim=dr, vocab=r.whole("vocab_size"),
                tied_embeddings=r.flag("tie_word_embeddings"),
                max_positions=r.opt_whole("max_position_embeddings") or 0, qkv_bias=ab, o_bias=ab,
                ffn=r.whole("intermediate_size"))


def _read_deepseek(r: _Read, moe_layers: str | None = None) -> dict:
    c = _mla(r)
    if not r.has("num_experts_per_tok") and "num_experts_per_tok" not in r.defaults:
        raise InputError(N_("a deepseek_v2 config.json needs 'num_experts_per_tok' (transformers cannot route without "
                            "it)"))
    fm = r.whole("moe_intermediate_size")
    c.update(mlp_bias=r.flag("mlp_bias") if r.family == "deepseek_v2" else False, experts=r.whole("n_routed_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("n_shared_experts", minimum=0) * fm,
             moe_layers=moe_layers if moe_layers is not None else
             moe_pattern(c["layers"], first_dense=r.whole("first_k_dense_replace", minimum=0, default=0)))
    if r.family in ("deepseek_v3", "sarvam_mla"):
        c.update(router_score_bias=True, mtp_layers=r.whole("num_nextn_predict_layers", minimum=0, default=0))
    if r.family not in ("axk1", "axk2") and r.has("moe_layer_freq") and r.raw.get("moe_layer_freq") not in (None, 1):
        r.notes.append(Text(N_("moe_layer_freq is ignored by transformers (every layer after the dense ones is MoE)")))
    return c


def _read_deepseek_ocr2_text(r: _Read) -> dict:
    """DeepSeek-OCR-2's decoder (``deepseek_ocr2_text``): Llama's multi-head attention (no MLA; ``attention_bias`` on
    q/k/v/o) under DeepSeek-V2's mixture — routed experts of ``moe_intermediate_size``, ``n_shared_experts`` shared
    ones, the dense layers named by ``mlp_layer_types`` (required: the model indexes it per layer)."""
    c = _common(r)
    ab = r.flag("attention_bias")
    types = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, c["layers"])
    if types is None:
        raise InputError(N_("a deepseek_ocr2_text config needs 'mlp_layer_types' (dense or sparse for each layer): "
                            "transformers' model reads it per layer"))
    fm = r.whole("moe_intermediate_size")
    c.update(qkv_bias=ab, o_bias=ab, mlp_bias=r.flag("mlp_bias"), experts=r.whole("n_routed_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("n_shared_experts", minimum=0) * fm, moe_layers="".join(types))
    return c


def _read_molmo2_text(r: _Read) -> dict:
    """Molmo2's decoder (``molmo2_text``): Llama's block with q/k/v biases by ``attention_bias`` (none on o_proj), q/k
    RMS-normed per head (``qk_norm_type`` qwen3) or over the whole projection (olmo), the norms before or after each
    sublayer (``norm_after``: the same parameters); the embedding holds ``additional_vocab_size`` rows beyond the LM
    head's ``vocab_size``."""
    c = _common(r)
    kind = r.get("qk_norm_type") or "qwen3"
    if kind not in ("qwen3", "olmo"):
        raise InputError(N_("molmo2_text: qk_norm_type must be 'qwen3' or 'olmo', got {v!r}"), v=str(kind)[:40])
    r.flag("norm_after")  # read: normalizing each sublayer's output instead of its input changes no count
    extra = r.whole("additional_vocab_size", minimum=0)
    c.update(qkv_bias=r.flag("attention_bias"), qk_norm="head" if kind == "qwen3" else "width",
             vocab=c["vocab"] + extra)
    if extra:
        c["output_vocab"] = c["vocab"] - extra
        if r.flag("tie_word_embeddings", False):  # a head of other rows than the embedding is never its weight
            r.notes.append(Text(N_("tie_word_embeddings is true, but the embedding's {rows:,} rows (additional_vocab_size "
                                   "beyond vocab_size) are not the LM head's {head:,}: transformers leaves the head its "
                                   "own weights, both counted"), rows=c["vocab"], head=c["output_vocab"]))
            c["tied_embeddings"] = False
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
    elif r.family == "cohere_compass_text":  # every layer full unless layer_types says otherwise
        _explicit_or(r, c, None, r.opt_whole("sliding_window", minimum=0))
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


def _read_gpt_neox_japanese(r: _Read) -> dict:
    """GPT-NeoX-Japanese: GPT-NeoX's fused q|k|v without biases, sequential (not parallel) residuals, a GELU MLP of
    ``intermediate_multiple_size`` × hidden without biases, a bias on the last layer's attention output only."""
    c = _common(r, head_dim_key=False, ffn_key="hidden_size")
    c.update(kv_heads=c["heads"], ffn=c["hidden"] * r.whole("intermediate_multiple_size"), mlp="plain", norm="layer",
             fused_qkv=True, last_o_bias=True, tied_embeddings=r.flag("tie_word_embeddings", True))
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


def _read_exaone4(r: _Read) -> dict:
    """EXAONE 4: qk-norm on head_dim, two norms per layer *after* attention and MLP, sliding layers by
    ``sliding_window_pattern`` (a number, or letters L local / G global) or ``layer_types``."""
    c = _common(r)
    c.update(qk_norm="head")
    w = r.opt_whole("sliding_window", minimum=0)
    p = r.get("sliding_window_pattern")
    layers = c["layers"]
    if isinstance(p, str):
        unit = p.strip().upper()
        if not unit or set(unit) - {"L", "G"}:
            raise InputError(N_("config.json field 'sliding_window_pattern' must be a number or letters L (local) and "
                                "G (global), got {p!r}"), p=p[:40])
        default = ["sliding_attention" if unit[i % len(unit)] == "L" else "full_attention" for i in range(layers)]
    elif w:
        p = _whole("sliding_window_pattern", 4 if p is None else p)
        default = ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(layers)]
    else:
        default = None
    _explicit_or(r, c, default, w)
    return c


def _read_ernie4_5_moe(r: _Read) -> dict:
    """ERNIE 4.5 MoE: biases everywhere with ``use_bias`` (not on the 3-D experts), MoE layers from
    ``moe_layer_start_index`` to ``moe_layer_end_index`` every ``moe_layer_interval``, shared experts, and the
    router's score-correction bias stored as a parameter."""
    c = _common(r)
    b = r.flag("use_bias")
    layers = c["layers"]
    start = r.whole("moe_layer_start_index", minimum=0, default=1)
    end = r.get("moe_layer_end_index")
    end = layers - 1 if end is None or end == -1 else _whole("moe_layer_end_index", end, minimum=0)
    every = r.whole("moe_layer_interval", default=1)
    fe = r.whole("moe_intermediate_size")
    c.update(qkv_bias=b, o_bias=b, mlp_bias=b, lm_head_bias=b, tied_embeddings=r.flag("tie_word_embeddings", True),
             experts=r.whole("moe_num_experts"), experts_per_token=r.whole("moe_k"), expert_ffn=fe,
             shared_expert_ffn=r.whole("moe_num_shared_experts", minimum=0, default=0) * fe,
             router_score_bias=True, score_bias_param=True,
             moe_layers="".join("M" if (i + 1) % every == 0 and start <= i <= end else "D" for i in range(layers)))
    return c


def _read_ernie4_5_vl_moe_text(r: _Read) -> dict:
    """ERNIE 4.5 VL's decoder (``ernie4_5_vl_moe_text``): ERNIE 4.5 MoE's block, the dense layers by
    ``mlp_layer_types`` (else the first), every MoE layer two mixtures of ``moe_num_experts`` — the text tokens'
    (``moe_intermediate_size[0]`` wide, its width also the shared experts') and the image tokens'
    (``moe_intermediate_size[1]``), each with its router and score-correction parameter; on a text prompt only the
    first runs."""
    c = _common(r)
    b = r.flag("use_bias")
    widths = r.get("moe_intermediate_size")
    if widths is None:
        widths = [1536, 512]
    if not isinstance(widths, list) or len(widths) != 2:
        raise InputError(N_("ernie4_5_vl_moe_text: moe_intermediate_size must list the text experts' and the image "
                            "experts' widths"))
    fe, fv = (_whole("moe_intermediate_size", w) for w in widths)
    c.update(qkv_bias=b, o_bias=b, mlp_bias=b, tied_embeddings=r.flag("tie_word_embeddings", True),  # (the wrapper's
             # LM head has no bias)
             experts=r.whole("moe_num_experts"), experts_per_token=r.whole("moe_k"), expert_ffn=fe,
             shared_expert_ffn=r.whole("moe_num_shared_experts", minimum=0, default=0) * fe, vision_expert_ffn=fv,
             router_score_bias=True, score_bias_param=True, moe_layers=_mlp_layer_types(r, c["layers"], 1))
    return c


def _read_glm4_moe_lite(r: _Read) -> dict:
    """GLM-4.7-Flash (glm4_moe_lite): DeepSeek-V3's MLA and MoE, its dense layers named by ``mlp_layer_types``."""
    layers = r.whole("num_hidden_layers")
    types = r.get("mlp_layer_types")
    if types is None:
        types = ["dense"] + ["sparse"] * (layers - 1)
    if not isinstance(types, list) or len(types) != layers or set(types) - {"dense", "sparse"}:
        raise InputError(N_("config.json field 'mlp_layer_types' must list 'dense' or 'sparse' for each of the "
                            "{layers} layers"), layers=layers)
    c = _read_deepseek(r, moe_layers="".join("M" if t == "sparse" else "D" for t in types))
    c.update(router_score_bias=True, mtp_layers=r.whole("num_nextn_predict_layers", minimum=0, default=0))
    return c


def _biased(r: _Read, **fields) -> dict:
    """A llama-like block (:func:`_common`) with ``attention_bias`` on q, k, v and o, and the family's own fields."""
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update({"qkv_bias": ab, "o_bias": ab, **fields})
    return c


def _read_deepseek_v32(r: _Read) -> dict:
    """DeepSeek-V3.2: DeepSeek-V3's MLA (always with a query latent) and MoE, dense layers by ``mlp_layer_types``
    (else the first ``first_k_dense_replace``), and in every layer DeepSeek Sparse Attention's lightning indexer
    (``index_n_heads`` heads of ``index_head_dim``, the top ``index_topk`` keys per query)."""
    layers = r.whole("num_hidden_layers")
    moe = _mlp_layer_types(r, layers, 3)
    _type_list(r, "layer_types", {"indexed_attention": "I", "deepseek_sparse_attention": "I"}, layers)
    if not r.opt_whole("q_lora_rank"):
        raise InputError(N_("{family} needs a q_lora_rank: its indexer reads the query latent"), family=r.family)
    c = _read_deepseek(r, moe_layers=moe)
    c.update(router_score_bias=True, mtp_layers=r.whole("num_nextn_predict_layers", minimum=0, default=0),
             index_heads=r.whole("index_n_heads"), index_head_dim=r.whole("index_head_dim"),
             index_topk=r.whole("index_topk"), layer_types=_indexer_layers(r, layers))
    return c


def _read_mistral_large4_text(r: _Read) -> dict:
    """Mistral Large 4's decoder (``mistral_large4_text``): GLM-5's DeepSeek Sparse Attention — an indexer in the
    layers ``indexer_types`` calls full, the others reusing the last one's top-k — over MLA without a query latent
    (q_proj from the hidden state), the indexer's queries from the normed hidden state, a learned log-position scale
    and bias per head on both kinds of query; NoPE layers (``no_rope_layers`` 0, by default every
    ``no_rope_layer_interval``-th) whose MLA has no rotary dims; layers reading an earlier layer's latent
    (``kv_source_layers``: no kv_a_proj, no latent cached, their own kv_b_proj); dense then MoE layers (Mistral 4's
    router, kept in fp32, shared experts); LeRoPE's learned frequency scales (fp32)."""
    layers = r.whole("num_hidden_layers")
    moe = _mlp_layer_types(r, layers, 1)
    _type_list(r, "layer_types", {"indexed_attention": "I"}, layers)
    kinds = list(_indexer_layers(r, layers))
    rope = r.get("no_rope_layers")
    if rope is None:
        every = r.whole("no_rope_layer_interval", default=4)
        rope = [int((i + 1) % every != 0) for i in range(layers)]
    if (not isinstance(rope, list) or len(rope) < layers
            or any(isinstance(x, bool) or x not in (0, 1) for x in rope[:layers])):
        raise InputError(N_("{key} must list 0 (NoPE) or 1 (RoPE) for each of the {layers} layers"),
                         key="no_rope_layers", layers=layers)
    sources = r.get("kv_source_layers")
    if sources is None:
        sources = list(range(layers))
    if not isinstance(sources, list) or len(sources) != layers:
        raise InputError(N_("kv_source_layers must give one layer number for each of the {layers} layers"),
                         layers=layers)
    for i, src in enumerate(sources):
        src = _whole("kv_source_layers", src, minimum=0)
        if src > i or sources[src] != src:
            raise InputError(N_("kv_source_layers: layer {i} must read the latent of an earlier layer that keeps its "
                                "own, got {src}"), i=i, src=src)
        if rope[src] != rope[i]:
            raise InputError(N_("kv_source_layers: layer {i} and layer {src}, whose latent it reads, must both use "
                                "RoPE or both not (no_rope_layers)"), i=i, src=src)
        k = kinds[i] if rope[i] else {"I": "J", "F": "G"}[kinds[i]]
        kinds[i] = k.lower() if src != i else k
    c = _read_deepseek(r, moe_layers=moe)
    if c["q_lora_rank"]:
        r.notes.append(Text(N_("q_lora_rank is ignored: Mistral Large 4's attention projects its queries from the "
                               "hidden state")))
    dr = c["rope_head_dim"]
    c.update(q_lora_rank=0, index_heads=r.whole("index_n_heads"), index_head_dim=r.whole("index_head_dim"),
             index_topk=r.whole("index_topk"), layer_types="".join(kinds), index_q_from_hidden=True,
             attn_scale_params=2 * c["heads"], rope_scales=dr // 2)
    return c


def _read_zaya(r: _Read) -> dict:
    """ZAYA1 (Zyphra): compressed convolutional attention — q and k from their projections through a depthwise
    (``cca_time0`` taps) and a head-grouped (``cca_time1``) causal convolution with residuals, L2-normed with a learned
    scale per KV head, the values half from the token and half from the token before — full layers (``hybrid``) and
    sliding ones (``hybrid_sliding``); every layer a top-1 mixture whose router is an MLP (``router_hidden_size``,
    each layer after the first adding the previous layer's router state) with a skip choice and balancing biases;
    a scale and a bias on both sides of every residual add and on the embedding."""
    c = _common(r, ffn_key="moe_intermediate_size")
    layers, k = c["layers"], r.whole("num_experts_per_tok")
    if k != 1:
        raise InputError(N_("zaya: its router picks one expert per token (num_experts_per_tok 1), got {k}"), k=k)
    kinds = _type_list(r, "layer_types", {"hybrid": "F", "hybrid_sliding": "S"}, layers) or ["F"] * layers
    window = r.opt_whole("sliding_window", minimum=1)
    if "S" in kinds and not window:
        raise InputError(N_("layer_types has sliding layers but sliding_window is null"))
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, lm_head_bias=r.flag("lm_head_bias"), qk_norm="l2", attn_scale_params=c["kv_heads"],
             experts=r.whole("num_experts"), experts_per_token=1, expert_ffn=c["ffn"], zero_experts=1,
             router_score_bias=True, router_hidden=r.whole("router_hidden_size"), fused_gate_up=True,
             cca_depthwise=r.whole("cca_time0"), cca_grouped=r.whole("cca_time1"), residual_affine=True,
             tied_embeddings=r.flag("tie_word_embeddings", True))
    if "S" in kinds:
        c.update(sliding_window=window, layer_types="".join(kinds))
    return c


def _read_step3p5(r: _Read) -> dict:
    """Step 3.5 / 3.7 Flash's decoder (``step3p5``, the text_config of ``step3p7``): Laguna's attention (q/k norms per
    head, a gate per head on the output) in full and sliding layers, the sliding layers with their own query-head
    count (``per_layer_config``, ``num_sliding_attention_heads`` or a released file's ``attention_other_setting``);
    dense layers of ``intermediate_size`` and mixtures of ``n_routed_experts`` (gate and up in one 3-D tensor, a
    score-correction buffer) beside a shared expert of ``share_expert_dim``, by ``mlp_layer_types`` (else a released file's ``moe_layers_enum``, else
    from the fourth layer on). A released file's per-layer lists padded with its multi-token-prediction layers are read
    up to ``num_hidden_layers``; those layers, which transformers does not build, are named, not counted."""
    c = _common(r)
    layers = c["layers"]
    mtp = r.whole("num_nextn_predict_layers", minimum=0, default=0)

    def trimmed(key: str):
        v = r.get(key)
        return v[:layers] if isinstance(v, list) and len(v) == layers + mtp else v

    lt = trimmed("layer_types")
    kinds = (["F"] * layers if lt is None else
             _kinds_of(r, "layer_types", lt, {"full_attention": "F", "sliding_attention": "S"}, layers))
    ml = trimmed("mlp_layer_types")
    if ml is not None:
        moe = _kinds_of(r, "mlp_layer_types", ml, {"sparse": "M", "dense": "D"}, layers)
    else:
        enum = r.get("moe_layers_enum")
        if enum is None:
            chosen = set(range(3, layers))
        else:
            items = enum.split(",") if isinstance(enum, str) else enum
            if not isinstance(items, list):
                raise InputError(N_("config.json field {key!r} must be a list of layer numbers"), key="moe_layers_enum")
            chosen = {_whole("moe_layers_enum", int(str(i).strip()), minimum=0) for i in items if str(i).strip()}
        moe = ["M" if i in chosen else "D" for i in range(layers)]
    for key in ("swiglu_limits", "swiglu_limits_shared", "rope_theta", "partial_rotary_factors"):
        r.get(key)  # read, unused: clamps and rotary bases change no count
    if mtp:
        r.notes.append(Text(N_("{n} multi-token-prediction layers in its checkpoints: transformers does not build them, "
                               "and they are not counted"), n=mtp))
    c.update(qk_norm="head", qkv_bias=r.flag("attention_bias"), o_bias=r.flag("attention_bias"), attn_gate="head",
             mlp_bias=r.flag("mlp_bias"), moe_layers="".join(moe))
    if "M" in moe:
        c.update(experts=r.whole("n_routed_experts"), experts_per_token=r.whole("num_experts_per_tok"),
                 expert_ffn=r.whole("moe_intermediate_size"), shared_expert_ffn=r.whole("share_expert_dim"),
                 fused_gate_up=True, router_score_bias=True)
    if "S" in kinds:
        window = r.opt_whole("sliding_window", minimum=1)
        if not window:
            raise InputError(N_("layer_types has sliding layers but sliding_window is null"))
        c.update(sliding_window=window, layer_types="".join(kinds))
        per_layer, heads = r.get("per_layer_config"), None
        if per_layer is not None:
            if not isinstance(per_layer, dict) or not all(isinstance(v, dict) for v in per_layer.values()):
                raise InputError(N_("config.json field {key!r} must be an object of per-layer objects"),
                                 key="per_layer_config")
            found = set()
            for k, v in per_layer.items():
                i = int(k) if str(k).isdigit() else -1
                if not 0 <= i < layers or kinds[i] != "S" or set(v) - {"num_attention_heads"}:
                    raise InputError(N_("step3p5: per_layer_config may set the sliding layers' num_attention_heads "
                                        "only"))
                found.add(_whole("per_layer_config.num_attention_heads", v.get("num_attention_heads", c["heads"])))
            if len(found) > 1:
                raise InputError(N_("step3p5: the sliding layers' head counts differ; one for all of them is read"))
            heads = found.pop() if found else c["heads"]
            r.get("num_sliding_attention_heads")  # read, unused: per_layer_config wins
        else:
            heads = r.opt_whole("num_sliding_attention_heads", minimum=1)
            other = r.get("attention_other_setting")
            if heads is None and isinstance(other, dict):
                heads = _whole("attention_other_setting.num_attention_heads",
                               other.get("num_attention_heads", c["heads"]))
        if heads and heads != c["heads"]:
            c["sliding_heads"] = heads
    else:
        for key in ("sliding_window", "num_sliding_attention_heads", "per_layer_config", "attention_other_setting"):
            r.get(key)  # read, unused: no layer slides
    return c


_DOTS3_SWA = {"num_attention_heads": 64, "num_key_value_heads": 64, "q_lora_rank": 1024, "kv_lora_rank": 1024,
              "head_dim": 256, "qk_nope_head_dim": 192, "v_head_dim": 128}


def _read_dots3_note_text(r: _Read) -> dict:
    """Dots 3 Note: DeepSeek-V3.2's MLA, MoE and score-corrected router, a per-head sigmoid gate (``g_proj``) on the
    attention output and a norm on the shared rotary key in every layer; the first two layers and every fourth from
    the second run DeepSeek Sparse Attention's indexer (``indexed_attention``; ``full_attention`` where ``use_dsa`` is
    false), the rest attend over a ``sliding_window`` with an MLA of their own shape (``per_layer_config``, or a
    released file's ``swa_*`` keys); shared experts ``n_shared_experts`` × ``shared_experts_intermediate_size`` wide;
    dense layers by ``mlp_layer_types`` (else the first ``first_k_dense_replace``, then ``moe_layer_freq``)."""
    layers = r.whole("num_hidden_layers")
    per_layer = r.get("per_layer_config")
    use_dsa = r.get("use_dsa")
    if use_dsa is None and per_layer is None:
        use_dsa = True
    kinds = _type_list(r, "layer_types", {"indexed_attention": "I", "sliding_attention": "S",
                                          "full_attention": "F"}, layers)
    if kinds is None:
        slide = r.flag("use_sliding_window", True)
        kinds = ["I" if not slide or i < 2 or i % 4 == 1 else "S" for i in range(layers)]
    else:
        r.get("use_sliding_window")  # read, unused: layer_types wins
    if use_dsa is not None:
        kinds = [("I" if use_dsa else "F") if k in "IF" else k for k in kinds]
    types = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    first, freq = r.whole("first_k_dense_replace", minimum=0, default=1), r.get("moe_layer_freq")
    if types is None:
        freq = 1 if freq is None else freq
        if isinstance(freq, list):
            if len(freq) != layers:
                raise InputError(N_("{key} lists {n} layers but num_hidden_layers is {layers}"), key="moe_layer_freq",
                                 n=len(freq), layers=layers)
            types = ["M" if i >= first and freq[i] else "D" for i in range(layers)]
        else:
            f = _whole("moe_layer_freq", freq)
            types = ["M" if i >= first and i % f == 0 else "D" for i in range(layers)]
    c = _mla(r)
    if not c["q_lora_rank"]:
        raise InputError(N_("{family} needs a q_lora_rank: its indexer reads the query latent"), family=r.family)
    fm = r.whole("moe_intermediate_size")
    shared = r.get("moe_shared_expert_intermediate_size")
    shared = r.whole("shared_experts_intermediate_size") if shared is None else _whole(
        "moe_shared_expert_intermediate_size", shared)
    c.update(experts=r.whole("n_routed_experts"), experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("n_shared_experts") * shared, router_score_bias=True,
             moe_layers="".join(types), attn_gate="head", rope_key_norm=True, layer_types="".join(kinds))
    if "I" in kinds:
        c.update(index_heads=r.whole("index_n_heads"), index_head_dim=r.whole("index_head_dim"),
                 index_topk=r.whole("index_topk"))
    else:
        for k in ("index_n_heads", "index_head_dim", "index_topk"):
            r.get(k)  # read, unused: no layer runs the indexer
    if "S" in kinds:
        window = r.opt_whole("sliding_window", minimum=1) or r.whole("sliding_window_size", default=512)
        c["sliding_window"] = window
        c.update(_dots3_sliding_shape(r, c, kinds, per_layer))
    elif per_layer:
        raise InputError(N_("dots3_note_text: per_layer_config is read for the sliding layers only"))
    else:
        for k in ("sliding_window", "sliding_window_size", "head_dim", *(f"swa_{k}" for k in _DOTS3_SWA),
                  "swa_qk_rope_head_dim"):
            r.get(k)  # read, unused: no layer slides
    return c


def _dots3_sliding_shape(r: _Read, c: dict, kinds: list[str], per_layer) -> dict:
    """The sliding layers' MLA: each field from ``per_layer_config`` (the same for every sliding layer) over the
    top-level value, or from a released file's ``swa_*`` keys (DotsNoteTextConfig's defaults where absent)."""
    top = dict(num_attention_heads=c["heads"], q_lora_rank=c["q_lora_rank"], kv_lora_rank=c["kv_lora_rank"],
               qk_nope_head_dim=c["head_dim"] - c["rope_head_dim"], qk_rope_head_dim=c["rope_head_dim"],
               v_head_dim=c["v_head_dim"], head_dim=r.whole("head_dim", default=256))
    top["num_key_value_heads"] = top["num_attention_heads"]
    if per_layer is not None:
        if not isinstance(per_layer, dict) or not all(isinstance(v, dict) for v in per_layer.values()):
            raise InputError(N_("config.json field {key!r} must be an object of per-layer objects"),
                             key="per_layer_config")
        entries = {}
        for k, v in per_layer.items():
            i = int(k) if str(k).isdigit() else -1
            if not 0 <= i < len(kinds) or kinds[i] != "S" or set(v) - set(top):
                raise InputError(N_("dots3_note_text: per_layer_config may set the sliding layers' {fields} only"),
                                 fields=", ".join(top))
            entries[i] = v
        shapes = [{**top, **entries.get(i, {})} for i, k in enumerate(kinds) if k == "S"]
        if any(x != shapes[0] for x in shapes):
            raise InputError(N_("dots3_note_text: the sliding layers' per_layer_config entries differ; one shape for "
                                "all of them is read"))
        shape = shapes[0]
    else:
        shape = {k: r.whole(f"swa_{k}", default=v) for k, v in _DOTS3_SWA.items()}
        shape["qk_rope_head_dim"] = r.whole("swa_qk_rope_head_dim",
                                            default=shape["head_dim"] - shape["qk_nope_head_dim"])
    for k, v in shape.items():
        shape[k] = _whole(f"per_layer_config.{k}", v)
    if shape["num_key_value_heads"] != shape["num_attention_heads"]:
        raise InputError(N_("MLA decompresses keys and values for every head: kv_heads must equal heads"))
    if shape["head_dim"] != shape["qk_nope_head_dim"] + shape["qk_rope_head_dim"]:
        raise InputError(N_("dots3_note_text: the sliding layers' head_dim ({hd}) must equal qk_nope_head_dim + "
                            "qk_rope_head_dim ({n})"), hd=shape["head_dim"],
                         n=shape["qk_nope_head_dim"] + shape["qk_rope_head_dim"])
    return dict(sliding_heads=shape["num_attention_heads"], sliding_q_lora_rank=shape["q_lora_rank"],
                sliding_kv_lora_rank=shape["kv_lora_rank"], sliding_nope_head_dim=shape["qk_nope_head_dim"],
                sliding_rope_head_dim=shape["qk_rope_head_dim"], sliding_v_head_dim=shape["v_head_dim"])


def _indexer_layers(r: _Read, layers: int) -> str:
    """One letter per layer: I runs its own indexer, F reuses the top-k of the last layer that did. DeepSeek-V3.2:
    every layer. GLM-5 (``glm_moe_dsa``): ``indexer_types`` ("full" / "shared"), else ``index_topk_pattern`` (F / S
    letters or a list), else every ``index_topk_freq``-th layer from ``index_skip_topk_offset`` (as GlmMoeDsaConfig
    derives it)."""
    if r.family not in ("glm_moe_dsa", "mistral_large4_text"):
        return "I" * layers
    return "".join("I" if t == "full" else "F" for t in _indexer_types(r, layers))


def _indexer_types(r: _Read, layers: int, *, first_full: bool = True) -> list[str]:
    """GLM-5's per-layer indexer types, "full" or "shared", as GlmMoeDsaConfig derives them (GLM-5-Next's and Mistral
    Large 4's classes alike): ``indexer_types``, else ``index_topk_pattern``, else the freq / offset schedule.
    ``first_full``: the first layer must run its own (GLM-5-Next's first layers may have no attention)."""
    types = r.get("indexer_types")
    if types is not None:
        for key in ("index_topk_pattern", "index_topk_freq", "index_skip_topk_offset"):
            r.get(key)  # read, unused: indexer_types wins
    else:
        pattern = r.get("index_topk_pattern")
        if pattern is not None:
            if isinstance(pattern, str) and not set(pattern) - {"F", "S"}:
                types = ["full" if x == "F" else "shared" for x in pattern]
            else:
                types = pattern
        else:
            freq = max(r.whole("index_topk_freq", default=1), 1)
            offset = r.whole("index_skip_topk_offset", minimum=0, default=2)
            types = ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(layers)]
    if (not isinstance(types, list) or len(types) != layers or set(types) - {"full", "shared"}
            or first_full and types[0] != "full"):
        raise InputError(N_("{family}: the indexer types must list 'full' or 'shared' for each of the {layers} "
                            "layers, the first 'full'"), family=r.family, layers=layers)
    return types


def _read_seed_oss(r: _Read) -> dict:
    """Seed-OSS: Llama's block with q/k/v biases (``attention_bias``, on by default) and o_proj's own switch
    (``attention_out_bias``)."""
    c = _common(r)
    c.update(qkv_bias=r.flag("attention_bias", True), o_bias=r.flag("attention_out_bias"), mlp_bias=r.flag("mlp_bias"))
    return c


def _read_ernie4_5(r: _Read) -> dict:
    """ERNIE 4.5 (dense): Llama's block, ``use_bias`` on every linear of attention and MLP, the head tied by
    default."""
    c = _common(r)
    b = r.flag("use_bias")
    c.update(qkv_bias=b, o_bias=b, mlp_bias=b)
    return c


def _read_glm(r: _Read) -> dict:
    """GLM-4 (``glm``) and GLM-4-0414 (``glm4``): q/k/v biases (``attention_bias``), one stored gate|up matrix;
    ``glm4`` adds a norm after attention and after the MLP (four per layer)."""
    c = _common(r)
    c.update(qkv_bias=r.flag("attention_bias", True), fused_gate_up=True)
    if r.family == "glm4":
        c["norms_per_layer"] = 4
    return c


def _read_muse_glimmer_text(r: _Read) -> dict:
    """Muse Glimmer's decoder (Meta): Gemma 2's sandwich block (four weighted norms a layer) with Afmoe's attention —
    a sigmoid gate per element on the output, parameter-free q/k norms, biases with ``attention_bias`` — sliding
    layers but every fourth counted back from the last (``layer_types``), those NoPE (``layer_rope_theta``: element-wise
    work only); an embedding norm without weight."""
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, norms_per_layer=4, qk_norm="l2", attn_gate="element")
    layers, w = c["layers"], r.opt_whole("sliding_window", minimum=0)
    default = ["full_attention" if (layers - 1 - i) % 4 == 0 else "sliding_attention" for i in range(layers)]
    r.get("layer_rope_theta")  # (read: which layers rotate changes no count)
    _explicit_or(r, c, default if w else None, w)
    return c


def _read_muse_spark_text(r: _Read) -> dict:
    """Muse Spark's decoder (Meta): Muse Glimmer's attention (and a parameter-free norm on its output) in a block whose
    post-attention norm has no weight (three weighted norms a layer) and whose two residual adds each have a learned
    gate per channel; dense layers or, by ``mlp_layer_types`` (all by default), a latent mixture — the hidden state
    projected to ``moe_hidden_size`` and normed, routed experts at that width with a normed output, projected back —
    routed in fp32 with a score-correction buffer."""
    c = _read_muse_glimmer_text(r)
    layers, fe = c["layers"], r.whole("moe_intermediate_size")
    types = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    c.update(norms_per_layer=3, residual_gates=True, experts=r.whole("num_local_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fe, expert_hidden=r.whole("moe_hidden_size"),
             latent_norms=True, router_score_bias=True, moe_layers="".join(types) if types else "M" * layers)
    return c


def _read_glm_ocr_text(r: _Read) -> dict:
    """GLM-OCR's decoder: GLM-4.1V's (GLM-4-0414's block: one gate|up matrix, four norms a layer, M-RoPE) with no q/k/v
    bias; the layer after the last its checkpoint stores (multi-token prediction) is not loaded by transformers and
    not counted."""
    c = _common(r)
    c.update(fused_gate_up=True, norms_per_layer=4)
    r.notes.append(Text(N_("glm_ocr_text: the layer its checkpoint stores after the last (multi-token prediction) is not "
                           "loaded by transformers: not counted")))
    return c


def _read_ministral3(r: _Read) -> dict:
    """Ministral 3 (the decoder of Mistral 3): Mistral's block (every layer sliding when ``sliding_window`` is set;
    no window by default), attention scaled by position (element-wise)."""
    c = _common(r)
    _sliding_all(r, c)
    return c


def _read_apertus(r: _Read) -> dict:
    """Apertus: an MLP of up_proj, xIELU and down_proj (no gate; xIELU's two learned scalars per layer), qk-norm
    on head_dim."""
    return _biased(r, mlp="plain", qk_norm="head", activation_params=2 if r.get("hidden_act") == "xielu" else 0)


def _read_apertus1p5_text(r: _Read) -> dict:
    """Apertus 1.5's decoder: Apertus's block over a vocabulary extended with image and audio codes, its LM head pruned
    to the first ``output_vocab_size`` rows (the text ones) where that is set."""
    c = _read_apertus(r)
    out = r.opt_whole("output_vocab_size", minimum=1)
    if out and out != c["vocab"]:
        c["output_vocab"] = out
    return c


def _read_minimax_m2(r: _Read) -> dict:
    """MiniMax-M2: Mixtral's sparse block (every layer a MoE of ``num_local_experts``, sigmoid routing with a
    score-correction buffer), qk-norm over the whole q and k projections, no sliding window."""
    c = _common(r)
    c.update(qk_norm="width", experts=r.whole("num_local_experts"), experts_per_token=r.whole("num_experts_per_tok"),
             router_score_bias=True)
    return c


def _switches(key: str, v, layers: int, on: str, off: str) -> list[str]:
    """A per-layer list of switches (0 / 1 or false / true, as MiniMax's remote code writes them) as letters."""
    if not isinstance(v, list) or not all(isinstance(x, int) and x in (0, 1) for x in v):
        raise InputError(N_("config.json field {key!r} must be a list of 0 / 1 switches, one per layer"), key=key)
    if len(v) != layers:
        raise InputError(N_("{key} lists {n} layers but num_hidden_layers is {layers}"), key=key, n=len(v),
                         layers=layers)
    return [on if x else off for x in v]


_M3_SPARSE_KEYS = {"index_n_heads": "sparse_num_index_heads", "index_head_dim": "sparse_index_dim",
                   "index_block_size": "sparse_block_size", "index_topk_blocks": "sparse_topk_blocks",
                   "index_local_blocks": "sparse_local_block"}


def _read_minimax_m3_vl_text(r: _Read) -> dict:
    """MiniMax-M3: GQA with a Gemma-style q/k norm per head and partial rotary; full layers and block-sparse ones
    (``minimax_m3_sparse``: a lightning indexer keeping ``index_topk_blocks`` blocks of ``index_block_size`` keys per
    query, its key cached); routed experts of ``intermediate_size`` (sigmoid scores, a correction buffer) beside a
    shared expert, or a dense MLP of ``dense_intermediate_size`` (``mlp_layer_types``); every MLP's gate and up in one
    matrix (SwiGLU-OAI). The remote code's ``sparse_attention_config`` and ``moe_layer_freq`` are read as
    MiniMaxM3VLTextConfig reads them (a ``sparse_attention_config`` value wins over the flat key)."""
    c = _common(r, ffn_key="dense_intermediate_size")
    layers = c["layers"]
    sparse = r.get("sparse_attention_config")
    sparse = {} if sparse is None else sparse
    if not isinstance(sparse, dict):
        raise InputError(N_("config.json field {key!r} must be an object"), key="sparse_attention_config")

    def index(key: str, minimum: int = 1) -> int:
        legacy = _M3_SPARSE_KEYS[key]
        if legacy in sparse:
            return _whole(f"sparse_attention_config.{legacy}", sparse[legacy], minimum=minimum)
        return r.whole(key, minimum=minimum)

    types = _type_list(r, "layer_types", {"full_attention": "F", "minimax_m3_sparse": "I"}, layers)
    if types is None and "sparse_attention_freq" in sparse:
        types = _switches("sparse_attention_config.sparse_attention_freq", sparse["sparse_attention_freq"], layers,
                          "I", "F")
    mlp = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    freq = r.get("moe_layer_freq")
    if mlp is None and freq is not None:
        mlp = _switches("moe_layer_freq", freq, layers, "M", "D")
    c.update(qk_norm="head", fused_gate_up=True, experts=r.whole("num_local_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=r.whole("intermediate_size"),
             shared_expert_ffn=r.whole("shared_intermediate_size"), router_score_bias=True,
             moe_layers="".join(mlp or ["M"] * layers), layer_types="".join(types or ["F"] * layers))
    if "I" in c["layer_types"]:
        c.update(index_heads=index("index_n_heads"), index_head_dim=index("index_head_dim"),
                 index_block=index("index_block_size"), index_topk=index("index_topk_blocks"))
        if index("index_local_blocks", minimum=0) == 0:
            r.notes.append(Text(N_("index_local_blocks 0: a query's own block is not always kept; its keys are "
                                   "counted as if it were")))
    else:
        for key in _M3_SPARSE_KEYS:
            r.get(key)  # read, unused: no layer is block-sparse
    return c


def _read_mllama_text_model(r: _Read) -> dict:
    """Llama 3.2 Vision's decoder: Llama's self-attention layers (head dim hidden / heads, no biases) and, at
    ``cross_attention_layers``, layers that attend to an image's vision tokens (q/k norms per head, tanh gates on the
    attention and on their own MLP): skipped on text, so counted in the parameters and run on no text token (X in
    the layer pattern). The embedding holds 8 rows more than the vocabulary (the image tokens), the LM head
    ``vocab_size``."""
    c = _common(r, head_dim_key=False)
    layers, vocab = c["layers"], c["vocab"]
    cross = r.ints("cross_attention_layers")
    if any(not 0 <= i < layers for i in cross):
        raise InputError(N_("cross_attention_layers holds a layer outside 0 … {last}"), last=layers - 1)
    if len(set(cross)) == layers:
        raise InputError(N_("every layer is a cross-attention layer: nothing runs on text"))
    c.update(vocab=vocab + 8, output_vocab=vocab,
             layer_types="".join("X" if i in cross else "F" for i in range(layers)),
             moe_layers="".join("-" if i in cross else "D" for i in range(layers)))
    if cross:
        r.notes.append(Text(N_("{n} cross-attention layers attend to an image's vision tokens: their weights are "
                               "counted; transformers skips them on a text prompt, so they add no work and no cache "
                               "here (the work an image adds is not counted)"), n=len(set(cross))))
    return c


def _read_hunyuan_v1_dense(r: _Read) -> dict:
    """Hunyuan dense: Llama's block with qk-norm on head_dim; ``attention_bias`` on all four projections, no MLP
    biases."""
    return _biased(r, qk_norm="head")


def _read_arcee(r: _Read) -> dict:
    """Arcee (AFM): Llama's attention, an MLP of up_proj, ReLU² and down_proj (no gate)."""
    return _biased(r, mlp="plain", mlp_bias=r.flag("mlp_bias"))


def _read_flex_olmo(r: _Read) -> dict:
    """FlexOlmo: OLMoE's mixture with OLMo 2's norms (over the whole q and k projections; after attention and after
    the MLP)."""
    return _biased(r, qk_norm="width", experts=r.whole("num_experts"), experts_per_token=r.whole("num_experts_per_tok"))


def _read_dots1(r: _Read) -> dict:
    """dots.llm1: Qwen 3's attention (qk-norm on head_dim; sliding layers by ``layer_types``, else from
    ``max_window_layers`` on) and DeepSeek-V3's mixture (shared experts, dense first layers, a score-correction
    buffer)."""
    c = _common(r)
    ab = r.flag("attention_bias")
    fm = r.whole("moe_intermediate_size")
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="head", experts=r.whole("n_routed_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("n_shared_experts", minimum=0, default=0) * fm, router_score_bias=True,
             moe_layers=moe_pattern(c["layers"], first_dense=r.whole("first_k_dense_replace", minimum=0, default=0)))
    w = r.opt_whole("sliding_window", minimum=0)
    mwl = r.opt_whole("max_window_layers")
    default = ["sliding_attention" if w and i >= (mwl or 0) else "full_attention" for i in range(c["layers"])]
    _explicit_or(r, c, default, w)
    return c


# ----- hybrid families: linear attention and state-space mixers (gemmlib.llm.ssm) ----------------------------

def _type_list(r: _Read, key: str, allowed: dict[str, str], layers: int | None) -> list[str] | None:
    """A per-layer list of block kinds (``layer_types`` / ``layers_block_type``), checked against ``allowed``."""
    v = r.get(key)
    return None if v is None else _kinds_of(r, key, v, allowed, layers)


def _kinds_of(r: _Read, key: str, v, allowed: dict[str, str], layers: int | None) -> list[str]:
    """``v``, the list of block kinds under ``key``, one letter each (from ``allowed``), checked as transformers'
    config classes check it: strings only, one per layer, each a kind the family builds."""
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v) or not v:
        raise InputError(N_("config.json field {key!r} must be a list of strings"), key=key)
    _whole("layers", len(v))
    if layers is not None and len(v) != layers:
        raise InputError(N_("{key} lists {n} layers but num_hidden_layers is {layers}"), key=key, n=len(v),
                         layers=layers)
    bad = sorted(set(v) - set(allowed))
    if bad:
        raise InputError(N_("{key} holds {kind!r}: {family} layers are {choices}"), key=key, kind=bad[0][:40],
                         family=r.family, choices=", ".join(allowed))
    return [allowed[x] for x in v]


def _read_qwen3_next(r: _Read) -> dict:
    """Qwen3-Next: Gated DeltaNet layers (``linear_attention``) and gated full attention every
    ``full_attention_interval``-th layer, every layer a MoE with a gated shared expert."""
    c = _common(r)
    _deltanet_layout(r, c)
    _qwen_next_moe(r, c)
    return c


def _deltanet_layout(r: _Read, c: dict, *, indexed: bool = False) -> None:
    """The layer kinds (``layer_types``, else every ``full_attention_interval``-th layer full) and the Gated
    DeltaNet mixer of Qwen3-Next, Qwen3.5 and Qwen4-Exp; their attention is gated, with qk-norm on head_dim
    (``indexed``: Qwen4-Exp's attention layers are QSA-indexed, I, whichever name they go by)."""
    layers, att = c["layers"], "I" if indexed else "F"
    allowed = {"linear_attention": "L", "full_attention": att, **({"indexed_attention": "I"} if indexed else {})}
    kinds = _type_list(r, "layer_types", allowed, layers)
    if kinds is None:
        interval = r.whole("full_attention_interval", default=4)
        kinds = ["L" if (i + 1) % interval else att for i in range(layers)]
    else:
        r.get("full_attention_interval")  # read, unused: layer_types wins
    ab = r.flag("attention_bias")
    mixer = Mixer("gated_deltanet", conv=r.whole("linear_conv_kernel_dim"), heads=r.whole("linear_num_value_heads"),
                  head_dim=r.whole("linear_value_head_dim"), groups=r.whole("linear_num_key_heads"),
                  key_dim=r.whole("linear_key_head_dim"), split_proj=r.family != "qwen3_next")
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="head", attn_output_gate=True, mixer=mixer, layer_types="".join(kinds))


def _qwen_next_moe(r: _Read, c: dict) -> None:
    c.update(experts=r.whole("num_experts"), experts_per_token=r.whole("num_experts_per_tok"),
             expert_ffn=r.whole("moe_intermediate_size"),
             shared_expert_ffn=r.whole("shared_expert_intermediate_size", minimum=0))
    c["shared_expert_gate"] = c["shared_expert_ffn"] > 0
    if r.family == "qwen3_next":
        c["moe_layers"] = _qwen_moe_layers(r, c)


def _read_qwen3_5(r: _Read) -> dict:
    """Qwen3.5 (``qwen3_5_text``: dense MLPs) and Qwen3.5-MoE (``qwen3_5_moe_text``: every layer a MoE with a
    gated shared expert, no dense MLP width): Qwen3-Next's layout with the DeltaNet's input projections stored
    apart (q|k|v, z, b, a)."""
    # Qwen3.5-MoE has no intermediate_size: every layer is a mixture, so the dense width is never used
    c = _common(r, ffn_key="intermediate_size" if r.family == "qwen3_5_text" else "moe_intermediate_size")
    _deltanet_layout(r, c)
    if r.family == "qwen3_5_moe_text":
        _qwen_next_moe(r, c)
    return c


def _is_prime(n: int) -> bool:
    """Miller–Rabin with the first twelve prime bases: exact for every n below 3.3 · 10²⁴."""
    if n < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    if n in small:
        return True
    if any(n % p == 0 for p in small):
        return False
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in small:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _ngram_rows(layers: int, heads: int, base: int, multiple: int) -> int:
    """Rows of Qwen4-Exp's n-gram tables, every PLE layer together: head t of the j-th PLE layer hashes into a table
    of the (j · heads + t + 1)-th prime from ``base`` on, and each layer's tables together are padded to a multiple of
    ``multiple`` rows (Qwen4ExpTextNGramEmbedding)."""
    total, p = 0, base - 1
    for _ in range(layers):
        rows = 0
        for _ in range(heads):
            p += 1
            while not _is_prime(p):
                p += 1
            rows += p
        total += -(-rows // multiple) * multiple
    return total


def _read_qwen4_exp_text(r: _Read) -> dict:
    """Qwen4-Exp: Qwen3.5-MoE's Gated DeltaNet layers and gated attention, the attention layers with a QSA indexer
    (``indexer_*``: the mean of each complete block of ``indexer_compress_ratio`` keys scored, ``indexer_budget``
    tokens of complete blocks kept per query beside the incomplete block's); the residual as ``hc_count`` streams
    through gated hyper-connections of rank ``hc_lowrank`` (their grouped norms are the layers' input norms and the
    final norm); hashed n-gram embeddings (PLE) in the ``ple_layer_ids`` layers (one-indexed, DeltaNet layers only)."""
    c = _common(r, ffn_key="moe_intermediate_size")
    layers, h = c["layers"], c["hidden"]
    _deltanet_layout(r, c, indexed=True)
    kinds = c["layer_types"]
    _qwen_next_moe(r, c)
    gate = r.get("output_gate_type")
    if gate is not None and gate not in ("sigmoid", "silu"):
        raise InputError(N_("qwen4_exp_text: output_gate_type must be sigmoid or silu, got {v!r}"), v=str(gate)[:40])
    if "I" in kinds:
        keys = ("indexer_n_heads", "indexer_kv_heads", "indexer_head_dim", "indexer_budget", "indexer_compress_ratio")
        if any(r.get(k) is None for k in keys):
            raise InputError(N_("qwen4_exp_text: every attention layer has a QSA indexer, so config.json needs {keys}"),
                             keys=", ".join(keys))
        if r.whole("indexer_kv_heads") != 1:
            raise InputError(N_("qwen4_exp_text: QSA's indexer has one key head (indexer_kv_heads 1)"))
        ratio, budget = r.whole("indexer_compress_ratio"), r.whole("indexer_budget")
        if budget % ratio:
            raise InputError(N_("qwen4_exp_text: indexer_budget ({budget}) must be a multiple of indexer_compress_ratio "
                                "({ratio})"), budget=budget, ratio=ratio)
        c.update(index_heads=r.whole("indexer_n_heads"), index_head_dim=r.whole("indexer_head_dim"),
                 index_block=ratio, index_topk=budget // ratio, index_mean_pool=True)
        rope = r.get("rope_parameters")  # the indexer's keys carry the attention's rotary dims (the class checks it)
        factor = rope.get("partial_rotary_factor", 1.0) if isinstance(rope, dict) else 1.0
        if isinstance(factor, (int, float)) and int(c["head_dim"] * factor) > c["index_head_dim"]:
            raise InputError(N_("qwen4_exp_text: the attention's {n} rotary dims must fit the QSA index head "
                                "(indexer_head_dim {d})"), n=int(c["head_dim"] * factor), d=c["index_head_dim"])
    c.update(hyper_streams=r.whole("hc_count", minimum=2), hyper_gate_rank=r.whole("hc_lowrank"), hyper_mix=False)
    ple = r.get("ple_layer_ids") or []
    if not isinstance(ple, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in ple):
        raise InputError(N_("config.json field {key!r} must be a list of layer numbers"), key="ple_layer_ids")
    ple = sorted(set(ple))
    if ple:
        if ple[0] < 1 or ple[-1] > layers:
            raise InputError(N_("qwen4_exp_text: ple_layer_ids are one-indexed layers 1 … {layers}"), layers=layers)
        if any(kinds[i - 1] != "L" for i in ple):
            raise InputError(N_("qwen4_exp_text: n-gram embeddings (ple_layer_ids) sit in linear-attention layers only"))
        order, heads = r.whole("ngram_size", minimum=2), r.whole("heads_per_ngram")
        dim = r.opt_whole("ple_embed_dim", minimum=1) or h
        if dim % ((order - 1) * heads):
            raise InputError(N_("qwen4_exp_text: ple_embed_dim ({dim}) must be divisible by the {n} n-gram heads"),
                             dim=dim, n=(order - 1) * heads)
        rows = _ngram_rows(len(ple), (order - 1) * heads, r.whole("ngram_vocab_size_base", minimum=2),
                           r.whole("make_ngram_vocab_size_divisible_by"))
        c.update(ngram_layers="".join("N" if i + 1 in ple else "-" for i in range(layers)), ngram_dim=dim,
                 ngram_order=order, ngram_heads=heads, ngram_rows=rows, ngram_conv=r.whole("ple_conv_kernel_size"))
    else:
        for k in ("ple_embed_dim", "ple_conv_kernel_size", "ngram_size", "heads_per_ngram", "ngram_vocab_size_base",
                  "make_ngram_vocab_size_divisible_by"):
            r.get(k)  # read, unused: no layer has n-gram embeddings
    return c


def _read_olmo_hybrid(r: _Read) -> dict:
    """OLMo Hybrid: Gated DeltaNet layers (q, k, v, g, a, b and o stored apart; Qwen3.5's work) beside OLMo 3's
    attention (q and k RMS-normed over their whole width, no output gate) every fourth layer by default, a dense
    SwiGLU MLP in every layer. Positions are rotary unless ``rope_theta`` is null (the released checkpoint: NoPE)."""
    c = _common(r)
    layers, h = c["layers"], c["hidden"]
    kinds = _type_list(r, "layer_types", {"linear_attention": "L", "full_attention": "F"}, layers)
    if kinds is None:  # the config class's default: every fourth layer full, the last one at least
        kinds = ["F" if i % 4 == 3 else "L" for i in range(layers)]
        if "F" not in kinds:
            kinds[-1] = "F"
    if "L" not in kinds or "F" not in kinds:
        raise InputError(N_("olmo_hybrid: layer_types needs at least one linear_attention and one full_attention "
                            "layer (its config class refuses it otherwise)"))
    key_heads = r.opt_whole("linear_num_key_heads", minimum=1) or c["heads"]
    key_dim = r.opt_whole("linear_key_head_dim", minimum=1) or int(0.75 * h / key_heads)
    mixer = Mixer("gated_deltanet", conv=r.whole("linear_conv_kernel_dim"),
                  heads=r.opt_whole("linear_num_value_heads", minimum=1) or c["heads"],
                  head_dim=r.opt_whole("linear_value_head_dim", minimum=1) or 2 * key_dim, groups=key_heads,
                  key_dim=key_dim, split_proj=True, qkv_apart=True)
    rope = r.raw.get("rope_parameters")
    theta = rope.get("rope_theta", 0) if isinstance(rope, dict) else r.raw.get("rope_theta", 0)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="width", mixer=mixer, layer_types="".join(kinds),
             no_positions=theta is None)
    return c


def _read_recurrent_gemma(r: _Read) -> dict:
    """RecurrentGemma (Griffin): ``block_types`` repeated over the layers — recurrent blocks (RG-LRU, see
    gemmlib.llm.ssm.RGLRU) and local attention over ``attention_window_size`` keys (multi-query by default, o_proj
    always biased) — each followed by a gated GELU MLP of intermediate_size / 2, biased. head_dim is always hidden /
    heads (the config class sets it)."""
    c = _common(r, head_dim_key=False)
    r.get("head_dim")  # read, unused: the config class overwrites it with hidden_size // num_attention_heads
    layers, h = c["layers"], c["hidden"]
    blocks = r.get("block_types")
    if not isinstance(blocks, list) or not blocks or any(b not in ("recurrent", "attention") for b in blocks):
        raise InputError(N_("recurrent_gemma: block_types must be a list of 'recurrent' and 'attention', got {v!r}"),
                         v=str(blocks)[:80])
    kinds = "".join("R" if b == "recurrent" else "S" for b in (blocks * layers)[:layers])
    width = r.opt_whole("lru_width", minimum=1) or h
    mixer = RGLRU(conv=r.whole("conv1d_width"), inner=width, heads=c["heads"])
    c.update(ffn=r.whole("intermediate_size", minimum=2) // 2, mlp_bias=True, qkv_bias=r.flag("attention_bias"),
             o_bias=True, sliding_window=r.whole("attention_window_size"), layer_types=kinds,
             mixer=mixer if "R" in kinds else None)
    return c


def _mamba2_of(r: _Read, h: int, family: str) -> Mixer:
    """The Mamba-2 mixer of Bamba's layout (``mamba_*`` keys): heads × head dim must be ``mamba_expand`` × hidden."""
    inner = r.whole("mamba_expand") * h
    heads = r.whole("mamba_n_heads")
    hd = r.get("mamba_d_head")
    hd = inner // heads if hd in (None, "auto") else _whole("mamba_d_head", hd)
    if hd * heads != inner:
        raise InputError(N_("{family}: mamba_n_heads × mamba_d_head ({n} × {d}) must equal mamba_expand × hidden_size "
                            "({w})"), family=family, n=heads, d=hd, w=inner)
    b = r.flag("mamba_proj_bias")
    return Mixer("mamba2", conv=r.whole("mamba_d_conv"), heads=heads, head_dim=hd, groups=r.whole("mamba_n_groups"),
                 state=r.whole("mamba_d_state"), chunk=r.whole("mamba_chunk_size"),
                 conv_bias=r.flag("mamba_conv_bias", True), in_bias=b, out_bias=b)


def _read_bamba(r: _Read) -> dict:
    """Bamba: Mamba-2 layers (gated norm, the SSD scan) and attention layers at ``attn_layer_indices`` (none: every
    layer Mamba-2), a SwiGLU MLP in every layer (``mlp_bias``), ``attention_bias`` on all four projections."""
    c = _common(r)
    layers = c["layers"]
    idx = set(r.ints("attn_layer_indices"))
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, mlp_bias=r.flag("mlp_bias"), mixer=_mamba2_of(r, c["hidden"], "bamba"),
             layer_types="".join("F" if i in idx else "2" for i in range(layers)))
    return c


def _read_granitemoehybrid(r: _Read) -> dict:
    """Granite 4.0 (``granitemoehybrid``): Mamba-2 layers (Bamba's mixer) and attention layers by ``layer_types``
    (every layer Mamba-2 by default), no positional encoding unless ``position_embedding_type`` is ``rope``; every
    layer a shared gated MLP (``shared_intermediate_size``), beside a mixture of ``num_local_experts`` experts when
    there are any."""
    c = _common(r)
    layers, h = c["layers"], c["hidden"]
    kinds = _type_list(r, "layer_types", {"linear_attention": "2", "mamba": "2", "full_attention": "F",
                                          "attention": "F"}, layers) or ["2"] * layers
    mixer = _mamba2_of(r, h, "granitemoehybrid")
    ab = r.flag("attention_bias")
    shared = r.whole("shared_intermediate_size")
    c.update(qkv_bias=ab, o_bias=ab, mixer=mixer, layer_types="".join(kinds),
             no_positions=r.get("position_embedding_type") != "rope")
    experts = r.whole("num_local_experts", minimum=0)
    if experts:
        c.update(experts=experts, experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=c["ffn"],
                 shared_expert_ffn=shared, fused_gate_up=True)
    else:  # dense: the shared MLP is the layer's MLP (input_linear is gate|up in one matrix)
        r.get("num_experts_per_tok")  # read, unused without experts
        c.update(ffn=shared, fused_gate_up=True)
    return c


def _read_jamba(r: _Read) -> dict:
    """Jamba: attention every ``attn_layer_period``-th layer (from ``attn_layer_offset``), Mamba elsewhere; MoE
    every ``expert_layer_period``-th layer (from ``expert_layer_offset``)."""
    c = _common(r, head_dim_key=False)
    layers, h = c["layers"], c["hidden"]
    ap, ao = r.whole("attn_layer_period"), r.whole("attn_layer_offset", minimum=0)
    ep, eo = r.whole("expert_layer_period"), r.whole("expert_layer_offset", minimum=0)
    if ao >= ap or eo >= ep:
        raise InputError(N_("jamba: a layer offset must be smaller than its period (attention {ao} of {ap}, experts "
                            "{eo} of {ep})"), ao=ao, ap=ap, eo=eo, ep=ep)
    rank = r.get("mamba_dt_rank")
    rank = -(-h // 16) if rank in (None, "auto") else _whole("mamba_dt_rank", rank)
    b = r.flag("mamba_proj_bias")
    mixer = Mixer("mamba", conv=r.whole("mamba_d_conv"), inner=r.whole("mamba_expand") * h,
                  state=r.whole("mamba_d_state"), dt_rank=rank, conv_bias=r.flag("mamba_conv_bias", True),
                  in_bias=b, out_bias=b, norm=False, bc_norms=True)
    experts = r.whole("num_experts")
    c.update(mixer=mixer, layer_types="".join("F" if i % ap == ao else "M" for i in range(layers)),
             tied_embeddings=r.flag("tie_word_embeddings"), no_positions=True)
    if experts > 1:
        c.update(experts=experts, experts_per_token=r.whole("num_experts_per_tok"), fused_gate_up=False,
                 moe_layers="".join("M" if i % ep == eo else "D" for i in range(layers)))
    return c


_NEMOTRON_TYPES = {"mamba": "2", "linear_attention": "2", "attention": "F", "full_attention": "F", "mlp": "D",
                   "moe": "E"}
_NEMOTRON_LETTERS = {"M": "2", "*": "F", "-": "D", "E": "E"}


def _untied(r: _Read, family: str) -> bool:
    """False: a class that never ties its head (no tied weights), whatever tie_word_embeddings says (noted if true)."""
    if r.flag("tie_word_embeddings", False):
        r.notes.append(Text(N_("tie_word_embeddings is true, but transformers' {family} class never ties the LM head to "
                               "the embedding: both counted"), family=family))
    return False


def _read_nemotron_h(r: _Read) -> dict:
    """Nemotron-H: one mixer per block — Mamba-2 (``M``), attention (``*``), an MLP (``-``) or a MoE (``E``) —
    from ``layers_block_type`` (or the older ``hybrid_override_pattern``), one norm per block."""
    kinds = _type_list(r, "layers_block_type", _NEMOTRON_TYPES, None)
    if kinds is None:
        pat = r.get("hybrid_override_pattern")
        if pat is not None:
            if not isinstance(pat, str) or not pat or set(pat) - set(_NEMOTRON_LETTERS):
                raise InputError(N_("config.json field 'hybrid_override_pattern' must be letters M, *, - and E"))
            _whole("layers", len(pat))
            kinds = [_NEMOTRON_LETTERS[x] for x in pat]
        else:
            kinds = ["2", "E", "F", "D"]  # NemotronHConfig's default layers_block_type
    r.get("num_hidden_layers")  # deprecated: the block list decides
    layers = len(kinds)
    heads = r.whole("num_attention_heads")
    h = r.whole("hidden_size")
    mixer = Mixer("mamba2", conv=r.whole("conv_kernel"), heads=r.whole("mamba_num_heads"),
                  head_dim=r.whole("mamba_head_dim"), groups=r.whole("n_groups"), state=r.whole("ssm_state_size"),
                  chunk=r.whole("chunk_size"), conv_bias=r.flag("use_conv_bias", True), in_bias=r.flag("use_bias"),
                  out_bias=r.flag("use_bias"))
    c = dict(hidden=h, layers=layers, heads=heads, kv_heads=r.opt_whole("num_key_value_heads", minimum=1) or heads,
             head_dim=r.whole("head_dim"), ffn=r.whole("intermediate_size"), vocab=r.whole("vocab_size"), mlp="plain",
             mlp_bias=r.flag("mlp_bias"), norms_per_layer=1, mixer=mixer, tied_embeddings=_untied(r, "nemotron_h"),
             max_positions=r.opt_whole("max_position_embeddings") or 0, no_positions=True,
             layer_types="".join(k if k in "2F" else "-" for k in kinds))
    if "E" in kinds:
        c.update(expert_hidden=r.opt_whole("moe_latent_size") or 0,  # Nemotron 3's latent experts
                 experts=r.whole("n_routed_experts"), experts_per_token=r.whole("num_experts_per_tok"),
                 expert_ffn=r.whole("moe_intermediate_size"),
                 shared_expert_ffn=r.whole("moe_shared_expert_intermediate_size", minimum=0), router_score_bias=True,
                 moe_layers="".join("M" if k == "E" else "D" if k == "D" else "-" for k in kinds))
    else:
        c["moe_layers"] = "".join("D" if k == "D" else "-" for k in kinds)
    return c


def _pure_ssm(r: _Read, mixer: Mixer, letter: str) -> dict:
    """A state-space model with no attention and no MLP: each block a norm and a mixer (Mamba, Falcon Mamba,
    Mamba-2). The attention fields of the ModelConfig are unused; they are set to the mixer's heads so that every
    check about them holds."""
    layers, h = r.whole("num_hidden_layers"), r.whole("hidden_size")
    heads = mixer.heads or 1
    return dict(hidden=h, layers=layers, heads=heads, kv_heads=heads, head_dim=mixer.head_dim or h // heads or 1,
                ffn=1, vocab=r.whole("vocab_size"), norms_per_layer=1, mixer=mixer, no_positions=True,
                tied_embeddings=r.flag("tie_word_embeddings", True), layer_types=letter * layers, moe_layers="-" * layers)


def _read_inkling_text(r: _Read) -> dict:
    """Inkling (Thinking Machines): attention whose keys and values, output and MLP output each pass a depthwise causal
    convolution with a residual (``conv_kernel_size``, fp32), q/k RMS norms per head, a relative bias per head and
    backward distance from ``d_rel`` relative states (``rel_extent`` in the full layers, the window in the sliding
    ones), sliding layers with their own heads (``swa_*``) by ``layer_types`` (hybrid / hybrid_sliding), else
    ``local_layer_ids``, else every layer but each sixth; a normed embedding; dense MLPs (``mlp_layer_types``, else
    the first ``dense_mlp_idx``) with a learned scale, else routed experts with shared experts the router also scores
    and a score-correction buffer. A checkpoint with ``dense_intermediate_size`` keeps the experts' width in
    ``intermediate_size``."""
    layers = r.whole("num_hidden_layers")
    types = r.get("layer_types")
    if types is not None:
        kinds = "".join(_kinds_of(r, "layer_types", types, {"hybrid": "F", "hybrid_sliding": "S"}, layers))
    else:
        local = r.ints("local_layer_ids")
        if r.get("local_layer_ids") is not None and any(not 0 <= i < layers for i in local):
            raise InputError(N_("config.json field 'local_layer_ids' must list layer indices below num_hidden_layers "
                                "({layers})"), layers=layers)
        local_set = set(local) if r.get("local_layer_ids") is not None else {i for i in range(layers) if (i + 1) % 6}
        kinds = "".join("S" if i in local_set else "F" for i in range(layers))
    mlp = r.get("mlp_layer_types")
    if mlp is not None:
        moe = "".join(_kinds_of(r, "mlp_layer_types", mlp, {"dense": "D", "sparse": "M"}, layers))
    else:
        moe = moe_pattern(layers, first_dense=min(layers, r.whole("dense_mlp_idx", minimum=0, default=0)))
    dense_ffn = r.opt_whole("dense_intermediate_size", minimum=1)
    fe = r.whole("intermediate_size") if dense_ffn else r.whole("moe_intermediate_size")
    shared = r.whole("n_shared_experts", minimum=0)
    extent = r.whole("rel_extent")  # the full layers' (the sliding ones' is their window)
    c = dict(_inkling_heads(r, kinds), hidden=r.whole("hidden_size"), layers=layers,
             ffn=dense_ffn or r.whole("intermediate_size"), vocab=r.whole("vocab_size"),
             tied_embeddings=False, max_positions=r.opt_whole("max_position_embeddings") or 0, qk_norm="head",
             layer_types=kinds, embedding_norm=True, short_conv=r.whole("conv_kernel_size"),
             rel_bias=r.whole("d_rel"), rel_extent=extent if "F" in kinds else 0,
             experts=r.whole("n_routed_experts"), experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fe,
             shared_expert_ffn=shared * fe, router_sinks=shared, router_score_bias=True, router_global_scale=True,
             moe_layers=moe, activation_params=1)
    mtp = r.get("num_mtp_layers")
    if mtp:
        r.notes.append(Text(N_("its checkpoint carries 1 multi-token-prediction layer that transformers does not "
                               "build: not counted") if mtp == 1 else
                            N_("its checkpoint carries {n} multi-token-prediction layers that transformers does not "
                               "build: not counted"), n=mtp))
    return c


def _inkling_heads(r: _Read, kinds: str) -> dict:
    """Inkling's and Inkling 2's attention shape: one query-head count (the sliding layers' swa_num_attention_heads
    must match), the sliding layers' KV heads and head dim as the model's, the full layers' as their own shape; the
    sliding window."""
    heads, swa_heads = r.whole("num_attention_heads"), r.whole("swa_num_attention_heads")
    if heads != swa_heads and "S" in kinds and "F" in kinds:
        raise InputError(N_("inkling: the sliding layers' {swa} heads differ from the full layers' {heads}; this "
                            "estimator sizes one query-head count per model"), swa=swa_heads, heads=heads)
    full = (r.whole("num_key_value_heads"), r.whole("head_dim"))
    swa = (r.whole("swa_num_key_value_heads"), r.whole("swa_head_dim"))
    kv, hd = swa if "S" in kinds else full
    c = dict(heads=heads if "F" in kinds else swa_heads, kv_heads=kv, head_dim=hd)
    if "S" in kinds:
        c["sliding_window"] = r.whole("sliding_window_size")
    if "S" in kinds and "F" in kinds and full != swa:
        c.update(full_kv_heads=full[0], full_head_dim=full[1] if full[1] != hd else 0)
    return c


def _read_inkling2_text(r: _Read) -> dict:
    """Inkling 2 (Thinking Machines): Inkling's short convolutions — in the full layers the keys' and values' with
    per-token taps projected from the input — and relative bias; queries and relative states scaled then L2-clipped,
    keys L2-clipped, values normed without a weight; a sink logit per head projected from each token, a sigmoid gate
    per element on the attention output; the full layers' query, key and value inputs normed apart; block attention
    residuals every ``n_layers_per_attn_res_block`` layers; every layer routed experts (no shared one, a score-correction
    buffer); the LM head's ``unpadded_vocab_size`` rows; full layers by ``layer_types``, else every sixth."""
    layers = r.whole("num_hidden_layers")
    types = r.get("layer_types")
    if types is not None:
        kinds = "".join(_kinds_of(r, "layer_types", types, {"hybrid": "F", "hybrid_sliding": "S"}, layers))
    else:
        kinds = "".join("F" if (i + 1) % 6 == 0 else "S" for i in range(layers))
    vocab, fe, extent = r.whole("vocab_size"), r.whole("moe_intermediate_size"), r.whole("rel_extent")
    out_vocab = r.whole("unpadded_vocab_size")
    if out_vocab > vocab:
        raise InputError(N_("unpadded_vocab_size {n} is larger than vocab_size {vocab}"), n=out_vocab, vocab=vocab)
    c = dict(_inkling_heads(r, kinds), hidden=r.whole("hidden_size"), layers=layers, ffn=fe, vocab=vocab,
             output_vocab=out_vocab if out_vocab < vocab else 0, tied_embeddings=False, max_positions=r.opt_whole("max_position_embeddings") or 0, layer_types=kinds,
             embedding_norm=True, short_conv=r.whole("conv_kernel_size"), rel_bias=r.whole("d_rel"),
             rel_extent=extent if "F" in kinds else 0, clip_norms=True, sink_proj=True, attn_gate="element",
             qkv_input_norms=True, dynamic_kv_conv=True, attn_res_block=r.whole("n_layers_per_attn_res_block"),
             experts=r.whole("n_routed_experts"), experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fe,
             router_score_bias=True)
    return c


def _read_inkling2_loop_text(r: _Read) -> dict:
    """Inkling-2-Mini: Inkling 2's block whose layers ``loop_layer_index_start`` to ``loop_layer_index_end`` - 1 run
    ``loop_num_passes`` times, each pass with its own cache and restarting from the state before the loop, the passes
    after the first mixing in messages of the one before through rank-``loop_gate_rank`` gates (a checkpoint's
    ``loop_config``: core_start, core_end, num_passes, gate_rank)."""
    c = _read_inkling2_text(r)
    lc = r.get("loop_config")
    if lc is not None and not isinstance(lc, dict):
        raise InputError(N_("config.json field 'loop_config' must be an object"))
    lc = lc or {}

    def loop(key: str, short: str, minimum: int = 1) -> int:
        return _whole(key, lc[short], minimum=minimum) if short in lc else r.whole(key, minimum=minimum)

    c.update(loop_start=loop("loop_layer_index_start", "core_start"), loop_end=loop("loop_layer_index_end", "core_end"),
             loop_passes=loop("loop_num_passes", "num_passes"), loop_gate_rank=loop("loop_gate_rank", "gate_rank"))
    if c["loop_passes"] == 1:
        c.update(loop_start=0, loop_end=0, loop_gate_rank=0)
    return c


def _read_cosmos3_edge_text(r: _Read) -> dict:
    """Cosmos 3 Edge's decoder (NVIDIA): Llama's attention with M-RoPE and a plain ReLU² MLP (fc1, fc2), biased with
    ``attention_bias`` / ``mlp_bias``; its checkpoints' video-generation branch (the *_moe_gen layers, the action and
    time embedders) is dropped by transformers on load and not counted (said so)."""
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, mlp="plain", mlp_bias=r.flag("mlp_bias"))
    r.notes.append(Text(N_("cosmos3_edge_text: its checkpoints' generation branch (the *_moe_gen layers, the action and "
                           "time embedders) is dropped by transformers on load: not counted")))
    return c


def _read_hrm_text(r: _Read) -> dict:
    """HRM-Text (Sapient): two stacks of ``num_layers_per_stack`` Llama layers with multi-head attention, a sigmoid gate
    per element on the attention output and parameter-free RMS norms; per high-level cycle (``H_cycles``) the low-level
    stack runs ``L_cycles`` times, then the high-level one once, each run with its own cache slot; a learned initial
    low-level state. Its config class rewrites num_hidden_layers to the runs (stack × H_cycles × (L_cycles + 1)) and
    keeps the stack's count in num_layers_per_stack; a file without it gives the stack's count as num_hidden_layers."""
    n = r.opt_whole("num_layers_per_stack") or r.whole("num_hidden_layers")
    high, low = r.whole("H_cycles"), r.whole("L_cycles")
    if r.has("num_layers_per_stack") and r.whole("num_hidden_layers") != n * high * (low + 1):
        raise InputError(N_("hrm_text: num_hidden_layers {runs} is not num_layers_per_stack × H_cycles × (L_cycles + 1) "
                            "= {expected}"), runs=r.whole("num_hidden_layers"), expected=n * high * (low + 1))
    if r.flag("attention_bias"):
        raise InputError(N_("hrm_text with attention_bias is not read: its output gate's bias is not counted here"))
    heads, h = r.whole("num_attention_heads"), r.whole("hidden_size")
    return dict(hidden=h, layers=2 * n, heads=heads, head_dim=r.opt_whole("head_dim", minimum=1) or h // heads,
                ffn=r.whole("intermediate_size"), vocab=r.whole("vocab_size"), mlp_bias=r.flag("mlp_bias"),
                tied_embeddings=r.flag("tie_word_embeddings"), max_positions=r.opt_whole("max_position_embeddings") or 0,
                norm="plain", attn_gate="element", hrm_cycles=high, hrm_low_cycles=low)


def _read_dory(r: _Read) -> dict:
    """Dory (NVIDIA): a looped normalized transformer (nGPT). Afmoe's attention — a sigmoid gate per element on the
    output, unit-norm queries and keys — and a gated MLP with learned scales, every norm a parameter-free L2 norm, the
    residual an interpolation at learned rates, a learned scale per logit; ``n_input_layers``, then
    ``n_recurrent_layers`` run ``n_recurrent_loops`` times (each loop its own cache, or with ``recurrent_kv_cache_mode``
    "last_loop" one cache the last loop writes), then ``n_output_layers``. Its released config.json lists each layer as
    an attention and an mlp block (the layer counts doubled), as the config class reads it."""
    layers = r.whole("num_hidden_layers")
    n_in, n_out = r.whole("n_input_layers", minimum=0), r.whole("n_output_layers", minimum=0)
    n_rec = r.opt_whole("n_recurrent_layers")
    types = r.get("layer_types")
    if isinstance(types, list) and "mlp" in types:  # [attention, mlp, attention, mlp, ...]: halve, as the class does
        if len(types) % 2 or any(t != "mlp" for t in types[1::2]) or layers % 2:
            raise InputError(N_("dory: a layer_types list with 'mlp' blocks must alternate attention and 'mlp' blocks "
                                "over num_hidden_layers entries"))
        types, layers, n_in, n_out = types[::2], layers // 2, n_in // 2, n_out // 2
        n_rec = None if n_rec is None else n_rec // 2
    if n_rec is None:
        n_rec = layers - n_in - n_out
    if n_rec < 1 or n_in + n_rec + n_out != layers:
        raise InputError(N_("dory: n_input_layers + n_recurrent_layers + n_output_layers must equal num_hidden_layers "
                            "({layers}), with at least one recurrent layer"), layers=layers)
    if types is None:
        types = ["full_attention" if (i + 1) % 4 == 0 else "sliding_attention" for i in range(layers)]
    kinds = "".join(_kinds_of(r, "layer_types", types, {"full_attention": "F", "sliding_attention": "S"}, layers))
    heads, h = r.whole("num_attention_heads"), r.whole("hidden_size")
    hd = r.opt_whole("head_dim", minimum=1) or h // heads
    ffn, ab = r.whole("intermediate_size"), r.flag("attention_bias")
    mode = r.get("recurrent_kv_cache_mode")
    if mode not in (None, "per_loop", "last_loop"):
        raise InputError(N_("dory: recurrent_kv_cache_mode must be 'per_loop' or 'last_loop', got {mode!r}"),
                         mode=str(mode)[:40])
    loops = r.whole("n_recurrent_loops")
    c = dict(hidden=h, layers=layers, heads=heads, kv_heads=r.opt_whole("num_key_value_heads", minimum=1) or heads,
             head_dim=hd, ffn=ffn, vocab=r.whole("vocab_size"), tied_embeddings=r.flag("tie_word_embeddings"),
             max_positions=r.opt_whole("max_position_embeddings") or 0, qkv_bias=ab, o_bias=ab,
             mlp_bias=r.flag("mlp_bias"), norm="plain", norms_per_layer=4, ffn_norm=True, qk_norm="l2",
             attn_gate="element", attn_scale_params=2 * heads * hd + 2 * h, activation_params=2 * ffn,
             logit_scale=True, layer_types=kinds)
    if "S" in kinds:
        c["sliding_window"] = r.whole("sliding_window")
    if loops > 1:
        c.update(loop_start=n_in, loop_end=n_in + n_rec, loop_passes=loops, loop_shared_cache=mode == "last_loop")
    return c


def _read_rwkv(r: _Read) -> dict:
    """RWKV-4: in every block a LayerNorm and the time mixing (gemmlib.llm.ssm.RWKV), a LayerNorm and the channel
    mixing — a ReLU² MLP of ``intermediate_size`` (4 × hidden by default) without biases, its sigmoid receptance gate
    counted with the mixer; a LayerNorm after the embedding (the first block's), one at the end, no positions, the
    head untied unless ``tie_word_embeddings``. The WKV state is sized by hidden_size in transformers, so
    attention_hidden_size must equal it."""
    layers, h = r.whole("num_hidden_layers"), r.whole("hidden_size")
    a = r.opt_whole("attention_hidden_size", minimum=1) or h
    if a != h:
        raise InputError(N_("rwkv: attention_hidden_size {a} differs from hidden_size {h}: transformers keeps the WKV "
                            "state at hidden_size and cannot run it"), a=a, h=h)
    r.get("rescale_every")  # read, unused: halving the activations every few blocks (the weights rescaled instead)
    return dict(hidden=h, layers=layers, heads=1, kv_heads=1, head_dim=h,
                ffn=r.opt_whole("intermediate_size", minimum=1) or 4 * h, mlp="plain", vocab=r.whole("vocab_size"),
                norm="layer", embedding_norm=True, mixer=RWKV(inner=a, width=h), no_positions=True,
                max_positions=r.opt_whole("context_length") or 0, tied_embeddings=r.flag("tie_word_embeddings", False),
                layer_types="W" * layers)


def _mamba_mixer(r: _Read) -> Mixer:
    """Mamba's (and Falcon Mamba's) mixer: ``intermediate_size`` channels when given (the config classes set
    expand × hidden_size, then a given width over it), a dt rank of ⌈hidden / 16⌉ unless ``time_step_rank`` says."""
    h = r.whole("hidden_size")
    rank = r.get("time_step_rank")
    rank = -(-h // 16) if rank in (None, "auto") else _whole("time_step_rank", rank)
    b = r.flag("use_bias")
    inner = r.whole("expand") * h
    given = r.opt_whole("intermediate_size")
    return Mixer("mamba", conv=r.whole("conv_kernel"), inner=given or inner, state=r.whole("state_size"),
                 dt_rank=rank, conv_bias=r.flag("use_conv_bias", True), in_bias=b, out_bias=b, norm=False)


def _read_mamba(r: _Read) -> dict:
    """Mamba: every block an RMSNorm and a Mamba mixer (in_proj, depthwise conv, x_proj, dt_proj, the selective
    scan, out_proj); no attention, no MLP; the LM head tied unless ``tie_word_embeddings`` is false."""
    return _pure_ssm(r, _mamba_mixer(r), "M")


def _read_falcon_mamba(r: _Read) -> dict:
    """Falcon Mamba: Mamba's blocks with weightless RMSNorms on dt, B and C (no parameters, no GEMM)."""
    r.get("mixer_rms_eps")  # read, unused: those norms' epsilon
    return _pure_ssm(r, _mamba_mixer(r), "M")


def _read_mamba2(r: _Read) -> dict:
    """Mamba-2: every block an RMSNorm and a Mamba-2 mixer (SSD: ``num_heads`` of ``head_dim``, ``n_groups`` of B/C
    with ``state_size`` each, a gated RMSNorm before out_proj); its width, ``expand`` × hidden_size, must be
    num_heads × head_dim (transformers' mixer reshapes one into the other)."""
    h = r.whole("hidden_size")
    heads, hd, width = r.whole("num_heads"), r.whole("head_dim"), r.whole("expand") * h
    if heads * hd != width:
        raise InputError(N_("mamba2: num_heads × head_dim ({n} × {d}) must equal expand × hidden_size ({w}): "
                            "transformers' mixer reshapes one into the other"), n=heads, d=hd, w=width)
    b = r.flag("use_bias")
    mixer = Mixer("mamba2", conv=r.whole("conv_kernel"), heads=heads, head_dim=hd, groups=r.whole("n_groups"),
                  state=r.whole("state_size"), chunk=r.whole("chunk_size"), conv_bias=r.flag("use_conv_bias", True),
                  in_bias=b, out_bias=b)
    r.get("time_step_rank")  # read, unused: Mamba-2's dt is one value per head out of in_proj
    return _pure_ssm(r, mixer, "2")


def _read_falcon_h1(r: _Read) -> dict:
    """Falcon-H1: every layer runs attention and a Mamba-2 mixer side by side on the same input, then a gated MLP."""
    c = _common(r)
    h = c["hidden"]
    d_ssm = r.get("mamba_d_ssm")
    d_ssm = r.whole("mamba_expand") * h if d_ssm is None else _whole("mamba_d_ssm", d_ssm)
    heads = r.whole("mamba_n_heads")
    hd = r.get("mamba_d_head")
    hd = d_ssm // heads if hd in (None, "auto") else _whole("mamba_d_head", hd)
    if hd * heads != d_ssm:
        raise InputError(N_("falcon_h1: mamba_n_heads × mamba_d_head ({n} × {d}) must equal the Mamba width {w}"),
                         n=heads, d=hd, w=d_ssm)
    mixer = Mixer("mamba2", conv=r.whole("mamba_d_conv"), heads=heads, head_dim=hd, groups=r.whole("mamba_n_groups"),
                  state=r.whole("mamba_d_state"), chunk=r.whole("mamba_chunk_size"),
                  conv_bias=r.flag("mamba_conv_bias", True), in_bias=r.flag("mamba_proj_bias"),
                  out_bias=r.flag("projectors_bias"), norm=r.flag("mamba_rms_norm"))
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, mlp_bias=r.flag("mlp_bias"), mixer=mixer, layer_types="P" * c["layers"])
    return c


def _read_zamba2(r: _Read) -> dict:
    """Zamba2 (Zyphra): Mamba-2 layers; in the ``hybrid`` ones (``layers_block_type``) a shared attention-and-MLP block
    runs first — ``num_mem_blocks`` of them used in turn, each stored once — on [hidden state; embedding] (2 × hidden
    wide, its heads 2 × hidden / ``num_attention_heads`` wide), its gate|up (and with ``use_shared_attention_adapter``
    its q, k and v) with a low-rank adapter of its own per layer (``adapter_rank``), its output projected hidden →
    hidden into the layer's Mamba-2 input."""
    layers, h = r.whole("num_hidden_layers"), r.whole("hidden_size")
    kinds = _type_list(r, "layers_block_type", {"linear_attention": "2", "mamba": "2", "hybrid": "P"}, layers)
    if kinds is None:
        kinds = ["2"] + (["2"] * 5 + ["P"]) * 7 + ["2"] * 4 + ["P"] + ["2"] * 3 + ["P"] + ["2"] * 2
        if len(kinds) != layers:
            raise InputError(N_("zamba2: a config of {layers} layers needs layers_block_type (the default pattern has "
                                "54)"), layers=layers)
    if "P" not in kinds:
        raise InputError(N_("zamba2: layers_block_type names no hybrid layer: its shared blocks run in those"))
    heads = r.whole("num_attention_heads")
    kv = r.opt_whole("num_key_value_heads") or heads
    if 2 * h % heads:
        raise InputError(N_("zamba2: its attention is 2 × hidden_size ({w}) wide, which {heads} heads must divide"),
                         w=2 * h, heads=heads)
    adapters = r.flag("use_shared_attention_adapter")
    if adapters and kv != heads:
        raise InputError(N_("zamba2: its q, k and v adapters add at the attention's width, so num_key_value_heads "
                            "must equal num_attention_heads"))
    n_heads, expand = r.whole("n_mamba_heads"), r.whole("mamba_expand")
    if expand * h % n_heads:
        raise InputError(N_("zamba2: mamba_expand × hidden_size must divide into n_mamba_heads heads"))
    bias = r.flag("add_bias_linear")
    if not r.flag("tie_word_embeddings", True):
        raise InputError(N_("zamba2 with tie_word_embeddings false is not read: transformers then unties its shared "
                            "blocks too, each hybrid layer holding a block of its own with every run's adapters"))
    for key in ("attention_head_dim", "attention_hidden_size", "mamba_headdim", "kv_channels", "num_query_groups",
                "hybrid_layer_ids"):
        r.get(key)  # read, unused: the config class derives them
    mixer = Mixer("mamba2", conv=r.whole("mamba_d_conv"), heads=n_heads, head_dim=expand * h // n_heads,
                  groups=r.whole("mamba_ngroups"), state=r.whole("mamba_d_state"), chunk=r.whole("chunk_size"),
                  conv_bias=True, in_bias=bias, out_bias=bias, norm=True)
    return dict(hidden=h, layers=layers, heads=heads, kv_heads=kv, head_dim=2 * h // heads,
                ffn=r.opt_whole("intermediate_size") or 4 * h, vocab=r.whole("vocab_size"),
                tied_embeddings=True, mlp_bias=bias,
                max_positions=r.opt_whole("max_position_embeddings") or 0, fused_gate_up=True, norms_per_layer=1,
                no_positions=not r.flag("use_mem_rope"), layer_types="".join(kinds),
                moe_layers="".join("D" if k == "P" else "-" for k in kinds), mixer=mixer, attn_input_width=2 * h,
                shared_blocks=r.whole("num_mem_blocks"), block_adapter_rank=r.whole("adapter_rank"),
                qkv_adapters=adapters, block_out_proj=True)


def _read_zamba(r: _Read) -> dict:
    """Zamba (Zyphra): Mamba layers — each split into ``n_mamba_heads`` heads with their own x_proj, dt_proj, A and D,
    the same counts as one Mamba mixer of the full width — and in the ``hybrid`` ones (``layers_block_type``) first
    one shared attention-and-MLP block, stored once, on [hidden state; embedding] (``attention_hidden_size``, 2 ×
    hidden by default; no positional encoding), its output projected hidden → hidden into the layer's Mamba input."""
    layers, h = r.whole("num_hidden_layers"), r.whole("hidden_size")
    kinds = _type_list(r, "layers_block_type", {"linear_attention": "M", "mamba": "M", "hybrid": "P"}, layers)
    period, offset = r.whole("attn_layer_period", default=6), r.whole("attn_layer_offset", default=4)  # (the layout
    # when layers_block_type is absent)
    if kinds is None:
        kinds = ["M", "M", "P"] + ["P" if i % period == offset else "M" for i in range(layers - 3)]
    if "P" not in kinds:
        raise InputError(N_("zamba: layers_block_type names no hybrid layer: its shared block runs in those"))
    heads = r.whole("num_attention_heads")
    width = r.opt_whole("attention_hidden_size") or 2 * h
    hd = r.opt_whole("attention_head_dim") or 2 * h // heads
    n_heads, inner = r.whole("n_mamba_heads"), r.whole("mamba_expand") * h
    if inner % n_heads:
        raise InputError(N_("zamba: mamba_expand × hidden_size must divide into n_mamba_heads heads"))
    rank = r.get("mamba_dt_rank")
    rank = -(-h // 16) if rank in (None, "auto") else _whole("mamba_dt_rank", rank)
    b = r.flag("mamba_proj_bias")
    mixer = Mixer("mamba", conv=r.whole("mamba_d_conv"), inner=inner, state=r.whole("mamba_d_state"), dt_rank=rank,
                  conv_bias=r.flag("mamba_conv_bias", True), in_bias=b, out_bias=b, norm=False)
    tied = r.flag("tie_word_embeddings", True)
    if not tied:  # transformers ties the block's copies through the tied-weights mechanism, off with the embeddings'
        r.notes.append(Text(N_("zamba: with tie_word_embeddings false transformers does not tie the shared block's "
                               "copies either: each hybrid layer holds a block of its own, counted so")))
    return dict(hidden=h, layers=layers, heads=heads, kv_heads=r.opt_whole("num_key_value_heads") or heads,
                head_dim=hd, ffn=r.whole("intermediate_size"), vocab=r.whole("vocab_size"), tied_embeddings=tied,
                max_positions=r.opt_whole("max_position_embeddings") or 0, norms_per_layer=1, no_positions=True,
                layer_types="".join(kinds), moe_layers="".join("D" if k == "P" else "-" for k in kinds), mixer=mixer,
                attn_input_width=width, shared_blocks=1 if tied else kinds.count("P"), block_out_proj=True)


def _read_helium(r: _Read) -> dict:
    """Helium: Llama's block, ``attention_bias`` on q, k and v only (o_proj, hidden → hidden, has none)."""
    c = _biased(r, o_bias=False, mlp_bias=r.flag("mlp_bias"))
    if c["heads"] * c["head_dim"] != c["hidden"]:
        raise InputError(N_("helium: its o_proj maps hidden_size to hidden_size, so num_attention_heads × head_dim "
                            "({q}) must equal hidden_size ({hidden})"), q=c["heads"] * c["head_dim"], hidden=c["hidden"])
    return c


def _read_cwm(r: _Read) -> dict:
    """Code World Model: Llama's block without attention biases; sliding layers by ``layer_types``, else every layer
    but each fourth (from the first) slides."""
    c = _common(r)
    c["mlp_bias"] = r.flag("mlp_bias")
    w = r.opt_whole("sliding_window", minimum=0)
    _explicit_or(r, c, ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(c["layers"])], w)
    return c


def _read_solar_open(r: _Read) -> dict:
    """Solar Open: Llama's attention (``attention_bias`` on q, k and v; none on o_proj) and GLM-4.5's mixture in
    every layer (shared experts, a score-correction buffer)."""
    c = _common(r, ffn_key="moe_intermediate_size")
    fm = c["ffn"]
    c.update(qkv_bias=r.flag("attention_bias"), experts=r.whole("n_routed_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("n_shared_experts", minimum=0) * fm, router_score_bias=True)
    return c


def _read_youtu(r: _Read) -> dict:
    """Youtu-LLM: DeepSeek-V3's multi-head latent attention and a dense SwiGLU MLP in every layer (no experts), the
    head tied by default."""
    return _mla(r)


def _read_minicpm3(r: _Read) -> dict:
    """MiniCPM 3: DeepSeek-V2's multi-head latent attention and a dense SwiGLU MLP (``mlp_bias``) in every layer;
    its embedding and residual scales are element-wise."""
    c = _mla(r)
    c["mlp_bias"] = r.flag("mlp_bias")
    return c


def _uniform(r: _Read, key: str, layers: int) -> int:
    """A whole number that a config may also give per layer (a list of one value per layer)."""
    v = r.get(key)
    if isinstance(v, list) and len(v) != layers:
        raise InputError(N_("{key} lists {n} layers but num_hidden_layers is {layers}"), key=key, n=len(v),
                         layers=layers)
    if isinstance(v, list) and v and all(x == v[0] for x in v):
        r.notes.append(Text(N_("{key} is given per layer; every layer's is {value}"), key=key, value=v[0]))
        return _whole(key, v[0])
    if isinstance(v, list):
        raise InputError(N_("{key} differs between layers ({values}): this estimator reads one value for every layer"),
                         key=key, values=", ".join(str(x) for x in v))
    return r.whole(key)


def _read_hunyuan_v1_moe(r: _Read) -> dict:
    """Hunyuan MoE (Hunyuan-A13B): Llama's attention with qk-norm on head_dim (``attention_bias`` on all four
    projections); in every layer a shared MLP of ``intermediate_size`` beside ``num_experts`` routed experts of the
    same width, ``moe_topk`` per token."""
    layers = r.whole("num_hidden_layers")
    c = _biased(r, qk_norm="head", experts=_uniform(r, "num_experts", layers),
                experts_per_token=_uniform(r, "moe_topk", layers), shared_expert_ffn=r.whole("intermediate_size"))
    # the remote code's own switches, which transformers' class does not read: said when they would change a count
    def given(key: str) -> set:  # the values a key gives, per layer or once (none when absent)
        v = r.raw.get(key)
        return {x for x in (v if isinstance(v, list) else [v]) if x is not None and not isinstance(x, (list, dict))}

    if given("moe_intermediate_size") - {c["ffn"]} or given("num_shared_expert") - {1} or r.raw.get("use_cla"):
        r.notes.append(Text(N_("hunyuan_v1_moe is read as transformers 5.24 builds it: every expert and the one shared "
                               "MLP {ffn} wide, no cross-layer KV sharing; this file's moe_intermediate_size, "
                               "num_shared_expert or use_cla (the model's own code) say otherwise"), ffn=c["ffn"]))
    return c


def _read_vaultgemma(r: _Read) -> dict:
    """VaultGemma: Gemma 2's attention and MLP with two norms per layer (before attention and before the MLP; no
    norms after them)."""
    c = _read_gemma2(r)
    c["norms_per_layer"] = 2
    return c


def _read_gemma4_text(r: _Read) -> dict:
    """Gemma 4 (``Gemma4TextConfig``, transformers 5.24): Gemma 3's sandwich of four norms and head-dim q/k norms
    (and a v norm without parameters), sliding layers every sixth layer full by default and the last layer always
    full; the full layers have their own head dim (``global_head_dim``, 512 when absent) and, where the keys double as
    the values (``attention_k_eq_v``: no v_proj), their own KV heads (``num_global_key_value_heads``); a config
    written by transformers gives both per layer (``per_layer_config``). ``enable_moe_block`` adds, beside every
    layer's dense MLP, a router (a norm without parameters, a scale per channel and per expert) and routed experts of
    ``moe_intermediate_size``, with three more norms: the dense MLP is counted as an always-on shared expert. The
    small models (E2B, E4B) add per-layer inputs (``hidden_size_per_layer_input`` wide, a table of
    ``vocab_size_per_layer_input`` rows) and their last ``num_kv_shared_layers`` layers reuse the K/V of the last
    earlier layer of their kind (``f`` / ``s``), their MLP twice as wide with ``use_double_wide_mlp``."""
    c = _read_gemma(r)
    c.update(norms_per_layer=4, qk_norm="head")
    layers = c["layers"]
    ple = r.whole("hidden_size_per_layer_input", minimum=0)
    pv = r.opt_whole("vocab_size_per_layer_input", minimum=1)  # the per-layer table's vocabulary
    if ple:
        c.update(per_layer_input=ple, per_layer_vocab=pv or 0)
    shared = r.whole("num_kv_shared_layers", minimum=0, default=0)
    if shared > layers:
        raise InputError(N_("num_kv_shared_layers {shared} is more than the {layers} layers"), shared=shared,
                         layers=layers)
    double = r.flag("use_double_wide_mlp")  # widens only the MLP of the layers reusing K/V
    w = r.opt_whole("sliding_window", minimum=0)
    if w and r.get("use_bidirectional_attention") == "all":
        w = w // 2 + 1
    types = r.layer_types(layers) or ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(layers)]
    if types[-1] != "full_attention":
        r.notes.append(Text(N_("layer_types ends with a {kind} layer: transformers makes the last layer full "
                               "attention, and so is it counted"), kind=types[-1]))
        types = [*types[:-1], "full_attention"]
    letters = _kv_shared(_pattern(types), shared)
    if shared:
        if double:
            c["kv_shared_ffn"] = 2 * c["ffn"]
        if ple == 0 and r.family == "gemma4_text":
            r.notes.append(Text(N_("layers reusing keys and values without per-layer inputs: transformers 5.24's "
                                   "Gemma 4 forward fails on such a model; it is counted as the layers are built")))
    if any(t != "full_attention" for t in types):
        if not w:
            raise InputError(N_("layer_types has sliding layers but sliding_window is null"))
        c.update(sliding_window=w)
    if letters != "F" * layers:
        c["layer_types"] = letters
    k_eq_v = r.flag("attention_k_eq_v")
    per_layer = r.get("per_layer_config")
    full = [i for i, t in enumerate(types) if t == "full_attention"]
    if per_layer is not None:  # transformers' own to_dict(): the full layers' overrides, layer by layer
        hd, kv = _gemma4_per_layer(per_layer, full, c)
        r.get("global_head_dim")
        r.get("num_global_key_value_heads")
    else:
        hd = r.whole("global_head_dim")
        kv = r.opt_whole("num_global_key_value_heads", minimum=1) if k_eq_v else None
        if not k_eq_v and r.has("num_global_key_value_heads") and r.get("num_global_key_value_heads") is not None:
            r.notes.append(Text(N_("num_global_key_value_heads applies only where the keys are the values too "
                                   "(attention_k_eq_v): the full layers keep num_key_value_heads")))
    if full:
        c.update(full_head_dim=hd if hd != c["head_dim"] else 0,
                 full_kv_heads=kv if kv and kv != c["kv_heads"] else 0, full_k_eq_v=k_eq_v)
    if r.flag("enable_moe_block"):
        if c.get("kv_shared_ffn"):
            raise InputError(N_("Gemma 4 with experts and a double-wide MLP in the layers reusing keys and values is not "
                                "read: no such model is published"))
        c.update(experts=r.whole("num_experts"), experts_per_token=r.whole("top_k_experts"),
                 expert_ffn=r.whole("moe_intermediate_size"), shared_expert_ffn=c["ffn"], router_scales=True,
                 moe_norms=3, fused_gate_up=True)
        r.notes.append(Text(N_("Gemma 4's dense MLP runs beside the routed experts on every token: it is counted as an "
                               "always-on shared expert ({ffn} wide)"), ffn=c["ffn"]))
    else:
        for key in ("num_experts", "top_k_experts", "moe_intermediate_size"):
            r.get(key)
    return c


def _kv_shared(letters: str, shared: int) -> str:
    """Gemma 3n / 4: the last ``shared`` layers (num_kv_shared_layers) read the K/V of the last earlier layer of their
    kind: their letters lowered (``f`` / ``s``); each needs such a layer (transformers refuses it otherwise too)."""
    if not shared:
        return letters
    first = len(letters) - shared
    if first <= 0 or set(letters[first:]) - set(letters[:first]):
        raise InputError(N_("num_kv_shared_layers {shared}: a layer that reuses keys and values needs an earlier "
                            "layer of its kind to read them from (transformers refuses it too)"), shared=shared)
    return letters[:first] + letters[first:].lower()


def _read_gemma3n_text(r: _Read) -> dict:
    """Gemma 3n (``Gemma3nTextConfig``): Gemma 3's sandwich norms and head-dim q/k norms, every fifth layer full by
    default, per-layer inputs and the last ``num_kv_shared_layers`` layers reusing K/V as Gemma 4's small models have
    them, and its own two: AltUp (``altup_num_inputs`` streams: the embedding projected to the others, each layer run
    on one and the rest predicted and corrected, projected back at the end) and LAuReL (a ``laurel_rank`` residual
    beside the attention). ``intermediate_size`` may be a list: one width for every layer is read. The activation
    sparsity of the first layers is a threshold on the gate's output: the GEMMs still multiply every element."""
    widths = r.raw.get("intermediate_size")
    if isinstance(widths, list):  # one width per layer (transformers' to_dict() writes the list)
        if len(set(map(repr, widths))) != 1:
            raise InputError(N_("intermediate_size lists {n} different widths: one width for every layer is read"),
                             n=len(set(map(repr, widths))))
        return _read_as(r, {**r.raw, "intermediate_size": widths[0]}, _read_gemma3n_text)
    c = _read_gemma(r)
    c.update(norms_per_layer=4, qk_norm="head")
    layers = c["layers"]
    ple = r.whole("hidden_size_per_layer_input", minimum=0)
    if ple:
        c.update(per_layer_input=ple, per_layer_vocab=r.opt_whole("vocab_size_per_layer_input", minimum=1) or 0)
    c.update(altup_inputs=r.whole("altup_num_inputs", minimum=0), laurel_rank=r.whole("laurel_rank", minimum=0))
    sparse = r.get("activation_sparsity_pattern")
    if sparse is None:  # transformers' default: the first 10 layers of a model with more than 10
        sparse = [0.95] * 10 if layers > 10 else []
    if isinstance(sparse, int | float):
        sparse = [sparse] * layers
    if isinstance(sparse, list) and any(isinstance(x, int | float) and x > 0 for x in sparse):
        r.notes.append(Text(N_("activation sparsity in {n} layers: a threshold on the gate's output, the GEMMs still "
                               "multiply every element (counted dense)"), n=sum(1 for x in sparse if x)))
    w = r.opt_whole("sliding_window", minimum=0)
    types = r.layer_types(layers) or ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention"
                                      for i in range(layers)]
    letters = _kv_shared(_pattern(types), r.whole("num_kv_shared_layers", minimum=0, default=0))
    if any(t != "full_attention" for t in types):
        if not w:
            raise InputError(N_("layer_types has sliding layers but sliding_window is null"))
        c["sliding_window"] = w
    if letters != "F" * layers:
        c["layer_types"] = letters
    return c


def _read_gemma4_unified_text(r: _Read) -> dict:
    """Gemma 4 unified (``Gemma4UnifiedTextConfig``, the 12B): Gemma 4's decoder without per-layer inputs or experts
    (its config class removes those keys: a file's values are not read), a window of 1,024 by default."""
    return _read_as(r, {k: v for k, v in r.raw.items() if k not in _GEMMA4_UNIFIED_ABSENT}, _read_gemma4_text)


def _read_as(r: _Read, raw: dict, reader) -> dict:
    """``reader`` on ``raw`` (the file's keys, some left out or rewritten), what it used and noted kept in ``r``."""
    inner = _Read(raw, r.family, r.defaults, r.aliases, defaults_for_shape=r.defaults_for_shape)
    c = reader(inner)
    r.used |= inner.used & set(r.raw)
    r.asked |= inner.asked
    r.notes += inner.notes
    r.defaulted.update(inner.defaulted)
    return c


# Gemma4TextConfig's keys that Gemma4UnifiedTextConfig removes (set to AttributeError): no per-layer inputs, no experts
_GEMMA4_UNIFIED_ABSENT = ("vocab_size_per_layer_input", "hidden_size_per_layer_input", "enable_moe_block", "num_experts",
                          "top_k_experts", "moe_intermediate_size")


def _gemma4_per_layer(per_layer, full: list[int], c: dict) -> tuple[int, int | None]:
    """The full layers' (head dim, KV heads) from transformers' ``per_layer_config``: the same overrides on every full
    layer and none elsewhere (anything else is refused: one shape per kind of layer is what is counted)."""
    if not isinstance(per_layer, dict):
        raise InputError(N_("config.json field 'per_layer_config' must be an object of layer index → overrides"))
    seen: dict[int, dict] = {}
    for key, over in per_layer.items():
        try:
            i = int(key)
        except (TypeError, ValueError):
            raise InputError(N_("per_layer_config: {key!r} is not a layer index"), key=str(key)[:40]) from None
        if not isinstance(over, dict) or set(over) - {"head_dim", "num_key_value_heads"}:
            raise InputError(N_("per_layer_config: layer {i} overrides what is not read here (only head_dim and "
                                "num_key_value_heads of the full-attention layers are)"), i=i)
        seen[i] = over
    if sorted(seen) != full or len({tuple(sorted(o.items())) for o in seen.values()}) > 1:
        raise InputError(N_("per_layer_config must give the same overrides to every full-attention layer and to no "
                            "other layer"))
    over = next(iter(seen.values()), {})
    hd = _whole("per_layer_config head_dim", over.get("head_dim", c["head_dim"]))
    kv = over.get("num_key_value_heads")
    return hd, None if kv is None else _whole("per_layer_config num_key_value_heads", kv)


def _read_granitemoeshared(r: _Read) -> dict:
    """Granite MoE with a shared expert: Granite MoE's layer and, when ``shared_intermediate_size`` > 0, a SwiGLU
    MLP of that width beside the routed experts."""
    c = _read_granitemoe(r)
    c["shared_expert_ffn"] = r.whole("shared_intermediate_size", minimum=0, default=0)
    return c


def _mlp_layer_types(r: _Read, layers: int, first_dense_default: int) -> str:
    """M / D per layer from ``mlp_layer_types`` ("sparse" / "dense"), else the first ``first_k_dense_replace`` dense."""
    types = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    if types is not None:
        r.get("first_k_dense_replace")  # read, unused: mlp_layer_types wins
        return "".join(types)
    return moe_pattern(layers, first_dense=min(r.whole("first_k_dense_replace", minimum=0,
                                                       default=first_dense_default), layers))


def _read_exaone_moe(r: _Read) -> dict:
    """K-EXAONE (``exaone_moe``): EXAONE 4's attention (qk-norm, sliding layers) and DeepSeek-V3's mixture (shared
    experts of ``num_shared_experts`` × ``moe_intermediate_size``, a score-correction buffer), dense layers by
    ``mlp_layer_types`` or the first ``first_k_dense_replace``."""
    c = _read_exaone4(r)
    fm = r.whole("moe_intermediate_size")
    c.update(experts=r.whole("num_experts"), experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("num_shared_experts", minimum=0) * fm, router_score_bias=True,
             moe_layers=_mlp_layer_types(r, c["layers"], 1))
    return c


def _read_cohere2_moe(r: _Read) -> dict:
    """Cohere 2 MoE: Cohere 2's parallel block (one norm, RMSNorm when ``rms_norm_eps`` is set, else Cohere's
    LayerNorm), routed experts of ``intermediate_size`` with ``num_shared_experts`` shared ones of that width, dense
    first layers of ``prefix_dense_intermediate_size``; sliding layers by ``layer_types``, else from the two
    window patterns (the dense prefix's and the rest's)."""
    c = _common(r)
    layers, width = c["layers"], c["ffn"]
    ab = r.flag("attention_bias")
    moe = _mlp_layer_types(r, layers, 0)
    first = len(moe) - len(moe.lstrip("D"))
    w = r.opt_whole("sliding_window", minimum=0)
    pp = r.whole("prefix_dense_sliding_window_pattern", default=1)
    p = r.whole("sliding_window_pattern", default=4)
    default = (["sliding_attention" if (i + 1) % pp else "full_attention" for i in range(first)]
               + ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(layers - first)])
    _explicit_or(r, c, default, w)
    c.update(qkv_bias=ab, o_bias=ab, norm="rms" if r.get("rms_norm_eps") is not None else "layer_weight",
             norms_per_layer=1, parallel_block=True, experts=r.whole("num_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=width,
             shared_expert_ffn=r.whole("num_shared_experts", minimum=0) * width, moe_layers=moe,
             ffn=r.opt_whole("prefix_dense_intermediate_size", minimum=1) or width)
    return c


def _read_nemotron(r: _Read) -> dict:
    """Nemotron (Nemotron-4, Minitron): an MLP of up_proj, ReLU² and down_proj (no gate), LayerNorms with a bias
    (LayerNorm1P), ``attention_bias`` on all four projections."""
    return _biased(r, mlp="plain", mlp_bias=r.flag("mlp_bias"), norm="layer")


def _read_mimo_v2_flash(r: _Read) -> dict:
    """MiMo-V2-Flash: q/k heads of ``head_dim`` and values of ``v_head_dim``; its sliding layers (all but the first and
    every sixth by default) have twice ``num_key_value_heads`` and a learned sink per head, its full layers neither;
    ``attention_bias`` on q/k/v only; DeepSeek-V3's router (a score-correction buffer) over routed experts without
    a shared one, dense layers by ``mlp_layer_types`` (the first by default). Its config class drops
    ``first_k_dense_replace``, ``n_shared_experts`` and ``num_mtp_layers``: a file's values are not read."""
    c = _common(r)
    layers = c["layers"]
    w = r.opt_whole("sliding_window", minimum=0)
    if r.has("sliding_window_size") and r.get("sliding_window_size") is not None:
        w = r.whole("sliding_window_size", minimum=0) + 1  # the reference implementation's spelling: previous tokens
    types = r.layer_types(layers) or ["full_attention" if i == 0 or not (i + 1) % 6 else "sliding_attention"
                                      for i in range(layers)]
    if "sliding_attention" in types:
        if not w:
            raise InputError(N_("layer_types has sliding layers but sliding_window is null"))
        kv = c["kv_heads"]
        c.update(sliding_window=w, layer_types=_pattern(types), kv_heads=2 * kv, attention_sinks=True)
        if "full_attention" in types:
            c.update(full_kv_heads=kv, sliding_sinks_only=True)
    moe = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    _mimo_remote_keys(r, c, types, moe or ["D"] + ["M"] * (layers - 1))
    c.update(v_head_dim=r.whole("v_head_dim"), qkv_bias=r.flag("attention_bias"), experts=r.whole("n_routed_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=r.whole("moe_intermediate_size"),
             router_score_bias=True, moe_layers="".join(moe) if moe else "D" + "M" * (layers - 1))
    return c


def _mimo_remote_keys(r: _Read, c: dict, types: list[str], moe: list[str]) -> None:
    """MiMo-V2-Flash's Hub file also spells its layout in its own code's keys, which transformers' class does not
    read: said when one disagrees with what transformers builds (and so with the count)."""
    kv = c["full_kv_heads"] or c["kv_heads"]
    ours = {"hybrid_layer_pattern": [0 if t == "full_attention" else 1 for t in types],
            "moe_layer_freq": [1 if m == "M" else 0 for m in moe],
            "swa_num_key_value_heads": 2 * kv, "swa_num_attention_heads": c["heads"], "swa_head_dim": c["head_dim"],
            "swa_v_head_dim": r.get("v_head_dim"), "add_swa_attention_sink_bias": True,
            "add_full_attention_sink_bias": False}
    differ = [k for k, v in ours.items() if k in r.raw and r.raw[k] is not None and r.raw[k] != v]
    r.used.update(k for k in ours if k in r.raw)
    if differ:
        r.notes.append(Text(N_("mimo_v2_flash is read as transformers 5.24 builds it (every sixth layer and the first "
                               "full, the sliding ones with twice the KV heads and sinks, the first MLP dense); this "
                               "file's {keys} (the model's own code) say otherwise"), keys=", ".join(differ)))


def _read_mellum(r: _Read) -> dict:
    """Mellum 2 (JetBrains): Qwen3-MoE's attention (qk-norm per head, ``attention_bias`` on all four projections) with
    full and sliding layers by ``layer_types`` and dense or MoE layers by ``mlp_layer_types`` (every layer MoE by
    default, no shared expert); transformers builds no MTP layer."""
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="head", experts=r.whole("num_local_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=r.whole("moe_intermediate_size"))
    _explicit_or(r, c, None, r.opt_whole("sliding_window", minimum=0))
    moe = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, c["layers"])
    c["moe_layers"] = "".join(moe) if moe else ""
    if r.get("num_nextn_predict_layers"):
        _note_mtp_not_built(r)
    return c


def _read_nanochat(r: _Read) -> dict:
    """nanochat: Llama's attention with parameter-free RMS norms everywhere (q and k after the rotary embedding, the
    block, the embedding and the end: the model's one norm is applied before the layers and after them), a ReLU² MLP
    without biases, ``attention_bias`` on all four projections."""
    c = _common(r)
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="l2", norm="plain", mlp="plain", embedding_norm=True)
    return c


def _read_hyperclovax(r: _Read) -> dict:
    """HyperCLOVA X SEED: Granite's block (``attention_bias``, ``mlp_bias``, muP multipliers that change no count) with
    its own ``head_dim`` and, with ``use_post_norm`` (the default), a norm after the attention and after the MLP too."""
    c = _read_llama(r)
    c["norms_per_layer"] = 4 if r.flag("use_post_norm", True) else 2
    return c


def _read_flint(r: _Read) -> dict:
    """Flint: Qwen3-MoE's attention (qk-norm per head, ``attention_bias`` on all four projections) with a learned sink
    per head, sliding and full layers (by default the first two, every fourth from the second and the last full), a
    shared expert added without a gate beside the routed ones, and dense layers by ``mlp_only_layers`` (the first
    two by default) and ``decoder_sparse_step``."""
    c = _common(r)
    ab, layers = r.flag("attention_bias"), c["layers"]
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="head", attention_sinks=True, experts=r.whole("num_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=r.whole("moe_intermediate_size"),
             shared_expert_ffn=r.whole("shared_expert_intermediate_size", minimum=0))
    default = ["full_attention" if i < 2 or i % 4 == 1 or i == layers - 1 else "sliding_attention"
               for i in range(layers)]
    _explicit_or(r, c, default, r.opt_whole("sliding_window", minimum=0))
    c["moe_layers"] = _qwen_moe_layers(r, c)
    return c


def _read_kimi_linear(r: _Read) -> dict:
    """Kimi Linear: Kimi delta attention layers (``linear_attention``; their dimensions from the checkpoint's
    ``linear_attn_config`` where it has them) and MLA layers (``full_attention``; by default every fourth from the
    fifth, or the 1-indexed ``full_attn_layers`` / ``kda_layers`` of ``linear_attn_config``), dense first layers then
    DeepSeek-V3's mixture with shared experts (``mlp_layer_types``, else ``first_k_dense_replace``)."""
    layers = r.whole("num_hidden_layers")
    lac = r.get("linear_attn_config")
    lac = lac if isinstance(lac, dict) else {}
    kinds = _type_list(r, "layer_types", {"full_attention": "F", "linear_attention": "K"}, layers)
    if kinds is None and "full_attn_layers" in lac and "kda_layers" in lac:
        kinds = [None] * layers
        for key, letter in (("full_attn_layers", "F"), ("kda_layers", "K")):
            for i in lac[key]:
                if not isinstance(i, int) or not 1 <= i <= layers:
                    raise InputError(N_("linear_attn_config {key} holds {i!r}: layers are numbered 1 to {layers}"),
                                     key=key, i=i, layers=layers)
                kinds[i - 1] = letter
        if None in kinds:
            raise InputError(N_("linear_attn_config names neither kind for layer {i}"), i=kinds.index(None) + 1)
    if kinds is None:
        kinds = ["F" if i and i % 4 == 0 else "K" for i in range(layers)]
    moe = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    if moe is None:
        first = r.whole("first_k_dense_replace", minimum=0, default=1)
        moe = ["D" if i < first else "M" for i in range(layers)]
    c = _mla(r)
    fm = r.whole("moe_intermediate_size")
    c.update(layer_types="".join(kinds), moe_layers="".join(moe), experts=r.whole("num_local_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("n_shared_experts", minimum=0) * fm, router_score_bias=True, fused_gate_up=True,
             mixer=_kda_mixer(r))
    return c


def _kda_mixer(r: _Read) -> KimiDelta:
    """Kimi delta attention's shape from ``linear_*`` keys, or from a checkpoint's ``linear_attn_config`` where it
    has them (Kimi Linear, GLM-5-Next)."""
    lac = r.get("linear_attn_config")
    lac = lac if isinstance(lac, dict) else {}
    heads = lac.get("num_heads", r.whole("linear_num_heads"))
    head_dim = lac.get("head_dim", r.whole("linear_head_dim"))
    conv = lac.get("short_conv_kernel_size", r.whole("linear_conv_kernel_dim"))
    return KimiDelta(conv=_whole("short_conv_kernel_size", conv), heads=_whole("linear_num_heads", heads),
                     head_dim=_whole("linear_head_dim", head_dim))


def _read_glm5_next_text(r: _Read) -> dict:
    """GLM-5-Next's decoder (``glm5_next_text``, GLM-5.3-Flash): Kimi delta attention layers (``linear_attention``;
    their dimensions from ``linear_*`` or a checkpoint's ``linear_attn_config``) and, by default every fourth, MLA
    without rotary dims under DeepSeek Sparse Attention whose indexer scores pools of ``index_kpool`` keys
    (``indexer_types`` "shared" reusing the previous attention layer's choice); manifold-constrained hyper-connections
    over ``hc_mult`` streams, collapsed by a plain mean at the end; dense first layers, then DeepSeek-V3's router over
    3-D experts beside shared ones (``mlp_layer_types``)."""
    layers = r.whole("num_hidden_layers")
    kinds = _type_list(r, "layer_types", {"linear_attention": "K", "indexed_attention": "I", "full_attention": "I"},
                       layers) or ["I" if i % 4 == 3 else "K" for i in range(layers)]
    types = _indexer_types(r, layers, first_full=False)
    for i, k in enumerate(kinds):
        if k == "I" and types[i] == "shared":
            if not i or kinds[i - 1] != "J":  # transformers passes the top-k on from the layer just before only
                raise InputError(N_("glm5_next_text: attention layer {i} reuses the indexer's choice ('shared'), so "
                                    "the layer before it must be an attention layer with its own indexer"), i=i)
            kinds[i] = "G"
        elif k == "I":
            kinds[i] = "J"  # (MLA without rotary dims: a NoPE layer in every attention layer)
    if r.flag("index_kpool_always_select_tail", True) is not True:
        raise InputError(N_("glm5_next_text: an indexer that drops a query's incomplete pool "
                            "(index_kpool_always_select_tail false) is not read"))
    if r.opt_whole("qk_rope_head_dim"):
        raise InputError(N_("glm5_next_text: its attention layers have no rotary dims (qk_rope_head_dim must be 0)"))
    if not r.opt_whole("q_lora_rank"):
        raise InputError(N_("{family} needs a q_lora_rank: its indexer reads the query latent"), family=r.family)
    c = _mla(r)
    fm = r.whole("moe_intermediate_size")
    c.update(layer_types="".join(kinds), moe_layers=_mlp_layer_types(r, layers, 3), experts=r.whole("n_routed_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("n_shared_experts", minimum=0) * fm, router_score_bias=True,
             index_heads=r.whole("index_n_heads"), index_head_dim=r.whole("index_head_dim"),
             index_topk=r.whole("index_topk"), index_kpool=r.whole("index_kpool"),
             hyper_streams=r.whole("hc_mult"), hyper_mean_head=True)
    mixer = _kda_mixer(r)
    if "K" in kinds:  # (a stack of attention layers only has no mixer)
        c["mixer"] = mixer
    return c


def _read_bailing_hybrid(r: _Read) -> dict:
    """Ling's hybrid (bailing_hybrid, Ling 3.0): Kimi delta attention with full-rank forget and output gates
    (``num_attention_heads`` heads of ``head_dim``) in every layer but each ``layer_group_size``-th, which is MLA with a
    gate per head on its output;
    ``first_k_dense_replace`` dense layers, then DeepSeek-V3's mixture with shared experts; its config class builds
    no MTP layer."""
    layers = r.whole("num_hidden_layers")
    kinds = _type_list(r, "layer_types", {"full_attention": "F", "linear_attention": "K"}, layers)
    group = r.whole("layer_group_size")  # read, unused where layer_types is given
    if kinds is None:
        kinds = ["F" if (i + 1) % group == 0 else "K" for i in range(layers)]
    moe = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    first = r.whole("first_k_dense_replace", minimum=0)  # read, unused where mlp_layer_types is given
    if moe is None:
        moe = ["D" if i < first else "M" for i in range(layers)]
    r.get("head_dim")  # (to_dict() writes the rotary dims there; the delta attention's is linear_head_dim)
    c = _mla(r)
    fm = r.whole("moe_intermediate_size")
    # the delta attention's shape: the config class copies head_dim, the heads and the kernel into linear_* before
    # DeepSeek-V3's class points head_dim at the rotary dims (what to_dict() then writes)
    kda = dict(conv=r.opt_whole("linear_conv_kernel_dim") or r.whole("short_conv_kernel_size"),
               heads=r.opt_whole("linear_num_heads") or c["heads"],
               head_dim=r.opt_whole("linear_head_dim") or r.whole("head_dim"))
    c.update(layer_types="".join(kinds), moe_layers="".join(moe), experts=r.whole("num_experts"),
             experts_per_token=r.whole("num_experts_per_token"), expert_ffn=fm,
             shared_expert_ffn=r.whole("num_shared_experts", minimum=0) * fm, router_score_bias=True, fused_gate_up=True,
             max_positions=r.opt_whole("model_max_length") or 0, attn_gate="head",
             mixer=KimiDelta(**kda, full_rank_gates=True))
    if r.get("num_nextn_predict_layers"):
        _note_mtp_not_built(r)
    return c


def _read_minimax(r: _Read) -> dict:
    """MiniMax-Text-01 / M1: lightning attention layers (``linear_attention``: a linear attention with a decay per
    head, computed in blocks of ``block_size``) and softmax attention layers (``full_attention``; by default every
    other layer from the first); every layer a Mixtral-style MoE of ``num_local_experts``."""
    c = _common(r)
    layers = c["layers"]
    kinds = _type_list(r, "layer_types", {"full_attention": "F", "linear_attention": "N"}, layers)
    codes = r.get("attn_type_list")  # the original (remote-code) checkpoints' spelling: 0 lightning, 1 softmax
    if kinds is None and codes is not None:
        if not isinstance(codes, list) or len(codes) != layers or set(codes) - {0, 1}:
            raise InputError(N_("attn_type_list must give 0 (lightning) or 1 (softmax attention) for each of the "
                                "{layers} layers"), layers=layers)
        kinds = ["F" if x else "N" for x in codes]
        r.notes.append(Text(N_("the layers are read from attn_type_list (MiniMax's own code); transformers' MiniMaxConfig "
                               "reads layer_types, which the converted (-hf) checkpoints carry")))
    if kinds is None:
        kinds = ["F" if (i + 1) % 2 else "N" for i in range(layers)]
    if r.opt_whole("sliding_window", minimum=0):  # a mask in transformers' MiniMax: its cache keeps every key
        r.notes.append(Text(N_("sliding_window is a mask on full attention in transformers' MiniMax (its cache keeps "
                               "every key): counted as full attention")))
    c.update(layer_types="".join(kinds), mixer=Lightning(heads=c["heads"], head_dim=c["head_dim"],
                                                         chunk=r.whole("block_size", default=256)),
             experts=r.whole("num_local_experts"), experts_per_token=r.whole("num_experts_per_tok"),
             expert_ffn=c["ffn"], fused_gate_up=True)
    return c


def _read_longcat_flash(r: _Read) -> dict:
    """LongCat-Flash: each of its ``num_layers`` blocks is two MLA attention layers each followed by a dense MLP
    (``ffn_hidden_size``), and a MoE (a shortcut from the first attention layer's normed output, added at the block's
    end) beside the first dense MLP; its router chooses ``moe_topk`` among ``n_routed_experts`` and
    ``zero_expert_num`` zero-computation (identity) experts, with a score-correction buffer over both. Read as 2 ×
    num_layers layers, the even ones a MoE whose always-on shared MLP is the dense one. transformers 5.24 allocates
    gate/up rows for the zero-computation experts too (never used); the checkpoint's are counted."""
    n = r.opt_whole("num_layers")
    if n is None:
        n = r.whole("num_hidden_layers") // 2  # the config class's property: 2 × num_layers
    heads = r.whole("num_attention_heads")
    r.get("num_key_value_heads")  # read and unused: kv_b_proj makes keys and values for every head
    # (GLM-5-Next's attention has no rotary dims: every layer NoPE)
    dn, dv = r.whole("qk_nope_head_dim"), r.whole("v_head_dim")
    dr = r.whole("qk_rope_head_dim", minimum=0 if r.family == "glm5_next_text" else 1)
    ab, ffn = r.flag("attention_bias"), r.whole("ffn_hidden_size")
    return dict(hidden=r.whole("hidden_size"), layers=2 * n, heads=heads, kv_heads=heads, head_dim=dn + dr,
                v_head_dim=dv, q_lora_rank=r.opt_whole("q_lora_rank") or 0, kv_lora_rank=r.whole("kv_lora_rank"),
                rope_head_dim=dr, vocab=r.whole("vocab_size"), max_positions=r.opt_whole("max_position_embeddings") or 0,
                qkv_bias=ab, o_bias=ab, ffn=ffn, experts=r.whole("n_routed_experts"),
                experts_per_token=r.whole("moe_topk"), zero_experts=r.whole("zero_expert_num", minimum=0, default=0),
                expert_ffn=r.whole("expert_ffn_hidden_size"), shared_expert_ffn=ffn, moe_layers="MD" * n,
                router_bias=r.flag("router_bias"), router_score_bias=True, fused_gate_up=True,
                tied_embeddings=r.flag("tie_word_embeddings"))


def _read_hy_v4(r: _Read) -> dict:
    """HY-V4 (Hunyuan 4): GLM-5's attention — MLA with DeepSeek Sparse Attention, an indexer of its own in the
    ``indexer_types`` "full" layers (by default the first and every fourth from the second), the others reusing its
    choice — with a sigmoid gate per element on the attention output and a learned sink per head; independent
    hyper-connections (iHC: ``hc_mult`` streams collapsed before and expanded after each block, not mixed); a dense
    first layer (``mlp_layer_types``), then DeepSeek-V3's mixture with shared experts."""
    layers = r.whole("num_hidden_layers")
    moe = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    _type_list(r, "layer_types", {"indexed_attention": "I"}, layers)
    types = r.get("indexer_types")
    if types is None:
        types = ["full" if i == 0 or (i - 1) % 4 == 0 else "shared" for i in range(layers)]
    if not isinstance(types, list) or len(types) != layers or set(types) - {"full", "shared"} or types[0] != "full":
        raise InputError(N_("{family}: the indexer types must list 'full' or 'shared' for each of the {layers} layers, "
                            "the first 'full'"), family=r.family, layers=layers)
    c = _read_deepseek(r, moe_layers="".join(moe) if moe else "D" + "M" * (layers - 1))
    c.update(router_score_bias=True, index_heads=r.whole("index_n_heads"), index_head_dim=r.whole("index_head_dim"),
             index_topk=r.whole("index_topk"), layer_types="".join("I" if t == "full" else "F" for t in types),
             attn_gate="element", attention_sinks=True, hyper_streams=r.whole("hc_mult"), hyper_mix=False)
    return c


def _read_lara_mini(r: _Read) -> dict:
    """Lara Mini: Qwen3.5's Gated DeltaNet layers beside sliding attention layers and full ones without positions
    (by default the period linear, sliding, linear, full, sliding), their attention Qwen3's (qk-norm per head, no
    output gate), every layer a MoE with a shared expert added without a gate."""
    c = _common(r, ffn_key="moe_intermediate_size")  # no dense MLP: the config class removes intermediate_size
    layers = c["layers"]
    kinds = _type_list(r, "layer_types", {"linear_attention": "L", "full_attention": "F", "sliding_attention": "S"},
                       layers)
    if kinds is None:
        kinds = ["LSLFS"[i % 5] for i in range(layers)]
    ab = r.flag("attention_bias")
    mixer = Mixer("gated_deltanet", conv=r.whole("linear_conv_kernel_dim"), heads=r.whole("linear_num_value_heads"),
                  head_dim=r.whole("linear_value_head_dim"), groups=r.whole("linear_num_key_heads"),
                  key_dim=r.whole("linear_key_head_dim"), split_proj=True)
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="head", mixer=mixer, layer_types="".join(kinds),
             experts=r.whole("num_experts"), experts_per_token=r.whole("num_experts_per_tok"),
             expert_ffn=r.whole("moe_intermediate_size"),
             shared_expert_ffn=r.whole("shared_expert_intermediate_size", minimum=0))
    if "S" in kinds:
        c["sliding_window"] = r.whole("sliding_window")
    return c


def _read_beam(r: _Read) -> dict:
    """Beam (Reflection): Qwen3-MoE's attention (qk-norm per head, ``attention_bias`` on all four projections) with a
    sigmoid gate per element on its output (gate_proj) and a learned bias per head on the gate; sliding layers with
    rotary positions, every sixth and the last full without (NoPE); four norms per layer; the first three layers dense
    by default (``mlp_layer_types``), the others routed experts (DeepSeek-V3's router with its score-correction buffer,
    no shared expert)."""
    c = _common(r)
    ab, layers = r.flag("attention_bias"), c["layers"]
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="head", attn_gate="element", attn_gate_bias=True, norms_per_layer=4,
             experts=r.whole("num_experts"), experts_per_token=r.whole("num_experts_per_tok"),
             expert_ffn=r.whole("moe_intermediate_size"), router_score_bias=True, fused_gate_up=True)
    default = ["sliding_attention" if (i + 1) % 6 and i != layers - 1 else "full_attention" for i in range(layers)]
    _explicit_or(r, c, default, r.opt_whole("sliding_window", minimum=0))
    moe = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    dense = min(3, layers)
    c["moe_layers"] = "".join(moe) if moe else "D" * dense + "M" * (layers - dense)
    return c


def _read_axk1(r: _Read) -> dict:
    """A.X K1: DeepSeek-V3's MLA and mixture (a score-correction buffer, shared experts) with a norm after each MoE
    block's output, dense or MoE layers by ``mlp_layer_types`` — else the older ``first_k_dense_replace`` (1) and
    ``moe_layer_freq`` (a MoE layer where i % freq is 0), which this config class reads."""
    layers = r.whole("num_hidden_layers")
    types = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    first, freq = r.whole("first_k_dense_replace", minimum=0, default=1), r.whole("moe_layer_freq", default=1)
    if types is None:
        types = ["M" if i >= first and i % freq == 0 else "D" for i in range(layers)]
    c = _read_deepseek(r, moe_layers="".join(types))
    c.update(router_score_bias=True, moe_norms=1)
    if r.get("num_nextn_predict_layers"):
        _note_mtp_not_built(r)
    return c


def _read_axk2(r: _Read) -> dict:
    """A.X-K2: DeepSeek-V3.2's MLA, lightning indexer in every layer and mixture (a score-correction buffer, shared
    experts; grouped routing or not, which changes no count), dense or MoE layers by ``mlp_layer_types`` (else the older
    ``first_k_dense_replace``, 1, and ``moe_layer_freq``); q_gate_proj makes the queries and a sigmoid gate on the
    attention output from the query latent and its norm; every input norm, and a MoE layer's post-attention norm, is
    followed by a rank-``gated_norm_rank`` gate."""
    layers = r.whole("num_hidden_layers")
    types = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    first, freq = r.whole("first_k_dense_replace", minimum=0, default=1), r.whole("moe_layer_freq", default=1)
    if types is None:
        types = ["M" if i >= first and i % freq == 0 else "D" for i in range(layers)]
    _type_list(r, "layer_types", {"indexed_attention": "I", "deepseek_sparse_attention": "I"}, layers)
    if not r.opt_whole("q_lora_rank"):
        raise InputError(N_("{family} needs a q_lora_rank: its indexer reads the query latent"), family=r.family)
    c = _read_deepseek(r, moe_layers="".join(types))
    c.update(router_score_bias=True, index_heads=r.whole("index_n_heads"), index_head_dim=r.whole("index_head_dim"),
             index_topk=r.whole("index_topk"), layer_types="I" * layers, q_gate_latent=True,
             gated_norm_rank=r.whole("gated_norm_rank"))
    if r.get("num_nextn_predict_layers"):
        _note_mtp_not_built(r)
    return c


_V4_TYPES = {"sliding_attention": "S", "compressed_sparse_attention": "A", "heavily_compressed_attention": "H"}
_V4_RATIO_TYPES = {0: "sliding_attention", 4: "compressed_sparse_attention", 128: "heavily_compressed_attention"}
# DeepSeek-V4.1's keys: layers reading another layer's K/V or indexer, Engram tables, candidate blocks (a layout
# transformers 5.24's deepseek_v4 does not build)
_V41_KEYS = ("kv_source_layer_ids", "index_source_layer_ids", "candidate_source_layer_id", "candidate_topk_blocks",
             "candidate_block_size", "engram_layer_ids", "engram_vocab_size", "engram_n_heads")


def _read_deepseek_v4(r: _Read) -> dict:
    """DeepSeek-V4 as transformers 5.24 builds it: one key/value head (kv_proj, read as keys and values by every
    query head) beside queries from a latent (q_lora_rank), a learned sink per head and a grouped output projection
    (o_groups, o_lora_rank); layers of three kinds by ``layer_types`` (or the older ``compress_ratios``: 0, 4, 128):
    sliding, compressed sparse (a compressor of two overlapping series and a lightning indexer of index_n_heads ×
    index_head_dim keeping index_topk entries) and heavily compressed; hc_mult hyper-connection streams; every layer a
    MoE of n_routed_experts with one shared expert of the same width, the first num_hash_layers routed by a token
    table (``mlp_layer_types``)."""
    layers = r.whole("num_hidden_layers")
    given = [k for k in _V41_KEYS if r.raw.get(k) not in (None, [], 0)]
    if given:
        raise InputError(N_("{keys}: DeepSeek-V4.1's layers that read another layer's keys and values (or Engram "
                            "tables), which transformers 5.24's deepseek_v4 does not build; not supported"),
                         keys=", ".join(given))
    r.used.update(k for k in _V41_KEYS if k in r.raw)
    rates = r.get("compress_rates")
    rates = dict(rates) if isinstance(rates, dict) else {"compressed_sparse_attention": 4,
                                                         "heavily_compressed_attention": 128}
    for key, kind in (("compress_rate_csa", "compressed_sparse_attention"),
                      ("compress_rate_hca", "heavily_compressed_attention")):
        if r.get(key) is not None:
            rates[kind] = r.whole(key)
    types = r.get("layer_types")
    if types is None and r.get("compress_ratios") is not None:
        ratios = r.ints("compress_ratios")
        bad = sorted(set(ratios) - set(_V4_RATIO_TYPES))
        if bad:
            raise InputError(N_("compress_ratios holds {ratio}: transformers 5.24 reads 0 (sliding), 4 (compressed "
                                "sparse) and 128 (heavily compressed)"), ratio=bad[0])
        types = [_V4_RATIO_TYPES[x] for x in ratios]
    if types is None:  # DeepSeek-V4-Pro's layout: two heavily compressed layers, then the two kinds in turn
        types = (["heavily_compressed_attention"] * min(layers, 2)
                 + ["compressed_sparse_attention" if i % 2 else "heavily_compressed_attention"
                    for i in range(max(layers - 2, 0))])
    if isinstance(types, list) and len(types) > layers:  # the checkpoint's MTP layers' entries (transformers cuts them)
        types = types[:layers]
    letters = "".join(_kinds_of(r, "layer_types", types, _V4_TYPES, layers))
    mlp = r.get("mlp_layer_types")
    if mlp is None:
        hashed = min(layers, r.whole("num_hash_layers", minimum=0, default=3))
        mlp = ["hash_moe"] * hashed + ["moe"] * (layers - hashed)
    else:
        r.get("num_hash_layers")  # read, unused: mlp_layer_types wins
    hashed = _kinds_of(r, "mlp_layer_types", mlp, {"hash_moe": "h", "moe": "m"}, layers).count("h")
    kv = r.get("num_key_value_heads")
    if kv not in (None, 1):
        r.notes.append(Text(N_("num_key_value_heads {kv} is not read: transformers 5.24's deepseek_v4 projects one "
                               "key/value head for every query head"), kv=kv))
    shared = r.get("n_shared_experts")
    if shared not in (None, 1):
        r.notes.append(Text(N_("n_shared_experts {n} is not read: transformers 5.24's deepseek_v4 builds one shared "
                               "expert of moe_intermediate_size"), n=shared))
    head_dim = r.whole("head_dim")
    rope = r.get("qk_rope_head_dim")
    factor = r.get("partial_rotary_factor")
    rope = rope if rope is not None else int(head_dim * factor) if isinstance(factor, (int, float)) else head_dim // 8
    if r.get("num_nextn_predict_layers"):
        _note_mtp_not_built(r)
    if any(k.startswith("dspark_") for k in r.raw):
        r.used.update(k for k in r.raw if k.startswith("dspark_"))
        r.notes.append(Text(N_("the checkpoint's speculative-decoding stages (dspark_*) are not counted: transformers "
                               "5.24 does not build them")))
    fm = r.whole("moe_intermediate_size")
    return dict(hidden=r.whole("hidden_size"), layers=layers, heads=r.whole("num_attention_heads"), kv_heads=1,
                head_dim=head_dim, q_lora_rank=r.whole("q_lora_rank"), rope_head_dim=_whole("qk_rope_head_dim", rope),
                vocab=r.whole("vocab_size"), ffn=fm, max_positions=r.opt_whole("max_position_embeddings") or 0,
                compressed_attention=True, attention_sinks=True, o_groups=r.whole("o_groups"),
                o_lora_rank=r.whole("o_lora_rank"), sliding_window=r.whole("sliding_window"), layer_types=letters,
                csa_rate=_whole("compress_rates", rates.get("compressed_sparse_attention", 4)),
                hca_rate=_whole("compress_rates", rates.get("heavily_compressed_attention", 128)),
                index_heads=r.whole("index_n_heads"), index_head_dim=r.whole("index_head_dim"),
                index_topk=r.whole("index_topk"), hyper_streams=r.whole("hc_mult"), experts=r.whole("n_routed_experts"),
                experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm, shared_expert_ffn=fm,
                mlp_bias=r.flag("mlp_bias"), router_score_bias=True, hash_layers=hashed,
                tied_embeddings=r.flag("tie_word_embeddings"))


# DeepSeek-V4's fp8 checkpoints keep the compressors' and the indexers' projections in bf16 (no scale) and its
# experts in fp4 when expert_dtype says so
_V4_BF16 = ("compressor.kv_proj", "compressor.gate_proj", "indexer.kv_proj", "indexer.gate_proj",
            "scorer.weights_proj", "lm_head")


def _v4_quantization(cfg: dict, quant):
    """DeepSeek-V4's fp8 checkpoint as its release stores it: the routed experts in fp4 (V4-Flash's file says
    ``expert_dtype: fp4``; V4-Pro's says nothing and stores them so too: its tensor listing), unless ``expert_dtype``
    names another dtype; the compressors, the indexers' kv/gate/weight projections and the LM head in bf16."""
    expert = cfg.get("expert_dtype")
    if isinstance(cfg.get("quantization_config"), dict):
        expert = cfg["quantization_config"].get("expert_dtype", expert)
    if quant is None or quant.method != "fp8":
        return quant
    fp4 = expert in (None, "fp4")
    return replace(quant, skip=tuple(quant.skip) + _V4_BF16, expert_fp4=fp4,
                   label=Text(N_("{label}; experts fp4 (e2m1, an e8m0 scale per 32)"), label=quant.label) if fp4 else
                   quant.label)


def _read_jais2(r: _Read) -> dict:
    """Jais 2: Llama's attention with ``attention_bias`` (on by default) on all four projections, Nemotron's MLP
    (up_proj, ReLU², down_proj, with ``mlp_bias``, on by default) and LayerNorms with a bias."""
    return _biased(r, mlp="plain", mlp_bias=r.flag("mlp_bias"), norm="layer")


def _granite_windows(r: _Read, c: dict) -> dict:
    """Granite's sliding-window variants: a learned sink per head, sliding layers by ``layer_types``, else every
    layer but each fourth (from the first)."""
    w = r.opt_whole("sliding_window", minimum=0)
    _explicit_or(r, c, ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(c["layers"])], w)
    c["attention_sinks"] = True
    return c


def _read_granite_swa(r: _Read) -> dict:
    """Granite SWA: Granite's block with a learned per-head attention sink and sliding layers."""
    return _granite_windows(r, _read_llama(r))


def _read_granitemoe_swa(r: _Read) -> dict:
    """Granite MoE SWA: Granite MoE with a shared expert (``shared_intermediate_size``), learned per-head attention
    sinks and sliding layers."""
    return _granite_windows(r, _read_granitemoeshared(r))


def _read_kolibri1(r: _Read) -> dict:
    """Kolibri 1: EXAONE 4's attention (qk-norm on head_dim, no biases), GLM-4's four norms per layer, a mixture in
    every layer with a shared expert (``shared_expert_intermediate_size``) and a score-correction buffer; sliding
    layers by ``layer_types``, else every fifth layer full."""
    c = _common(r, ffn_key="moe_intermediate_size")
    w = r.opt_whole("sliding_window", minimum=0)
    _explicit_or(r, c, ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(c["layers"])], w)
    c.update(qk_norm="head", norms_per_layer=4, experts=r.whole("num_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=c["ffn"],
             shared_expert_ffn=r.whole("shared_expert_intermediate_size", minimum=0), router_score_bias=True)
    return c


def _read_lfm2(r: _Read) -> dict:
    """LFM2 (``lfm2``, ``lfm2_moe``): gated short-convolution layers (``conv``: in_proj to B|C|x, a depthwise
    convolution of B·x over ``conv_L_cache`` inputs, C times its output, out_proj) and attention layers with qk-norm
    on head_dim, by ``layer_types`` (or, dense LFM2 only, ``full_attn_idxs``). Dense LFM2's SwiGLU MLP width is
    adjusted as LFM2 does (2/3 of ``intermediate_size``, times ``block_ffn_dim_multiplier``, rounded up to
    ``block_multiple_of``) unless ``block_auto_adjust_ff_dim`` is false; its first checkpoints' spellings
    (``block_ff_dim``, ``tie_embedding``) win over the new ones, as its config class pops them over its fields.
    LFM2-MoE: the first ``num_dense_layers`` MLPs dense (``intermediate_size``), the rest ``num_experts`` experts of
    ``moe_intermediate_size``, an expert-bias buffer when ``use_expert_bias``."""
    moe = r.family == "lfm2_moe"
    old_ffn = not moe and r.has("block_ff_dim")
    c = _common(r, ffn_key="block_ff_dim" if old_ffn else "intermediate_size")
    if old_ffn:
        r.get("intermediate_size")  # read, unused: block_ff_dim wins
    layers, h = c["layers"], c["hidden"]
    kinds = _type_list(r, "layer_types", {"conv": "V", "full_attention": "F"}, layers)
    if kinds is None and moe:
        raise InputError(N_("an lfm2_moe config.json needs 'layer_types' (conv or full_attention for each layer)"))
    if kinds is None:
        full = set(r.ints("full_attn_idxs")) if r.get("full_attn_idxs") is not None else set(range(layers))
        kinds = ["F" if i in full else "V" for i in range(layers)]
    elif not moe:
        r.get("full_attn_idxs")  # read, unused: layer_types wins
    if r.has("tie_embedding"):
        c["tied_embeddings"] = r.flag("tie_embedding")
    b = r.flag("conv_bias")
    mixer = ShortConv(conv=r.whole("conv_L_cache"), inner=h, conv_bias=b, in_bias=b, out_bias=b)
    c.update(qk_norm="head", layer_types="".join(kinds))
    if "V" in kinds:  # (every layer attention: no mixer, as LFM2's defaults have it)
        c["mixer"] = mixer
    if moe:
        c.update(experts=r.whole("num_experts"), experts_per_token=r.whole("num_experts_per_tok"),
                 expert_ffn=r.whole("moe_intermediate_size"), router_score_bias=r.flag("use_expert_bias", True),
                 moe_layers=moe_pattern(layers, first_dense=min(r.whole("num_dense_layers", minimum=0), layers)))
        return c
    ffn = c["ffn"]
    mult, multiple = r.get("block_ffn_dim_multiplier"), r.get("block_multiple_of")  # read even when not applied
    if r.flag("block_auto_adjust_ff_dim", True):
        ffn = int(2 * ffn / 3)
        if mult is not None:
            if isinstance(mult, bool) or not isinstance(mult, (int, float)) or mult <= 0:
                raise InputError(N_("config.json field {key!r} must be a positive number"),
                                 key="block_ffn_dim_multiplier")
            m = _whole("block_multiple_of", multiple)
            ffn = m * ((int(mult * ffn) + m - 1) // m)
    c["ffn"] = _whole("the adjusted MLP width", ffn)
    return c


def _read_lfm3(r: _Read) -> dict:
    """LFM3: LFM2's gated short-convolution layers beside full and sliding attention layers (by ``layer_types``, else
    layer 2 of every 4 full and layer 0 of every 4 but the first sliding), qk-norm on head_dim and, with
    ``use_attention_gate``, a sigmoid gate per head on the attention output (g_proj); four norms per layer with
    ``use_sandwich_norm``; a SwiGLU MLP of ``intermediate_size`` (no width adjustment: its config class drops LFM2's
    ``block_*`` keys)."""
    c = _common(r)
    layers = c["layers"]
    kinds = _type_list(r, "layer_types", {"conv": "V", "full_attention": "F", "sliding_attention": "S"}, layers)
    if kinds is None:
        kinds = ["F" if i % 4 == 2 else "S" if i % 4 == 0 and i > 0 else "V" for i in range(layers)]
    w = r.opt_whole("sliding_window", minimum=0)  # read either way: without sliding layers it changes nothing
    if "S" in kinds:
        if not w:
            raise InputError(N_("layer_types has sliding layers but sliding_window is null"))
        c["sliding_window"] = w
    b = r.flag("conv_bias")
    c.update(qk_norm="head", layer_types="".join(kinds), attn_gate="head" if r.flag("use_attention_gate", True) else "",
             norms_per_layer=4 if r.flag("use_sandwich_norm", True) else 2, qkv_bias=r.flag("attention_bias"),
             o_bias=r.flag("attention_bias"))
    if "V" in kinds:
        c["mixer"] = ShortConv(conv=r.whole("conv_L_cache"), inner=c["hidden"], conv_bias=b, in_bias=b, out_bias=b)
    return c


def _read_laguna(r: _Read) -> dict:
    """Laguna: attention with qk-norm on head_dim, ``attention_bias`` on all four projections and a softplus gate on
    its output (g_proj: one per head, or one per element with ``gating: "per-element"``), sliding layers by
    ``layer_types`` (none by default); the first MLP dense (``intermediate_size``), then ``num_experts`` experts of
    ``moe_intermediate_size`` with a shared one of ``shared_expert_intermediate_size`` and a score-correction
    *parameter* (counted), by ``mlp_layer_types``. A per-layer head count (``num_attention_heads_per_layer``) is read
    when every layer has the same."""
    c = _common(r)
    layers = c["layers"]
    per = r.get("num_attention_heads_per_layer")
    if per is not None:
        if not isinstance(per, list) or len(per) != layers or len(set(map(repr, per))) != 1:
            raise InputError(N_("num_attention_heads_per_layer must give every one of the {layers} layers the same head "
                                "count: one per layer is not read here"), layers=layers)
        c["heads"] = _whole("num_attention_heads_per_layer", per[0])
    gating = r.get("gating")
    if gating is None:
        gating = True
    if gating not in (True, "per-head", "per-element"):
        raise InputError(N_("config.json field 'gating' must be true, \"per-head\" or \"per-element\", got {v!r}"),
                         v=gating)
    ab = r.flag("attention_bias")
    w = r.opt_whole("sliding_window", minimum=0)
    _explicit_or(r, c, None, w)
    moe = _type_list(r, "mlp_layer_types", {"sparse": "M", "dense": "D"}, layers)
    fm = r.whole("moe_intermediate_size")
    c.update(qk_norm="head", qkv_bias=ab, o_bias=ab, attn_gate="element" if gating == "per-element" else "head",
             experts=r.whole("num_experts"), experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("shared_expert_intermediate_size", minimum=0), router_score_bias=True,
             score_bias_param=True, moe_layers="".join(moe) if moe else "D" + "M" * (layers - 1))
    return c


def _read_afmoe(r: _Read) -> dict:
    """AFMoE (Arcee's Trinity): Llama's attention with qk-norm on head_dim and a sigmoid output gate (its own
    ``gate_proj``, hidden → heads × head_dim), four norms per layer; sliding layers by ``layer_types``, else every
    ``global_attn_every_n_layers``-th layer full; the first ``num_dense_layers`` MLPs dense, then ``num_experts``
    experts with ``num_shared_experts`` shared ones and an expert-bias *parameter* (counted, not trained)."""
    c = _common(r)
    if r.flag("attention_bias"):
        raise InputError(N_("afmoe with attention_bias is not read: its output gate has no bias, and this estimator "
                            "counts the gate with q_proj"))
    layers = c["layers"]
    n = r.whole("global_attn_every_n_layers", default=4)
    w = r.opt_whole("sliding_window", minimum=0)
    _explicit_or(r, c, ["sliding_attention" if (i + 1) % n else "full_attention" for i in range(layers)], w)
    fm = r.whole("moe_intermediate_size")
    c.update(qk_norm="head", attn_output_gate=True, norms_per_layer=4, experts=r.whole("num_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("num_shared_experts", minimum=0) * fm, router_score_bias=True,
             score_bias_param=True,
             moe_layers=moe_pattern(layers, first_dense=min(r.whole("num_dense_layers", minimum=0), layers)))
    return c


def _read_hy_v3(r: _Read) -> dict:
    """Hunyuan 3 (``hy_v3``): Apertus's attention (qk-norm on head_dim, ``attention_bias`` on all four
    projections), SwiGLU MLPs with ``mlp_bias``; dense layers by ``mlp_layer_types`` (the first by default), the rest
    ``num_experts`` routed experts of ``moe_intermediate_size`` beside ``num_shared_experts`` shared ones, sigmoid
    routing with a score-correction buffer."""
    c = _common(r)
    fm = r.whole("moe_intermediate_size")
    ab = r.flag("attention_bias")
    c.update(qkv_bias=ab, o_bias=ab, qk_norm="head", mlp_bias=r.flag("mlp_bias"), experts=r.whole("num_experts"),
             experts_per_token=r.whole("num_experts_per_tok"), expert_ffn=fm,
             shared_expert_ffn=r.whole("num_shared_experts", minimum=0) * fm, router_score_bias=True,
             moe_layers=_mlp_layer_types(r, c["layers"], 1))
    return c


def _read_gptj(r: _Read) -> dict:
    """GPT-J (``gptj``) and CodeGen (``codegen``, q|k|v in one stored matrix): attention and MLP side by side after one
    LayerNorm, no attention biases, an MLP of fc_in, GELU and fc_out with biases (``n_inner``, else 4 × hidden), rotary
    positions, an LM head with a bias."""
    h = r.whole("n_embd")
    heads = r.whole("n_head")
    if h % heads:
        raise InputError(N_("n_embd {h} must be a multiple of n_head {heads}"), h=h, heads=heads)
    inner = r.get("n_inner")
    return dict(layers=r.whole("n_layer"), hidden=h, heads=heads, head_dim=h // heads,
                ffn=4 * h if inner is None else _whole("n_inner", inner), vocab=r.whole("vocab_size"), mlp="plain",
                mlp_bias=True, norm="layer", norms_per_layer=1, parallel_block=True, lm_head_bias=True,
                fused_qkv=r.family == "codegen", tied_embeddings=r.flag("tie_word_embeddings"),
                max_positions=r.opt_whole("n_positions") or 0)


def _read_persimmon(r: _Read) -> dict:
    """Persimmon: q|k|v in one stored matrix and the output projection, both with biases, LayerNorms (with biases)
    on each head's queries and keys (``qk_layernorm``), an MLP of up, ReLU² and down with biases."""
    c = _common(r, head_dim_key=False)
    c.update(kv_heads=c["heads"], qkv_bias=True, o_bias=True, mlp="plain", mlp_bias=True, norm="layer",
             fused_qkv=True, qk_norm="head" if r.flag("qk_layernorm", True) else "none")
    return c


def _read_stablelm(r: _Read) -> dict:
    """StableLM (2): Llama's SwiGLU MLP and attention with q/k/v biases by ``use_qkv_bias``, LayerNorms with biases,
    attention and MLP side by side after one norm when ``use_parallel_residual``."""
    c = _common(r, head_dim_key=False)
    if r.flag("qk_layernorm"):
        raise InputError(N_("stablelm with qk_layernorm is not read: its per-head LayerNorms have no bias while its "
                            "block's have one, which the qk-norm kinds here do not describe"))
    parallel = r.flag("use_parallel_residual")
    c.update(qkv_bias=r.flag("use_qkv_bias"), norm="layer", parallel_block=parallel,
             norms_per_layer=1 if parallel else 2)
    return c


def _read_gpt_neo(r: _Read) -> dict:
    """GPT-Neo: learned positions, q/k/v without biases and out_proj with one, an MLP of c_fc, GELU and c_proj with
    biases (``intermediate_size``, else 4 × hidden), LayerNorms. Its local layers (``attention_layers``) are a mask on
    full attention in transformers (every key multiplied, every key cached): read as full layers, with a note."""
    h = r.whole("hidden_size")
    heads = r.whole("num_attention_heads")
    if h % heads:
        raise InputError(N_("hidden_size {h} must be a multiple of num_heads {heads}"), h=h, heads=heads)
    layers = r.whole("num_hidden_layers")
    inner = r.get("intermediate_size")
    kinds = r.get("attention_layers")
    types = r.get("attention_types")  # the same pattern, compressed: [[["global", "local"], repeats], ...]
    if kinds is None and isinstance(types, list):
        kinds = [k for unit in types if isinstance(unit, list) and len(unit) == 2 and isinstance(unit[0], list)
                 for k in unit[0]]
    window = r.opt_whole("window_size")
    if isinstance(kinds, list) and "local" in kinds and window:
        r.notes.append(Text(N_("gpt_neo's local layers attend to the last {window} tokens through a mask on full "
                               "attention, as transformers runs them: counted as full layers (every key multiplied "
                               "and cached)"), window=window))
    positions = r.whole("max_position_embeddings")
    return dict(layers=layers, hidden=h, heads=heads, head_dim=h // heads,
                ffn=4 * h if inner is None else _whole("intermediate_size", inner), vocab=r.whole("vocab_size"),
                mlp="plain", mlp_bias=True, norm="layer", o_bias=True, tied_embeddings=r.flag("tie_word_embeddings", True),
                learned_positions=positions, max_positions=positions)


def _read_mpt(r: _Read) -> dict:
    """MPT as transformers builds it: ALiBi (no position table), q|k|v in one stored matrix, no biases, LayerNorms
    without a bias, an MLP of up (4 × hidden), GELU and down; the head tied by default. ``attn_config`` is read for
    what transformers uses of it (nothing that changes a count); an ``expansion_ratio`` other than 4 is named, as
    transformers' MPT keeps 4."""
    h = r.whole("d_model")
    heads = r.whole("n_heads")
    if h % heads:
        raise InputError(N_("d_model {h} must be a multiple of n_heads {heads}"), h=h, heads=heads)
    att = r.get("attn_config")
    if att is not None and not isinstance(att, dict):
        raise InputError(N_("config.json field {key!r} must be an object"), key="attn_config")
    ratio = r.get("expansion_ratio")
    if ratio not in (None, 4):
        r.notes.append(Text(N_("expansion_ratio {ratio} is not read: transformers' MPT builds its MLP 4 × d_model wide"),
                            ratio=ratio))
    return dict(layers=r.whole("n_layers"), hidden=h, heads=heads, head_dim=h // heads, ffn=4 * h,
                vocab=r.whole("vocab_size"), mlp="plain", norm="layer_weight", fused_qkv=True, alibi=True,
                tied_embeddings=r.flag("tie_word_embeddings", True), max_positions=r.opt_whole("max_seq_len") or 0)


# DbrxAttentionConfig's and DbrxFFNConfig's defaults (transformers 5.24) of the keys that change a count
_DBRX_ATTN = dict(kv_n_heads=1)
_DBRX_FFN = dict(ffn_hidden_size=3584, moe_num_experts=4, moe_top_k=1)


def _dbrx_block(r: _Read, key: str, defaults: dict) -> dict:
    """A DBRX sub-config (``attn_config``, ``ffn_config``): its keys that change a count, each a whole number."""
    block = r.get(key)
    if block is None:
        block = {}
    if not isinstance(block, dict):
        raise InputError(N_("config.json field {key!r} must be an object"), key=key)
    return {k: _whole(f"{key}.{k}", block.get(k, d) if block.get(k) is not None else d) for k, d in defaults.items()}


def _read_dbrx(r: _Read) -> dict:
    """DBRX: q|k|v in one stored matrix (``Wqkv``, no bias) with ``attn_config.kv_n_heads`` KV heads, LayerNorms
    without a bias (two per layer), and in every layer a router over ``ffn_config.moe_num_experts`` GLU experts of
    ``ffn_hidden_size`` (stored as three [experts × width, hidden] parameters), ``moe_top_k`` per token."""
    h, heads = r.whole("d_model"), r.whole("n_heads")
    if h % heads:
        raise InputError(N_("d_model {h} must be a multiple of n_heads {heads}"), h=h, heads=heads)
    att, ffn = _dbrx_block(r, "attn_config", _DBRX_ATTN), _dbrx_block(r, "ffn_config", _DBRX_FFN)
    e, k = ffn["moe_num_experts"], ffn["moe_top_k"]
    return dict(layers=r.whole("n_layers"), hidden=h, heads=heads, kv_heads=att["kv_n_heads"], head_dim=h // heads,
                ffn=ffn["ffn_hidden_size"], vocab=r.whole("vocab_size"), norm="layer_weight", fused_qkv=True,
                experts=e if e > 1 else 0, experts_per_token=k if e > 1 else 0,
                tied_embeddings=r.flag("tie_word_embeddings"), max_positions=r.opt_whole("max_seq_len") or 0)


def _read_bloom(r: _Read) -> dict:
    """BLOOM: ALiBi, a LayerNorm right after the token embedding, q|k|v in one stored matrix, biases on every linear,
    a 4 × hidden GELU MLP, LayerNorms with a bias; the head tied by default."""
    h, heads = r.whole("hidden_size"), r.whole("n_head")
    if h % heads:
        raise InputError(N_("hidden_size {h} is not divisible by {heads} heads and config.json gives no head_dim"),
                         h=h, heads=heads)
    return dict(layers=r.whole("n_layer"), hidden=h, heads=heads, head_dim=h // heads, ffn=4 * h,
                vocab=r.whole("vocab_size"), mlp="plain", mlp_bias=True, qkv_bias=True, o_bias=True, norm="layer",
                fused_qkv=True, alibi=True, embedding_norm=True, tied_embeddings=r.flag("tie_word_embeddings", True))


def _read_opt(r: _Read) -> dict:
    """OPT: a learned position table of ``max_position_embeddings`` + 2 rows (its positions start at 2), biases on every
    linear with ``enable_bias``, a ReLU MLP of ``ffn_dim``, LayerNorms (without parameters unless
    ``layer_norm_elementwise_affine``) before attention and MLP; the head tied by default. OPT-350m's layout (an
    embedding narrower than the model, projected in and out: ``word_embed_proj_dim``; norms after each block, no final
    norm: ``do_layer_norm_before`` false) is refused with the reason."""
    c = _common(r, head_dim_key=False, ffn_key="ffn_dim", kv_key=False)
    proj = r.opt_whole("word_embed_proj_dim", minimum=1)
    if proj is not None and proj != c["hidden"]:
        raise InputError(N_("OPT with word_embed_proj_dim {proj} ≠ hidden_size {h} (OPT-350m: the embedding projected in "
                            "and out) is not read"), proj=proj, h=c["hidden"])
    if not r.flag("do_layer_norm_before", True) or r.flag("_remove_final_layer_norm"):
        raise InputError(N_("OPT with its norms after each block and no final norm (do_layer_norm_before false: "
                            "OPT-350m) is not read"))
    b = r.flag("enable_bias", True)
    c.update(learned_positions=c["max_positions"] + 2, qkv_bias=b, o_bias=b, mlp_bias=b, mlp="plain",
             norm="layer" if r.flag("layer_norm_elementwise_affine", True) else "plain",
             tied_embeddings=r.flag("tie_word_embeddings", True))
    return c


def _read_biogpt(r: _Read) -> dict:
    """BioGPT: OPT's block (a position table of ``max_position_embeddings`` + 2 rows, biases on every linear,
    LayerNorms before attention and MLP and a final one) with a GELU MLP of ``intermediate_size``; the head tied."""
    c = _common(r, head_dim_key=False, kv_key=False)
    c.update(learned_positions=c["max_positions"] + 2, qkv_bias=True, o_bias=True, mlp_bias=True, mlp="plain",
             norm="layer", tied_embeddings=r.flag("tie_word_embeddings", True))
    return c


def _read_xglm(r: _Read) -> dict:
    """XGLM: fixed sinusoidal positions added to the (scaled) embedding, LayerNorms before attention and MLP and a
    final one, biases on every projection, a GELU MLP of ``ffn_dim``; the head tied."""
    h, heads = r.whole("d_model"), r.whole("attention_heads")
    if h % heads:
        raise InputError(N_("d_model {h} must be a multiple of attention_heads {heads}"), h=h, heads=heads)
    if r.flag("add_cross_attention"):
        raise InputError(N_("xglm with add_cross_attention (an encoder-decoder's cross-attention) is not read"))
    return dict(hidden=h, layers=r.whole("num_layers"), heads=heads, ffn=r.whole("ffn_dim"), vocab=r.whole("vocab_size"),
                max_positions=r.opt_whole("max_position_embeddings") or 0, qkv_bias=True, o_bias=True, mlp_bias=True,
                mlp="plain", norm="layer", sinusoidal=True, tied_embeddings=r.flag("tie_word_embeddings", True))

def _read_ctrl(r: _Read) -> dict:
    """CTRL: fixed sinusoidal positions, LayerNorms before attention and MLP and a final one, biases on every
    projection, a ReLU MLP of ``dff``; the head tied to the embedding, with a bias of its own."""
    h, heads = r.whole("n_embd"), r.whole("n_head")
    if h % heads:
        raise InputError(N_("n_embd {h} must be a multiple of n_head {heads}"), h=h, heads=heads)
    return dict(hidden=h, layers=r.whole("n_layer"), heads=heads, ffn=r.whole("dff"), vocab=r.whole("vocab_size"),
                max_positions=r.opt_whole("n_positions") or 0, qkv_bias=True, o_bias=True, mlp_bias=True, mlp="plain",
                norm="layer", sinusoidal=True, lm_head_bias=True, tied_embeddings=r.flag("tie_word_embeddings", True))

_READERS = {
    "llama": _read_llama, "granite": _read_llama, "granite4_vision_text": _read_llama, "granitemoe": _read_granitemoe, "mistral": _read_mistral,
    "ministral": _read_ministral, "mixtral": _read_mixtral, "qwen2": _read_qwen2, "qwen2_moe": _read_qwen2_moe,
    "qwen3": _read_qwen3, "qwen3_moe": _read_qwen3_moe, "gemma": _read_gemma, "gemma2": _read_gemma2,
    "gemma3_text": _read_gemma3_text, "phi": _read_phi, "phi3": _read_phi3, "phi4_multimodal": _read_phi3,
    "gpt_neox_japanese": _read_gpt_neox_japanese, "rwkv": _read_rwkv, "inkling_text": _read_inkling_text,
    "inkling2_text": _read_inkling2_text, "inkling2_loop_text": _read_inkling2_loop_text, "dory": _read_dory,
    "hrm_text": _read_hrm_text, "deepseek_ocr2_text": _read_deepseek_ocr2_text,
    "molmo2_text": _read_molmo2_text, "phimoe": _read_phimoe,
    "deepseek_v2": _read_deepseek, "deepseek_v3": _read_deepseek, "mistral4": _read_deepseek, "olmo": _read_olmo, "olmo2": _read_olmo2,
    "olmo3": _read_olmo2, "olmoe": _read_olmoe, "cohere": _read_cohere, "cohere2": _read_cohere,
    "internlm2": _read_internlm2, "falcon": _read_falcon, "gpt_neox": _read_gpt_neox, "starcoder2": _read_starcoder2,
    "gpt2": _read_gpt2, "gpt_bigcode": _read_gpt2, "gpt_oss": _read_gpt_oss, "glm4_moe": _read_glm4_moe,
    "llama4_text": _read_llama4_text, "smollm3": _read_smollm3, "exaone4": _read_exaone4,
    "ernie4_5_moe": _read_ernie4_5_moe, "glm4_moe_lite": _read_glm4_moe_lite, "qwen3_vl_text": _read_qwen3,
    "qwen3_vl_moe_text": _read_qwen3_moe, "qwen3_next": _read_qwen3_next, "jamba": _read_jamba,
    "nemotron_h": _read_nemotron_h, "falcon_h1": _read_falcon_h1, "seed_oss": _read_seed_oss,
    "ernie4_5": _read_ernie4_5, "glm": _read_glm, "glm4": _read_glm, "ministral3": _read_ministral3,
    "apertus": _read_apertus, "minimax_m2": _read_minimax_m2, "qwen3_5_text": _read_qwen3_5,
    "qwen3_5_moe_text": _read_qwen3_5, "qwen4_exp_text": _read_qwen4_exp_text, "dots3_note_text": _read_dots3_note_text, "zaya": _read_zaya, "step3p5": _read_step3p5, "mistral_large4_text": _read_mistral_large4_text, "glm5_next_text": _read_glm5_next_text,
    "ernie4_5_vl_moe_text": _read_ernie4_5_vl_moe_text, "chameleon": _read_chameleon, "diffllama": _read_diffllama, "modernbert-decoder": _read_modernbert_decoder, "jetmoe": _read_jetmoe, "zamba": _read_zamba, "zamba2": _read_zamba2, "hunyuan_v1_dense": _read_hunyuan_v1_dense, "arcee": _read_arcee,
    "exaone": _read_llama, "flex_olmo": _read_flex_olmo, "dots1": _read_dots1, "deepseek_v32": _read_deepseek_v32,
    "granitemoehybrid": _read_granitemoehybrid, "glm_moe_dsa": _read_deepseek_v32, "internlm3": _read_llama,
    "iquestcoder": _read_llama, "sarvam_moe": _read_glm4_moe, "sarvam_mla": _read_deepseek, "helium": _read_helium,
    "cwm": _read_cwm, "solar_open": _read_solar_open, "youtu": _read_youtu, "hunyuan_v1_moe": _read_hunyuan_v1_moe,
    "vaultgemma": _read_vaultgemma, "granitemoeshared": _read_granitemoeshared, "exaone_moe": _read_exaone_moe,
    "cohere2_moe": _read_cohere2_moe, "nemotron": _read_nemotron, "granite_swa": _read_granite_swa,
    "granitemoe_swa": _read_granitemoe_swa, "kolibri1": _read_kolibri1, "lfm2": _read_lfm2, "lfm2_moe": _read_lfm2,
    "bamba": _read_bamba, "afmoe": _read_afmoe, "hy_v3": _read_hy_v3, "minicpm3": _read_minicpm3, "gptj": _read_gptj,
    "codegen": _read_gptj, "persimmon": _read_persimmon, "stablelm": _read_stablelm, "gpt_neo": _read_gpt_neo,
    "mpt": _read_mpt, "gemma4_text": _read_gemma4_text, "gemma4_unified_text": _read_gemma4_unified_text,
    "gemma3n_text": _read_gemma3n_text, "jais2": _read_jais2, "mimo_v2_flash": _read_mimo_v2_flash,
    "lfm3": _read_lfm3, "laguna": _read_laguna, "dbrx": _read_dbrx, "bloom": _read_bloom, "opt": _read_opt,
    "biogpt": _read_biogpt, "deepseek_v4": _read_deepseek_v4, "mellum": _read_mellum, "nanochat": _read_nanochat,
    "hyperclovax": _read_hyperclovax, "flint": _read_flint, "axk1": _read_axk1, "axk2": _read_axk2, "beam": _read_beam,
    "lara_mini": _read_lara_mini, "olmo_hybrid": _read_olmo_hybrid, "recurrent_gemma": _read_recurrent_gemma, "apertus1p5_text": _read_apertus1p5_text, "hy_v4": _read_hy_v4,
    "hy_v4_vl_text": _read_hy_v4, "cosmos3_edge_text": _read_cosmos3_edge_text, "glm_ocr_text": _read_glm_ocr_text,
    "muse_glimmer_text": _read_muse_glimmer_text, "muse_spark_text": _read_muse_spark_text,
    "longcat_flash": _read_longcat_flash, "minimax": _read_minimax, "kimi_linear": _read_kimi_linear,
    "bailing_hybrid": _read_bailing_hybrid, "cohere_compass_text": _read_cohere, "mamba": _read_mamba,
    "minimax_m3_vl_text": _read_minimax_m3_vl_text, "mllama_text_model": _read_mllama_text_model,
    "falcon_mamba": _read_falcon_mamba, "mamba2": _read_mamba2, "bitnet": _read_bitnet, "aria_text": _read_aria_text,
    "xglm": _read_xglm, "ctrl": _read_ctrl, "emu3_text_model": _read_llama,
}
FAMILIES = tuple(_READERS)  # the decoder families (wrappers resolve to one of these)


def _wrapper_tied(cfg: dict, tc: dict, inner: dict, mtype: str, notes: list[str]) -> bool | None:
    """Whether a wrapper's LM head is its embedding, by its config class's rule (``tc``: the text config as the file
    gives it, ``inner``: as read so far); None: the text config's own flag decides."""
    top = cfg.get("tie_word_embeddings")
    if mtype in _NEVER_TIED:
        if top is True or inner.get("tie_word_embeddings") is True:
            notes.append(Text(N_("tie_word_embeddings is true, but transformers' {family} class never ties the LM head "
                                 "to the embedding: both counted"), family=mtype))
        return False
    if mtype in _TIE_FROM_TOP:  # (LFM2-VL's older files: tie_embedding)
        return cfg.get("tie_embedding" if mtype == "lfm2_vl" and "tie_embedding" in cfg else "tie_word_embeddings",
                       _TIE_FROM_TOP[mtype]) is True
    if mtype == "hunyuan_vl":  # tied unless the wrapper and its text config both say not (each True by default); the
        # flat layout's key moves into the text config, leaving the wrapper's own True
        return ("text_config" not in cfg or cfg.get("tie_word_embeddings", True) is True
                or tc.get("tie_word_embeddings", True) is True)
    if mtype == "paddleocr_vl":  # the checkpoint's own flag: the flat file's, else a pre-v5 text_config's; a v5
        # wrapper's flag ties with either true, as the config class does; none given ties (both classes' default)
        text = tc.get("tie_word_embeddings", True)
        nested_v5 = "text_config" in cfg and top is not None
        tied = (top is True or text is True) if nested_v5 else (text if "text_config" in cfg else top is not False) is True
        if not tied and not nested_v5:
            notes.append(Text(N_("tie_word_embeddings is false: the LM head is counted apart, as the checkpoint stores "
                                 "it (PaddleOCR-VL-0.9B's 1.8 GB); transformers 5.24's config class ties it unless the "
                                 "wrapper's own flag, outside text_config, says false")))
        return tied
    if mtype in _TIE_EITHER or mtype in _FLAT_WRAPPERS:  # either flag true ties (the class forwards text_config's)
        return True if top is True else None
    return None


def _unwrap(cfg: dict, mtype: str, notes: list[str], *, default_inner: str | None = None) -> tuple[dict, str, str]:
    """The decoder's config of a multimodal wrapper, its model_type and the wrapper's name."""
    tc = cfg.get("text_config")
    if tc is None and mtype == "internvl_chat":  # InternVL's remote code keeps its LLM's config in llm_config
        tc = cfg.get("llm_config")
        if not isinstance(tc, dict):
            raise InputError(N_("an internvl_chat config.json needs an 'llm_config' object (its LLM's fields)"))
    if tc is None and mtype == "fuyu":  # Fuyu's Hub file is flat: its config class moves only Persimmon's keys
        tc = {k: cfg[k] for k in _FUYU_TEXT_KEYS if k in cfg} | {"partial_rotary_factor": 0.5}
    if tc is None and mtype in _FLAT_WRAPPERS:  # the decoder's keys beside vision_config, as the Hub files keep them
        tc = {k: v for k, v in cfg.items() if k not in ("vision_config", "model_type", "architectures")}
    if not isinstance(tc, dict):
        if mtype == "gemma3" or mtype == "llama4":
            raise InputError(N_("a {mtype} config.json needs a 'text_config' object (the decoder's fields)"),
                             mtype=mtype)
        raise InputError(N_("a {mtype} config.json needs a 'text_config' object"), mtype=mtype)
    inner = dict(tc)
    if mtype == "hunyuan_vl":  # its text config's attribute_map: the legacy spelling wins, as setting it sets the field
        for alias, key in (("attention_head_dim", "head_dim"), ("org_vocab_size", "vocab_size")):
            if alias in inner and inner.get(key, inner[alias]) != inner[alias]:
                notes.append(Text(N_("{alias} ({value}) read as {key}, as HunYuan-VL's text config reads it; {key} "
                                     "({other}) is overridden"), alias=alias, key=key, value=inner[alias],
                                  other=inner[key]))
            if alias in inner:
                inner[key] = inner[alias]
    inner_type = str(inner.get("model_type") or default_inner or _WRAPPERS.get(mtype, "")).lower()
    inner_type = _LEGACY_TEXT.get(inner_type, inner_type)
    if inner_type not in _READERS:
        raise InputError(N_("{mtype}'s text_config has model_type {inner_type!r}, which is not supported"),
                         mtype=mtype, inner_type=inner_type)
    tied = _wrapper_tied(cfg, tc, inner, mtype, notes)
    if tied is not None:
        inner["tie_word_embeddings"] = tied
    for key in ("torch_dtype", "dtype", "quantization_config", "quantization"):
        if key in cfg and key not in inner:
            inner[key] = cfg[key]
    if mtype == "inkling_mm_model" and isinstance(cfg.get("mtp_config"), dict) and "num_mtp_layers" not in inner:
        inner["num_mtp_layers"] = cfg["mtp_config"].get("num_nextn_predict_layers")  # as the config class moves it
    audio = audio_params(mtype, cfg)
    if audio is not None:
        notes.append(Text(N_("{wrapper} has an audio tower (audio_config, {params:,} parameters): it runs once per audio "
                             "clip and is reported beside the decoder, not in its counts"), wrapper=mtype,
                          params=sum(audio.values())))
    elif isinstance(cfg.get("audio_config"), dict):
        notes.append(Text(N_("{wrapper} has an audio tower (audio_config): it runs once per audio clip and is not "
                             "counted"), wrapper=mtype))
    params = vision_params(mtype, cfg)
    source = (Text(N_("text_config, {decoder}"), decoder=inner_type) if isinstance(cfg.get("text_config"), dict) else
              Text(N_("the file's top-level keys, {decoder}"), decoder=inner_type) if mtype != "internvl_chat" else
              Text(N_("llm_config, {decoder}"), decoder=inner_type))
    if params is None and isinstance(cfg.get("vq_config"), dict):  # Emu3: images in and out as tokens of the vocabulary
        notes.append(Text(N_("{wrapper} is multimodal: its decoder ({source}) is counted; its image tokenizer "
                             "(vq_config, a VQ-VAE that turns images into tokens of the decoder's vocabulary and back) "
                             "runs once per image and is not"), wrapper=mtype, source=source))
    elif params is None:
        notes.append(Text(N_("{wrapper} is multimodal: its decoder ({source}) is counted, the vision tower and "
                             "projector are not"), wrapper=mtype, source=source))
    else:
        notes.append(Text(N_("{wrapper} is multimodal: its decoder ({source}) is counted; the vision tower and "
                             "projector ({params:,} parameters) run once per image: reported beside it, out of the "
                             "decoder's counts and FLOPs, in the memory its weights take"), wrapper=mtype,
                          source=source, params=sum(params.values())))
    return inner, inner_type, mtype


# A text_config's model_type that names the decoder family it is read as.
# Qwen2-VL / 2.5-VL: Qwen2's block with M-RoPE; GLM-4.1V / 4.6V: GLM-4-0414's, GLM-4.5V: GLM-4.5's (M-RoPE)
_LEGACY_TEXT: dict[str, str] = {"qwen2_vl_text": "qwen2", "qwen2_5_vl_text": "qwen2", "glm4v_text": "glm4",
                                "glm4v_moe_text": "glm4_moe", "qwen3_omni_moe_text": "qwen3_moe", "qwen2_5_omni_text": "qwen2",
                                "hunyuan_vl_text": "hunyuan_v1_dense",  # Qwen3-Omni's thinker, HunYuan-VL
                                "paddleocr_vl_text": "ernie4_5",  # PaddleOCR-VL: ERNIE-4.5's dense decoder
                                "granite_docling_text": "granite",  # Granite-Docling: Granite's decoder
                                "kimi_k2": "deepseek_v3",  # Kimi K2.5's Hub file: its remote text model_type
                                "exaone4_5_text": "exaone4"}  # EXAONE 4.5's older files
# The keys Fuyu's config class moves from its flat file into the Persimmon text config (its text spec's own defaults;
# the rest — rope_theta, partial_rotary_factor among them — stay with the wrapper, the text config's rotary fraction 0.5)
_FUYU_TEXT_KEYS = ("vocab_size", "max_position_embeddings", "hidden_size", "intermediate_size", "num_hidden_layers",
                   "num_attention_heads", "hidden_act", "initializer_range", "layer_norm_eps", "use_cache",
                   "qk_layernorm", "hidden_dropout", "attention_dropout", "eos_token_id")
# Wrappers whose Hub files keep the decoder's keys at the top level (the config class builds text_config from them).
_FLAT_WRAPPERS = ("qwen2_vl", "qwen2_5_vl", "dots3_note", "glm5_next", "hunyuan_vl", "paddleocr_vl")
# Wrappers whose own tie_word_embeddings a rule of _wrapper_tied reads
_TIES_READ = frozenset(_TIE_FROM_TOP) | frozenset(_TIE_EITHER) | frozenset(_NEVER_TIED) | frozenset(_FLAT_WRAPPERS)
# Keys whose presence together says "DeepSeek-V3 layout" (MLA + routed experts) whatever the model_type.
_MLA_KEYS = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "n_routed_experts")


def _architecture_family(cfg: dict) -> tuple[str | None, str]:
    """The family a config.json's ``architectures`` field names, and that class name."""
    archs = cfg.get("architectures")
    if isinstance(archs, str):
        archs = [archs]
    if not isinstance(archs, list):
        return None, ""
    for a in archs:
        if isinstance(a, str) and a in ARCHITECTURES:
            return ARCHITECTURES[a], a
    return None, next((a for a in archs if isinstance(a, str)), "")


def _recognise(cfg: dict, mtype: str, notes: list[str]) -> str:
    """The family to read a config.json as: its model_type when this estimator reads it, else the one its
    ``architectures`` field names, else one its structure shows (a text_config with a decoder it reads, MLA
    with routed experts); a refusal that says whether the family is known and not sized, or unrecognised."""
    if mtype in _READERS or mtype in _WRAPPERS:
        return mtype
    fam, arch = _architecture_family(cfg)
    if fam is not None:
        notes.append(Text(N_("model_type {mtype!r} is not a family transformers 5.24 defines; its architectures field "
                             "({arch}) is, and it is read as {family}"), mtype=mtype, arch=arch, family=fam))
        return fam
    tc = cfg.get("text_config")
    inner = str(tc.get("model_type", "")).lower() if isinstance(tc, dict) else ""
    if _LEGACY_TEXT.get(inner, inner) in _READERS:
        notes.append(Text(N_("model_type {mtype!r}: read by its structure, a wrapper around a {decoder} text_config"),
                          mtype=mtype, decoder=str(tc["model_type"]).lower()))
        return "(wrapper)"
    if all(k in cfg for k in _MLA_KEYS) and mtype not in TRANSFORMERS_MODEL_TYPES:
        notes.append(Text(N_("model_type {mtype!r}: read by its structure (multi-head latent attention and routed "
                             "experts) as deepseek_v3"), mtype=mtype))
        return "deepseek_v3"
    if mtype in NOT_SIZED:
        raise InputError(N_("model_type {mtype!r} is not supported: transformers 5.24 knows it, but it is not sized "
                            "here ({why})"), mtype=mtype, why=Text(NOT_SIZED[mtype]))
    if mtype in TRANSFORMERS_MODEL_TYPES:
        raise InputError(N_("model_type {mtype!r} is not supported: transformers 5.24 knows it, but no reader here is "
                            "checked against its modeling file yet; supported: {choices}"),
                         mtype=mtype, choices=", ".join(SUPPORTED_MODEL_TYPES))
    near = difflib.get_close_matches(mtype, list(SUPPORTED_MODEL_TYPES), n=1, cutoff=0.8)
    if near:
        raise InputError(N_("model_type {mtype!r} is not recognised: neither transformers 5.24 nor its architectures "
                            "field names it; did you mean {near!r}?"), mtype=mtype, near=near[0])
    raise InputError(N_("model_type {mtype!r} is not recognised: neither transformers 5.24 nor its architectures field "
                        "names it; supported: {choices}"), mtype=mtype, choices=", ".join(SUPPORTED_MODEL_TYPES))


def _mlx_quantization(cfg: dict, r: _Read):
    """An MLX checkpoint's ``quantization`` block ({"group_size", "bits", "mode", per-module overrides})."""
    q = cfg.get("quantization")
    r.used.add("quantization")
    if cfg.get("quantization_config") == q or (isinstance(cfg.get("quantization_config"), dict)
                                              and "quant_method" not in cfg["quantization_config"]):
        r.used.add("quantization_config")
    return from_mlx_quantization(q)


class _Seen(dict):
    """A config's top-level keys as a tower's count reads them, ``seen`` the present ones it read."""

    def __init__(self, cfg: dict):
        super().__init__(cfg)
        self.seen: set[str] = set()

    def get(self, key, default=None):
        if key in self:
            self.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.seen.add(key)
        return super().__getitem__(key)


def read_config(cfg: dict, name: str = "custom", source: str = "") -> tuple[ModelConfig, dict]:
    """A ModelConfig from a parsed config.json, and what was read: ``{"model_type", "wrapper",
    "dtype_source", "ignored_keys", "unknown_keys", "misspelled", "vision", "notes"}`` (see
    :func:`describe_read`)."""
    if not isinstance(cfg, dict):
        raise InputError(N_("config.json must hold a JSON object ({...}) at the top level"))
    mtype = cfg.get("model_type")
    if mtype is not None and not isinstance(mtype, str):
        raise InputError(N_("config.json field 'model_type' must be a text (e.g. \"llama\"), got {value}"),
                         value=repr(mtype) if isinstance(mtype, int | float | bool) else
                         ("a list" if isinstance(mtype, list) else "an object"))
    if not isinstance(mtype, str):
        fam, _ = _architecture_family(cfg)
        near = [k for k in cfg if isinstance(k, str) and k != "model_type"
                and difflib.get_close_matches(k, ["model_type"], cutoff=0.8)]
        if near:
            raise InputError(N_("config.json has no 'model_type' string field; it has {near!r}: a misspelling of "
                                "'model_type'?"), near=near[0])
        if fam is None:
            raise InputError(N_("config.json has no 'model_type' string field (e.g. \"llama\")"))
        mtype = fam
    mtype = mtype.strip().lower()
    notes: list[str] = []
    if mtype in _LEGACY:
        cfg = _legacy_falcon(cfg, mtype, notes)
        mtype = "falcon"
    if mtype == "mistral" and "layer_types" in cfg:  # as AutoConfig reads it: Ministral's alternating attention
        notes.append(Text(N_("model_type 'mistral' with layer_types: read as ministral, as transformers' AutoConfig "
                             "reads it (Mistral's class would ignore the per-layer types)")))
        mtype = "ministral"
    if mtype in ("qwen2_5_omni", "qwen3_omni_moe") and isinstance(cfg.get("thinker_config"), dict):  # the thinker is the LM
        notes.append(Text(N_("{mtype}: its thinker (thinker_config) is the language model sized here; the talker and the "
                             "decoder to a waveform that speak its answer are not counted"), mtype=mtype))
        mtype += "_thinker"
        cfg = dict(cfg["thinker_config"], model_type=mtype,
                   **{k: cfg[k] for k in ("torch_dtype", "dtype", "quantization_config") if k in cfg})
    remote = None
    if mtype in REMOTE_PORTS and mtype not in _READERS:  # remote code whose block a transformers port has
        remote = mtype
        cfg, mtype = translate_remote(cfg, mtype, notes)
    wrapper = None
    outer = cfg
    family = _recognise(cfg, mtype, notes)
    vision = None
    towers_read = _Seen(cfg)  # the top-level keys the towers' counts read: read, so never listed as ignored
    if family in _WRAPPERS or family == "(wrapper)":
        wrapper = mtype if family == "(wrapper)" else family
        vision = vision_params(wrapper, towers_read)
        audio = audio_params(wrapper, towers_read)
        cfg, mtype, wrapper = _unwrap(cfg, wrapper, notes)
    else:
        mtype = family
        audio = None
    if mtype == "phi4_multimodal":  # the decoder's keys at the top level, the image and audio towers beside them
        vision, audio = vision_params(mtype, towers_read), audio_params(mtype, towers_read)
        notes.append(Text(N_("phi4_multimodal is multimodal: its decoder (Phi-3's block, the top-level keys) is counted; "
                             "the image encoder ({vision:,} parameters) and the audio encoder ({audio:,}) with their "
                             "projectors run once per image or audio clip and are reported beside it, not in the "
                             "decoder's counts; the LoRA adapters its checkpoints ship apart are not counted"),
                          vision=sum(vision.values()), audio=sum(audio.values())))
    r = _Read(cfg, mtype, DEFAULTS.get(mtype, {}), ALIASES.get(mtype), defaults_for_shape=wrapper is not None)
    r.notes = notes
    fields_ = _READERS[mtype](r)
    if fields_.get("experts") and "M" not in fields_.get("moe_layers", "M"):
        for k in ("experts", "experts_per_token", "expert_ffn", "shared_expert_ffn", "moe_layers"):
            fields_.pop(k, None)
        for k in ("shared_expert_gate", "router_bias", "expert_bias", "router_score_bias", "score_bias_param"):
            fields_.pop(k, None)
        fields_.pop("experts_compute", None)
        r.notes.append(Text(N_("no layer is a mixture of experts (every layer is dense): read as a dense model")))
    dtype = _torch_dtype(r)
    quant = None
    q = cfg.get("quantization_config")
    if isinstance(cfg.get("quantization"), dict):
        quant = _mlx_quantization(cfg, r)
    elif q is not None:
        r.used.add("quantization_config")
        quant = from_quantization_config(q)
        if mtype == "deepseek_v4":
            quant = _v4_quantization(cfg, quant)
    fields_.setdefault("tied_embeddings", r.flag("tie_word_embeddings", False))
    tower = sum((vision or {}).values()) + sum((audio or {}).values())  # loaded beside the decoder (memory only)
    model = ModelConfig(family=mtype, name=name, source=source, dtype=dtype, quant=quant, tower_params=tower, **fields_)
    unused = sorted(k for k in cfg if k not in r.used and not (cfg is outer and k in towers_read.seen))
    if wrapper:
        read = ("text_config", "model_type") + (("tie_word_embeddings", "tie_embedding") if wrapper in _TIES_READ
                                                 else ()) + tuple(towers_read.seen)  # (the wrapper's flag: _unwrap's rule)
        unused += sorted(f"(top level) {k}" for k in outer if k not in read and k not in cfg)
    known = IRRELEVANT_KEYS | UNUSED_BY_FAMILY.get(mtype, frozenset()) | remote_unused(remote or "")
    ignored = [k for k in unused if k.removeprefix("(top level) ") in known]
    unknown = [k for k in unused if k.removeprefix("(top level) ") not in known]
    misspelled = {}
    for k in unknown:
        near = difflib.get_close_matches(k, sorted(r.asked - set(cfg)), n=1, cutoff=0.85)
        if near:
            misspelled[k] = near[0]
            shown = r.defaulted.get(near[0])
            r.notes.append(Text(N_("{key!r} is not a key transformers reads for {family}: a misspelling of {near!r}? "
                                   "{near!r} was taken as {value}"), key=k, family=mtype, near=near[0],
                                value=repr(shown) if shown is not None else Text(N_("not given"))))
    info = {"model_type": mtype, "wrapper": wrapper,
            "dtype_source": "torch_dtype" if dtype else "",
            "ignored_keys": ignored, "unknown_keys": unknown, "misspelled": misspelled,
            "defaults": dict(sorted(r.defaulted.items())), "vision": vision, "audio": audio, "notes": r.notes}
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
             vision=dict(info["vision"]) if info.get("vision") else None,
             audio=dict(info["audio"]) if info.get("audio") else None,
             misspelled=dict(info.get("misspelled", {})),
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


def _parse_json(data: bytes | str, file: str = "config.json") -> dict:
    """The JSON object in ``data``; ``file`` (the upload's or the path's name) names it in an error."""
    if isinstance(data, str):
        data = data.encode("utf-8", errors="replace")
    if len(data) > MAX_CONFIG_BYTES:
        raise InputError(N_("{file} is {n:,} bytes; a real config.json is a few kB (limit {limit:,})"),
                         file=file, n=len(data), limit=MAX_CONFIG_BYTES)
    if not data.strip():
        raise InputError(N_("{file} is empty"), file=file)
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(N_("{file} is not UTF-8 text"), file=file) from None
    except json.JSONDecodeError as e:
        raise not_json(e, file) from None
    except RecursionError:
        raise InputError(N_("{file} is nested too deeply to be a model configuration"), file=file) from None
    except ValueError as e:  # e.g. an integer of thousands of digits (Python's int conversion limit)
        raise InputError(N_("{file} holds a value that cannot be read: {reason}"), file=file,
                         reason=str(e).split(';')[0]) from None


def read_config_json(data: bytes | str, name: str = "uploaded", *, file_name: str | None = None
                     ) -> tuple[ModelConfig, dict]:
    """Parse the text of a config.json (an upload or a file) with size and type checks, and report
    what was read. ``file_name`` (an upload's): the model is named by :func:`upload_name` instead of ``name``."""
    cfg = _parse_json(data, _shown_file(file_name) if file_name is not None else "config.json")
    return read_config(cfg, name=upload_name(cfg, file_name) if file_name is not None else name)


def upload_name(cfg: object, file_name: str) -> str:
    """The name of an uploaded model: its file's name (``mistral-7b.json`` -> ``mistral-7b``), or, for the usual
    ``config.json``, the checkpoint it was saved from (``_name_or_path``'s last part: ``Llama-3.1-8B``), else its
    ``model_type`` (``llama (config.json)``). At most 80 characters, printable ones only."""
    def clean(text: str) -> str:
        return "".join(c for c in text if c.isprintable()).strip()[:80]

    stem = clean(str(file_name).rsplit("/", 1)[-1].removesuffix(".json"))
    if stem and stem.lower() != "config":
        return stem
    saved = cfg.get("_name_or_path") if isinstance(cfg, dict) else None
    if isinstance(saved, str) and clean(saved.rstrip("/").rsplit("/", 1)[-1]):
        return clean(saved.rstrip("/").rsplit("/", 1)[-1])
    mtype = cfg.get("model_type") if isinstance(cfg, dict) else None
    return f"{clean(mtype)} (config.json)" if isinstance(mtype, str) and clean(mtype) else "config.json"


def parse_config_json(data: bytes | str, name: str = "uploaded") -> ModelConfig:
    """Parse the text of a config.json (an upload or a file) with size and type checks."""
    return read_config_json(data, name=name)[0]


def _read_file(path: str) -> bytes:
    """A regular file only (not a FIFO or a device such as /dev/zero), at most MAX_CONFIG_BYTES read."""
    return read_regular(path, MAX_CONFIG_BYTES, what=f"--config {path}")


def _shown_file(name: str) -> str:
    """A file's name as an error shows it: printable characters, at most 60 (else "config.json")."""
    shown = "".join(ch for ch in str(name) if ch.isprintable())[:60]
    return shown or "config.json"


def _file_name(path: str) -> str:
    import os

    base = os.path.basename(path)
    if base.lower() in ("config.json", ""):
        return os.path.basename(os.path.dirname(os.path.abspath(path))) or "config"
    return base.removesuffix(".json")


def read_config_file(path: str) -> tuple[ModelConfig, dict]:
    """Read and parse a config.json from disk, and report what was read (the CLI's ``--config``)."""
    import os

    return read_config(_parse_json(_read_file(path), _shown_file(os.path.basename(path))), name=_file_name(path))


def load_config_file(path: str) -> ModelConfig:
    """Read and parse a config.json from disk (the CLI's ``--config``)."""
    return read_config_file(path)[0]
