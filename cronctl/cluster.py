"""The Kubernetes boundary: the handful of API verbs cronctl needs, as a Protocol.

No kubernetes import here. Objects go in and out as plain JSON dicts in the API's own camelCase
form (exactly what ``kubectl get -o json`` shows). The real implementation is
:class:`cronctl.kube.KubeCluster`; tests may pass a ``FakeCluster`` that implements this
protocol and fails loudly on anything it does not implement.

Errors: every verb raises only :mod:`cronctl.errors` types —
``NotFound`` (404), ``PermissionMissing`` (403), ``Conflict`` (409: resourceVersion mismatch or
AlreadyExists), :class:`WatchExpired` (410 Gone on a watch: re-list), ``ApiError`` (anything
else, including an unreachable server).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from cronctl.errors import ApiError

#: A Kubernetes object as the API's JSON, e.g. ``{"apiVersion": "batch/v1", "kind": "Job", ...}``.
Obj = dict[str, Any]


class WatchExpired(ApiError):
    """The watch's resourceVersion is too old (HTTP 410 Gone / an ERROR event with code 410).

    The caller must re-list and watch again from the new list's resourceVersion.
    """


@runtime_checkable
class Cluster(Protocol):
    """One namespace of one API server, seen through the verbs cronctl uses.

    ``request_count`` counts the API requests made so far (a watch counts once per
    connection), so procedures can report how many requests one run made.
    """

    namespace: str
    request_count: int

    def server_url(self) -> str:
        """The API server's URL as the kubeconfig names it (``https://127.0.0.1:6443``)."""
        ...

    def server_version(self) -> str:
        """The API server's gitVersion, e.g. ``v1.36.3``."""
        ...

    def whoami(self) -> str:
        """The caller's username from a SelfSubjectReview; ``"unknown"`` if the API cannot say."""
        ...

    def can_i(self, verb: str, resource: str, *, group: str = "", subresource: str = "",
              name: str = "", namespace: str | None = None) -> tuple[bool, str]:
        """Ask the API server (SelfSubjectAccessReview) whether the caller may do this.

        Returns ``(allowed, reason)``; ``namespace`` defaults to :attr:`namespace`.
        """
        ...

    def get_cronjob(self, name: str) -> Obj:
        """The CronJob; ``NotFound("cronjob <ns>/<name> not found")`` when absent."""
        ...

    def list_cronjobs(self, *, all_namespaces: bool = False) -> list[Obj]:
        """Every CronJob of the namespace (or of all namespaces), paginated."""
        ...

    def list_cronjobs_in(self, namespace: str) -> list[Obj]:
        """Every CronJob of ``namespace`` (any namespace, not only :attr:`namespace`), paginated:
        one list call, however many CronJobs a command then looks at."""
        ...

    def apply_cronjob(self, body: Obj, *, field_manager: str, dry_run: bool = True,
                      force_conflicts: bool = False) -> Obj:
        """A server-side apply of ``body`` (its own ``metadata.namespace``, else :attr:`namespace`)
        as ``field_manager``; ``dry_run`` (the default): the server merges, defaults, validates and
        admits it, answers with the object as it would be, and stores nothing. ``Conflict`` when
        another manager owns a field it changes (unless ``force_conflicts``)."""
        ...

    def patch_cronjob(self, name: str, patch: Obj, *, resource_version: str) -> Obj:
        """Apply a JSON merge patch guarded by ``resource_version``.

        ``metadata.resourceVersion`` is put into the patch, so the API server refuses with 409
        (``Conflict``) when the object changed since it was read. Returns the updated object.
        """
        ...

    def patch_cronjob_status(self, name: str, patch: Obj, *, resource_version: str) -> Obj:
        """A JSON merge patch of the CronJob's status subresource (``cronjobs/status``), guarded by
        ``resource_version`` like :meth:`patch_cronjob` (``Conflict`` when it moved)."""
        ...

    def create_job(self, body: Obj, *, dry_run: bool = False) -> Obj:
        """Create a Job in :attr:`namespace`; ``Conflict`` when the name already exists.

        ``dry_run=True`` asks the server to validate and admit without persisting.
        """
        ...

    def create_event(self, body: Obj) -> Obj:
        """Create a core/v1 Event in :attr:`namespace` (cronctl's audit trail on the CronJob)."""
        ...

    def get_job(self, name: str) -> Obj | None:
        """The Job, or ``None`` when it does not exist."""
        ...

    def list_jobs(self, *, label_selector: str | None = None,
                  field_selector: str | None = None, all_namespaces: bool = False) -> tuple[list[Obj], str]:
        """Every Job of the namespace (of every namespace with ``all_namespaces``, matching the
        selectors), paginated; returns ``(items, list resourceVersion)``."""
        ...

    def list_pods(self, *, label_selector: str | None = None) -> list[Obj]:
        """Every Pod of the namespace matching the selector, paginated."""
        ...

    def list_events(self, *, field_selector: str | None = None, all_namespaces: bool = False) -> list[Obj]:
        """core/v1 Events of the namespace (or of all) matching the field selector, paginated."""
        ...

    def read_pod_log(self, pod: str, container: str, *, previous: bool = False,
                     since_seconds: int | None = None, limit_bytes: int | None = None,
                     tail_lines: int | None = None) -> str:
        """The log of one container (``previous=True``: of its previous, terminated instance)."""
        ...

    def watch_jobs(self, *, resource_version: str, field_selector: str | None = None,
                   label_selector: str | None = None, timeout_seconds: int = 60
                   ) -> Iterator[tuple[str, Obj]]:
        """Watch Jobs from ``resource_version``: yields ``(type, object)`` with type
        ADDED/MODIFIED/DELETED/BOOKMARK.

        The iterator simply ends when the server closes the watch (``timeout_seconds``) or the
        connection drops; the caller reconnects from the last resourceVersion it saw. Raises
        :class:`WatchExpired` when that resourceVersion is too old (re-list).
        """
        ...
