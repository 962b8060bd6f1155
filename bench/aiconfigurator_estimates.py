"""aiconfigurator's own estimate of a serving row, beside the planner's (``make bench-serving``).

Runs NVIDIA's ``aiconfigurator cli estimate`` (the ``aiconfigurator`` package, requirements-bench.txt, installed by
``make bench-aiconfigurator``; never imported by planner/) in aggregated in-flight-batching mode (``--estimate-mode
agg``) for the row's model, GPU system, engine, tensor parallelism, GEMM and KV precision and mean input / output
lengths. It has no arrival process, so it runs at the batch the planner's simulation of the same row held on average
(its ``--batch-size``), with the engine's per-step token budget (``--ctx-tokens``, the memory plan's
``max_num_batched_tokens``): the two then differ only in their step times and their batching model. It models no draft
model, so speculative rows are not covered.

Answers are kept in data/calibration/aiconfigurator-estimates.csv with the exact command (a run takes
about 30 s); ``make bench-aiconfigurator`` recomputes missing ones.
"""

from __future__ import annotations

import csv
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

from bench.serving_rows import ServingCase
from planner.speed.kernels.aiconfigurator_tables import kernel_tables  # the table map: system and release

CACHE = Path(__file__).resolve().parents[1] / "data" / "calibration" / "aiconfigurator-estimates.csv"
FIELDS = ["case_id", "kind", "command", "value", "note"]
MODEL_PATHS = {
    "meta-llama/Llama-3.1-8B": "meta-llama/Meta-Llama-3.1-8B",
    "meta-llama/Meta-Llama-3-8B": "meta-llama/Meta-Llama-3.1-8B",
    "meta-llama/Llama-3.1-70B": "meta-llama/Meta-Llama-3.1-70B",
    "meta-llama/Llama-3.3-70B-Instruct": "meta-llama/Meta-Llama-3.1-70B",  # the same geometry
    "meta-llama/Llama-3.1-405B": "meta-llama/Meta-Llama-3.1-405B",
    "meta-llama/Llama-2-70b-hf": "meta-llama/Meta-Llama-3.1-70B",  # the same layers; a 32,000-token vocabulary
}
GEMM = {"bf16": "bfloat16", "fp8": "fp8", "nvfp4": "nvfp4"}
KV = {"fp8": "fp8"}


def _mean_lengths(case: ServingCase) -> tuple[int, int]:
    prompts, outputs = case.workload.lengths()
    return round(sum(prompts) / len(prompts)), round(sum(outputs) / len(outputs))


def command(case: ServingCase, batch: float, ctx_tokens: int | None = None) -> list[str] | str:
    """The CLI call for ``case`` at ``batch`` concurrent requests with the engine's per-step token budget
    ``ctx_tokens`` (``--ctx-tokens``: its default is one prompt a step, which cannot admit a large batch of short
    requests as fast as the engine does), or why aiconfigurator cannot express it."""
    dep = case.deployment
    if case.kind not in ("output_tok_s", "tpot_s", "ttft_s"):
        return "aiconfigurator models no separate draft model"
    model = MODEL_PATHS.get(dep.target.id)
    tables = kernel_tables(dep.gpu.id, dep.engine)
    if model is None or tables is None:
        return "model or GPU / engine not in aiconfigurator's tables"
    isl, osl = _mean_lengths(case)
    return [
        "aiconfigurator", "cli", "estimate", "--model-path", model, "--system", tables.system,
        "--backend", tables.engine, "--estimate-mode", "agg", "--isl", str(isl), "--osl", str(osl),
        "--batch-size", str(max(1, round(batch))), "--tp-size", str(dep.tp),
        "--gemm-quant-mode", GEMM[dep.target_format.id], "--kvcache-quant-mode", KV.get(dep.kv.id, "bfloat16"),
        *(["--ctx-tokens", str(ctx_tokens)] if ctx_tokens else []), "--log-level", "ERROR",
    ]  # fmt: skip


def _parse(text: str, kind: str) -> float | None:
    pattern = {
        "output_tok_s": r"tokens/s:\s+([0-9,.]+)",
        "tpot_s": r"TPOT:\s+([0-9,.]+) ms",
        "ttft_s": r"TTFT:\s+([0-9,.]+) ms",
    }
    match = re.search(pattern[kind], text)
    if not match:
        return None
    value = float(match.group(1).replace(",", ""))
    return value if kind == "output_tok_s" else value / 1e3


def _program() -> list[str] | None:
    """How to run the CLI: its module under this interpreter (a console script's shebang can name an interpreter
    that no longer exists), else the ``aiconfigurator`` on the PATH."""
    if importlib.util.find_spec("aiconfigurator") is not None:
        return [sys.executable, "-m", "aiconfigurator.main"]
    program = shutil.which("aiconfigurator")
    return [program] if program else None


def _load() -> dict[tuple[str, str], dict]:
    if not CACHE.exists():
        return {}
    with CACHE.open(newline="") as handle:
        return {(r["case_id"], r["kind"]): r for r in csv.DictReader(handle)}


def estimate(
    case: ServingCase, batch: float, ctx_tokens: int | None = None, *, run: bool = False
) -> tuple[float | None, str]:
    """aiconfigurator's value for ``case`` (from the kept answers; ``run`` computes a missing one)."""
    cmd = command(case, batch, ctx_tokens)
    if isinstance(cmd, str):
        return None, cmd
    kept = _load().get((case.row, case.kind))
    if kept is not None and kept["command"] == " ".join(cmd):
        return (float(kept["value"]) if kept["value"] else None), kept["note"]
    program = _program()
    if not run or program is None:
        return None, "not run (python -m bench.aiconfigurator_estimates)"
    proc = subprocess.run([*program, *cmd[1:]], capture_output=True, text=True, timeout=600, check=False)
    value = _parse(proc.stdout + proc.stderr, case.kind)
    note = "" if value is not None else "no estimate: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:120]
    rows = _load()
    rows[(case.row, case.kind)] = {"case_id": case.row, "kind": case.kind, "command": " ".join(cmd),
                                   "value": "" if value is None else f"{value:.6g}", "note": note}  # fmt: skip
    with CACHE.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows.values())
    return value, note


def main() -> int:
    from bench.serving_accuracy import simulated  # noqa: PLC0415 (the bench's own runs, computed once)

    for case, metrics in simulated():
        value, note = estimate(case, metrics.mean_batch_size, metrics.limits.max_num_batched_tokens, run=True)
        print(f"{case.row:<40} {case.kind:<13} {value if value is not None else '-':>12} {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
