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


def first_pydantic_error(exc: Exception, prefix: str = "") -> PlannerError:
    """Turn a pydantic ``ValidationError`` into a one-line ``PlannerError`` naming the field.

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
    value = first.get("input")
    shown = "" if isinstance(value, dict) else f" = {quoted(value)}"
    return PlannerError(f"{field}{shown}: {first.get('msg', 'invalid value')}", field=field)
