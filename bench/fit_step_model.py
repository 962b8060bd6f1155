"""Fit the step model's batch-dependent values on published serving throughput; print them and their rows.

``python -m bench.fit_step_model`` (it measures and prints; copy the values into data/speed_profiles.json
with the rows it names). Two values, one grid search, minimising the mean |log(predicted / measured)| of
output tokens/s over the rows marked fitted in bench/serving_rows.py (``FIT_ROWS``: TensorRT-LLM's
offline throughput table and vLLM's unlimited-rate ShareGPT runs, each simulated offline and priced on the roofline
as where aiconfigurator-core is not installed: these are the roofline's values, for GPUs and engines its tables do
not cover):

* ``vendors.nvidia.gemm_half_tokens``: how fast GEMM efficiency rises with the tokens in a pass;
* ``engines.vllm.seq_overhead_s`` (inherited by every engine but TensorRT-LLM, whose own value ``--measured``
  fits): host time per sequence and pass, fitted here over all ten rows as one value;

then, with those fixed, ``engines.vllm-v0.spec_seq_overhead_s``: vLLM V0's per-sequence cost of a speculative
step (its Python proposer and scorer bookkeeping) on the vLLM spec-decode blog's draft-model rows
(``FIT_SPEC_PREFIXES``: speedup against request rate), the only rows that see it.

``python -m bench.fit_step_model --measured`` fits instead, on the same throughput rows priced from measured kernel
tables (aiconfigurator-core; every fit row's GPU and engine is covered), two values jointly (one grid):
``engines.vllm.measured_layer_overhead_s``, the per-layer time of the small kernels those tables do not hold (every
engine inherits it), and ``engines.trtllm.seq_overhead_s``, TensorRT-LLM's own host time per sequence (8 of the 10
rows ran it).

Every other row of serving-measured.csv (speedup against batch and rate, TPOT against rate, the other
engines' throughput) is untouched by the fit and reported apart by ``make bench-serving``.
"""

from __future__ import annotations

import math
import statistics
import sys

from bench.serving_rows import ServingCase, load_cases
from planner.speed.kernels.aiconfigurator_tables import roofline_only
from planner.speed.profiles import SpeedProfile, speed_profile
from planner.speed.simulate import simulate, simulate_one

#: Capped at 64 tokens (a tensor-core tile): a larger value would make a one-token GEMM compute-bound, against
#: the batch-1 decoding rows (data/calibration/plain-decode-measured.csv, make bench-speed-accuracy).
HALF_TOKENS_GRID = (0, 16, 32, 48, 64)
SEQ_OVERHEAD_GRID_S = (0.0, 5e-6, 1e-5, 2e-5, 4e-5)
SPEC_SEQ_GRID_S = (0.0, 5e-5, 1e-4, 2e-4, 3e-4, 4e-4, 6e-4)


def _row_profile(case: ServingCase, **values: float) -> SpeedProfile:
    """The speed profile of the release the row ran, with ``values`` tried in place of its own."""
    dep = case.deployment
    return (case.profile or speed_profile(dep.engine, dep.gpu.vendor)).with_values(**values)


def _predict(case: ServingCase, half: float, seq_s: float) -> float:
    profile = _row_profile(case, gemm_half_tokens=half, seq_overhead_s=seq_s)
    return simulate_one(case.deployment, case.workload, profile=profile).output_tokens_per_s


MEASURED_LAYER_GRID_S = (0.0, 4e-6, 8e-6, 1.2e-5, 1.6e-5, 2.4e-5)
#: TensorRT-LLM's own host time per sequence and pass (its overlap scheduler hides the previous step's host work;
#: vLLM's value, 10 us, is the grid's last).
TRTLLM_SEQ_GRID_S = (0.0, 2.5e-6, 5e-6, 7.5e-6, 1e-5)


def _predict_measured(case: ServingCase, layer_s: float, trtllm_seq_s: float) -> float:
    values = {"measured_layer_overhead_s": layer_s}
    if case.deployment.engine == "trtllm":
        values["seq_overhead_s"] = trtllm_seq_s
    return simulate_one(case.deployment, case.workload, profile=_row_profile(case, **values)).output_tokens_per_s


def fit_measured() -> int:
    cases, _ = load_cases()
    rows = [c for c in cases if c.fitted and c.kind == "output_tok_s"]
    print(
        "Fitting measured_layer_overhead_s (every engine) and TensorRT-LLM's seq_overhead_s jointly on "
        f"{len(rows)} rows priced from measured kernel tables:"
    )
    best = None
    for layer_s in MEASURED_LAYER_GRID_S:
        for seq_s in TRTLLM_SEQ_GRID_S:
            predicted = [_predict_measured(c, layer_s, seq_s) for c in rows]
            score = statistics.fmean(abs(math.log(p / c.measured)) for p, c in zip(predicted, rows, strict=True))
            print(
                f"  measured_layer_overhead_s {layer_s:.1e}  trtllm seq_overhead_s {seq_s:.1e}: "
                f"mean |log error| {score:.3f}"
            )
            if best is None or score < best[0]:
                best = (score, layer_s, seq_s, predicted)
    assert best is not None
    score, layer_s, seq_s, predicted = best
    print(
        f"\nbest: measured_layer_overhead_s = {layer_s:g}, trtllm seq_overhead_s = {seq_s:g} "
        f"(mean |log error| {score:.3f})"
    )
    for case, value in zip(rows, predicted, strict=True):
        print(f"  {case.row:<38} {case.measured:>9,.0f} {value:>9,.0f} {100 * (value / case.measured - 1):+6.1f}%")
    return 0


def main() -> int:
    if "--measured" in sys.argv[1:]:
        return fit_measured()
    cases, _ = load_cases()
    with roofline_only():  # the values fitted here are the roofline's: its rows are priced as without measured kernels
        fit_roofline(cases)
    fit_spec_seq(cases)
    return 0


def fit_roofline(cases: list[ServingCase]) -> None:
    rows = [c for c in cases if c.fitted and c.kind == "output_tok_s"]
    print(f"Fitting gemm_half_tokens and seq_overhead_s on {len(rows)} rows:")
    for case in rows:
        print(f"  {case.label}  measured {case.measured:,.0f} tok/s")
    best = None
    for half in HALF_TOKENS_GRID:
        for seq_s in SEQ_OVERHEAD_GRID_S:
            errors = [abs(math.log(_predict(c, half, seq_s) / c.measured)) for c in rows]
            score = statistics.fmean(errors)
            print(f"  gemm_half_tokens {half:>4}  seq_overhead_s {seq_s:.0e}: mean |log error| {score:.3f}")
            if best is None or score < best[0]:
                best = (score, half, seq_s)
    assert best is not None
    score, half, seq_s = best
    print(f"\nbest: gemm_half_tokens = {half}, seq_overhead_s = {seq_s:g} (mean |log error| {score:.3f})")
    for case in rows:
        predicted = _predict(case, half, seq_s)
        print(
            f"  {case.row:<38} {case.measured:>9,.0f} {predicted:>9,.0f} {100 * (predicted / case.measured - 1):+6.1f}%"
        )


def fit_spec_seq(cases: list[ServingCase]) -> None:
    """vLLM V0's per-sequence speculative cost, on its rows priced as ``make bench-serving`` prices them."""
    spec_rows = [c for c in cases if c.fitted and c.kind == "speedup"]
    print(f"\nFitting vllm-v0 spec_seq_overhead_s on {len(spec_rows)} speedup rows:")
    best_spec = None
    for spec_s in SPEC_SEQ_GRID_S:
        errors = [abs(math.log(_speedup(c, spec_s) / c.measured)) for c in spec_rows]
        score = statistics.fmean(errors)
        print(f"  spec_seq_overhead_s {spec_s:.0e}: mean |log error| {score:.3f}")
        if best_spec is None or score < best_spec[0]:
            best_spec = (score, spec_s)
    assert best_spec is not None
    print(f"best: spec_seq_overhead_s = {best_spec[1]:g} (mean |log error| {best_spec[0]:.3f})")
    for case in spec_rows:
        predicted = _speedup(case, best_spec[1])
        print(
            f"  {case.row:<38} {case.measured:>6.2f} {predicted:>6.2f} {100 * (predicted / case.measured - 1):+6.1f}%"
        )


def _speedup(case: ServingCase, spec_s: float) -> float:
    profile = _row_profile(case, spec_seq_overhead_s=spec_s)
    return simulate(case.deployment, case.workload, alpha=case.alpha, k=case.k, profile=profile).speedup


if __name__ == "__main__":
    sys.exit(main())
