"""claims: one row per scheduled occurrence of a workflow, written by cronctl claim

cronctl claim runs a Job's COMMAND only after it holds the occurrence's row: inserted under the
unique key (workflow, occurrence), or taken over from an expired lease or a retryable failure with
a fencing token one higher. The row keeps the status, attempt, lease, config version, output
reference, last error, the times of seed 003 (scheduled, Job created, claimed, completed) and the
refusals of duplicate claimers (docs/LEDGER.md, Claims).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-07
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def _ts(name: str, nullable: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        'claims',
        sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), primary_key=True, autoincrement=True),
        sa.Column('workflow', sa.String(length=512), nullable=False),
        _ts('occurrence', False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('attempt', sa.Integer(), nullable=False),
        sa.Column('fencing_token', sa.BigInteger(), nullable=False),
        sa.Column('lease_owner', sa.String(length=512), nullable=False),
        sa.Column('holder_job', sa.String(length=253), nullable=True),
        _ts('lease_expires', False),
        sa.Column('config_version', sa.String(length=253), nullable=True),
        sa.Column('output_ref', sa.Text(), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('exit_code', sa.Integer(), nullable=True),
        _ts('job_created'),
        _ts('first_claimed_at', False), _ts('claimed_at', False),
        _ts('renewed_at'), _ts('completed_at'),
        sa.Column('replay_reason', sa.Text(), nullable=True),
        sa.Column('refusals', sa.Integer(), nullable=False),
        sa.Column('last_refused_by', sa.String(length=512), nullable=True),
        _ts('last_refused_at'),
        _ts('updated_at', False),
        sa.UniqueConstraint('workflow', 'occurrence', name='uq_claims_occurrence'),
    )
    op.create_index('ix_claims_status', 'claims', ['status', 'lease_expires'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_claims_status', table_name='claims')
    op.drop_table('claims')
