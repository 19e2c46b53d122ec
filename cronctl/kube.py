"""KubeCluster: the real :class:`cronctl.cluster.Cluster`, and the ONLY module importing ``kubernetes``.

Every request goes through one funnel (:meth:`KubeCluster._request`), which counts requests,
reads bodies as raw JSON (no client model objects: fast, and exactly what ``kubectl get -o json``
shows) and translates failures into :mod:`cronctl.errors`, chained ``from e``:

* 404 -> ``NotFound``; 403 -> ``PermissionMissing``; 409 -> ``Conflict`` (AlreadyExists or a
  resourceVersion mismatch); 410 on a watch -> ``WatchExpired``;
* anything else -> ``ApiError`` with the HTTP status and the API Status ``reason``;
* an unreachable server -> ``ApiError("cannot reach the API server at https://...: connection refused")``.

The kubernetes package is used only for what it is good at: loading kubeconfig (certificates,
tokens, exec plugins) and its urllib3 pool.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

from cronctl import model, names
from cronctl.cluster import Obj, WatchExpired
from cronctl.errors import ApiError, BadInput, BadUsage, Conflict, NotFound, PermissionMissing

_PAGE = 500
#: how long one request may take, connection and TLS handshake included, before it fails as
#: unreachable (``--request-timeout``, kubectl's flag: 0 = no limit). A dead VPN that accepts the
#: connection and never answers fails in this time, not urllib3's minute. Waits that are not one
#: request (a watch of a Job for run-manual's ``--timeout``) keep their own bounds.
DEFAULT_REQUEST_TIMEOUT = 10.0
#: after this long without an answer, the first request says whom it waits for (``on_slow``)
SLOW_AFTER = 1.0
#: every write names cronctl as its field manager: managedFields then show which fields cronctl
#: set (``restore`` confirms a run record by it, model.record_unconfirmed)
_MANAGER = [("fieldManager", model.FIELD_MANAGER)]


def load_client() -> None:
    """Import the kubernetes client (what :func:`connect` does first): lets a caller with a time
    bound on the connection (shell completion) pay for the import outside it."""
    import kubernetes.client  # noqa: F401
    import kubernetes.config  # noqa: F401


#: where the kubelet mounts a pod's ServiceAccount token, CA and namespace (a module attribute, so
#: a test can point it at a token of its own)
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def connect(kubeconfig: str | None, context: str | None, namespace: str | None, *,
            request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
            on_slow: Callable[[str], None] | None = None) -> KubeCluster:
    """Load kubeconfig (``--kubeconfig``, else ``$KUBECONFIG``, else ``~/.kube/config``) and connect.

    ``namespace`` defaults to the context's namespace, else ``default``. A missing or broken
    kubeconfig or an unknown context is ``BadInput``. No request is made here.

    In a pod (``$KUBERNETES_SERVICE_HOST`` set) with no kubeconfig at all (no flag, no
    ``$KUBECONFIG``, no ``~/.kube/config``), the pod's ServiceAccount is used instead
    (:func:`connect_in_cluster`), as ``kubectl`` does.

    ``request_timeout`` (seconds, 0 = none) bounds each request; ``on_slow(server)`` is called once,
    from a timer thread, when a request has had no answer for :data:`SLOW_AFTER` seconds.
    """
    from kubernetes import client, config  # lazy: heavy import
    from kubernetes.config.config_exception import ConfigException

    path = kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    first = path.split(os.pathsep)[0]
    if kubeconfig and not os.path.exists(kubeconfig):
        raise BadInput(f"kubeconfig {kubeconfig} does not exist")
    if not kubeconfig and os.pathsep not in path and not os.path.exists(first):
        if not os.environ.get("KUBECONFIG") and os.environ.get("KUBERNETES_SERVICE_HOST"):
            return connect_in_cluster(context, namespace, request_timeout=request_timeout, on_slow=on_slow)
        raise BadInput(f"no kubeconfig: {path} does not exist (use --kubeconfig or set KUBECONFIG)")
    cfg = client.Configuration()
    _check_kubeconfig(path)
    try:
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=path, context=context, client_configuration=cfg,
                                persist_config=False)
        contexts, current = config.list_kube_config_contexts(  # type: ignore[no-untyped-call]
            config_file=path)
    except ConfigException as e:
        raise BadInput(f"cannot load kubeconfig {path}: {_one_line(str(e))}") from e
    except (OSError, ValueError, TypeError, AttributeError, KeyError) as e:  # unreadable, or a shape it trips on
        raise BadInput(f"cannot load kubeconfig {path}: {_one_line(str(e)) or type(e).__name__}") from e
    ctx_name = context or (current or {}).get("name")
    ctx = next((c for c in contexts or [] if c.get("name") == ctx_name), None)
    # the context's namespace is checked like -n: it goes into every request path
    ns = names.namespace(namespace or ((ctx or {}).get("context") or {}).get("namespace") or "default")
    # One attempt per request: a dead API server must fail fast with one clear line, not after
    # urllib3's three retries, each printing a warning.
    cfg.retries = False
    kc = KubeCluster(client.ApiClient(cfg), namespace=ns, request_timeout=request_timeout, on_slow=on_slow)
    kc.context_name = str(ctx_name or "")
    return kc


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _check_kubeconfig(path: str) -> None:
    """Each file of ``path`` (``a:b`` as $KUBECONFIG) is YAML holding a mapping with contexts, or
    BadInput naming the file and, for malformed YAML, the line: the client's own errors are a
    multi-line ParserError, or a TypeError for a list, which read as a bug."""
    import yaml

    for f in [p for p in path.split(os.pathsep) if p]:
        try:
            with open(f, encoding="utf-8") as fh:
                data = yaml.safe_load(fh)
        except FileNotFoundError:
            continue  # the client skips a missing file of a list; a missing single file is named before
        except OSError as e:
            raise BadInput(f"cannot read kubeconfig {f}: {e.strerror or e}") from e
        except UnicodeDecodeError as e:
            raise BadInput(f"cannot load kubeconfig {f}: not UTF-8 text") from e
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"{f}:{mark.line + 1}:{mark.column + 1}" if mark is not None else f
            problem = getattr(e, "problem", None) or _one_line(str(e))
            raise BadInput(f"cannot load kubeconfig {where}: malformed YAML: {problem}") from e
        if data is None:
            raise BadInput(f"cannot load kubeconfig {f}: the file is empty")
        if not isinstance(data, dict):
            raise BadInput(f"cannot load kubeconfig {f}: not a kubeconfig (a YAML {type(data).__name__}, "
                           "not a mapping with clusters, users and contexts)")
        if not isinstance(data.get("contexts") or [], list) or not isinstance(data.get("clusters") or [], list):
            raise BadInput(f"cannot load kubeconfig {f}: contexts and clusters must be lists")


def connect_in_cluster(context: str | None, namespace: str | None, *,
                       request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
                       on_slow: Callable[[str], None] | None = None) -> KubeCluster:
    """Connect as the pod's ServiceAccount: ``$KUBERNETES_SERVICE_HOST``/``_PORT``, the token and CA
    of :data:`SERVICE_ACCOUNT_DIR` (the token read again as the kubelet rotates it: bound tokens
    expire). ``namespace`` defaults to the pod's. No request is made here."""
    from kubernetes import client
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.incluster_config import InClusterConfigLoader

    if context:
        raise BadInput(f"--context {context}: no kubeconfig here, only the pod's ServiceAccount")
    cfg = client.Configuration()
    loader = InClusterConfigLoader(  # type: ignore[no-untyped-call]
        token_filename=os.path.join(SERVICE_ACCOUNT_DIR, "token"),
        cert_filename=os.path.join(SERVICE_ACCOUNT_DIR, "ca.crt"), try_refresh_token=True)
    try:
        loader.load_and_set(cfg)  # type: ignore[no-untyped-call]
    except (ConfigException, OSError) as e:
        raise BadInput(f"no kubeconfig, and not the pod's ServiceAccount either ({SERVICE_ACCOUNT_DIR}): {e}") from e
    if not namespace:
        try:
            with open(os.path.join(SERVICE_ACCOUNT_DIR, "namespace"), encoding="utf-8") as f:
                namespace = f.read().strip()
        except OSError:
            namespace = None
    cfg.retries = False
    kc = KubeCluster(client.ApiClient(cfg), namespace=names.namespace(namespace or "default"),
                     request_timeout=request_timeout, on_slow=on_slow)
    kc.context_name = ""  # no context: the recorder's --cluster names the cluster
    return kc


#: what ``cronctl record`` lists and watches: resource -> (API prefix, kind, apiVersion)
RESOURCES = {
    "cronjobs": ("/apis/batch/v1", "CronJob", "batch/v1"),
    "jobs": ("/apis/batch/v1", "Job", "batch/v1"),
    "events": ("/api/v1", "Event", "v1"),
    "pods": ("/api/v1", "Pod", "v1"),
}


#: what the recorder lists and watches of a resource: only the pods Jobs made (the Job controller
#: labels each with its Job's name), not every pod of a namespace
RECORDED_SELECTORS = {"pods": "batch.kubernetes.io/job-name"}


def _resource_path(resource: str, namespace: str | None) -> str:
    prefix = RESOURCES[resource][0]
    return f"{prefix}/{resource}" if namespace is None else f"{prefix}/namespaces/{_seg(namespace)}/{resource}"


def _seg(name: str) -> str:
    """``name`` as one path segment of a request, never more (``..``, ``a/b`` or empty: BadInput).

    The commands check names with :mod:`cronctl.names` first; this is the last guard of the funnel.
    """
    if not name or name in (".", "..") or any(c in name for c in "/?#%\\") or not name.isprintable():
        raise BadInput(f"refusing to put {name!r} into an API path: not a Kubernetes name")
    return name


class KubeCluster:
    """The Cluster protocol over a kubernetes ``ApiClient``. See :mod:`cronctl.cluster`."""

    def __init__(self, api_client: Any, *, namespace: str, page_size: int = _PAGE,
                 request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
                 on_slow: Callable[[str], None] | None = None) -> None:
        self._api = api_client
        self.request_timeout = request_timeout  # seconds per request; 0 = no limit
        self._on_slow = on_slow
        self.namespace = _seg(namespace)
        self.request_count = 0
        self.page_size = page_size  # list pagination (limit/continue)
        self.context_name = ""  # the kubeconfig context connect() used (the recorder's default cluster name)
        #: a label selector (``-l``) every list of CronJobs is made with; None: every CronJob
        self.cronjob_selector: str | None = None

    # -- the funnel ---------------------------------------------------------------------
    def _request(self, method: str, path: str, *, query: list[tuple[str, str]] | None = None,
                 body: Any = None, content_type: str = "application/json",
                 timeout: float | tuple[float | None, float] | None = None, raw: bool = False,
                 what: str | None = None) -> Any:
        """Make one request. Returns the parsed JSON (or the text when ``raw``).

        ``what`` names the object for a NotFound message (``cronjob ns/name``). ``timeout``
        (default: the request timeout) bounds it, the connection included.
        """
        resp = self._send(method, path, query=query, body=body, content_type=content_type,
                          timeout=timeout)
        try:
            data = resp.read()
        except Exception as e:  # urllib3 errors while reading the body
            raise self._transport_error(e) from e
        finally:
            resp.response.release_conn()
        if resp.status >= 400:
            self._raise_status(resp.status, data, what=what, path=path)
        if raw:
            return data.decode("utf-8", errors="replace")
        return json.loads(data) if data else {}

    def _send(self, method: str, path: str, *, query: list[tuple[str, str]] | None,
              body: Any, content_type: str, timeout: float | tuple[float | None, float] | None) -> Any:
        from kubernetes.client.exceptions import ApiException

        import urllib3

        self.request_count += 1
        headers = {"Accept": "application/json", "Content-Type": content_type}
        if timeout is None:
            timeout = self.request_timeout or None  # 0: no limit (the client then sets none)
        slow = self._slow_timer()
        try:
            _m, url, hdrs, b, _pp = self._api.param_serialize(
                method, path, query_params=query or None, header_params=headers, body=body,
                auth_settings=["BearerToken"])
            return self._api.rest_client.request(method, url, headers=hdrs, body=b,
                                                 _request_timeout=timeout)
        except urllib3.exceptions.NewConnectionError as e:
            # (urllib3 derives it from ConnectTimeoutError: a refused connection is no time-out)
            raise self._transport_error(e) from e
        except urllib3.exceptions.TimeoutError as e:  # connect, TLS handshake or answer: no reply in time
            raise self._timed_out(timeout) from e
        except urllib3.exceptions.MaxRetryError as e:
            if isinstance(e.reason, urllib3.exceptions.TimeoutError) \
                    and not isinstance(e.reason, urllib3.exceptions.NewConnectionError):
                raise self._timed_out(timeout) from e
            raise self._transport_error(e) from e
        except ApiException as e:  # status 0: TLS failure
            raise ApiError(f"cannot reach the API server at {self.server_url()}: "
                           f"{(e.reason or '').splitlines()[-1] if e.reason else 'TLS error'}",
                           status=e.status, reason="TLS") from e
        except Exception as e:
            raise self._transport_error(e) from e
        finally:
            if slow is not None:
                slow.cancel()

    def _slow_timer(self) -> Any:
        """A started timer that says, once per cluster, that a request waits (``on_slow``)."""
        if self._on_slow is None:
            return None
        import threading

        def say() -> None:
            if self._on_slow is not None:
                on_slow, self._on_slow = self._on_slow, None  # once
                on_slow(self.server_url())

        t = threading.Timer(SLOW_AFTER, say)
        t.daemon = True
        t.start()
        return t

    def _timed_out(self, timeout: float | tuple[float | None, float] | None) -> ApiError:
        limit = timeout if isinstance(timeout, (int, float)) else self.request_timeout
        return ApiError(f"cannot reach the API server at {self.server_url()}: no answer within "
                        f"{limit:g}s (--request-timeout)", reason="Unreachable")

    def _transport_error(self, e: BaseException) -> ApiError:
        import urllib3

        if isinstance(e, urllib3.exceptions.HTTPError):
            cause: BaseException = e
            reason = getattr(e, "reason", None)
            if isinstance(reason, BaseException):
                cause = reason
            text = str(cause)
            if isinstance(cause, urllib3.exceptions.NewConnectionError) or "Connection refused" in text:
                text = "connection refused"
            elif isinstance(cause, urllib3.exceptions.TimeoutError):
                return self._timed_out(None)
            return ApiError(f"cannot reach the API server at {self.server_url()}: {text}",
                            reason="Unreachable")
        if isinstance(e, OSError):
            return ApiError(f"cannot reach the API server at {self.server_url()}: {e}",
                            reason="Unreachable")
        return ApiError(f"request to {self.server_url()} failed: {type(e).__name__}: {e}")

    def _raise_status(self, status: int, data: bytes, *, what: str | None, path: str) -> None:
        try:
            st = json.loads(data)
        except ValueError:
            st = {}
        if not isinstance(st, dict):
            st = {}
        reason = str(st.get("reason") or "")
        message = str(st.get("message") or data[:200].decode("utf-8", errors="replace").strip())
        if status == 404:
            raise NotFound(f"{what} not found" if what else f"not found: {message}")
        if status == 403:
            raise PermissionMissing(f"forbidden: {message}")
        if status == 409:
            raise Conflict(message or reason or "conflict")
        if status == 410:
            raise WatchExpired(message or "resource version too old", status=410, reason=reason or "Expired")
        if status == 401:
            raise ApiError(f"unauthorized at {self.server_url()}: {message} (check the kubeconfig's credentials)",
                           status=status, reason=reason or "Unauthorized")
        raise ApiError(f"{path}: HTTP {status} {reason}: {message}".replace("  ", " "),
                       status=status, reason=reason)

    def _list(self, path: str, *, query: list[tuple[str, str]] | None = None,
              kind: str = "", api_version: str = "") -> tuple[list[Obj], str]:
        items: list[Obj] = []
        rv = ""
        for page, rv in self._pages(path, query=query, kind=kind, api_version=api_version):
            items += page
        return items, rv

    def _pages(self, path: str, *, query: list[tuple[str, str]] | None = None,
               kind: str = "", api_version: str = "") -> Iterator[tuple[list[Obj], str]]:
        """The list one page (``page_size`` objects) at a time, each with the resourceVersion so far."""
        cont = ""
        rv = ""
        while True:
            items: list[Obj] = []
            q = list(query or []) + [("limit", str(self.page_size))]
            if cont:
                q.append(("continue", cont))
            page = self._request("GET", path, query=q)
            for it in page.get("items") or []:
                # List items come without kind/apiVersion; put them back so each item reads
                # like `kubectl get -o json` of the single object.
                if kind:
                    it.setdefault("apiVersion", api_version)
                    it.setdefault("kind", kind)
                items.append(it)
            meta = page.get("metadata") or {}
            rv = str(meta.get("resourceVersion") or rv)
            cont = str(meta.get("continue") or "")
            yield items, rv
            if not cont:
                return

    # -- the protocol -------------------------------------------------------------------
    def server_url(self) -> str:
        from cronctl.redact import safe_url

        # without userinfo or token-ish query values: this URL is printed and stored everywhere
        return safe_url(str(self._api.configuration.host))

    def server_version(self) -> str:
        return str(self._request("GET", "/version").get("gitVersion", "unknown"))

    def whoami(self) -> str:
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        try:
            r = self._request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=body)
        except (PermissionMissing, NotFound, ApiError):
            return "unknown"
        name = ((r.get("status") or {}).get("userInfo") or {}).get("username")
        return str(name) if name else "unknown"

    def can_i(self, verb: str, resource: str, *, group: str = "", subresource: str = "",
              name: str = "", namespace: str | None = None) -> tuple[bool, str]:
        attrs = {"namespace": self.namespace if namespace is None else namespace, "verb": verb,
                 "group": group, "resource": resource}
        if subresource:
            attrs["subresource"] = subresource
        if name:
            attrs["name"] = name
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": attrs}}
        r = self._request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=body)
        st = r.get("status") or {}
        return bool(st.get("allowed")), str(st.get("reason") or st.get("evaluationError") or "")

    def get_cronjob(self, name: str) -> Obj:
        try:
            r: Obj = self._request("GET", f"/apis/batch/v1/namespaces/{self.namespace}/cronjobs/{_seg(name)}",
                                   what=f"cronjob {self.namespace}/{name}")
        except NotFound as e:
            elsewhere = self._namespaces_of_cronjob(name)
            if elsewhere:
                raise NotFound(names.not_found_elsewhere("cronjob", name, self.namespace, elsewhere)) from e
            hint = names.did_you_mean(name, self._cronjob_names_here())
            if not hint:
                raise
            raise NotFound(f"{e}{hint}") from e
        return r

    def _cronjob_names_here(self) -> list[str]:
        """The CronJob names of the namespace, for "did you mean": one bounded list call (one page,
        short timeout); any failure: none, silently (the NotFound stands as it is)."""
        try:
            page = self._request("GET", f"/apis/batch/v1/namespaces/{self.namespace}/cronjobs",
                                 query=[("limit", "500")], timeout=5.0)
        except (NotFound, PermissionMissing, ApiError, Conflict):
            return []
        return [str((it.get("metadata") or {}).get("name") or "") for it in page.get("items") or []]

    def _namespaces_of_cronjob(self, name: str) -> list[str]:
        """The other namespaces holding a CronJob ``name``: ONE bounded list call across namespaces
        (field selector on the name, one page, short timeout). Not allowed to list across
        namespaces, or any other failure: none known, silently (the NotFound stands as it is)."""
        try:
            page = self._request("GET", "/apis/batch/v1/cronjobs",
                                 query=[("fieldSelector", f"metadata.name={name}"), ("limit", "100")],
                                 timeout=min(5.0, self.request_timeout or 5.0))
        except (NotFound, PermissionMissing, ApiError, Conflict):
            return []
        found = {str((it.get("metadata") or {}).get("namespace") or "") for it in page.get("items") or []}
        return sorted(found - {"", self.namespace})

    def list_cronjobs(self, *, all_namespaces: bool = False) -> list[Obj]:
        path = "/apis/batch/v1/cronjobs" if all_namespaces else f"/apis/batch/v1/namespaces/{self.namespace}/cronjobs"
        sel = self.cronjob_selector
        try:
            return self._list(path, query=[("labelSelector", sel)] if sel else None,
                              kind="CronJob", api_version="batch/v1")[0]
        except ApiError as e:
            if sel and e.status == 400:  # the server could not parse it
                raise BadUsage(f"bad --selector {sel!r}: {e.message.rpartition(': ')[2] or e.message}") from e
            raise

    def list_cronjobs_in(self, namespace: str) -> list[Obj]:
        return self._list(f"/apis/batch/v1/namespaces/{_seg(namespace)}/cronjobs", kind="CronJob",
                          api_version="batch/v1")[0]

    def apply_cronjob(self, body: Obj, *, field_manager: str, dry_run: bool = True,
                      force_conflicts: bool = False) -> Obj:
        meta = body.get("metadata") or {}
        ns, name = _seg(str(meta.get("namespace") or self.namespace)), _seg(str(meta.get("name") or ""))
        q = [("fieldManager", field_manager)]
        if dry_run:
            q.append(("dryRun", "All"))
        if force_conflicts:
            q.append(("force", "true"))
        try:
            r: Obj = self._request("PATCH", f"/apis/batch/v1/namespaces/{ns}/cronjobs/{name}", query=q,
                                   body=json.dumps(body), content_type="application/apply-patch+yaml",
                                   what=f"cronjob {ns}/{name}")
        except Conflict as e:
            raise Conflict(f"cronjob {ns}/{name}: the apply conflicts with another field manager ({e.message}); "
                           "pass --force-conflicts to take the fields over") from e
        return r

    def list_names(self, resource: str, *, timeout: float, limit: int = 500) -> list[str]:
        """Names for shell completion: ``cronjobs`` of the namespace or ``namespaces``; one request,
        one page, a short timeout (completion must not hang). Errors raise as any request's."""
        path = {"cronjobs": f"/apis/batch/v1/namespaces/{self.namespace}/cronjobs",
                "namespaces": "/api/v1/namespaces"}[resource]
        page = self._request("GET", path, query=[("limit", str(limit))], timeout=timeout)
        return sorted(str((it.get("metadata") or {}).get("name") or "") for it in page.get("items") or [])

    def patch_cronjob(self, name: str, patch: Obj, *, resource_version: str) -> Obj:
        body = dict(patch)
        meta = dict(body.get("metadata") or {})
        meta["resourceVersion"] = resource_version  # optimistic concurrency: 409 if it moved
        body["metadata"] = meta
        r: Obj = self._request("PATCH", f"/apis/batch/v1/namespaces/{self.namespace}/cronjobs/{_seg(name)}",
                               query=[*_MANAGER], body=body, content_type="application/merge-patch+json",
                               what=f"cronjob {self.namespace}/{name}")
        return r

    def patch_cronjob_status(self, name: str, patch: Obj, *, resource_version: str) -> Obj:
        body = dict(patch)
        meta = dict(body.get("metadata") or {})
        meta["resourceVersion"] = resource_version  # 409 if the controller wrote status meanwhile
        body["metadata"] = meta
        r: Obj = self._request("PATCH", f"/apis/batch/v1/namespaces/{self.namespace}/cronjobs/{_seg(name)}/status",
                               query=[*_MANAGER], body=body, content_type="application/merge-patch+json",
                               what=f"cronjob {self.namespace}/{name}")
        return r

    def create_job(self, body: Obj, *, dry_run: bool = False) -> Obj:
        q = [*_MANAGER, ("dryRun", "All")] if dry_run else [*_MANAGER]
        name = (body.get("metadata") or {}).get("name", "")
        try:
            r: Obj = self._request("POST", f"/apis/batch/v1/namespaces/{self.namespace}/jobs",
                                   query=q, body=body)
        except Conflict as e:
            raise Conflict(f"job {self.namespace}/{name} already exists") from e
        return r

    def create_event(self, body: Obj) -> Obj:
        r: Obj = self._request("POST", f"/api/v1/namespaces/{self.namespace}/events", query=[*_MANAGER], body=body)
        return r

    def _get_or_none(self, path: str, what: str) -> Obj | None:
        """GET one object; None when it does not exist (404)."""
        try:
            r: Obj = self._request("GET", path, what=what)
        except NotFound:
            return None
        return r

    def get_job(self, name: str) -> Obj | None:
        return self._get_or_none(f"/apis/batch/v1/namespaces/{self.namespace}/jobs/{_seg(name)}",
                                 f"job {self.namespace}/{name}")

    def list_jobs(self, *, label_selector: str | None = None,
                  field_selector: str | None = None, all_namespaces: bool = False) -> tuple[list[Obj], str]:
        q = [("labelSelector", label_selector)] if label_selector else []
        if field_selector:
            q.append(("fieldSelector", field_selector))
        path = "/apis/batch/v1/jobs" if all_namespaces else f"/apis/batch/v1/namespaces/{self.namespace}/jobs"
        return self._list(path, query=q, kind="Job", api_version="batch/v1")

    def list_pods(self, *, label_selector: str | None = None) -> list[Obj]:
        q = [("labelSelector", label_selector)] if label_selector else None
        return self._list(f"/api/v1/namespaces/{self.namespace}/pods", query=q,
                          kind="Pod", api_version="v1")[0]

    def list_events(self, *, field_selector: str | None = None, all_namespaces: bool = False) -> list[Obj]:
        q = [("fieldSelector", field_selector)] if field_selector else None
        path = "/api/v1/events" if all_namespaces else f"/api/v1/namespaces/{self.namespace}/events"
        return self._list(path, query=q, kind="Event", api_version="v1")[0]

    def read_pod_log(self, pod: str, container: str, *, previous: bool = False,
                     since_seconds: int | None = None, limit_bytes: int | None = None,
                     tail_lines: int | None = None) -> str:
        q = [("container", container)]
        if previous:
            q.append(("previous", "true"))
        if since_seconds is not None:
            q.append(("sinceSeconds", str(since_seconds)))
        if limit_bytes is not None:
            q.append(("limitBytes", str(limit_bytes)))
        if tail_lines is not None:
            q.append(("tailLines", str(tail_lines)))
        r: str = self._request("GET", f"/api/v1/namespaces/{self.namespace}/pods/{_seg(pod)}/log", query=q,
                               raw=True, what=f"log of pod {self.namespace}/{pod} container {container}")
        return r

    def watch_jobs(self, *, resource_version: str, field_selector: str | None = None,
                   label_selector: str | None = None, timeout_seconds: int = 60
                   ) -> Iterator[tuple[str, Obj]]:
        q = [(k, v) for k, v in (("fieldSelector", field_selector), ("labelSelector", label_selector)) if v]
        return self._watch("jobs", self.namespace, resource_version, q, timeout_seconds)

    # -- the recorder's Lease (coordination.k8s.io/v1) -------------------------------------------
    def get_lease(self, name: str) -> Obj | None:
        return self._get_or_none(f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{_seg(name)}",
                                 f"lease {self.namespace}/{name}")

    def write_lease(self, body: Obj) -> Obj:
        """Create the Lease (no resourceVersion in ``body``) or replace it (with one: 409 Conflict
        when another holder wrote it first)."""
        name = str((body.get("metadata") or {}).get("name") or "")
        base = f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases"
        if (body.get("metadata") or {}).get("resourceVersion"):
            r: Obj = self._request("PUT", f"{base}/{_seg(name)}", query=[*_MANAGER], body=body,
                                   what=f"lease {self.namespace}/{name}")
        else:
            r = self._request("POST", base, query=[*_MANAGER], body=body, what=f"lease {self.namespace}/{name}")
        return r

    # -- any of the resources the recorder keeps (RESOURCES), in one namespace or all ---------------
    def list_resource_pages(self, resource: str, namespace: str | None) -> Iterator[tuple[list[Obj], str]]:
        """Every object of ``resource`` in ``namespace`` (None: every namespace), a page at a time
        (the recorder's first sync holds one page, not the whole list), each with the list's
        resourceVersion so far: the last page's is the one to watch from."""
        _prefix, kind, api_version = RESOURCES[resource]
        sel = RECORDED_SELECTORS.get(resource)
        return self._pages(_resource_path(resource, namespace), kind=kind, api_version=api_version,
                           query=[("labelSelector", sel)] if sel else None)

    def watch_resource(self, resource: str, namespace: str | None, resource_version: str,
                       timeout_seconds: int = 300) -> Iterator[tuple[str, Obj]]:
        """The changes of ``resource`` after ``resource_version``, with BOOKMARK events (their object
        carries only the newest resourceVersion). Ends when the server closes the watch or the
        connection drops (the caller watches again from the last resourceVersion it saw);
        :class:`WatchExpired` when that version is compacted away (the caller lists again)."""
        sel = RECORDED_SELECTORS.get(resource)
        return self._watch(resource, namespace, resource_version, [("labelSelector", sel)] if sel else [],
                           timeout_seconds)

    def _watch(self, resource: str, namespace: str | None, resource_version: str,
               query: list[tuple[str, str]], timeout_seconds: int) -> Iterator[tuple[str, Obj]]:
        import urllib3

        _prefix, kind, api_version = RESOURCES[resource]
        q = [("watch", "true"), ("allowWatchBookmarks", "true"),
             ("resourceVersion", resource_version), ("timeoutSeconds", str(int(timeout_seconds))), *query]
        path = _resource_path(resource, namespace)
        # The read timeout is a little longer than the server-side one, so a silent dead
        # connection ends the watch instead of hanging the wait past its deadline.
        resp = self._send("GET", path, query=q, body=None, content_type="application/json",
                          timeout=(self.request_timeout or None, float(timeout_seconds) + 15.0))
        raw = resp.response
        try:
            if resp.status >= 400:
                self._raise_status(resp.status, raw.data, what=None, path=path)
            buf = b""
            try:
                for chunk in raw.stream(4096, decode_content=True):
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        if line.strip():
                            yield self._watch_event(line, kind, api_version)
            except (urllib3.exceptions.HTTPError, OSError):
                return  # dropped connection: the caller reconnects from the last resourceVersion
            if buf.strip():
                yield self._watch_event(buf, kind, api_version)
        finally:
            raw.release_conn()

    @staticmethod
    def _watch_event(line: bytes, kind: str = "Job", api_version: str = "batch/v1") -> tuple[str, Obj]:
        ev = json.loads(line)
        typ = str(ev.get("type", ""))
        obj = ev.get("object") or {}
        if typ == "ERROR":
            code = obj.get("code")
            if code == 410:
                raise WatchExpired(str(obj.get("message") or "resource version too old"),
                                   status=410, reason=str(obj.get("reason") or "Expired"))
            raise ApiError(f"watch error: {obj.get('message') or obj}", status=code,
                           reason=str(obj.get("reason") or ""))
        if typ in ("ADDED", "MODIFIED", "DELETED"):
            obj.setdefault("apiVersion", api_version)
            obj.setdefault("kind", kind)
        return typ, obj
