"""the first ledger: cronjobs, their configs, jobs, slots, events, logs, cursors

Revision ID: 0001
Revises: (none)
Create Date: 2026-12-06
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('cronjob_configs',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('cluster', sa.String(length=253), nullable=False),
    sa.Column('cronjob_uid', sa.String(length=64), nullable=False),
    sa.Column('resource_version', sa.String(length=64), nullable=False),
    sa.Column('observed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('generation', sa.BigInteger(), nullable=True),
    sa.Column('schedule', sa.Text(), nullable=False),
    sa.Column('time_zone', sa.String(length=253), nullable=True),
    sa.Column('suspend', sa.Boolean(), nullable=False),
    sa.Column('suspend_manager', sa.String(length=253), nullable=True),
    sa.Column('suspend_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('concurrency_policy', sa.String(length=32), nullable=False),
    sa.Column('starting_deadline_seconds', sa.BigInteger(), nullable=True),
    sa.Column('successful_limit', sa.Integer(), nullable=False),
    sa.Column('failed_limit', sa.Integer(), nullable=False),
    sa.Column('fingerprint', sa.String(length=32), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('cluster', 'cronjob_uid', 'resource_version', name='uq_configs_version')
    )
    with op.batch_alter_table('cronjob_configs', schema=None) as batch_op:
        batch_op.create_index('ix_configs_cronjob', ['cluster', 'cronjob_uid', 'observed_at'], unique=False)

    op.create_table('cronjobs',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('cluster', sa.String(length=253), nullable=False),
    sa.Column('uid', sa.String(length=64), nullable=False),
    sa.Column('namespace', sa.String(length=253), nullable=False),
    sa.Column('name', sa.String(length=253), nullable=False),
    sa.Column('first_seen', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_seen', sa.DateTime(timezone=True), nullable=False),
    sa.Column('deleted_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('object', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('cluster', 'uid', name='uq_cronjobs_cluster_uid')
    )
    with op.batch_alter_table('cronjobs', schema=None) as batch_op:
        batch_op.create_index('ix_cronjobs_name', ['cluster', 'namespace', 'name'], unique=False)

    op.create_table('cursors',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('cluster', sa.String(length=253), nullable=False),
    sa.Column('resource', sa.String(length=64), nullable=False),
    sa.Column('scope', sa.String(length=253), nullable=False),
    sa.Column('resource_version', sa.String(length=64), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('cluster', 'resource', 'scope', name='uq_cursors')
    )
    op.create_table('events',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('cluster', sa.String(length=253), nullable=False),
    sa.Column('uid', sa.String(length=64), nullable=False),
    sa.Column('namespace', sa.String(length=253), nullable=False),
    sa.Column('involved_kind', sa.String(length=64), nullable=True),
    sa.Column('involved_name', sa.String(length=253), nullable=True),
    sa.Column('involved_uid', sa.String(length=64), nullable=True),
    sa.Column('reason', sa.String(length=128), nullable=True),
    sa.Column('first_time', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_time', sa.DateTime(timezone=True), nullable=True),
    sa.Column('count', sa.Integer(), nullable=True),
    sa.Column('object', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('cluster', 'uid', name='uq_events_cluster_uid')
    )
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index('ix_events_namespace', ['cluster', 'namespace', 'last_time'], unique=False)

    op.create_table('jobs',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('cluster', sa.String(length=253), nullable=False),
    sa.Column('uid', sa.String(length=64), nullable=False),
    sa.Column('namespace', sa.String(length=253), nullable=False),
    sa.Column('name', sa.String(length=253), nullable=False),
    sa.Column('cronjob_uid', sa.String(length=64), nullable=True),
    sa.Column('cronjob_name', sa.String(length=253), nullable=True),
    sa.Column('slot', sa.DateTime(timezone=True), nullable=True),
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.Column('created', sa.DateTime(timezone=True), nullable=True),
    sa.Column('started', sa.DateTime(timezone=True), nullable=True),
    sa.Column('first_running', sa.DateTime(timezone=True), nullable=True),
    sa.Column('completed', sa.DateTime(timezone=True), nullable=True),
    sa.Column('outcome', sa.String(length=16), nullable=True),
    sa.Column('failure_reason', sa.Text(), nullable=True),
    sa.Column('exit_codes', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('deleted_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('object', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('cluster', 'uid', name='uq_jobs_cluster_uid')
    )
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.create_index('ix_jobs_cronjob', ['cluster', 'cronjob_uid', 'created'], unique=False)
        batch_op.create_index('ix_jobs_namespace', ['cluster', 'namespace', 'created'], unique=False)

    op.create_table('logs',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('cluster', sa.String(length=253), nullable=False),
    sa.Column('job_uid', sa.String(length=64), nullable=False),
    sa.Column('namespace', sa.String(length=253), nullable=False),
    sa.Column('job_name', sa.String(length=253), nullable=False),
    sa.Column('pod', sa.String(length=253), nullable=False),
    sa.Column('container', sa.String(length=253), nullable=False),
    sa.Column('taken_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('truncated', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('cluster', 'job_uid', 'pod', 'container', name='uq_logs_container')
    )
    op.create_table('slots',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('cluster', sa.String(length=253), nullable=False),
    sa.Column('cronjob_uid', sa.String(length=64), nullable=False),
    sa.Column('namespace', sa.String(length=253), nullable=False),
    sa.Column('cronjob_name', sa.String(length=253), nullable=False),
    sa.Column('slot', sa.DateTime(timezone=True), nullable=False),
    sa.Column('jobs', sa.Integer(), nullable=False),
    sa.Column('job_name', sa.String(length=253), nullable=True),
    sa.Column('created', sa.DateTime(timezone=True), nullable=True),
    sa.Column('first_running', sa.DateTime(timezone=True), nullable=True),
    sa.Column('completed', sa.DateTime(timezone=True), nullable=True),
    sa.Column('outcome', sa.String(length=16), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('cluster', 'cronjob_uid', 'slot', name='uq_slots_slot')
    )
    with op.batch_alter_table('slots', schema=None) as batch_op:
        batch_op.create_index('ix_slots_name', ['cluster', 'namespace', 'cronjob_name', 'slot'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('slots', schema=None) as batch_op:
        batch_op.drop_index('ix_slots_name')

    op.drop_table('slots')
    op.drop_table('logs')
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_jobs_namespace')
        batch_op.drop_index('ix_jobs_cronjob')

    op.drop_table('jobs')
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_index('ix_events_namespace')

    op.drop_table('events')
    op.drop_table('cursors')
    with op.batch_alter_table('cronjobs', schema=None) as batch_op:
        batch_op.drop_index('ix_cronjobs_name')

    op.drop_table('cronjobs')
    with op.batch_alter_table('cronjob_configs', schema=None) as batch_op:
        batch_op.drop_index('ix_configs_cronjob')

    op.drop_table('cronjob_configs')
