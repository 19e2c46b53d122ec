"""The occurrence ledger: what ``cronctl record`` keeps of every CronJob, Job, Event and log tail
after Kubernetes deletes them (docs/LEDGER.md).

- :mod:`cronctl.ledger.facts`: what is kept of each object (pure);
- :mod:`cronctl.ledger.schema`: the tables (SQLAlchemy Core);
- :mod:`cronctl.ledger.store`: open and migrate (Alembic), idempotent writes, reads back as
  API objects for the one judge (:mod:`cronctl.history`).

Only this package imports SQLAlchemy, Alembic and psycopg (.importlinter).
"""
