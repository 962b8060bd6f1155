"""A report as a workbook (openpyxl): the Summary sheet first (the verdict, its table, the title page's
fields and the inputs), one sheet per section, then the assumptions, sources and accuracy.

Numbers stay numbers with a number format per column kind (``"$"#,##0" / month"``, ``0.0%``,
``#,##0.0" GiB"``; :data:`planner.reports.table_format.XLSX_FORMATS`), every table's header row is
frozen and wrapped, and columns are as wide as their text. No text cell starts a formula (:func:`xlsx_safe`).
"""

from __future__ import annotations

import io
import math
import re
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from planner.reports.escaping import xlsx_safe
from planner.reports.render_markdown import inputs_table
from planner.reports.table_format import XLSX_FORMATS, Table, format_cell

_SHEET_FORBIDDEN = re.compile(r"[\[\]:*?/\\']")
_HEADER_FILL = PatternFill("solid", fgColor="EDF2F7")
MAX_COLUMN_WIDTH = 60


def _cell_value(value: Any, kind: str) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, bool):
        return "yes" if value else "no"
    if kind == "ms" and isinstance(value, int | float):
        return value * 1e3
    if isinstance(value, int | float):
        return value
    return xlsx_safe(str(value))


class _Widths:
    def __init__(self) -> None:
        self.chars: dict[int, int] = {}

    def see(self, column: int, text: str, cap: int = MAX_COLUMN_WIDTH) -> None:
        self.chars[column] = max(self.chars.get(column, 8), min(len(text) + 2, cap))

    def apply(self, sheet) -> None:
        for column, width in self.chars.items():
            sheet.column_dimensions[get_column_letter(column)].width = width


def _write_table(sheet, table: Table, first_row: int, widths: _Widths) -> int:
    """Write ``table`` with its header at ``first_row``; the next free row."""
    columns = list(table.frame.columns)
    for j, name in enumerate(columns, start=1):
        cell = sheet.cell(row=first_row, column=j, value=xlsx_safe(str(name)))
        cell.font = Font(bold=True)
        cell.fill = _HEADER_FILL
        cell.alignment = Alignment(wrap_text=True, vertical="top")
        widths.see(j, str(name), cap=24)
    for i, row in enumerate(table.frame.itertuples(index=False), start=first_row + 1):
        for j, (name, value) in enumerate(zip(columns, row, strict=True), start=1):
            kind = table.kind(name)
            cell = sheet.cell(row=i, column=j, value=_cell_value(value, kind))
            if kind in XLSX_FORMATS and isinstance(cell.value, int | float):
                cell.number_format = XLSX_FORMATS[kind]
            if isinstance(cell.value, str) and len(cell.value) > MAX_COLUMN_WIDTH:
                cell.alignment = Alignment(wrap_text=True, vertical="top")
            widths.see(j, format_cell(value, kind))
    return first_row + len(table.frame) + 1


def _write_lines(sheet, row: int, lines: list[str], widths: _Widths, bold_first: bool = False) -> int:
    for k, line in enumerate(lines):
        cell = sheet.cell(row=row, column=1, value=xlsx_safe(line))
        cell.alignment = Alignment(wrap_text=True, vertical="top")
        if bold_first and k == 0:
            cell.font = Font(bold=True)
        widths.see(1, line[:90], cap=90)
        row += 1
    return row


def _sheet_name(index: int, title: str) -> str:
    return _SHEET_FORBIDDEN.sub("-", " ".join(f"{index} {title}".split()))[:31]


def report_xlsx(report) -> bytes:
    book = Workbook()
    summary = book.active
    summary.title = "Summary"
    widths = _Widths()
    title = summary.cell(row=1, column=1, value=xlsx_safe(report.title))
    title.font = Font(bold=True, size=14)
    summary.freeze_panes = "A2"
    row = 2
    if report.subtitle:
        row = _write_lines(summary, row, [report.subtitle], widths)
    if report.summary is not None:
        row = _write_lines(summary, row + 1, ["Verdict", report.summary.text], widths, bold_first=True)
        if report.summary.table is not None:
            row = _write_table(summary, report.summary.table, row + 1, widths)
    row = _write_lines(summary, row + 1, [f"{k}: {v}" for k, v in report.title_fields()], widths)
    if report.inputs:
        row = _write_table(summary, inputs_table(report.inputs), row + 1, widths)
    widths.apply(summary)

    for i, s in enumerate(report.sections, start=1):
        sheet = book.create_sheet(_sheet_name(i, s.title))
        sheet_widths = _Widths()
        row = 1
        if s.table is not None:
            row = _write_table(sheet, s.table, 1, sheet_widths)
            sheet.freeze_panes = "A2"
            row += 1
        lines = ([s.title] if s.table is None else []) + ([s.text] if s.text else []) + list(s.notes)
        lines += s.code.splitlines()
        _write_lines(sheet, row, lines, sheet_widths, bold_first=s.table is None)
        sheet_widths.apply(sheet)

    if report.assumptions or report.sources or report.accuracy:
        sheet = book.create_sheet("Assumptions")
        sheet_widths = _Widths()
        row = _write_lines(sheet, 1, ["Assumptions", *report.assumptions], sheet_widths, bold_first=True)
        sheet.freeze_panes = "A2"
        if report.sources:
            lines = ["Sources", *(f"{what}: {where}" for what, where in report.sources)]
            row = _write_lines(sheet, row + 1, lines, sheet_widths, bold_first=True)
        if report.accuracy:
            lines = ["Accuracy of the planner", *(f"{what}: {figure}" for what, figure in report.accuracy)]
            _write_lines(sheet, row + 1, lines, sheet_widths, bold_first=True)
        sheet_widths.apply(sheet)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()
