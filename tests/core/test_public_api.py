"""One public API: ``planner`` and each sub-package re-export their surface, and the shells use only it.

Pages (ui/*.py, app.py) and CLI commands (planner/cli/*_cmd.py) import from ``planner`` or a
``planner.<package>`` facade, never from a module inside a package; the AST check below says where not.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import planner

ROOT = Path(__file__).resolve().parents[2]
#: The CLI's own helpers a command may import beside the facades.
CLI_HELPERS = {"planner.cli.common", "planner.cli.deployment_args"}
#: Every package under planner/ (a facade: its ``__init__`` re-exports the package's surface).
PACKAGES = sorted(name for _, name, is_pkg in pkgutil.walk_packages(planner.__path__, "planner.") if is_pkg)


def shell_files() -> list[Path]:
    return [
        ROOT / "app.py",
        *sorted((ROOT / "ui").glob("*.py")),
        *sorted((ROOT / "planner" / "cli").glob("*_cmd.py")),
    ]


def deep_imports(source: str) -> list[str]:
    """``planner`` imports that reach past a facade: 'module' or 'module.name' for each offence."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [(node.module, [a.name for a in node.names])]
        elif isinstance(node, ast.Import):
            modules = [(a.name, []) for a in node.names]
        else:
            continue
        for module, names in modules:
            if not module.startswith("planner") or module in CLI_HELPERS:
                continue
            if module in PACKAGES:
                surface = set(importlib.import_module(module).__all__)
                found += [f"{module}.{name}" for name in names if name not in surface]
            elif module.count(".") > 1:
                found.append(module)
            elif module == "planner":
                found += [f"planner.{n}" for n in names if n not in planner.__all__ and f"planner.{n}" not in PACKAGES]
    return found


@pytest.mark.parametrize("path", shell_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_pages_and_commands_import_only_the_public_api(path):
    offences = deep_imports(path.read_text())
    assert not offences, f"{path.relative_to(ROOT)} imports past the facades: {offences}"


def test_the_check_catches_a_deep_import():
    source = (
        "from planner.pairs.compatibility import check_pair\n"
        "import planner.speed.estimate\n"
        "from planner.pairs import _parity\n"
        "from planner import check_pair, catalog\n"
        "from planner.cli.common import emit\n"
    )
    assert deep_imports(source) == ["planner.pairs.compatibility", "planner.speed.estimate", "planner.pairs._parity"]


def test_every_public_name_resolves_to_its_owner():
    for name in planner.__all__:
        assert getattr(planner, name) is not None, name
    assert set(planner.__all__) - {"__version__"} == set(planner._OWNER)
    assert planner.check_pair is importlib.import_module("planner.pairs").check_pair
    with pytest.raises(AttributeError):
        _ = planner.no_such_name


@pytest.mark.parametrize("package", [p for p in PACKAGES if p != "planner.cli"])  # the CLI's surface: its commands
def test_every_package_declares_its_surface(package):
    module = importlib.import_module(package)
    assert module.__all__, package
    for name in module.__all__:
        assert hasattr(module, name) or name in getattr(module, "_HEAVY", {}), f"{package}.{name}"


def test_importing_planner_loads_no_sub_package(repo=ROOT):
    code = "import sys, planner\nprint(sorted(m for m in sys.modules if m.startswith(('planner.', 'pandas', 'torch'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True)
    assert out.stdout.strip() == "[]"
