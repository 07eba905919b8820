"""Alembic environment. Migrations run through ``homing.store.migrate`` (``homing
migrate`` or at start-up), which hands over an open connection."""

from __future__ import annotations

from alembic import context

# ``schema.metadata`` holds every table (it imports the inbound tables too), so
# autogenerate and ``alembic check`` compare the whole schema, never a part of it.
from homing.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations with `homing migrate`, which supplies the connection")

context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
