"""run-manual, restore and status as explicit steps over a :class:`cronctl.cluster.Cluster` and a clock.

No typer/rich here: the CLI passes a :class:`~cronctl.procedure.base.Reporter` that shows steps,
the plan, confirmation prompts and live progress. Nothing here imports ``kubernetes``.
"""
