"""Alembic's environment for the ledger: always run from code (:func:`cronctl.ledger.store.migrate`),
on the connection it is handed, never from an alembic.ini."""

from __future__ import annotations

from alembic import context

from cronctl.ledger.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
