"""The store's schema, brought to the newest revision with Alembic (``planner/store/migrations/versions``).

A store written before Alembic (SQLite, tables ``measurements``, ``scenarios``, ``custom_models`` and ``quotes``
under a ``schema_version`` table) upgrades in place: the first revision creates only the tables a store lacks and
keeps every row. Revisions run in one transaction that holds the write lock first (SQLite ``BEGIN IMMEDIATE``,
a PostgreSQL advisory lock), so processes creating or upgrading a store at once apply each revision exactly once.
A store already at :data:`HEAD` is recognised with one query, without loading Alembic.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, inspect, text

#: The newest revision in ``migrations/versions`` (a test keeps it equal to Alembic's head).
HEAD = "0002"
MIGRATIONS = Path(__file__).with_name("migrations")
#: The advisory-lock key PostgreSQL migrations hold (any constant shared by every app server).
MIGRATION_LOCK_KEY = 726_417_001


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def alembic_config():
    from alembic.config import Config  # noqa: PLC0415 (Alembic loads only when a store needs migrating)

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def upgrade(engine: Engine) -> None:
    """Apply every revision the store lacks, under the write lock."""
    if current_revision(engine) == HEAD:
        return
    from alembic import command  # noqa: PLC0415

    config = alembic_config()
    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        if sqlite:
            conn.info["begin"] = "BEGIN IMMEDIATE"
        with conn.begin():
            if not sqlite:
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
