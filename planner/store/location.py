"""Where the store lives: a SQLite file under the planner's home (the default), or a database server by URL.

``PLANNER_DATABASE_URL`` names a server shared by a team (``postgresql://user:password@host:5432/planner``,
driven by psycopg 3); without it the store is one SQLite file, ``store.sqlite3`` in the planner's home
(:func:`planner.user_files.planner_home`), or ``PLANNER_STORE_PATH``. Every store function also takes an explicit
``path``: a SQLite file, or a database URL.

>>> database_url("/tmp/s.sqlite3")
'sqlite:////tmp/s.sqlite3'
>>> database_url("postgresql://planner:secret@127.0.0.1:5432/planner")
'postgresql+psycopg://planner:secret@127.0.0.1:5432/planner'
>>> shown_url("postgresql+psycopg://planner:secret@127.0.0.1:5432/planner")
'postgresql+psycopg://planner:***@127.0.0.1:5432/planner'
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from planner.user_files import planner_home

STORE_ENV = "PLANNER_STORE_PATH"
DATABASE_URL_ENV = "PLANNER_DATABASE_URL"
STORE_FILE = "store.sqlite3"
#: URL schemes of the database servers the store runs on (besides SQLite files).
SERVER_SCHEMES = ("postgresql", "postgres")


def store_path() -> Path:
    """The SQLite file used when no database URL is set."""
    return Path(os.environ.get(STORE_ENV) or planner_home() / STORE_FILE)


def is_url(where: str | Path) -> bool:
    return isinstance(where, str) and "://" in where


def database_url(where: str | Path | None = None) -> str:
    """The SQLAlchemy URL of the store at ``where`` (a file or a URL), else of the configured one."""
    if where is None:
        where = os.environ.get(DATABASE_URL_ENV) or store_path()
    if not is_url(where):
        return f"sqlite:///{Path(where)}"
    scheme, rest = str(where).split("://", 1)
    if scheme in SERVER_SCHEMES:  # the plain form people write; the store drives PostgreSQL with psycopg 3
        return f"postgresql+psycopg://{rest}"
    return str(where)


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (None for a server)."""
    return Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None


def shown_url(url: str) -> str:
    """A URL as it may be printed: the password hidden."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)
