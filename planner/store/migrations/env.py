"""Alembic's environment for the planner's store: migrations run on the connection the planner hands over
(already inside its locked transaction, see planner/store/migrate.py)."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
