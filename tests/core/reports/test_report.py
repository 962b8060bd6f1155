"""Report exports: every format whole, dated, with the summary first and figures formatted for people."""

from __future__ import annotations

import io
import json
import re
import shutil

import openpyxl
import pytest

from planner.catalog.lookup import get_model, get_node
from planner.decisions.fleet_models import Traffic
from planner.decisions.fleet_recommendation import plan_fleet
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.memory.plan import plan_memory
from planner.reports.quote import quote_report
from planner.reports.sizing import sizing_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def report():
    traffic = Traffic(requests_per_s=10, prompt_tokens=512, output_tokens=128)
    plan = plan_fleet(
        get_model("Llama-3.1-8B"),
        [get_node("1x-h100-sxm-80gb"), get_node("1x-l4-24gb")],
        traffic,
        draft=get_model("Llama-3.2-1B"),
    )
    return quote_report("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.2-1B", plan, customer="Acme Corp")


def test_json_is_machine_readable_and_full_precision(report):
    data = json.loads(report.export("json"))
    assert data["generated_at"] and data["assumptions"] and data["planner_version"]
    assert data["customer"] == "Acme Corp" and data["summary"]["text"].startswith("Buy ")
    first = data["sections"][0]
    assert first["title"] == "Options that meet every objective"
    # each key names the unit of its raw value, and numbers are rounded as people read them
    row, kinds = first["table"][0], first["column_kinds"]
    assert isinstance(row["Cost / month ($)"], float) and kinds["Cost / month ($)"] == "usd_month"
    assert "p99 TPOT (s)" in row and "p99 TPOT" not in row
    assert all(len(repr(v).split(".")[-1]) <= 6 for r in first["table"] for v in r.values() if isinstance(v, float))
    assert data["accuracy"] and all(a["figure"] for a in data["accuracy"])


def test_markdown_has_pipe_tables_and_no_raw_numbers(report):
    text = report.export("md").decode()
    assert "## Summary" in text and "## Assumptions" in text and "## Accuracy of the planner" in text
    assert re.search(r"^\| Option \| Nodes \| GPUs \| Cost / month \|", text, re.M)
    assert re.search(r"^\| --- \| ---: \|", text, re.M)
    assert not re.search(r"\d\.\d{6,}", text)  # no 17344.800000000003
    assert "e+0" not in text and "nan" not in text.lower().replace("nanosecond", "")
    assert re.search(r"\$[\d,]+ / month", text)


def test_html_is_self_contained_small_and_scriptless(report):
    text = report.export("html").decode()
    # what the page loads or runs, outside the charts' data: URIs (random base64 can spell "cdn" in any case)
    markup = re.sub(r"""data:[^'"]*""", "data:", text).lower()
    assert "<script" not in markup and "cdn" not in markup
    assert "script-src 'none'" in text
    assert len(text) < 400_000  # no 4.8 MB plotly bundle
    assert not re.search(r"""(src|href)=['"](?!data:|https?://)""", text)  # links are only http(s) to click
    if CHROMIUM:
        assert "data:image/svg+xml;base64," in text  # the chart as a static image


def test_xlsx_summary_first_with_number_formats_widths_and_frozen_headers(report):
    book = openpyxl.load_workbook(io.BytesIO(report.export("xlsx")))
    assert book.sheetnames[0] == "Summary"
    summary = book["Summary"]
    assert summary["A1"].value.startswith("Serving quote")
    texts = [c.value for c in summary["A"] if isinstance(c.value, str)]
    assert "Verdict" in texts and any(t.startswith("Buy ") for t in texts)
    options = book[book.sheetnames[1]]
    assert options.freeze_panes == "A2"
    header = [c.value for c in options[1]]
    cost = options.cell(row=2, column=header.index("Cost / month") + 1)
    assert isinstance(cost.value, float) and cost.number_format == '"$"#,##0" / month"'
    ttft = options.cell(row=2, column=header.index("p99 TTFT") + 1)
    assert ttft.number_format.endswith('" ms"')
    assert options.column_dimensions["A"].width > 20
    assert "Assumptions" in book.sheetnames


@pytest.mark.slow  # a browser prints the PDF
@pytest.mark.skipif(not CHROMIUM, reason="Debian chromium is not installed")
def test_pdf_is_printed_by_chromium(report):
    assert report.export("pdf")[:5] == b"%PDF-"


def test_unknown_format(report):
    with pytest.raises(PlannerError, match="format"):
        report.export("docx")


def test_sizing_report_has_the_plan():
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("1x-h100-sxm-80gb"), max_model_len=8192)
    report = sizing_report(dep, plan_memory(dep), prepared_by="SA")
    data = json.loads(report.export("json"))
    titles = [s["title"] for s in data["sections"]]
    assert titles[:2] == ["One GPU's memory", "Capacity"] and "Changes that fit and start, best first" in titles
    assert data["summary"]["text"].startswith("Does not fit")
    assert data["prepared_by"] == "SA"
    text = report.export("md").decode()
    assert "131.4 GiB" in text and "| Component | GiB (2^30 B) | GB (10^9 B) |" in text
