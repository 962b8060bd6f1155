"""Hostile command lines, in process: error lines quote at most 100 characters of any input, exports are
ordinary files (0666 less the umask, as ``open()`` makes them)."""

from __future__ import annotations

import argparse
import os
import stat

import pytest

from planner.cli import main
from planner.cli.common import percentile
from planner.errors import MAX_QUOTED_CHARS

LONG = "x" * 5000
SPACED = "a b " * 1000
BASE = ("size", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", "--tp", "1")


@pytest.mark.parametrize(
    "args",
    [
        ("size", "--target", LONG, "--node", "1x-h100-sxm-80gb"),
        (*BASE, "--engine", LONG),
        (*BASE, "--engine-version", LONG),
        (*BASE, "--max-model-len", LONG),
        (*BASE, "--memory-fraction", LONG),
        (*BASE, "--kv-dtype", LONG),
        (*BASE, "--dtype", "'" + SPACED + "'"),
        ("simulate", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", "--request-rate", LONG),
        ("params", "--model", LONG),
        (LONG,),
    ],
    ids=lambda a: " ".join(x[:12] for x in a[:4]),
)
def test_an_error_line_quotes_at_most_100_characters_of_the_input(capsys, args):
    with pytest.raises(SystemExit) if args == (LONG,) else _ExitTwoAllowed():
        code = main(list(args))
        assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "x" * (MAX_QUOTED_CHARS + 1) not in err
    assert "a b " * (MAX_QUOTED_CHARS // 4 + 1) not in err


class _ExitTwoAllowed:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is SystemExit:  # argparse refused the value: exit code 2 as well
            assert exc[1].code == 2
            return True
        return False


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_an_export_has_the_mode_a_plain_open_would_give(tmp_path, capsys, umask):
    old = os.umask(umask)
    try:
        out = tmp_path / "report.md"
        assert main([*BASE, "--export", str(out)]) == 0
        plain = tmp_path / "plain.txt"
        plain.write_text("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode) == 0o666 & ~umask


@pytest.mark.parametrize("text", ["0", "-1", "abc", "nan", "inf", "100.1", "1e9"])
def test_a_percentile_out_of_range_is_refused_with_its_own_bounds(text):
    """Whatever is wrong with it (not a number, not positive, over 100), the message names (0, 100]."""
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected a percentile in \(0, 100\]"):
        percentile(text)
    assert percentile("99.9") == 99.9 and percentile("100") == 100
