"""cronctl.kube.connect in a pod: no kubeconfig, so the pod's ServiceAccount (token, CA, namespace
files and $KUBERNETES_SERVICE_HOST/_PORT), through the real kubernetes loader; offline (a request with
such credentials against the real API server: tests/cluster/test_deploy_live.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cronctl.errors import BadInput


@pytest.fixture
def pod_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """What the kubelet gives a pod: the service host and port, and token, CA and namespace files."""
    from cronctl import kube

    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text("first-token")
    (sa / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    (sa / "namespace").write_text("recorders\n")
    monkeypatch.setattr(kube, "SERVICE_ACCOUNT_DIR", str(sa))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.kube/config
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    return sa


def test_with_no_kubeconfig_in_a_pod_connect_uses_the_service_account(pod_env: Path) -> None:
    from cronctl.kube import connect

    kc = connect(None, None, None)
    cfg = kc._api.configuration
    assert cfg.host == "https://10.96.0.1:443" and cfg.ssl_ca_cert == str(pod_env / "ca.crt")
    assert cfg.auth_settings()["BearerToken"]["value"] == "bearer first-token"
    assert kc.namespace == "recorders" and kc.context_name == ""
    assert connect(None, None, "shop").namespace == "shop"


def test_the_in_cluster_fallback_is_taken_only_when_there_is_no_kubeconfig_and_a_service_host(
        pod_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cronctl.kube import connect

    # a $KUBECONFIG that names a missing file is an error, not a silent switch to the pod's account
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    with pytest.raises(BadInput, match="no kubeconfig"):
        connect(None, None, None)
    monkeypatch.delenv("KUBECONFIG")
    with pytest.raises(BadInput, match="--context"):
        connect(None, "prod", None)
    (pod_env / "namespace").write_text("Not A Namespace")
    with pytest.raises(BadInput, match="namespace"):
        connect(None, None, None)
    (pod_env / "token").unlink()
    with pytest.raises(BadInput, match="ServiceAccount"):
        connect(None, None, "shop")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    with pytest.raises(BadInput, match="no kubeconfig"):
        connect(None, None, "shop")
    assert os.environ.get("KUBECONFIG") is None
