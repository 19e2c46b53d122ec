"""event indexes: a CronJob's or Job's events found by the index, not by reading the whole table

The evidence of a CronJob reads the events about it and its Jobs by their uid (and, for writers
that gave none, by the CronJob's name). Without an index on those columns every read of one
CronJob's evidence (each judging of the recorder, each history) read every event the ledger kept.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-06
"""
from __future__ import annotations

from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_events_involved', 'events', ['cluster', 'involved_uid', 'last_time'], unique=False)
    op.create_index('ix_events_involved_name', 'events', ['cluster', 'namespace', 'involved_name'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_events_involved_name', table_name='events')
    op.drop_index('ix_events_involved', table_name='events')
