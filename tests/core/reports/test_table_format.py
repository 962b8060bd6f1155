"""Figures for people: one formatter per kind, wide tables split for the page, no NaN or 1e+20."""

from __future__ import annotations

import math

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from planner.reports.render_markdown import pipe_table
from planner.reports.table_format import MAX_PAGE_COLUMNS, Table, format_cell
from planner.units import MISSING, fmt_tokens, fmt_usd_per_month, fmt_whole


def test_people_formats():
    assert fmt_usd_per_month(21_600) == "$21,600 / month"
    assert format_cell(141_107_412_992 / 2**30, "gib") == "131.4 GiB"
    assert fmt_tokens(1_200_000) == "1.2 M tokens"
    assert fmt_whole(116.63) == "116"
    assert format_cell(0.125, "pct") == "12.5%" and format_cell(0.0452, "ms") == "45.2 ms"
    assert format_cell(17344.800000000003, None) == "17,344.80"
    assert format_cell(float("nan"), "usd") == MISSING and format_cell(None, "int") == MISSING
    assert format_cell(True, None) == "yes"


@given(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["usd", "gib", "pct", "ms", "float", "int"]))
def test_no_format_prints_scientific_notation_or_nan(value, kind):
    text = format_cell(value, kind)
    assert "e+" not in text and "e-" not in text and "nan" not in text.lower() and "inf" not in text.lower()
    if not math.isfinite(value):
        assert text == MISSING


def test_a_wide_table_splits_into_decisive_columns_and_details():
    frame = pd.DataFrame([{f"c{i}": i for i in range(12)}])
    parts = Table(frame, key_columns=["c0", "c5", "c7"]).parts()
    assert [caption for caption, _ in parts] == ["Decisive figures", "Details", "Details"]
    assert list(parts[0][1].frame.columns) == ["c0", "c5", "c7"]
    assert all(len(p.frame.columns) <= MAX_PAGE_COLUMNS and p.frame.columns[0] == "c0" for _, p in parts)
    shown = {c for _, p in parts for c in p.frame.columns}
    assert shown == set(frame.columns)


def test_pipe_table_escapes_pipes_inside_cells():
    text = pipe_table(["a"], [["x | y"]])
    assert text.splitlines()[2] == "| x \\| y |"
