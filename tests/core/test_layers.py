"""The core is layered: each sub-package imports only from the layers below it, and no import forms a cycle.

The order is the one docs/architecture.md draws. Imports inside functions count too (they are allowed
only for heavy optional libraries, which ruff's PLC0415 enforces).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Lowest first. A module may import its own layer's modules and any lower layer, never a higher one.
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "planner.errors",
        "planner.units",
        "planner.facts",
        "planner.defaults",
        "planner.acceptance_math",
        "planner.user_files",
        "planner.input_types",
    ),
    ("planner.model",),
    ("planner.catalog",),
    ("planner.pairs",),
    ("planner.deployment",),
    ("planner.engines",),
    ("planner.memory",),
    ("planner.speed",),
    ("planner.decisions",),
    ("planner.scenario",),
    ("planner.launch",),
    ("planner.store",),
    ("planner.validation",),
    ("planner.measure",),
    ("planner.reports",),
    ("planner.cli", "planner.__main__", "planner"),
)


def layer_of(module: str) -> int:
    best = (-1, -1)
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                best = max(best, (len(prefix), index))
    assert best[1] >= 0, f"{module} is in no layer: add it to LAYERS and docs/architecture.md"
    return best[1]


def modules() -> dict[str, Path]:
    found = {}
    for path in (ROOT / "planner").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """planner modules imported anywhere in the file (resolved to the deepest module that exists)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        candidates: list[str] = []
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            candidates = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for candidate in candidates:
            target = candidate
            while target and target not in known:
                target = target.rsplit(".", 1)[0] if "." in target else ""
            if target and target != name and target.startswith("planner"):
                targets.add(target)
                break
    return targets


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def test_every_module_imports_only_its_own_or_lower_layers():
    graph = import_graph()
    upward = [
        f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
        for module, targets in graph.items()
        for target in targets
        if target != "planner" and layer_of(target) > layer_of(module)
    ]
    assert not upward, "\n".join(sorted(upward))


def test_no_import_cycles():
    graph = import_graph()
    # a package's __init__ re-exports its modules; importing a sibling module never needs the package itself
    edges = {m: {t for t in ts if not (graph.get(t) is not None and m.startswith(t + "."))} for m, ts in graph.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_layer_check_catches_an_upward_import(tmp_path):
    """The checker itself can fail: a model-layer file importing the memory plan is reported."""
    fake = tmp_path / "planner" / "model"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text("from planner.memory.plan import plan_memory\n")
    known = {**modules(), "planner.model.bad": fake / "bad.py"}
    targets = imports_of("planner.model.bad", fake / "bad.py", known)
    assert "planner.memory.plan" in targets
    assert layer_of("planner.memory.plan") > layer_of("planner.model.bad")
