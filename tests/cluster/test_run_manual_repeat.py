"""Running a CronJob by hand again (issue 34 item 5) and the other run-manual answers of issue 34 on the
real control plane: `--run-name` while the last manual Job is kept, two operators racing on the same
run name, `--dry-run` showing the plan and what a real run would be refused for, `--occurrence latest`
on a CronJob that has had no slot yet, and "did you mean" for a mistyped CronJob name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster_support import create_cronjob, cronctl, list_jobs, read_cronjob, read_job, record_annotations, \
    start_cronctl, terminal

pytestmark = [pytest.mark.cluster]


def job_names(k8s: Any, ns: str) -> set[str]:
    return {j["metadata"]["name"] for j in list_jobs(k8s, ns)}


def test_a_run_name_runs_it_again_while_the_last_manual_job_is_kept(kubeconfig: str, namespace: str, k8s: Any,
                                                                    tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "orders", duration=1)
    run = ["run-manual", "orders", "-n", namespace, "--yes", "--settle", "1s"]
    r = cronctl(run, kubeconfig, run_dir=tmp_path / "1")
    assert r.returncode == 0, r.stderr
    # the same run again: its Job is kept, so it is refused, and told how to run again
    r = cronctl(run, kubeconfig, run_dir=tmp_path / "2")
    assert r.returncode == 3, r.stderr
    assert f"job {namespace}/orders-manual already exists" in r.stderr and "--run-name NAME" in r.stderr
    assert "orders-manual-NAME" in r.stderr

    # --dry-run shows the plan and the Job, and says what the real run would be refused for
    before = read_cronjob(k8s, namespace, "orders")
    d = cronctl([*run, "--dry-run"], kubeconfig, run_dir=tmp_path / "dry")
    assert d.returncode == 0, d.stderr
    assert yaml.safe_load(d.stdout)["metadata"]["name"] == "orders-manual"
    assert "plan" in d.stderr and "suspend it, check for running Jobs" in " ".join(d.stderr.split())
    last = d.stderr.strip().splitlines()[-1]
    assert last.startswith(f"dry run: nothing was changed; a real run would be refused: job {namespace}/"
                           "orders-manual already exists"), d.stderr
    after = read_cronjob(k8s, namespace, "orders")
    assert after["spec"] == before["spec"] and record_annotations(after) == {}

    # a named run: a Job of its own beside the kept one
    r = cronctl([*run, "--run-name", "after-fix"], kubeconfig, run_dir=tmp_path / "3")
    assert r.returncode == 0, r.stderr
    assert job_names(k8s, namespace) == {"orders-manual", "orders-manual-after-fix"}
    job = read_job(k8s, namespace, "orders-manual-after-fix")
    assert job is not None and terminal(job) == "Complete"
    # the same name is the same run: refused; a dry run of it says so and exits 0
    r = cronctl([*run, "--run-name", "after-fix"], kubeconfig, run_dir=tmp_path / "4")
    assert r.returncode == 3 and "orders-manual-after-fix already exists" in r.stderr, r.stderr
    d = cronctl([*run, "--run-name", "second", "--dry-run"], kubeconfig, run_dir=tmp_path / "dry2")
    assert d.returncode == 0 and d.stderr.strip().splitlines()[-1] == "dry run: nothing was changed", d.stderr
    assert job_names(k8s, namespace) == {"orders-manual", "orders-manual-after-fix"}


def test_two_operators_racing_on_the_same_run_name_get_one_job(kubeconfig: str, namespace: str, k8s: Any,
                                                              tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "race", duration=4)
    args = ["run-manual", "race", "-n", namespace, "--yes", "--settle", "1s", "--run-name", "retry-1"]
    procs = [start_cronctl(args, kubeconfig, run_dir=tmp_path / f"op{i}") for i in (1, 2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        results.append((p.returncode, err))
    codes = sorted(code for code, _ in results)
    assert codes == [0, 3], results
    refused = next(err for code, err in results if code == 3)
    assert "nothing was changed" in refused or "held by run" in refused, refused
    assert job_names(k8s, namespace) == {"race-manual-retry-1"}
    assert read_cronjob(k8s, namespace, "race")["spec"]["suspend"] is False


@pytest.mark.parametrize(("cronjob", "run_name", "words"), [
    ("a" * 52, "abcd", "the Job " + "a" * 52 + "-manual-abcd would have 64 characters, over the 63 a Job name may "
                       "have; for cronjob " + "a" * 52 + " a run name has at most 3"),
    ("short", "Not_A_Label", "lower case letters, digits and '-'"),
])
def test_a_run_name_that_cannot_make_a_job_name_is_one_line_and_changes_nothing(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path, cronjob: str, run_name: str, words: str) -> None:
    create_cronjob(k8s, namespace, cronjob)
    r = cronctl(["run-manual", cronjob, "-n", namespace, "--yes", "--run-name", run_name], kubeconfig,
                run_dir=tmp_path)
    assert r.returncode == 5, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: bad --run-name") and words in r.stderr
    assert job_names(k8s, namespace) == set() and record_annotations(read_cronjob(k8s, namespace, cronjob)) == {}


def test_occurrence_latest_on_a_cronjob_that_has_had_no_slot_yet_is_refused(kubeconfig: str, namespace: str,
                                                                           k8s: Any, tmp_path: Path) -> None:
    # issue 34 item 15: created today, '0 0 1 1 *' had its latest slot on 1 January, before it existed
    cj = create_cronjob(k8s, namespace, "yearly", schedule="0 0 1 1 *")
    year = int(cj["metadata"]["creationTimestamp"][:4])
    r = cronctl(["run-manual", "yearly", "-n", namespace, "--occurrence", "latest", "--dry-run"], kubeconfig,
                run_dir=tmp_path)
    assert r.returncode == 5, r.stderr
    assert (f"after its latest slot {year}-01-01T00:00:00Z: it has had no slot yet (the first is "
            f"{year + 1}-01-01T00:00:00Z)") in r.stderr
    assert r.stdout == "" and job_names(k8s, namespace) == set()


def test_a_mistyped_cronjob_name_gets_did_you_mean(kubeconfig: str, namespace: str, k8s: Any) -> None:
    create_cronjob(k8s, namespace, "mp-orders-sync")
    for command in (["status"], ["history"], ["run-manual", "--dry-run"]):
        r = cronctl([command[0], "mp-order-sync", *command[1:], "-n", namespace], kubeconfig)
        assert r.returncode == 6, (command, r.stderr)
        assert r.stderr.strip().splitlines()[-1] == (f"error: cronjob {namespace}/mp-order-sync not found; "
                                                     "did you mean mp-orders-sync?"), (command, r.stderr)

