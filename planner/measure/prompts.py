"""Prompt datasets for measurements: JSONL files of ``{"prompt": ..., "task": ...}`` lines.

The default set is one small file per task in ``data/prompts/`` (chat, code, summarisation),
written for this project. A record stores the sha256 of the exact bytes it ran on, so two runs
can be compared only when their prompts were the same.

>>> prompts = load_prompts()
>>> sorted(prompts.tasks), len(prompts.prompts) >= 15, len(prompts.sha256)
(['chat', 'code', 'summarisation'], True, 64)
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from planner.errors import InputError
from planner.facts import data_dir
from planner.user_files import read_user_file

DEFAULT_TASKS = ("chat", "code", "summarisation")


class Prompt(BaseModel):
    prompt: str
    task: str


class PromptSet(BaseModel):
    prompts: list[Prompt]
    files: list[str]
    sha256: str

    @property
    def tasks(self) -> dict[str, int]:
        """Prompts per task."""
        return dict(Counter(p.task for p in self.prompts))

    def limited(self, per_task: int) -> PromptSet:
        """The first ``per_task`` prompts of each task (same files and hash: a documented subset)."""
        seen: Counter[str] = Counter()
        kept = []
        for p in self.prompts:
            if seen[p.task] < per_task:
                kept.append(p)
                seen[p.task] += 1
        return self.model_copy(update={"prompts": kept})


def default_prompt_files() -> list[Path]:
    return [data_dir() / "prompts" / f"{task}.jsonl" for task in DEFAULT_TASKS]


def _parse_line(line: str, where: str) -> Prompt:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError("prompts", where, f"a JSON object per line ({exc.msg})") from None
    if not isinstance(value, dict):
        raise InputError("prompts", where, 'a JSON object {"prompt": ..., "task": ...} per line')
    prompt, task = value.get("prompt"), value.get("task")
    if not isinstance(prompt, str) or not prompt.strip():
        raise InputError("prompts", where, 'a non-empty "prompt" string on every line')
    if not isinstance(task, str) or not task.strip():
        raise InputError("prompts", where, 'a non-empty "task" string (e.g. chat, code, summarisation) on every line')
    return Prompt(prompt=prompt, task=task.strip())


#: The largest prompts file read (the shipped sets are a few KB; 16 MiB is thousands of long prompts).
MAX_PROMPTS_BYTES = 16 * 2**20


def load_prompts(paths: list[str | Path] | str | Path | None = None) -> PromptSet:
    """Read one or more JSONL files (default: ``data/prompts/*.jsonl`` of the three tasks)."""
    if paths is None:
        files = default_prompt_files()
    elif isinstance(paths, str | Path):
        files = [Path(paths)]
    else:
        files = [Path(p) for p in paths]
    digest = hashlib.sha256()
    prompts: list[Prompt] = []
    for path in files:
        raw = read_user_file(path, field="prompts", max_bytes=MAX_PROMPTS_BYTES, expected="a JSONL file of prompts")
        digest.update(raw)
        for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
            if line.strip():
                prompts.append(_parse_line(line, f"{path.name} line {number}"))
    if not prompts:
        raise InputError("prompts", ", ".join(map(str, files)), "at least one prompt")
    return PromptSet(prompts=prompts, files=[str(p) for p in files], sha256=digest.hexdigest())
