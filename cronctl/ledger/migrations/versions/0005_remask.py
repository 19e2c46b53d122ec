"""remask: the stored objects and log tails masked again, one redactor per namespace

Until now each object was masked with a redactor of its own, and a log tail with one that had
learned its Job only: a secret from a CronJob's env repeated in an Event or a log was stored as
it was (issue 39). The writes now share one redactor per (cluster, namespace); this migration
masks what an older cronctl kept in the same way, with this cronctl's rules
(cronctl.ledger.store.remask). No schema change.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-07
"""
from __future__ import annotations

from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    from cronctl.ledger.store import remask

    remask(op.get_bind())


def downgrade() -> None:
    pass  # what was masked stays masked
