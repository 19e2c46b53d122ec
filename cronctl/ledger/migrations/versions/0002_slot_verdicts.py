"""slot verdicts: the recorder judges every expected slot once it is closed and keeps the verdict

A slot row existed only for a slot with a Job; the recorder now writes one for every slot the
schedule named, with its verdict, reason, when it was judged and the judged row itself (what
history prints for it), so that history over a long window reads the closed slots instead of judging
them again (the reconciler of docs/LEDGER.md).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-06
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('slots') as batch:
        batch.add_column(sa.Column('verdict', sa.String(length=32), nullable=True))
        batch.add_column(sa.Column('reason', sa.Text(), nullable=True))
        batch.add_column(sa.Column('closed_at', sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column('judged', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'),
                                   nullable=True))
    op.create_index('ix_slots_closed', 'slots', ['cluster', 'cronjob_uid', 'closed_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_slots_closed', table_name='slots')
    with op.batch_alter_table('slots') as batch:
        batch.drop_column('judged')
        batch.drop_column('closed_at')
        batch.drop_column('reason')
        batch.drop_column('verdict')
