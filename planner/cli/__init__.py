"""``python -m planner``: the command-line face of the core.

Every command prints a readable summary, or with ``--json`` one JSON object on stdout. Bad input
exits with code 2 and one line on stderr naming the field; nothing else is printed.
Each command lives in its own module and registers itself in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings
from collections.abc import Sequence

from planner.errors import MAX_QUOTED_CHARS, PlannerError

#: Modules under planner.cli that each define ``register(subparsers)``.
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
)


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        sys.stderr.write(f"error: {_one_line(message)} (see `{self.prog} --help`)\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m planner", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for name in COMMANDS:
        importlib.import_module(f"planner.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
