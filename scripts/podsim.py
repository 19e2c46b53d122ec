#!/usr/bin/env python3
"""The pod simulator: a fake kubelet (and scheduler) for cronctl's local control plane.

There is no container runtime on the test machines, so this process plays the node:

* registers Node ``cronctl-sim`` (InternalIP 127.0.0.1) and keeps it Ready: its Lease in
  ``kube-node-lease`` is renewed every 10 s and its status refreshed every 60 s, otherwise the
  node-lifecycle controller taints it and evicts its pods;
* binds every unscheduled pod to that node through ``pods/binding`` (as kube-scheduler would);
* "runs" each container: status Running at once, then terminated after a duration with an exit
  code, both from pod annotations (defaults 5 s and 0)::

      sim.cronctl.dev/duration-seconds: "5"      # float; "inf" = runs until deleted
      sim.cronctl.dev/exit-code: "0"
      sim.cronctl.dev/log: "line one\\nline two"  # container output (plus our start/stop lines)
      sim.cronctl.dev/termination-seconds: "0"   # time to stop after a delete (capped by grace)

  honouring ``restartPolicy``: ``Never`` ends the pod (Succeeded / Failed), ``OnFailure`` restarts
  a failed container in place (``restartCount`` + 1, ``lastState.terminated``; no
  CrashLoopBackOff delay), ``Always`` restarts it whatever the exit code; pod-level
  ``activeDeadlineSeconds`` fails the pod with reason DeadlineExceeded;
* finishes pods that are deleted: terminal status (exit code 137), then delete with grace period 0
  and a uid precondition, as the kubelet does;
* serves the kubelet's ``/containerLogs/{ns}/{pod}/{container}`` endpoint over HTTPS (certificate
  signed by the cluster CA, client certificate required) so ``kubectl logs`` / ``pods/log`` work
  through the API server, with ``follow``, ``previous``, ``timestamps``, ``tailLines``,
  ``sinceSeconds``, ``sinceTime``, ``limitBytes`` and ``stream``;
* opt-in **exec mode** (``sim.cronctl.dev/exec: "true"`` on the pod): the first container's
  ``command`` + ``args`` really run, as a process on this host (no image, no isolation), with the
  container's ``env`` (plain values, and the downward API ``fieldRef`` values a pod can resolve:
  ``metadata.name``, ``.namespace``, ``.uid``, ``.labels['...']``, ``.annotations['...']``,
  ``spec.nodeName``, ``spec.serviceAccountName``, ``status.podIP``, ``status.hostIP``) over PATH,
  HOME and LANG of the simulator; the pod ends with the process's real exit code and its output is
  the container's log; a deleted pod's process gets SIGTERM, then SIGKILL after the grace period.
  ``restartPolicy: OnFailure`` runs it again after a failure. The cronctl claim tests use it
  (docs/commands/claim.md says so: a simulator, not a kubelet).

State is derived from the pod objects (status times and annotations), so a restarted simulator
carries on where the previous one stopped. One watch on all pods feeds a cache and a de-duplicating
work queue served by a few worker threads; timers wake pods whose container is due to end. Only
the standard library is used.
"""

from __future__ import annotations

import argparse
import collections
import heapq
import http.client
import json
import math
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

ANN = "sim.cronctl.dev/"
DEFAULT_DURATION = 5.0
DEFAULT_EXIT = 0
KILLED_EXIT = 137  # SIGKILL'd / stopped on delete
LEASE_EVERY = 10.0
NODE_STATUS_EVERY = 60.0
WORKERS = 4

Pod = dict[str, Any]
Key = tuple[str, str]


def log(msg: str) -> None:
    print(f"{datetime.now(timezone.utc).strftime('%H:%M:%S.%f')[:-3]} podsim: {msg}", file=sys.stderr, flush=True)


def now_rfc3339() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(s: str | None) -> float | None:
    if not s:
        return None
    s = s.replace("Z", "+00:00")
    try:
        return datetime.fromisoformat(s).timestamp()
    except ValueError:
        return None


def fmt_time(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def fmt_nano(t: float) -> str:
    # RFC3339Nano as the kubelet prefixes log lines with timestamps=true
    d = datetime.fromtimestamp(t, timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond:06d}000Z"


class ApiError(Exception):
    def __init__(self, status: int, body: str):
        super().__init__(f"HTTP {status}: {body[:300]}")
        self.status = status


# ---------------------------------------------------------------------------------------------
# a tiny API client (one keep-alive connection per thread)
# ---------------------------------------------------------------------------------------------

class Api:
    def __init__(self, server: str, ca: str, cert: str, key: str):
        u = urllib.parse.urlsplit(server)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 443
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)
        self.local = threading.local()

    def _conn(self, timeout: float | None = 30) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def call(self, method: str, path: str, body: Any = None, ctype: str = "application/json") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json", "User-Agent": "cronctl-podsim"}
        if data is not None:
            headers["Content-Type"] = ctype
        for attempt in range(2):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = self._conn()
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt:
                    raise
                continue
            if resp.status >= 300:
                raise ApiError(resp.status, raw.decode(errors="replace"))
            return json.loads(raw) if raw else None
        raise AssertionError("unreachable")

    def watch(self, path: str) -> Iterator[dict[str, Any]]:
        """Yield watch events from `path` (a URL with watch=1) until the server ends the stream."""
        conn = self._conn(timeout=600)
        try:
            conn.request("GET", path, headers={"Accept": "application/json", "User-Agent": "cronctl-podsim"})
            resp = conn.getresponse()
            if resp.status != 200:
                raise ApiError(resp.status, resp.read().decode(errors="replace"))
            while True:
                line = resp.readline()
                if not line:
                    return
                if line.strip():
                    yield json.loads(line)
        finally:
            conn.close()


# ---------------------------------------------------------------------------------------------
# pod arithmetic: everything is derived from the pod object
# ---------------------------------------------------------------------------------------------

def ann(pod: Pod, name: str) -> str | None:
    return ((pod.get("metadata") or {}).get("annotations") or {}).get(ANN + name)


def duration_of(pod: Pod) -> float:
    v = ann(pod, "duration-seconds")
    if v is None:
        return DEFAULT_DURATION
    if v.strip().lower() in ("inf", "infinity", "forever"):
        return math.inf
    try:
        return max(0.0, float(v))
    except ValueError:
        return DEFAULT_DURATION


def exit_code_of(pod: Pod) -> int:
    try:
        return int(ann(pod, "exit-code") or DEFAULT_EXIT)
    except ValueError:
        return 1


def termination_of(pod: Pod) -> float:
    try:
        return max(0.0, float(ann(pod, "termination-seconds") or 0))
    except ValueError:
        return 0.0


def is_exec(pod: Pod) -> bool:
    return (ann(pod, "exec") or "").strip().lower() == "true"


def field_value(pod: Pod, path: str) -> str:
    """A downward API ``fieldRef.fieldPath`` of ``pod``, as the kubelet resolves it ("" if unknown)."""
    meta, spec, st = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
              "spec.serviceAccountName": spec.get("serviceAccountName"), "status.podIP": st.get("podIP"),
              "status.hostIP": st.get("hostIP")}
    if path in simple:
        return str(simple[path] or "")
    for prefix, source in (("metadata.labels", meta.get("labels")), ("metadata.annotations", meta.get("annotations"))):
        if path.startswith(prefix + "['") and path.endswith("']"):
            return str((source or {}).get(path[len(prefix) + 2:-2]) or "")
    return ""


def exec_env(pod: Pod, container: dict[str, Any]) -> dict[str, str]:
    """The environment of an exec-mode container: the simulator's PATH, HOME and LANG, then the
    container's env in order (``$(VAR)`` references expanded as the kubelet does)."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
    env["HOSTNAME"] = pod["metadata"]["name"]
    for e in container.get("env") or []:
        name = e.get("name")
        if not name:
            continue
        if "value" in e:
            v = str(e.get("value") or "")
            for k, old in env.items():
                v = v.replace(f"$({k})", old)
            env[name] = v
        elif ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath"):
            env[name] = field_value(pod, e["valueFrom"]["fieldRef"]["fieldPath"])
    return env


def key_of(pod: Pod) -> Key:
    m = pod["metadata"]
    return m.get("namespace", ""), m["name"]


def rv_of(pod: Pod) -> int:
    try:
        return int(pod["metadata"].get("resourceVersion") or 0)
    except ValueError:
        return 0


def is_terminal(pod: Pod) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class Sim:
    def __init__(self, cfg: dict[str, Any]):
        self.cfg = cfg
        self.node = cfg["node"]
        # the real node (scripts/cluster up --node real): a kubelet runs the pods, this process only
        # binds them to its node as kube-scheduler would; no node, no kubelet endpoint of its own
        self.bind_only = bool(cfg.get("bind_only"))
        self.api = Api(cfg["server"], cfg["ca"], cfg["client_cert"], cfg["client_key"])
        self.pods: dict[Key, Pod] = {}
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # notified on every cache change (log follow)
        # precise start times of container attempts we started: (uid, container, restartCount) -> t
        self.started: dict[tuple[str, str, int], float] = {}
        self.finished: dict[tuple[str, str, int], float] = {}
        self.deleting_seen: dict[str, float] = {}
        # exec mode: pod uid -> its running process; (uid, container, attempt) -> output lines
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.exec_out: dict[tuple[str, str, int], list[tuple[float, str]]] = {}
        # work queue
        self.queue: collections.deque[Key] = collections.deque()
        self.queued: set[Key] = set()
        self.active: set[Key] = set()
        self.dirty: set[Key] = set()
        self.qcond = threading.Condition()
        # timers
        self.timers: list[tuple[float, Key]] = []
        self.tcond = threading.Condition()
        self.ip_seq = 0
        self.node_uid = ""
        self.stop = threading.Event()

    # --- queue -------------------------------------------------------------------------------

    def enqueue(self, key: Key) -> None:
        with self.qcond:
            if key in self.active:
                self.dirty.add(key)
            elif key not in self.queued:
                self.queued.add(key)
                self.queue.append(key)
                self.qcond.notify()

    def after(self, delay: float, key: Key) -> None:
        with self.tcond:
            heapq.heappush(self.timers, (time.time() + delay, key))
            self.tcond.notify()

    def timer_loop(self) -> None:
        while not self.stop.is_set():
            with self.tcond:
                while not self.timers:
                    self.tcond.wait()
                due, key = self.timers[0]
                wait = due - time.time()
                if wait > 0:
                    self.tcond.wait(min(wait, 30))
                    continue
                heapq.heappop(self.timers)
            self.enqueue(key)

    def worker(self) -> None:
        while not self.stop.is_set():
            with self.qcond:
                while not self.queue:
                    self.qcond.wait()
                key = self.queue.popleft()
                self.queued.discard(key)
                self.active.add(key)
            try:
                self.reconcile(key)
            except ApiError as e:
                if e.status not in (404, 409):
                    log(f"{key[0]}/{key[1]}: {e}; retrying in 1s")
                self.after(1.0, key)
            except Exception:  # keep the worker alive; the pod is retried
                log(f"{key[0]}/{key[1]}: {traceback.format_exc()}")
                self.after(2.0, key)
            finally:
                with self.qcond:
                    self.active.discard(key)
                    if key in self.dirty:
                        self.dirty.discard(key)
                        if key not in self.queued:
                            self.queued.add(key)
                            self.queue.append(key)
                            self.qcond.notify()

    # --- cache -------------------------------------------------------------------------------

    def store(self, pod: Pod) -> None:
        """Keep the newest version we have seen (watch events and our own write responses race)."""
        key = key_of(pod)
        with self.lock:
            old = self.pods.get(key)
            if old is None or old["metadata"].get("uid") != pod["metadata"].get("uid") or rv_of(pod) >= rv_of(old):
                self.pods[key] = pod
            self.changed.notify_all()

    def forget(self, pod: Pod) -> None:
        key = key_of(pod)
        uid = pod["metadata"].get("uid")
        with self.lock:
            old = self.pods.get(key)
            if old is not None and old["metadata"].get("uid") == uid:
                del self.pods[key]
            for k in [k for k in self.started if k[0] == uid]:
                del self.started[k]
            for k in [k for k in self.finished if k[0] == uid]:
                del self.finished[k]
            for k in [k for k in self.exec_out if k[0] == uid]:
                del self.exec_out[k]
            self.deleting_seen.pop(uid, None)
            self.changed.notify_all()

    def get(self, key: Key) -> Pod | None:
        with self.lock:
            return self.pods.get(key)

    def watch_loop(self) -> None:
        rv = ""
        while not self.stop.is_set():
            try:
                if not rv:
                    rv = self.relist()
                path = f"/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion={rv}"
                for ev in self.api.watch(path):
                    typ, obj = ev.get("type"), ev.get("object") or {}
                    if typ == "ERROR":
                        if obj.get("code") == 410:
                            rv = ""  # too old: list again
                        else:
                            log(f"watch error: {obj.get('message')}")
                            time.sleep(1)
                        break
                    rv = obj.get("metadata", {}).get("resourceVersion") or rv
                    if typ == "BOOKMARK":
                        continue
                    if typ == "DELETED":
                        self.forget(obj)
                        continue
                    self.store(obj)
                    self.enqueue(key_of(obj))
            except ApiError as e:
                log(f"watch: {e}")
                if e.status == 410:
                    rv = ""
                time.sleep(1)
            except (OSError, http.client.HTTPException, ValueError) as e:
                log(f"watch dropped: {e!r}; reconnecting")
                time.sleep(1)

    def relist(self) -> str:
        seen: dict[Key, Pod] = {}
        cont = ""
        while True:
            q = "limit=500" + (f"&continue={urllib.parse.quote(cont)}" if cont else "")
            lst = self.api.call("GET", f"/api/v1/pods?{q}")
            for p in lst.get("items") or []:
                seen[key_of(p)] = p
            cont = lst["metadata"].get("continue") or ""
            if not cont:
                rv = lst["metadata"]["resourceVersion"]
                break
        with self.lock:
            for k in [k for k in self.pods if k not in seen]:
                del self.pods[k]
            self.pods.update(seen)
            self.changed.notify_all()
        for k in seen:
            self.enqueue(k)
        log(f"listed {len(seen)} pods at resourceVersion {rv}")
        return str(rv)

    # --- reconcile ---------------------------------------------------------------------------

    def reconcile(self, key: Key) -> None:
        pod = self.get(key)
        if pod is None:
            return
        meta, spec, st = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
        node = spec.get("nodeName")
        if node and (node != self.node or self.bind_only):
            return  # another node's pod, or (bind-only) the real kubelet's from here on
        ns, name, uid = key[0], key[1], meta["uid"]
        path = f"/api/v1/namespaces/{ns}/pods/{name}"
        if meta.get("deletionTimestamp"):
            if not node or self.bind_only:
                return  # the apiserver deletes unscheduled pods at once
            if is_exec(pod) and not is_terminal(pod) and st.get("containerStatuses"):
                self.stop_exec(pod)
                return
            if not is_terminal(pod) and st.get("containerStatuses"):
                # containers get SIGTERM; they take termination-seconds (at most the grace period)
                first = self.deleting_seen.setdefault(uid, time.time())
                grace = meta.get("deletionGracePeriodSeconds")
                stop_after = min(termination_of(pod), float(grace) if grace is not None else 30.0)
                if time.time() < first + stop_after:
                    self.after(first + stop_after - time.time() + 0.01, key)
                    return
                for c in spec.get("containers") or []:
                    self.event(pod, "Killing", f"Stopping container {c['name']}", "kubelet")
                self.write_status(pod, self.terminal_status(pod, time.time(), KILLED_EXIT, "Error", "Failed"))
            self.api.call("DELETE", path, {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                                           "preconditions": {"uid": uid}})
            return
        if not node:
            if spec.get("schedulingGates"):
                return  # kube-scheduler leaves gated pods alone
            self.api.call("POST", f"{path}/binding", {
                "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": ns, "uid": uid},
                "target": {"apiVersion": "v1", "kind": "Node", "name": self.node}})
            self.event(pod, "Scheduled", f"Successfully assigned {ns}/{name} to {self.node}", "default-scheduler")
            return
        if is_terminal(pod):
            return
        statuses = st.get("containerStatuses") or []
        if not statuses or st.get("phase") == "Pending":
            self.start_pod(pod)
            if is_exec(pod):
                self.start_exec(self.get(key) or pod, 0)
            return
        if is_exec(pod):
            return  # the process's own end writes the status (exec_wait)
        # the current attempt: the first container's running state (all containers run in lockstep)
        running = (statuses[0].get("state") or {}).get("running")
        if not running:
            return
        restarts = int(statuses[0].get("restartCount") or 0)
        c0 = statuses[0]["name"]
        started = self.started.get((uid, c0, restarts)) or parse_time(running.get("startedAt")) or time.time()
        end = started + duration_of(pod)
        deadline = spec.get("activeDeadlineSeconds")
        start_time = parse_time(st.get("startTime"))
        if deadline is not None and start_time is not None and start_time + float(deadline) <= end:
            due = start_time + float(deadline)
            if time.time() >= due:
                status = self.terminal_status(pod, due, KILLED_EXIT, "Error", "Failed")
                status["reason"] = "DeadlineExceeded"
                status["message"] = f"Pod was active on the node longer than the specified deadline"
                self.write_status(pod, status)
                return
            self.after(due - time.time() + 0.01, key)
            return
        if math.isinf(end):
            return
        if time.time() < end:
            self.after(end - time.time() + 0.01, key)
            return
        code = exit_code_of(pod)
        policy = spec.get("restartPolicy") or "Always"
        if policy == "Always" or (policy == "OnFailure" and code != 0):
            self.restart(pod, end, code)
        else:
            self.write_status(pod, self.terminal_status(pod, end, code, "Completed" if code == 0 else "Error",
                                                         "Succeeded" if code == 0 else "Failed"))

    def event(self, pod: Pod, reason: str, message: str, component: str, etype: str = "Normal") -> None:
        """Record a core/v1 Event on the pod as kube-scheduler / the kubelet would (best effort)."""
        ns, name = key_of(pod)
        now = now_rfc3339()
        m = pod["metadata"]
        body = {"apiVersion": "v1", "kind": "Event",
                "metadata": {"generateName": f"{name}.", "namespace": ns},
                "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": name,
                                   "uid": m.get("uid"), "resourceVersion": m.get("resourceVersion")},
                "reason": reason, "message": message, "type": etype, "count": 1,
                "firstTimestamp": now, "lastTimestamp": now,
                "source": {"component": component, **({"host": self.node} if component == "kubelet" else {})},
                "reportingComponent": component, "reportingInstance": self.node if component == "kubelet" else ""}
        try:
            self.api.call("POST", f"/api/v1/namespaces/{ns}/events", body)
        except ApiError as e:
            if e.status not in (403, 404):  # 403: the namespace is being deleted
                log(f"event {reason} on {ns}/{name}: {e}")
        except (OSError, http.client.HTTPException) as e:
            log(f"event {reason} on {ns}/{name}: {e!r}")

    def write_status(self, pod: Pod, status: dict[str, Any]) -> None:
        ns, name = key_of(pod)
        new = self.api.call("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}/status",
                            {"metadata": {"uid": pod["metadata"]["uid"]}, "status": status},
                            "application/strategic-merge-patch+json")
        self.store(new)
        self.enqueue(key_of(new))

    def _container_id(self, pod: Pod, c: str, n: int) -> str:
        return f"sim://{pod['metadata']['uid']}/{c}/{n}"

    def start_pod(self, pod: Pod) -> None:
        t = time.time()
        now = fmt_time(t)
        uid = pod["metadata"]["uid"]
        spec = pod.get("spec") or {}
        with self.lock:
            self.ip_seq += 1
            ip = f"10.88.{(self.ip_seq >> 8) & 255}.{self.ip_seq & 255}"
        cs = []
        for c in spec.get("containers") or []:
            self.started[(uid, c["name"], 0)] = t
            cs.append({"name": c["name"], "image": c.get("image", ""), "imageID": "sim://" + c.get("image", ""),
                       "containerID": self._container_id(pod, c["name"], 0), "ready": True, "started": True,
                       "restartCount": 0, "state": {"running": {"startedAt": now}}})
        ics = [{"name": c["name"], "image": c.get("image", ""), "imageID": "sim://" + c.get("image", ""),
                "containerID": self._container_id(pod, c["name"], 0), "ready": True, "started": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now,
                                         "containerID": self._container_id(pod, c["name"], 0)}}}
               for c in spec.get("initContainers") or []]
        cond = [{"type": t_, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
                for t_ in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")]
        status: dict[str, Any] = {
            "phase": "Running", "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}],
            "podIP": ip, "podIPs": [{"ip": ip}], "startTime": now, "conditions": cond, "containerStatuses": cs}
        if ics:
            status["initContainerStatuses"] = ics
        self.write_status(pod, status)
        for c in spec.get("containers") or []:
            self.event(pod, "Started", f"Started container {c['name']}", "kubelet")

    # --- exec mode ---------------------------------------------------------------------------

    def start_exec(self, pod: Pod, attempt: int) -> None:
        """Run the first container's command as a process on this host (exec mode)."""
        uid = pod["metadata"]["uid"]
        c = (pod.get("spec") or {}).get("containers", [{}])[0]
        argv = [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
        out = self.exec_out.setdefault((uid, c.get("name", ""), attempt), [])
        try:
            proc = subprocess.Popen(argv, env=exec_env(pod, c), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        except (OSError, IndexError, ValueError) as e:
            out.append((time.time(), f"sim exec: cannot start {argv!r}: {e}"))
            self.exec_end(pod, 127)
            return
        log(f"exec {key_of(pod)[0]}/{key_of(pod)[1]}: pid {proc.pid}: {argv!r}")
        with self.lock:
            self.procs[uid] = proc
        threading.Thread(target=self.exec_wait, args=(key_of(pod), uid, proc, out), daemon=True).start()

    def exec_wait(self, key: Key, uid: str, proc: subprocess.Popen[bytes], out: list[tuple[float, str]]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            with self.lock:
                out.append((time.time(), raw.decode("utf-8", "replace").rstrip("\n")))
                self.changed.notify_all()
        code = proc.wait()
        code = code if code >= 0 else 128 - code
        with self.lock:
            self.procs.pop(uid, None)
        pod = self.get(key)
        if pod is None or pod["metadata"].get("uid") != uid or is_terminal(pod):
            return
        for attempt in range(20):
            try:
                self.exec_end(self.get(key) or pod, code)
                return
            except (ApiError, OSError, http.client.HTTPException) as e:
                log(f"exec {key[0]}/{key[1]}: status after exit {code}: {e!r}; retrying")
                time.sleep(0.5)

    def exec_end(self, pod: Pod, code: int) -> None:
        """The process ended: the pod ends with its code (OnFailure: it runs again after a failure)."""
        end = time.time()
        policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        if not pod["metadata"].get("deletionTimestamp") and (policy == "Always" or (policy == "OnFailure" and code)):
            self.restart(pod, end, code)
            n = int(((pod.get("status") or {}).get("containerStatuses") or [{}])[0].get("restartCount") or 0)
            self.start_exec(self.get(key_of(pod)) or pod, n + 1)
            return
        self.write_status(pod, self.terminal_status(pod, end, code, "Completed" if code == 0 else "Error",
                                                     "Succeeded" if code == 0 else "Failed"))

    def stop_exec(self, pod: Pod) -> None:
        """A deleted exec pod: SIGTERM its process once, SIGKILL after the grace period; its exit
        (exec_wait) writes the status, then the next reconcile deletes the pod."""
        uid = pod["metadata"]["uid"]
        with self.lock:
            proc = self.procs.get(uid)
        if proc is None:  # already ended (or never started): finish as a pod without a process
            self.write_status(pod, self.terminal_status(pod, time.time(), KILLED_EXIT, "Error", "Failed"))
            return
        if uid in self.deleting_seen:
            return
        self.deleting_seen[uid] = time.time()
        grace = pod["metadata"].get("deletionGracePeriodSeconds")
        grace_s = float(grace) if grace is not None else 30.0

        def term() -> None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        threading.Thread(target=term, daemon=True).start()

    def restart(self, pod: Pod, end: float, code: int) -> None:
        """Restart every container in place, as the kubelet does for OnFailure/Always."""
        t = time.time()
        uid = pod["metadata"]["uid"]
        cs = []
        for s in pod["status"]["containerStatuses"]:
            n = int(s.get("restartCount") or 0)
            running = (s.get("state") or {}).get("running") or {}
            self.started[(uid, s["name"], n + 1)] = t
            self.finished[(uid, s["name"], n)] = end
            cs.append({**s, "restartCount": n + 1, "containerID": self._container_id(pod, s["name"], n + 1),
                       "ready": True, "started": True,
                       "lastState": {"terminated": {
                           "exitCode": code, "reason": "Completed" if code == 0 else "Error",
                           "startedAt": running.get("startedAt") or fmt_time(end), "finishedAt": fmt_time(end),
                           "containerID": s.get("containerID")}},
                       "state": {"running": {"startedAt": fmt_time(t)}}})
        self.write_status(pod, {"containerStatuses": cs})

    def terminal_status(self, pod: Pod, end: float, code: int, reason: str, phase: str) -> dict[str, Any]:
        fin = fmt_time(end)
        cs = []
        uid = pod["metadata"]["uid"]
        for s in (pod.get("status") or {}).get("containerStatuses") or []:
            running = (s.get("state") or {}).get("running") or {}
            self.finished[(uid, s["name"], int(s.get("restartCount") or 0))] = end
            cs.append({**s, "ready": False, "started": False, "state": {"terminated": {
                "exitCode": code, "reason": reason, "startedAt": running.get("startedAt") or fin, "finishedAt": fin,
                "containerID": s.get("containerID")}}})
        cond = [{"type": t_, "status": "False", "reason": "PodCompleted", "lastProbeTime": None,
                 "lastTransitionTime": fin} for t_ in ("Ready", "ContainersReady")]
        cond.append({"type": "PodReadyToStartContainers", "status": "False", "lastProbeTime": None,
                     "lastTransitionTime": fin})
        return {"phase": phase, "conditions": cond, "containerStatuses": cs}

    # --- node --------------------------------------------------------------------------------

    def node_status(self) -> dict[str, Any]:
        now = now_rfc3339()
        conds = [("MemoryPressure", "False", "KubeletHasSufficientMemory"),
                 ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
                 ("PIDPressure", "False", "KubeletHasSufficientPID"),
                 ("Ready", "True", "KubeletReady")]
        res = {"cpu": "64", "memory": "256Gi", "pods": "10000", "ephemeral-storage": "1Ti"}
        return {
            "conditions": [{"type": t, "status": s, "reason": r, "message": "simulated by cronctl podsim",
                            "lastHeartbeatTime": now, "lastTransitionTime": self.boot_time} for t, s, r in conds],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": self.node}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": int(self.cfg["kubelet_port"])}},
            "capacity": res, "allocatable": res,
            "nodeInfo": {"machineID": "cronctl-sim", "systemUUID": "cronctl-sim", "bootID": self.boot_time,
                         "kernelVersion": os.uname().release, "osImage": "cronctl pod simulator",
                         "containerRuntimeVersion": "sim://1", "kubeletVersion": "v1.36.3-sim",
                         "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"},
        }

    def register_node(self) -> None:
        self.boot_time = now_rfc3339()
        body = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.node, "labels": {
                    "kubernetes.io/hostname": self.node, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                    "sim.cronctl.dev/simulated": "true"}}}
        try:
            node = self.api.call("POST", "/api/v1/nodes", body)
        except ApiError as e:
            if e.status != 409:
                raise
            node = self.api.call("GET", f"/api/v1/nodes/{self.node}")
        self.node_uid = node["metadata"]["uid"]
        self.api.call("PATCH", f"/api/v1/nodes/{self.node}/status", {"status": self.node_status()},
                      "application/strategic-merge-patch+json")
        self.renew_lease()
        log(f"node {self.node} registered, kubelet endpoint 127.0.0.1:{self.cfg['kubelet_port']}")

    def renew_lease(self) -> None:
        path = f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{self.node}"
        renew = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        try:
            self.api.call("PATCH", path, {"spec": {"holderIdentity": self.node, "leaseDurationSeconds": 40,
                                                   "renewTime": renew}}, "application/merge-patch+json")
        except ApiError as e:
            if e.status != 404:
                raise
            self.api.call("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.node, "namespace": "kube-node-lease", "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": self.node, "uid": self.node_uid}]},
                "spec": {"holderIdentity": self.node, "leaseDurationSeconds": 40, "renewTime": renew}})

    def heartbeat_loop(self) -> None:
        last_status = time.time()
        while not self.stop.wait(LEASE_EVERY):
            try:
                self.renew_lease()
                if time.time() - last_status >= NODE_STATUS_EVERY:
                    self.api.call("PATCH", f"/api/v1/nodes/{self.node}/status", {"status": self.node_status()},
                                  "application/strategic-merge-patch+json")
                    last_status = time.time()
            except ApiError as e:
                if e.status == 404:
                    log("node was deleted: registering again")
                    try:
                        self.register_node()
                    except Exception as e2:  # retried on the next beat
                        log(f"register node: {e2!r}")
                else:
                    log(f"heartbeat: {e}")
            except (OSError, http.client.HTTPException) as e:
                log(f"heartbeat: {e!r}")

    # --- logs --------------------------------------------------------------------------------

    def log_lines(self, pod: Pod, container: str, previous: bool) -> tuple[list[tuple[float, str]], bool] | str:
        """The lines of one container attempt and whether that attempt still runs, or an error."""
        st = pod.get("status") or {}
        statuses = (st.get("containerStatuses") or []) + (st.get("initContainerStatuses") or [])
        s = next((x for x in statuses if x.get("name") == container), None)
        name = pod["metadata"]["name"]
        if s is None:
            return f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
        n = int(s.get("restartCount") or 0)
        if previous:
            state = (s.get("lastState") or {}).get("terminated")
            if not state:
                return f'previous terminated container "{container}" in pod "{name}" not found'
            n -= 1
        else:
            state = (s.get("state") or {}).get("running") or (s.get("state") or {}).get("terminated")
            if not state:
                return f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
        uid = pod["metadata"]["uid"]
        start = self.started.get((uid, container, n)) or parse_time(state.get("startedAt")) or time.time()
        lines = [(start, f"sim: container {container} started (attempt {n + 1})")]
        with self.lock:
            lines += list(self.exec_out.get((uid, container, n), []))
        text = ann(pod, "log")
        if text:
            lines += [(start, ln) for ln in text.replace("\\n", "\n").splitlines()]
        if "exitCode" in state:
            fin = self.finished.get((uid, container, n)) or parse_time(state.get("finishedAt")) or start
            lines.append((max(fin, start), f"sim: container {container} exited with code {state['exitCode']}"))
            return lines, False
        return lines, True


def make_handler(sim: Sim) -> type[BaseHTTPRequestHandler]:
    class Kubelet(BaseHTTPRequestHandler):
        server_version = "cronctl-podsim"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

        def fail(self, code: int, msg: str) -> None:
            data = msg.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            u = urllib.parse.urlsplit(self.path)
            parts = u.path.strip("/").split("/")
            if u.path in ("/healthz", "/readyz", "/livez"):
                return self.fail(200, "ok")
            if len(parts) != 4 or parts[0] != "containerLogs":
                return self.fail(404, f"not found: {u.path}")
            q = {k: v[-1] for k, v in urllib.parse.parse_qs(u.query).items()}
            ns, name, container = parts[1:]
            pod = sim.get((ns, name))
            if pod is None:
                return self.fail(404, f'pod "{ns}/{name}" not found on node {sim.node}')
            truthy = ("true", "1")
            previous = q.get("previous", "").lower() in truthy
            follow = q.get("follow", "").lower() in truthy and not previous
            res = sim.log_lines(pod, container, previous)
            if isinstance(res, str):
                return self.fail(400, res)
            lines, running = res
            since: float | None = None
            if "sinceSeconds" in q:
                since = time.time() - int(q["sinceSeconds"])
            elif "sinceTime" in q:
                since = parse_time(q["sinceTime"])
            tail = int(q["tailLines"]) if "tailLines" in q else None
            limit = int(q["limitBytes"]) if "limitBytes" in q else None
            stamps = q.get("timestamps", "").lower() in truthy
            stderr_only = q.get("stream") == "Stderr"  # everything we print goes to stdout

            def render(ls: list[tuple[float, str]]) -> bytes:
                if since is not None:
                    ls = [x for x in ls if x[0] >= since]
                return "".join(f"{fmt_nano(t) + ' ' if stamps else ''}{ln}\n" for t, ln in ls).encode()

            shown = [] if stderr_only else (lines[-tail:] if tail is not None and tail > 0 else [] if tail == 0 else lines)
            data = render(shown)
            if limit is not None:
                data = data[:limit]
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            if not (follow and running):
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.end_headers()  # HTTP/1.0: the body ends when we close the connection
            sent = len(data)
            self.wfile.write(data)
            self.wfile.flush()
            uid = pod["metadata"]["uid"]
            n_before = len(lines)
            while not sim.stop.is_set():
                with sim.lock:
                    sim.changed.wait(1.0)
                cur = sim.get((ns, name))
                if cur is None or cur["metadata"]["uid"] != uid:
                    return
                res2 = sim.log_lines(cur, container, False)
                if isinstance(res2, str):
                    return
                lines2, running2 = res2
                if len(lines2) < n_before:  # restarted: this attempt is over, as for the kubelet
                    return
                extra = render(lines2[n_before:]) if not stderr_only else b""
                if limit is not None:
                    extra = extra[:max(0, limit - sent)]
                if extra:
                    self.wfile.write(extra)
                    self.wfile.flush()
                    sent += len(extra)
                n_before = len(lines2)
                if not running2:
                    return

    return Kubelet


def serve_kubelet(sim: Sim) -> ThreadingHTTPServer:
    srv = ThreadingHTTPServer(("127.0.0.1", int(sim.cfg["kubelet_port"])), make_handler(sim))
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sim.cfg["kubelet_cert"], sim.cfg["kubelet_key"])
    # only the apiserver (client certificate signed by the cluster CA) may read logs
    ctx.load_verify_locations(sim.cfg["ca"])
    ctx.verify_mode = ssl.CERT_REQUIRED
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, name="kubelet", daemon=True).start()
    return srv


def main() -> int:
    ap = argparse.ArgumentParser(description="cronctl pod simulator (fake kubelet + scheduler)")
    ap.add_argument("--config", required=True, help="JSON: server, ca, client_cert, client_key, node, kubelet_*")
    a = ap.parse_args()
    with open(a.config) as f:
        cfg = json.load(f)
    sim = Sim(cfg)
    def on_term(*_: object) -> None:
        sim.stop.set()
        os._exit(0)  # daemon threads may sit in blocking reads: leave at once

    signal.signal(signal.SIGTERM, on_term)
    if sim.bind_only:
        log(f"binding pods to node {sim.node} (a real kubelet runs them)")
        threads = [threading.Thread(target=sim.watch_loop, name="watch", daemon=True)]
        threads += [threading.Thread(target=sim.worker, name=f"worker-{i}", daemon=True) for i in range(WORKERS)]
        for t in threads:
            t.start()
        while True:
            time.sleep(3600)
    serve_kubelet(sim)
    for attempt in range(100):
        try:
            sim.register_node()
            break
        except (ApiError, OSError) as e:  # e.g. kube-node-lease not created yet
            if attempt == 99:
                raise
            log(f"register node: {e!r}; retrying")
            time.sleep(0.5)
    threads = [threading.Thread(target=sim.watch_loop, name="watch", daemon=True),
               threading.Thread(target=sim.timer_loop, name="timers", daemon=True),
               threading.Thread(target=sim.heartbeat_loop, name="heartbeat", daemon=True)]
    threads += [threading.Thread(target=sim.worker, name=f"worker-{i}", daemon=True) for i in range(WORKERS)]
    for t in threads:
        t.start()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
