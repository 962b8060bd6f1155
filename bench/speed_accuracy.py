"""`make bench-speed-accuracy`: the speed model against published speculative-decoding measurements.

Prints, for every row of data/calibration/specdec-measured.csv it can express, the measured and
predicted speedup and the error: first the rows that report acceptance (α from τ or ρ; the goal is a
median absolute error of at most 15% over them), then the rows that report none, predicted with
the α prior (the median α of the csv's rows that report τ with K) and shown with the α that would
reproduce the measurement. Then the plain-decoding figures (data/calibration/plain-decode-measured.csv)
and every row it cannot express, with the reason. It measures; it never asserts.

``PLANNER_DATA_DIR`` points it at another catalog (e.g. one with the GPUs a row needs).
"""

from __future__ import annotations

import statistics
import sys

from bench.speed_eval import (
    bandwidth_floor_violated,
    implied_alpha,
    load_plain,
    pct_error,
    predict_case,
    predict_plain,
)
from bench.speed_rows import Case, Skipped, load_rows
from planner.speed.policy import speculation_rules
from planner.speed.profiles import speed_profile

GOAL_PCT = 15.0


def _line(case: Case, predicted: float, extra: str = "") -> str:
    error = pct_error(predicted, case.measured)
    metric = "e2e" if case.metric == "e2e" else "dec"
    return (
        f"{case.row:>4}  {case.label[:84]:<84} {case.deployment.engine:<8} {metric:<4}"
        f"{case.measured:>6.2f} {predicted:>7.2f} {error:>+7.1f}%{extra}"
    )


def _header(extra: str = "") -> str:
    columns = f"{'engine':<8} {'kind':<4}{'meas':>6} {'pred':>7} {'error':>8}"
    return f"{'row':>4}  {'pair | hardware | batch':<84} {columns}{extra}"


def goal_rows(cases: list[Case]) -> list[tuple[Case, float, float]]:
    """``(case, predicted speedup, |error| %)`` for each row that reports acceptance: the goal metric's rows."""
    rows = []
    for case in cases:
        if case.has_acceptance:
            predicted = predict_case(case, None)
            rows.append((case, predicted, abs(pct_error(predicted, case.measured))))
    return rows


def goal_median_error_pct(goal: list[tuple[Case, float, float]]) -> float | None:
    """The goal metric: median |error| % over :func:`goal_rows` (None when no row could be predicted)."""
    return statistics.median(error for _, _, error in goal) if goal else None


def main() -> int:
    rows = load_rows()
    cases = [r for r in rows if isinstance(r, Case)]
    skipped = [r for r in rows if isinstance(r, Skipped)]
    print("Speed model vs published speculative-decoding measurements (data/calibration/specdec-measured.csv)")
    print("kind: dec = decode speedup (TPOT or tok/s ratio), e2e = end-to-end latency ratio (prefill included)\n")

    goal = goal_rows(cases)
    print(f"Rows that report acceptance ({len(goal)}): the goal metric")
    print(_header("  α"))
    for case, predicted, _ in goal:
        print(_line(case, predicted, f"  {case.alpha:.3f}" if case.alpha is not None else ""))
    median = goal_median_error_pct(goal)
    if median is not None:
        verdict = "meets" if median <= GOAL_PCT else "misses"
        print(f"  median |error| {median:.1f}% over {len(goal)} rows ({verdict} the goal of <= {GOAL_PCT:.0f}%)")
    else:
        print("  none expressible: every row with acceptance needs a GPU or model missing from the catalog")
        print("  (see the reasons below); the goal metric cannot be computed on this catalog")

    prior_rows = [c for c in cases if not c.has_acceptance]
    print(f"\nRows without acceptance ({len(prior_rows)}): predicted at the pair's α prior (planner.pairs.acceptance:")
    print("lineage relation and parameter ratio, data/acceptance_priors.json). Not part of the goal metric.")
    print(_header("  α prior  α that fits"))
    prior_errors = []
    for case in prior_rows:
        alpha = case.workload.alpha
        predicted = predict_case(case, None)
        prior_errors.append(abs(pct_error(predicted, case.measured)))
        fit = implied_alpha(case)
        print(_line(case, predicted, f"  {alpha:.3f}  " + (f"{fit:.3f}" if fit is not None else ">1 (none)")))
        for note in case.assumptions:
            print(f"{'':6}· {note}")
    if prior_errors:
        print(f"  median |error| {statistics.median(prior_errors):.1f}% over {len(prior_errors)} rows at the α prior")

    print("\nPlain decoding (no draft) against published figures (data/calibration/plain-decode-measured.csv)")
    print(f"{'line':>4}  {'model | gpu | engine':<76} {'metric':<19}{'meas':>9} {'pred':>9} {'error':>8}")
    plain_errors = []
    for row in load_plain():
        if row.deployment is None or not row.profiled:
            print(f"{row.line:>4}  {row.label[:76]:<76} not predicted: {row.reason}")
            continue
        predicted = predict_plain(row)
        error = pct_error(predicted, row.measured)
        note = "  (beats the bandwidth floor: left out of the fit)" if bandwidth_floor_violated(row) else ""
        if not note:
            plain_errors.append(abs(error))
        print(
            f"{row.line:>4}  {row.label[:76]:<76} {row.metric:<19}{row.measured:>9.4g} {predicted:>9.4g} "
            f"{error:>+7.1f}%{note}"
        )
    if plain_errors:
        median = statistics.median(plain_errors)
        print(f"  median |error| {median:.1f}% over {len(plain_errors)} physically consistent rows")

    print(f"\nRows it cannot express ({len(skipped)})")
    for row in skipped:
        print(f"{row.row:>4}  {row.label[:70]:<70} {row.reason}")

    print("\nProfiles used (data/speed_profiles.json; fit: python -m bench.fit_speed_profile)")
    for pid in sorted({(c.deployment.engine, c.deployment.gpu.vendor) for c in cases}):
        profile = speed_profile(*pid)
        values = ", ".join(
            f"{name}={value:.3g}" if isinstance(value, float) else f"{name}={value}"
            for name, value, _ in profile.parameters()
        )
        print(f"  {profile.id}: {values}")
    print("  (NVIDIA GPUs: the roofline's GEMMs and attention at data/kernel_efficiency.json's measured fractions)")
    rules = speculation_rules().verdict
    print(f"Verdict thresholds: {rules.as_dict()} ({rules.source[:60]}...)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
