"""House rules a test can see: the core imports fast and light; doctests (worked examples) hold."""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
import subprocess
import sys

import pytest

import planner

CORE_MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(planner.__path__, "planner.")
    if not name.startswith("planner.measure") and name != "planner.__main__"
)


@pytest.mark.slow  # a fresh interpreter
def test_core_imports_without_torch_transformers_or_streamlit(repo):
    code = (
        "import sys, importlib\n"
        f"for m in {CORE_MODULES!r}: importlib.import_module(m)\n"
        "heavy = [m for m in ('torch', 'transformers', 'streamlit', 'pynvml') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True)
    assert out.stdout.strip() == ""


def test_nothing_takes_names_from_transformers_lazy_top_level_package(repo):
    """``from transformers import AutoConfig`` resolves the name through transformers' lazy module, which is not
    thread-safe: two threads importing it at once (a page's search beside a background plan) can get "cannot
    import name". The defining submodule (``transformers.models.auto.configuration_auto``) is a plain import."""
    offenders = []
    for folder in ("planner", "ui", "bench", "tools"):
        for path in (repo / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "transformers":
                    offenders.append(f"{path.relative_to(repo)}:{node.lineno}")
    assert not offenders, offenders


def test_a_browser_session_is_told_by_its_headers_never_by_its_public_link(repo):
    """The scenario link is empty on a server without a public address (127.0.0.1, a test server): a page that
    took an empty link for "no browser" skipped its browser-only work there (the Fleet warm-up, the chart
    browser started ahead of a download). ``ui._background.browser_session`` asks the request headers."""
    offenders = []
    for path in (repo / "ui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            test = getattr(node, "test", None)
            for call in ast.walk(test) if test is not None else ():
                if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "scenario_link":
                    offenders.append(f"{path.relative_to(repo)}:{call.lineno}")
    assert not offenders, offenders


def test_no_core_module_imports_streamlit(repo):
    for path in (repo / "planner").rglob("*.py"):
        text = path.read_text()
        assert "import streamlit" not in text and "from streamlit" not in text, path


#: Worked examples that reach transformers (the meta device, or the whole catalog through it).
TORCH_EXAMPLES = {"planner.decisions.selection", "planner.model.meta_device"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.torch) if n in TORCH_EXAMPLES else n for n in CORE_MODULES]
)
def test_worked_examples_in_docstrings(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
