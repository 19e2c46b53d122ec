"""The steps of a manual run, one module each, composed by ``run_manual`` (run-manual and
``--retry``), ``backfill`` (and ``restore --catch-up all``) and ``attach`` (``wait``).

Every step is a function of one :class:`~cronctl.procedure.steps.context.RunContext` (the run's
cluster, options, clock, reporter, record and audit); none is a method and no class inherits
another. In the order of a run:

- :mod:`.preflight` (and :mod:`.retry`): nothing changed yet; the lock, the name, the permissions;
- :mod:`.hold_guard`: which GitOps tool writes ``spec.suspend``, how the hold is made and watched;
- :mod:`.plan`: what the run and the controller will do; the confirmation;
- :mod:`.hold`: the run directory, then suspend + run record in one guarded patch;
- :mod:`.verify`: no unfinished child Job, again after the settle (else set back);
- :mod:`.create`: the Job; :mod:`.follow`: wait for it; :mod:`.evidence`: logs, pods, exit codes;
- :mod:`.catch_up`: a slot marked done, slot Jobs in groups, the slots lost while held;
- :mod:`.finish`: stay suspended after a failure, or restore after success; the record's end.

They import nothing of the procedures that compose them (an import-linter contract).
"""
