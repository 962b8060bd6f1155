"""The CLI imports only the command it runs; ``--help`` still lists every command."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest

from planner.cli import COMMANDS, OneLineParser, build_parser, command_synopsis
from tests.conftest import REPO, run_cli

#: Libraries a light command must not load (each costs 0.1-1 s of a call).
HEAVY = ("pandas", "plotly", "streamlit", "torch", "transformers", "openpyxl", "kaleido", "numpy")

_PROBE = """
import json, sys
from planner.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _modules_loaded_by(*args: str) -> set[str]:
    """Every module a CLI call has imported when it returns, run in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, proc.stderr
    return set(report["modules"])


@pytest.mark.parametrize(
    "args",
    [("params", "--model", "Llama-3.1-8B"), ("kv", "--model", "Llama-3.1-8B", "--json"), ("catalog", "models")],
)
def test_light_commands_load_no_heavy_library(args):
    loaded = {name.split(".")[0] for name in _modules_loaded_by(*args)}
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_params_imports_no_other_command():
    commands = {name for name in _modules_loaded_by("params", "--model", "Llama-3.1-8B") if name.endswith("_cmd")}
    assert commands == {"planner.cli.params_cmd"}


@pytest.mark.parametrize("module", COMMANDS)
def test_each_command_module_names_itself_in_its_first_line(module):
    """The lazy listing reads name and summary from the first line; it must name what register() adds."""
    synopsis = command_synopsis(module)
    assert synopsis is not None, f'planner/cli/{module}.py must start with \'"""``python -m planner NAME``: ...\''
    parser = OneLineParser(prog="p")
    subparsers = parser.add_subparsers(dest="command")
    importlib.import_module(f"planner.cli.{module}").register(subparsers)
    assert list(subparsers.choices) == [synopsis[0]]
    assert synopsis[1]


def test_help_lists_every_command_without_importing_them():
    names = [command_synopsis(module)[0] for module in COMMANDS]
    proc = run_cli("--help", check=True)
    for name in names:
        assert f"    {name} " in proc.stdout


def test_a_stub_command_still_parses_into_its_full_parser():
    """A command chosen in argv is registered in full: its own options parse and its handler is set."""
    args = build_parser(["kv", "--model", "Llama-3.1-8B", "--tp", "2"]).parse_args(
        ["kv", "--model", "Llama-3.1-8B", "--tp", "2"]
    )
    assert args.command == "kv" and args.tp == 2 and callable(args.handler)


def test_subcommand_help_is_its_full_help():
    proc = run_cli("check-pair", "--help", check=True)
    assert "--target" in proc.stdout and "--draft" in proc.stdout
