"""The worked example's quote (Llama-3.1-70B + Llama-3.2-1B, the app's "70B + 1B on 8x H100") as a PDF:
every page's ink stays inside the page, and the first page says what to buy, what it costs per month and per
million tokens, and the main assumptions."""

from __future__ import annotations

import re
import shutil

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.decisions.fleet_recommendation import plan_fleet
from planner.reports.quote import quote_report
from planner.scenario import EXAMPLES
from tests.core.reports.pdf_pages import overflowing_pages, page_texts, print_layout_overflow

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")), reason="no Chromium"),
]


@pytest.fixture(scope="module")
def worked_example():
    scenario = EXAMPLES["70B + 1B on 8x H100"]
    plan = plan_fleet(
        get_model(scenario.target),
        [get_node(n) for n in scenario.fleet_nodes],
        scenario.traffic(),
        draft=get_model(scenario.draft),
        engine=scenario.engine,
        kv_dtype=scenario.kv_dtype,
    )
    report = quote_report(scenario.target, scenario.draft, plan, customer="Example customer", prepared_by="SA")
    return plan, report.export("pdf"), report.to_html()


def test_every_page_fits(worked_example):
    _, pdf, page_html = worked_example
    assert pdf[:5] == b"%PDF-"
    assert overflowing_pages(pdf) == []  # no ink in the margins
    assert print_layout_overflow(page_html) == []  # and nothing clipped at them: every table fits the width


def test_the_fit_check_can_fail():
    wide = "<table style='table-layout:auto;width:auto'><tr>" + "<td>unbreakable_cell_text</td>" * 40 + "</tr></table>"
    assert print_layout_overflow(f"<html><body>{wide}</body></html>")


def test_the_first_page_says_what_to_buy_its_cost_and_the_assumptions(worked_example):
    plan, pdf, _ = worked_example
    first = " ".join(page_texts(pdf)[0].split())
    best = plan.recommended
    assert best is not None
    assert f"Buy {best.option.nodes} x {best.node}" in first
    assert f"${best.option.usd_per_month:,.0f} / month" in first
    assert re.search(rf"\${best.option.usd_per_million_output_tokens:,.2f} per million output tokens", first)
    assert "Main assumptions" in first and f"α = {plan.alpha:.2f}" in first  # the pair's own α, as on every page
    assert (
        "Cheapest option that meets every objective" in first or "cheapest option that meets every objective" in first
    )
