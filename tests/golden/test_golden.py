"""Every number the CLI prints for ten pinned scenarios is unchanged (wording may change)."""

from __future__ import annotations

import json

import pytest

from tests.golden.scenarios import GOLDEN_DIR, SCENARIOS, run_cli


def numbers(node, path="$"):
    """Every non-string leaf of a JSON document with its path (strings are wording, not numbers)."""
    if isinstance(node, dict):
        for key in sorted(node):
            yield from numbers(node[key], f"{path}.{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from numbers(item, f"{path}[{i}]")
    elif not isinstance(node, str):
        yield path, node


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_numbers_unchanged(name):
    expected = dict(numbers(json.loads((GOLDEN_DIR / f"{name}.json").read_text())))
    actual = dict(numbers(json.loads(run_cli(SCENARIOS[name]))))
    changed = {
        p: (expected.get(p), actual.get(p)) for p in expected.keys() | actual.keys() if expected.get(p) != actual.get(p)
    }
    assert not changed, f"{len(changed)} numbers changed, e.g. {sorted(changed.items())[:5]}"
