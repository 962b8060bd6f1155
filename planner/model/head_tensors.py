"""The tensors a serving engine holds for a speculator head, beside the target it proposes for.

A head is not a model that runs alone: the engine builds its own layers and replaces what it shares with the
target by the target's tensors, so those are counted once (in the target). Layouts, as vLLM builds and loads
them (``vllm/model_executor/models/llama_eagle3.py``, ``llama_eagle.py``, ``deepseek_mtp.py``, and
``EagleProposer.load_model`` in ``vllm/v1/spec_decode/eagle.py``, releases 0.10 to 0.19), with ``h`` the head's
hidden size, ``H`` the target's, ``V`` the vocabulary and ``V_d`` the draft vocabulary:

* ``eagle3``: one decoder layer whose q/k/v read ``2h`` inputs (the normed embedding and the fused hidden state,
  ``LlamaDecoderLayer`` with ``qkv_input_size = 2 * hidden_size`` for layer 0), its o_proj and gated MLP, three
  norms in layer 0 (``input_layernorm``, ``hidden_norm``, ``post_attention_layernorm``), ``fc`` ``3H → h`` without
  bias, the final ``norm``, its own ``lm_head`` of ``V_d × h`` and ``draft_id_to_target_id`` (``d2t``, ``V_d``
  int64; ``t2d`` is skipped by ``load_weights``). The embedding is the target's when shared;
* ``eagle`` (EAGLE-1/2): its decoder layer(s), layer 0 without ``input_layernorm``, ``fc`` ``2h → h`` without
  bias, no final norm; embedding and LM head are the target's (``EagleLlamaForCausalLM`` has no ``lm_head`` and
  skips ``embed_tokens`` when PP = 1);
* ``mtp`` (DeepSeek-V3): per MTP layer ``enorm`` and ``hnorm`` (``h``), ``eh_proj`` ``2h → h``, one decoder layer of
  the target's geometry (MLA attention and an MoE MLP) and ``shared_head.norm``; ``embed_tokens`` and
  ``shared_head.head`` are replaced by the target's (``EagleProposer.load_model``: "Detected MTP model. Sharing
  target model embedding weights"), though the checkpoint stores copies (``README_WEIGHTS.md`` of
  deepseek-ai/DeepSeek-V3).

>>> from planner.model.architecture import architecture_from_config
>>> head = architecture_from_config({"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 4096,
...     "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256})
>>> tensors = head_weight_tensors(head, "eagle3", target_hidden=4096, draft_vocab=32000)
>>> sum(t.numel for t in tensors if t.kind != "index")   # midlayer + fc + norms + lm_head (32000 x 4096)
424689664
"""

from __future__ import annotations

from typing import Literal

from planner.model.geometry import Architecture
from planner.model.param_count import weight_tensors
from planner.model.tensors import WeightTensor

HeadKind = Literal["eagle", "eagle3", "mtp"]


def _llama_layer(arch: Architecture, qkv_in: int, layers: tuple[int, ...]) -> list[WeightTensor]:
    """Attention (q/k/v reading ``qkv_in`` inputs) and the gated MLP of a Llama-style decoder layer."""
    h, d = arch.hidden_size, arch.head_dim
    q, kv = arch.num_attention_heads * d, arch.num_kv_heads * d
    tensors = [
        WeightTensor("attention", "linear", q, qkv_in, 1, layers, "column"),
        WeightTensor("attention", "linear", kv, qkv_in, 2, layers, "kv_column"),
        WeightTensor("attention", "linear", h, q, 1, layers, "row"),
        WeightTensor("mlp", "linear", arch.intermediate_size, h, 2, layers, "column"),
        WeightTensor("mlp", "linear", h, arch.intermediate_size, 1, layers, "row"),
    ]
    if arch.qkv_bias:
        tensors.append(WeightTensor("attention", "bias", q + 2 * kv, 1, 1, layers, "column"))
    return tensors


def _eagle3(arch: Architecture, target_hidden: int, draft_vocab: int, shares_embeddings: bool) -> list[WeightTensor]:
    h = arch.hidden_size
    first, rest = (0,), tuple(range(1, arch.num_layers))
    tensors = _llama_layer(arch, 2 * h, first)
    tensors.append(WeightTensor("norms", "norm", h, 1, 3, first))  # input_layernorm, hidden_norm, post_attention
    if rest:
        tensors += _llama_layer(arch, h, rest)
        tensors.append(WeightTensor("norms", "norm", h, 1, 3, rest))
    tensors += [
        WeightTensor("fc", "linear", h, 3 * target_hidden),
        WeightTensor("norms", "norm", h, 1),  # final norm
        WeightTensor("lm_head", "lm_head", draft_vocab, h, tp_style="vocab"),
        WeightTensor("vocab_map", "index", draft_vocab, 1),  # d2t, int64
    ]
    if not shares_embeddings:
        tensors.append(WeightTensor("embedding", "embedding", arch.vocab_size, h, tp_style="vocab"))
    return tensors


def _eagle(arch: Architecture, shares_embeddings: bool, shares_lm_head: bool) -> list[WeightTensor]:
    h = arch.hidden_size
    every = tuple(range(arch.num_layers))
    tensors = _llama_layer(arch, h, every)
    tensors.append(WeightTensor("norms", "norm", h, 1, 1, every))  # post_attention_layernorm
    if arch.num_layers > 1:
        tensors.append(WeightTensor("norms", "norm", h, 1, 1, every[1:]))  # input_layernorm after layer 0
    tensors.append(WeightTensor("fc", "linear", h, 2 * h))
    if not shares_embeddings:
        tensors.append(WeightTensor("embedding", "embedding", arch.vocab_size, h, tp_style="vocab"))
    if not shares_lm_head:
        tensors.append(WeightTensor("lm_head", "lm_head", arch.vocab_size, h, tp_style="vocab"))
    return tensors


def _mtp(arch: Architecture, shares_embeddings: bool, shares_lm_head: bool) -> list[WeightTensor]:
    h = arch.hidden_size
    every = tuple(range(arch.num_layers))
    tensors = [t for t in weight_tensors(arch) if t.layers]  # the decoder layer(s) at the target's geometry
    tensors += [
        WeightTensor("norms", "norm", h, 1, 3, every),  # enorm, hnorm, shared_head.norm
        WeightTensor("fc", "linear", h, 2 * h, 1, every),  # eh_proj
    ]
    if not shares_embeddings:
        tensors.append(WeightTensor("embedding", "embedding", arch.vocab_size, h, tp_style="vocab"))
    if not shares_lm_head:
        tensors.append(WeightTensor("lm_head", "lm_head", arch.vocab_size, h, 1, every, "vocab"))
    return tensors


def head_weight_tensors(
    arch: Architecture,
    kind: HeadKind,
    *,
    target_hidden: int | None = None,
    draft_vocab: int | None = None,
    shares_embeddings: bool = True,
    shares_lm_head: bool | None = None,
) -> list[WeightTensor]:
    """The tensors the engine allocates for a head of ``kind`` (shared ones left to the target).

    ``target_hidden`` defaults to the head's hidden size, ``draft_vocab`` to its vocabulary; ``shares_lm_head``
    defaults to False for EAGLE-3 (its own reduced head) and True otherwise.
    """
    if arch.formula_family is None:
        raise ValueError(f"{arch.model_type!r} heads have no closed-form layout")
    if kind == "eagle3":
        return _eagle3(arch, target_hidden or arch.hidden_size, draft_vocab or arch.vocab_size, shares_embeddings)
    lm_shared = True if shares_lm_head is None else shares_lm_head
    if kind == "eagle":
        return _eagle(arch, shares_embeddings, lm_shared)
    return _mtp(arch, shares_embeddings, lm_shared)
