"""The one engine-name normaliser: the spellings command lines and logs use, to an engine id.

Each engine in ``data/engines.json`` lists its ``aliases``; spellings compare case-insensitively and
without punctuation, so ``vLLM``, ``vllm-v1``, ``TensorRT-LLM``, ``tensorrt_llm`` and ``transformers`` all
resolve.

>>> engine_id("vLLM"), engine_id("vllm-v1"), engine_id("TensorRT-LLM"), engine_id("SGLang"), engine_id("hf")
('vllm', 'vllm', 'trtllm', 'sglang', 'hf')
"""

from __future__ import annotations

import re

from planner.engines.profiles import list_engines
from planner.errors import CatalogError, InputError
from planner.facts import data_cache


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


@data_cache
def _spellings() -> dict[str, str]:
    table: dict[str, str] = {}
    for engine in list_engines():
        for spelling in (engine.id, *engine.aliases):
            key = _key(spelling)
            if table.get(key, engine.id) != engine.id:
                raise CatalogError(f"engines.json: {spelling!r} names both {table[key]} and {engine.id}")
            table[key] = engine.id
    return table


def find_engine_id(text: str | None) -> str | None:
    """The engine ``text`` names, or None."""
    return _spellings().get(_key(text or "")) if text else None


def engine_id(text: str) -> str:
    """The engine ``text`` names; an unknown name raises an error listing the engines."""
    found = find_engine_id(text)
    if found is None:
        raise InputError("engine", text, f"one of {', '.join(e.id for e in list_engines())}")
    return found
