"""Reference torch modules for the estimator's tests: a plain eager decoder-only transformer.

Written independently of gemmlib.llm.accounting: Llama-style (GQA, SwiGLU, RMSNorm), GPT-style
(plain MLP, LayerNorm with bias, learned positions, biases everywhere, tied head) and a
mixture-of-experts MLP (router + top-k, each expert run on exactly the tokens routed to it),
selected by the fields of a ModelConfig. The GEMMs live in submodules named as the estimator
names its ops (q_proj ... lm_head, attn_scores, attn_values), so FlopCounterMode's per-module
counts can be compared op by op.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class MatMul(nn.Module):
    """A named matmul, so FlopCounterMode attributes its FLOPs to this module."""

    def forward(self, a, b):
        return a @ b


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Attention(nn.Module):
    def __init__(self, cfg, causal_rows=False):
        super().__init__()
        self.h, self.kvh, self.hd = cfg.heads, cfg.kv_heads, cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden, cfg.heads * cfg.head_dim, bias=cfg.qkv_bias)
        self.k_proj = nn.Linear(cfg.hidden, cfg.kv_heads * cfg.head_dim, bias=cfg.qkv_bias)
        self.v_proj = nn.Linear(cfg.hidden, cfg.kv_heads * cfg.head_dim, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(cfg.heads * cfg.head_dim, cfg.hidden, bias=cfg.o_bias)
        self.attn_scores = MatMul()
        self.attn_values = MatMul()
        self.causal_rows = causal_rows  # compute only the causal triangle, row by row

    def forward(self, x, cache=None):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kvh, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kvh, self.hd).transpose(1, 2)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        new_cache = (k, v)
        rep = self.h // self.kvh
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        keys = k.shape[2]
        if self.causal_rows:
            rows = []
            for i in range(t):  # query i (position keys - t + i) sees keys 0 .. keys - t + i
                n = keys - t + i + 1
                s = self.attn_scores(q[:, :, i:i + 1], k[:, :, :n].transpose(-2, -1)) / math.sqrt(self.hd)
                rows.append(self.attn_values(torch.softmax(s, -1), v[:, :, :n]))
            o = torch.cat(rows, dim=2)
        else:
            s = self.attn_scores(q, k.transpose(-2, -1)) / math.sqrt(self.hd)
            if t > 1:
                mask = torch.ones(t, keys, dtype=torch.bool, device=x.device).tril(keys - t)
                s = s.masked_fill(~mask, float("-inf"))
            o = self.attn_values(torch.softmax(s, -1), v)
        o = o.transpose(1, 2).reshape(b, t, self.h * self.hd)
        return self.o_proj(o), new_cache


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.gated = cfg.mlp == "gated"
        if self.gated:
            self.gate_proj = nn.Linear(cfg.hidden, cfg.ffn, bias=cfg.mlp_bias)
        self.up_proj = nn.Linear(cfg.hidden, cfg.ffn, bias=cfg.mlp_bias)
        self.down_proj = nn.Linear(cfg.ffn, cfg.hidden, bias=cfg.mlp_bias)

    def forward(self, x):
        if self.gated:
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return self.down_proj(F.gelu(self.up_proj(x)))


class MoE(nn.Module):
    """Router + top-k: every token reaches exactly k distinct experts; each expert sees only its tokens."""

    def __init__(self, cfg):
        super().__init__()
        self.k = cfg.experts_per_token
        self.router = nn.Linear(cfg.hidden, cfg.experts, bias=False)
        self.experts = nn.ModuleList(MLP(cfg) for _ in range(cfg.experts))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        weights, idx = torch.topk(torch.softmax(self.router(x), -1), self.k, dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tok, slot = (idx == e).nonzero(as_tuple=True)
            if tok.numel():
                out.index_add_(0, tok, expert(x[tok]) * weights[tok, slot, None])
        return out.reshape(shape)


class Block(nn.Module):
    def __init__(self, cfg, causal_rows=False):
        super().__init__()
        norm = (lambda: nn.LayerNorm(cfg.hidden)) if cfg.norm == "layer" else (lambda: RMSNorm(cfg.hidden))
        self.norm1, self.norm2 = norm(), norm()
        self.attn = Attention(cfg, causal_rows)
        self.mlp = MoE(cfg) if cfg.experts else MLP(cfg)

    def forward(self, x, cache=None):
        a, new_cache = self.attn(self.norm1(x), cache)
        x = x + a
        return x + self.mlp(self.norm2(x)), new_cache


class Decoder(nn.Module):
    def __init__(self, cfg, causal_rows=False):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
        self.pos = nn.Embedding(cfg.learned_positions, cfg.hidden) if cfg.learned_positions else None
        self.layers = nn.ModuleList(Block(cfg, causal_rows) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(cfg.hidden) if cfg.norm == "layer" else RMSNorm(cfg.hidden)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)
        if cfg.tied_embeddings:
            self.lm_head.weight = self.embed.weight

    def forward(self, ids, caches=None, last_only=False):
        start = 0 if caches is None else caches[0][0].shape[2]
        x = self.embed(ids)
        if self.pos is not None:
            x = x + self.pos(torch.arange(start, start + ids.shape[1], device=ids.device))
        new = []
        for i, layer in enumerate(self.layers):
            x, c = layer(x, None if caches is None else caches[i])
            new.append(c)
        x = self.norm(x)
        if last_only:
            x = x[:, -1:]
        return self.lm_head(x), new


def count_params(module: nn.Module) -> int:
    """numel of every distinct parameter (a tied head is counted once)."""
    return sum(p.numel() for p in module.parameters())


def flops_by_op(counter, names) -> dict[str, int]:
    """Sum FlopCounterMode's per-module counts over modules whose last name is an op name."""
    out = dict.fromkeys(names, 0)
    for mod, counts in counter.get_flop_counts().items():
        last = mod.rsplit(".", 1)[-1]
        if last in out:
            out[last] += sum(counts.values())
    return out
