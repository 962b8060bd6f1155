"""`make bench-serving`: the serving simulator against published serving measurements, beside aiconfigurator.

For every row of data/calibration/serving-measured.csv it can express (bench/serving_rows.py) it simulates the
published setup and prints, side by side: published, planner and the error; aiconfigurator's own estimate of the same
configuration and its error where it covers it (bench/aiconfigurator_estimates.py); and where the planner's step
times came from (measured kernel tables or the roofline). Rows used by a fit (bench/fit_step_model.py) are marked
``fit`` and kept out of the goal statistics. Then the median and worst |error| per metric and per family of rows
(unfitted rows; aiconfigurator over the rows both cover), the goals, the speedup rows' goal at each published load
and how far each speedup moves when its run holds twice the requests, the static estimate beside the simulator on the
rows run at a fixed batch, SpecDecode-Bench's rows with another public set of answer lengths (its own answers'
lengths are not stated), how far the rows whose requests are drawn from a dataset (ShareGPT-like or MLPerf's lengths)
move over ten draws of them, each GPU's speed against an H100's on the same benchmark, published and planner (what a
quote's comparison of node types rests on), the most load the planner finds meeting the latency limits a row's load
was chosen under (MLPerf Server) beside that load, the rows it cannot express with the reason, and the time of a
2,000-request simulation. It measures; it never asserts.
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
import time

from bench.aiconfigurator_estimates import estimate
from bench.serving_rows import SDB_PROMPTS, ServingCase, load_cases, sdb_answer_lengths
from planner.catalog.lookup import get_model, get_node
from planner.decisions import SpeedMargin, Traffic, speed_margin
from planner.decisions.fleet import size_option
from planner.decisions.fleet_models import FleetOption
from planner.deployment import Deployment
from planner.speed.estimate import SpeedEstimate, SpeedWorkload, estimate_speed
from planner.speed.kernels.aiconfigurator_tables import roofline_only
from planner.speed.objective_watch import ObjectiveWatch
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import ServingMetrics, SimulationResult, offline_batch_speedup, simulate, simulate_one
from planner.speed.speed_source import speed_source
from planner.speed.step_cache import simulate_one_unless_missed

#: Goals on unfitted rows: (median, worst) |error| in percent (None: no goal on the worst).
GOALS_PCT = {"output_tok_s": (5.0, 15.0), "tpot_s": (5.0, 15.0), "ttft_s": (20.0, None), "speedup": (10.0, None)}
UNITS = {"output_tok_s": ("tok/s", 1.0), "ttft_s": ("ms", 1e3), "tpot_s": ("ms", 1e3), "speedup": ("x", 1.0)}


_RUNS: dict[str, ServingMetrics] = {}


def _speedup(case: ServingCase, workload: ServingWorkload) -> tuple[float, ServingMetrics]:
    """A speculative row's speedup on ``workload`` (its own, or with more requests), and the run it chose."""
    if case.identical_waves:
        return identical_waves_speedup(case, workload)
    result = simulate(case.deployment, workload, alpha=case.alpha, k=case.k, profile=case.profile)
    return result.speedup, result.chosen


def identical_waves_speedup(
    case: ServingCase, workload: ServingWorkload, lengths: tuple[list[int], list[int]] | None = None
) -> tuple[float, ServingMetrics]:
    """Each request of ``workload`` (or of ``lengths``: prompt and output tokens) run alone as one offline batch of
    ``workload.concurrency`` identical copies (:func:`offline_batch_speedup`): the mean over the requests of each
    batch's output tokens per second with the draft, over the same mean without it (SpecDecode-Bench's measure,
    bench/serving_rows.py), and the speculative run of the longest batch."""
    copies, alpha = workload.concurrency or 1, case.alpha
    assert alpha is not None, "a speculative row states its acceptance"
    pairs = list(zip(*(lengths or workload.lengths()), strict=True))
    runs: dict[tuple[int, int], SimulationResult] = {}
    for prompt, output in pairs:
        if (prompt, output) not in runs:
            _, runs[prompt, output] = offline_batch_speedup(
                case.deployment, copies, prompt, output, alpha=alpha, k=case.k, profile=case.profile
            )
    each = [runs[pair] for pair in pairs]
    speculative = statistics.mean(r.chosen.output_tokens_per_s for r in each)
    plain = statistics.mean(r.plain.output_tokens_per_s for r in each)
    longest = max(runs.items(), key=lambda item: item[0][1])[1]
    return speculative / plain, longest.chosen


#: How closely the most load meeting a row's objectives is found (a fraction of it).
LOAD_PRECISION = 0.002


def most_load_meeting(case: ServingCase) -> tuple[float, ServingMetrics]:
    """The most Poisson requests per second one replica of ``case`` takes while its run meets
    ``case.at_objectives``, and the run there: a bisection from a quarter of to 1.2 times the replica's steady
    offline rate (a top that meets them is doubled until one misses; the objectives tighten as the load rises). Each
    run holds the workload's requests or, where more, the requests of ``case.min_duration_s`` at its rate (past its
    capacity a queue grows with the run, so a run as long as the benchmark's is what meets or misses as it did); it
    stops as soon as it is certain to miss (:func:`planner.speed.step_cache.simulate_one_unless_missed`)."""
    assert case.at_objectives is not None
    ttft_s, tpot_s, pct = case.at_objectives
    watch = ObjectiveWatch(ttft_s, tpot_s, pct)
    offline = simulate_one(
        case.deployment, case.workload.model_copy(update={"request_rate": None, "offline": True}), profile=case.profile
    )

    def meeting(rate: float) -> ServingMetrics | None:
        requests = max(case.workload.num_prompts, math.ceil(rate * case.min_duration_s))
        arrivals = case.workload.model_copy(update={"request_rate": rate, "num_prompts": requests})
        run = simulate_one_unless_missed(case.deployment, arrivals, watch, profile=case.profile)
        return run if run is not None and run.ttft_at(pct) <= ttft_s and run.tpot_at(pct) <= tpot_s else None

    low, high = offline.steady_requests_per_s / 4, offline.steady_requests_per_s * 1.2
    best = meeting(low)
    assert best is not None, f"{case.row}: a quarter of the offline rate misses the objectives"
    for _ in range(20):  # a top of the bracket that meets them too widens it (a run past capacity misses in time)
        above = meeting(high)
        if above is None:
            break
        low, best, high = high, above, 2 * high
    while high - low > LOAD_PRECISION * low:
        mid = (low + high) / 2
        run = meeting(mid)
        if run is None:
            high = mid
        else:
            low, best = mid, run
    return low, best


#: How many times a row's chosen load the bench quotes, so that a quote sizes many replicas as a fleet would.
QUOTE_LOAD_FACTOR = 100.0


def quoted_at_scale(case: ServingCase) -> tuple[Traffic, FleetOption, SpeedMargin]:
    """``case``'s deployment quoted as :func:`planner.decisions.fleet.size_option` sizes an option, at
    ``QUOTE_LOAD_FACTOR`` times its load under its ``at_objectives``, on its dataset's lengths: the traffic, the
    option and its speed margin (:func:`planner.decisions.speed_margin`)."""
    assert case.at_objectives is not None and case.workload.request_rate is not None
    ttft_s, tpot_s, pct = case.at_objectives
    prompts, outputs = case.workload.lengths()
    traffic = Traffic(
        requests_per_s=QUOTE_LOAD_FACTOR * case.workload.request_rate,
        prompt_tokens=round(sum(prompts) / len(prompts)),
        output_tokens=round(sum(outputs) / len(outputs)),
        ttft_slo_s=ttft_s,
        tpot_slo_s=tpot_s,
        percentile=pct,
    )
    dataset = case.workload.dataset
    option = size_option(case.deployment, traffic, None, None, dataset=dataset)
    return traffic, option, speed_margin(case.deployment, traffic, option, dataset=dataset)


def _run(case: ServingCase) -> tuple[float, ServingMetrics]:
    if case.kind == "speedup":
        return _speedup(case, case.workload)
    run = _RUNS.get(case.row)  # a row's figures (TTFT, TPOT, throughput) come from one run
    if run is None:
        run = _RUNS[case.row] = simulate_one(case.deployment, case.workload, profile=case.profile)
    return _figure(case, run), run


def _figure(case: ServingCase, run: ServingMetrics) -> float:
    """The figure of ``run`` that ``case`` publishes (a plain row: throughput, TTFT or TPOT)."""
    if case.steady:  # the source averages its measurement after a warm-up
        value = {
            "output_tok_s": run.steady_output_tokens_per_s,
            "ttft_s": run.steady_ttft_s.mean,
            "tpot_s": run.steady_tpot_s.mean,
        }
        return value[case.kind]
    value = {"output_tok_s": run.output_tokens_per_s, "ttft_s": run.ttft_s.mean, "tpot_s": run.tpot_s.mean}
    return value[case.kind]


#: The GPU other GPUs' speed on the same benchmark is compared to.
REFERENCE_GPU = "h100-sxm-80gb"


def node_ratios(rows: list[tuple[ServingCase, float]]) -> list[tuple[str, str, float, float]]:
    """Each unfitted throughput row beside the same benchmark's row on ``REFERENCE_GPU`` (the same source, model,
    request lengths and arrivals): (benchmark, GPU, published ratio, planner ratio) of output tokens per second per
    GPU, what a quote's comparison of node types rests on."""
    by_bench: dict[tuple, dict[str, tuple[float, float]]] = {}
    for case, predicted in rows:
        if case.kind != "output_tok_s" or case.fitted:
            continue
        w, dep = case.workload, case.deployment
        bench = (family(case), dep.target.id, w.dataset, w.prompt_tokens, w.output_tokens, w.mode)
        by_bench.setdefault(bench, {})[dep.gpu.id] = (case.measured / dep.gpu_count, predicted / dep.gpu_count)
    ratios = []
    for bench, gpus in sorted(by_bench.items(), key=lambda item: str(item[0])):
        if REFERENCE_GPU not in gpus:
            continue
        ref_measured, ref_predicted = gpus[REFERENCE_GPU]
        lengths = bench[2] if bench[2] != "fixed" else f"{bench[3]}/{bench[4]}"
        name = f"{bench[0]} {bench[1].split('/')[-1]} {lengths}"
        for gpu, (measured, predicted) in sorted(gpus.items()):
            if gpu != REFERENCE_GPU:
                ratios.append((name, gpu, measured / ref_measured, predicted / ref_predicted))
    return ratios


#: Draws of a dataset row's requests the spread is printed over (seed 0 is the one the rows above use).
DATASET_DRAWS = 10


def dataset_draws(case: ServingCase) -> list[float]:
    """A plain row drawn from a dataset (its lengths, and its arrivals at a rate) simulated on ``DATASET_DRAWS``
    draws of its requests: the figure of each (the first is the row's own)."""
    draws = (case.workload.model_copy(update={"seed": seed}) for seed in range(DATASET_DRAWS))
    return [_figure(case, simulate_one(case.deployment, work, profile=case.profile)) for work in draws]


@functools.cache
def _evaluated() -> tuple[tuple[ServingCase, float, ServingMetrics], ...]:
    cases, _ = load_cases()
    return tuple((c, *_run(c)) for c in cases)


def simulated() -> list[tuple[ServingCase, ServingMetrics]]:
    """Every expressible row with the planner's run of it (bench/aiconfigurator_estimates.py reuses them)."""
    return [(c, m) for c, _, m in _evaluated()]


def roofline_figures(cases: list[ServingCase]) -> dict[tuple[str, str], float]:
    """Each row's figure with every step priced on the roofline alone, as where aiconfigurator-core is not installed
    (or a GPU or engine has no tables): its GEMMs and prefill attention at the measured fraction of their precision's
    peak (data/kernel_efficiency.json), the rest at the speed profile's fractions."""
    with roofline_only():
        return {
            (c.row, c.kind): _speedup(c, c.workload)[0]
            if c.kind == "speedup"
            else _figure(c, simulate_one(c.deployment, c.workload, profile=c.profile))
            for c in cases
        }


def print_roofline(cases: list[ServingCase]) -> None:
    """The roofline's |error| per metric and family over the unfitted rows, and the record beside it."""
    unfitted = [c for c in cases if not c.fitted]
    figures = roofline_figures(unfitted)
    print(
        "\nWithout measured kernels (every step on the roofline, as where aiconfigurator-core is not installed or a "
        "GPU or engine has no tables): |error| over the unfitted rows"
    )
    for kind in UNITS:
        mine = [(c, pct_error(figures[c.row, c.kind], c.measured)) for c in unfitted if c.kind == kind]
        if not mine:
            continue
        print(f"  {kind:<13} roofline {_stats([abs(e) for _, e in mine])}")
        for name in sorted({family(c) for c, _ in mine}):
            print(f"  {'':<13}   {name:<8} roofline {_stats([abs(e) for c, e in mine if family(c) == name])}")
        if kind == "output_tok_s":
            over, median = max(0.0, *(e for _, e in mine)), statistics.median([abs(e) for _, e in mine])
            print(f"  {'':<13} record (calibration.roofline_output_error): median_abs_pct "
                  f"{median:.1f}, most_over_pct {over:.1f}, rows {len(mine)}")  # fmt: skip


def pct_error(predicted: float, measured: float) -> float:
    return 100.0 * (predicted - measured) / measured


def family(case: ServingCase) -> str:
    return case.row.split("-")[0]


def load(case: ServingCase) -> str:
    """The load a row was published at: its batch (requests in flight) or its request rate."""
    work = case.workload
    if work.concurrency is not None:
        return f"batch {work.concurrency}"
    return f"{work.request_rate:g} req/s" if work.request_rate is not None else "offline"


def doubled_speedup_pct(case: ServingCase, once: float) -> float:
    """How far a speculative row's simulated speedup ``once`` moves when its run holds twice the requests
    (percent)."""
    twice_work = case.workload.model_copy(update={"num_prompts": 2 * case.workload.num_prompts})
    twice, _ = _speedup(case, twice_work)
    return pct_error(twice, once)


def static_estimate(case: ServingCase) -> SpeedEstimate:
    """The static estimate of a speculative row run at a fixed batch: that batch, its requests' lengths (a dataset's
    mean lengths and spread, or the fixed ones), its α and K."""
    work = case.workload
    lengths = {"dataset": work.dataset, "prompt_tokens": work.prompt_tokens, "output_tokens": work.output_tokens}
    workload = SpeedWorkload.build(alpha=case.alpha, k=case.k, batch_size=work.concurrency, **lengths)
    return estimate_speed(case.deployment, workload, case.profile)


def _stats(errors: list[float]) -> str:
    if not errors:
        return "none"
    return f"median {statistics.median(errors):5.1f}%  worst {max(errors):5.1f}%  over {len(errors):>2}"


def main() -> int:
    rows = []
    for case, predicted, metrics in _evaluated():
        aic, note = estimate(case, metrics.mean_batch_size, metrics.limits.max_num_batched_tokens)
        source = "measured" if speed_source(case.deployment).startswith("kernel") else "roofline"
        rows.append((case, predicted, pct_error(predicted, case.measured), aic, note, source))
    print("Serving simulator vs published serving measurements (data/calibration/serving-measured.csv),")
    print("beside aiconfigurator 0.12 (`aiconfigurator cli estimate`, agg mode at the planner's mean batch)")
    print("fit: rows used by python -m bench.fit_step_model (left out of the goal statistics)\n")
    for kind, (unit, scale) in UNITS.items():
        chosen = [r for r in rows if r[0].kind == kind]
        if not chosen:
            continue
        print(f"{kind} ({unit})        published   planner   error  aiconfig   error  step times")
        for case, predicted, error, aic, _note, source in sorted(chosen, key=lambda r: (r[0].fitted, r[0].row)):
            tag = "fit " if case.fitted else "    "
            aic_text = f"{aic * scale:>9.2f} {pct_error(aic, case.measured):>+6.1f}%" if aic else f"{'-':>9} {'':>7}"
            print(
                f"  {tag}{case.label[:66]:<66} {case.measured * scale:>9.2f} {predicted * scale:>9.2f} "
                f"{error:>+6.1f}% {aic_text}  {source}"
            )
        print()
    print("Summary: |error| over unfitted rows, planner | aiconfigurator and planner on the rows both cover")
    for kind in UNITS:
        mine = [r for r in rows if r[0].kind == kind and not r[0].fitted]
        if not mine:
            print(f"  {kind:<13} no unfitted rows")
            continue
        both = [r for r in mine if r[3]]
        goal_median, goal_worst = GOALS_PCT[kind]
        errors = [abs(r[2]) for r in mine]
        met = statistics.median(errors) <= goal_median and (goal_worst is None or max(errors) <= goal_worst)
        goal = f"median <= {goal_median:.0f}%" + (f", worst <= {goal_worst:.0f}%" if goal_worst else "")
        by_load: dict[str, list[float]] = {}
        if kind == "speedup":  # the goal holds at every published load, not only over all of them
            for r in sorted(mine, key=lambda r: (len(load(r[0])), load(r[0]))):
                by_load.setdefault(load(r[0]), []).append(abs(r[2]))
            met = all(statistics.median(at) <= goal_median for at in by_load.values())
            goal += " at every published load"
        print(f"  {kind:<13} planner {_stats(errors)}   goal {goal}: {'met' if met else 'MISSED'}")
        for one, at in by_load.items():
            print(f"  {'':<13}   {one:<13} planner {_stats(at)}")
        if both:
            aic_errors = [abs(pct_error(r[3], r[0].measured)) for r in both]
            print(f"  {'':<13} on the {len(both)} rows both cover: planner {_stats([abs(r[2]) for r in both])} | "
                  f"aiconfigurator {_stats(aic_errors)}")  # fmt: skip
        for name in sorted({family(r[0]) for r in mine}):
            print(f"  {'':<13}   {name:<8} planner {_stats([abs(r[2]) for r in mine if family(r[0]) == name])}")
        if kind == "output_tok_s":  # what data/speed_profiles.json records beside every quote's speed margin
            over = max(0.0, *(r[2] for r in mine))
            print(f"  {'':<13} record (calibration.serving_output_error): median_abs_pct "
                  f"{statistics.median(errors):.1f}, most_over_pct {over:.1f}, rows {len(mine)}")  # fmt: skip
    print("Fitted rows (in-sample, not goals):")
    for kind in UNITS:
        fitted = [r for r in rows if r[0].kind == kind and r[0].fitted]
        if not fitted:
            continue
        both = [r for r in fitted if r[3]]
        line = f"  {kind:<13} planner {_stats([abs(r[2]) for r in fitted])}"
        if both:
            aic_errors = [abs(pct_error(r[3], r[0].measured)) for r in both]
            line += f" | on {len(both)} both cover: planner {_stats([abs(r[2]) for r in both])}, "
            line += f"aiconfigurator {_stats(aic_errors)}"
        print(line)
    print("Speculative rows, speedup with twice the requests simulated (goal: within 3% below saturation):")
    for case, once, *_ in sorted((r for r in rows if r[0].kind == "speedup"), key=lambda r: r[0].row):
        moved = doubled_speedup_pct(case, once)
        count, what = case.workload.num_prompts, "prompts " if case.identical_waves else "requests"
        print(f"  {case.row:<40} {count:>5} -> {2 * count:>5} {what} {moved:+5.1f}%")
    print(
        "\nSpeculative rows at a fixed batch: the row as run (above), and a closed loop at that batch simulated beside"
        " the static estimate (its batch, and its requests' lengths: their dataset's means and spread; served: each"
        " request's prompt included; decode: the decode steps alone)"
    )
    print(
        f"  {'row':<40} {'published':>9} {'as run':>7} {'closed loop':>11} {'served':>7} {'decode':>7}"
        "  static vs closed loop"
    )
    for case, once, *_ in sorted((r for r in rows if r[0].kind == "speedup"), key=lambda r: r[0].row):
        if case.workload.concurrency is None:
            continue
        batch = case.workload.concurrency
        work = case.workload.model_copy(update={"num_prompts": max(200, 4 * batch)})  # a steady window past warm-up
        loop = simulate(case.deployment, work, alpha=case.alpha, k=case.k, profile=case.profile).speedup
        est = static_estimate(case)
        print(
            f"  {case.row:<40} {case.measured:>9.2f} {once:>7.2f} {loop:>11.2f} {est.speedup:>7.2f} "
            f"{est.decode_speedup:>7.2f}  {pct_error(est.speedup, loop):+5.1f}%"
        )
    print(
        "\nSpecDecode-Bench's rows with other answer lengths: the benchmark's answers are the model's own, whose"
        " lengths it does not state; beside ShareGPT's (above), Llama-3.1-8B-Instruct's answers on the same prompts"
        f" (the first {SDB_PROMPTS} finished, data/calibration/specdecode-bench-answer-lengths.csv)"
    )
    answers = sdb_answer_lengths()
    print(
        f"  {'row':<40} {'published':>9} {'ShareGPT':>9} {'8B answers':>10}   error  "
        f"(mean prompt {statistics.mean(answers[0]):.0f}, answer {statistics.mean(answers[1]):.0f} tokens)"
    )
    for case, once, *_ in sorted((r for r in rows if r[0].identical_waves), key=lambda r: r[0].workload.concurrency):
        other, _ = identical_waves_speedup(case, case.workload, answers)
        print(
            f"  {case.row:<40} {case.measured:>9.2f} {once:>9.2f} {other:>10.2f}  "
            f"{pct_error(other, case.measured):+5.1f}%"
        )
    print(
        f"\nRows whose requests are drawn from a dataset, on {DATASET_DRAWS} draws of them (lengths and arrivals; the"
        " error above is the first draw's): the error of each draw's figure, median and range"
    )
    drawn = [r for r in rows if r[0].workload.dataset != "fixed" and r[0].kind != "speedup"]
    for case, _, error, *_ in sorted(drawn, key=lambda r: r[0].row):
        errors = sorted(pct_error(v, case.measured) for v in dataset_draws(case))
        tag = "fit " if case.fitted else "    "
        print(
            f"  {tag}{case.row:<40} {case.kind:<12} first draw {error:+6.1f}%   "
            f"median {statistics.median(errors):+6.1f}%   range {errors[0]:+6.1f}% to {errors[-1]:+6.1f}%"
        )
    ratios = node_ratios([(r[0], r[1]) for r in rows])
    print(
        f"\nNode comparisons: output tokens/s per GPU on each other GPU over the same benchmark on {REFERENCE_GPU} "
        "(unfitted rows), published and planner"
    )
    for name, gpu, published, planner in ratios:
        error = pct_error(planner, published)
        print(f"  {name:<44} {gpu:<16} published {published:5.2f}x  planner {planner:5.2f}x  {error:+6.1f}%")
    if ratios:
        errors = [abs(pct_error(planner, published)) for *_, published, planner in ratios]
        print(f"  over {len(ratios)} pairs: |error| of the ratio {_stats(errors)}")
    chosen = [r for r in rows if r[0].at_objectives is not None and r[0].kind == "ttft_s"]
    if chosen:
        print(
            "\nRows whose load was chosen under latency limits (MLPerf Server: p99 TTFT <= 2 s, p99 TPOT <= 200 ms): "
            "the load chosen, at most the most that meets them, beside the most the planner finds meeting them on "
            "as long a run, and its p99s there"
        )
    for case, *_ in chosen:
        rate, run = most_load_meeting(case)
        offered = case.workload.request_rate or 0.0
        print(
            f"  {case.row:<40} chosen {offered:6.2f} req/s   planner {rate:6.2f} req/s "
            f"{pct_error(rate, offered):+6.1f}%   p99 TTFT {run.ttft_at(99) * 1e3:5.0f} ms, "
            f"TPOT {run.tpot_at(99) * 1e3:4.0f} ms"
        )
    if chosen:
        print(
            f"  quoted as a quote sizes an option (its engine's own scheduling) at {QUOTE_LOAD_FACTOR:g} times the "
            "load chosen, under the same limits and lengths: its replicas, their load, and its speed margin"
        )
    for case, *_ in chosen:
        quoted, option, margin = quoted_at_scale(case)
        at_error = margin.replicas_at_median_error
        print(
            f"  {case.row:<40} {option.replicas:>4} replicas  {quoted.requests_per_s / option.replicas:6.2f} req/s "
            f"each   margin {margin.margin_frac:5.1%} ({margin.binding or 'none'})"
            + (f"   at the median error {at_error} replicas, {quoted.requests_per_s / at_error:6.2f} req/s each"
               if at_error else "")
        )  # fmt: skip
    cases, skipped = load_cases()
    print_roofline(cases)
    print("\nRows it cannot express:")
    for item in skipped:
        print(f"  {item.row}: {item.reason}")
    dep = Deployment.on_node(
        get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4, draft=get_model("Llama-3.2-1B")
    )
    workload = ServingWorkload.build(request_rate=8.0, dataset="sharegpt", num_prompts=2000)
    simulate_one(dep, workload, alpha=0.8, k=3)  # warm the caches (memory plan, costs, kernel tables)
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
    print(f"Step times of that deployment: {speed_source(dep)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
