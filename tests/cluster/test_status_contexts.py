"""`cronctl status --context A --context B`: one overview of several clusters (issue 27, item 3).

The local control plane is one cluster, so the two contexts here are two views of it that differ
where the overview can show it: each context has its own default namespace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster_support import cronctl, create_cronjob

pytestmark = [pytest.mark.cluster]


def test_the_overview_of_two_contexts_has_a_row_per_cronjob_with_its_cluster(kubeconfig: str, namespace: str,
                                                                              k8s: Any, namespace_factory: Any,
                                                                              tmp_path: Path) -> None:
    other = namespace_factory.create("status-ctx-b")
    create_cronjob(k8s, namespace, "in-a")
    create_cronjob(k8s, other, "in-b")
    doc = yaml.safe_load(Path(kubeconfig).read_text())
    ctx = next(c for c in doc["contexts"] if c["name"] == doc["current-context"])
    doc["contexts"] = [{"name": "east", "context": {**ctx["context"], "namespace": namespace}},
                       {"name": "west", "context": {**ctx["context"], "namespace": other}}]
    doc["current-context"] = "east"
    kc = tmp_path / "two.kubeconfig"
    kc.write_text(yaml.safe_dump(doc))
    kc.chmod(0o600)
    r = cronctl(["status", "--context", "east", "--context", "west", "-o", "json"], str(kc))
    assert r.returncode == 0, r.stderr
    rows = [(row["cluster"], row["namespace"], row["cronjob"]) for row in json.loads(r.stdout)["cronjobs"]]
    assert rows == [("east", namespace, "in-a"), ("west", other, "in-b")]
    r = cronctl(["status", "--context", "east", "--context", "west"], str(kc))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["CLUSTER", "NAME"]
    assert [ln.split()[:2] for ln in lines[1:3]] == [["east", "in-a"], ["west", "in-b"]]
    r = cronctl(["status", "in-a", "--context", "east", "--context", "west"], str(kc))
    assert r.returncode == 5 and "one --context" in r.stderr
