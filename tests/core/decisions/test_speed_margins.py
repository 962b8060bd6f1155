"""How much slower than estimated a quoted fleet may be (planner/decisions/speed_margins.py)."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import facts
from planner.catalog.lookup import get_model, get_node
from planner.decisions import Traffic, options_speed_margins, plan_fleet, speed_margin
from planner.decisions.fleet import ReplicaSearch, size_option
from planner.decisions.speed_margins import SPEED_MARGIN_LIMIT, SpeedMargin, slowed_traffic
from planner.deployment import Deployment
from planner.errors import CatalogError, InputError
from planner.launch import quoted_deployment
from planner.reports import quote_report
from planner.reports.quote import margins_section
from planner.speed.profiles import calibration_summary, measured_throughput_error, speed_profile
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import simulate_one

EIGHT_B = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), max_model_len=640)
#: The same replica at a context that holds every ShareGPT-like request.
EIGHT_B_LONG = EIGHT_B.replace(max_model_len=2048)
#: One replica meets these objectives at 40 req/s, until its steps are about a third longer (p99 TPOT binds).
BUSY = Traffic(requests_per_s=40, prompt_tokens=512, output_tokens=128, ttft_slo_s=0.2, tpot_slo_s=0.03)


def _slowed_profile(dep: Deployment, slowdown: float):
    """The replica's own profile with every step ``1 + slowdown`` times as long (its host factor scaled)."""
    base = speed_profile(dep.engine, dep.gpu.vendor)
    return base.with_values(host_serial_frac=(1 + base.host_serial_frac) * (1 + slowdown) - 1)


@settings(max_examples=6, deadline=None)
@given(slowdown=st.floats(min_value=0.01, max_value=0.5), dataset=st.sampled_from(["fixed", "sharegpt"]))
def test_slower_steps_are_the_same_run_on_a_faster_clock(slowdown, dataset):
    """The check's premise: a replica whose every step is ``c`` times as long, offered ``r`` req/s, runs exactly as
    the estimated replica offered ``c · r``, with every latency ``c`` times as long and ``1 / c`` the tokens/s."""
    c = 1 + slowdown
    lengths = {"prompt_tokens": 512, "output_tokens": 128} if dataset == "fixed" else {"dataset": dataset}
    slow = simulate_one(
        EIGHT_B_LONG,
        ServingWorkload.build(request_rate=25, num_prompts=200, seed=0, **lengths),
        profile=_slowed_profile(EIGHT_B_LONG, slowdown),
    )
    fast = simulate_one(EIGHT_B_LONG, ServingWorkload.build(request_rate=25 * c, num_prompts=200, seed=0, **lengths))
    for pct in (50, 99):
        assert slow.ttft_at(pct) == pytest.approx(fast.ttft_at(pct) * c, rel=1e-9)
        assert slow.tpot_at(pct) == pytest.approx(fast.tpot_at(pct) * c, rel=1e-9)
    assert slow.output_tokens_per_s == pytest.approx(fast.output_tokens_per_s / c, rel=1e-9)


def test_slowed_traffic_scales_the_rate_up_and_the_objectives_down():
    t = slowed_traffic(BUSY, 0.25)
    assert (t.requests_per_s, t.ttft_slo_s, t.tpot_slo_s) == (50.0, 0.16, 0.024)
    assert (t.prompt_tokens, t.output_tokens, t.percentile) == (512, 128, 99.0)
    assert slowed_traffic(BUSY, 0.0) == BUSY


def test_the_quoted_count_holds_at_the_margin_and_fails_just_beyond_it_on_slower_steps():
    """Checked on replicas whose steps are really slower (the slowed profile), not through the check's shortcut."""
    option = size_option(EIGHT_B, BUSY, 2.0, None)
    margin = speed_margin(EIGHT_B, BUSY, option)
    assert not margin.at_least and 0 < margin.margin_frac < margin.fails_frac
    assert margin.fails_frac - margin.margin_frac <= margin.resolution_frac
    rate = BUSY.requests_per_s / option.replicas
    workload = ServingWorkload.build(request_rate=rate, num_prompts=400, prompt_tokens=512, output_tokens=128)
    search = ReplicaSearch(EIGHT_B, BUSY, None, None)  # its objective checks, on runs of slowed replicas
    held = simulate_one(EIGHT_B, workload, profile=_slowed_profile(EIGHT_B, margin.margin_frac))
    failed = simulate_one(EIGHT_B, workload, profile=_slowed_profile(EIGHT_B, margin.fails_frac))
    assert not search.objective_misses(held)
    assert [m.objective for m in search.objective_misses(failed)] == [margin.binding] == ["p99 TPOT"]


def test_without_objectives_the_margin_is_the_capacity_left_over():
    """With no latency objective only the capacity bound holds a fleet: n replicas of capacity C serve r req/s
    until their steps are n · C / r times as long."""
    traffic = BUSY.model_copy(update={"ttft_slo_s": None, "tpot_slo_s": None, "requests_per_s": 90.0})
    option = size_option(EIGHT_B, traffic, 2.0, None)
    margin = speed_margin(EIGHT_B, traffic, option)
    left = option.replicas * option.capacity_requests_per_s / traffic.requests_per_s - 1
    assert margin.binding == "capacity"
    assert margin.margin_frac <= left < margin.fails_frac


def test_a_fleet_with_room_to_spare_holds_at_the_largest_slowdown_tried():
    traffic = BUSY.model_copy(update={"requests_per_s": 5.0})
    margin = speed_margin(EIGHT_B, traffic, size_option(EIGHT_B, traffic, 2.0, None))
    assert margin.at_least and margin.margin_frac == SPEED_MARGIN_LIMIT
    assert margin.fails_frac is None and margin.binding == ""
    assert margin.describe().startswith(
        "the quoted 1 replica still meets the objectives with every step 50% longer than estimated (the most this check"
    )


def test_an_option_that_misses_has_no_margin():
    tight = BUSY.model_copy(update={"tpot_slo_s": 0.001})
    option = size_option(EIGHT_B, tight, 2.0, None)
    assert not option.meets_slo
    with pytest.raises(InputError, match="option"):
        speed_margin(EIGHT_B, tight, option)


def test_every_option_that_meets_gets_a_margin_and_the_quote_document_shows_them():
    target, draft = get_model("Llama-3.1-8B"), get_model("meta-llama/Llama-3.2-1B")
    plan = plan_fleet(target, [get_node("8x-h100-sxm-80gb")], BUSY, draft=draft, engine="vllm")
    seen = []
    margins = options_speed_margins(
        plan,
        lambda q: quoted_deployment(target, q, BUSY, draft=draft, engine="vllm"),
        before_option=lambda done, quoted: seen.append((done, quoted.label)),
    )
    assert [q.label for q, _ in margins] == [q.label for q in plan.meeting] == [label for _, label in seen]
    assert all(0 <= m.margin_frac <= SPEED_MARGIN_LIMIT for _, m in margins)
    report = quote_report(target.id, draft.id, plan, margins=margins)
    section = next(s for s in report.sections if s.title == "How much slower than estimated each option may be")
    table = section.table.formatted()
    assert list(table["Option"]) == [q.label for q in plan.meeting]
    assert table["Speed margin"].str.fullmatch(r"\d+(\.\d)?%").all()
    data = json.loads(json.dumps(report.to_json()))
    assert any(s["title"] == section.title for s in data["sections"])
    recommended = margins[0][1]  # the summary says the recommendation's margin; without the check, nothing
    assert f"Speed margin: {recommended.describe()}." in report.summary.text
    assert "Speed margin" not in quote_report(target.id, draft.id, plan).summary.text


def test_the_margin_is_read_beside_the_planners_recorded_error():
    error = measured_throughput_error()
    assert error is not None and error.rows >= 1 and 0 < error.median_abs_pct <= error.most_over_pct
    # the record says what the serving figure of the accuracy section says
    prose = calibration_summary()["serving_rows"]
    assert f"output tok/s median |error| {error.median_abs_pct:g}%" in prose
    assert re.search(rf"\(worst {error.most_over_pct:g}%", prose)
    base = {"quoted_replicas": 2, "quoted_nodes": 1, "at_least": False, "limit_frac": 0.5, "resolution_frac": 0.005,
            "binding": "capacity", "planner_error": error}  # fmt: skip
    below = SpeedMargin(margin_frac=0.02, fails_frac=0.025, **base)
    above = SpeedMargin(margin_frac=0.4, fails_frac=0.405, **base)
    assert below.describe().endswith(f"less than the planner's median throughput error on published runs "
                                     f"({error.median_abs_pct:g}%)")  # fmt: skip
    assert "more than the planner's median" in above.describe() and "and than the most" in above.describe()
    alone = below.model_copy(update={"planner_error": None}).describe()
    assert alone.endswith("(at 2.5% longer, capacity fails)")


def test_a_replica_priced_on_the_roofline_is_read_beside_the_roofline_error():
    """Without measured kernels the step times stand on the roofline, whose recorded error is larger: the margin is
    read beside that one, and the quote's section states each error its options stand on."""
    roofline = measured_throughput_error("roofline")
    measured = measured_throughput_error()
    assert roofline is not None and measured is not None and roofline.median_abs_pct > measured.median_abs_pct
    on_l4 = Deployment.on_node(get_model("Llama-3.2-1B"), get_node("1x-l4-24gb"), max_model_len=640)
    traffic = BUSY.model_copy(update={"requests_per_s": 5.0})
    margin = speed_margin(on_l4, traffic, size_option(on_l4, traffic, None, None))
    assert margin.planner_error == roofline
    assert "median throughput error on published runs priced on the roofline" in margin.describe()
    on_h100 = margin.model_copy(update={"planner_error": measured})
    text = margins_section([(SimpleNamespace(label="L4"), margin), (SimpleNamespace(label="H100"), on_h100)]).text
    assert (
        f"From measured kernel times, the planner's output tokens per second is within {measured.median_abs_pct:g}%"
        in text
    )
    assert (
        f"Priced on the roofline, the planner's output tokens per second is within {roofline.median_abs_pct:g}%" in text
    )


def test_a_malformed_error_record_is_a_catalog_error_naming_it(tmp_data_dir):
    path = tmp_data_dir / "speed_profiles.json"
    data = json.loads(path.read_text())
    data["calibration"]["serving_output_error"]["median_abs_pct"] = -1
    path.write_text(json.dumps(data))
    with pytest.raises(CatalogError, match="serving_output_error"):
        measured_throughput_error()
    del data["calibration"]["serving_output_error"]
    path.write_text(json.dumps(data))
    facts.clear_caches()
    assert measured_throughput_error() is None


def test_a_margin_below_the_planners_median_error_comes_with_the_count_that_holds_there():
    """108 req/s on replicas of 55.8 req/s capacity: two cover it until their steps are 3.4% longer, below the
    planner's median error, so the check sizes the option again there: the fewest replicas that meet everything
    with every step that much longer (and one fewer does not)."""
    traffic = BUSY.model_copy(update={"requests_per_s": 108.0})
    option = size_option(EIGHT_B, traffic, 2.0, None)
    margin = speed_margin(EIGHT_B, traffic, option)
    error = margin.planner_error
    assert error is not None and 100 * margin.margin_frac < error.median_abs_pct
    count = margin.replicas_at_median_error
    assert count is not None and count > option.replicas
    assert margin.nodes_at_median_error == -(-count // EIGHT_B.replicas_per_node)
    slowed = slowed_traffic(traffic, error.median_abs_pct / 100)
    search = ReplicaSearch(EIGHT_B, slowed, None, None)
    assert slowed.requests_per_s <= count * option.capacity_requests_per_s and not search.misses(search.at(count))
    fewer = count - 1
    assert slowed.requests_per_s > fewer * option.capacity_requests_per_s or search.misses(search.at(fewer))
    assert margin.describe().endswith(f"{count} replicas ({count} nodes, {count - option.nodes} more than quoted) "
                                      "still meet them at that error")  # fmt: skip
    roomy = speed_margin(EIGHT_B, BUSY, size_option(EIGHT_B, BUSY, 2.0, None))
    assert roomy.replicas_at_median_error is None and roomy.nodes_at_median_error is None  # above the median error
