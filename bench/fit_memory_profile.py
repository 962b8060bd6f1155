"""Fit the vLLM V1 calibration coefficients of data/engines.json to the logged start-up cases.

`python -m bench.fit_memory_profile` prints the fitted values and each case's residual; the values
are copied into data/engines.json (``calibration``), whose ``source`` entries cite this script.

* activation: ``max(f · N · width · bytes, s · max_num_seqs · vocab) + MoE workspace`` — grid search for
  (s, f) minimising the squared relative error over cases that log the activation peak;
* CUDA graphs: least squares of ``first + per_graph_layer · layers · (captures - 1)`` on the logged estimates;
* non-torch: the median per parallel layout.
"""

from __future__ import annotations

import statistics
import sys

from bench.kv_cases import load_cases
from planner.engines.components import moe_workspace_bytes
from planner.engines.profiles import engine_profile, resolve_limits
from planner.model.dtypes import element_bytes
from planner.units import GIB, MIB


def _activation_rows():
    rows = []
    for case in load_cases():
        dep, logged = case.deployment, case.logged
        if dep is None or dep.engine != "vllm" or logged.torch_peak_increase_bytes is None or dep.pp > 1:
            continue
        arch = dep.target.architecture
        limits = resolve_limits(dep, engine_profile(dep.engine, dep.engine_version))
        fmt = dep.target_format
        elem = element_bytes(fmt.activation_dtype)
        width = max(
            2 * arch.hidden_size + 3 * arch.intermediate_size / dep.tp,
            2 * arch.hidden_size + (2 * arch.num_attention_heads + 2 * arch.num_kv_heads) * arch.head_dim / dep.tp,
        )
        rows.append(
            {
                "case": case.case_id,
                "logged": logged.torch_peak_increase_bytes,
                "forward_unit": limits.max_num_batched_tokens * width * elem,
                "sampler_unit": limits.max_num_seqs * arch.vocab_size,
                "workspace": moe_workspace_bytes(arch, limits.max_num_batched_tokens, dep.tp, elem),
            }
        )
    return rows


def fit_activation(rows):
    best = None
    for s10 in range(100, 201):
        s = s10 / 10
        for f100 in range(60, 201, 2):
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


def main() -> int:
    rows = _activation_rows()
    s, f = fit_activation(rows)
    print(f"activation: sampler_bytes_per_logit = {s:.1f}, forward_activation_factor = {f:.2f}  (n={len(rows)})")
    for r in rows:
        pred = max(f * r["forward_unit"], s * r["sampler_unit"]) + r["workspace"]
        print(
            f"  {r['case']:<46} logged {r['logged'] / GIB:5.2f} GiB  fitted {pred / GIB:5.2f}  "
            f"({100 * (pred / r['logged'] - 1):+5.1f}%)"
        )
    first, per, points = fit_cudagraphs()
    print(
        f"\nCUDA graphs: first capture = {first / MIB:.0f} MiB, per layer per extra graph = {per / MIB:.3f} MiB "
        f"(n={len(points)})"
    )
    for case, x, y in points:
        pred = first + per * x
        print(f"  {case:<46} logged {y / GIB:5.2f} GiB  fitted {pred / GIB:5.2f}  ({100 * (pred / y - 1):+5.1f}%)")
    layouts: dict[str, list[float]] = {}
    for case in load_cases():
        dep = case.deployment
        if dep is None or dep.engine != "vllm" or case.logged.non_torch_increase_bytes is None:
            continue
        key = "pp_only" if dep.pp > 1 and dep.tp == 1 else ("tp_multi" if dep.tp > 1 else "tp1")
        layouts.setdefault(key, []).append(case.logged.non_torch_increase_bytes / GIB)
    print(
        "\nnon-torch medians (GiB): "
        + ", ".join(f"{k} {statistics.median(v):.2f} (n={len(v)})" for k, v in sorted(layouts.items()))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
