"""Write the golden ``cronctl status -o json`` documents of tests/status_scenarios.py here, from
whichever cronctl is importable (it prints which):

    PYTHONPATH=<a checkout of cronctl> python tests/golden/status/regenerate.py [CASE ...]

How the goldens here were made: from commit 3a1653c, the code before status returned typed
results (d458dbf), so that the test holds today's code to what users got before the refactor,
not to itself::

    git worktree add --detach /tmp/cronctl-old 3a1653c
    PYTHONPATH=/tmp/cronctl-old .venv/bin/python tests/golden/status/regenerate.py

except ``cron-tz-prefix``: 1b023fd (after 3a1653c) changed on purpose how a CRON_TZ=/TZ= prefixed
schedule is shown (in that zone: the predictions' words name its local times), so that case was
made from today's code afterwards (``regenerate.py cron-tz-prefix`` with this checkout on
PYTHONPATH); tests/unit/test_status_document.py says why. A later deliberate change of the document is
written the same way (or with CRONCTL_REGEN_GOLDEN=1 on the test) and its diff reviewed by hand.
The scenarios and the rendering (the CLI in-process over the fake cluster) are
tests/status_scenarios.py, shared with the test.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/: builders, fake_cluster, status_scenarios

import status_scenarios as S  # noqa: E402


def main(cases: list[str]) -> int:
    import cronctl

    print(f"cronctl from {Path(cronctl.__file__).parent}", file=sys.stderr)
    known = S.by_name()
    for case in cases or list(known):
        for view in S.VIEWS:
            code, out, err = S.render(known[case], view)
            if code != 0 or err:
                print(f"{case} {view}: exit {code}\n{err}", file=sys.stderr)
                return 1
            (HERE / S.golden_name(case, view)).write_text(out)
            print(f"wrote {S.golden_name(case, view)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
