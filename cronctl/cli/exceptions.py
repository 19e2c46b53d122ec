"""The click exception classes typer really runs on, for every module of the command line.

typer >= 0.20 carries its own copy of click (typer._click) and raises its exception classes;
older typer runs on the click package. Use whichever typer really runs on, so that usage errors
raised by cronctl are the ones ``cronctl.cli.main`` catches, and ``cronctl explain`` does not pay for
importing a second click (~30 ms). Imports typer's exceptions only: no rich, no command module.
"""

from __future__ import annotations

try:
    from typer._click.exceptions import ClickException as ClickException
    from typer._click.exceptions import UsageError as UsageError
    from typer.exceptions import Abort as Abort
    from typer.exceptions import Exit as Exit
except ImportError:  # pragma: no cover - older typer on plain click
    from click.exceptions import Abort, ClickException, Exit, UsageError  # type: ignore[assignment]

__all__ = ["Abort", "ClickException", "Exit", "UsageError"]
