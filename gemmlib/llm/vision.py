"""The vision tower of a vision-language wrapper: its exact parameter count, reported beside the decoder.

The estimator sizes the text decoder of a multimodal checkpoint (``text_config``); the vision encoder and its
projector run once per image, not per generated token, so they are reported apart: their parameters (and
the bytes they add to the checkpoint), never mixed into the decoder's FLOPs. Each count follows the vision
model transformers 5.24 builds for the wrapper (``models/<wrapper>/modeling_<wrapper>.py``), with the
vision config class's defaults for absent keys; ``tests/llm/test_families.py`` checks each against
``numel()`` of the parameters outside ``language_model`` and ``lm_head``.

* ``qwen3_vl`` / ``qwen3_vl_moe``: a Conv3d patch embedding, a learned position table, ``depth`` ViT blocks
  (fused qkv with bias, LayerNorms, a GELU MLP), the 2×2 patch merger and one merger per DeepStack layer;
  ``qwen3_5`` / ``qwen3_5_moe`` / ``qwen4_exp``: the same tower without the DeepStack mergers;
* ``gemma3``: SigLIP's vision transformer (patch Conv2d, position table, encoder, post-LayerNorm, the
  attention-pooling head when ``vision_use_head``) and Gemma 3's projector (a matrix and an RMSNorm);
* ``gemma4``: Gemma 4's vision encoder (linear patch embedding, a 2-D position table, blocks with head-dim q/k norms
  and a gated MLP) and its one-matrix projector; the audio tower of the small models is not counted (said so);
* ``dots3_note``: dots.note 3's tower (RMSNorms, fused-qkv blocks with q/k norms per head, dense SwiGLU MLPs, then
  layers of routed experts by ``mlp_layer_types`` and ``per_layer_config``) and its two-linear merger; the audio
  tower apart;
* ``emu3``: its image tokenizer (``vq_config``), the VQ-VAE the model holds: encoder, codebook, decoder;
* ``apertus1p5``: its image tokenizer (vision_config): a VQ-VAE's encoder, the convolution into the codebook, the codebook;
  the audio tokenizer apart;
* ``gemma4_unified``: Gemma 4 Unified's encoder-free image embedder (LayerNorms around a linear over each 48-pixel patch,
  a factorized 2-D position table, a one-matrix projector) and its audio projection (one matrix over raw frames);
* ``minimax_m3_vl``: MiniMax-M3's CLIP-like tower (a Conv3d patch embedding without bias, a LayerNorm before the
  blocks, blocks with biased q/k/v/out projections, two LayerNorms and a GELU MLP) and its projector (each patch through
  a two-layer GELU MLP to the text width, then the merged patches through a second one);
* ``mllama``: Llama 3.2 Vision's tower (a patch Conv2d without bias, a class embedding, gated position embeddings per
  patch and per tile and aspect ratio, tile embeddings before and after the encoder, LayerNorms, a local encoder and a
  gated global one, each block biased-MLP with q/k/v/o without biases) and its one-matrix projector from the
  concatenated intermediate layers (``vision_output_dim``) to the decoder's width;
* ``mistral3``: Pixtral's vision transformer (patch Conv2d, RMSNorms, gated MLP blocks without biases) and
  Mistral 3's projector (an RMSNorm, the 2×2 patch merger, two linears).

* ``ernie4_5_vl_moe``: ERNIE 4.5 VL's ViT (linear patch embedding, fused-qkv blocks) and its variable-resolution
  resampler (spatial and temporal MLPs over merged patches, a linear to the decoder's width, an RMSNorm);
* ``paddleocr_vl``: SigLIP's vision transformer without its pooling head, and a projector (a LayerNorm, the 2×2 merge,
  two biased linears);
* ``glm_ocr`` / ``glm5_next``: GLM-OCR's tower (q/k RMSNorms per head, a SwiGLU MLP, a strided 2×2 convolution and
  a SwiGLU merger);
* ``muse_spark`` / ``muse_glimmer``: Muse's ViT, its two-linear adapter and the projection (the audio tower apart);
* ``molmo2``: Molmo2's ViT and its adapter (attention pooling over chosen layers, a SwiGLU projector);
* ``cosmos3_edge``: SigLIP's blocks after a linear patch embedding, and a two-linear merger;
* ``hy_v4_vl``: HY-V4-VL's ViT and its convolutional merger straight to the decoder's width;
* ``hunyuan_vl``: HunYuan-VL's ViT and its convolutional merger with a linear to the decoder's width;
* ``aria``: Idefics3's vision transformer and Aria's cross-attention projector over learned queries;
* ``step3p7``: Step 3.7's ViT (layer-scaled blocks) with two strided convolutions and a one-matrix projector;
* ``llama4``: Llama 4's tower (an unfold-and-linear patch embedding, class and position embeddings, biased ViT blocks
  with a GELU MLP), its pixel-shuffle adapter (two linears) and the one-matrix projector to the decoder's width.
* LLaVA and the wrappers built like it (``llava``, ``llava_next``, ``llava_next_video``, ``llava_onevision``,
  ``vipllava``, ``video_llava``, ``paligemma``, ``aya_vision``, ``cohere2_vision``, ``lfm2_vl``, ``deepseek_vl``): the
  encoder vision_config's ``model_type`` names (CLIP, SigLIP, SigLIP 2, Pixtral; another is not counted) and each
  wrapper's projector; ``lighton_ocr`` and ``shieldgemma2``: Mistral 3's and Gemma 3's;
* towers of their own: ``hunyuan_vl``, ``internvl`` and ``qianfan_ocr`` (InternViT), ``kimi_k25`` (MoonViT),
  ``idefics3`` / ``smolvlm``, ``video_llama_3``, ``minicpmv4_6`` / ``minicpmv4_7`` / ``minicpm_ocr``, ``exaone4_5``,
  ``hyperclovax_vision_v2`` and ``cosmos3_omni`` (Qwen towers), ``got_ocr2`` / ``pp_chart2table`` (a SAM ViT),
  ``ovis2`` and ``fuyu`` (no encoder: one linear over each patch's pixels);
* ``blip-2``, ``instructblip``, ``instructblipvideo``: the EVA ViT, the learned queries, the Q-Former and the projection;
* ``idefics2``: a SigLIP-like tower, the SwiGLU modality projection and the perceiver resampler;
* ``granite_docling``: a SigLIP-like tower, its coarse and fine connector paths with DeepStack mergers, the density
  router;
* ``deepseek_vl_hybrid``: a SigLIP encoder and SAM's ViT at high resolution, with their necks, convolutions and aligner;
* ``lfm3_vl``: LFM3-VL's tower of gated depthwise convolutions and grouped-KV attention layers, and its projector.

This module never imports torch.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_
from gemmlib.llm.config import _whole

# vision config class defaults (transformers 5.24)
_QWEN3_VL = dict(depth=27, hidden_size=1152, intermediate_size=4304, num_heads=16, in_channels=3, patch_size=16,
                 spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=3584, num_position_embeddings=2304,
                 deepstack_visual_indexes=(8, 16, 24))
_SIGLIP = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12, num_channels=3,
               image_size=224, patch_size=16, vision_use_head=True)

_GEMMA4 = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=16, num_attention_heads=12,
               num_key_value_heads=12, head_dim=64, patch_size=16, position_embedding_size=10240)

# Gemma 4 Unified's vision config class defaults (Gemma4UnifiedVisionConfig) and its audio config's (Gemma4UnifiedAudioConfig)
_GEMMA4_UNIFIED = dict(patch_size=16, pooling_kernel_size=3, mm_embed_dim=3840, mm_posemb_size=1120,
                       output_proj_dims=3840)
_GEMMA4_UNIFIED_AUDIO_EMBED = 640

# dots3.note's vision config class defaults (Dots3NoteVisionConfig): 25 dense layers, then 17 of 4, 8, … 64 experts
_DOTS3_NOTE = dict(hidden_size=1536, intermediate_size=4224, num_hidden_layers=42, num_attention_heads=24,
                   num_channels=3, patch_size=14, moe_intermediate_size=2112, num_local_experts=64, adapter_in_dim=1536,
                   adapter_out_dim=5120, adapter_merge_size=2)
_DOTS3_NOTE_PYRAMID = [-1] * 25 + list(range(4, 65, 4)) + [64]
# the per-layer keys that leave a block's shape to the two counted (the experts and their width)
_DOTS3_NOTE_PER_LAYER = frozenset({"num_local_experts", "moe_intermediate_size", "num_experts_per_tok",
                                   "router_scaling_factor"})

# Emu3's VQ-VAE config class defaults (Emu3VQVAEConfig; its attn_resolutions are level indexes)
_EMU3_VQ = dict(codebook_size=32768, embed_dim=4, latent_channels=4, in_channels=3, out_channels=3,
                temporal_downsample_factor=4, base_channels=256, num_res_blocks=2, hidden_size=1024)
_EMU3_VQ_LISTS = dict(channel_multiplier=[1, 2, 2, 4], attn_resolutions=[3])
# Apertus 1.5's image tokenizer config class defaults (Apertus1p5VisionTokenizerConfig; its attn_resolutions are
# resolutions in pixels, halved at each stage from ``resolution``)
_APERTUS1P5_VQ = dict(codebook_size=131072, embed_dim=256, latent_channels=256, in_channels=3, base_channels=256,
                      num_res_blocks=4, resolution=256)
_APERTUS1P5_VQ_LISTS = dict(channel_multiplier=[1, 1, 2, 2, 4], attn_resolutions=[16])

_MINIMAX_M3 = dict(hidden_size=1280, intermediate_size=5120, num_hidden_layers=32, num_channels=3, patch_size=14,
                   temporal_patch_size=2, spatial_merge_size=2)

_MLLAMA = dict(hidden_size=1280, intermediate_size=5120, num_hidden_layers=32, num_global_layers=8, num_channels=3,
               image_size=448, patch_size=14, max_num_tiles=4, vision_output_dim=7680)

# PaddleOCR-VL's vision config class defaults (SigLIP's shape at 384 pixels)
_PADDLEOCR_VL = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_channels=3, image_size=384,
                     patch_size=14, spatial_merge_size=2)

# GLM-OCR's vision config class defaults (GLM-5-Next's the same, its merger projection_intermediate_size wide)
_GLM_OCR = dict(depth=24, hidden_size=1024, num_heads=16, in_channels=3, patch_size=14, spatial_merge_size=2,
                temporal_patch_size=2, out_hidden_size=1536, intermediate_size=4096, projection_intermediate_size=10240)

# Step 3.7's vision config class defaults (its MLP int(hidden_size × mlp_ratio) wide, whatever intermediate_size says)
_STEP3P7 = dict(hidden_size=1536, num_hidden_layers=47, num_channels=3, image_size=728, patch_size=14)
_STEP3P7_MLP_RATIO = 8960 / 1536

# Aria's vision config (Idefics3's vision class) defaults, its projector's queries and text width
_ARIA = dict(hidden_size=1152, intermediate_size=3072, num_hidden_layers=12, num_channels=3, image_size=224,
             patch_size=32)
_ARIA_QUERIES = {1225: 128, 4900: 256}
_ARIA_TEXT_HIDDEN = 4096

# HY-V4-VL's vision config class defaults
_HY_V4_VL = dict(hidden_size=1536, intermediate_size=6144, num_hidden_layers=40, num_attention_heads=16,
                 num_channels=3, patch_size=16, spatial_merge_size=2, out_hidden_size=6144, max_image_size=2048)

# HunYuan-VL's vision config class defaults (its merger's output width is the decoder's, as the wrapper syncs it)
_HUNYUAN_VL = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_attention_heads=16,
                   num_channels=3, patch_size=16, spatial_merge_size=2, max_image_size=2048)
_HUNYUAN_VL_TEXT_HIDDEN = 4096

# Cosmos 3 Edge's vision config class defaults and its projector's width (a top-level key)
_COSMOS3_EDGE = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_channels=3, patch_size=16,
                     num_patches=256, spatial_merge_size=2)
_COSMOS3_EDGE_PROJECTOR, _COSMOS3_EDGE_TEXT_HIDDEN = 11520, 2048

# Muse Spark's / Muse Glimmer's vision config class defaults; the adapter's input and width are top-level keys
_MUSE = dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=50, patch_size=14, patch_temporal=2,
             pos_emb_height=32, pos_emb_width=32)
_MUSE_TOP = dict(out_hidden_size=6144, projector_hidden_size=4096)
_MUSE_TEXT_HIDDEN = {"muse_spark": 8192, "muse_glimmer": 6656}

# Molmo2's vision and adapter config class defaults (the released files' spellings mapped as the classes map them)
_MOLMO2_VISION = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=25, num_attention_heads=16,
                      num_key_value_heads=16, head_dim=72, patch_size=14, num_channels=3)
_MOLMO2_ADAPTER = dict(hidden_size=1152, num_attention_heads=16, num_key_value_heads=16, head_dim=72,
                       intermediate_size=18944, text_hidden_size=3584)

# Llama 4's vision config class defaults
_LLAMA4 = dict(hidden_size=768, intermediate_size=5632, num_hidden_layers=34, num_attention_heads=16, num_channels=3,
               image_size=448, patch_size=14, vision_output_dim=7680, projector_input_dim=4096,
               projector_output_dim=4096)

# ERNIE 4.5 VL's vision config class defaults (and its text config's hidden size, the resampler's output)
_ERNIE45_VL = dict(depth=32, hidden_size=1280, intermediate_size=5120, in_channels=3, patch_size=14,
                   spatial_merge_size=2, temporal_merge_size=2)
_ERNIE45_VL_TEXT_HIDDEN = 2560

_PIXTRAL = dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_channels=3, patch_size=16)
# Mistral Large 4's tower: Pixtral's block at the shape its config class gives a vision_config by default
_PIXTRAL_ML4 = dict(_PIXTRAL, hidden_size=2048, intermediate_size=6144, num_hidden_layers=30, patch_size=14)

# Qwen2-VL's and Qwen2.5-VL's vision config class defaults
_QWEN2_VL = dict(depth=32, embed_dim=1280, hidden_size=3584, mlp_ratio=4, in_channels=3, patch_size=14,
                 spatial_merge_size=2, temporal_patch_size=2)
# Inkling 2's vision config class defaults
_INKLING2 = dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=23, num_channels=3, patch_size=20,
                 spatial_merge_size=2, posemb_grid_size=32, projection_hidden_dim=4096, text_hidden_size=4608)
_QWEN2_5_VL = dict(depth=32, hidden_size=3584, intermediate_size=3420, out_hidden_size=3584, in_channels=3,
                   patch_size=14, spatial_merge_size=2, temporal_patch_size=2)

# GLM-4.1V / GLM-4.5V's vision config class defaults
_GLM4V = dict(depth=24, hidden_size=1536, num_heads=12, in_channels=3, image_size=336, patch_size=14,
              spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=4096, intermediate_size=13696)

# Phi-4-multimodal's towers (Phi4MultimodalVisionConfig / Phi4MultimodalAudioConfig defaults)
_PHI4MM_VISION = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_channels=3, image_size=448,
                      patch_size=14)
_PHI4MM_AUDIO = dict(hidden_size=1024, intermediate_size=1536, num_blocks=24, num_attention_heads=16,
                     ext_pw_out_channel=1024, depthwise_separable_out_channel=1024, depthwise_multiplier=1,
                     kernel_size=3, input_size=80, time_reduction=8, bias_max_distance=1000, nemo_conv_channels=1024,
                     downsample_rate=1)



def _get(block: dict, defaults: dict, key: str, *, minimum: int = 1) -> int:
    v = block.get(key, defaults[key])
    return _whole(f"vision_config.{key}", v, minimum=minimum)


def _vision_block(cfg: dict) -> dict:
    v = cfg.get("vision_config")
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise InputError(N_("config.json field 'vision_config' must be an object"))
    return v


def _block(cfg: dict, key: str) -> dict:
    """A wrapper's other sub-config (``qformer_config``, ``perceiver_config``, ``high_res_vision_config``), {} when
    absent (its class's defaults then)."""
    block = cfg.get(key)
    if block is None:
        return {}
    if not isinstance(block, dict):
        raise InputError(N_("config.json field {key!r} must be an object"), key=key)
    return block


def _sub_config(cfg: dict, key: str, defaults: dict) -> Callable[[str], int]:
    """A reader of the whole-number fields of sub-config ``key`` (:func:`_block`), ``defaults`` for absent ones."""
    block = _block(cfg, key)
    return lambda field: _whole(f"{key}.{field}", block.get(field, defaults[field]))


def _qwen3_vl(cfg: dict, *, deepstack: bool = True) -> dict[str, int]:
    """Qwen3-VL's tower; Qwen3.5's (``deepstack=False``) deletes the DeepStack mergers."""
    v = _vision_block(cfg)
    d = _get(v, _QWEN3_VL, "hidden_size")
    f = _get(v, _QWEN3_VL, "intermediate_size")
    depth = _get(v, _QWEN3_VL, "depth")
    c, p, t = _get(v, _QWEN3_VL, "in_channels"), _get(v, _QWEN3_VL, "patch_size"), _get(v, _QWEN3_VL,
                                                                                      "temporal_patch_size")
    m, o = _get(v, _QWEN3_VL, "spatial_merge_size"), _get(v, _QWEN3_VL, "out_hidden_size")
    pos = _get(v, _QWEN3_VL, "num_position_embeddings")
    deep = v.get("deepstack_visual_indexes", _QWEN3_VL["deepstack_visual_indexes"]) if deepstack else ()
    if not isinstance(deep, list | tuple):
        raise InputError(N_("config.json field 'vision_config.deepstack_visual_indexes' must be a list"))
    block = 3 * d * d + 3 * d + d * d + d + 2 * d * f + f + d + 4 * d
    dm = d * m * m

    def merger(norm_width: int) -> int:
        return 2 * norm_width + dm * dm + dm + dm * o + o

    out = {"patch_embed": c * t * p * p * d + d, "positions": pos * d, "blocks": depth * block, "merger": merger(d)}
    if deepstack:
        out["deepstack_mergers"] = len(deep) * merger(dm)
    return out


def _qwen2_vl(cfg: dict, *, v25: bool) -> dict[str, int]:
    """Qwen2-VL's tower (a Conv3d patch embedding without bias, blocks with LayerNorms, a biased fused qkv and a GELU
    MLP of ``mlp_ratio`` × width, the 2×2 merger with a LayerNorm) or Qwen2.5-VL's (``v25``: RMSNorms, a biased
    SwiGLU MLP of ``intermediate_size``, the merger's norm an RMSNorm)."""
    v = _vision_block(cfg)
    defaults = _QWEN2_5_VL if v25 else _QWEN2_VL
    d = _get(v, defaults, "hidden_size" if v25 else "embed_dim")
    o = _get(v, defaults, "out_hidden_size" if v25 else "hidden_size")
    c, p, t = _get(v, defaults, "in_channels"), _get(v, defaults, "patch_size"), _get(v, defaults, "temporal_patch_size")
    m, depth = _get(v, defaults, "spatial_merge_size"), _get(v, defaults, "depth")
    if v25:
        f = _get(v, defaults, "intermediate_size")
        block = 2 * d + 3 * d * d + 3 * d + d * d + d + 3 * (d * f + f) - f + d  # norms, qkv, proj, gate/up/down
        norm = d
    else:
        f = d * _get(v, defaults, "mlp_ratio")
        block = 4 * d + 3 * d * d + 3 * d + d * d + d + d * f + f + f * d + d
        norm = 2 * d
    dm = d * m * m
    return {"patch_embed": c * t * p * p * d, "blocks": depth * block, "merger": norm + dm * dm + dm + dm * o + o}


def _glm4v(cfg: dict) -> dict[str, int]:
    """GLM-4.1V's / GLM-4.5V's tower: a Conv3d patch embedding with a bias, an RMSNorm after it, a learned position
    table, blocks with RMSNorms, fused qkv (biased with ``attention_bias``), proj and a SwiGLU MLP as wide as the
    output (``out_hidden_size``), an RMSNorm, a 2×2 strided convolution to the output width, and the merger (a
    projection, a LayerNorm, a SwiGLU MLP of ``intermediate_size``)."""
    v = _vision_block(cfg)
    d, o, f = _get(v, _GLM4V, "hidden_size"), _get(v, _GLM4V, "out_hidden_size"), _get(v, _GLM4V, "intermediate_size")
    c, p, t = _get(v, _GLM4V, "in_channels"), _get(v, _GLM4V, "patch_size"), _get(v, _GLM4V, "temporal_patch_size")
    m, img, depth = _get(v, _GLM4V, "spatial_merge_size"), _get(v, _GLM4V, "image_size"), _get(v, _GLM4V, "depth")
    ab = v.get("attention_bias", False) is True
    block = 2 * d + 3 * d * d + d * d + (3 * d if ab else 0) + 3 * d * o  # (proj has no bias)
    return {"patch_embed": c * t * p * p * d + d + d, "positions": (img // p) ** 2 * d, "blocks": depth * block,
            "post_layernorm": d, "downsample": d * o * m * m + o, "merger": o * o + 2 * o + 3 * o * f}


def _glm_ocr(cfg: dict, *, glm5_next: bool = False) -> dict[str, int]:
    """GLM-OCR's tower (GLM-5-Next's too): a biased Conv3d patch embedding, blocks with RMSNorms, a fused qkv and a
    projection (biased with ``attention_bias``), RMSNorms on each head's q and k and a SwiGLU MLP of
    ``intermediate_size`` (biased alike), an RMSNorm, a 2×2 strided convolution to the output width and the merger (a
    projection, a LayerNorm, a SwiGLU MLP: out × in_channels wide, GLM-5-Next's ``projection_intermediate_size``)."""
    v = _vision_block(cfg)
    g = lambda key: _get(v, _GLM_OCR, key)  # noqa: E731
    d, o, f, heads = g("hidden_size"), g("out_hidden_size"), g("intermediate_size"), g("num_heads")
    c, p, t, m, depth = g("in_channels"), g("patch_size"), g("temporal_patch_size"), g("spatial_merge_size"), g("depth")
    ab = v.get("attention_bias", True) is True
    ctx = g("projection_intermediate_size") if glm5_next else o * c
    block = 2 * d + 4 * d * d + 2 * (d // heads) + 3 * d * f + ((4 * d + 2 * f + d) if ab else 0)
    return {"patch_embed": c * t * p * p * d + d, "blocks": depth * block, "post_layernorm": d,
            "downsample": d * o * m * m + o, "merger": o * o + 2 * o + 3 * o * ctx}


def _inkling2(cfg: dict) -> dict[str, int]:
    """Inkling 2's tower: a linear patch embedding without bias, a learned position grid, a class embedding and its
    position, a LayerNorm before the blocks, blocks of biased q/k/v/out projections, a GELU MLP, two LayerNorms and two
    learned layer scales, then the merger (the merged patches through two linears, biased with ``projector_bias``)."""
    v = _vision_block(cfg)
    g = {k: _get(v, dict(_INKLING2, text_hidden_size=_text_hidden(cfg, 4608)), k) for k in _INKLING2}
    d, f, m, ph, t = (g["hidden_size"], g["intermediate_size"], g["spatial_merge_size"], g["projection_hidden_dim"],
                      g["text_hidden_size"])
    b = v.get("projector_bias", False) is True
    block = 2 * d + 4 * (d * d + d) + 2 * d * f + f + d + 4 * d
    return {"embeddings": g["num_channels"] * g["patch_size"] ** 2 * d + g["posemb_grid_size"] ** 2 * d + 2 * d,
            "pre_layernorm": 2 * d, "blocks": g["num_hidden_layers"] * block,
            "merger": m * m * d * ph + ph * t + ((ph + t) if b else 0)}


def _gemma3(cfg: dict) -> dict[str, int]:
    v = _vision_block(cfg)
    d = _get(v, _SIGLIP, "hidden_size")
    out = _siglip_encoder(v, _SIGLIP)
    text_hidden = _text_hidden(cfg, 2304)
    out["projector"] = d * text_hidden + d
    return out


def _gemma4(cfg: dict) -> dict[str, int]:
    """Gemma 4's vision encoder (a linear patch embedding, a 2 × positions table, blocks of Gemma's sandwich norms with
    head-dim q/k norms and a gated MLP, no biases) and its projector (a norm without parameters and one matrix); none
    when the file has no vision_config. The clipped linears' bounds and the standardization vectors are buffers."""
    if cfg.get("vision_config") is None:
        return {}
    v = _vision_block(cfg)
    d, f = _get(v, _GEMMA4, "hidden_size"), _get(v, _GEMMA4, "intermediate_size")
    layers, hd = _get(v, _GEMMA4, "num_hidden_layers"), _get(v, _GEMMA4, "head_dim")
    heads, kv = _get(v, _GEMMA4, "num_attention_heads"), _get(v, _GEMMA4, "num_key_value_heads")
    p, pos = _get(v, _GEMMA4, "patch_size"), _get(v, _GEMMA4, "position_embedding_size")
    text_hidden = _text_hidden(cfg, 2304)
    block = d * (heads + 2 * kv) * hd + heads * hd * d + 2 * hd + 3 * d * f + 4 * d
    return {"patch_embed": 3 * p * p * d, "positions": 2 * pos * d, "blocks": layers * block,
            "projector": d * text_hidden}


def _gemma4_unified(cfg: dict) -> dict[str, int]:
    """Gemma 4 Unified's encoder-free image embedder: each ``patch_size`` × ``pooling_kernel_size`` square patch's RGB
    pixels through a LayerNorm, a biased linear to ``mm_embed_dim`` and a LayerNorm, a factorized 2-D position table
    (``mm_posemb_size`` × 2 rows) and a LayerNorm, then the multimodal embedder (a norm without parameters and one
    matrix from ``output_proj_dims`` to the decoder's width); none when the file has no vision_config."""
    if cfg.get("vision_config") is None:
        return {}
    v = _vision_block(cfg)
    g = lambda key: _get(v, _GEMMA4_UNIFIED, key)  # noqa: E731
    e, pd = g("mm_embed_dim"), 3 * (g("patch_size") * g("pooling_kernel_size")) ** 2
    return {"patch_embed": 2 * pd + pd * e + e + 2 * e, "positions": 2 * g("mm_posemb_size") * e + 2 * e,
            "projector": g("output_proj_dims") * _text_hidden(cfg, 2304)}


def _gemma4_unified_audio(cfg: dict) -> dict[str, int] | None:
    """Gemma 4 Unified's audio input: no encoder, each frame of ``audio_embed_dim`` samples through the multimodal
    embedder (a norm without parameters and one matrix to the decoder's width); None when the file has no
    audio_config."""
    a = cfg.get("audio_config")
    if a is None:
        return None
    if not isinstance(a, dict):
        raise InputError(N_("config.json field 'audio_config' must be an object"))
    dim = _whole("audio_config.audio_embed_dim", a.get("audio_embed_dim", _GEMMA4_UNIFIED_AUDIO_EMBED))
    return {"projection": dim * _text_hidden(cfg, 2304)}


def _dots3_note_experts(v: dict) -> list[tuple[int, int] | None]:
    """Each dots3.note vision layer's experts and their width (None: a dense layer), by ``mlp_layer_types`` and
    ``per_layer_config``, or by the released files' ``pyramid_num_routed`` (the config class's pyramid when neither)."""
    n = _get(v, _DOTS3_NOTE, "num_hidden_layers")
    experts, width = _get(v, _DOTS3_NOTE, "num_local_experts"), _get(v, _DOTS3_NOTE, "moe_intermediate_size")
    types, pyramid = v.get("mlp_layer_types"), v.get("pyramid_num_routed")
    if types is None:
        pyramid = _DOTS3_NOTE_PYRAMID if pyramid is None else pyramid
        if not isinstance(pyramid, list) or len(pyramid) != n or any(
                isinstance(c, bool) or not isinstance(c, int) for c in pyramid):
            raise InputError(N_("config.json field {key!r} must be a list of whole numbers"),  # (one per layer)
                             key="vision_config.pyramid_num_routed")
        return [(c, width) if c > 0 else None for c in pyramid]
    if not isinstance(types, list) or len(types) != n or any(t not in ("dense", "sparse") for t in types):
        raise InputError(N_("config.json field {key!r} must be a list of strings"),  # ("dense" or "sparse", one a layer)
                         key="vision_config.mlp_layer_types")
    per = v.get("per_layer_config") or {}
    if not isinstance(per, dict) or any(not isinstance(e, dict) or not set(e) <= _DOTS3_NOTE_PER_LAYER
                                        for e in per.values()):
        raise InputError(N_("config.json field {key!r} must be an object of per-layer objects"),  # (of the keys above)
                         key="vision_config.per_layer_config")
    out: list[tuple[int, int] | None] = []
    for i, t in enumerate(types):
        e = per.get(str(i), per.get(i, {}))
        out.append((_whole("vision_config.per_layer_config.num_local_experts", e.get("num_local_experts", experts)),
                    _whole("vision_config.per_layer_config.moe_intermediate_size",
                           e.get("moe_intermediate_size", width))) if t == "sparse" else None)
    return out


def _dots3_note(cfg: dict) -> dict[str, int]:
    """dots.note 3's tower: a biased patch Conv2d and an RMSNorm, blocks of RMSNorms, a fused qkv and a projection (biased
    with ``attention_bias``), q/k RMSNorms per head and a SwiGLU MLP — dense (biased with ``mlp_bias``) or a mixture of
    routed experts with a router — a final RMSNorm; the merger: a LayerNorm, the ``adapter_merge_size``² patches
    merged, two biased linears to ``adapter_out_dim``. The released files' spellings (embed_dim, num_heads, use_bias)
    read as the config class reads them."""
    v = dict(_vision_block(cfg))
    for short, key in (("embed_dim", "hidden_size"), ("num_heads", "num_attention_heads"), ("use_bias", "attention_bias")):
        if short in v:
            v[key] = v.pop(short)
    g = lambda key: _get(v, _DOTS3_NOTE, key)  # noqa: E731
    d, f, heads, c, p = g("hidden_size"), g("intermediate_size"), g("num_attention_heads"), g("num_channels"), \
        g("patch_size")
    ab, mb = v.get("attention_bias", False) is True, v.get("mlp_bias", False) is True
    attn = 2 * d + 3 * d * d + d * d + (4 * d if ab else 0) + 2 * (d // heads)
    blocks = sum(attn + (3 * d * f + (2 * f + d if mb else 0) if moe is None else moe[0] * (3 * d * moe[1] + d))
                 for moe in _dots3_note_experts(v))
    m = g("adapter_in_dim") * g("adapter_merge_size") ** 2
    o = g("adapter_out_dim")
    return {"patch_embed": c * p * p * d + 2 * d, "blocks": blocks, "norm": d,
            "merger": 2 * g("adapter_in_dim") + m * m + m + m * o + o}


def _int_list(block: dict, key: str, defaults: dict, where: str, *, minimum: int = 1) -> list[int]:
    """A non-empty list of whole numbers of a sub-config (``where`` names it in the message), ``defaults`` when
    absent."""
    x = block.get(key, defaults[key])
    if not isinstance(x, list | tuple) or not x or any(isinstance(i, bool) or not isinstance(i, int) for i in x):
        raise InputError(N_("config.json field {key!r} must be a list of whole numbers"), key=f"{where}.{key}")
    return [_whole(f"{where}.{key}", i, minimum=minimum) for i in x]


def _group_norm(c: int) -> int:
    return 2 * c


def _resnet(i: int, o: int, norm: Callable[[int], int] = _group_norm) -> int:
    """A VQ-VAE's 2-D residual block: two norms and two biased 3×3 convolutions, a biased 1×1 shortcut when the width
    changes."""
    return norm(i) + 9 * i * o + o + norm(o) + 9 * o * o + o + (i * o + o if i != o else 0)


def _vq_stages(mult: list[int], b: int, blocks: int, attention: Callable[[int], int],
               attends: Callable[[int], bool]) -> tuple[int, int]:
    """A VQ-VAE encoder's stages: each level ``blocks`` residual blocks to ``b`` × its multiplier (each followed by
    ``attention`` of that width at the levels ``attends`` picks), a stride-2 3×3 convolution after all but the last.
    Their parameters and the last width."""
    total, cin = 0, b
    for level, m in enumerate(mult):
        out = b * m
        for _ in range(blocks):
            total += _resnet(cin, out) + (attention(out) if attends(level) else 0)
            cin = out
        if level < len(mult) - 1:
            total += 9 * out * out + out
    return total, cin


def _emu3(cfg: dict) -> dict[str, int]:
    """Emu3's image tokenizer (``vq_config``, the VQ-VAE Emu3ForConditionalGeneration holds): the encoder (a 3×3
    convolution, the stages with attention — biased q/k/v/out of ``hidden_size`` and a GroupNorm — at the levels
    ``attn_resolutions`` names, a middle of two residual blocks around an attention, a GroupNorm and a 3×3 convolution
    to the latent, twice as wide with ``double_latent``; log2(``temporal_downsample_factor``) temporal 4×3×3
    convolutions and ``num_res_blocks`` temporal residual blocks of BatchNorms and 3×3×3 convolutions), the codebook,
    the 3×1×1 convolutions into and out of it, and the decoder (the temporal blocks and 3×3×3 upsampling convolutions
    at the latent width, a 3×3 convolution, the middle and ``num_res_blocks`` + 1 residual blocks per level with
    spatial norms conditioned on the quantized codes, 3×3 upsampling convolutions, a spatial norm and a 3×3 convolution
    to ``out_channels``)."""
    q = _block(cfg, "vq_config")
    g = lambda key: _whole(f"vq_config.{key}", q.get(key, _EMU3_VQ[key]))  # noqa: E731
    mult = _int_list(q, "channel_multiplier", _EMU3_VQ_LISTS, "vq_config")
    levels = set(_int_list(q, "attn_resolutions", _EMU3_VQ_LISTS, "vq_config", minimum=0))
    b, blocks, h, e, lat = g("base_channels"), g("num_res_blocks"), g("hidden_size"), g("embed_dim"), g("latent_channels")
    zc = 2 * lat if q.get("double_latent", False) is True else lat
    times = g("temporal_downsample_factor").bit_length() - 1  # int(log2(·)), as the model computes it
    attn = 4 * (h * h + h)

    def temporal_resnet(c: int) -> int:  # BatchNorm3d (weight and bias; its statistics are buffers), 3×3×3 convolutions
        return 2 * (2 * c + 27 * c * c + c)

    def spatial(c: int) -> int:  # a GroupNorm scaled and shifted by two biased 1×1 convolutions of the codes
        return 2 * c + 2 * (e * c + c)

    stages, top = _vq_stages(mult, b, blocks, lambda c: attn + 2 * c, lambda level: level in levels)
    encoder = (9 * g("in_channels") * b + b + stages + 2 * _resnet(top, top) + attn + 2 * top + 2 * top
               + 9 * top * zc + zc + times * (36 * zc * zc + zc) + blocks * temporal_resnet(zc))
    up, cin = 0, top
    for level in reversed(range(len(mult))):
        out = b * mult[level]
        for _ in range(blocks + 1):
            up += _resnet(cin, out, spatial) + ((attn + spatial(out)) if level in levels else 0)
            cin = out
        if level:
            up += 9 * out * out + out
    oc, first = g("out_channels"), b * mult[0]
    decoder = (blocks * temporal_resnet(lat) + times * (27 * lat * lat + lat) + 9 * lat * top + top
               + 2 * _resnet(top, top, spatial) + attn + spatial(top) + up + spatial(first) + 9 * first * oc + oc)
    return {"encoder": encoder, "codebook": g("codebook_size") * e, "quant_convs": 3 * lat * e + e + 3 * e * lat + lat,
            "decoder": decoder}


def _apertus1p5(cfg: dict) -> dict[str, int]:
    """Apertus 1.5's image tokenizer (its vision_config; the model holds its encoder and codebook, no decoder): a 3×3
    convolution, the stages (attention — a GroupNorm and biased 1×1 q/k/v/out convolutions — where the stage's
    resolution, ``resolution`` halved per level, is one of ``attn_resolutions``), a middle of two residual blocks around
    an attention, a GroupNorm and a 3×3 convolution to ``latent_channels``; a 1×1 convolution to ``embed_dim`` and the
    codebook (a linear of ``codebook_size`` rows without bias)."""
    v = _vision_block(cfg)
    g = lambda key: _get(v, _APERTUS1P5_VQ, key)  # noqa: E731
    mult = _int_list(v, "channel_multiplier", _APERTUS1P5_VQ_LISTS, "vision_config")
    at = set(_int_list(v, "attn_resolutions", _APERTUS1P5_VQ_LISTS, "vision_config", minimum=0))
    b, lat, e, res = g("base_channels"), g("latent_channels"), g("embed_dim"), g("resolution")

    def attn(c: int) -> int:
        return 2 * c + 4 * (c * c + c)

    stages, top = _vq_stages(mult, b, g("num_res_blocks"), attn, lambda level: res // 2 ** level in at)
    encoder = 9 * g("in_channels") * b + b + stages + 2 * _resnet(top, top) + attn(top) + 2 * top + 9 * top * lat + lat
    return {"encoder": encoder, "quant_conv": lat * e + e, "codebook": e * g("codebook_size")}


def _mistral3(cfg: dict, large4: bool = False, text_hidden: int | None = None) -> dict[str, int]:
    """Mistral 3's Pixtral tower and patch-merging projector (Mistral Large 4's: the same, larger by default; LightOn
    OCR's: Mistral 3's before a Qwen3 decoder)."""
    v, dv = _vision_block(cfg), _PIXTRAL_ML4 if large4 else _PIXTRAL
    if cfg.get("vision_config") is None and not large4:  # the wrapper's own default vision config: 14-pixel patches
        dv = dict(_PIXTRAL, patch_size=14)
    d, f = _get(v, dv, "hidden_size"), _get(v, dv, "intermediate_size")
    layers, c, p = _get(v, dv, "num_hidden_layers"), _get(v, dv, "num_channels"), _get(v, dv, "patch_size")
    th = _text_hidden(cfg, text_hidden or (6144 if large4 else 4096))
    m = _whole("spatial_merge_size", cfg.get("spatial_merge_size", 2))
    feat = cfg.get("vision_feature_layer", -1)
    nf = len(feat) if isinstance(feat, list) else 1
    bias = cfg.get("multimodal_projector_bias", False) is True
    return {"patch_conv": c * p * p * d, "ln_pre": d, "blocks": layers * (4 * d * d + 3 * d * f + 2 * d),
            "projector": d + d * m * m * d + d * nf * th + th * th + (2 * th if bias else 0)}


def _llama4(cfg: dict) -> dict[str, int]:
    """Llama 4's tower (an unfold-and-linear patch embedding without bias, a class embedding, a learned position per
    patch and the class token, LayerNorms before and after the encoder, blocks of biased q/k/v/o and a biased GELU MLP
    with two LayerNorms), its pixel-shuffle adapter (two linears without bias, intermediate_size → projector input,
    projector output → itself) and the one-matrix projector to the decoder's width."""
    v, dv = _vision_block(cfg), _LLAMA4
    d, f, layers = _get(v, dv, "hidden_size"), _get(v, dv, "intermediate_size"), _get(v, dv, "num_hidden_layers")
    heads, c = _get(v, dv, "num_attention_heads"), _get(v, dv, "num_channels")
    size, p = _get(v, dv, "image_size"), _get(v, dv, "patch_size")
    pin, pout, out = (_get(v, dv, "projector_input_dim"), _get(v, dv, "projector_output_dim"),
                      _get(v, dv, "vision_output_dim"))
    th = _text_hidden(cfg, 5120)
    a = heads * (d // heads)  # (each head hidden_size // heads wide)
    block = 3 * (d * a + a) + a * d + d + d * f + f + f * d + d + 4 * d
    return {"patch_embedding": c * p * p * d, "class_and_positions": d + ((size // p) ** 2 + 1) * d,
            "layernorms": 4 * d, "blocks": layers * block, "adapter": f * pin + pout * pout, "projector": out * th}


def _ernie4_5_vl(cfg: dict) -> dict[str, int]:
    """ERNIE 4.5 VL's tower (a linear patch embedding without bias, ViT blocks with a fused biased qkv, a biased output
    projection, a biased MLP and two LayerNorms, a final LayerNorm) and its variable-resolution resampler: the 2×2
    merged patches (and, for video, 2 frames more) through two-layer GELU MLPs with a LayerNorm, then one linear to
    the decoder's width and an RMSNorm."""
    v, dv = _vision_block(cfg), _ERNIE45_VL
    d, f, depth = _get(v, dv, "hidden_size"), _get(v, dv, "intermediate_size"), _get(v, dv, "depth")
    c, p = _get(v, dv, "in_channels"), _get(v, dv, "patch_size")
    m, tm = _get(v, dv, "spatial_merge_size"), _get(v, dv, "temporal_merge_size")
    out = _text_hidden(cfg, _ERNIE45_VL_TEXT_HIDDEN)
    sp = d * m * m  # a merged patch's width
    block = 4 * d + 3 * d * d + 3 * d + d * d + d + d * f + f + f * d + d

    def mlp(width_in: int) -> int:  # fc1, fc2 (biased) and a LayerNorm, sp wide
        return width_in * sp + sp + sp * sp + sp + 2 * sp

    return {"patch_embed": c * p * p * d, "blocks": depth * block, "final_norm": 2 * d,
            "resampler": mlp(sp) + mlp(sp * tm) + sp * out + out + out}


def _minimax_m3(cfg: dict) -> dict[str, int]:
    """MiniMax-M3's tower and projector; the projector's width (``projector_hidden_size``) is a top-level key and its
    outputs the decoder's hidden size."""
    v = _vision_block(cfg)
    d, f = _get(v, _MINIMAX_M3, "hidden_size"), _get(v, _MINIMAX_M3, "intermediate_size")
    layers = _get(v, _MINIMAX_M3, "num_hidden_layers")
    c, p, t = (_get(v, _MINIMAX_M3, k) for k in ("num_channels", "patch_size", "temporal_patch_size"))
    m = _get(v, _MINIMAX_M3, "spatial_merge_size")
    dt = _text_hidden(cfg, 6144)
    ph = _whole("projector_hidden_size", cfg.get("projector_hidden_size", 6144))
    block = 4 * (d * d + d) + 2 * 2 * d + d * f + f + f * d + d
    return {"patch_embed": c * t * p * p * d, "pre_layernorm": 2 * d, "blocks": layers * block,
            "projector": (d * ph + ph) + (ph * dt + dt) + (dt * m * m * ph + ph) + (ph * dt + dt)}


def _mllama(cfg: dict) -> dict[str, int]:
    """Llama 3.2 Vision's tower and projector (its aspect ratios: ``supported_aspect_ratios``, 8 by default)."""
    v = _vision_block(cfg)
    d, f = _get(v, _MLLAMA, "hidden_size"), _get(v, _MLLAMA, "intermediate_size")
    local, glob = _get(v, _MLLAMA, "num_hidden_layers"), _get(v, _MLLAMA, "num_global_layers", minimum=0)
    c, img, p = _get(v, _MLLAMA, "num_channels"), _get(v, _MLLAMA, "image_size"), _get(v, _MLLAMA, "patch_size")
    tiles, out = _get(v, _MLLAMA, "max_num_tiles"), _get(v, _MLLAMA, "vision_output_dim")
    ratios = v.get("supported_aspect_ratios")
    ratios = 8 if ratios is None else len(ratios) if isinstance(ratios, list) else None
    if ratios is None:
        raise InputError(N_("config.json field 'vision_config.supported_aspect_ratios' must be a list"))
    dt = _text_hidden(cfg, 4096)
    patches = (img // p) ** 2 + 1  # and the class token
    block = 4 * d * d + d * f + f + f * d + d + 2 * 2 * d
    return {"patch_embed": c * p * p * d + d,
            "positions": 1 + patches * d + (ratios + 1) * tiles * patches * d + 2 * ((ratios + 1) * tiles * d + 1),
            "layernorms": 2 * 2 * d, "blocks": local * block + glob * (block + 2), "projector": out * dt + dt}


def _siglip_encoder_body(v: dict, defaults: dict, *, head: bool = True) -> dict[str, int]:
    """SigLIP's blocks (biased q/k/v/o, two LayerNorms, a biased MLP), the LayerNorm after them and, with ``head``, the
    attention-pooling head (a probe, torch's MultiheadAttention, a LayerNorm and an MLP)."""
    d, f = _get(v, defaults, "hidden_size"), _get(v, defaults, "intermediate_size")
    block = 4 * (d * d + d) + 4 * d + 2 * d * f + f + d
    out = {"blocks": _get(v, defaults, "num_hidden_layers") * block, "post_layernorm": 2 * d}
    if head:
        out["pooling_head"] = d + 4 * (d * d + d) + 2 * d + 2 * d * f + f + d
    return out


def _siglip_tower(v: dict, defaults: dict, *, head: bool = True) -> dict[str, int]:
    """SigLIP's vision transformer, with its attention-pooling head unless ``head`` is false (Gemma 3's when
    ``vision_use_head``, Phi-4's; the SigLIP-like towers of Idefics, MiniCPM-V, PaddleOCR-VL… have none)."""
    d = _get(v, defaults, "hidden_size")
    c, p, img = _get(v, defaults, "num_channels"), _get(v, defaults, "patch_size"), _get(v, defaults, "image_size")
    return {"patch_embed": c * p * p * d + d, "positions": (img // p) ** 2 * d,
            **_siglip_encoder_body(v, defaults, head=head)}


# The encoders a wrapper builds from vision_config's model_type (AutoModel): each config class's defaults
_CLIP = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_channels=3, image_size=224, patch_size=32)
_SIGLIP2 = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_channels=3, num_patches=256,
                patch_size=16, vision_use_head=True)


def _clip_tower(v: dict, defaults: dict) -> dict[str, int]:
    """CLIP's vision transformer (CLIPVisionModel, no projection): a class embedding, a patch Conv2d without bias, a
    position per patch and one more, a LayerNorm before and after the blocks (biased q/k/v/o, two LayerNorms, a biased
    MLP)."""
    d, f = _get(v, defaults, "hidden_size"), _get(v, defaults, "intermediate_size")
    layers = _get(v, defaults, "num_hidden_layers")
    c, p, img = _get(v, defaults, "num_channels"), _get(v, defaults, "patch_size"), _get(v, defaults, "image_size")
    block = 4 * (d * d + d) + 4 * d + 2 * d * f + f + d
    return {"class_embedding": d, "patch_embed": c * p * p * d, "positions": ((img // p) ** 2 + 1) * d,
            "pre_layernorm": 2 * d, "blocks": layers * block, "post_layernorm": 2 * d}


def _siglip_encoder(v: dict, defaults: dict) -> dict[str, int]:
    """SigLIP's vision transformer, its pooling head when ``vision_use_head`` (the class default: true)."""
    return _siglip_tower(v, defaults, head=v.get("vision_use_head", defaults["vision_use_head"]) is True)


def _siglip2_encoder(v: dict, defaults: dict) -> dict[str, int]:
    """SigLIP 2's vision transformer: a biased linear patch embedding over ``num_patches`` learned positions (resized to
    each image), SigLIP's blocks, a LayerNorm, the pooling head when ``vision_use_head``."""
    d, c, p = _get(v, defaults, "hidden_size"), _get(v, defaults, "num_channels"), _get(v, defaults, "patch_size")
    out = {"patch_embed": c * p * p * d + d, "positions": _get(v, defaults, "num_patches") * d,
           **_siglip_encoder_body(v, defaults, head=v.get("vision_use_head", defaults["vision_use_head"]) is True)}
    return out


def _pixtral_tower(v: dict, defaults: dict) -> dict[str, int]:
    """Pixtral's vision transformer: a patch Conv2d without bias, RMSNorms, gated MLP blocks without biases."""
    d, f = _get(v, defaults, "hidden_size"), _get(v, defaults, "intermediate_size")
    layers, c, p = _get(v, defaults, "num_hidden_layers"), _get(v, defaults, "num_channels"), \
        _get(v, defaults, "patch_size")
    return {"patch_conv": c * p * p * d, "ln_pre": d, "blocks": layers * (4 * d * d + 3 * d * f + 2 * d)}


_ENCODERS: dict[str, tuple[Callable[[dict, dict], dict[str, int]], dict]] = {
    "clip_vision_model": (_clip_tower, _CLIP), "siglip_vision_model": (_siglip_encoder, _SIGLIP),
    "siglip2_vision_model": (_siglip2_encoder, _SIGLIP2), "pixtral": (_pixtral_tower, _PIXTRAL),
}


def _named_encoder(cfg: dict, spec: str, init: dict) -> tuple[dict[str, int], int] | None:
    """The encoder a wrapper builds from its vision_config — the class its ``model_type`` names (else the wrapper's
    ``spec``) with that class's defaults for absent keys; with no vision_config, the wrapper's own default one
    (``init`` over the class's defaults) — by part, and its width. None: an encoder this module does not count."""
    if cfg.get("vision_config") is None:
        mt, v = spec, dict(init)
    else:
        v = _vision_block(cfg)
        mt = v.get("model_type", spec)
    entry = _ENCODERS.get(mt) if isinstance(mt, str) else None
    if entry is None:
        return None
    count, defaults = entry
    return count(v, defaults), _get(v, defaults, "hidden_size")


def _text_hidden(cfg: dict, default: int, *, flat: bool = False) -> int:
    """The decoder's width: ``text_config.hidden_size`` (``flat``: the top-level one when the file has no text_config,
    the Hub layout of some wrappers), else the wrapper's default text config's."""
    tc = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else (cfg if flat else {})
    return _whole("text_config.hidden_size", tc.get("hidden_size", default))


def _feature_layers(cfg: dict, default: int, *keys: str) -> int:
    """How many encoder layers' outputs the projector concatenates (``vision_feature_layer``: one index or a list)."""
    v = next((cfg[k] for k in keys if cfg.get(k) is not None), None)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int | list) or (isinstance(v, list) and not v):
        raise InputError(N_("config.json field '{key}' must be a layer index or a list of them"), key=keys[0])
    return 1 if isinstance(v, int) else len(v)


# LLaVA's wrappers' default vision_config (CLIP ViT-L/14 at 336 pixels; Video-LLaVA's at 224)
_LLAVA_CLIP = dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16, patch_size=14,
                   image_size=336)
# LLaVA-OneVision's, Aya Vision's, PaliGemma's and Command A Vision's (SigLIP so400m's shapes)
_ONEVISION_SIGLIP = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=26, num_attention_heads=16,
                         patch_size=14, image_size=384, vision_use_head=False)
_PALIGEMMA_SIGLIP = dict(hidden_size=1152, intermediate_size=4096, num_hidden_layers=27, num_attention_heads=16,
                         patch_size=14, image_size=224, vision_use_head=False)
_COHERE2_VISION_SIGLIP = dict(hidden_size=1152, intermediate_size=3072, num_hidden_layers=27, num_attention_heads=12,
                              image_size=512)


def _llava(cfg: dict, *, spec: str = "clip_vision_model", init: dict = _LLAVA_CLIP, feature_layers: int = 1,
           newline: bool = False, towers: int = 1, vip: bool = False) -> dict[str, int] | None:
    """LLaVA's and its descendants' encoder (the class vision_config names) and projector: the chosen layers' outputs
    concatenated, a linear to the decoder's width and a second one (biased with ``multimodal_projector_bias``, true
    by default); VipLLaVA's a LayerNorm first and biases always; LLaVA-NeXT's and OneVision's an image-newline
    embedding; Video-LLaVA's an image and a video tower of the same shape."""
    enc = _named_encoder(cfg, spec, init)
    if enc is None:
        return None
    parts, d = enc
    th = _text_hidden(cfg, 4096)
    nf = _feature_layers(cfg, feature_layers, *(("vision_feature_layers", "vision_feature_layer") if vip
                                               else ("vision_feature_layer",)))
    bias = vip or cfg.get("multimodal_projector_bias", True) is True
    out = ({"image_tower": sum(parts.values()), "video_tower": sum(parts.values())} if towers == 2 else dict(parts))
    out["projector"] = (2 * nf * d if vip else 0) + nf * d * th + th * th + (2 * th if bias else 0)
    if newline:
        out["image_newline"] = th
    return out


def _paligemma(cfg: dict) -> dict[str, int] | None:
    """PaliGemma's SigLIP encoder and its one biased linear to ``projection_dim`` (a top-level key, 2,048 by default,
    which the wrapper writes into the vision config)."""
    enc = _named_encoder(cfg, "siglip_vision_model", _PALIGEMMA_SIGLIP)
    if enc is None:
        return None
    parts, d = enc
    pd = _whole("projection_dim", cfg.get("projection_dim", 2048))
    return {**parts, "projector": d * pd + pd}


def _aya_vision(cfg: dict, *, command_a: bool = False) -> dict[str, int] | None:
    """Aya Vision's (and Command A Vision's) SigLIP encoder and its SwiGLU projector over 2 × 2 shuffled patches
    (``downsample_factor``): a LayerNorm (Aya's only), a linear to ``alignment_intermediate_size`` (Aya's: the
    decoder's width unless the file sets it) and one from half of it to the decoder's width, both biased."""
    enc = _named_encoder(cfg, "siglip_vision_model", _COHERE2_VISION_SIGLIP if command_a else _ONEVISION_SIGLIP)
    if enc is None:
        return None
    parts, d = enc
    th = _text_hidden(cfg, 8192)
    ds = _whole("downsample_factor", cfg.get("downsample_factor", 2))
    ais = _whole("alignment_intermediate_size", cfg.get("alignment_intermediate_size", 36864 if command_a else th))
    wide = d * ds * ds
    return {**parts, "projector": (0 if command_a else 2 * wide) + wide * ais + ais + (ais // 2) * th + th}


def _lfm2_vl(cfg: dict) -> dict[str, int] | None:
    """LFM2-VL's SigLIP 2 encoder and its projector over 2 × 2 unshuffled patches (``downsample_factor``): a LayerNorm
    (``projector_use_layernorm``), a linear to ``projector_hidden_size`` and one to the decoder's width (biased with
    ``projector_bias``)."""
    enc = _named_encoder(cfg, "siglip2_vision_model", {})
    if enc is None:
        return None
    parts, d = enc
    th = _text_hidden(cfg, 2560)
    ds = _whole("downsample_factor", cfg.get("downsample_factor", 2))
    ph = _whole("projector_hidden_size", cfg.get("projector_hidden_size", 2560))
    wide, bias = d * ds * ds, cfg.get("projector_bias", True) is True
    norm = 2 * wide if cfg.get("projector_use_layernorm", True) is True else 0
    return {**parts, "projector": norm + wide * ph + ph * th + ((ph + th) if bias else 0)}


# InternVL's vision config class defaults (InternViT-300M)
_INTERNVL = dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_channels=3, image_size=448,
                 patch_size=14)


def _pair(v: dict, key: str, default: int) -> tuple[int, int]:
    """An image or patch size written as one number or as [height, width]."""
    x = v.get(key, default)
    if isinstance(x, list | tuple) and len(x) == 2:
        return _whole(f"vision_config.{key}", x[0]), _whole(f"vision_config.{key}", x[1])
    return (_whole(f"vision_config.{key}", x),) * 2


def _internvl(cfg: dict, *, attention_bias: bool = False) -> dict[str, int]:
    """InternVL's InternViT (a class token, a biased patch Conv2d, a learned position per patch and one more with
    ``use_absolute_position_embeddings``, a mask token with ``use_mask_token``; blocks of q/k/v (biased with
    ``attention_bias``), a biased output projection, q/k RMSNorms over the width with ``use_qk_norm``, LayerNorms or
    RMSNorms by ``norm_type``, a biased MLP and two layer scales; a LayerNorm after them unless ``use_mean_pooling``)
    and its projector over 2 × 2 merged patches (``downsample_ratio`` 0.5): a LayerNorm and two biased linears
    (Qianfan-OCR's: the same, its q/k/v biased by default)."""
    v = _vision_block(cfg)
    g = lambda key: _get(v, _INTERNVL, key)  # noqa: E731
    d, f, layers, c = g("hidden_size"), g("intermediate_size"), g("num_hidden_layers"), g("num_channels")
    (ih, iw), (ph, pw) = _pair(v, "image_size", 448), _pair(v, "patch_size", 14)
    norm = 2 * d if v.get("norm_type", "layer_norm") == "layer_norm" else d
    bias = v.get("attention_bias", attention_bias) is True
    block = 3 * (d * d + (d if bias else 0)) + d * d + d + (2 * d if v.get("use_qk_norm", False) is True else 0) \
        + d * f + f + f * d + d + 2 * norm + 2 * d
    embed = d + (d if v.get("use_mask_token", False) is True else 0) + c * ph * pw * d + d
    if v.get("use_absolute_position_embeddings", True) is not False:
        embed += ((ih // ph) * (iw // pw) + 1) * d
    ratio = cfg.get("downsample_ratio", 0.5)
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 < ratio <= 1:
        raise InputError(N_("config.json field 'downsample_ratio' must be a number in (0, 1]"))
    wide, th = d * int(1 / ratio) ** 2, _text_hidden(cfg, 4096)
    out = {"embeddings": embed, "blocks": layers * block, "projector": 2 * wide + wide * th + th + th * th + th}
    if v.get("use_mean_pooling", True) is not True:
        out["layernorm"] = 2 * d
    return out


def _kimi_k25(cfg: dict) -> dict[str, int]:
    """Kimi K2.5's MoonViT (a biased patch Conv2d over 3 channels, a learned position grid of ``pos_emb_height`` ×
    ``pos_emb_width``, SigLIP-like blocks with rotary positions, a final LayerNorm) and its projector over
    ``merge_kernel_size`` merged patches: a LayerNorm of ``projection_hidden_size`` and two biased linears, the second
    to the decoder's width."""
    v = _vision_block(cfg)
    defaults = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, pos_emb_height=64,
                    pos_emb_width=64)
    d, f = _get(v, defaults, "hidden_size"), _get(v, defaults, "intermediate_size")
    ph, pw = _pair(v, "patch_size", 14)
    mk = v.get("merge_kernel_size", [2, 2])
    if not isinstance(mk, list | tuple) or len(mk) != 2:
        raise InputError(N_("config.json field 'vision_config.merge_kernel_size' must be a [height, width] list"))
    k = _whole("vision_config.merge_kernel_size", mk[0]) * _whole("vision_config.merge_kernel_size", mk[1])
    block = 4 * (d * d + d) + 4 * d + 2 * d * f + f + d
    phs = _whole("projection_hidden_size", cfg.get("projection_hidden_size", 1152))
    dk, th = d * k, _text_hidden(cfg, 7168)
    return {"patch_embed": 3 * ph * pw * d + d,
            "positions": _get(v, defaults, "pos_emb_height") * _get(v, defaults, "pos_emb_width") * d,
            "blocks": _get(v, defaults, "num_hidden_layers") * block, "final_layernorm": 2 * d,
            "projector": 2 * phs + dk * dk + dk + dk * th + th}


_IDEFICS2 = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_channels=3, image_size=224,
                 patch_size=32)
_IDEFICS2_PERCEIVER = dict(resampler_n_latents=64, resampler_depth=3, resampler_n_heads=16, resampler_head_dim=96,
                           num_key_value_heads=4)


def _idefics2(cfg: dict) -> dict[str, int]:
    """Idefics2's SigLIP-like vision transformer (no pooling head) and its connector: a SwiGLU modality projection
    without biases from the tower's width through the decoder's ``intermediate_size`` to its width, then the perceiver
    resampler at the decoder's width (the config class sets it): learned latents, ``resampler_depth`` layers of
    grouped-KV attention of the latents over the image and themselves (RMSNorms on both inputs) and a 4× SwiGLU MLP,
    and a final RMSNorm."""
    v = _vision_block(cfg)
    tower = _siglip_tower(v, _IDEFICS2, head=False)
    tc = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else {}
    th = _text_hidden(cfg, 4096)
    tf = _whole("text_config.intermediate_size", tc.get("intermediate_size", 14336))  # (Mistral's, the default)
    pget = _sub_config(cfg, "perceiver_config", _IDEFICS2_PERCEIVER)
    q, kv = pget("resampler_n_heads") * pget("resampler_head_dim"), pget("num_key_value_heads") * pget(
        "resampler_head_dim")
    layer = 3 * th + 2 * th * q + 2 * th * kv + 3 * th * 4 * th
    d = _get(v, _IDEFICS2, "hidden_size")
    return {**tower, "modality_projection": 2 * d * tf + tf * th,
            "perceiver": pget("resampler_n_latents") * th + pget("resampler_depth") * layer + th}


_GRANITE_DOCLING = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_channels=3, image_size=512,
                        patch_size=16, out_hidden_size=1024, scale_factor=4)


def _granite_docling(cfg: dict) -> dict[str, int]:
    """Granite-Docling's SigLIP-like tower (no pooling head) with its connector inside: a LayerNorm, the coarse path (the
    patches shuffled ``scale_factor`` × ``scale_factor``, a linear without bias to ``out_hidden_size`` and one merger per
    DeepStack layer: a LayerNorm and two biased linears) and, with ``use_fine_route``, the same path at half the factor;
    then a LayerNorm, a linear without bias and a LayerNorm; the density router over the tower's features when
    ``density_router_hidden_size`` is set (a top-level key)."""
    v = _vision_block(cfg)
    tower = _siglip_tower(v, _GRANITE_DOCLING, head=False)
    d, o, sf = (_get(v, _GRANITE_DOCLING, k) for k in ("hidden_size", "out_hidden_size", "scale_factor"))
    idx = v.get("deepstack_visual_indexes")
    if idx is None:
        idx = [3, 7, 10]
    elif not isinstance(idx, list):
        raise InputError(N_("config.json field 'vision_config.deepstack_visual_indexes' must be a list of layers"))

    def path(f: int) -> int:
        m = d * f * f
        return m * o + len(idx) * (2 * m + m * o + o + o * o + o)

    fine = v.get("use_fine_route", True) is True
    out = {**tower, "connector": 2 * d + path(sf) + (path(sf // 2) if fine else 0) + 2 * o + o * o + 2 * o}
    r = cfg.get("density_router_hidden_size")
    if r is not None:
        r = _whole("density_router_hidden_size", r)
        out["density_router"] = d + 1 + 2 * d + d * r + r + r + 1
    return out


_LFM3_VL = dict(hidden_size=1024, intermediate_size=2560, num_hidden_layers=14, num_attention_heads=16,
                num_key_value_heads=8, in_channels=3, patch_size=16, temporal_patch_size=2, spatial_merge_size=2,
                conv_kernel_size=3)


def _lfm3_vl(cfg: dict) -> dict[str, int]:
    """LFM3-VL's hybrid tower: a linear patch embedding without bias over ``temporal_patch_size`` frames, an RMSNorm,
    then layers by ``layer_types`` — a gated depthwise convolution (an in-projection to three widths, a
    ``conv_kernel_size``² depthwise Conv2d, an out-projection; no biases) or grouped-KV attention with q/k RMSNorms per
    head — each with a SwiGLU MLP and two RMSNorms; the projector: a LayerNorm, the ``spatial_merge_size``² patches
    merged, two linears (biased with ``projector_bias``) through ``projector_hidden_size`` to the decoder's width."""
    v = _vision_block(cfg)
    g = lambda key: _get(v, _LFM3_VL, key)  # noqa: E731
    d, f, n, heads, kvh = (g(k) for k in ("hidden_size", "intermediate_size", "num_hidden_layers",
                                          "num_attention_heads", "num_key_value_heads"))
    types = v.get("layer_types")
    if types is None:  # (the config class's layout: two convolutions, then attention and convolution in turn)
        types = ["conv" if i < 2 or i % 2 else "full_attention" for i in range(n)]
    if not isinstance(types, list) or len(types) != n or any(not isinstance(t, str) for t in types):
        raise InputError(N_("config.json field 'vision_config.layer_types' must name each of the {n} layers"), n=n)
    hd, k = d // heads, g("conv_kernel_size")
    conv = 3 * d * d + d * k * k + d * d
    attn = d * heads * hd + 2 * d * kvh * hd + heads * hd * d + 2 * hd
    layers = sum(conv if t == "conv" else attn for t in types) + n * (3 * d * f + 2 * d)
    m = d * g("spatial_merge_size") ** 2
    ph = _whole("projector_hidden_size", cfg.get("projector_hidden_size", 4096))
    th, bias = _text_hidden(cfg, 2048), cfg.get("projector_bias", True) is True
    return {"patch_embed": g("in_channels") * g("temporal_patch_size") * g("patch_size") ** 2 * d,
            "embedding_norm": d, "layers": layers,
            "projector": 2 * d + m * ph + ph * th + ((ph + th) if bias else 0)}


def _idefics3(cfg: dict) -> dict[str, int]:
    """Idefics3's / SmolVLM's SigLIP-like vision transformer (no pooling head) and its connector: the patches shuffled
    ``scale_factor`` × ``scale_factor`` into one and a linear without bias to the decoder's width."""
    v = _vision_block(cfg)
    tower = _siglip_tower(v, _ARIA, head=False)  # (Idefics3's vision class defaults: Aria's)
    sf = _whole("scale_factor", cfg.get("scale_factor", 2))
    return {**tower, "connector": _get(v, _ARIA, "hidden_size") * sf * sf * _text_hidden(cfg, 4096)}


def _exaone4_5(cfg: dict) -> dict[str, int]:
    """EXAONE 4.5's tower: Qwen2.5-VL's with grouped keys and values (``num_key_value_heads`` of ``num_heads``, the
    fused qkv that much narrower)."""
    out = _qwen2_vl(cfg, v25=True)
    v = _vision_block(cfg)
    d, depth = _get(v, _QWEN2_5_VL, "hidden_size"), _get(v, _QWEN2_5_VL, "depth")
    heads = _get(v, {"num_heads": 16}, "num_heads")
    kvd = _get(v, {"num_key_value_heads": 8}, "num_key_value_heads") * (d // heads)  # (the class defaults: 8 of 16)
    out["blocks"] -= depth * ((3 * d * d + 3 * d) - (d * (d + 2 * kvd) + d + 2 * kvd))
    return out


def _hyperclovax_vision(cfg: dict) -> dict[str, int]:
    """HyperCLOVA X Vision v2's Qwen2.5-VL tower and one biased linear from its output width to the decoder's."""
    out = _qwen2_vl(cfg, v25=True)
    o, th = _get(_vision_block(cfg), _QWEN2_5_VL, "out_hidden_size"), _text_hidden(cfg, 4096)
    return {**out, "projector": o * th + th}


_VIDEOLLAMA3 = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_channels=3, patch_size=16)


def _video_llama_3(cfg: dict) -> dict[str, int]:
    """VideoLLaMA 3's encoder (a biased patch Conv2d, SigLIP's blocks with rotary positions and no position table, a
    LayerNorm after them) and its projector: two biased linears to the decoder's width."""
    v = _vision_block(cfg)
    d, c, p = _get(v, _VIDEOLLAMA3, "hidden_size"), _get(v, _VIDEOLLAMA3, "num_channels"), \
        _get(v, _VIDEOLLAMA3, "patch_size")
    body = _siglip_encoder_body(v, _VIDEOLLAMA3, head=False)
    th = _text_hidden(cfg, 4096)
    return {"patch_embed": c * p * p * d + d, **body, "projector": d * th + th + th * th + th}


_MINICPMV = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_channels=3, image_size=224,
                patch_size=16)


def _minicpmv(cfg: dict) -> dict[str, int]:
    """MiniCPM-V 4.6's (4.7's, MiniCPM-OCR's) encoder — SigLIP's, no pooling head — with its window-attention merger
    inside (an attention, a LayerNorm, and an MLP over ``window_kernel_size`` patches: a LayerNorm and two biased
    linears, ``intermediate_size`` × the window wide), and its merger: ``merger_times`` rounds of a LayerNorm and two
    biased linears over 2 × 2 patches, the last to the decoder's width."""
    v = _vision_block(cfg)
    tower = _siglip_tower(v, _MINICPMV, head=False)
    d, f = _get(v, _MINICPMV, "hidden_size"), _get(v, _MINICPMV, "intermediate_size")
    wk = v.get("window_kernel_size", [2, 2])
    if not isinstance(wk, list | tuple) or len(wk) != 2:
        raise InputError(N_("config.json field 'vision_config.window_kernel_size' must be a [height, width] list"))
    k = _whole("vision_config.window_kernel_size", wk[0]) * _whole("vision_config.window_kernel_size", wk[1])
    window = 4 * (d * d + d) + 2 * d + 2 * d * k + d * k * f * k + f * k + f * k * d + d
    times, th, m = _whole("merger_times", cfg.get("merger_times", 1)), _text_hidden(cfg, 4096), 4 * d

    def mlp(out: int) -> int:
        return 2 * m + m * m + m + m * out + out

    return {**tower, "window_merger": window, "merger": (times - 1) * mlp(d) + mlp(th)}


def _deepseek_vl(cfg: dict) -> dict[str, int] | None:
    """DeepSeek-VL's SigLIP encoder (its pooling head by ``vision_use_head``) and its aligner: two biased linears to the
    decoder's width."""
    enc = _named_encoder(cfg, "siglip_vision_model", {})
    if enc is None:
        return None
    parts, d = enc
    th = _text_hidden(cfg, 4096)
    return {**parts, "aligner": d * th + th + th * th + th}


_GOT_OCR2 = dict(hidden_size=768, output_channels=256, num_hidden_layers=12, num_attention_heads=12, num_channels=3,
                image_size=1024, patch_size=16, window_size=14, mlp_dim=3072)


def _sam_vit(v: dict, defaults: dict) -> tuple[dict[str, int], int]:
    """SAM's ViT (GOT-OCR2's, DeepSeek-VL-Hybrid's high-resolution encoder): a biased patch Conv2d, an absolute position
    per patch (``use_abs_pos``), blocks of a fused qkv (biased with ``qkv_bias``), a biased output projection, relative
    position tables per head dim (``use_rel_pos``: 2 × (2 × side − 1) rows, the side the window's or, at
    ``global_attn_indexes``, the whole grid's), two LayerNorms and a biased MLP (``mlp_dim``; SAM's own class: hidden ×
    ``mlp_ratio`` when absent); a neck of a 1×1 and a 3×3 convolution without bias, each with a LayerNorm. By part, and
    the neck's ``output_channels``."""
    g = lambda key: _get(v, defaults, key)  # noqa: E731
    d, oc, layers, heads, c = g("hidden_size"), g("output_channels"), g("num_hidden_layers"), g("num_attention_heads"), \
        g("num_channels")
    img, p, w = g("image_size"), g("patch_size"), _get(v, defaults, "window_size", minimum=0)
    if v.get("mlp_dim") is not None:
        m = _whole("vision_config.mlp_dim", v["mlp_dim"])
    elif "mlp_dim" in defaults:
        m = defaults["mlp_dim"]
    else:
        ratio = v.get("mlp_ratio", 4.0)
        if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not ratio > 0:
            raise InputError(N_("config.json field 'vision_config.mlp_ratio' must be a positive number"))
        m = int(d * ratio)
    glob = v.get("global_attn_indexes", [2, 5, 8, 11])
    if not isinstance(glob, list | tuple) or any(isinstance(i, bool) or not isinstance(i, int) for i in glob):
        raise InputError(N_("config.json field 'vision_config.global_attn_indexes' must be a list of layer indexes"))
    hd, grid = d // heads, img // p
    rel = v.get("use_rel_pos", True) is True
    blocks = 0
    for i in range(layers):
        side = grid if (i in glob or w == 0) else w
        blocks += 4 * d + 3 * d * d + (3 * d if v.get("qkv_bias", True) is True else 0) + d * d + d \
            + (2 * (2 * side - 1) * hd if rel else 0) + d * m + m + m * d + d
    return ({"patch_embed": c * p * p * d + d,
             "positions": grid * grid * d if v.get("use_abs_pos", True) is True else 0,
             "blocks": blocks, "neck": d * oc + 2 * oc + oc * oc * 9 + 2 * oc}, oc)


_SAM = dict(hidden_size=768, output_channels=256, num_hidden_layers=12, num_attention_heads=12, num_channels=3,
            image_size=1024, patch_size=16, window_size=14)  # (SamVisionConfig's; its mlp_dim from mlp_ratio)


def _got_ocr2(cfg: dict) -> dict[str, int]:
    """GOT-OCR2's (and PP-Chart2Table's) SAM ViT and neck (:func:`_sam_vit`, its class's ``mlp_dim`` 3,072 by default)
    and the projector: two stride-2 3×3 convolutions without bias to the decoder's width and a biased linear."""
    out, oc = _sam_vit(_vision_block(cfg), _GOT_OCR2)
    th = _text_hidden(cfg, 1024)
    return {**out, "projector": oc * 2 * oc * 9 + 2 * oc * th * 9 + th * th + th}


def _deepseek_vl_hybrid(cfg: dict) -> dict[str, int] | None:
    """DeepSeek-VL's hybrid tower: the SigLIP encoder of ``vision_config`` (its pooling head by ``vision_use_head``) and
    SAM's ViT of ``high_res_vision_config`` with its neck, a second neck and two stride-2 3×3 convolutions (``output_channels``
    to 4 ×, without bias), a gate; the aligner: each encoder's features through a biased linear to half the decoder's
    width, then a biased linear of the decoder's width."""
    low = _named_encoder(cfg, "siglip_vision_model", {})
    hv = _block(cfg, "high_res_vision_config")
    if low is None or hv.get("model_type", "sam_vision_model") != "sam_vision_model":
        return None
    parts, d = low
    sam, oc = _sam_vit(hv, _SAM)
    th = _text_hidden(cfg, 4096)
    half = th // 2
    return {**parts, **{f"high_res_{k}": n for k, n in sam.items()},
            "high_res_neck_proj": sam["neck"] + oc * 2 * oc * 9 + 2 * oc * 4 * oc * 9 + 1,  # (a second neck like SAM's)
            "aligner": d * half + half + 4 * oc * half + half + th * th + th}


_OVIS2 = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=24, num_channels=3, image_size=224,
              patch_size=14, vocab_size=16384, hidden_stride=1, num_visual_indicator_tokens=5)


def _ovis2(cfg: dict) -> dict[str, int]:
    """Ovis2's tower: a biased patch Conv2d, a position per patch, RMSNorms (after the embedding, two per block, one
    at the end), blocks of q/k/v/out (biased with ``qkv_bias``) and a gated MLP (biased with ``mlp_bias``); its visual
    head — a linear without bias from ``hidden_stride``² patches to the visual vocabulary less its indicator tokens and
    a LayerNorm — and the visual embedding table (``vocab_size`` rows at the wrapper's top-level ``hidden_size``)."""
    v = _vision_block(cfg)
    g = lambda key: _get(v, _OVIS2, key)  # noqa: E731
    d, f, layers, c, p = g("hidden_size"), g("intermediate_size"), g("num_hidden_layers"), g("num_channels"), \
        g("patch_size")
    vocab, stride = g("vocab_size"), g("hidden_stride")
    words = vocab - _get(v, _OVIS2, "num_visual_indicator_tokens", minimum=0)
    if words < 1:
        raise InputError(N_("config.json field 'vision_config.num_visual_indicator_tokens' must be below its "
                            "vocab_size"))
    block = 4 * d * d + (4 * d if v.get("qkv_bias", False) is True else 0) + 3 * d * f \
        + (2 * f + d if v.get("mlp_bias", False) is True else 0) + 2 * d
    return {"patch_embed": c * p * p * d + d, "positions": (g("image_size") // p) ** 2 * d, "norms": 2 * d,
            "blocks": layers * block, "visual_head": d * stride * stride * words + 2 * words,
            "visual_embeddings": vocab * _whole("hidden_size", cfg.get("hidden_size", 1536))}


def _fuyu(cfg: dict) -> dict[str, int]:
    """Fuyu's image input: no encoder, each ``patch_size`` × ``patch_size`` × ``num_channels`` patch through one
    biased linear to the decoder's width (the flat file's top-level ``hidden_size``)."""
    th = _text_hidden(cfg, 4096, flat=True)
    p, c = _whole("patch_size", cfg.get("patch_size", 30)), _whole("num_channels", cfg.get("num_channels", 3))
    return {"patch_projection": p * p * c * th + th}


# BLIP-2's / InstructBLIP's vision and Q-Former config class defaults (EVA ViT-g/14; a BERT-base Q-Former)
_BLIP2_VISION = dict(hidden_size=1408, intermediate_size=6144, num_hidden_layers=39, num_channels=3, image_size=224,
                     patch_size=14)
_BLIP2_QFORMER = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, cross_attention_frequency=2,
                      vocab_size=30522, max_position_embeddings=512)


def _blip2(cfg: dict, *, instruct: bool = False) -> dict[str, int]:
    """BLIP-2's tower (InstructBLIP's, InstructBLIP-Video's): the EVA ViT (a class embedding, a biased patch Conv2d, a
    position per patch and one more, blocks with one fused qkv — biased by ``qkv_bias`` — a biased projection, two
    LayerNorms and a biased MLP, a LayerNorm after them), the learned queries, the Q-Former (BERT-like layers over the
    queries: self-attention, a cross-attention to the image every ``cross_attention_frequency`` layers, the queries'
    own MLP and, for the instruction text — InstructBLIP always, BLIP-2 with ``use_qformer_text_input`` — a text MLP;
    InstructBLIP's word and position embeddings) and the biased projection to the decoder's width."""
    v = _vision_block(cfg)
    d, f = _get(v, _BLIP2_VISION, "hidden_size"), _get(v, _BLIP2_VISION, "intermediate_size")
    c, p, img = (_get(v, _BLIP2_VISION, k) for k in ("num_channels", "patch_size", "image_size"))
    qkv_bias = v.get("qkv_bias", True)
    if not isinstance(qkv_bias, bool):
        raise InputError(N_("config.json field 'vision_config.qkv_bias' must be true or false"))
    block = 3 * d * d + (3 * d if qkv_bias else 0) + d * d + d + 4 * d + 2 * d * f + f + d
    qget, q = _sub_config(cfg, "qformer_config", _BLIP2_QFORMER), _block(cfg, "qformer_config")
    h, qf, n = qget("hidden_size"), qget("intermediate_size"), qget("num_hidden_layers")
    every = qget("cross_attention_frequency")
    text_mlp = instruct or q.get("use_qformer_text_input", False) is True
    attn, mlp = 4 * (h * h + h) + 2 * h, h * qf + qf + qf * h + 3 * h
    cross = 2 * (h * h + h) + 2 * (d * h + h) + 2 * h  # keys and values from the image's width (the class sets it)
    layers = n * (attn + mlp * (2 if text_mlp else 1)) + len(range(0, n, every)) * cross
    queries = _whole("num_query_tokens", cfg.get("num_query_tokens", 32))
    out = {"patch_embed": d + c * p * p * d + d, "positions": ((img // p) ** 2 + 1) * d, "blocks":
           _get(v, _BLIP2_VISION, "num_hidden_layers") * block, "post_layernorm": 2 * d, "query_tokens": queries * h,
           "qformer": layers + (qget("vocab_size") * h + qget("max_position_embeddings") * h if instruct else 0) + 2 * h}
    th = _text_hidden(cfg, 768)  # (the default text config: OPT's, 768 wide)
    out["projector"] = h * th + th
    return out


def _paddleocr_vl(cfg: dict) -> dict[str, int]:
    """PaddleOCR-VL's tower (SigLIP's vision transformer without the pooling head) and its projector: a LayerNorm, the
    2×2 patch merge, two biased linears to the decoder's width (``text_config.hidden_size``, the top-level one in the
    flat layout of its Hub files)."""
    v = _vision_block(cfg)
    tower = _siglip_tower(v, _PADDLEOCR_VL, head=False)
    d, m = _get(v, _PADDLEOCR_VL, "hidden_size"), _get(v, _PADDLEOCR_VL, "spatial_merge_size")
    out = _text_hidden(cfg, 1024, flat=True)
    sp = d * m * m
    return {**tower, "projector": 2 * d + sp * sp + sp + sp * out + out}


def _aria(cfg: dict) -> dict[str, int]:
    """Aria's tower (Idefics3's SigLIP-like vision transformer, no pooling head) and its projector: learned queries
    (as many as the largest value of ``projector_patch_to_query_dict``), a cross-attention (q, k, v without bias,
    torch's MultiheadAttention with its in/out projections, a biased linear, two LayerNorms), a LayerNorm and a
    two-layer MLP without biases to the decoder's width."""
    v = _vision_block(cfg)
    tower = _siglip_tower(v, _ARIA, head=False)
    d = _get(v, _ARIA, "hidden_size")
    table = cfg.get("projector_patch_to_query_dict")
    table = _ARIA_QUERIES if table is None else table
    if not isinstance(table, dict) or not table:
        raise InputError(N_("config.json field 'projector_patch_to_query_dict' must be an object of patch counts to "
                            "query counts"))
    queries = max(_whole("projector_patch_to_query_dict", q) for q in table.values())
    th = _text_hidden(cfg, _ARIA_TEXT_HIDDEN)
    cross = 3 * d * d + (3 * d * d + 3 * d) + (d * d + d) + (d * d + d) + 4 * d
    return {**tower, "projector": queries * d + cross + 2 * d + d * th + th * th}


def _cosmos3_edge(cfg: dict) -> dict[str, int]:
    """Cosmos 3 Edge's tower (SigLIP's blocks after a biased linear patch embedding and ``num_patches`` learned
    positions, a post-LayerNorm) and its merger: a LayerNorm, the 2×2 merge, two biased linears through
    ``projector_hidden_size`` (a top-level key) to the decoder's width."""
    v = _vision_block(cfg)
    g = lambda key: _get(v, _COSMOS3_EDGE, key)  # noqa: E731
    d, f, layers, c, p = g("hidden_size"), g("intermediate_size"), g("num_hidden_layers"), g("num_channels"), \
        g("patch_size")
    sp = d * g("spatial_merge_size") ** 2
    ph = _whole("projector_hidden_size", cfg.get("projector_hidden_size", _COSMOS3_EDGE_PROJECTOR))
    th = _text_hidden(cfg, _COSMOS3_EDGE_TEXT_HIDDEN)
    block = 4 * (d * d + d) + 4 * d + 2 * d * f + f + d
    return {"patch_embed": c * p * p * d + d, "positions": g("num_patches") * d, "blocks": layers * block,
            "post_layernorm": 2 * d, "merger": 2 * d + sp * ph + ph + ph * th + th}


def _muse(cfg: dict, wrapper: str) -> dict[str, int]:
    """Muse Spark's and Muse Glimmer's tower: a linear patch embedding without bias over 3 channels × patch_temporal ×
    patch², a learned position grid (pos_emb_height × pos_emb_width), LayerNorms before and after the blocks, blocks of
    biased q/k/v/proj and a biased GELU MLP with two LayerNorms; the adapter (two linears without bias, from the top
    level's ``out_hidden_size`` to ``projector_hidden_size``) and the projection to the decoder's width (no bias; the
    norm after it has no scale)."""
    v = _vision_block(cfg)
    g = lambda key: _get(v, _MUSE, key)  # noqa: E731
    d, f, layers, p, t = g("hidden_size"), g("intermediate_size"), g("num_hidden_layers"), g("patch_size"), \
        g("patch_temporal")
    top = {k: _whole(k, cfg.get(k, dv)) for k, dv in _MUSE_TOP.items()}
    th = _text_hidden(cfg, _MUSE_TEXT_HIDDEN[wrapper])
    ph = top["projector_hidden_size"]
    block = 4 * d + 4 * (d * d + d) + 2 * d * f + f + d
    return {"patch_embed": 3 * t * p * p * d, "positions": g("pos_emb_height") * g("pos_emb_width") * d,
            "layernorms": 4 * d, "blocks": layers * block,
            "adapter": top["out_hidden_size"] * ph + ph * ph, "projection": ph * th}


def _molmo2_attention(block: dict, defaults: dict, width_in: int) -> int:
    """One Molmo2 attention (the ViT's, or the adapter's pooling one over ``width_in`` inputs)."""
    d, h, kv = _get(block, defaults, "hidden_size"), _get(block, defaults, "num_attention_heads"), \
        _get(block, defaults, "num_key_value_heads")
    hd = _get(block, defaults, "head_dim")
    bias = block.get("attention_bias", True) is True
    return width_in * (h + 2 * kv) * hd + h * hd * d + ((h + 2 * kv) * hd + d if bias else 0)


def _molmo2(cfg: dict) -> dict[str, int]:
    """Molmo2's ViT (a biased linear patch embedding, a learned position table, SigLIP-like blocks with their own head
    dim) and its adapter (``adapter_config``): an attention pooling the concatenated outputs of the
    ``vision_feature_layer`` layers and a SwiGLU projector to ``text_hidden_size``."""
    v = dict(_vision_block(cfg))
    for short, key in (("image_patch_size", "patch_size"), ("image_num_pos", "num_position_embeddings"),
                       ("image_default_input_size", "image_size")):
        if short in v:
            v[key] = v[short]
    d, f, layers = (_get(v, _MOLMO2_VISION, k) for k in ("hidden_size", "intermediate_size", "num_hidden_layers"))
    p, c = _get(v, _MOLMO2_VISION, "patch_size"), _get(v, _MOLMO2_VISION, "num_channels")
    if v.get("num_position_embeddings") is not None:
        positions = _whole("vision_config.num_position_embeddings", v["num_position_embeddings"])
    else:
        size = v.get("image_size") or [378, 378]
        if not isinstance(size, list | tuple) or len(size) != 2:
            raise InputError(N_("config.json field 'vision_config.image_size' must be a [height, width] list"))
        positions = (_whole("vision_config.image_size", size[0]) // p) * (_whole("vision_config.image_size", size[1]) // p)
    a = cfg.get("adapter_config") if isinstance(cfg.get("adapter_config"), dict) else {}
    layers_read = a.get("vit_layers", a.get("vision_feature_layer")) or [24, 18]
    if not isinstance(layers_read, list):
        raise InputError(N_("config.json field 'adapter_config.vision_feature_layer' must be a list"))
    da, fa = _get(a, _MOLMO2_ADAPTER, "hidden_size"), _get(a, _MOLMO2_ADAPTER, "intermediate_size")
    th = _get(a, _MOLMO2_ADAPTER, "text_hidden_size")
    block = 4 * d + _molmo2_attention(v, _MOLMO2_VISION, d) + d * f + f + f * d + d
    mlp_bias = a.get("mlp_bias", False) is True
    return {"patch_embed": c * p * p * d + d, "positions": positions * d, "blocks": layers * block,
            "adapter_pooling": _molmo2_attention(a, _MOLMO2_ADAPTER, da * len(layers_read)),
            "adapter_projector": 2 * da * fa + (2 * fa if mlp_bias else 0) + fa * th}


def _hy_v4_vl(cfg: dict) -> dict[str, int]:
    """HY-V4-VL's tower: a biased patch Conv2d, a learned position per patch of the largest image and a class token,
    blocks of biased q/k/v/o and a biased GELU MLP with two LayerNorms; the merger — an RMSNorm, a strided
    convolution to hidden × merge², a 1×1 convolution to the decoder's width (``out_hidden_size``) and a newline
    embedding."""
    v = _vision_block(cfg)
    g = lambda key: _get(v, _HY_V4_VL, key)  # noqa: E731
    d, f, layers, heads = g("hidden_size"), g("intermediate_size"), g("num_hidden_layers"), g("num_attention_heads")
    c, p, m, o = g("num_channels"), g("patch_size"), g("spatial_merge_size"), g("out_hidden_size")
    size = g("max_image_size")
    a = heads * (_whole("vision_config.head_dim", v["head_dim"]) if "head_dim" in v else d // heads)
    block = 4 * d + 3 * (d * a + a) + a * d + d + d * f + f + f * d + d
    dm = d * m * m
    return {"patch_embed": c * p * p * d + d, "positions": ((size // p) ** 2 + 1) * d, "blocks": layers * block,
            "merger": d + dm * d * m * m + dm + dm * o + o + o}  # (RMSNorm, strided conv, 1×1 conv, newline)


def _hunyuan_vl(cfg: dict) -> dict[str, int]:
    """HunYuan-VL's tower: a biased patch Conv2d, a learned position per patch of the largest image and one more,
    blocks of biased q/k/v/o (``num_key_value_heads`` unused: every head has its keys) and a biased GELU MLP with two
    LayerNorms; the merger — an RMSNorm, a strided convolution to 2 × hidden, a 1×1 convolution to 4 × hidden, a
    newline embedding, a biased linear to the decoder's width, the image begin/end/separator embeddings and an RMSNorm.
    The decoder's width is its ``text_config.hidden_size`` (the wrapper overwrites the tower's ``text_hidden_size``
    with it; the flat layout's top-level ``hidden_size``)."""
    v = _vision_block(cfg)
    g = lambda key: _get(v, _HUNYUAN_VL, key)  # noqa: E731
    d, f, layers, heads = g("hidden_size"), g("intermediate_size"), g("num_hidden_layers"), g("num_attention_heads")
    c, p, m, size = g("num_channels"), g("patch_size"), g("spatial_merge_size"), g("max_image_size")
    th = _text_hidden(cfg, _HUNYUAN_VL_TEXT_HIDDEN, flat=True)
    a = heads * (_whole("vision_config.head_dim", v["head_dim"]) if "head_dim" in v else d // heads)
    block = 4 * d + 3 * (d * a + a) + a * d + d + d * f + f + f * d + d
    merger = d + (d * 2 * d * m * m + 2 * d) + (2 * d * 4 * d + 4 * d) + 4 * d + (4 * d * th + th) + 3 * th + th
    return {"patch_embed": c * p * p * d + d, "positions": ((size // p) ** 2 + 1) * d, "blocks": layers * block,
            "merger": merger}


def _step3p7(cfg: dict) -> dict[str, int]:
    """Step 3.7's tower: a patch Conv2d without bias, a learned position per patch, a LayerNorm before the blocks,
    blocks of biased q/k/v/out and a biased MLP (``int(hidden × mlp_ratio)`` wide, as the config class sets it), two
    LayerNorms and two layer scales each, then two stride-2 3×3 convolutions doubling the width twice, and the
    projector from 4 × hidden to the decoder's width (biased with ``projector_bias``). The checkpoints' own spellings
    (width, layers) are read as the config class reads them."""
    v = dict(_vision_block(cfg))
    for short, key in (("width", "hidden_size"), ("layers", "num_hidden_layers")):
        if short in v:
            v[key] = v[short]
    d, layers = _get(v, _STEP3P7, "hidden_size"), _get(v, _STEP3P7, "num_hidden_layers")
    c, p, img = _get(v, _STEP3P7, "num_channels"), _get(v, _STEP3P7, "patch_size"), _get(v, _STEP3P7, "image_size")
    ratio = v.get("mlp_ratio", _STEP3P7_MLP_RATIO)
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or ratio <= 0:
        raise InputError(N_("config.json field 'vision_config.mlp_ratio' must be a positive number"))
    f = int(d * ratio)
    th = _text_hidden(cfg, 4096)
    block = 4 * d + 2 * d + 4 * (d * d + d) + d * f + f + f * d + d
    return {"patch_embed": c * p * p * d, "positions": (img // p) ** 2 * d, "pre_layernorm": 2 * d,
            "blocks": layers * block, "downsamplers": d * 2 * d * 9 + 2 * d + 2 * d * 4 * d * 9 + 4 * d,
            "projector": 4 * d * th + (th if cfg.get("projector_bias") is True else 0)}


def _top_hidden(cfg: dict) -> int:
    return _whole("hidden_size", cfg.get("hidden_size", 3072))


def _phi4_multimodal(cfg: dict) -> dict[str, int]:
    """Phi-4-multimodal's image encoder: SigLIP's tower with its pooling head (the config's vision_config), the
    projection up to the decoder's width and down again (both biased), the global and sub-image separators."""
    v = _vision_block(cfg)
    d, h = _get(v, _PHI4MM_VISION, "hidden_size"), _top_hidden(cfg)
    out = _siglip_tower(v, _PHI4MM_VISION)
    out["projector"] = d * h + h + h * h + h + 2 * d
    return out


def _phi4_multimodal_audio(cfg: dict) -> dict[str, int]:
    """Phi-4-multimodal's audio encoder: NeMo's convolutional subsampling (a 3×3 stride-2 convolution, then per
    further halving of time a depthwise 3×3 and a pointwise one, and a linear to the width), a relative attention
    bias per head, ``num_blocks`` conformer blocks (two half-step MLPs with a LayerNorm and a fused gate|up, biased
    q/k/v/o attention, a convolution module: LayerNorm, a GLU pointwise convolution with two biases, a depthwise
    separable convolution and a pointwise one; two LayerNorms), and its projections to the decoder's width, one pair
    for speech and one for speech with an image."""
    a = cfg.get("audio_config") or {}
    if not isinstance(a, dict):
        raise InputError(N_("config.json field 'audio_config' must be an object"))

    def get(key: str, minimum: int = 1) -> int:
        return _whole(f"audio_config.{key}", a.get(key, _PHI4MM_AUDIO[key]), minimum=minimum)

    d, f, heads = get("hidden_size"), get("intermediate_size"), get("num_attention_heads")
    pw, sep, mult, k = (get("ext_pw_out_channel"), get("depthwise_separable_out_channel"), get("depthwise_multiplier"),
                        get("kernel_size"))
    cc, reduction, size = get("nemo_conv_channels"), get("time_reduction", 2), get("input_size")
    halvings = reduction.bit_length() - 1  # int(log2(time_reduction)), as the config class computes it
    for _ in range(halvings):
        size = (size - 1) // 2 + 1
    subsampling = 10 * cc + (halvings - 1) * (10 * cc + cc * cc + cc) + cc * size * d + d
    buckets = get("bias_max_distance") * (1 if a.get("bias_symmetric", False) is True else 2)
    hd = a.get("head_dim", d // heads)
    q = heads * _whole("audio_config.head_dim", hd)
    mlp = 2 * d + d * 2 * f + 2 * f + f * d + d
    attention = 3 * (d * q + q) + q * d + d
    conv = 2 * d + (d * 2 * pw + 2 * pw + 2 * pw) + (d * mult * k + d * mult) + (d * mult * sep + sep) + (d * pw + pw)
    block = 2 * mlp + attention + conv + 4 * d
    h, ds = _top_hidden(cfg), get("downsample_rate")
    return {"subsampling": subsampling, "relative_attention_bias": buckets * heads, "blocks": get("num_blocks") * block,
            "projectors": 2 * (d * ds * h + h + h * h + h)}


def _inkling_audio(cfg: dict) -> dict[str, int]:
    """Inkling's audio tower: each frame's mel bins, quantized to ``mel_vocab_size`` levels, embedded (one table of
    n_mel_bins × mel_vocab_size rows at the decoder's width) and summed, then an RMSNorm."""
    a = cfg.get("audio_config") or {}
    if not isinstance(a, dict):
        raise InputError(N_("config.json field 'audio_config' must be an object"))
    h = _text_hidden(cfg, 6144)  # the config class sets the tower's width to the decoder's
    bins = _whole("n_mel_bins", a.get("n_mel_bins", a.get("num_codebooks", 80)))
    levels = _whole("mel_vocab_size", a.get("mel_vocab_size", a.get("codebook_size", 256)))
    return {"embedding": bins * levels * h, "norm": h}


def audio_params(model_type: str, cfg: dict) -> dict[str, int] | None:
    """The audio tower's parameters by part (None: a model whose audio tower this module does not count)."""
    if model_type == "phi4_multimodal":
        return _phi4_multimodal_audio(cfg)
    if model_type == "inkling_mm_model":
        return _inkling_audio(cfg)
    if model_type == "gemma4_unified":
        return _gemma4_unified_audio(cfg)
    return None


# wrapper -> its tower's count (variants of one tower through partial)
_TOWERS: dict[str, Callable[[dict], dict[str, int] | None]] = {
    **dict.fromkeys(("qwen3_vl", "qwen3_vl_moe", "cohere_compass", "qwen3_omni_moe_thinker"), _qwen3_vl),
    **dict.fromkeys(("qwen3_5", "qwen3_5_moe", "qwen4_exp"), partial(_qwen3_vl, deepstack=False)),  # (Qwen4-Exp's is
    # Qwen3.5-MoE's)
    "dots3_note": _dots3_note, "emu3": _emu3, "apertus1p5": _apertus1p5, "gemma3": _gemma3, "gemma4": _gemma4, "gemma4_unified": _gemma4_unified, "mllama": _mllama, "llama4": _llama4,
    "mistral3": _mistral3, "mistral_large4": partial(_mistral3, large4=True),
    "ernie4_5_vl_moe": _ernie4_5_vl, "paddleocr_vl": _paddleocr_vl, "molmo2": _molmo2, "cosmos3_edge": _cosmos3_edge,
    "muse_spark": partial(_muse, wrapper="muse_spark"), "muse_glimmer": partial(_muse, wrapper="muse_glimmer"),
    "hy_v4_vl": _hy_v4_vl, "hunyuan_vl": _hunyuan_vl, "aria": _aria, "step3p7": _step3p7,
    "glm_ocr": _glm_ocr, "glm5_next": partial(_glm_ocr, glm5_next=True),
    "minimax_m3_vl": _minimax_m3, "phi4_multimodal": _phi4_multimodal,
    "qwen2_vl": partial(_qwen2_vl, v25=False),
    **dict.fromkeys(("qwen2_5_vl", "qwen2_5_omni_thinker"), partial(_qwen2_vl, v25=True)),  # (Omni: 2.5-VL's tower)
    **dict.fromkeys(("glm4v", "glm46v", "glm4v_moe", "glmga"), _glm4v),  # (GLM-GA: GLM-4.1V's tower)
    **dict.fromkeys(("inkling2", "inkling2_loop"), _inkling2),
    "llava": _llava, "llava_next": partial(_llava, newline=True),
    "llava_next_video": partial(_llava, newline=True),
    "llava_onevision": partial(_llava, spec="siglip_vision_model", init=_ONEVISION_SIGLIP, newline=True),
    "vipllava": partial(_llava, feature_layers=5, vip=True),
    "video_llava": partial(_llava, init=dict(_LLAVA_CLIP, image_size=224), towers=2),
    "paligemma": _paligemma, "aya_vision": _aya_vision, "cohere2_vision": partial(_aya_vision, command_a=True),
    "lfm2_vl": _lfm2_vl, "lighton_ocr": partial(_mistral3, text_hidden=1024), "shieldgemma2": _gemma3,
    "internvl": _internvl, "kimi_k25": _kimi_k25, "idefics3": _idefics3, "smolvlm": _idefics3,
    "hyperclovax_vision_v2": _hyperclovax_vision, "cosmos3_omni": _qwen3_vl, "fuyu": _fuyu,
    "qianfan_ocr": partial(_internvl, attention_bias=True), "video_llama_3": _video_llama_3, "deepseek_vl": _deepseek_vl,
    "deepseek_vl_hybrid": _deepseek_vl_hybrid, "lfm3_vl": _lfm3_vl,
    **dict.fromkeys(("minicpmv4_6", "minicpmv4_7", "minicpm_ocr"), _minicpmv), "exaone4_5": _exaone4_5,
    **dict.fromkeys(("got_ocr2", "pp_chart2table"), _got_ocr2), "ovis2": _ovis2, "blip-2": _blip2, "idefics2": _idefics2,
    "granite_docling": _granite_docling,
    **dict.fromkeys(("instructblip", "instructblipvideo"), partial(_blip2, instruct=True)),
}
VISION_WRAPPERS = tuple(_TOWERS)


def vision_params(wrapper: str, cfg: dict) -> dict[str, int] | None:
    """The vision tower's parameters by part (None: a wrapper whose tower this module does not count)."""
    tower = _TOWERS.get(wrapper)
    return None if tower is None else tower(cfg)
