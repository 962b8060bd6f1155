"""`python -m bench.fit_head_overhead`: the host cost of one proposer pass in vLLM V1, beyond its kernels.

Grid-searches ``draft_step_overhead_s`` (0 to 2 ms in 0.05 ms steps; ``head_pass_overhead_s`` held at 0) of the
vLLM NVIDIA profile on the rows of data/calibration/specdec-measured.csv that run a catalogued head and report
acceptance (so only the step cost is fitted), and prints the median and worst |error| of the predicted speedup at
each value and the best one. vLLM V1's draft-model and EAGLE proposers share one propose loop, so the value applies
to every proposer pass. Copy the best value into data/speed_profiles.json (engines.vllm.draft_step_overhead_s).
It measures; it never asserts.
"""

from __future__ import annotations

import statistics
import sys

from bench.speed_eval import predict_case
from bench.speed_rows import Case, load_rows
from planner.speed import speed_profile

GRID_S = tuple(i * 5e-5 for i in range(41))


def head_cases() -> list[Case]:
    """Expressible rows whose draft is a head and that report acceptance (so only the step cost is fitted)."""
    return [
        c
        for c in load_rows()
        if isinstance(c, Case) and c.has_acceptance and c.deployment.speculative_method in ("eagle", "eagle3", "mtp")
    ]


def errors(cases: list[Case], overhead_s: float) -> list[float]:
    profile = speed_profile("vllm", "nvidia").with_values(draft_step_overhead_s=overhead_s, head_pass_overhead_s=0.0)
    return [predict_case(c, None, {profile.id: profile}) / c.measured - 1 for c in cases]


def best_overhead_s(cases: list[Case]) -> float:
    return min(GRID_S, key=lambda x: statistics.median(abs(e) for e in errors(cases, x)))


def main() -> int:
    cases = head_cases()
    out = sys.stdout.write
    out(f"{len(cases)} head rows with acceptance\n{'overhead (ms)':>14} {'median |err|':>13} {'worst |err|':>12}\n")
    for x in GRID_S:
        errs = [abs(e) for e in errors(cases, x)]
        out(f"{x * 1e3:>14.2f} {statistics.median(errs):>13.1%} {max(errs):>12.1%}\n")
    out(f"best: {best_overhead_s(cases) * 1e3:.2f} ms per proposer pass\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
