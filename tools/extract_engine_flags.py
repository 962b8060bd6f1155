"""Record each engine release's command-line flags from its own argument definitions (``data/engine_flags.json``).

Reads a release's source (the sdist PyPI serves for that release, or a checkout at the release tag) with ``ast``;
nothing is imported or run. For every ``parser.add_argument(...)`` it records the option strings, the value type
(``int``, ``float``, ``str``, ``bool`` for a switch, ``json`` for a dict-typed config), literal choices, and the
line; ``**x_kwargs["field"]`` definitions (vLLM >= 0.8.4) take the type of ``field`` on the config dataclass that
``x_kwargs = get_kwargs(Class)`` names.

Usage: ``python tools/extract_engine_flags.py vllm 0.19.0 SRC_ROOT`` prints that release's JSON entry.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

BOOL_ACTIONS = {"store_true", "store_false", "BooleanOptionalAction"}
TYPE_NAMES = {"int": "int", "float": "float", "str": "str", "nullable_str": "str", "human_readable_int": "int"}


def _literal_strings(node: ast.AST, names: dict[str, list[str]]) -> list[str] | None:
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        out: list[str] = []
        for elt in node.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                out.append(elt.value)
            elif isinstance(elt, ast.Starred) and isinstance(elt.value, ast.Name) and elt.value.id in names:
                out.extend(names[elt.value.id])
        return out
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Subscript) and _name(node.value) == "Literal":
        inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out = [e.value for e in inner if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return out + [c for e in inner if isinstance(e, ast.Name) for c in names.get(e.id, [])]
    return None


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def module_names(files: list[Path]) -> dict[str, list[str]]:
    """Module-level ``NAME = [..]`` / ``NAME = Literal[..]`` string lists across ``files``."""
    names: dict[str, list[str]] = {}
    for path in files:
        tree = ast.parse(path.read_text())
        for node in tree.body:
            target = value = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                target, value = node.target.id, node.value
            if target:
                found = _literal_strings(value, names)
                if found:
                    names[target] = found
    return names


def _annotation_type(node: ast.AST, names: dict[str, list[str]]) -> tuple[str, list[str] | None]:
    """(type, choices) of a dataclass field annotation."""
    text = ast.unparse(node)
    choices = _literal_strings(node, names)
    parts = [p.strip() for p in text.replace("Optional[", "").replace("]", "").split("|")]
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in names and choices is None:
            choices = names[sub.id]
        if isinstance(sub, ast.Subscript) and _name(sub.value) == "Literal" and choices is None:
            choices = _literal_strings(sub, names)
    if "bool" in parts:
        return "bool", None
    if any(p.startswith(("dict", "Dict")) for p in parts) or ("Config" in text and "str" not in parts):
        return "json", None
    for word in ("float", "int"):
        if word in parts or text.startswith(word) or f"[{word}" in text:
            return word, None
    return "str", choices


def dataclass_fields(files: list[Path], names: dict[str, list[str]]) -> dict[str, dict[str, tuple]]:
    classes: dict[str, dict[str, tuple]] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                fields = {}
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        fields[item.target.id] = _annotation_type(item.annotation, names)
                classes[node.name] = fields
    return classes


def argparse_flags(arg_file: Path, names: dict[str, list[str]], classes: dict[str, dict[str, tuple]]) -> list[dict]:
    tree = ast.parse(arg_file.read_text())
    kwargs_of: dict[str, str] = {}
    for node in ast.walk(tree):
        call = node.value if isinstance(node, ast.Assign) else None
        named = isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        if named and isinstance(call, ast.Call) and _name(call.func) == "get_kwargs" and call.args:
            kwargs_of[node.targets[0].id] = _name(call.args[0])
    flags = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _name(node.func) == "add_argument"):
            continue
        options = [a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")]
        if not options:
            continue
        kind, choices = "str", None
        keywords = list(node.keywords)
        for kw in node.keywords:  # **{**x_kwargs["field"], "default": None}
            if kw.arg is None and isinstance(kw.value, ast.Dict):
                pairs = zip(kw.value.keys, kw.value.values, strict=True)
                keywords += [ast.keyword(arg=None, value=v) for k, v in pairs if k is None]
        for kw in keywords:
            if kw.arg is None and isinstance(kw.value, ast.Subscript):
                owner = _name(kw.value.value)
                field = kw.value.slice.value if isinstance(kw.value.slice, ast.Constant) else None
                found = classes.get(kwargs_of.get(owner, ""), {}).get(field)
                if found:
                    kind, choices = found
            elif kw.arg == "type":
                kind = "json" if "json" in ast.unparse(kw.value).lower() else TYPE_NAMES.get(_name(kw.value), "str")
                if isinstance(kw.value, ast.Call) and kw.value.args:  # optional_type(int)
                    kind = TYPE_NAMES.get(_name(kw.value.args[0]), kind)
            elif kw.arg == "action" and BOOL_ACTIONS & {_name(kw.value), getattr(kw.value, "value", "")}:
                kind = "bool"
            elif kw.arg == "choices":
                choices = _literal_strings(kw.value, names)
        entry = {"options": options, "type": kind, "line": node.lineno}
        if choices:
            entry["choices"] = sorted(set(choices))
        flags.append(entry)
    return flags


def main(engine: str, version: str, root: str) -> None:
    base = Path(root)
    if engine == "vllm":
        arg_file = base / "vllm/engine/arg_utils.py"
        config_files = [*sorted((base / "vllm/config").glob("*.py")), base / "vllm/config.py"]
        config_files = [p for p in config_files if p.exists()]
        quant = base / "vllm/model_executor/layers/quantization/__init__.py"
        names = module_names([*config_files, *([quant] if quant.exists() else []), arg_file])
        classes = dataclass_fields([*config_files, arg_file], names)
    else:
        arg_file = base / "sglang/srt/server_args.py"
        names = module_names([arg_file])
        classes = {}
    print(json.dumps(argparse_flags(arg_file, names, classes)))


if __name__ == "__main__":
    main(*sys.argv[1:4])
