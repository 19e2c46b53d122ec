"""judged rules: the redaction rules that found nothing in a judged row when the recorder kept it

The recorder reads each judged row with the redaction rules before it keeps it and, when they find
nothing in it on their own, names those rules (cronctl.redact.rules_id). history takes such rows as
settled when it runs the same rules: a 90-day history no longer reads 13,000 rows for secrets again.
Other rows (NULL: one that holds something, or written before this column) are read as before.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-06
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('slots', sa.Column('judged_rules', sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('slots') as batch:
        batch.drop_column('judged_rules')
