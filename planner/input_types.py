"""The scalar inputs every entry point accepts, as pydantic types: one validation layer.

CLI options, page widgets, query parameters and uploads all reduce to these few kinds of number:
each is finite (NaN and infinities are refused), within bounds that keep the work bounded, and
parsed the same way everywhere. :func:`parse_input` turns a text (a CLI argument, a query
parameter) into a value or an ``InputError`` naming the field.

>>> parse_input(Count, "8", "tp")
8
>>> parse_input(PositiveReal, "nan", "gpu_memory_gib")
Traceback (most recent call last):
...
planner.errors.InputError: gpu_memory_gib = 'nan' is not allowed: expected a finite number > 0 and <= 1e+09
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from planner.errors import InputError

#: The largest count anything in the planner needs (GPUs, tokens, sequences): 2^31 - 1.
MAX_COUNT = 2**31 - 1
#: The largest positive real accepted (GiB of memory, requests/s, USD per GPU-hour, milliseconds).
MAX_REAL = 1e9
#: The smallest positive real accepted: below it, rates and prices round to nothing.
MIN_REAL = 1e-9
#: Random seeds: what numpy and torch accept (unsigned 32-bit for numpy's legacy seeding).
MAX_SEED = 2**32 - 1

Count = Annotated[int, Field(ge=1, le=MAX_COUNT, strict=False)]
PositiveReal = Annotated[float, Field(ge=MIN_REAL, le=MAX_REAL, allow_inf_nan=False)]
Fraction = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]

_EXPECTED = {
    id(Count): f"an integer from 1 to {MAX_COUNT:,}",
    id(PositiveReal): f"a finite number > 0 and <= {MAX_REAL:g}",
    id(Fraction): "a finite number in (0, 1]",
    id(Probability): "a finite number in [0, 1]",
    id(Seed): f"an integer from 0 to {MAX_SEED:,}",
}
_ADAPTERS: dict[int, TypeAdapter] = {}


def parse_input(kind: Any, text: str | int | float, field: str, *, low: float | None = None, high: float | None = None):
    """``text`` as a value of ``kind`` (one of the types above), optionally within [low, high]."""
    adapter = _ADAPTERS.setdefault(id(kind), TypeAdapter(kind))
    expected = _EXPECTED.get(id(kind), "a valid value")
    raw = text.strip() if isinstance(text, str) else text
    if isinstance(raw, str) and kind in (Count, Seed) and len(raw) > 30:  # int("9" * 5000) is slow, not a count
        raise InputError(field, raw[:30] + "…", expected)
    try:
        value = adapter.validate_python(raw if not isinstance(raw, str) or kind in (Count, Seed) else float(raw))
    except (ValidationError, ValueError, OverflowError):
        raise InputError(field, text if not isinstance(text, str) else text[:40], expected) from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise InputError(field, value, f"a value from {low:g} to {high:g}")
    return value


def checked_name(name: object, field: str, max_chars: int) -> str:
    """A name a person gives (a saved scenario, quote or model): trimmed and NFC-normalised; refused when empty,
    longer than ``max_chars`` or holding control characters.

    >>> checked_name("  Q3 renewal ", "name", 120)
    'Q3 renewal'
    >>> checked_name("a\\x00b", "name", 120)
    Traceback (most recent call last):
    ...
    planner.errors.InputError: name = 'a\\x00b' is not allowed: expected 1 to 120 printable characters
    """
    if not isinstance(name, str):
        raise InputError(field, name, "a text name")
    text = unicodedata.normalize("NFC", name).strip()
    if not text or len(text) > max_chars or any(unicodedata.category(c).startswith("C") for c in text):
        raise InputError(field, name[:40], f"1 to {max_chars} printable characters")
    return text
