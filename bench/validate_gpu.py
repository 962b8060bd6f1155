"""`make validate-gpu`: the prepared GPU validation — three real speculative pairs, measured and predicted.

On a machine with one NVIDIA GPU of at least 80 GB, runs three architecture pairs in bf16 with
seeded random weights built from the catalog configs (data/models.json) — Llama-3.1-8B + Llama-3.2-1B,
Qwen2.5-7B + Qwen2.5-0.5B, Llama-3.2-3B + Llama-3.2-1B — with short generations, writes one
record per pair to measurements/ in PLANNER_HOME (and the store), and prints measured against predicted
memory and speed. Memory and speed are real; acceptance of random weights is not meaningful.
It measures; it never asserts. A wall-clock guard skips the remaining pairs past the budget.

Without CUDA it exits with code 2 and one line. ``--tiny`` shrinks the configs and runs on CPU: a
smoke test of this script's path (its figures are not a validation).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from planner.catalog.lookup import get_model
from planner.measure.record import MeasurementRecord
from planner.units import bytes_to_gib

PAIRS = (
    ("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.2-1B"),
    ("Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-0.5B"),
    ("meta-llama/Llama-3.2-3B", "meta-llama/Llama-3.2-1B"),
)
MIN_GPU_BYTES = 80 * 10**9  # "80 GB" as marketed: an 80 GB card reports about 85e9 bytes (79.2 GiB)
BUDGET_S = 7 * 60  # the issue asks for under 8 minutes in all
#: --tiny: the geometry a CPU runs in a second, keeping each config's model_type and quirks.
TINY_OVERRIDES = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "max_position_embeddings": 1024,
}


def _config(model_id: str, tiny: bool) -> dict[str, Any]:
    config = dict(get_model(model_id).config)
    config.setdefault("_name_or_path", model_id)
    if tiny:
        config |= TINY_OVERRIDES
        config["vocab_size"] = min(int(config.get("vocab_size", 512)), 512)
        config.pop("rope_scaling", None)
        config["_name_or_path"] = f"{model_id} (tiny)"
    return config


def _pct(value: float | None) -> str:
    return f"{'-':>8}" if value is None else f"{100 * value:>+7.1f}%"


def _gib(value: int | None) -> str:
    return f"{'-':>8}" if not value else f"{bytes_to_gib(value):>8.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.validate_gpu", description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="CPU smoke run with shrunk configs")
    parser.add_argument("--out", help="records folder (default: measurements/ in PLANNER_HOME)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--max-new-tokens", type=int, default=None, help="default 64 (tiny: 8)")
    parser.add_argument("--prompts-per-task", type=int, default=None, help="default 2 (tiny: 1)")
    parser.add_argument("--budget-s", type=float, default=BUDGET_S)
    args = parser.parse_args(argv)

    refusal = None if args.tiny else cuda_refusal()
    if refusal:
        sys.stderr.write(refusal + "\n")
        return 2
    start = time.perf_counter()
    rows = run_pairs(
        tiny=args.tiny,
        out=args.out,
        k=args.k,
        max_new_tokens=args.max_new_tokens,
        prompts_per_task=args.prompts_per_task,
        budget_s=args.budget_s,
    )
    _print(rows, time.perf_counter() - start, args.tiny)
    return 0


def cuda_refusal() -> str | None:
    """Why this machine cannot run the validation (one line), or None when it has a CUDA GPU of >= 80 GB."""
    import torch

    if not torch.cuda.is_available():
        return "validate-gpu needs a CUDA GPU (none is visible to torch); --tiny runs a CPU smoke test"
    total = torch.cuda.mem_get_info(0)[1]
    if total < MIN_GPU_BYTES:
        return (
            f"validate-gpu needs one GPU of at least 80 GB; {torch.cuda.get_device_name(0)} has {total / 10**9:.1f} GB"
        )
    return None


def run_pairs(
    *,
    tiny: bool = False,
    out: str | None = None,
    k: int = 5,
    max_new_tokens: int | None = None,
    prompts_per_task: int | None = None,
    budget_s: float = BUDGET_S,
) -> list[tuple[str, str, MeasurementRecord | None, str]]:
    """Measure every pair of :data:`PAIRS`: ``(target, draft, record or None when skipped, note)`` per pair;
    each record carries the measured figures and the prediction beside them."""
    from planner.measure.harness import MeasureOptions, measure

    device = "cpu" if tiny else "cuda"
    scratch = Path(tempfile.mkdtemp(prefix="validate-gpu-"))
    start = time.perf_counter()
    rows = []
    for target_id, draft_id in PAIRS:
        if time.perf_counter() - start > budget_s:
            rows.append((target_id, draft_id, None, f"skipped: past the {budget_s:.0f} s budget"))
            continue
        paths = []
        for model_id in (target_id, draft_id):
            path = scratch / f"{model_id.replace('/', '__')}.json"
            path.write_text(json.dumps(_config(model_id, tiny)))
            paths.append(path)
        began = time.perf_counter()
        record = measure(
            MeasureOptions(
                target=str(paths[0]),
                draft=str(paths[1]),
                random_weights=True,
                device=device,
                dtype="fp32" if tiny else "bf16",
                k=k,
                max_new_tokens=max_new_tokens or (8 if tiny else 64),
                prompts_per_task=prompts_per_task or (1 if tiny else 2),
                gpu="h100-sxm-80gb" if tiny else None,
                out=out,
            )
        )
        rows.append((target_id, draft_id, record, f"{time.perf_counter() - began:.0f} s"))
    return rows


def _print(rows: list, wall_s: float, tiny: bool) -> None:
    print("GPU validation: real speculative runs (random weights, bf16) against the planner's hf-engine estimate")
    if tiny:
        print("(--tiny: shrunk configs on CPU; a smoke test of the script, not a validation)")
    print("error = (predicted - measured) / measured; GiB = 2^30 bytes\n")
    header = (
        f"{'pair':<48}{'status':>12}{'tau':>6}{'tok/s':>8}{'base':>8}{'speedup':>8}"
        f"{'peak GiB':>9}{'pred GiB':>9}{'peak err':>9}{'kv err':>9}{'w err':>9}{'spd err':>9}{'tpot err':>9}"
    )
    print(header)
    print("-" * len(header))
    for target_id, draft_id, record, note in rows:
        pair = f"{target_id.split('/')[-1]} + {draft_id.split('/')[-1]}"
        if record is None:
            print(f"{pair:<48}{note}")
            continue
        e = record.errors_frac
        predicted = record.predicted.memory.peak_memory_bytes if record.predicted.memory else None
        tau = f"{record.mean_accepted_len:>6.2f}" if record.mean_accepted_len else f"{'-':>6}"
        speed = (
            f"{record.tokens_per_s:>8.1f}{record.baseline_tokens_per_s:>8.1f}{record.speedup:>8.2f}"
            if record.speedup
            else f"{'-':>8}" * 3
        )
        print(
            f"{pair:<48}{record.status:>12}{tau}{speed}{_gib(record.peak_memory_bytes)} {_gib(predicted)}"
            f"{_pct(e.get('peak_memory'))} {_pct(e.get('kv_cache'))} {_pct(e.get('target_weights'))}"
            f"{_pct(e.get('speedup'))} {_pct(e.get('tpot'))}   ({note})"
        )
        print(f"{'':<4}record {record.id}; GPU {record.gpu_label}; peak from {record.memory.peak_memory_source}")
    print(f"\ntotal wall time {wall_s:.0f} s")


if __name__ == "__main__":
    raise SystemExit(main())
