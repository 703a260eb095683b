"""The Dream-family (Qwen2-shaped, bidirectional) transformer in PyTorch.

Same computation as engine/ (docs MODELS.md §1.2): RMSNorm in fp32 then times weight,
q/k/v with bias and o without, rotate-half RoPE, GQA, full (non-causal) attention with
an optional key-padding mask, SwiGLU MLP, final norm, untied LM head. Parameter names
are the Hugging Face Qwen2 ones, so the state dict is the safetensors layout. Written
for PyTorch 1.13 (Debian 12) and newer.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Config:
    KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "intermediate_size", "rope_theta", "rms_norm_eps",
            "max_position_embeddings")

    def __init__(self, **kw):
        self.vocab_size = 8192
        self.hidden_size = 256
        self.num_hidden_layers = 4
        self.num_attention_heads = 8
        self.num_key_value_heads = 2
        self.intermediate_size = 704
        self.rope_theta = 10000.0
        self.rms_norm_eps = 1e-6
        self.max_position_embeddings = 512
        for k, v in kw.items():
            if k not in self.KEYS:
                raise KeyError(k)
            setattr(self, k, v)

    def to_dict(self):
        return {k: getattr(self, k) for k in self.KEYS}

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        dt = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dt)


def rope_tables(cfg, n, device):
    hd = cfg.head_dim
    inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float32, device=device)
                                    / hd))
    t = torch.arange(n, dtype=torch.float32, device=device)
    f = torch.outer(t, inv)
    emb = torch.cat([f, f], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, hd = cfg.hidden_size, cfg.head_dim
        self.nh, self.nkv, self.hd = cfg.num_attention_heads, cfg.num_key_value_heads, hd
        self.q_proj = nn.Linear(d, self.nh * hd, bias=True)
        self.k_proj = nn.Linear(d, self.nkv * hd, bias=True)
        self.v_proj = nn.Linear(d, self.nkv * hd, bias=True)
        self.o_proj = nn.Linear(self.nh * hd, d, bias=False)

    def forward(self, x, cos, sin, key_bias):
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, self.nh, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, n, self.nkv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.nkv, self.hd).transpose(1, 2)
        cos, sin = cos.to(q.dtype), sin.to(q.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.nh // self.nkv
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        # The scale folds into q (an [n, hd] multiply instead of one over [n, n] scores).
        s = torch.matmul(q * (1.0 / math.sqrt(self.hd)), k.transpose(-1, -2))
        if key_bias is not None:
            s = s + key_bias
        a = torch.matmul(torch.softmax(s, dim=-1), v)
        return self.o_proj(a.transpose(1, 2).reshape(b, n, self.nh * self.hd))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, f = cfg.hidden_size, cfg.intermediate_size
        self.gate_proj = nn.Linear(d, f, bias=False)
        self.up_proj = nn.Linear(d, f, bias=False)
        self.down_proj = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, h, cos, sin, key_bias):
        h = h + self.self_attn(self.input_layernorm(h), cos, sin, key_bias)
        return h + self.mlp(self.post_attention_layernorm(h))


class Inner(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class DreamLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.model = Inner(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.reset_parameters()

    def reset_parameters(self):
        std = 0.02
        for name, p in self.named_parameters():
            if name.endswith("layernorm.weight") or name == "model.norm.weight":
                nn.init.ones_(p)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)
            elif name.endswith(("o_proj.weight", "down_proj.weight")):
                nn.init.normal_(p, std=std / math.sqrt(2 * self.cfg.num_hidden_layers))
            else:
                nn.init.normal_(p, std=std)

    def hidden(self, ids, valid=None, causal=False):
        """Final-norm hidden states [B, N, D]; valid [B, N] bool masks padded keys.

        causal=True is the autoregressive warm start (train.py --p-ar): Dream itself
        starts from an autoregressive model, and its logit shift keeps that model's
        meaning of each row (row i predicts token i + 1), so the same weights continue
        as a masked-diffusion model with full attention.
        """
        n = ids.shape[1]
        cos, sin = rope_tables(self.cfg, n, ids.device)
        key_bias = None
        if valid is not None and not bool(valid.all()):
            key_bias = torch.zeros(valid.shape, dtype=torch.float32, device=ids.device)
            key_bias = key_bias.masked_fill(~valid, float("-inf"))[:, None, None, :]
        if causal:
            tri = torch.full((n, n), float("-inf"), device=ids.device).triu(1)
            key_bias = tri if key_bias is None else key_bias + tri
        h = self.model.embed_tokens(ids)
        for layer in self.model.layers:
            h = layer(h, cos, sin, key_bias)
        return self.model.norm(h)

    def forward(self, ids, valid=None):
        """Raw (unshifted) logits [B, N, V]; row i - 1 predicts token i (Dream's shift)."""
        return self.lm_head(self.hidden(ids, valid))


def count_params(model):
    return sum(p.numel() for p in model.parameters())
