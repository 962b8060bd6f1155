"""Helpers shared by CLI commands: argument types, model arguments, output and exports.

Every option value goes through :mod:`planner.input_types` (the pydantic types the pages use too):
finite, bounded, one line naming the argument when it is not.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.catalog.importing import resolve_model
from planner.catalog.schemas import ModelSpec
from planner.defaults import DEFAULT_SLO_PRESET, MAX_TRAFFIC_DRAWS, OBJECTIVE_PERCENTILE, SLO_PRESETS
from planner.errors import InputError, quoted
from planner.input_types import Count, Fraction, PositiveReal, Seed, bounded_input, parse_input
from planner.user_files import check_output_path, chmod_as_created, shown_path

if TYPE_CHECKING:
    from planner.validation import Actor

#: The formats a report can be exported to (planner.reports.document.Report.export).
EXPORT_SUFFIXES = (".json", ".html", ".md", ".xlsx", ".pdf")
#: The longest catalog id or name accepted on the command line.
MAX_NAME_CHARS = 200


def _typed(kind, text: str, **bounds):
    try:
        return parse_input(kind, text, "value", **bounds)
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"{quoted(_printable(text))} is not allowed: expected {exc.allowed}") from None


def positive_int(text: str) -> int:
    """An integer from 1 to 2^31 - 1."""
    return _typed(Count, text)


def positive_float(text: str) -> float:
    """A finite number > 0 (at most 1e9): NaN, infinities and denormals are refused."""
    return _typed(PositiveReal, text)


def traffic_draws(text: str) -> int:
    """A number of draws of the traffic: 1 (the quote's own: no check) to ``MAX_TRAFFIC_DRAWS``."""
    return _typed(Count, text, low=1, high=MAX_TRAFFIC_DRAWS)


def fraction(text: str) -> float:
    """A finite number in (0, 1]."""
    return _typed(Fraction, text)


def seed(text: str) -> int:
    """A random seed from 0 to 2^32 - 1."""
    return _typed(Seed, text)


def of_kind(kind, name: str):
    """An argparse type for any shared input type of :mod:`planner.input_types` (e.g. ``RequestRate``)."""

    def parse(text: str):
        return _typed(kind, text)

    parse.__name__ = name
    return parse


def input_of(name: str):
    """An argparse type for the input ``name`` of :data:`planner.input_types.INPUT_BOUNDS` (the pages' bounds)."""

    def parse(text: str):
        try:
            return bounded_input(name, text, "value")
        except InputError as exc:
            raise argparse.ArgumentTypeError(
                f"{quoted(_printable(text))} is not allowed: expected {exc.allowed}"
            ) from None

    parse.__name__ = name.replace("_", " ")
    return parse


def bounded_int(low: int, high: int):
    """An argparse type: an integer from ``low`` to ``high``."""

    def parse(text: str) -> int:
        return _typed(Count, text, low=low, high=high)

    parse.__name__ = f"integer {low}..{high}"
    return parse


def catalog_name(text: str) -> str:
    """A catalog id or name: not empty, printable, at most 200 characters."""
    value = _printable(text).strip()
    if not value:
        raise argparse.ArgumentTypeError("an empty value is not allowed: give an id from `python -m planner catalog`")
    if len(value) > MAX_NAME_CHARS or not value.isprintable():
        raise argparse.ArgumentTypeError(
            f"{value[:40]!r}… is not an id: expected at most {MAX_NAME_CHARS} printable characters"
        )
    return value


def path_arg(text: str) -> str:
    """A file or folder argument: not empty (existence and size are checked where it is read)."""
    if not text or not text.strip():
        raise argparse.ArgumentTypeError("an empty path is not allowed")
    return text


def export_path(text: str) -> Path:
    """An export file checked before any work: known suffix, sane name, existing writable folder."""
    try:
        return check_output_path(text, field="export", suffixes=EXPORT_SUFFIXES)
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"{shown_path(text)[:120]!r} is not allowed: expected {exc.allowed}") from None


def _printable(text: str) -> str:
    """Command-line text that can be printed (undecodable bytes become U+FFFD)."""
    return text.encode("utf-8", errors="replace").decode("utf-8") if isinstance(text, str) else str(text)


def percentile(text: str) -> float:
    """A percentile in (0, 100] (a text that is not one at all is refused with the same bounds)."""
    try:
        value = positive_float(text)
    except argparse.ArgumentTypeError:
        value = math.nan
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(
            f"{quoted(_printable(text))} is not allowed: expected a percentile in (0, 100]"
        )
    return value


#: ``--slo-preset none``: no objective but the ones given in milliseconds.
NO_PRESET = "none"


def add_objective_args(parser: argparse.ArgumentParser) -> None:
    """The latency objectives a quote and a search hold the traffic to, with the Fleet and Explore pages' defaults
    (``planner.defaults``): a preset, either objective in milliseconds over it, and the percentile."""
    presets = ", ".join(f"{name} (TTFT {ttft * 1e3:,.0f} ms, TPOT {tpot * 1e3:,.0f} ms)" for name, (ttft, tpot) in
                        SLO_PRESETS.items())  # fmt: skip
    parser.add_argument(
        "--slo-preset",
        choices=(*SLO_PRESETS, NO_PRESET),
        default=DEFAULT_SLO_PRESET,
        help=f"MLPerf-style objectives: {presets}, or none (only those given below); default {DEFAULT_SLO_PRESET}",
    )
    parser.add_argument(
        "--ttft-slo-ms", type=positive_float, help="time-to-first-token objective (overrides the preset's)"
    )
    parser.add_argument(
        "--tpot-slo-ms", type=positive_float, help="time-per-output-token objective (overrides the preset's)"
    )
    parser.add_argument(
        "--percentile",
        type=percentile,
        default=OBJECTIVE_PERCENTILE,
        help=f"percentile the objectives hold at (default {OBJECTIVE_PERCENTILE:g})",
    )


def objectives_from_args(args: argparse.Namespace) -> tuple[float | None, float | None]:
    """(TTFT s, TPOT s) of :func:`add_objective_args`' arguments: each given one, else the preset's (None: none)."""
    ttft_s, tpot_s = SLO_PRESETS.get(args.slo_preset, (None, None))
    return (
        args.ttft_slo_ms / 1e3 if args.ttft_slo_ms else ttft_s,
        args.tpot_slo_ms / 1e3 if args.tpot_slo_ms else tpot_s,
    )


def add_model_args(parser: argparse.ArgumentParser, name: str = "model", required: bool = True) -> None:
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument(
        f"--{name}", metavar="ID", type=catalog_name, help="catalog id, e.g. meta-llama/Llama-3.1-70B or Llama-3.1-70B"
    )
    group.add_argument(
        f"--{name}-config" if name != "model" else "--config",
        metavar="PATH",
        type=path_arg,
        dest=f"{name}_config",
        help="a Hugging Face config.json or a model folder",
    )


def model_from_args(args: argparse.Namespace, name: str = "model") -> ModelSpec | None:
    model_id = getattr(args, name, None)
    config = getattr(args, f"{name}_config", None)
    if model_id is None and config is None:
        return None
    return resolve_model(model_id, config, field=name)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")


def emit(args: argparse.Namespace, payload: dict[str, Any], lines: list[str]) -> None:
    if getattr(args, "json", False):
        json.dump(payload, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(lines) + "\n")


def write_report(report, path_text: str | Path) -> None:
    """Write a planner.reports.document.Report in the format its suffix names, whole or not at all.

    The path was checked when the arguments were read (:func:`export_path`); a failure while writing
    (disk full, folder removed meanwhile) is one line naming ``--export``, never the temporary file.
    """
    path = check_output_path(str(path_text), field="export", suffixes=EXPORT_SUFFIXES)
    data = report.export(path.suffix.lstrip(".").lower())
    try:
        handle, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=".export-", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                chmod_as_created(out.fileno())  # mkstemp makes 0600; an export is an ordinary file
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError("export", shown_path(path), f"a file that can be written ({exc.strerror or exc})") from None
    sys.stderr.write(f"wrote {shown_path(path)}\n")


USER_ENV = "PLANNER_USER"
USER_NAME_ENV = "PLANNER_USER_NAME"
MAX_ID_CHARS = 255


def _checked(env: str, text: str) -> str:
    text = text.strip()
    if not text or len(text) > MAX_ID_CHARS or any(not c.isprintable() for c in text):
        raise InputError(env, text, f"printable text of 1 to {MAX_ID_CHARS} characters (or unset: this machine)")
    return text


def cli_actor(environ: Mapping[str, str] | None = None) -> Actor:
    """Who the CLI acts as in the store: the person ``PLANNER_USER`` names (their id as the identity provider gives
    it, the ``owner_id`` that ``saved list --json`` prints; ``PLANNER_USER_NAME`` the name their saves show, default
    the id), else this machine (:data:`~planner.validation.LOCAL_ACTOR`, the app's single user without sign-in).
    Whoever can reach the database can act as anyone: the CLI trusts these variables as the database trusts its
    credentials.

    >>> cli_actor({}).id
    'local'
    >>> cli_actor({"PLANNER_USER": "oidc|ada", "PLANNER_USER_NAME": "Ada"}).name
    'Ada'
    """
    from planner.validation import LOCAL_ACTOR, Actor  # noqa: PLC0415 (the store loads only for commands using it)

    environ = os.environ if environ is None else environ
    user = environ.get(USER_ENV)
    if user is None or not user.strip():
        return LOCAL_ACTOR
    user = _checked(USER_ENV, user)
    name = _checked(USER_NAME_ENV, environ.get(USER_NAME_ENV) or user)
    return Actor(id=user, name=name)
