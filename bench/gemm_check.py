"""`python -m bench.gemm_check`: the step model's weight-GEMM times (aiconfigurator-core's measured tables, as the
planner interpolates them) against bf16 GEMMs timed on a real GPU with torch (prints, never asserts).

1. ``python -m bench.gemm_check --shapes SHAPES.json`` writes the GEMM shapes of :data:`MODELS` (every layer's weight
   GEMMs at its tensor-parallel shard) and the token counts :data:`TOKENS`.
2. On the GPU: ``python -m bench.gemm_timing SHAPES.json TIMES.json`` (imports only torch).
3. ``python -m bench.gemm_check --times TIMES.json [--csv OUT.csv]`` prints, per model and token count, all layers'
   weight GEMMs as the planner prices them beside the sum of the timed GEMMs, and the error.

Recorded on an NVIDIA H200: ``data/calibration/gpu-validation-h200/gemm-check.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from planner.catalog.lookup import get_gpu, get_model
from planner.deployment import Deployment
from planner.speed.engine_step import EngineStep

GPU = "h200-sxm-141gb"
#: (model, TP): a small and a large dense target, whole and at the TP shard they are served at.
MODELS = (("Llama-3.1-8B", 1), ("Qwen2.5-7B", 1), ("Llama-3.1-70B", 1), ("Llama-3.1-70B", 4), ("Llama-3.1-70B", 8))
#: Tokens in a pass: batch-1 decode to a large prefill chunk.
TOKENS = (1, 4, 16, 64, 256, 1024, 4096)
FIELDS = ("model", "tp", "tokens", "planner_ms", "measured_ms", "error_frac")


def _measured(model: str, tp: int):
    dep = Deployment.build(target=get_model(model), gpu=get_gpu(GPU), gpu_count=tp, tp=tp, engine="vllm")
    measured = EngineStep(dep).target.measured
    if measured is None:
        raise SystemExit("aiconfigurator-core is not installed: no measured tables to check")
    return measured


def shapes() -> dict:
    found = {(n, k) for model, tp in MODELS for n, k, _ in _measured(model, tp).shapes}
    return {"shapes": sorted(found), "m": list(TOKENS)}


def rows(times: dict) -> list[dict]:
    ms = times["ms"]
    out = []
    for model, tp in MODELS:
        measured = _measured(model, tp)
        for m in TOKENS:
            timed = sum(ms[f"{n},{k},{m}"] * count for n, k, count in measured.shapes) * measured.scale
            planner = measured.gemm_s(m, 0) * 1e3
            out.append(
                {"model": model, "tp": tp, "tokens": m, "planner_ms": round(planner, 4), "measured_ms": round(timed, 4),
                 "error_frac": round((planner - timed) / timed, 4)}
            )  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gemm_check", description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", help="write the GEMM shapes to time here")
    parser.add_argument("--times", help="the timings bench.gemm_timing wrote")
    parser.add_argument("--csv", help="also write the comparison here")
    args = parser.parse_args(argv)
    if args.shapes:
        Path(args.shapes).write_text(json.dumps(shapes()))
    if not args.times:
        return 0
    times = json.loads(Path(args.times).read_text())
    table = rows(times)
    print(f"Weight GEMMs of one pass (all layers), planner (measured tables) against torch on {times['device']}")
    print(f"{'model':<16}{'TP':>3}{'tokens':>8}{'planner ms':>12}{'timed ms':>10}{'error':>8}")
    for r in table:
        print(f"{r['model']:<16}{r['tp']:>3}{r['tokens']:>8}{r['planner_ms']:>12.3f}{r['measured_ms']:>10.3f}"
              f"{100 * r['error_frac']:>+7.1f}%")  # fmt: skip
    errors = sorted(abs(r["error_frac"]) for r in table)
    print(f"median |error| {100 * errors[len(errors) // 2]:.1f}%, worst {100 * errors[-1]:.1f}% over {len(errors)}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
