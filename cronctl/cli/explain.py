"""`cronctl explain` (placeholder until the schedule engine lands; owned by the explain work)."""

from __future__ import annotations

from cronctl.cli.app import app


@app.command()
def explain() -> None:
    """Explain a schedule exactly as the Kubernetes CronJob controller computes it."""
    from cronctl.errors import CronctlError

    raise CronctlError("explain is not implemented yet")
