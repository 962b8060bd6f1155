"""A planner process ends without the interpreter's teardown, yet with its exit code, its whole output and every
exit handler run (planner/interpreter.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(body: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = textwrap.dedent(
        f"""
        import atexit, sys
        from pathlib import Path
        from planner.interpreter import exit_without_teardown, tune_collector
        leaving = exit_without_teardown()
        tune_collector()
        atexit.register(lambda: Path({str(tmp_path / "closed")!r}).write_text("closed"))
        sys.stdout.write("answer " * 20000)  # more than a pipe's buffer, no newline: flushed on the way out
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script + textwrap.dedent(body)], cwd=REPO, capture_output=True, text=True, check=False
    )


def test_the_exit_code_the_output_and_later_exit_handlers_survive(tmp_path):
    done = _run("sys.exit(leaving(3))", tmp_path)
    assert done.returncode == 3
    assert done.stdout == "answer " * 20000
    assert (tmp_path / "closed").read_text() == "closed"  # a handler registered later (the chart browser's) ran


def test_an_exception_that_escapes_exits_1_with_its_traceback(tmp_path):
    done = _run("raise RuntimeError('boom')", tmp_path)
    assert done.returncode == 1
    assert "RuntimeError: boom" in done.stderr and (tmp_path / "closed").exists()


def test_the_command_line_exits_with_its_codes():
    ok = subprocess.run([sys.executable, "-m", "planner", "params", "--model", "Llama-3.1-8B"], cwd=REPO,
                        capture_output=True, text=True, check=False)  # fmt: skip
    assert ok.returncode == 0 and "Llama-3.1-8B" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "planner", "params", "--model", "no-such-model"], cwd=REPO,
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.startswith("error:")


def test_the_command_lines_own_exits_keep_their_codes():
    """argparse leaves through SystemExit inside the command: --help exits 0, a usage error 2."""
    shown = subprocess.run([sys.executable, "-m", "planner", "--help"], cwd=REPO, capture_output=True, text=True,
                           check=False)  # fmt: skip
    assert shown.returncode == 0 and "usage" in shown.stdout
    usage = subprocess.run([sys.executable, "-m", "planner", "kv", "--model", "Llama-3.1-70B", "--tp", "0"], cwd=REPO,
                           capture_output=True, text=True, check=False)  # fmt: skip
    assert usage.returncode == 2 and usage.stderr.startswith("error:")
