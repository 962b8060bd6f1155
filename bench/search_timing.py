"""`make bench-search`: the design-space search's wall time, its frontier against simulating every point, and the
Explore page's display path at 100,000 points (prints, never asserts).

1. The default search (Llama-3.1-70B; H100, H200 and B200 nodes; TP 1-8; bf16, fp8 and fp8 with an fp8 KV cache;
   no speculation, every compatible draft, heads and n-gram; K 1-8; six batch caps; vLLM) as a fresh process
   (``python -m planner search … --json``): wall and CPU time (the CPU time is what the machine's other work does
   not change), each stage's seconds, points, points that fit, points simulated; then the same in one process
   (``--processes 1``: by default the search uses every CPU it may, ``planner.decisions.search.workers``).
   Then the same with a p99 TTFT objective of 1 s, where sizing the recommendation for the traffic matters; and that
   search in this process against simulating every one of its 9,375 points that fit: the frontiers, and how far the
   screen's TTFT (``closed_loop_ttft_s``, the rounds of the closed loop) lies from the simulator's p99 over them all.
   Then three searches whose objectives no configuration can meet (``OUT_OF_REACH``), answered from the latency
   floors without sizing any fleet, and one whose objective lies above the floors but beyond what any fleet tried
   reaches (``BEYOND_EVERY_FLEET``), answered from one run at each configuration's lightest load.
2. A medium space (Llama-3.1-70B on one node type, K 1/3/5, two precisions, three batch caps): the search's two
   frontiers against those of simulating every point that fits; its recommendation, sized for the traffic, against
   sizing every point that fits (with and without a TTFT objective), and the most a point's saturated capacity
   exceeded its closed-loop rate.
3. Display: 100,000 points (copies of the medium space's screened points, spread so none coincide) drawn by
   ``planner.reports.search_view.frontier_charts``: seconds to build both charts, markers sent to the browser
   (the cloud is thinned to ``MAX_CLOUD_POINTS``; the frontier is drawn whole).
4. The Explore page's rerun in AppTest, server side (warm: the search, its charts and tables are cached and sent
   as built), beside the Sizing page's (the app frame and sidebar every page pays).
"""

from __future__ import annotations

import copy
import gc
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from planner.decisions.search import Objectives, SearchSpace, SearchWorkload, search
from planner.decisions.search.frontier import frontier_points
from planner.decisions.search.traffic_sizing import CAPACITY_OVER_CLOSED_LOOP, size_point
from planner.reports.search_view import MAX_CLOUD_POINTS, frontier_charts

REPO = Path(__file__).resolve().parents[1]
#: The default space at the Fleet page's request, held to p99 TPOT 40 ms alone (no TTFT objective:
#: ``--slo-preset none``).
DEFAULT = (
    "search --target Llama-3.1-70B --requests-per-s 20 --prompt-tokens 1024 --output-tokens 256 --slo-preset none "
    "--tpot-slo-ms 40"
)


def _children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def default_search(extra: str = "") -> None:
    start, cpu = time.perf_counter(), _children_cpu_s()
    proc = subprocess.run(
        [sys.executable, "-m", "planner", *DEFAULT.split(), *extra.split(), "--json"],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    wall, cpu = time.perf_counter() - start, _children_cpu_s() - cpu
    if proc.returncode:
        print(f"default search failed: {proc.stderr.strip()}")
        return
    out = json.loads(proc.stdout)
    print(
        f"default search{' ' + extra if extra else ''}, cold process: {wall:.1f} s wall, {cpu:.1f} s CPU "
        f"({out['seconds']:.1f} s in the search: "
        + ", ".join(f"{stage} {s:.1f} s" for stage, s in out["stage_seconds"].items())
        + "); "
        f"{len(out['points']):,} points, {out['fitting_points']:,} fit and start, {out['simulated_points']:,} "
        f"simulated; frontier {len(out['frontier'])} points; {out['recommendation']}; {out['notes'][-1]}"
    )


#: Searches whose objectives lie below every configuration's latency floor (``planner.speed.latency_floor``): the
#: default space on 8x H100 at p99 TPOT 0.01 ms, and Llama-3.1-8B on one H100 at p99 TTFT 8 ms on ShareGPT-like
#: lengths (which its shortest prompts alone would meet, its requests' p99 alone does not), and Llama-3.1-70B at p99
#: TTFT 300 ms on 32,000-token prompts (which their first chunk alone would meet, the whole prompt alone does not).
OUT_OF_REACH = (
    "search --target Llama-3.1-70B --nodes 8x-h100-sxm-80gb --requests-per-s 20 --tpot-slo-ms 0.01",
    "search --target Llama-3.1-8B --nodes 1x-h100-sxm-80gb --requests-per-s 5 --dataset sharegpt --slo-preset none "
    "--ttft-slo-ms 8",
    "search --target Llama-3.1-70B --nodes 8x-h100-sxm-80gb --requests-per-s 1 --prompt-tokens 32000 "
    "--output-tokens 256 --slo-preset none --ttft-slo-ms 300",
)

#: A p99 TTFT 1.3 times the fastest configuration's floor: within every floor's reach, beyond every fleet tried.
BEYOND_EVERY_FLEET = (
    "search --target Llama-3.1-70B --nodes 8x-h100-sxm-80gb --requests-per-s 20 --slo-preset none --ttft-slo-ms 54",
)


def unmet_searches() -> None:
    """Each ``OUT_OF_REACH`` and ``BEYOND_EVERY_FLEET`` search as a fresh process: its wall time and its answer."""
    for title, commands in (("objectives out of reach", OUT_OF_REACH), ("beyond every fleet", BEYOND_EVERY_FLEET)):
        for command in commands:
            unmet_search(title, command)


def unmet_search(title: str, command: str) -> None:
    """One search as a fresh process: its wall time and its answer."""
    start = time.perf_counter()
    argv = [sys.executable, "-m", "planner", *command.split(), "--json"]
    proc = subprocess.run(argv, check=False, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - start
    if proc.returncode:
        print(f"{command}: failed: {proc.stderr.strip()}")
        return
    out = json.loads(proc.stdout)
    print(f"{title}, `{command}`: {wall:.1f} s as a process; {out['recommendation']}")


def medium_space(ttft_slo_s: float | None = None):
    space = SearchSpace.build(
        target="Llama-3.1-70B",
        nodes=("8x-h100-sxm-80gb",),
        ks=(1, 3, 5),
        dtypes=("bf16", "fp8"),
        batch_caps=(8, 32, 128),
    )
    workload = SearchWorkload(requests_per_s=20, prompt_tokens=1024, output_tokens=256)
    return search(space, workload, Objectives(tpot_slo_s=0.04, ttft_slo_s=ttft_slo_s))


def sizing_check(result) -> None:
    """Every point that fits sized for the traffic (simulated first where the search did not): the cheapest fleet
    against the search's recommendation, and the most a saturated replica's capacity exceeded its closed-loop rate
    (the bound the search's order relies on)."""
    ev = result.evaluator
    fitting = [p for p in result.points if p.fits and p.starts]
    start = time.perf_counter()
    for p in fitting:
        if p.stage != "simulated":
            ev.simulate(p)
    candidates = [p for p in fitting if p.stage == "simulated"]
    fleets = [(p, size_point(ev, p)) for p in candidates]
    all_s = time.perf_counter() - start
    meeting = [(p, f) for p, f in fleets if f.meets_slo]
    best = min(meeting, key=lambda pf: pf[1].usd_per_hour if pf[1].usd_per_hour is not None else pf[1].gpus)
    ratio = max(f.capacity_requests_per_s / p.replica_requests_per_s for p, f in fleets)
    objectives = result.objectives.describe()
    found = result.recommended_fleet
    print(
        f"sizing for the traffic ({objectives}): the search sized {result.sizing.sized} of {len(candidates)} points "
        f"that fit in {result.stage_seconds['size']:.1f} s; sizing all took {all_s:.1f} s; cheapest fleet equal: "
        f"{found.usd_per_hour == best[1].usd_per_hour and found.gpus == best[1].gpus} (${found.usd_per_hour:,.2f}/h "
        f"against ${best[1].usd_per_hour:,.2f}/h); {found.gpus} GPUs sized against {result.recommended.gpus} at the "
        f"batch cap; capacity over closed-loop rate at most {ratio:.2f} (bound {CAPACITY_OVER_CLOSED_LOOP})"
    )


def brute_force(result, label: str = "medium space") -> list:
    """The search's frontiers against those of simulating every point that fits (printed); the points that fit."""
    fitting = [p for p in result.points if p.fits and p.starts]
    start = time.perf_counter()
    for p in fitting:
        if p.stage != "simulated":
            result.evaluator.simulate(p)
    brute_s = time.perf_counter() - start
    feasible = [p for p in fitting if p.meets_objectives]
    same = {
        plane: {p.index for p in frontier_points(feasible, plane)} == {p.index for p in result.frontiers[plane]}
        for plane in ("throughput", "cost")
    }
    print(
        f"{label}: {len(result.points):,} points, {len(fitting):,} fit; search {result.seconds:.1f} s simulating "
        f"{result.simulated:,}; simulating all {len(fitting):,} took {brute_s:.1f} s more; frontier equal: {same}"
    )
    return fitting


def ttft_screen(ttft_slo_s: float = 1.0) -> None:
    """The default space with a TTFT objective searched in this process, against simulating every point that fits,
    and the simulated p99 TTFT over the screen's (``closed_loop_ttft_s``) at every one of those points."""
    space = SearchSpace.build(target="Llama-3.1-70B")
    workload = SearchWorkload(requests_per_s=20, prompt_tokens=1024, output_tokens=256)
    result = search(space, workload, Objectives(tpot_slo_s=0.04, ttft_slo_s=ttft_slo_s), workers=1)
    fitting = brute_force(result, f"default space with p99 TTFT ≤ {ttft_slo_s * 1e3:,.0f} ms, one process")
    ratios = []
    for p in fitting:
        screened = copy.copy(p)
        result.evaluator.screen(screened)
        ratios.append(p.ttft_s / screened.ttft_s)
    ratios.sort()
    at = [ratios[round(q * (len(ratios) - 1))] for q in (0.05, 0.5, 0.95)]
    print(
        f"  its screen's TTFT against the simulator's p99 over those {len(ratios):,} points: median {at[1]:.2f}x, "
        f"5-95% {at[0]:.2f}x-{at[2]:.2f}x, all {ratios[0]:.2f}x-{ratios[-1]:.2f}x"
    )


def display(result) -> None:
    base = [p for p in result.points if p.has_figures]
    big = copy.copy(result)
    points = []
    for i in range(100_000):
        p = copy.copy(base[i % len(base)])
        p.frontiers = list(p.frontiers) if i < len(base) else []
        spread = 1 - (i // len(base)) * 1e-6
        p.index = i
        p.output_tok_s_per_gpu = (p.output_tok_s_per_gpu or 0) * spread
        points.append(p)
    big.points = points
    start = time.perf_counter()
    throughput, cost = frontier_charts(big)
    build_s = time.perf_counter() - start
    drawn = sum(len(t.x) for t in throughput.data)
    size = len(throughput.to_json()) + len(cost.to_json())
    print(
        f"display of 100,000 points: both charts built in {build_s:.2f} s; {drawn:,} markers drawn per chart "
        f"(cloud thinned to about {MAX_CLOUD_POINTS:,}, frontier whole, WebGL); {size / 1e6:.1f} MB of chart JSON"
    )


def _reruns(page: str) -> tuple[float, list[float]]:
    """(first render, sorted warm reruns) of ``page`` in one AppTest session, seconds."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600).run()
    at.switch_page(f"ui/{page}.py")
    start = time.perf_counter()
    at.run()
    first = time.perf_counter() - start
    samples = []
    for _ in range(15):
        start = time.perf_counter()
        at.run()
        samples.append(time.perf_counter() - start)
    return first, sorted(samples)


def page_rerun() -> None:
    """The Explore page's warm rerun, beside the Sizing page's (the app frame and sidebar every page pays)."""
    first, explore = _reruns("explore")
    _, sizing = _reruns("sizing")
    median = explore[len(explore) // 2]
    frame = sizing[len(sizing) // 2]
    print(
        f"Explore page (AppTest, server side): first render {first:.1f} s (the search); warm rerun median "
        f"{median * 1e3:.0f} ms (fastest {explore[0] * 1e3:.0f} ms, slowest {explore[-1] * 1e3:.0f} ms); Sizing's "
        f"rerun {frame * 1e3:.0f} ms (fastest {sizing[0] * 1e3:.0f} ms), so the page's own share is about "
        f"{max(0.0, median - frame) * 1e3:.0f} ms (fastest against fastest: "
        f"{max(0.0, explore[0] - sizing[0]) * 1e3:.0f} ms; the fastest runs are the least disturbed by other work)"
    )


def main() -> None:
    default_search()
    default_search("--processes 1")
    default_search("--ttft-slo-ms 1000")
    unmet_searches()
    ttft_screen()
    # the heap the all-points simulation left is not the medium search's cost: collect it now, or a full collection
    # of it (1.5 s) can land inside the medium search's timing, depending only on where the allocation count stands
    gc.collect()
    result = medium_space()
    display(result)
    brute_force(result)
    sizing_check(result)
    sizing_check(medium_space(ttft_slo_s=1.0))
    page_rerun()


if __name__ == "__main__":
    main()
