"""The store's tables as the planner first wrote them: measurements, saved scenarios, imported models, quotes.

Idempotent: a store written before Alembic already holds some or all of these tables (and its own
``schema_version`` table, left as it is); only the missing ones are created, so every row is kept. Names are
unique regardless of case: SQLite collates the key ``NOCASE``; PostgreSQL keeps a unique index on ``lower(name)``.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

#: Table -> its columns in order (the key first) and whether its name is unique regardless of case.
TABLES = {
    "measurements": (("id", "created_at", "gpu", "target", "draft", "json"), False),
    "scenarios": (("name", "notes", "created_at", "json"), True),
    "custom_models": (("name", "config_sha256", "created_at", "json"), True),
    "quotes": (("name", "notes", "created_at", "scenario", "json"), True),
}


def _create(table: str, columns: tuple[str, ...], nocase: bool, sqlite: bool) -> None:
    key, *rest = columns
    collate = " COLLATE NOCASE" if nocase and sqlite else ""
    unique = " UNIQUE" if table == "custom_models" else ""
    body = [f"{key} TEXT PRIMARY KEY{collate}"] + [
        f"{c} TEXT NOT NULL{unique if c == 'config_sha256' else ''}" for c in rest
    ]
    op.execute(f"CREATE TABLE {table} ({', '.join(body)})")
    if nocase and not sqlite:
        op.execute(f"CREATE UNIQUE INDEX {table}_name_nocase ON {table} (lower(name))")


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    existing = set(sa.inspect(bind).get_table_names())
    for table, (columns, nocase) in TABLES.items():
        if table not in existing:
            _create(table, columns, nocase, sqlite)
    if "measurements" not in existing:
        op.execute("CREATE INDEX measurements_by_gpu ON measurements (gpu, target, draft)")


def downgrade() -> None:
    for table in reversed(TABLES):
        op.drop_table(table)
