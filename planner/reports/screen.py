"""Tables shaped for the app's screens: human column labels with units, whole requests (no formulas).

A request is served whole, so a concurrency the memory plan gives as 116.63 is shown as 116 requests:

>>> whole_requests(116.63), whole_requests(0.4)
(116, 0)
>>> human_label("max_concurrency"), human_label("kv_cache_tokens"), human_label("tpot_slo_s")
('Max concurrency', 'KV cache tokens', 'TPOT objective (s)')
"""

from __future__ import annotations

import math

import pandas as pd

from planner.memory import COMPONENT_LABELS, GpuMemory, MemoryPlan
from planner.units import GB, GIB

__all__ = ["human_columns", "human_label", "memory_components_view", "suggestions_view", "whole_requests"]

#: Words a snake_case name abbreviates, as a person writes them.
_WORDS = {
    "kv": "KV",
    "tp": "TP",
    "pp": "PP",
    "gpu": "GPU",
    "gpus": "GPUs",
    "usd": "USD",
    "tpot": "TPOT",
    "ttft": "TTFT",
    "slo": "objective",
    "alpha": "α",
    "id": "ID",
}
#: Unit suffixes of the house naming rule, as a column header writes them.
_UNITS = {
    "_tok_s": " (tokens/s)",
    "_bytes": " (bytes)",
    "_frac": " (fraction)",
    "_usd": " (USD)",
    "_gib": " (GiB)",
    "_ms": " (ms)",
    "_s": " (s)",
}


def whole_requests(concurrency: float) -> int:
    """Whole concurrent requests in a fractional concurrency (a partial request is not served)."""
    return max(0, math.floor(concurrency + 1e-9))


def human_label(name: str) -> str:
    """A column name as a person reads it: words, known abbreviations in capitals, 'per' for '_per_'."""
    if not name or name != name.lower() or " " in name:
        return name
    unit = next((suffix for suffix in _UNITS if name.endswith(suffix) and name != suffix[1:]), None)
    stem = name[: -len(unit)] if unit else name
    text = " ".join(_WORDS.get(word, word) for word in stem.split("_")) + (_UNITS[unit] if unit else "")
    return text[:1].upper() + text[1:] if text[:1].isascii() else text


def human_columns(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every snake_case column renamed by :func:`human_label`."""
    return table.rename(columns={c: human_label(c) for c in table.columns if isinstance(c, str)})


def suggestions_view(plan: MemoryPlan) -> pd.DataFrame:
    """The plan's fixes (each fits and starts), best first: what to change, GPUs, KV tokens, whole requests."""
    return pd.DataFrame(
        [
            {
                "Change": s.change,
                "GPUs per replica": s.gpus_per_replica,
                "KV cache tokens": s.kv_cache_tokens,
                "Concurrent requests at max length": whole_requests(s.max_concurrency),
                "Detail": s.detail,
            }
            for s in plan.suggestions
        ]
    )


def memory_components_view(gpu: GpuMemory) -> pd.DataFrame:
    """One GPU's memory by component in GiB and GB, and what a plan that does not fit is short by."""
    rows = [("Total reported by the device", gpu.total_bytes), ("Engine memory limit", gpu.memory_limit_bytes)]
    if gpu.kv_fraction_base_bytes is not None:
        rows.append(("Free memory the KV fraction is taken of", gpu.kv_fraction_base_bytes))
    for field, label in COMPONENT_LABELS.items():
        rows.append((label[:1].upper() + label[1:], getattr(gpu, field)))
    if gpu.kv_shortfall_bytes:
        rows.append(("KV cache: short by", gpu.kv_shortfall_bytes))
    if gpu.over_commit_bytes:
        rows.append(("Over-committed: short by", gpu.over_commit_bytes))
    return pd.DataFrame([{"Component": name, "GiB (2^30 B)": v / GIB, "GB (10^9 B)": v / GB} for name, v in rows])
