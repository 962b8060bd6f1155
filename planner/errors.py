"""One exception root with messages a person can act on.

Every error names the offending field and the allowed values, so the app can show it as a message
and the CLI can print it as one line (exit code 2).

>>> err = InputError("tp", 3, "a divisor of the 64 attention heads, e.g. 1, 2, 4 or 8")
>>> str(err)
'tp = 3 is not allowed: expected a divisor of the 64 attention heads, e.g. 1, 2, 4 or 8'
>>> isinstance(err, ValueError)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The most characters of a user's input that an error message quotes (the rest is cut with "…").
MAX_QUOTED_CHARS = 100


def quoted(value: Any, limit: int = MAX_QUOTED_CHARS) -> str:
    """``repr(value)`` for a message, at most ``limit`` characters.

    >>> len(quoted("x" * 500)), quoted("x" * 500)[-3:]
    (100, 'xx…')
    >>> quoted(3)
    '3'
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PlannerError(ValueError):
    """Root of every error the planner raises on purpose."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class InputError(PlannerError):
    """A user-supplied value is outside what the planner accepts."""

    def __init__(self, field: str, value: Any, allowed: str) -> None:
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} = {quoted(value)} is not allowed: expected {allowed}", field=field)


class ConfigError(PlannerError):
    """A Hugging Face ``config.json`` (or dict) cannot be turned into an architecture."""


class CatalogError(PlannerError):
    """An id is not in the catalog, or a catalog file is malformed."""


#: Units a field's name ends with, as a message writes them after a number.
_NAME_UNITS = (
    ("max_model_len", " tokens"),
    ("_tokens", " tokens"),
    ("_per_s", " per second"),
    ("_ms", " ms"),
    ("_s", " s"),
    ("_gib", " GiB"),
    ("_bytes", " bytes"),
    ("_usd_per_gpu_hour", " $/GPU-hour"),
)
#: Unit suffixes a name drops when it is written as words (the unit follows the number instead).
_UNIT_SUFFIXES = ("_ms", "_s", "_gib", "_bytes")
#: Field names whose words are not their name's.
_FIELD_WORDS = {
    "max_model_len": "max model length",
    "tp": "tensor parallelism",
    "pp": "pipeline parallelism",
    "k": "draft length K",
    "topk": "tree top-k (candidates per level)",
    "fleet_tpot_slo_ms": "TPOT objective",
    "fleet_ttft_slo_ms": "TTFT objective",
    "tpot_slo_s": "TPOT objective",
    "ttft_slo_s": "TTFT objective",
    "usd_per_gpu_hour": "price per GPU-hour",
}


def field_words(name: str, labels: Mapping[str, str] | None = None) -> str:
    """A field's name as words, capitalised: ``labels`` first, then the few names above, else its parts.

    >>> field_words("max_model_len"), field_words("rps", {"rps": "requests per second"})
    ('Max model length', 'Requests per second')
    """
    bare = name.removesuffix("_per_s") if name.endswith("_per_s") else name
    bare = next((bare.removesuffix(u) for u in _UNIT_SUFFIXES if bare.endswith(u) and bare == name), bare)
    words = bare.replace("_", " ") + (" per second" if name.endswith("_per_s") else "")
    text = (labels or {}).get(name) or _FIELD_WORDS.get(name) or words
    if "_" in text:  # an engine's own flag name (max_num_batched_tokens) is quoted as the engine spells it
        return text
    return text[:1].upper() + text[1:]


def _unit(name: str) -> str:
    return next((unit for suffix, unit in _NAME_UNITS if name.endswith(suffix)), "")


def _number(value) -> str:
    return f"{value:,g}" if isinstance(value, int | float) else str(value)


def pydantic_words(error: Mapping, field: str, labels: Mapping[str, str] | None = None) -> str:
    """One pydantic error in words a person reads: "Max model length must be at least 16 tokens".

    >>> pydantic_words({"type": "greater_than_equal", "ctx": {"ge": 16}}, "max_model_len")
    'Max model length must be at least 16 tokens'
    """
    name = field.rsplit(".", 1)[-1]
    label, unit, ctx = field_words(name, labels), _unit(name), error.get("ctx") or {}
    unit = "" if unit == " per second" else unit
    kind = error.get("type", "")
    phrases = {
        "greater_than_equal": lambda: f"must be at least {_number(ctx.get('ge'))}{unit}",
        "greater_than": lambda: f"must be more than {_number(ctx.get('gt'))}{unit}",
        "less_than_equal": lambda: f"must be at most {_number(ctx.get('le'))}{unit}",
        "less_than": lambda: f"must be less than {_number(ctx.get('lt'))}{unit}",
        "int_parsing": lambda: "must be a whole number",
        "int_type": lambda: "must be a whole number",
        "int_from_float": lambda: "must be a whole number",
        "float_parsing": lambda: "must be a number",
        "float_type": lambda: "must be a number",
        "finite_number": lambda: "must be a finite number",
        "bool_parsing": lambda: "must be yes or no",
        "literal_error": lambda: f"must be one of {ctx.get('expected', 'the listed values')}",
        "too_long": lambda: f"may hold at most {_number(ctx.get('max_length'))} items",
        "string_too_long": lambda: f"may be at most {_number(ctx.get('max_length'))} characters long",
        "string_too_short": lambda: f"must be at least {_number(ctx.get('min_length'))} characters long",
        "missing": lambda: "is required",
        "extra_forbidden": lambda: "is not a field this input has",
    }
    phrase = phrases.get(kind)
    return f"{label} {phrase()}" if phrase else f"{label}: {error.get('msg', 'invalid value')}"


def first_pydantic_error(exc: Exception, prefix: str = "", labels: Mapping[str, str] | None = None) -> PlannerError:
    """Turn a pydantic ``ValidationError`` into a one-line ``PlannerError`` in words, naming the field
    (``labels`` maps field names to the words the page or command uses).

    A ``PlannerError`` raised inside a validator comes back as itself.
    """
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return PlannerError(str(exc))
    first = errors()[0]
    original = (first.get("ctx") or {}).get("error")
    if isinstance(original, PlannerError):
        return original
    loc = ".".join(str(part) for part in first.get("loc", ()) if part != "__root__")
    field = f"{prefix}{loc}" if loc else prefix.rstrip(".") or None
    if not field:
        return PlannerError(str(first.get("msg", "invalid value")), field=field)
    return PlannerError(pydantic_words(first, field, labels), field=field)
