"""Terminal attacks on the real control plane: a Job that prints escape sequences and markup, a
`--reason` with markup, and a run record planted by someone with patch rights. `run-manual`'s live
progress and log tail, `status` and `restore` run on a pseudo-terminal (rich as on an operator's
screen); the bytes the terminal receives carry no escape sequence from the data, only the visible
escapes (issue 12, item 1).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from cluster_support import create_cronjob, read_cronjob
from terminal_support import PAYLOAD, assert_nothing_acts, assert_shown, cronctl_in_pty

pytestmark = [pytest.mark.cluster]


def test_run_manuals_progress_and_log_tail_show_a_hostile_job_output_as_text(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    # the simulated container prints the payload (sim.cronctl.dev/log) for 5 s: the live progress
    # shows its last line, the tail shows it at the end
    create_cronjob(k8s, namespace, "noisy", duration=5, log="start\n" + PAYLOAD + "\nend " + PAYLOAD)
    code, screen = cronctl_in_pty(["run-manual", "noisy", "-n", namespace, "--yes", "--settle", "1s",
                                   "--reason", "[/x] " + PAYLOAD, "--kubeconfig", kubeconfig], tmp_path,
                                  timeout=180)
    text = assert_nothing_acts(screen, live=True)
    assert code == 0, text
    assert re.search(r"\| \[noisy-manual-\w+/main\] end \\x1b\]52;c;", text), text  # the log tail
    assert "elapsed" in text  # the live progress ran, with the last log line
    assert_shown(text)
    assert read_cronjob(k8s, namespace, "noisy")["spec"]["suspend"] is False


def test_status_and_restore_show_a_planted_record_as_text(kubeconfig: str, namespace: str, k8s: Any,
                                                          tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "planted", suspend=True)
    k8s.batch.patch_namespaced_cron_job("planted", namespace, {"metadata": {"annotations": {
        "cronctl.dev/run-id": "deadbeef", "cronctl.dev/operator": "mallory" + PAYLOAD,
        "cronctl.dev/reason": "[/x] " + PAYLOAD, "cronctl.dev/holder": "host" + PAYLOAD + "/1",
        "cronctl.dev/step": "created", "cronctl.dev/started": "2026-01-01T00:00:00Z",
        "cronctl.dev/job-name": "planted-manual", "cronctl.dev/original-suspend": "true"}}})
    code, screen = cronctl_in_pty(["status", "planted", "-n", namespace, "--kubeconfig", kubeconfig], tmp_path)
    text = assert_nothing_acts(screen)
    assert code == 0, text
    assert re.search(r"run deadbeef by mallory\\x1b\]52;c;", text), text
    assert_shown(text)
    # restore (to suspend: true, always allowed) names whose record it is: the name as text too
    code, screen = cronctl_in_pty(["restore", "planted", "-n", namespace, "--yes", "--force",
                                   "--kubeconfig", kubeconfig], tmp_path)
    text = assert_nothing_acts(screen)
    assert code in (0, 3), text


def test_pause_reason_and_the_pause_row_of_status_show_hostile_text_as_text(kubeconfig: str, namespace: str,
                                                                            k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "held")
    for args in (["pause", "held", "--reason", "[/x] " + PAYLOAD, "--until", "2h", "--yes"], ["status", "held"],
                 ["resume", "held", "--yes"]):
        code, screen = cronctl_in_pty([*args, "-n", namespace, "--kubeconfig", kubeconfig], tmp_path)
        text = assert_nothing_acts(screen)
        assert code == 0, text
        if args[0] == "status":
            assert_shown(text)
    assert read_cronjob(k8s, namespace, "held")["spec"]["suspend"] is False
