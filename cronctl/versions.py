"""Where the CronJob controller behaves differently by Kubernetes version (pure, no I/O).

cronctl reads the API server's ``gitVersion`` (``/version``) and asks :func:`behaviour_for` which
behaviour applies. Each difference is pinned on every supported version by a test on the real
control plane (``tests/cluster/test_version_fidelity.py``) and listed in the table of
docs/VERSIONS.md ("Behaviour by Kubernetes version").

Differences known so far:

* **Adoption of an existing Job named for a slot.** When the controller wants to start slot T and a
  Job named ``<cronjob>-<minutes(T)>`` already exists (created by someone else), its create fails
  with AlreadyExists. From 1.37 (kubernetes/kubernetes PR #136920) it then adopts that Job: puts it
  in ``.status.active`` and sets ``status.lastScheduleTime = T``. Up to 1.36 it looks the Job up
  in the wrong (empty) namespace, fails (kubernetes/kubernetes#136918), records an
  ``UnexpectedJob`` warning and requeues with back-off, leaving ``lastScheduleTime`` unset: no
  second Job for T, but Forbid does not see the existing Job and the next slot can start late.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The versions cronctl is tested against (scripts/cluster SUPPORTED_VERSIONS), oldest first.
SUPPORTED = ((1, 34), (1, 35), (1, 36), (1, 37))
_GIT = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(git_version: str) -> tuple[int, int, int] | None:
    """``v1.36.3`` (also ``v1.36.3-eks-1234``, ``1.37``) -> ``(1, 36, 3)``; None if unreadable."""
    m = _GIT.match(git_version.strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


@dataclass(frozen=True)
class ControllerBehaviour:
    """The controller behaviour cronctl predicts with, for one server version."""

    version: str                  # as the server said it ("v1.36.3"), or "unknown"
    known: bool                   # parsed and not older than the oldest supported version
    adopts_slot_job: bool | None  # None: version not known, say both outcomes

    def adoption_text(self, job: str, slot: str) -> str:
        """What happens when the controller wants slot ``slot`` and Job ``job`` already exists."""
        head = f"Job {job} already exists for {slot}: "
        adopted = (f"the controller adopts it instead of creating another (it joins .status.active and "
                   f"lastScheduleTime becomes {slot})")
        not_adopted = ("no second Job is created, but the controller cannot adopt it (kubernetes/kubernetes#136918): "
                       "it warns UnexpectedJob, retries with back-off and leaves lastScheduleTime unset, so Forbid "
                       "does not see that Job and the next slot may start late")
        if self.adopts_slot_job is None:
            return (f"{head}the server version {self.version} is not one cronctl knows: from 1.37 {adopted}; "
                    f"up to 1.36 {not_adopted}")
        return f"{head}({self.version}) " + (adopted if self.adopts_slot_job else not_adopted)


def behaviour_for(git_version: str | None) -> ControllerBehaviour:
    v = parse_version(git_version or "")
    if v is None or v[:2] < SUPPORTED[0]:
        return ControllerBehaviour(version=git_version or "unknown", known=False, adopts_slot_job=None)
    # newer than the newest tested: the newest behaviour (fixes are not taken back)
    return ControllerBehaviour(version=git_version or "", known=True, adopts_slot_job=v[:2] >= (1, 37))
