"""Owners and sharing: every saved scenario, quote and imported model gets an id, an owner, a visibility,
changed time and changer, a version counter and a deleted time (deletion is soft, kept 30 days); an audit
table records who created, changed, shared, exported, deleted and restored what.

Rows written before (revision 0001, or a store from before Alembic) are kept intact and owned by this
machine (``local``) with visibility ``team``, so a single user's existing work stays visible to them and,
once sign-in is configured, to the team; their changed time is their created time, and each gets a
"created" audit row. Names are unique per owner regardless of case among items not deleted (a partial
unique index on ``(owner_id, lower(name))``); an imported config is held once per owner
(``(owner_id, config_sha256)``). Each table is rebuilt (create, copy, drop, rename) because SQLite cannot
change a primary key in place; the copy runs inside the migration's one transaction.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

#: Item kind -> (table, its content columns after ``name``, in their 0001 order).
ITEMS = {
    "scenario": ("scenarios", ("notes", "created_at", "json")),
    "model": ("custom_models", ("config_sha256", "created_at", "json")),
    "quote": ("quotes", ("notes", "created_at", "scenario", "json")),
}
#: The owner of every row written before owners were recorded (planner.validation.actor.LOCAL_ACTOR).
LOCAL_ID, LOCAL_NAME = "local", "this machine"


def _ownership_columns() -> list[sa.Column]:
    return [
        sa.Column("owner_id", sa.Text, nullable=False, server_default=LOCAL_ID),
        sa.Column("owner_name", sa.Text, nullable=False, server_default=LOCAL_NAME),
        sa.Column("visibility", sa.Text, nullable=False, server_default="team"),
        sa.Column("changed_at", sa.Text, nullable=True),
        sa.Column("changed_by_id", sa.Text, nullable=True),
        sa.Column("changed_by_name", sa.Text, nullable=True),
        sa.Column("version", sa.Integer, nullable=False, server_default="1"),
        sa.Column("deleted_at", sa.Text, nullable=True),
        sa.Column("deleted_by_name", sa.Text, nullable=True),
        sa.CheckConstraint("visibility IN ('private', 'team')"),
    ]


def _rebuild(kind: str, table: str, content: tuple[str, ...]) -> None:
    new = f"{table}_owned"
    op.create_table(
        new,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.Text, nullable=False),
        *(sa.Column(c, sa.Text, nullable=False) for c in content),
        *_ownership_columns(),
        sqlite_autoincrement=True,
    )
    kept = ", ".join(("name", *content))
    op.execute(
        f"INSERT INTO {new} ({kept}, owner_id, owner_name, visibility, changed_at, changed_by_id, changed_by_name, "
        f"version) SELECT {kept}, '{LOCAL_ID}', '{LOCAL_NAME}', 'team', created_at, '{LOCAL_ID}', '{LOCAL_NAME}', 1 "
        f"FROM {table} ORDER BY created_at, name"
    )
    op.execute(
        f"INSERT INTO audit_trail (kind, item_id, name, action, actor_id, actor_name, at, detail) "
        f"SELECT '{kind}', id, name, 'created', '{LOCAL_ID}', '{LOCAL_NAME}', created_at, "
        f"'saved before owners were recorded' FROM {new} ORDER BY id"
    )
    op.drop_table(table)
    op.rename_table(new, table)
    op.execute(f"CREATE UNIQUE INDEX {table}_owner_name ON {table} (owner_id, lower(name)) WHERE deleted_at IS NULL")
    op.execute(f"CREATE INDEX {table}_deleted ON {table} (deleted_at)")
    if table == "custom_models":
        op.execute(
            "CREATE UNIQUE INDEX custom_models_owner_config ON custom_models (owner_id, config_sha256) "
            "WHERE deleted_at IS NULL"
        )


def upgrade() -> None:
    op.create_table(
        "audit_trail",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("item_id", sa.Integer, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("action", sa.Text, nullable=False),
        sa.Column("actor_id", sa.Text, nullable=False),
        sa.Column("actor_name", sa.Text, nullable=False),
        sa.Column("at", sa.Text, nullable=False),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
        sqlite_autoincrement=True,
    )
    op.execute("CREATE INDEX audit_trail_item ON audit_trail (kind, item_id)")
    for kind, (table, content) in ITEMS.items():
        _rebuild(kind, table, content)


def downgrade() -> None:
    raise NotImplementedError("owners, versions and the audit trail cannot be removed without losing them")
