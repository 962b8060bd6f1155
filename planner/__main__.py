"""Entry point of ``python -m planner``: the command's answer, then an exit without the interpreter's teardown
(planner/interpreter.py)."""

import sys

from planner.interpreter import exit_without_teardown, tune_collector

leaving = exit_without_teardown()

from planner.cli import main  # noqa: E402 (after the exit handler that must run last)

tune_collector()
try:
    code = main()
except SystemExit as stop:  # argparse's own exits (--help: 0, a usage error: 2)
    leaving(stop.code if isinstance(stop.code, int) else int(stop.code is not None))
    raise
sys.exit(leaving(code))
