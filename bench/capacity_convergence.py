"""`python -m bench.capacity_convergence`: a replica's capacity against the run length behind it (prints, never
asserts).

A replica's capacity (``planner.speed.replica_capacity``) is the highest steady rate of a few saturated runs of at
least some rounds of the requests it holds at once. For nine replicas (Llama-3.1-8B and Llama-3.1-70B, with and
without Llama-3.2-1B as a draft at α 0.84 and K 3, on H100, H200 and MI300X nodes, vLLM) and two length mixes
(1,024 + 256 tokens, every request alike, and ShareGPT-like lengths) it prints the capacity as the planner runs it
(``CAPACITY_ROUNDS`` rounds, ``CAPACITY_OVERLOADS``), as it ran before (three runs of 4 rounds: the offline run and
Poisson runs at 1.25 and 1.05 times the best rate), each as its error against a reference of long runs (the most
rounds up to ``REFERENCE_ROUNDS`` that the simulator's work budget admits, the three runs), and the medians and
worst errors. About 20 s in all.
"""

from __future__ import annotations

import statistics
import sys

from bench.serving_accuracy import pct_error
from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.errors import InputError
from planner.speed.replica_capacity import CAPACITY_OVERLOADS, CAPACITY_ROUNDS, replica_capacity
from planner.speed.serving_workload import ServingWorkload

#: (label, target, node, TP, with the draft)
REPLICAS = (
    ("70B + 1B, H100 TP 4", "Llama-3.1-70B", "8x-h100-sxm-80gb", 4, True),
    ("70B, H100 TP 4", "Llama-3.1-70B", "8x-h100-sxm-80gb", 4, False),
    ("70B, H100 TP 8", "Llama-3.1-70B", "8x-h100-sxm-80gb", 8, False),
    ("70B + 1B, H200 TP 2", "Llama-3.1-70B", "8x-h200-sxm-141gb", 2, True),
    ("70B, H200 TP 2", "Llama-3.1-70B", "8x-h200-sxm-141gb", 2, False),
    ("70B, MI300X TP 1", "Llama-3.1-70B", "8x-mi300x-192gb", 1, False),
    ("70B + 1B, MI300X TP 2", "Llama-3.1-70B", "8x-mi300x-192gb", 2, True),
    ("8B, H100 TP 1", "Llama-3.1-8B", "8x-h100-sxm-80gb", 1, False),
    ("8B + 1B, H100 TP 1", "Llama-3.1-8B", "8x-h100-sxm-80gb", 1, True),
)
WORKLOADS = {
    "1,024 + 256 tokens": ServingWorkload.build(offline=True, prompt_tokens=1024, output_tokens=256, num_prompts=400),
    "ShareGPT-like": ServingWorkload.build(offline=True, dataset="sharegpt", num_prompts=400),
}
ALPHA, K = 0.84, 3
#: How the capacity was run before: three runs of 4 rounds.
FORMER = (4, (1.25, 1.05))
#: The reference's rounds at most (fewer where a run would pass the simulator's work budget), with three runs.
REFERENCE_ROUNDS = (16, 12, 8)


def _capacity(dep: Deployment, workload: ServingWorkload, speculative: bool, rounds: int, overloads) -> float:
    options = {"alpha": ALPHA, "k": K} if speculative else {}
    run = replica_capacity(dep, workload, rounds=rounds, overloads=overloads, **options)
    return run.steady_requests_per_s


def _reference(dep: Deployment, workload: ServingWorkload, speculative: bool) -> tuple[float, int]:
    for rounds in REFERENCE_ROUNDS:
        try:
            return _capacity(dep, workload, speculative, rounds, FORMER[1]), rounds
        except InputError:  # past the work budget of one run
            continue
    raise RuntimeError("no reference run fits the simulator's work budget")


def main() -> int:
    overloads = "x".join(f"{o:g}" for o in CAPACITY_OVERLOADS)
    print(
        f"Replica capacity against long runs: now {CAPACITY_ROUNDS} rounds, runs offline then at {overloads}x; "
        f"before {FORMER[0]} rounds, then at 1.25x and 1.05x (error of each against the reference, req/s)"
    )
    errors: dict[str, list[float]] = {"now": [], "before": []}
    for name, workload in WORKLOADS.items():
        print(f"\n{name}")
        print(f"  {'replica':<24} {'reference':>10} {'rounds':>6} {'now':>8} {'before':>8}")
        for label, target, node, tp, speculative in REPLICAS:
            draft = get_model("Llama-3.2-1B") if speculative else None
            dep = Deployment.on_node(get_model(target), get_node(node), draft=draft, tp=tp)
            reference, rounds = _reference(dep, workload, speculative)
            now = _capacity(dep, workload, speculative, CAPACITY_ROUNDS, CAPACITY_OVERLOADS)
            before = _capacity(dep, workload, speculative, *FORMER)
            pct_now, pct_before = pct_error(now, reference), pct_error(before, reference)
            errors["now"].append(pct_now)
            errors["before"].append(pct_before)
            print(f"  {label:<24} {reference:>10.3f} {rounds:>6} {pct_now:>+7.1f}% {pct_before:>+7.1f}%", flush=True)
    for key, values in errors.items():
        worst = max(values, key=abs)
        median = statistics.median(abs(v) for v in values)
        print(f"{key:>6}: |error| median {median:.1f}%, worst {worst:+.1f}% over {len(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
