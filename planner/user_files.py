"""Files a user hands the planner, and where the planner keeps what it writes for the user.

Every file argument (configs, prompts, logs, tokenizers) is read through :func:`read_user_file`: a
regular file (not a folder, device or ``/proc`` entry) under a size cap, read with the cap enforced
while reading. Export paths are checked by :func:`check_output_path` before any work is done.
Runtime files (measurement records, the SQLite store) live under :func:`planner_home`
(``PLANNER_HOME``, default ``~/.local/share/sd-capacity-planner``), created on first write; ``data/``
holds sourced facts only.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> (folder / "a.json").write_text("{}")
2
>>> read_user_file(folder / "a.json", field="config", max_bytes=10, expected="a config.json")
b'{}'
>>> read_user_file(folder, field="config", max_bytes=10, expected="a config.json")
Traceback (most recent call last):
...
planner.errors.InputError: config = '...' is not allowed: expected a config.json; this is a folder, not a file
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from planner.errors import InputError

HOME_ENV = "PLANNER_HOME"
#: The XDG data folder of the planner when PLANNER_HOME is unset.
DEFAULT_HOME = Path("~/.local/share/sd-capacity-planner")
#: Longest file name most file systems accept (ext4, APFS, NTFS: 255 bytes).
MAX_NAME_BYTES = 255


def shown_path(path: str | Path) -> str:
    """A path as text that can always be printed (undecodable bytes become U+FFFD)."""
    return os.fsencode(path).decode("utf-8", errors="replace")


def current_umask() -> int:
    """The process's file-creation mask (read from /proc where it can be, so no other thread sees it change).

    >>> 0 <= current_umask() <= 0o777
    True
    """
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def chmod_as_created(fd: int) -> None:
    """Give a file made by ``tempfile`` (always mode 0600) the mode a plain ``open()`` would: 0666 less the umask."""
    os.fchmod(fd, 0o666 & ~current_umask())


def planner_home() -> Path:
    """Where the planner writes runtime files (created by the writer on first write, never by a reader)."""
    return Path(os.environ.get(HOME_ENV) or DEFAULT_HOME).expanduser()


def read_user_file(path: str | Path, *, field: str, max_bytes: int, expected: str) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; anything else is an ``InputError`` on ``field``."""
    check_user_file(path, field=field, max_bytes=max_bytes, expected=expected)
    shown = shown_path(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(field, shown, f"{expected}; it cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise InputError(field, shown, f"{expected} of at most {_size(max_bytes)}")
    return data


def check_user_file(path: str | Path, *, field: str, max_bytes: int, expected: str) -> None:
    """Raise ``InputError`` unless ``path`` is a regular file of at most ``max_bytes`` (nothing is read)."""
    shown = shown_path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(field, shown, f"{expected}; no such file") from None
    except (OSError, ValueError) as exc:
        raise InputError(
            field, shown, f"{expected}; it cannot be opened ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(field, shown, f"{expected}; this is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(field, shown, f"{expected}; this is not a regular file")
    if info.st_size > max_bytes:
        raise InputError(field, shown, f"{expected} of at most {_size(max_bytes)} (this one: {info.st_size:,} bytes)")
    if not os.access(path, os.R_OK):
        raise InputError(field, shown, f"{expected}; you may not read it")


def _size(count: int) -> str:
    return f"{count / 2**20:g} MiB" if count >= 2**20 else f"{count:,} bytes"


def check_output_path(path_text: str, *, field: str, suffixes: tuple[str, ...]) -> Path:
    """An export path that can be written: known suffix, sane name, existing writable folder; else ``InputError``.

    >>> check_output_path("report.docx", field="output", suffixes=(".md", ".json"))
    Traceback (most recent call last):
    ...
    planner.errors.InputError: output = 'report.docx' is not allowed: expected a file name ending in .md or .json
    """
    shown = shown_path(path_text)
    allowed = " or ".join([", ".join(suffixes[:-1]), suffixes[-1]] if len(suffixes) > 1 else suffixes)
    if not path_text or not str(path_text).strip():
        raise InputError(field, shown, f"a file name ending in {allowed}")
    path = Path(path_text)
    if path.suffix.lower() not in suffixes:
        raise InputError(field, shown, f"a file name ending in {allowed}")
    if len(os.fsencode(path.name)) > MAX_NAME_BYTES:
        raise InputError(field, shown[:80] + "…", f"a file name of at most {MAX_NAME_BYTES} bytes")
    if path.is_dir():
        raise InputError(field, shown, f"a file name ending in {allowed}; this is a folder")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(field, shown, f"a path in an existing folder ({shown_path(folder)} does not exist)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(field, shown, f"a path in a folder you can write to ({shown_path(folder)} is read-only)")
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(field, shown, "a file you can write to (this one is read-only)")
    return path
