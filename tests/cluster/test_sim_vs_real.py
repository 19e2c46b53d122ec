"""One scenario on both nodes: run-manual of a CronJob whose container prints two lines and exits 3,
on the pod simulator (``--node sim``, the session's cluster) and on the real node (``--node real``).
What cronctl decides is the same; what differs is listed here and in docs/DEVELOPMENT.md ("The pod
simulator and the real node"), so a change of either node shows as a failure of this test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cluster_support import cronctl, cronjob_body, run_record
from realnode_support import REALNODE_MARKS, job_pods, shell_cronjob, terminated

pytestmark = REALNODE_MARKS


def _scenario(kubeconfig: str, k8s: Any, ns: str, body: dict[str, Any], tmp: Path) -> dict[str, Any]:
    k8s.batch.create_namespaced_cron_job(ns, body)
    r = cronctl(["run-manual", "compare", "-n", ns, "--yes", "--settle", "1s", "--reason", "sim vs real", "-o", "json"],
                kubeconfig, run_dir=tmp, timeout=240)
    out = json.loads(r.stdout)
    rec = run_record(tmp)
    run_dir = Path(rec["run_dir"])
    pod = job_pods(k8s, ns, out["job_name"])[0]
    t = terminated(pod) or {}
    events = json.loads(k8s.core.list_namespaced_event(
        ns, field_selector=f"involvedObject.name={pod['metadata']['name']}", _preload_content=False).data)["items"]
    return {
        "exit": r.returncode, "outcome": out["outcome"], "exit_codes": [(e["exit_code"], e.get("reason")) for e in out["exit_codes"]],
        "reason": t.get("reason"), "scheme": str(t.get("containerID", "")).split("://")[0],
        "logs": {x["container"]: (run_dir / x["file"]).read_text() for x in rec["logs"]},
        "events": sorted({e["reason"] for e in events}),
        "node": pod["spec"]["nodeName"], "pod_ip": bool((pod.get("status") or {}).get("podIP")),
        "stderr_names_code": "exit code 3" in r.stderr,
    }


def test_the_same_failing_run_on_the_simulator_and_on_the_real_node(
        kubeconfig: str, k8s: Any, namespace: str, real_node: Any, real_namespace: str, tmp_path: Path) -> None:
    sim = _scenario(kubeconfig, k8s, namespace, cronjob_body(
        "compare", duration=2, exit_code=3, log="line one\nline two", containers=[{"name": "main", "image": "busybox"}]),
        tmp_path / "sim")
    real = _scenario(real_node.kubeconfig, real_node.k8s, real_namespace, shell_cronjob(
        "compare", 'echo "line one"; echo "line two"; sleep 2; exit 3'), tmp_path / "real")
    same = ("exit", "outcome", "exit_codes", "reason", "pod_ip", "stderr_names_code")
    assert {k: sim[k] for k in same} == {k: real[k] for k in same} == {
        "exit": 1, "outcome": "failed", "exit_codes": [(3, "Error")], "reason": "Error", "pod_ip": True,
        "stderr_names_code": True}
    # the differences (docs/DEVELOPMENT.md):
    # 1. the simulator's log has a line of its own before and after what the container "printed"
    assert real["logs"] == {"main": "line one\nline two\n"}
    assert sim["logs"] == {"main": "sim: container main started (attempt 1)\nline one\nline two\n"
                                   "sim: container main exited with code 3\n"}
    # 2. container IDs: containerd's, and the simulator's own scheme
    assert (sim["scheme"], real["scheme"]) == ("sim", "containerd")
    # 3. the kubelet says more about a pod: the image it found, the container it created
    assert sim["events"] == ["Scheduled", "Started"]
    assert real["events"] == ["Created", "Pulled", "Scheduled", "Started"]
    # 4. the node's name
    assert (sim["node"], real["node"]) == ("cronctl-sim", "127.0.0.1")
