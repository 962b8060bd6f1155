"""An argparse parser built from one release's recorded argument definitions: what that release would accept.

>>> from planner.launch.releases import release_for
>>> _, release, _ = release_for("vllm", "0.19.0")
>>> parser, dests = release_parser(release, positional_model=True)
>>> ns = parser.parse_args(["org/model", "--tensor-parallel-size", "2", "--enforce-eager"])
>>> ns.model_tag, getattr(ns, dests["--tensor-parallel-size"]), getattr(ns, dests["--enforce-eager"])
('org/model', 2, True)
"""

from __future__ import annotations

import argparse
import json

from planner.errors import InputError
from planner.launch.releases import EngineRelease

_TYPES = {"int": int, "float": float, "str": str, "json": json.loads}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise InputError("launch command", message, f"flags that {self.prog} accepts")


def release_parser(release: EngineRelease, *, positional_model: bool) -> tuple[argparse.ArgumentParser, dict]:
    """A parser accepting exactly ``release``'s recorded flags, and each option string's ``dest``."""
    parser = _Parser(prog=f"release {release.release}", add_help=False, allow_abbrev=False)
    if positional_model:
        parser.add_argument("model_tag", nargs="?")
    dests: dict[str, str] = {}
    for index, flag in enumerate(release.flags):
        dest = f"flag_{index}"
        if flag.type == "bool":
            action = parser.add_argument(*flag.options, dest=dest, action="store_true")
        else:
            action = parser.add_argument(*flag.options, dest=dest, type=_TYPES[flag.type], choices=flag.choices)
        dests.update(dict.fromkeys(action.option_strings, dest))
    return parser, dests
