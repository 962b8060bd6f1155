"""The longest ``max_model_len`` an engine accepts without its override: the length it derives from the config.

Two derivations (``context_limit.derivation`` in data/engine_releases.json): ``smallest_length_key`` (vLLM) and
``first_length_key`` (SGLang).

vLLM (``_get_and_verify_max_len``, vllm/config.py to 0.10, vllm/config/model.py after): the smallest of the
length keys the config has; a rope scaling other than ``llama3``, ``su`` and ``longrope`` multiplies it by its
factor (YaRN from ``original_max_position_embeddings``). SGLang (``get_context_length``,
python/sglang/srt/utils/hf_transformers_utils.py): the first of its length keys, times the rope factor unless the
scaling is ``llama3`` or names ``original_max_position_embeddings``. Each engine's message and override are in
``data/engine_releases.json`` (``context_limit``).

>>> derived_max_model_len({"max_position_embeddings": 131072,
...                        "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}, "smallest_length_key")
131072
>>> derived_max_model_len({"max_position_embeddings": 32768,
...     "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}},
...     "smallest_length_key")
131072
"""

from __future__ import annotations

from typing import Literal

Derivation = Literal["smallest_length_key", "first_length_key"]

#: vLLM's ``possible_keys`` (the smallest present wins).
VLLM_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
#: SGLang's ``CONTEXT_LENGTH_KEYS`` (the first present wins).
SGLANG_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")
_UNSCALED_VLLM = frozenset({"su", "longrope", "llama3"})


def _text_config(config: dict) -> dict:
    text = config.get("text_config")
    return text if isinstance(text, dict) else config


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None


def derived_max_model_len(config: dict, derivation: Derivation) -> int | None:
    """The context the engine derives from ``config`` (None: the config names no length)."""
    cfg = _text_config(config)
    scaling = cfg.get("rope_scaling")
    scaling = scaling if isinstance(scaling, dict) else {}
    kind = str(scaling.get("rope_type") or scaling.get("type") or "default")
    factor = float(scaling.get("factor") or 1.0)
    if derivation == "smallest_length_key":
        found = [v for v in (_int(cfg.get(key)) for key in VLLM_KEYS) if v is not None]
        if not found:
            return None
        length = min(found)
        if scaling and kind not in _UNSCALED_VLLM and "factor" in scaling:
            if kind == "yarn":
                length = _int(scaling.get("original_max_position_embeddings")) or length
            length = int(length * factor)
        return length
    if kind == "llama3" or "original_max_position_embeddings" in scaling:
        factor = 1.0
    for key in SGLANG_KEYS:
        value = _int(cfg.get(key))
        if value is not None:
            return int(factor * value)
    return None
