"""The catalog in ``data/``: loaded lazily on first use, validated by pydantic, looked up by id.

Nothing is read at import time. Every loader is cached, so the app and the CLI parse each file once
per process. ``PLANNER_DATA_DIR`` points the planner at another data folder (tests use it).

>>> get_model("llama-3.1-70b").id
'meta-llama/Llama-3.1-70B'
>>> get_gpu("h100-sxm-80gb").memory_bandwidth_gb_s
3350.0
"""

from __future__ import annotations

import difflib
from typing import TypeVar

from pydantic import BaseModel

from planner.catalog.schemas import (
    GpuPrice,
    GpuSpec,
    ModelSpec,
    NodeType,
    TokenizerSpec,
)
from planner.errors import CatalogError
from planner.facts import data_cache, load_entries
from planner.model.dtypes import KvDtype, WeightFormat, list_kv_dtypes, list_weight_formats, precision_id

T = TypeVar("T", bound=BaseModel)


@data_cache
def list_models() -> tuple[ModelSpec, ...]:
    return load_entries("models.json", "models", ModelSpec)


@data_cache
def list_speculators() -> tuple[ModelSpec, ...]:
    """The published speculator heads of ``data/speculators.json`` (EAGLE, EAGLE-3), each with its targets."""
    heads = load_entries("speculators.json", "speculators", ModelSpec)
    plain = {m.id.lower() for m in list_models()}
    for head in heads:
        if head.speculator is None:
            raise CatalogError(f"speculators.json entry {head.id}: no speculator block")
        if head.id.lower() in plain:
            raise CatalogError(f"speculators.json entry {head.id}: also in models.json")
        unknown = [t for t in head.speculator.targets if t.lower() not in plain]
        if unknown:
            raise CatalogError(f"speculators.json entry {head.id}: unknown target {unknown[0]!r}")
    return heads


@data_cache
def list_gpus() -> tuple[GpuSpec, ...]:
    return load_entries("gpus.json", "gpus", GpuSpec)


@data_cache
def list_nodes() -> tuple[NodeType, ...]:
    nodes = load_entries("nodes.json", "nodes", NodeType)
    known = {g.id for g in list_gpus()}
    for node in nodes:
        if node.gpu not in known:
            raise CatalogError(f"nodes.json entry {node.id}: unknown gpu {node.gpu!r}")
    return nodes


@data_cache
def list_prices() -> tuple[GpuPrice, ...]:
    return load_entries("prices.json", "prices", GpuPrice)


@data_cache
def list_tokenizers() -> tuple[TokenizerSpec, ...]:
    return load_entries("tokenizers.json", "tokenizers", TokenizerSpec)


def _not_found(kind: str, wanted: str, ids: list[str], command: str) -> CatalogError:
    close = difflib.get_close_matches(wanted.lower(), [i.lower() for i in ids], n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return CatalogError(
        f"{kind} {wanted!r} is not in the catalog{hint} (list them with `python -m planner catalog {command}`)",
        field=kind,
    )


def get_model(wanted: str) -> ModelSpec:
    """A catalog model or speculator head by Hugging Face id or the part after the slash, case-insensitively.

    Plain models are searched first, so a head never shadows a model of the same short name.

    >>> get_model("EAGLE3-LLaMA3.1-Instruct-8B").speculator.kind
    'eagle3'
    """
    key = wanted.strip().lower()
    for model in (*list_models(), *list_speculators()):
        if key in (model.id.lower(), model.short_name.lower()):
            return model
    raise _not_found("model", wanted, [m.id for m in (*list_models(), *list_speculators())], "models")


def _by_id(items: tuple[T, ...], wanted: str, kind: str, command: str) -> T:
    key = wanted.strip().lower()
    for item in items:
        if item.id.lower() == key:  # type: ignore[attr-defined]
            return item
    raise _not_found(kind, wanted, [i.id for i in items], command)  # type: ignore[attr-defined]


def get_gpu(wanted: str) -> GpuSpec:
    return _by_id(list_gpus(), wanted, "gpu", "gpus")


def get_node(wanted: str) -> NodeType:
    return _by_id(list_nodes(), wanted, "node", "nodes")


def get_tokenizer(wanted: str) -> TokenizerSpec:
    return _by_id(list_tokenizers(), wanted, "tokenizer", "tokenizers")


def get_weight_format(wanted: str) -> WeightFormat:
    """A weight format by id or any alias in ``data/precisions.json`` (``bfloat16``, ``awq_marlin``...)."""
    return _by_id(list_weight_formats(), precision_id(wanted) or wanted, "dtype", "precisions")


def get_kv_dtype(wanted: str) -> KvDtype:
    """A KV-cache dtype by id or alias (``fp8_e4m3``, ``float16``...)."""
    return _by_id(list_kv_dtypes(), precision_id(wanted, "kv") or wanted, "kv_dtype", "precisions")


def get_price(gpu_id: str) -> GpuPrice | None:
    for price in list_prices():
        if price.gpu == gpu_id:
            return price
    return None


def default_usd_per_gpu_hour(gpu_id: str) -> float | None:
    """The price catalog's default $/GPU-hour for ``gpu_id`` (its median on-demand price), or None without one."""
    price = get_price(gpu_id)
    return price.default_usd_per_gpu_hour if price else None
