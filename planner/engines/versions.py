"""Engine release numbers as comparable tuples."""

from __future__ import annotations

import re

from planner.errors import InputError


def parse_version(text: str) -> tuple[int, int, int]:
    """``'0.11.0+582e4e37.nv25.11'`` -> ``(0, 11, 0)``; missing parts count as 0.

    >>> parse_version("v0.6.0"), parse_version("0.19")
    ((0, 6, 0), (0, 19, 0))
    """
    match = re.match(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", text.strip())
    if not match:
        raise InputError("engine_version", text, "a release number such as 0.19.0")
    return tuple(int(part or 0) for part in match.groups())  # type: ignore[return-value]
