"""Derive the roofline's GEMM and prefill-attention efficiency per GPU and precision from aiconfigurator-core's tables.

``python -m bench.fit_kernel_efficiency`` prints, for every GPU of data/measured_kernels.json and every engine whose
tables it has, the fraction of the dense peak (data/gpus.json) its measured kernels reach:

* **GEMMs** at BF16, FP8 and NVFP4: the median over the measured shapes whose ``m``, ``n`` and ``k`` are all at least
  :data:`LARGE`, ``2·m·n·k`` FLOPs over the measured latency;
* **prefill attention** over a 16-bit and an 8-bit KV cache (at the peak of the precision it runs at,
  :func:`planner.speed.roofline.attention_dtype`): the median over the measured batches of prompts of at least
  :data:`LARGE` tokens, for each head split of :data:`HEAD_SPLITS`, ``4·heads·head_dim`` FLOPs per causal
  (query, key) pair over the measured latency.

Per GPU and precision the figure is the median over the engines' tables (and head splits); per vendor and precision,
the median over its GPUs (for its GPUs without tables). ``--write`` writes them to data/kernel_efficiency.json
(planner/speed/kernel_efficiency.py reads it); ``--check`` exits 1 where the file differs from what the installed
tables give.
"""

from __future__ import annotations

import json
import statistics
import sys

import numpy as np

from planner.catalog.lookup import get_gpu
from planner.facts import data_dir, read_data_file
from planner.speed.kernel_efficiency import KERNEL_EFFICIENCY_FILE
from planner.speed.kernels.aiconfigurator_tables import (
    KV_DTYPES,
    MAP_FILE,
    kernel_tables,
    package_version,
    systems_dir,
)
from planner.speed.roofline import attention_dtype, peak_flops

#: The smallest ``m``, ``n`` and ``k`` of a large GEMM, and the shortest prompt of a long prefill.
LARGE = 4096
#: The tables' GEMM dtypes (our names, :data:`planner.speed.kernels.aiconfigurator_tables.GEMM_DTYPES`) → the
#: precision of the peak they run at.
PRECISIONS = {"bf16": "bf16", "fp8": "fp8", "nvfp4": "fp4"}
ENGINES = ("trtllm", "vllm", "sglang")
#: (query heads, KV heads, head size) per GPU: Llama-3.1-8B at TP 1, 70B and 405B at TP 4 and 8, and their halves.
HEAD_SPLITS = ((32, 8, 128), (64, 8, 128), (16, 2, 128), (16, 1, 128), (8, 2, 128), (8, 1, 128))


def _median(values: np.ndarray, keep: np.ndarray) -> float | None:
    picked = values[keep & np.isfinite(values)]
    return float(np.median(picked)) if picked.size else None


def large_gemm_fraction(gpu_id: str, engine: str, dtype: str) -> float | None:
    """The median fraction of the dense peak over the measured large GEMMs of one table, or None (no table)."""
    tables = kernel_tables(gpu_id, engine)
    grid = tables.gemm_grid(dtype) if tables is not None else None
    if grid is None:
        return None
    m, n, k = (np.asarray(axis) for axis in grid.axes)
    flops = 2 * m[:, None, None] * n[None, :, None] * k[None, None, :]
    large = (m[:, None, None] >= LARGE) & (n[None, :, None] >= LARGE) & (k[None, None, :] >= LARGE)
    with np.errstate(invalid="ignore"):
        fractions = flops / (grid.values * 1e-3) / peak_flops(get_gpu(gpu_id), PRECISIONS[dtype])
    return _median(fractions, large)


def long_prefill_fraction(gpu_id: str, engine: str, kv_bytes: int, heads: tuple[int, int, int]) -> float | None:
    """The median fraction of attention's dense peak over the measured prefills of long prompts of one head split and
    KV-cache dtype, or None (no table)."""
    tables = kernel_tables(gpu_id, engine)
    q_heads, kv_heads, head_dim = heads
    grid = (
        tables.attention_grid("context_attention", q_heads, kv_heads, head_dim, KV_DTYPES[kv_bytes])
        if tables is not None
        else None
    )
    if grid is None:
        return None
    gpu = get_gpu(gpu_id)
    batch, tokens = (np.asarray(axis) for axis in grid.axes)
    flops = batch[:, None] * 4 * q_heads * head_dim * tokens[None, :] * (tokens[None, :] + 1) / 2
    with np.errstate(invalid="ignore"):
        fractions = flops / (grid.values * 1e-3) / peak_flops(gpu, attention_dtype(gpu, kv_bytes))
    return _median(fractions, np.broadcast_to(tokens[None, :] >= LARGE, fractions.shape))


def _by_vendor(gpus: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    grouped: dict[str, dict[str, list[float]]] = {}
    for gpu_id, fractions in gpus.items():
        for precision, value in fractions.items():
            grouped.setdefault(get_gpu(gpu_id).vendor, {}).setdefault(precision, []).append(value)
    return {
        vendor: {p: round(statistics.median(v), 2) for p, v in sorted(by_precision.items())}
        for vendor, by_precision in grouped.items()
    }


def derive() -> tuple[dict, list[str]]:
    """(the data file's content, the lines printed on the way)."""
    lines = ["Large GEMMs: median fraction of the dense peak, per GPU and precision (per engine)"]
    gemm: dict[str, dict[str, float]] = {}
    attention: dict[str, dict[str, float]] = {}
    tables_used = set()
    gpu_ids = list(read_data_file(MAP_FILE)["gpus"])
    for gpu_id in gpu_ids:
        for engine in ENGINES:
            tables = kernel_tables(gpu_id, engine)
            if tables is not None:
                tables_used.add(f"{tables.system}/{engine} {tables.version}")
        for dtype, precision in PRECISIONS.items():
            per_engine = {e: v for e in ENGINES if (v := large_gemm_fraction(gpu_id, e, dtype)) is not None}
            if per_engine:
                gemm.setdefault(gpu_id, {})[precision] = round(statistics.median(per_engine.values()), 2)
                shown = "  ".join(f"{e} {v:.2f}" for e, v in per_engine.items())
                lines.append(f"  {gpu_id:<16} {precision:<5} {gemm[gpu_id][precision]:.2f}   ({shown})")
    lines.append("Prefill attention over long prompts: median fraction of attention's dense peak (per engine)")
    for gpu_id in gpu_ids:
        gpu = get_gpu(gpu_id)
        for kv_bytes in sorted(KV_DTYPES):
            if kv_bytes == 1 and attention_dtype(gpu, kv_bytes) != "fp8":
                continue  # a GPU without FP8 runs attention over an 8-bit cache at 16 bits: its 16-bit figure holds
            per_engine = {}
            for engine in ENGINES:
                found = [
                    v for h in HEAD_SPLITS if (v := long_prefill_fraction(gpu_id, engine, kv_bytes, h)) is not None
                ]
                if found:
                    per_engine[engine] = statistics.median(found)
            if per_engine:
                precision = attention_dtype(gpu, kv_bytes)
                attention.setdefault(gpu_id, {})[precision] = round(statistics.median(per_engine.values()), 2)
                shown = "  ".join(f"{e} {v:.2f}" for e, v in per_engine.items())
                lines.append(
                    f"  {gpu_id:<16} {KV_DTYPES[kv_bytes]:<8} cache, {precision:<4} {attention[gpu_id][precision]:.2f}"
                    f"   ({shown})"
                )
    used = ", ".join(sorted(tables_used))
    content = {
        "description": (
            "The fraction of the dense peak (data/gpus.json) that large weight GEMMs and long prefill attention reach, "
            "per GPU and precision, for the roofline wherever kernels are not looked up "
            "(planner/speed/kernel_efficiency.py); per vendor, the median over its GPUs here, for its GPUs without "
            "measured tables. Derived by python -m bench.fit_kernel_efficiency --write."
        ),
        "source": f"aiconfigurator-core {package_version()} measured kernel tables, "
        "https://pypi.org/project/aiconfigurator-core/",
        "gemm": {
            "shapes": f"gemm_perf: median over the measured shapes with m, n and k all >= {LARGE}, 2*m*n*k FLOPs over "
            f"the measured latency at the peak of the GEMM's precision; per GPU the median over the engines' tables: "
            f"{used}",
            "gpus": gemm,
            "vendors": _by_vendor(gemm),
        },
        "attention": {
            "shapes": f"context_attention_perf: median over the measured batches of prompts of >= {LARGE} tokens, "
            "4*heads*head_dim FLOPs per causal (query, key) pair over the measured latency at the peak of attention's "
            "precision (FP8 over an 8-bit KV cache where the GPU has it, else 16 bits), for the head splits "
            f"(query heads, KV heads, head size) {', '.join(str(h) for h in HEAD_SPLITS)}; per GPU the median over "
            "the splits and the engines' tables",
            "gpus": attention,
            "vendors": _by_vendor(attention),
        },
    }
    return content, lines


def main() -> int:
    if systems_dir() is None:
        print("aiconfigurator-core is not installed: no measured tables to derive from")
        return 2
    content, lines = derive()
    print("\n".join(lines))
    for family in ("gemm", "attention"):
        print(f"Per vendor, {family} (median over its GPUs): " + json.dumps(content[family]["vendors"]))
    path = data_dir() / KERNEL_EFFICIENCY_FILE
    if "--write" in sys.argv[1:]:
        path.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"written: {path}")
    if "--check" in sys.argv[1:]:
        stored = json.loads(path.read_text(encoding="utf-8"))
        same = all(stored[f][key] == content[f][key] for f in ("gemm", "attention") for key in ("gpus", "vendors"))
        print(f"{path.name}: {'matches the tables' if same else 'DIFFERS from the tables'}")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
