"""The design-space search: the screened-then-simulated frontier equals simulating every point, its figures
equal ``simulate`` of the configuration, every frontier point fits, starts and meets the objectives."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

import planner.decisions.search.evaluate as evaluate
import planner.decisions.search.traffic_sizing as traffic_sizing
from planner.decisions.fleet import ReplicaSearch, quoted_workload
from planner.decisions.fleet_models import Traffic
from planner.decisions.fleet_quotes import fleet_quote
from planner.decisions.search import NO_OBJECTIVES, Objectives, SearchSpace, SearchWorkload, pareto, search
from planner.decisions.search.frontier import Dominance, cheapest, frontier_points
from planner.decisions.search.traffic_sizing import CAPACITY_OVER_CLOSED_LOOP, beyond_reach, size_point, traffic_of
from planner.errors import InputError, PlannerError
from planner.facts import clear_caches
from planner.input_types import INPUT_BOUNDS
from planner.scenario import Scenario
from planner.speed import simulate
from planner.speed.latency_floor import FLOOR_SLACK, latency_floor_s
from planner.speed.simulate import simulate_one
from planner.speed.step_cache import offline_capacity_cached

SMALL = {
    "target": "Llama-3.1-8B",
    "nodes": ("1x-h100-sxm-80gb", "1x-a100-sxm-80gb"),
    "methods": ("none", "draft_model", "ngram"),
    "ks": (1, 3),
    "dtypes": ("bf16",),
    "batch_caps": (8, 64),
}
WORKLOAD = SearchWorkload(requests_per_s=4.0, prompt_tokens=512, output_tokens=128)
OBJECTIVES = Objectives(tpot_slo_s=0.03, ttft_slo_s=2.0)


@pytest.fixture(scope="module")
def result():
    return search(SearchSpace.build(**SMALL), WORKLOAD, OBJECTIVES)


# Where the KV cache limits the batch (an 8B target on a 24 GB L4 with 2,048-token prompts: bf16 holds about 12
# requests, fp8 about 40, below the caps of 64): the screen errs most there, so the search must still find the
# frontier that simulating every point gives.
KV_LIMITED = {
    "target": "Llama-3.1-8B",
    "nodes": ("1x-l4-24gb",),
    "methods": ("none", "eagle3", "ngram"),
    "ks": (2, 4),
    "dtypes": ("bf16", "fp8"),
    "batch_caps": (16, 64),
}
KV_LIMITED_WORKLOAD = SearchWorkload(requests_per_s=2.0, prompt_tokens=2048, output_tokens=256)


def test_the_screened_frontier_is_the_frontier_of_simulating_every_point(result):
    _assert_frontier_of_simulating_every_point(result)


def test_the_frontier_is_exact_where_the_kv_cache_limits_the_batch():
    found = search(SearchSpace.build(**KV_LIMITED), KV_LIMITED_WORKLOAD, Objectives(tpot_slo_s=0.08))
    screened = [p for p in found.points if p.fits and p.starts]
    assert any(p.stage == "simulated" for p in screened)
    assert any(p.stage == "screened" and p.batch_size < p.concurrency_per_replica for p in screened)
    _assert_frontier_of_simulating_every_point(found)


# Where a TTFT objective binds: a closed loop's clients send their prompts in rounds, so TTFT grows with the batch
# cap; the screen estimates it (``closed_loop_ttft_s``) and leaves unsimulated the points it rules out, and the
# frontier must still be the one simulating every point gives.
TTFT_BINDS = {
    "target": "Llama-3.1-8B",
    "nodes": ("1x-h100-sxm-80gb", "1x-l40s-48gb"),
    "methods": ("none", "draft_model", "ngram"),
    "ks": (2, 4),
    "dtypes": ("bf16", "fp8"),
    "batch_caps": (8, 64, 256),
}
TTFT_BINDS_WORKLOAD = SearchWorkload(requests_per_s=8.0, prompt_tokens=2048, output_tokens=256)


@pytest.mark.parametrize(
    "objectives",
    [Objectives(tpot_slo_s=0.05, ttft_slo_s=0.5), Objectives(tpot_slo_s=0.05, ttft_slo_s=1.0, percentile=90)],
)
def test_the_frontier_is_exact_where_a_ttft_objective_rules_points_out(objectives):
    found = search(SearchSpace.build(**TTFT_BINDS), TTFT_BINDS_WORKLOAD, objectives)
    ruled_out = [p for p in found.points if p.stage == "screened" and "TTFT" in (p.reason or "")]
    assert ruled_out  # the screen's TTFT left some points unsimulated
    _assert_frontier_of_simulating_every_point(found)


def test_the_screens_ttft_follows_the_closed_loops_rounds():
    """The screen's p99 TTFT lies within 0.6x-1.7x of the simulator's for fixed lengths (the search learns the rest
    per family), where one prompt's own prefill alone would be a small fraction of it at a large batch cap."""
    found = search(SearchSpace.build(**TTFT_BINDS), TTFT_BINDS_WORKLOAD, Objectives(tpot_slo_s=0.05, ttft_slo_s=0.5))
    ev = found.evaluator
    ratios = {}
    for point in found.points:
        screened = copy.copy(point)
        ev.screen(screened)
        ev.simulate(point)
        ratios[point.index] = (point.ttft_s / screened.ttft_s, point.concurrency_per_replica)
    assert all(0.6 < ratio < 1.7 for ratio, _ in ratios.values()), ratios
    assert any(cap >= 64 for _, cap in ratios.values())


# Where the token budget limits the batch: long prompts and short outputs (2,048 + 128 tokens) leave a replica fewer
# requests decoding than its cap of 256, since each must first be prefilled through the budget its decoding
# requests share; a screen that assumed the cap missed frontier points there. (On an H200 vLLM's budget is 8,192
# tokens; from 0.28 GPUs of 160 GiB or more, such as the B200, get 16,384, which this workload does not fill.)
BUDGET_LIMITED = {
    "target": "Llama-3.1-8B",
    "nodes": ("8x-h200-sxm-141gb",),
    "methods": ("none", "eagle3"),
    "ks": (1, 3, 4, 6),
    "dtypes": ("fp8",),
    "batch_caps": (32, 128, 256),
}
BUDGET_LIMITED_WORKLOAD = SearchWorkload(requests_per_s=50, prompt_tokens=2048, output_tokens=128)


def test_the_frontier_is_exact_where_the_token_budget_limits_the_batch():
    found = search(SearchSpace.build(**BUDGET_LIMITED), BUDGET_LIMITED_WORKLOAD, Objectives(tpot_slo_s=0.03))
    ev = found.evaluator
    fed = []
    for point in found.points:
        if point.fits and point.starts and point.max_num_seqs == 256 and point.k in (4, 6):
            screened = copy.copy(point)
            ev.screen(screened)
            ev.simulate(point)
            fed.append((screened.batch_size, point.batch_size))
    assert fed and all(screen < 256 and 0.8 < sim / screen < 1.2 for screen, sim in fed), fed
    _assert_frontier_of_simulating_every_point(found)


def _assert_frontier_of_simulating_every_point(result) -> None:
    ev = result.evaluator
    fitting = [p for p in result.points if p.fits and p.starts]
    assert 0 < result.simulated < len(fitting) or result.simulated == len(fitting)
    for p in fitting:
        if p.stage != "simulated":
            ev.simulate(p)
    feasible = [p for p in fitting if p.meets_objectives]
    for plane in ("throughput", "cost"):
        brute = {p.index for p in frontier_points(feasible, plane)}
        assert {p.index for p in result.frontiers[plane]} == brute, plane
    if result.recommended_fleet is None:  # at a concurrency: the cheapest at its batch cap
        assert result.recommended.index == cheapest(feasible).index


def test_frontier_figures_equal_simulate_of_that_configuration(result):
    pct = OBJECTIVES.percentile
    for point in result.frontier:
        dep, workload, alpha, k = result.evaluator.replica_run(point)
        sim = simulate(dep, workload, alpha=alpha, k=k)
        run = sim.chosen
        assert point.output_tok_s_per_gpu == pytest.approx(run.output_tokens_per_s / dep.gpus_per_replica, rel=0.01)
        assert point.output_tok_s_per_user == pytest.approx(1 / run.tpot_s.mean, rel=0.01)
        assert point.tpot_s == pytest.approx(run.tpot_at(pct), rel=0.01)
        assert point.ttft_s == pytest.approx(run.ttft_at(pct), rel=0.01)
        assert dep.max_num_seqs == point.max_num_seqs and dep.tp == point.tp and (k == point.k)


def test_every_frontier_point_fits_starts_and_meets_the_objectives_in_its_simulation(result):
    assert result.frontier and result.recommended is not None
    for point in result.frontier:
        assert point.fits and point.starts and point.stage == "simulated"
        dep, workload, alpha, k = result.evaluator.replica_run(point)
        run = simulate(dep, workload, alpha=alpha, k=k).chosen
        assert not OBJECTIVES.misses(run.ttft_at(99), run.tpot_at(99))


def test_points_that_do_not_fit_are_kept_with_the_reason():
    # Llama-3.1-70B in bf16 holds about 141 GB of weights: more than one 24 GB L4 (config.json; 70.6e9 x 2 bytes).
    space = SearchSpace.build(
        target="Llama-3.1-70B", nodes=("1x-l4-24gb",), methods=("none",), dtypes=("bf16",), batch_caps=(8, 16)
    )
    found = search(space, WORKLOAD, NO_OBJECTIVES)
    assert len(found.points) == 2 and not any(p.fits for p in found.points)
    assert all(p.reason and "does not fit" in p.reason and p.stage == "memory" for p in found.points)
    assert found.recommended is None and found.frontier == []
    assert "No configuration" in found.headline


def test_cost_steps_name_the_price_of_lower_tpot(result):
    for step in result.steps:
        assert step.tpot_to_s < step.tpot_from_s and step.gpus_ratio > 0
        assert "TPOT" in step.sentence and "× the GPUs" in step.sentence


def test_no_frontier_figure_exceeds_the_hardware(result):
    # Physics: delivered work per GPU never beats the GPU's peak FLOP/s or bandwidth.
    for p in result.frontier:
        run = result.evaluator.simulations[p.index]
        assert run.delivered_flops_per_s <= run.peak_flops_per_s * (1 + 1e-9)
        assert run.delivered_bytes_per_s <= run.peak_bytes_per_s * (1 + 1e-9)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"methods": ("medusa",)}, "methods"),
        ({"dtypes": ("bf17",)}, "dtypes"),
        ({"dtypes": ("bf16:int3",)}, "dtypes"),
        ({"ks": (0,)}, "k"),
        ({"batch_caps": (0,)}, "batch_caps"),
        ({"engines": ("tgi",)}, "engines"),
    ],
)
def test_bad_axes_name_the_field(fields, field):
    with pytest.raises(PlannerError) as err:
        SearchSpace.build(target="Llama-3.1-8B", **fields)
    assert err.value.field == field


def test_a_workload_needs_one_arrival_and_takes_every_views_default_request():
    with pytest.raises((InputError, ValueError)):
        SearchWorkload(prompt_tokens=10, output_tokens=10)
    assert SearchWorkload(concurrency=8, dataset="sharegpt").max_model_len == 2048
    # without lengths, a fleet's default request and objectives, as a quote's traffic and every page take them
    default, traffic = SearchWorkload(requests_per_s=1.0), Traffic(requests_per_s=1.0)
    assert (default.prompt_tokens, default.output_tokens) == (traffic.prompt_tokens, traffic.output_tokens)
    assert (Objectives().ttft_slo_s, Objectives().tpot_slo_s) == (traffic.ttft_slo_s, traffic.tpot_slo_s)
    page = Scenario().traffic()
    assert (traffic.prompt_tokens, traffic.output_tokens) == (page.prompt_tokens, page.output_tokens)
    assert Objectives().describe() == page.objectives()
    assert SearchWorkload(requests_per_s=1.0, dataset="sharegpt").prompt_tokens is None  # the dataset's lengths


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=30))
def test_pareto_keeps_exactly_the_non_dominated(values):
    kept = set(pareto(values, higher_x=True, higher_y=True))
    for i, (x, y) in enumerate(values):
        dominated = any((a >= x and b >= y and (a, b) != (x, y)) for j, (a, b) in enumerate(values) if j != i)
        duplicate_before = any((a, b) == (x, y) for a, b in values[:i])
        assert (i in kept) == (not dominated and not duplicate_before)


def test_pipeline_layouts_are_tried_only_where_no_tensor_parallel_layout_holds_the_target():
    # Llama-3.1-70B in bf16 (about 141 GB) on four 24 GB L4s: no TP layout holds it, so PP 2 layouts are tried too
    # (and kept, with the plan's reason, when they do not fit either).
    small = {"methods": ("none",), "dtypes": ("bf16",), "batch_caps": (8,)}
    found = search(SearchSpace.build(target="Llama-3.1-70B", nodes=("4x-l4-24gb",), **small), WORKLOAD, NO_OBJECTIVES)
    assert {p.pp for p in found.points} == {1, 2}
    assert all(p.reason for p in found.points if not p.fits)
    roomy = search(
        SearchSpace.build(target="Llama-3.1-8B", nodes=("1x-h100-sxm-80gb",), **small), WORKLOAD, NO_OBJECTIVES
    )
    assert {p.pp for p in roomy.points} == {1}


@given(
    st.lists(st.tuples(st.integers(-6, 6), st.integers(-6, 6)), max_size=12),
    st.lists(st.tuples(st.integers(-6, 6), st.integers(-6, 6)), min_size=1, max_size=30),
)
def test_dominance_of_many_points_at_once_equals_one_at_a_time(frontier, queries):
    # The search weighs every unsimulated point at once; each answer must be the one-point answer.
    dom = Dominance([(x / 2, y / 2) for x, y in frontier])
    xs = np.array([x / 2 for x, _ in queries], dtype=float)
    ys = np.array([y / 2 for _, y in queries], dtype=float)
    assert list(dom.dominated_many(xs, ys)) == [dom.dominated(x, y) for x, y in zip(xs, ys, strict=True)]


def test_the_search_takes_the_same_rate_and_length_bounds_as_the_fleet_page_and_its_link():
    rate_low, rate_high = INPUT_BOUNDS["fleet_requests_per_s"]
    _, tokens_high = INPUT_BOUNDS["fleet_prompt_tokens"]
    for rate in (rate_low, rate_high):
        SearchWorkload(requests_per_s=rate, prompt_tokens=tokens_high, output_tokens=tokens_high)
    for rate, tokens in ((rate_low / 2, 1), (rate_high * 2, 1), (1.0, tokens_high + 1)):
        with pytest.raises(ValidationError):
            SearchWorkload(requests_per_s=rate, prompt_tokens=tokens, output_tokens=1)


def test_the_search_counts_the_size_of_no_draft_the_engine_would_reject(monkeypatch):
    """Sizes are counted only for drafts that pass the cheaper checks (another tokenizer is rejected first): the
    first search on a machine must not build every unrelated family on the meta device."""
    from planner.catalog.lookup import get_model, list_models  # noqa: PLC0415
    from planner.decisions import candidates  # noqa: PLC0415
    from planner.decisions.search.speculators import speculators  # noqa: PLC0415
    from planner.pairs.compatibility import check_pair, rejects  # noqa: PLC0415

    target = get_model("Llama-3.1-70B")
    counted = []
    real = candidates.param_count

    def counting(spec):
        counted.append(spec)
        return real(spec)

    monkeypatch.setattr(candidates, "param_count", counting)
    found = speculators(target, "vllm", ("draft_model",))
    assert counted and all(not rejects(target, spec) for spec in counted if spec.id != target.id)
    smaller = [m for m in list_models() if m.id != target.id and m.speculator is None]
    expected = [
        m.id
        for m in smaller
        if real(m).total_params < real(target).total_params and check_pair(target, m).verdict != "incompatible"
    ]
    assert [s.draft_id for s in found] == expected


@pytest.mark.parametrize("methods", [("draft_model",), ("eagle3",), ("none", "draft_model", "eagle3", "ngram")])
def test_the_search_tries_each_asked_speculator_once(methods):
    from planner.catalog.lookup import get_model  # noqa: PLC0415
    from planner.decisions.search.speculators import speculators  # noqa: PLC0415

    found = speculators(get_model("Llama-3.1-8B"), "vllm", methods)  # a target with EAGLE-3 heads in the catalog
    assert {s.method for s in found} == set(methods)
    labels = [s.label for s in found]
    assert len(labels) == len(set(labels))


# At a request rate with a tight TTFT objective, replicas loaded to their batch cap queue requests that arrive at
# random: sized for the traffic, the fleet grows, and another configuration can become the cheapest. About 20
# candidates meet the objectives at their batch cap in this space.
SIZING = {**SMALL, "nodes": (*SMALL["nodes"], "1x-l40s-48gb"), "ks": (1, 2, 3, 4), "dtypes": ("bf16", "fp8"),
          "batch_caps": (4, 8, 16, 64)}  # fmt: skip
TIGHT_TTFT = [(20.0, 0.3), (40.0, 0.2), (10.0, 0.25)]


@pytest.mark.parametrize(("rate", "ttft_s"), TIGHT_TTFT)
def test_the_recommendation_is_the_cheapest_of_sizing_every_point_that_fits_for_the_traffic(rate, ttft_s):
    """Sizing every point that fits (simulating those the search did not) finds no cheaper fleet than the search's
    recommendation, including points that miss the objectives at their batch cap but meet them at their share of
    the rate (in this space the cheapest fleets are such points: L40S replicas at 64 seqs)."""
    workload = SearchWorkload(requests_per_s=rate, prompt_tokens=512, output_tokens=128)
    found = search(SearchSpace.build(**SIZING), workload, Objectives(tpot_slo_s=0.03, ttft_slo_s=ttft_s))
    ev = found.evaluator
    fitting = [p for p in found.points if p.fits and p.starts]
    for p in fitting:
        if p.stage != "simulated":
            ev.simulate(p)
    fleets = [(p, size_point(ev, p)) for p in fitting if p.stage == "simulated"]
    meeting = [(p, f) for p, f in fleets if f.meets_slo]
    least = min(f.usd_per_hour for _, f in meeting)
    assert found.recommended_fleet.usd_per_hour == pytest.approx(least)
    assert found.recommended_fleet == size_point(ev, found.recommended)
    assert found.sizing.sized < len(fleets) / 4  # the bounds spared most of the sizing
    # the cheapest misses an objective at its batch cap: only sizing it for the traffic finds it
    assert not found.recommended.meets_objectives
    # every point's saturated capacity stays within the bound the order relies on
    assert all(f.capacity_requests_per_s <= CAPACITY_OVER_CLOSED_LOOP * p.replica_requests_per_s for p, f in fleets)


@pytest.mark.parametrize("workload", [WORKLOAD, SearchWorkload(requests_per_s=4.0, dataset="sharegpt")])
def test_no_simulated_run_beats_its_configurations_latency_floor(workload):
    """The floor the sizing leaves configurations out by is a lower bound of what the simulator serves, to within its
    slack (a step priced from measured kernel tables may dip slightly between measured shapes as the context grows):
    at every percentile, from the fastest request to the slowest, a run's TTFT and TPOT are at least the floor of
    its own requests at that percentile, alone at a low rate and in the closed loop at the batch cap, plain and
    speculative."""
    space = SearchSpace.build(**{**SMALL, "nodes": ("1x-h100-sxm-80gb",)})
    found = search(space, workload, NO_OBJECTIVES)
    ev, checked, worst = found.evaluator, 0, 1.0
    for point in found.points:
        if not (point.fits and point.starts):
            continue
        dep, closed_loop, alpha, k = ev.replica_run(point)
        quiet = workload.replica_workload(point.max_num_seqs, 60).model_copy(
            update={"concurrency": None, "request_rate": 0.2}
        )
        runs = ((quiet, simulate_one(dep, quiet, alpha=alpha, k=k)), (closed_loop, ev.simulations.get(point.index)))
        for served, run in runs:
            if run is None:
                continue
            prompts, outputs = served.lengths()
            engine = ev.engine_of(point)
            shape = None if k is None else engine.shape(k)
            budget = run.limits.max_num_batched_tokens
            for pct in (0.0, 50.0, 90.0, 99.0, 100.0):
                floor = latency_floor_s(engine, shape, point.alpha, prompts, outputs, budget, pct)
                assert run.ttft_at(pct) >= floor.ttft_s * FLOOR_SLACK, (point.label, pct)
                assert run.tpot_at(pct) >= floor.tpot_s * FLOOR_SLACK, (point.label, pct)
                worst = min(worst, run.ttft_at(pct) / floor.ttft_s, run.tpot_at(pct) / floor.tpot_s)
            assert floor.alike == (workload.dataset == "fixed")
            checked += 1
    assert checked >= 8 and worst > 0.99  # the slack is wide of what the tables do


def test_a_drawn_workloads_floor_is_its_percentile_not_its_shortest_prompt():
    """ShareGPT-like prompts run from a few tokens to 1,024: a p99 TTFT below what its long prompts take alone is out
    of reach though its shortest prompt would meet it, and the search sizes nothing to say so."""
    workload = SearchWorkload(requests_per_s=5.0, dataset="sharegpt")
    space = SearchSpace.build(**{**SMALL, "nodes": ("1x-h100-sxm-80gb",)})
    found = search(space, workload, Objectives(ttft_slo_s=0.008))
    ev = found.evaluator
    point = next(p for p in found.points if p.fits and p.starts)
    prompts, outputs = quoted_workload(traffic_of(ev, point), "sharegpt", offline=True).lengths()
    floor = ev.latency_floor_s(point, prompts, outputs)
    shortest = ev.latency_floor_s(point, [min(prompts)], [2])
    assert shortest.ttft_s < 0.008 < FLOOR_SLACK * floor.ttft_s and not floor.alike
    assert found.sizing is not None and found.sizing.sized == 0 and found.recommended_fleet is None
    assert "its requests, each served alone, wait " in found.headline
    assert found.headline.endswith("for their first token at p99 (against p99 TTFT ≤ 8 ms)")
    # one floor for the search and the quote: each configuration's reason is the one its quote gives
    for p in [p for p in found.points if p.fits and p.starts]:
        quoted = ReplicaSearch.for_option(ev.deployment(p), traffic_of(ev, p), p.k, dataset="sharegpt")
        assert beyond_reach(ev, p)[1] == quoted.out_of_reach(), p.label


def test_an_objective_below_every_configurations_floor_sizes_nothing():
    workload = SearchWorkload(requests_per_s=20.0, prompt_tokens=512, output_tokens=128)
    found = search(SearchSpace.build(**SIZING), workload, Objectives(tpot_slo_s=1e-5, ttft_slo_s=2.0))
    assert found.sizing is not None and found.sizing.sized == 0 and found.recommended_fleet is None
    assert found.headline.startswith(
        "No configuration meets every objective (p99 TTFT ≤ 2,000 ms and p99 TPOT ≤ 0.01 ms); no fleet of any meets "
        "them, the nearest being "
    )
    assert found.sizing.out_of_reach == sum(1 for p in found.points if p.fits and p.starts)
    point, why = found.sizing.nearest_out_of_reach
    assert why.startswith("one request alone takes") and why.endswith("(against p99 TPOT ≤ 0.01 ms)")
    assert found.headline.endswith(f"{point.label}: {why}")


@pytest.mark.parametrize(
    ("workload", "ttft_s"),
    [
        (SearchWorkload(requests_per_s=20.0, prompt_tokens=512, output_tokens=128), 0.04),
        (SearchWorkload(requests_per_s=4.0, prompt_tokens=512, output_tokens=128), 0.04),
        (SearchWorkload(requests_per_s=4.0, dataset="sharegpt"), 0.07),
    ],
)
def test_a_candidate_that_misses_at_its_lightest_load_is_ruled_out_as_its_sizing_would_rule_it_out(
    workload, ttft_s, monkeypatch
):
    """A p99 TTFT objective between the configurations' floors and what they reach at a light load: some of them miss
    it at every fleet size. Once one candidate has missed, the search rules the next out from one run at its lightest
    load (its capacity runs and a run stopped at a certain miss) instead of doubling its fleet run by run. For every
    configuration that check says what sizing it in full says (so TTFT eases as replicas are added, on drawn lengths
    too), and the recommendation is the cheapest of sizing every point."""
    checked = []
    lightest = traffic_sizing.misses_everywhere
    monkeypatch.setattr(
        traffic_sizing, "misses_everywhere", lambda ev, p: checked.append(lightest(ev, p)) or checked[-1]
    )
    found = search(SearchSpace.build(**SMALL), workload, Objectives(ttft_slo_s=ttft_s, tpot_slo_s=None))
    assert any(checked)  # the check ruled candidates out
    ev = found.evaluator
    fleets = []
    for p in found.points:
        if p.fits and p.starts and beyond_reach(ev, p) is None:
            if p.stage != "simulated":
                ev.simulate(p)
            fleet = size_point(ev, p)
            assert lightest(ev, p) == (not fleet.meets_slo), p.label
            fleets.append(fleet)
    assert sum(not f.meets_slo for f in fleets) >= len(fleets) / 5
    least = min(f.usd_per_hour for f in fleets if f.meets_slo)
    assert found.recommended_fleet.usd_per_hour == pytest.approx(least)


def test_the_capacitys_first_run_alone_gives_a_load_no_heavier_than_the_lightest_the_sizing_tries(result):
    """A miss at ``at_least_most`` replicas rules an option out without the capacity's other two runs: its count is
    never below the sizing's own lightest load, as the first run's rate is never above the capacity."""
    ev = result.evaluator
    checked = 0
    for p in [p for p in result.points if p.fits and p.starts][:12]:
        search = ReplicaSearch.for_option(ev.deployment(p), traffic_of(ev, p), p.k)
        first = offline_capacity_cached(search.dep, search.workload(offline=True), alpha=search.alpha, k=search.k)
        assert first.steady_requests_per_s <= search.capacity().steady_requests_per_s
        assert search.at_least_most() >= search.most()
        checked += 1
    assert checked == 12


def test_where_no_fleet_tried_meets_the_objectives_the_search_says_what_the_first_one_sized_reached():
    workload = SearchWorkload(requests_per_s=20.0, prompt_tokens=512, output_tokens=128)
    space = SearchSpace.build(**{**SMALL, "nodes": ("1x-a100-sxm-80gb",), "methods": ("none",)})
    found = search(space, workload, Objectives(ttft_slo_s=0.04, tpot_slo_s=None))
    assert found.recommended is None and found.sizing.first_miss is not None
    point, fleet = found.sizing.first_miss
    assert not fleet.meets_slo and fleet.limited_by.startswith("cannot meet p99 TTFT ≤ 40 ms")
    assert found.headline == (
        "No configuration meets every objective (p99 TTFT ≤ 40 ms); sized for 20 req/s, none meets them with up to "
        f"64 times the replicas that carry the rate at capacity; the first sized, {point.label}, {fleet.limited_by}"
    )


def test_sizing_for_the_traffic_can_change_the_answer_and_says_so():
    workload = SearchWorkload(requests_per_s=40.0, prompt_tokens=512, output_tokens=128)
    space = SearchSpace.build(**{**SMALL, "batch_caps": (8, 16)})
    found = search(space, workload, Objectives(tpot_slo_s=0.03, ttft_slo_s=0.3))
    fleet = found.recommended_fleet
    # at its batch cap the configuration carries 40 req/s on fewer GPUs than it needs within a 300 ms p99 TTFT
    assert found.recommended.meets_objectives and fleet.meets_slo and fleet.gpus > found.recommended.gpus
    assert f"{fleet.gpus:,} GPUs" in found.headline and "at 40 req/s" in found.headline
    assert "with requests arriving at random" in found.sizing.note and found.sizing.note in found.notes
    assert found.as_json(all_points=False)["recommended"]["sized_for_traffic"]["gpus"] == fleet.gpus


def test_a_configuration_too_slow_at_its_batch_cap_can_be_the_cheapest_at_its_share_of_the_rate():
    workload = SearchWorkload(requests_per_s=40.0, prompt_tokens=512, output_tokens=128)
    found = search(SearchSpace.build(**SMALL), workload, Objectives(tpot_slo_s=0.03, ttft_slo_s=0.2))
    point, fleet = found.recommended, found.recommended_fleet
    assert not point.meets_objectives and fleet.meets_slo and not fleet.misses
    assert f"would miss {point.misses[0]}" in found.sizing.note
    assert "each replica runs fewer at once" in found.sizing.note and found.sizing.note in found.notes


def test_the_search_and_a_fleet_quote_size_the_same_configuration_alike():
    """One configuration, one fleet: the quote of Fleet & Quote and ``python -m planner quote`` for the recommended
    configuration needs exactly the replicas the search's recommendation names."""
    space = SearchSpace.build(**{**SMALL, "methods": ("none",)})
    workload = SearchWorkload(requests_per_s=40.0, prompt_tokens=512, output_tokens=128)
    objectives = Objectives(tpot_slo_s=0.03, ttft_slo_s=0.2)
    found = search(space, workload, objectives)
    point = found.recommended
    quote = fleet_quote(found.evaluator.deployment(point), traffic_of(found.evaluator, point))
    plain = quote.without_speculation
    assert (plain.replicas, plain.gpus, plain.meets_slo) == (
        found.recommended_fleet.replicas,
        found.recommended_fleet.gpus,
        True,
    )
    assert plain.ttft_s == pytest.approx(found.recommended_fleet.ttft_s)


def test_a_concurrency_is_not_resized():
    workload = SearchWorkload(concurrency=64, prompt_tokens=512, output_tokens=128)
    found = search(SearchSpace.build(**SMALL), workload, Objectives(tpot_slo_s=0.03))
    assert found.sizing is None and found.recommended_fleet is None
    assert "sized_for_traffic" not in found.as_json(all_points=False)["recommended"]


def test_a_dataset_at_a_rate_is_sized_with_the_datasets_lengths():
    space = SearchSpace.build(**{**SMALL, "methods": ("none",), "nodes": ("1x-h100-sxm-80gb",)})
    workload = SearchWorkload(requests_per_s=8.0, dataset="sharegpt")
    found = search(space, workload, Objectives(tpot_slo_s=0.03, ttft_slo_s=0.5))
    fleet = found.recommended_fleet
    assert fleet is not None and fleet.meets_slo
    assert fleet == size_point(found.evaluator, found.recommended)
    # the quote's traffic carries the dataset's mean lengths (which price the tokens)
    traffic = traffic_of(found.evaluator, found.recommended)
    assert traffic.prompt_tokens == round(workload.mean_prompt_tokens)


def test_asking_again_with_other_objectives_reuses_every_evaluation_and_answers_as_a_fresh_search(monkeypatch):
    space, tighter = SearchSpace.build(**SMALL), Objectives(tpot_slo_s=0.015, ttft_slo_s=1.0)
    clear_caches()
    fresh = search(space, WORKLOAD, tighter)
    clear_caches()
    search(space, WORKLOAD, OBJECTIVES)
    runs = []
    real = evaluate.simulate_one
    monkeypatch.setattr(evaluate, "simulate_one", lambda *a, **kw: runs.append(a) or real(*a, **kw))
    again = search(space, WORKLOAD, tighter)
    assert [p.as_dict() for p in again.points] == [p.as_dict() for p in fresh.points]
    assert again.recommended.index == fresh.recommended.index
    simulated_before = {p.index for p in search(space, WORKLOAD, OBJECTIVES).points if p.stage == "simulated"}
    assert len(runs) <= sum(p.stage == "simulated" and p.index not in simulated_before for p in again.points)
    runs.clear()
    search(space, WORKLOAD, tighter)
    assert runs == []  # the same question again simulates nothing


def test_the_search_says_what_it_is_doing_as_it_goes():
    """Explore's progress bar follows the search's stages in words: planning, screening, each simulation, sizing."""
    clear_caches()
    said: list[str] = []
    result = search(SearchSpace.build(**SMALL), WORKLOAD, OBJECTIVES, progress=said.append)
    kinds = [text.split(" ", 1)[0] for text in said]
    assert kinds[:2] == ["Planning", "Screening"] and kinds[-1] == "Sizing"
    assert set(kinds[2:-1]) == {"Simulating"} and 1 <= len(kinds) - 3 <= result.simulated
    assert said[0] == f"Planning the memory of {len(result.points):,} configurations..."
    assert said[1] == f"Screening the {result.fitting_points:,} configurations that fit with the step model..."
    counted = [int(text.rsplit(": ", 1)[1].split()[0].replace(",", "")) for text in said[2:-1]]
    assert counted == list(range(1, len(counted) + 1))
    assert said[-1] == f"Sizing the cheapest fleet for {WORKLOAD.requests_per_s:g} req/s..."
