"""Fit the three calibrated speed-profile values by small grid searches; print them and their error.

``python -m bench.fit_speed_profile`` (it measures and prints; copy the values into
data/speed_profiles.json with the derivation it prints). Every other value of the profiles has a
published source. The procedure, in order:

1. ``vendors.amd.bandwidth_frac``: plain-decoding rows of one model on AMD GPUs at two or more TP
   degrees (data/calibration/plain-decode-measured.csv). Per row, TPOT = bytes per GPU / (BW·η) +
   a fixed per-step cost of that engine (a nuisance parameter: all-reduce counts do not change
   with TP), so the slope of TPOT against bytes per GPU gives η whatever the engine's overheads.
2. ``engines.vllm.vendor_overrides.amd.layer_overhead_s``: the speculative rows that report
   acceptance (τ or ρ) and run vLLM V1 on AMD (bench/speed_rows.py). The per-layer floor is what
   makes a small draft cost more than its bytes, and only speedups with a known α see it.
3. ``engines.vllm.layer_overhead_s`` (NVIDIA; TensorRT-LLM, SGLang and V0 inherit it): the NVIDIA
   plain-decoding rows of profiled engines, with ``vendors.nvidia.bandwidth_frac`` at its sourced
   value (the two trade off along a ridge on these rows: a 70B step cannot tell a slower stream
   from a longer floor, so the stream is pinned by its own source and the floor is fitted).

Each grid minimises the mean |log(predicted / measured)|. A row beating the bandwidth floor (faster
than 100% of HBM bandwidth with no overhead) is reported and left out: its published figure cannot
be what the lengths say (e.g. fewer tokens generated). Three fitted values, each on the rows that
determine it.

The three values are the roofline's (a pass priced from measured kernel tables uses neither the bandwidth
fraction nor this per-layer floor), so every row is priced on the roofline here, also on a GPU the tables
cover (``roofline_only``): otherwise an H200 row would be priced from its kernel tables, which no value
fitted here moves, and its bandwidth floor would be the tables' instead of the data sheet's.
"""

from __future__ import annotations

import statistics
import sys

from bench.speed_eval import PlainRow, bandwidth_floor_violated, load_plain, log_error, predict_case, predict_plain
from bench.speed_rows import Case, load_rows
from planner.speed.estimate import baseline_speed
from planner.speed.kernels.aiconfigurator_tables import roofline_only
from planner.speed.profiles import SpeedProfile, speed_profile

LAYER_GRID_S = [round(2e-6 * i, 7) for i in range(151)]  # 0 .. 300 us
#: Host launches without graphs on top of the floor (data/speed_profiles.json, eager_layer_overhead_s).
EAGER_EXTRA_S = 5e-5


def _usable(rows: list[PlainRow]) -> list[PlainRow]:
    kept = []
    for row in rows:
        if row.deployment is None:
            continue
        if bandwidth_floor_violated(row):
            print(f"  left out (beats the bandwidth floor): line {row.line} {row.label}")
            continue
        kept.append(row)
    return kept


def fit_vendor_slope(vendor: str, rows: list[PlainRow]) -> float | None:
    """Step 1: η from TPOT against bytes per GPU of one model at several TP degrees (least squares)."""
    groups: dict[tuple[str, str], list[PlainRow]] = {}
    for row in rows:
        if row.deployment is not None and row.deployment.gpu.vendor == vendor and row.metric != "e2e_latency_s":
            groups.setdefault((row.deployment.target.id, row.deployment.gpu.id), []).append(row)
    etas = []
    for (model, gpu_id), group in groups.items():
        if len({r.deployment.tp for r in group}) < 2:  # type: ignore[union-attr]
            continue
        points = []
        for row in group:
            assert row.deployment is not None and row.workload is not None
            ideal = speed_profile("vllm", vendor).with_values(bandwidth_frac=1.0)
            decode = baseline_speed(row.deployment, row.workload, ideal).decode
            tpot = 1 / row.measured if row.metric == "tok_s_per_sequence" else row.measured
            points.append((decode.memory_s, tpot))  # memory_s at η = 1 is bytes / peak bandwidth
        mean_x = statistics.fmean(x for x, _ in points)
        mean_y = statistics.fmean(y for _, y in points)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
        fixed = mean_y - slope * mean_x
        eta = 1 / slope
        print(
            f"  {model} on {gpu_id}: {len(points)} TP degrees, η = {eta:.3f}, fixed per-step cost {fixed * 1e3:.2f} ms"
        )
        etas.append(eta)
    return statistics.median(etas) if etas else None


def _with(profile_id: str, base: dict[str, SpeedProfile], **values) -> SpeedProfile:
    engine, vendor = profile_id.rsplit("-", 1)
    return (base.get(profile_id) or speed_profile(engine, vendor)).with_values(**values)


def fit_spec_layer_overhead(
    vendor: str, cases: list[Case], overrides: dict[str, SpeedProfile]
) -> tuple[float, float, int] | None:
    """Step 2: the per-layer floor from ``vendor``'s speculative rows with acceptance.

    Returns (value, mean |log error|, rows).
    """
    rows = [c for c in cases if c.has_acceptance and c.deployment.gpu.vendor == vendor]
    if not rows:
        return None
    best: tuple[float, float, int] | None = None
    for layer_s in LAYER_GRID_S:
        local = dict(overrides)
        for case in rows:
            pid = f"{case.deployment.engine}-{vendor}"
            local[pid] = _with(pid, overrides, layer_overhead_s=layer_s, eager_layer_overhead_s=layer_s + EAGER_EXTRA_S)
        error = statistics.fmean(log_error(predict_case(c, None, local), c.measured) for c in rows)
        if best is None or error < best[1] - 1e-12:
            best = (layer_s, error, len(rows))
    return best


def fit_plain_layer_overhead(vendor: str, rows: list[PlainRow]) -> tuple[float, float, int] | None:
    """Step 3: the per-layer floor from ``vendor``'s plain rows of profiled engines."""
    mine = [r for r in rows if r.profiled and r.deployment is not None and r.deployment.gpu.vendor == vendor]
    if not mine:
        return None
    best: tuple[float, float, int] | None = None
    for layer_s in LAYER_GRID_S:
        overrides: dict[str, SpeedProfile] = {}
        for row in mine:
            assert row.deployment is not None
            pid = f"{row.deployment.engine}-{vendor}"
            overrides[pid] = _with(pid, {}, layer_overhead_s=layer_s, eager_layer_overhead_s=layer_s + EAGER_EXTRA_S)
        error = statistics.fmean(log_error(predict_plain(r, overrides), r.measured) for r in mine)
        if best is None or error < best[1] - 1e-12:
            best = (layer_s, error, len(mine))
    return best


def main() -> int:
    with roofline_only():  # the values fitted here are the roofline's (module docstring)
        return _fit()


def _fit() -> int:
    plain = load_plain()
    print("Step 1: AMD bandwidth fraction from TPOT against bytes per GPU")
    usable = _usable(plain)
    amd_eta = fit_vendor_slope("amd", usable)
    print(f"  -> vendors.amd.bandwidth_frac = {amd_eta:.2f}" if amd_eta else "  -> no AMD rows at two TP degrees")
    overrides: dict[str, SpeedProfile] = {}
    if amd_eta:
        for engine in ("vllm", "vllm-v0", "sglang", "trtllm", "hf"):
            overrides[f"{engine}-amd"] = _with(f"{engine}-amd", {}, bandwidth_frac=round(amd_eta, 2))
    print("Step 2: AMD per-layer overhead from speculative rows that report acceptance")
    cases = [c for c in load_rows() if isinstance(c, Case)]
    amd_layer = fit_spec_layer_overhead("amd", cases, overrides)
    if amd_layer:
        print(
            f"  -> engines.vllm.vendor_overrides.amd.layer_overhead_s = {amd_layer[0]:.1e} "
            f"({amd_layer[2]} rows, mean |log error| {amd_layer[1]:.3f})"
        )
        rows = [c for c in cases if c.has_acceptance and c.deployment.gpu.vendor == "amd"]
        if len(rows) > 2:
            print("  leave-one-out (fit on the others, predict the row):")
            for held in rows:
                others = [c for c in cases if c is not held]
                refit = fit_spec_layer_overhead("amd", others, overrides)
                assert refit is not None
                local = dict(overrides)
                pid = f"{held.deployment.engine}-amd"
                local[pid] = _with(
                    pid, overrides, layer_overhead_s=refit[0], eager_layer_overhead_s=refit[0] + EAGER_EXTRA_S
                )
                predicted = predict_case(held, None, local)
                print(
                    f"    row {held.row}: layer {refit[0]:.1e} s, predicted {predicted:.2f} vs {held.measured:.2f} "
                    f"({100 * (predicted - held.measured) / held.measured:+.1f}%)"
                )
    else:
        print("  -> no expressible AMD row reports acceptance (the catalog lacks their GPU or models)")
    print("Step 3: NVIDIA per-layer overhead from plain-decoding rows of profiled engines")
    eta = speed_profile("vllm", "nvidia").bandwidth_frac
    nvidia = fit_plain_layer_overhead("nvidia", usable)
    if nvidia:
        print(
            f"  -> engines.vllm.layer_overhead_s = {nvidia[0]:.1e} at vendors.nvidia.bandwidth_frac = {eta} "
            f"({nvidia[2]} rows, mean |log error| {nvidia[1]:.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
