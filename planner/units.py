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
