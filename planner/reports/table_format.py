"""A document's table: raw values plus the kind of each column, formatted for people in one place.

Every export reads the same :class:`Table`: the PDF, HTML and Markdown print :meth:`Table.formatted`
(``$21,600 / month``, ``131.4 GiB``, ``1.2 M tokens``, ``—`` for a missing value, never scientific
notation), the XLSX keeps the numbers and gives each column a number format (:data:`XLSX_FORMATS`),
the JSON keeps full precision. A wide table is split for the page (:meth:`Table.parts`): the decisive
columns first, the rest in a details table that repeats the row label.

>>> import pandas as pd
>>> t = Table(pd.DataFrame([{"option": "a", "cost": 21600.0, "share": float("nan")}]),
...           kinds={"cost": "usd_month", "share": "pct"})
>>> t.formatted().iloc[0].tolist()
['a', '$21,600 / month', '—']
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from planner.units import (
    MISSING,
    fmt_gib_value,
    fmt_ms,
    fmt_number,
    fmt_pct,
    fmt_tokens,
    fmt_usd,
    fmt_usd_per_month,
    fmt_whole,
)

#: How each kind of column prints for people.
FORMATTERS = {
    "usd": fmt_usd,
    "usd_cents": lambda v: fmt_usd(v, 2),
    "usd_month": fmt_usd_per_month,
    "gib": fmt_gib_value,
    "gb": lambda v: fmt_number(v, 1) + " GB" if fmt_number(v, 1) != MISSING else MISSING,
    "pct": fmt_pct,
    "ms": fmt_ms,
    "tokens": fmt_tokens,
    "int": fmt_whole,
    "float": fmt_number,
    "float3": lambda v: fmt_number(v, 3),
}
#: Excel number formats by kind (values are written raw; ``ms`` columns are written in milliseconds).
XLSX_FORMATS = {
    "usd": '"$"#,##0',
    "usd_cents": '"$"#,##0.00',
    "usd_month": '"$"#,##0" / month"',
    "gib": '#,##0.0" GiB"',
    "gb": '#,##0.0" GB"',
    "pct": "0.0%",
    "ms": '#,##0.0" ms"',
    "tokens": "#,##0",
    "int": "#,##0",
    "float": "#,##0.00",
    "float3": "#,##0.000",
}
#: The unit of each kind's raw value, named in JSON keys (``ms`` columns hold seconds, ``pct`` fractions).
JSON_UNITS = {
    "ms": "s",
    "pct": "fraction",
    "usd": "$",
    "usd_cents": "$",
    "usd_month": "$",
    "gib": "GiB",
    "gb": "GB",
    "tokens": "tokens",
}
#: The most columns a table prints on a portrait page.
MAX_PAGE_COLUMNS = 7
NUMERIC_KINDS = frozenset(FORMATTERS)


def format_cell(value, kind: str | None) -> str:
    """One value as a person reads it (``kind`` as in :data:`FORMATTERS`; text and booleans as words)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if kind in FORMATTERS:
        return FORMATTERS[kind](value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return fmt_number(value)
    text = str(value)
    return text if text.strip() else MISSING


def infer_kind(series: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(series):
        return "text"
    if pd.api.types.is_integer_dtype(series):
        return "int"
    if pd.api.types.is_float_dtype(series):
        return "float"
    return "text"


@dataclass
class Table:
    frame: pd.DataFrame
    #: Column -> kind (:data:`FORMATTERS`); columns not named are inferred from their dtype.
    kinds: dict[str, str] = field(default_factory=dict)
    #: The decisive columns printed first when the table is too wide for a page (the first is the row label).
    key_columns: list[str] | None = None

    @classmethod
    def of(cls, table: Table | pd.DataFrame | None) -> Table | None:
        if table is None or isinstance(table, Table):
            return table
        return cls(table)

    def kind(self, column: str) -> str:
        return self.kinds.get(column) or infer_kind(self.frame[column])

    def is_numeric(self, column: str) -> bool:
        return self.kind(column) in NUMERIC_KINDS

    def formatted(self) -> pd.DataFrame:
        """Every cell as text for people."""
        return pd.DataFrame(
            {c: [format_cell(v, self.kind(c)) for v in self.frame[c].tolist()] for c in self.frame.columns},
            columns=list(self.frame.columns),
        )

    def parts(self, max_columns: int = MAX_PAGE_COLUMNS) -> list[tuple[str, Table]]:
        """The table cut to fit a page: ``[("", whole)]`` when narrow, else the decisive columns and details."""
        columns = list(self.frame.columns)
        if len(columns) <= max_columns:
            return [("", self)]
        label = columns[0]
        key = [c for c in (self.key_columns or columns[:max_columns]) if c in columns]
        if label not in key:
            key = [label, *key]
        rest = [c for c in columns if c not in key]
        chunks = [key] + [[label, *rest[i : i + max_columns - 1]] for i in range(0, len(rest), max_columns - 1)]
        captions = ["Decisive figures"] + ["Details"] * (len(chunks) - 1)
        return [
            (caption, Table(self.frame[chunk], {c: self.kinds[c] for c in chunk if c in self.kinds}))
            for caption, chunk in zip(captions, chunks, strict=True)
        ]

    def json_key(self, column: str) -> str:
        """``column`` as a JSON key that names the unit its raw values are in ("p99 TPOT (s)")."""
        unit = JSON_UNITS.get(self.kind(column))
        return f"{column} ({unit})" if unit and "(" not in column else column

    def records(self) -> list[dict]:
        """Rows for JSON: each key names its unit, numbers rounded (:func:`rounded`), NaN as null."""
        frame = self.frame.astype(object).where(self.frame.notna(), None)
        keys = {c: self.json_key(c) for c in frame.columns}
        return [{keys[c]: rounded(v) for c, v in row.items()} for row in frame.to_dict(orient="records")]


def rounded(value):
    """A float at the precision a reader uses (4 decimals, 4 significant digits below 1); other values as given.

    >>> rounded(34923.200000000004), rounded(79.19000000040978), rounded(0.000123456), rounded("x")
    (34923.2, 79.19, 0.0001235, 'x')
    """
    if isinstance(value, bool) or not isinstance(value, float) or not math.isfinite(value):
        return value
    if value == 0 or abs(value) >= 1:
        return round(value, 4)
    return float(f"{value:.4g}")
