"""Byte and rate conversions and their formatting, in one place.

Bytes are integers everywhere in the core; GiB (2**30) and GB (10**9) appear only at the edges,
and every formatted figure says which one it is.

>>> bytes_to_gib(141_107_412_992)
131.41...
>>> fmt_gib(141_107_412_992)
'131.4 GiB'
>>> fmt_gb(141_107_412_992)
'141.1 GB'
"""

from __future__ import annotations

import math

GIB = 2**30
MIB = 2**20
KIB = 2**10
GB = 10**9
MB = 10**6
TB = 10**12
TERA = 10**12


def bytes_to_gib(n_bytes: float) -> float:
    return n_bytes / GIB


def bytes_to_gb(n_bytes: float) -> float:
    return n_bytes / GB


def gib_to_bytes(gib: float) -> int:
    return round(gib * GIB)


def gb_to_bytes(gb: float) -> int:
    return round(gb * GB)


def fmt_gib(n_bytes: float, digits: int = 1) -> str:
    return f"{n_bytes / GIB:,.{digits}f} GiB"


def fmt_gb(n_bytes: float, digits: int = 1) -> str:
    return f"{n_bytes / GB:,.{digits}f} GB"


def fmt_bytes(n_bytes: float) -> str:
    """Human size in binary units, e.g. ``fmt_bytes(40960) == '40.0 KiB'``."""
    value = float(n_bytes)
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(value) >= size:
            return f"{value / size:,.1f} {unit}"
    return f"{int(value):,} B"


def fmt_count(n: float) -> str:
    """Large counts with a suffix: ``fmt_count(70_553_706_496) == '70.55 B'``."""
    for suffix, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {suffix}"
    return f"{n:,.0f}"


def fmt_counted(count: int, noun: str, plural: str | None = None) -> str:
    """A whole count and its noun, singular for one: ``fmt_counted(1, "GPU") == '1 GPU'``.

    >>> fmt_counted(1, "replica"), fmt_counted(1_024, "GPU"), fmt_counted(0, "node")
    ('1 replica', '1,024 GPUs', '0 nodes')
    """
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


# Figures for people (documents, the app): one formatter per kind of value. A value that is missing or
# not a number prints as an em dash; nothing prints in scientific notation.

#: What a missing value (None, NaN, infinity) prints as.
MISSING = "—"


def _number(value) -> float | None:
    """``value`` as a finite float, or None (missing, NaN, infinite or not a number)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def fmt_number(value, digits: int = 2) -> str:
    """A number with thousands separators, never in scientific notation; ``—`` when missing.

    >>> fmt_number(17344.800000000003), fmt_number(1e-7), fmt_number(float("nan")), fmt_number(3e20, 0)
    ('17,344.80', '0.00', '—', '300,000,000,000,000,000,000')
    """
    number = _number(value)
    return MISSING if number is None else f"{number:,.{digits}f}"


def fmt_whole(value) -> str:
    """A whole count with separators (a fraction is cut, as whole requests are): ``fmt_whole(116.63) == '116'``."""
    number = _number(value)
    return MISSING if number is None else f"{math.floor(number + 1e-9):,}"


def fmt_usd(value, digits: int = 0) -> str:
    """Dollars: ``fmt_usd(21600) == '$21,600'``, ``fmt_usd(1.234, 2) == '$1.23'``; ``—`` when missing."""
    number = _number(value)
    if number is None:
        return MISSING
    return f"-${-number:,.{digits}f}" if number < 0 else f"${number:,.{digits}f}"


def fmt_usd_per_month(value) -> str:
    """``fmt_usd_per_month(21600) == '$21,600 / month'``."""
    text = fmt_usd(value)
    return text if text == MISSING else f"{text} / month"


def fmt_tokens(value) -> str:
    """Token counts as a person reads them: ``1.2 M tokens``, ``131.1 K tokens``, ``512 tokens``.

    >>> fmt_tokens(1_200_000), fmt_tokens(131_072), fmt_tokens(512), fmt_tokens(None)
    ('1.2 M tokens', '131.1 K tokens', '512 tokens', '—')
    """
    number = _number(value)
    if number is None:
        return MISSING
    for suffix, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(number) >= size:
            return f"{number / size:,.1f} {suffix} tokens"
    return f"{number:,.0f} tokens"


def fmt_pct(fraction, digits: int = 1) -> str:
    """A fraction as a percentage: ``fmt_pct(0.125) == '12.5%'``; ``—`` when missing."""
    number = _number(None if _number(fraction) is None else _number(fraction) * 100)
    return MISSING if number is None else f"{number:,.{digits}f}%"


def fmt_ms(seconds, digits: int = 1) -> str:
    """Seconds as milliseconds: ``fmt_ms(0.0452) == '45.2 ms'``; ``—`` when missing."""
    number = _number(None if _number(seconds) is None else _number(seconds) * 1e3)
    return MISSING if number is None else f"{number:,.{digits}f} ms"


def fmt_ms_entered(seconds: float) -> str:
    """A time a person entered, in milliseconds, as entered (to the microsecond, no trailing zeros).

    >>> fmt_ms_entered(0.2), fmt_ms_entered(0.0043), fmt_ms_entered(1e-5), fmt_ms_entered(2.5)
    ('200 ms', '4.3 ms', '0.01 ms', '2,500 ms')
    >>> fmt_ms_entered(1e-7)  # under a microsecond: its own digits, never "0 ms"
    '0.0001 ms'
    """
    ms = seconds * 1e3
    if 0 < abs(ms) < 0.0005:
        return f"{ms:.3g} ms"
    text = f"{ms:,.3f}".rstrip("0").rstrip(".")
    return f"{text} ms"


def latency_objectives_text(ttft_s: float | None, tpot_s: float | None, percentile: float) -> str:
    """Latency objectives in words, each as entered, the same in a quote, a search and their documents.

    >>> latency_objectives_text(2.0, 0.04, 99.0), latency_objectives_text(None, None, 99.0)
    ('p99 TTFT ≤ 2,000 ms and p99 TPOT ≤ 40 ms', 'no latency objective')
    """
    parts = []
    if ttft_s is not None:
        parts.append(f"p{percentile:g} TTFT ≤ {fmt_ms_entered(ttft_s)}")
    if tpot_s is not None:
        parts.append(f"p{percentile:g} TPOT ≤ {fmt_ms_entered(tpot_s)}")
    return " and ".join(parts) or "no latency objective"


def fmt_ms_over(value_s: float, limit_s: float, digits: int = 1) -> str:
    """``value > limit`` in milliseconds: the limit as entered (:func:`fmt_ms_entered`), the value with as many
    decimals (up to 3) as it takes to read above it.

    >>> fmt_ms_over(2.0004, 2.0, 0), fmt_ms_over(2.177, 2.0, 0), fmt_ms_over(0.0062, 1e-5)
    ('2,000.4 ms > 2,000 ms', '2,177 ms > 2,000 ms', '6.2 ms > 0.01 ms')
    """
    limit_ms = round(limit_s * 1e3, 3)
    while digits < 3 and round(value_s * 1e3, digits) <= limit_ms:
        digits += 1
    return f"{value_s * 1e3:,.{digits}f} ms > {fmt_ms_entered(limit_s)}"


def fmt_objective_miss(kind: str, value_s: float, limit_s: float, percentile: float) -> str:
    """A latency objective missed, in words, the same in a quote, a search and their documents: TTFT to the
    millisecond, TPOT to a tenth (or finer, to read above the limit).

    >>> fmt_objective_miss("TTFT", 2.4, 2.0, 99.0), fmt_objective_miss("TPOT", 0.0453, 0.03, 99.0)
    ('p99 TTFT 2,400 ms > 2,000 ms', 'p99 TPOT 45.3 ms > 30 ms')
    """
    return f"p{percentile:g} {kind} {fmt_ms_over(value_s, limit_s, 0 if kind == 'TTFT' else 1)}"


def fmt_gib_value(gib, digits: int = 1) -> str:
    """A value already in GiB: ``fmt_gib_value(131.41) == '131.4 GiB'``; ``—`` when missing."""
    number = _number(gib)
    return MISSING if number is None else f"{number:,.{digits}f} GiB"
