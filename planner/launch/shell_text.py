"""A command as a copy-paste shell block (one flag a line, comments above), and the command read back from text.

>>> text = shell_block(["vllm", "serve", "org/m", "--max-num-seqs", "8"], ["engine: vllm 0.19.0"])
>>> print(text)
# engine: vllm 0.19.0
vllm serve org/m \\
  --max-num-seqs 8
>>> split_command(text)
(['vllm', 'serve', 'org/m', '--max-num-seqs', '8'], {'engine': 'vllm 0.19.0'})
"""

from __future__ import annotations

import re
import shlex

from planner.errors import InputError

#: Comment lines of the form ``# key: value`` that a reader takes back (the engine and its release).
_MARKER = re.compile(r"^#\s*(engine|options file):\s*(.+?)\s*$")


def shell_block(argv: list[str], comments: list[str], *, head: int | None = None) -> str:
    """``argv`` as lines of ``flag value`` under ``comments`` (``head`` words stay on the first line)."""
    quoted = [shlex.quote(word) for word in argv]
    start = head if head is not None else next((i for i, w in enumerate(argv) if w.startswith("-")), len(argv))
    lines = [" ".join(quoted[:start])]
    index = start
    while index < len(quoted):
        word = quoted[index]
        takes_value = index + 1 < len(quoted) and not argv[index + 1].startswith("--")
        lines.append("  " + (f"{word} {quoted[index + 1]}" if takes_value else word))
        index += 2 if takes_value else 1
    return "\n".join([*(f"# {c}" for c in comments), " \\\n".join(lines)])


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def split_env(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """The ``NAME=value`` words before a command (after an optional ``env``), and the command.

    >>> split_env(["VLLM_USE_V1=0", "vllm", "serve", "m"])
    ({'VLLM_USE_V1': '0'}, ['vllm', 'serve', 'm'])
    """
    rest = words[1:] if words[:1] == ["env"] else list(words)
    env: dict[str, str] = {}
    while rest and _ASSIGNMENT.match(rest[0]):
        name, _, value = rest.pop(0).partition("=")
        env[name] = value
    return env, rest


def split_command(text: str) -> tuple[list[str], dict[str, str]]:
    """The words of the first command in ``text`` and its ``# engine: ...`` style markers."""
    markers: dict[str, str] = {}
    body: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            found = _MARKER.match(stripped)
            if found:
                markers.setdefault(found.group(1), found.group(2))
            continue
        body.append(line)
    joined = re.sub(r"\\\r?\n", " ", "\n".join(body)).strip()
    first = joined.split("\n", 1)[0] if joined else ""
    try:
        words = shlex.split(first)
    except ValueError as exc:
        raise InputError("launch command", first[:80], f"a shell command ({exc})") from None
    if not words:
        raise InputError("launch command", "", "the engine's start command (vllm serve, sglang, trtllm-serve)")
    return words, markers
