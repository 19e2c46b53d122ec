"""Write the golden outputs of tests/write_scenarios.py here (``cronctl pause``, ``resume`` and
``restore``: the exit code, stderr and stdout of each case), from whichever cronctl is importable
(it prints which):

    PYTHONPATH=<a checkout of cronctl> python tests/golden/write/regenerate.py [CASE ...]

How the goldens here were made: from commit cf859c2, the code before pause, resume and restore
returned typed results (their -o json document made in cli/ since), so that the test holds the
refactor to what users got before it::

    git worktree add --detach /tmp/cronctl-old cf859c2
    PYTHONPATH=/tmp/cronctl-old .venv/bin/python tests/golden/write/regenerate.py

A later deliberate change of an output is written the same way (or with CRONCTL_REGEN_GOLDEN=1 on
tests/unit/test_write_documents.py) and its diff reviewed by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/: builders, fake_cluster, status_scenarios, write_scenarios

import write_scenarios as W  # noqa: E402


def main(cases: list[str]) -> int:
    import cronctl

    print(f"cronctl from {Path(cronctl.__file__).parent}", file=sys.stderr)
    known = W.by_name()
    for case in cases or list(known):
        (HERE / f"{case}.txt").write_text(W.render(known[case]))
        print(f"wrote {case}.txt", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
