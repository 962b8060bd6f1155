"""Derive the roofline's GEMM efficiency per GPU and precision from aiconfigurator-core's measured GEMM tables.

``python -m bench.fit_gemm_efficiency`` prints, for every GPU of data/measured_kernels.json and every engine whose
tables it has, the fraction of the dense peak (data/gpus.json) its measured large GEMMs reach, at BF16, FP8 and
NVFP4: the median over the measured shapes whose ``m``, ``n`` and ``k`` are all at least :data:`LARGE`, ``2·m·n·k``
FLOPs over the measured latency. Per GPU and precision the figure is the median over the engines' tables; per vendor
and precision, the median over its GPUs (for its GPUs without tables). ``--write`` writes them to
data/gemm_efficiency.json (planner/speed/gemm_efficiency.py reads it); ``--check`` exits 1 where the file differs from
what the installed tables give.
"""

from __future__ import annotations

import json
import statistics
import sys

import numpy as np

from planner.catalog.lookup import get_gpu
from planner.facts import data_dir, read_data_file
from planner.speed.gemm_efficiency import GEMM_EFFICIENCY_FILE
from planner.speed.kernels.aiconfigurator_tables import MAP_FILE, kernel_tables, package_version, systems_dir
from planner.speed.roofline import peak_flops

#: The smallest ``m``, ``n`` and ``k`` of a large GEMM (a prefill chunk through a large model's projections).
LARGE = 4096
#: The tables' GEMM dtypes (our names, :data:`planner.speed.kernels.aiconfigurator_tables.GEMM_DTYPES`) → the
#: precision of the peak they run at.
PRECISIONS = {"bf16": "bf16", "fp8": "fp8", "nvfp4": "fp4"}
ENGINES = ("trtllm", "vllm", "sglang")


def large_gemm_fraction(gpu_id: str, engine: str, dtype: str) -> float | None:
    """The median fraction of the dense peak over the measured large GEMMs of one table, or None (no table)."""
    tables = kernel_tables(gpu_id, engine)
    grid = tables.gemm_grid(dtype) if tables is not None else None
    if grid is None:
        return None
    gpu = get_gpu(gpu_id)
    m, n, k = (np.asarray(axis) for axis in grid.axes)
    flops = 2 * m[:, None, None] * n[None, :, None] * k[None, None, :]
    large = (m[:, None, None] >= LARGE) & (n[None, :, None] >= LARGE) & (k[None, None, :] >= LARGE)
    with np.errstate(invalid="ignore"):
        fractions = flops / (grid.values * 1e-3) / peak_flops(gpu, PRECISIONS[dtype])
    picked = fractions[large & np.isfinite(fractions)]
    return float(np.median(picked)) if picked.size else None


def derive() -> tuple[dict, list[str]]:
    """(the data file's content, the lines printed on the way)."""
    lines = []
    gpus: dict[str, dict[str, float]] = {}
    tables_used = set()
    for gpu_id, entry in read_data_file(MAP_FILE)["gpus"].items():
        for dtype, precision in PRECISIONS.items():
            per_engine = {}
            for engine in ENGINES:
                value = large_gemm_fraction(gpu_id, engine, dtype)
                if value is not None:
                    per_engine[engine] = value
                    tables_used.add(f"{entry['system']}/{engine} {kernel_tables(gpu_id, engine).version}")
            if not per_engine:
                continue
            gpus.setdefault(gpu_id, {})[precision] = round(statistics.median(per_engine.values()), 2)
            shown = "  ".join(f"{e} {v:.2f}" for e, v in per_engine.items())
            lines.append(f"  {gpu_id:<16} {precision:<5} {gpus[gpu_id][precision]:.2f}   ({shown})")
    vendors: dict[str, dict[str, float]] = {}
    for precision in PRECISIONS.values():
        by_vendor: dict[str, list[float]] = {}
        for gpu_id, fractions in gpus.items():
            if precision in fractions:
                by_vendor.setdefault(get_gpu(gpu_id).vendor, []).append(fractions[precision])
        for vendor, values in by_vendor.items():
            vendors.setdefault(vendor, {})[precision] = round(statistics.median(values), 2)
    content = {
        "description": (
            "The fraction of the dense peak (data/gpus.json) that large weight GEMMs reach, per GPU and GEMM "
            "precision, for the roofline wherever kernels are not looked up (planner/speed/gemm_efficiency.py); per "
            "vendor, the median over its GPUs here, for its GPUs without measured tables. Derived by python -m "
            "bench.fit_gemm_efficiency --write."
        ),
        "source": f"aiconfigurator-core {package_version()} measured GEMM tables (gemm_perf), "
        "https://pypi.org/project/aiconfigurator-core/",
        "shapes": (
            f"median over the measured shapes with m, n and k all >= {LARGE}, 2*m*n*k FLOPs over the measured latency, "
            "per GPU the median over the engines' tables: " + ", ".join(sorted(tables_used))
        ),
        "gpus": gpus,
        "vendors": vendors,
    }
    return content, lines


def main() -> int:
    if systems_dir() is None:
        print("aiconfigurator-core is not installed: no measured GEMM tables to derive from")
        return 2
    content, lines = derive()
    print(f"Large GEMMs (m, n, k >= {LARGE}): median fraction of the dense peak, per GPU and precision (per engine)")
    print("\n".join(lines))
    print("Per vendor (median over its GPUs): " + json.dumps(content["vendors"]))
    path = data_dir() / GEMM_EFFICIENCY_FILE
    if "--write" in sys.argv[1:]:
        path.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"written: {path}")
    if "--check" in sys.argv[1:]:
        stored = json.loads(path.read_text(encoding="utf-8"))
        same = all(stored.get(key) == content[key] for key in ("gpus", "vendors"))
        print(f"{path.name}: {'matches the tables' if same else 'DIFFERS from the tables'}")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
