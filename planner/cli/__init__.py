"""``python -m planner``: the command-line face of the core.

Every command prints a readable summary, or with ``--json`` one JSON object on stdout. Bad input
exits with code 2 and one line on stderr naming the field; nothing else is printed.
Each command lives in its own module and registers itself in :data:`COMMANDS`.

The parser is lazy: only the module of the command being run is imported (``params`` never loads
pandas or plotly). The other commands are listed from the first line of their module's docstring,
``python -m planner NAME ...``: SUMMARY, read as text, so ``--help`` lists them all without importing
any. A module whose first line does not follow that form is imported and registered as before.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from planner.errors import MAX_QUOTED_CHARS, PlannerError

#: Modules under planner.cli that each define ``register(subparsers)``, in the order ``--help`` lists them.
COMMANDS = (
    "params_cmd",
    "kv_cmd",
    "size_cmd",
    "catalog_cmd",
    "speedup_cmd",
    "check_pair_cmd",
    "matrix_cmd",
    "quote_cmd",
    "simulate_cmd",
    "measure_cmd",
    "check_log_cmd",
    "saved_cmd",
    "search_cmd",
    "launch_cmd",
)

#: ``"""``python -m planner params``: exact parameter counts by component."""`` -> ("params", "exact ...").
_SYNOPSIS = re.compile(
    r'^[rRuU]?"""``python -m planner (?P<name>[a-z][a-z0-9-]*)[^`]*``:\s*(?P<summary>.*?)\s*(?:""")?$'
)


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        sys.stderr.write(f"error: {_one_line(message)} (see `{self.prog} --help`)\n")
        raise SystemExit(2)


def command_synopsis(module: str) -> tuple[str, str] | None:
    """(command name, one-line summary) of a command module, read from its first line without importing it.

    >>> command_synopsis("params_cmd")
    ('params', 'exact parameter counts by component')
    """
    try:
        with (Path(__file__).parent / f"{module}.py").open(encoding="utf-8") as source:
            first_line = source.readline().rstrip("\n")
    except OSError:
        return None
    match = _SYNOPSIS.match(first_line)
    return (match["name"], match["summary"].replace("``", "").rstrip(".")) if match else None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: the chosen command registered in full, every other one listed by name.

    Without ``argv`` (or when it names no known command) every command is listed and none imported;
    ``build_parser(["params"])`` imports ``planner.cli.params_cmd`` only.
    """
    parser = OneLineParser(prog="python -m planner", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    chosen = _chosen_command(argv)
    for module in COMMANDS:
        synopsis = command_synopsis(module)
        if synopsis is None or synopsis[0] == chosen:
            importlib.import_module(f"planner.cli.{module}").register(subparsers)
        else:
            subparsers.add_parser(synopsis[0], help=synopsis[1], add_help=False)
    return parser


def _chosen_command(argv: Sequence[str] | None) -> str | None:
    """The first argument that is not an option (the top-level parser has only ``-h``)."""
    for arg in argv or ():
        if not arg.startswith("-"):
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return int(args.handler(args) or 0)
        except PlannerError as exc:
            sys.stderr.write(f"error: {_one_line(str(exc))}\n")
            return 2
        except KeyboardInterrupt:
            sys.stderr.write("error: interrupted\n")
            return 130
        except Exception as exc:
            if os.environ.get("PLANNER_DEBUG"):
                raise
            sys.stderr.write(
                f"internal error: {type(exc).__name__}: {_one_line(str(exc))} (rerun with PLANNER_DEBUG=1)\n"
            )
            return 1


#: A quoted value or an unbroken run longer than MAX_QUOTED_CHARS (argparse quotes a bad choice whole).
_Q = MAX_QUOTED_CHARS
_LONG_QUOTE = re.compile(rf"'[^']{{{_Q - 1},}}'|\"[^\"]{{{_Q - 1},}}\"|\S{{{_Q + 1},}}")
#: The longest error line printed (the message's own words fit well within it).
MAX_LINE_CHARS = 600


def _one_line(text: str) -> str:
    """One printable line quoting at most 100 characters of any input (undecodable bytes become U+FFFD).

    >>> len(_one_line("argument --engine: invalid choice: '" + "x" * 5000 + "'"))
    135
    """
    line = " ".join(text.encode("utf-8", errors="replace").decode("utf-8").split())
    line = _LONG_QUOTE.sub(lambda m: m.group(0)[: MAX_QUOTED_CHARS - 1] + "…", line)
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"
