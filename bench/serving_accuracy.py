"""`make bench-serving`: the serving simulator against published serving measurements.

For every row of data/calibration/serving-measured.csv it can express (bench/serving_rows.py) it simulates
the published setup and prints measured, predicted and the error, per kind (output tokens/s, TTFT, TPOT,
speedup), rows fitted by bench/fit_step_model.py apart from untouched ones; then the median and worst
|error| per kind, the goal (median <= 15% on output tok/s, <= 20% on speedup), the rows it cannot express
with the reason, and the time of a 2,000-request simulation. It measures; it never asserts.
"""

from __future__ import annotations

import statistics
import sys
import time

from bench.serving_rows import ServingCase, load_cases
from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import ServingMetrics, simulate, simulate_one

GOALS_PCT = {"output_tok_s": 15.0, "speedup": 20.0}
UNITS = {"output_tok_s": ("tok/s", 1.0), "ttft_s": ("ms", 1e3), "tpot_s": ("ms", 1e3), "speedup": ("x", 1.0)}


def predict(case: ServingCase) -> float:
    if case.kind == "speedup":
        return simulate(case.deployment, case.workload, alpha=case.alpha, k=case.k).speedup
    run: ServingMetrics = simulate_one(case.deployment, case.workload)
    return {
        "output_tok_s": run.output_tokens_per_s,
        "ttft_s": run.ttft_s.mean,
        "tpot_s": run.tpot_s.mean,
    }[case.kind]


def pct_error(predicted: float, measured: float) -> float:
    return 100.0 * (predicted - measured) / measured


def evaluate(cases: list[ServingCase]) -> list[tuple[ServingCase, float, float]]:
    return [(c, p, pct_error(p, c.measured)) for c in cases for p in [predict(c)]]


def _summary(results: list[tuple[ServingCase, float, float]], kind: str, fitted: bool | None) -> str:
    errors = [abs(e) for c, _, e in results if c.kind == kind and (fitted is None or c.fitted == fitted)]
    if not errors:
        return "none"
    return f"median {statistics.median(errors):5.1f}%  worst {max(errors):5.1f}%  over {len(errors)}"


def main() -> int:
    cases, skipped = load_cases()
    results = evaluate(cases)
    print("Serving simulator vs published serving measurements (data/calibration/serving-measured.csv)")
    print("fit: rows used by python -m bench.fit_step_model; untouched: no fitted value saw them\n")
    for kind, (unit, scale) in UNITS.items():
        rows = [r for r in results if r[0].kind == kind]
        if not rows:
            continue
        print(f"{kind} ({unit})")
        for case, predicted, error in sorted(rows, key=lambda r: (not r[0].fitted, r[0].row)):
            tag = "fit " if case.fitted else "    "
            notes = f"  [{'; '.join(case.notes)}]" if case.notes else ""
            print(
                f"  {tag}{case.label[:78]:<78} {case.measured * scale:>9.2f} {predicted * scale:>9.2f} "
                f"{error:>+7.1f}%{notes}"
            )
        print()
    print("Summary: |error| per kind")
    for kind in UNITS:
        goal = GOALS_PCT.get(kind)
        errors = [abs(e) for c, _, e in results if c.kind == kind]
        verdict = ""
        if goal and errors:
            verdict = f"  goal <= {goal:.0f}%: {'met' if statistics.median(errors) <= goal else 'MISSED'}"
        print(
            f"  {kind:<13} all: {_summary(results, kind, None)} | fitted: {_summary(results, kind, True)} | "
            f"untouched: {_summary(results, kind, False)}{verdict}"
        )
    print("\nRows it cannot express:")
    for item in skipped:
        print(f"  {item.row}: {item.reason}")
    dep = Deployment.on_node(
        get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4, draft=get_model("Llama-3.2-1B")
    )
    workload = ServingWorkload.build(request_rate=8.0, dataset="sharegpt", num_prompts=2000)
    simulate_one(dep, workload, alpha=0.8, k=3)  # warm the caches (memory plan, costs)
    start = time.perf_counter()
    simulate_one(dep, workload, alpha=0.8, k=3)
    spec_s = time.perf_counter() - start
    start = time.perf_counter()
    simulate_one(dep, workload)
    plain_s = time.perf_counter() - start
    print(
        f"\nSimulation time, 2,000 ShareGPT requests at 8 req/s on Llama-3.1-70B TP4 (H100): "
        f"{plain_s * 1e3:.0f} ms plain, {spec_s * 1e3:.0f} ms with the 1B draft"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
