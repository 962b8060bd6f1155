"""The store: saved scenarios, quotes, imported models and measurements, in SQLite (the default) or PostgreSQL.

SQLAlchemy 2 drives both; Alembic migrations (:mod:`planner.store.migrate`) bring any store, including one
written before migrations existed, to the newest schema. :mod:`planner.validation` holds the rows' meaning;
this package only knows where the store is and how to talk to it.
"""

from planner.store.engine import (
    BUSY_TIMEOUT_S,
    IntegrityError,
    StoreError,
    connect,
    forget_engines,
    is_absent,
    text,
    transaction,
)
from planner.store.location import DATABASE_URL_ENV, STORE_ENV, STORE_FILE, database_url, shown_url, store_path

__all__ = [
    "BUSY_TIMEOUT_S",
    "DATABASE_URL_ENV",
    "STORE_ENV",
    "STORE_FILE",
    "IntegrityError",
    "StoreError",
    "connect",
    "database_url",
    "forget_engines",
    "is_absent",
    "shown_url",
    "store_path",
    "text",
    "transaction",
]
