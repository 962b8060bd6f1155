"""Report exports: every format is produced whole, with the date and the assumptions."""

from __future__ import annotations

import io
import json
import shutil

import pandas as pd
import pytest

from planner.catalog.lookup import get_model, get_node
from planner.decisions.fleet import Traffic, compare_nodes
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.memory.plan import plan_memory
from planner.reports.quote import quote_report
from planner.reports.sizing import sizing_report


@pytest.fixture(scope="module")
def report():
    traffic = Traffic(requests_per_s=10, prompt_tokens=512, output_tokens=128)
    quotes, unusable = compare_nodes(
        get_model("Llama-3.1-8B"),
        [get_node("1x-h100-sxm-80gb"), get_node("1x-l4-24gb")],
        traffic,
        draft=get_model("Llama-3.2-1B"),
    )
    return quote_report("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.2-1B", traffic, quotes, unusable)


def test_json_and_markdown_carry_inputs_and_assumptions(report):
    data = json.loads(report.export("json"))
    assert data["generated_at"] and data["assumptions"] and data["inputs"]["requests per second"] == 10
    assert data["sections"][0]["table"][0]["node"]
    assert "## Assumptions" in report.export("md").decode()


def test_html_embeds_the_chart_and_table(report):
    text = report.export("html").decode()
    assert "<table" in text and "plotly" in text.lower() and "Assumptions" in text


def test_xlsx_has_a_summary_and_a_sheet_per_table(report):
    book = pd.read_excel(io.BytesIO(report.export("xlsx")), sheet_name=None)
    assert "summary" in book and len(book) >= 2


@pytest.mark.slow  # a browser prints the PDF
@pytest.mark.skipif(not shutil.which("chromium"), reason="Debian chromium is not installed")
def test_pdf_is_printed_by_chromium(report):
    assert report.export("pdf")[:5] == b"%PDF-"


def test_unknown_format(report):
    with pytest.raises(PlannerError, match="format"):
        report.export("docx")


def test_sizing_report_has_the_plan():
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("1x-h100-sxm-80gb"), max_model_len=8192)
    data = json.loads(sizing_report(dep, plan_memory(dep)).export("json"))
    titles = [s["title"] for s in data["sections"]]
    assert titles[:3] == ["Verdict", "One GPU's memory", "Capacity"] and "What would make it fit" in titles
    assert data["sections"][0]["text"].startswith("Does not fit")
