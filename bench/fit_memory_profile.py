"""Fit the vLLM calibration coefficients of data/engines.json to the logged start-up cases.

`python -m bench.fit_memory_profile` prints the fitted values and each case's residual; the values
are copied into data/engines.json (``calibration``), whose ``source`` entries cite this script.

* activation (V1): ``max(f · N · width · bytes, s · seqs · vocab) + MoE workspace`` — grid search
  for (s, f) minimising the squared relative error over cases that log the activation peak. V0's is derived from
  its source and only printed beside its logs (a V0 log that states no peak gives it by difference,
  ``utilization · total − weights − non-torch − KV``; a log whose KV GiB disagrees with its token count is another
  rank's, V0 samples on the driver rank only, and is left out);
* CUDA graphs: least squares of ``first + per_graph_layer · layers · (captures - 1)`` on the logged estimates;
* non-torch: the median per parallel layout.
"""

from __future__ import annotations

import statistics
import sys

from bench.kv_cases import Case, load_cases
from planner.catalog.hardware import device_total_bytes
from planner.engines.components import calibration, moe_workspace_bytes
from planner.engines.profiles import engine_profile, resolve_limits
from planner.memory import plan_memory
from planner.model.dtypes import element_bytes
from planner.units import GIB, MIB

#: A log whose KV GiB and token count disagree by more than this is not the rank that binds the pool.
_BINDING_RANK_TOLERANCE = 0.02


def _logged_activation(case: Case) -> int | None:
    """The logged activation peak, or (V0) the one implied by the rest of the log on the binding rank."""
    dep, logged = case.deployment, case.logged
    plan = plan_memory(dep, with_suggestions=False)
    if logged.kv_cache_bytes and logged.kv_cache_tokens:
        implied = logged.kv_cache_bytes / logged.kv_cache_tokens
        if abs(implied / plan.kv_bytes_per_token_per_gpu - 1) > _BINDING_RANK_TOLERANCE:
            return None
    if logged.torch_peak_increase_bytes is not None:
        return logged.torch_peak_increase_bytes
    parts = (logged.kv_cache_bytes, logged.weights_bytes, logged.non_torch_increase_bytes)
    if dep.engine != "vllm-v0" or None in parts:
        return None
    total = dep.gpu_memory_bytes or device_total_bytes(dep.gpu).bytes
    limit = plan.limits.memory_fraction * total
    return round(limit - logged.weights_bytes - logged.non_torch_increase_bytes - logged.kv_cache_bytes)


def _activation_rows(engine: str = "vllm"):
    rows = []
    for case in load_cases():
        dep = case.deployment
        if dep is None or dep.engine != engine or dep.pp > 1 or dep.draft is not None:
            continue
        activation = _logged_activation(case)
        if activation is None:
            continue
        arch = dep.target.architecture
        profile = engine_profile(dep.engine, dep.engine_version)
        limits = resolve_limits(dep, profile)
        fmt = dep.target_format
        elem = element_bytes(fmt.activation_dtype)
        width = max(
            2 * arch.hidden_size + 3 * arch.intermediate_size / dep.tp,
            2 * arch.hidden_size + (2 * arch.num_attention_heads + 2 * arch.num_kv_heads) * arch.head_dim / dep.tp,
        )
        rows.append(
            {
                "case": case.case_id,
                "logged": activation,
                "forward_unit": limits.max_num_batched_tokens * width * elem,
                "sampler_unit": profile.profile_run_seqs(limits, dep.resolved_max_model_len) * arch.vocab_size,
                "workspace": moe_workspace_bytes(arch, limits.max_num_batched_tokens, dep.tp, elem, fmt),
            }
        )
    return rows


def fit_activation(rows, sampler_tenths: range = range(100, 201)):
    best = None
    for s10 in sampler_tenths:
        s = s10 / 10
        for f100 in range(60, 201, 1):
            f = f100 / 100
            err = sum(
                ((max(f * r["forward_unit"], s * r["sampler_unit"]) + r["workspace"]) / r["logged"] - 1) ** 2
                for r in rows
            )
            if best is None or err < best[0]:
                best = (err, s, f)
    return best[1], best[2]


def fit_cudagraphs():
    points = []
    for case in load_cases():
        dep, logged = case.deployment, case.logged
        if dep is None or dep.engine != "vllm" or logged.cudagraph_bytes is None:
            continue
        limits = resolve_limits(dep, engine_profile(dep.engine, dep.engine_version))
        layers = dep.target.architecture.num_layers // dep.pp
        points.append((case.case_id, layers * (limits.cudagraph_capture_sizes - 1), logged.cudagraph_bytes))
    n = len(points)
    mean_x = sum(p[1] for p in points) / n
    mean_y = sum(p[2] for p in points) / n
    slope = sum((p[1] - mean_x) * (p[2] - mean_y) for p in points) / sum((p[1] - mean_x) ** 2 for p in points)
    return mean_y - slope * mean_x, slope, points


#: Logs the SGLang non-torch constant was set from (``sglang_non_torch_gib`` in data/engines.json cites them).
SGLANG_NON_TORCH_ROWS = ("vllm21348-qwen3-235b-fp8-tp4-sglang",)
#: Logs the V0 non-torch constants were set from (``v0_*non_torch_gib`` in data/engines.json cite them). V0's
#: activation peak is derived from its source (``v0_sampler_bytes_per_logit``, ``v0_forward_activation_factor``),
#: not fitted: ``main`` prints it beside the logs for comparison only.
V0_NON_TORCH_ROWS = (
    "book-h100-llama8b",
    "vllmpr10511-llama3-8b-tp1",
    "vllmpr10511-llama3-8b-tp2",
    "vllm10517-3090-20000",
)


def _non_torch_layouts() -> dict[str, list[tuple[str, float]]]:
    """Logged vLLM non-torch memory by parallel layout (the medians are the ``non_torch_gib`` constants)."""
    layouts: dict[str, list[tuple[str, float]]] = {}
    for case in load_cases():
        dep = case.deployment
        if dep is None or dep.engine != "vllm" or case.logged.non_torch_increase_bytes is None:
            continue
        key = "pp_only" if dep.pp > 1 and dep.tp == 1 else ("tp_multi" if dep.tp > 1 else "tp1")
        layouts.setdefault(key, []).append((case.case_id, case.logged.non_torch_increase_bytes / GIB))
    return layouts


def fitted_case_ids() -> dict[str, list[str]]:
    """Each log a calibration coefficient was fitted on, with the fits that used it: the rows
    ``make bench-accuracy`` marks and keeps out of its figures over unseen logs.

    The same selections as the fits below (activation: logs stating or implying their peak; CUDA graphs:
    logs stating the estimate; non-torch: vLLM logs stating it; SGLang's constant: its cited log).
    """
    used: dict[str, list[str]] = {}
    for row in _activation_rows():
        used.setdefault(row["case"], []).append("V1 activation")
    for case_id, _, _ in fit_cudagraphs()[2]:
        used.setdefault(case_id, []).append("CUDA graphs")
    for entries in _non_torch_layouts().values():
        for case_id, _ in entries:
            used.setdefault(case_id, []).append("non-torch")
    for case_id in SGLANG_NON_TORCH_ROWS:
        used.setdefault(case_id, []).append("SGLang non-torch")
    for case_id in V0_NON_TORCH_ROWS:
        used.setdefault(case_id, []).append("V0 non-torch")
    return used


def _print_activation(label: str, rows, s: float, f: float) -> None:
    print(f"{label}: sampler bytes per logit = {s:.1f}, forward activation factor = {f:.2f}  (n={len(rows)})")
    for r in rows:
        pred = max(f * r["forward_unit"], s * r["sampler_unit"]) + r["workspace"]
        print(
            f"  {r['case']:<46} logged {r['logged'] / GIB:5.2f} GiB  model {pred / GIB:5.2f}  "
            f"({100 * (pred / r['logged'] - 1):+5.1f}%)"
        )


def main() -> int:
    rows = _activation_rows()
    s, f = fit_activation(rows)
    _print_activation("V1 activation (sampler_bytes_per_logit, forward_activation_factor)", rows, s, f)
    v0_rows = _activation_rows("vllm-v0")
    cal = calibration()
    _print_activation(
        "\nV0 activation derived from the source, not fitted (v0_sampler_bytes_per_logit, v0_forward_activation_factor;"
        " the sampler phase also holds the hidden states)",
        v0_rows,
        cal.v0_sampler_bytes_per_logit,
        cal.v0_forward_activation_factor,
    )
    first, per, points = fit_cudagraphs()
    print(
        f"\nCUDA graphs: first capture = {first / MIB:.0f} MiB, per layer per extra graph = {per / MIB:.3f} MiB "
        f"(n={len(points)})"
    )
    for case, x, y in points:
        pred = first + per * x
        print(f"  {case:<46} logged {y / GIB:5.2f} GiB  fitted {pred / GIB:5.2f}  ({100 * (pred / y - 1):+5.1f}%)")
    layouts = _non_torch_layouts()
    print(
        "\nnon-torch medians (GiB): "
        + ", ".join(f"{k} {statistics.median(g for _, g in v):.2f} (n={len(v)})" for k, v in sorted(layouts.items()))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
