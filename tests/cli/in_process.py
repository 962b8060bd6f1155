"""Run ``python -m planner`` in this process (fast enough for a thousand seeded calls) and check its JSON."""

from __future__ import annotations

import io
import math
from contextlib import redirect_stderr, redirect_stdout

from planner.cli import main


def run_in_process(args: list[str]) -> tuple[int, str, str]:
    """``main(args)``: its exit code (argparse's refusal included), stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse refused an argument
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def all_finite(value: object) -> bool:
    """No NaN or infinity anywhere in a JSON value.

    >>> all_finite({"a": [1.0, {"b": 2}]}), all_finite([float("nan")])
    (True, False)
    """
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(all_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(all_finite(v) for v in value)
    return True
