"""The real node of the local control plane (``scripts/cluster up --node real``): a kubelet and
containerd that run each pod's containers as real processes with runc.

Everything of the node is private to the cluster's state directory, so two clusters on one machine
never meet and ``down`` leaves nothing behind:

* **one mount namespace** (component ``node-ns``: ``unshare --mount --propagation private`` holding
  it with a ``sleep``): containerd and the kubelet are started inside it with ``nsenter``. In it,
  ``/run``, ``/var/log`` and ``/var/lib`` are bind mounts of folders under ``<state>/node/ns/``, so
  what the two write to fixed paths (containerd's shim sockets under ``/run/containerd/s``, the
  kubelet's ``/var/log/containers`` links, libcni's cache in ``/var/lib/cni``) lands there. Every
  mount either makes (overlay root file systems, the kubelet's volume tmpfs, the pods' network
  namespace files) exists only in that namespace: when its last process ends at ``down``, the
  kernel drops them all, and with them the pods' network namespaces. The kernel settings a kubelet
  would change on its host (``vm.overcommit_memory``, ``kernel.panic``, ``kernel.panic_on_oops``,
  ...) are files there that already hold the values it wants (KUBELET_SYSCTLS): it changes none.
* **one cgroup** ``/cronctl-<tag>`` in every cgroup hierarchy (``<tag>``: a hash of the state
  directory): containerd, the kubelet and the namespace holder join ``/cronctl-<tag>/node``, the
  shims ``/cronctl-<tag>/shims``, and the kubelet's ``cgroupRoot`` is ``/cronctl-<tag>`` (pods under
  ``/cronctl-<tag>/kubepods``). ``down`` stops the kubelet and containerd, kills what is left in that
  cgroup (shims, containers: nothing else is in it) and removes the cgroups.
* **one bridge** ``cronctl<8 hex>`` in the host's network namespace for the pods (CNI ``bridge`` +
  ``host-local`` + ``loopback`` from Debian's containernetworking-plugins). It has no address and the
  pods get no default route: a pod reaches the pods of its node and nothing else, so nothing a test
  runs can send traffic off the machine. ``down`` deletes it.
* containerd's root, state and socket, the kubelet's root directory, its pod logs and the CNI
  configuration and IP allocations live under ``<state>/node/``.

The kubelet's ``PATH`` leaves out ``/usr/sbin``: it finds no ``iptables`` and writes none of the
rules it keeps for kube-proxy's sake into the host's tables (there is no kube-proxy here).

Images come from no registry: ``build_images`` makes them from Debian packages and imports them into
containerd (``ctr images import``); pods use ``imagePullPolicy: Never``. See IMAGES.

Only the standard library is used (as in scripts/cluster.py, which imports this file).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cronctl"
CONTAINERD_VERSION = "2.4.2"
#: the node's name; the kubelet takes an IP given as its hostname as the node's InternalIP as it is
#: (``--node-ip`` refuses a loopback address), so the API server reaches it on 127.0.0.1
NODE_NAME = "127.0.0.1"
COMPONENTS = ("node-ns", "containerd", "kubelet")
DEBIAN_PACKAGES = {"runc": "/usr/sbin/runc", "containernetworking-plugins": "/usr/lib/cni/bridge",
                   "busybox-static": "/bin/busybox"}
CNI_BIN = "/usr/lib/cni"
RUNC = "/usr/sbin/runc"
POD_SUBNET = "10.244.0.0/24"   # pods of one node, on a bridge of their own with no route anywhere else
PRIVATE_DIRS = ("/run", "/var/log", "/var/lib")  # bind-mounted from <state>/node/ns/ in the node's namespace
#: the kernel settings a kubelet sets on its host when they differ (its setupKernelTunables; with
#: protectKernelDefaults it refuses to start instead). In the node's namespace a file with the value it
#: wants is bind-mounted over each, so it reads its value and writes nothing: the host keeps its own.
KUBELET_SYSCTLS = {"vm/overcommit_memory": 1, "vm/panic_on_oom": 0, "kernel/panic": 10, "kernel/panic_on_oops": 1,
                   "kernel/keys/root_maxkeys": 1000000, "kernel/keys/root_maxbytes": 25000000}
#: the images a test can run; name -> (tag, what it is)
IMAGES = {
    "pause": ("cronctl.local/pause:1", "the pods' sandbox: a static Go program that sleeps until SIGTERM or SIGINT"),
    "shell": ("cronctl.local/shell:1", "Debian's busybox-static: /bin/sh and the busybox applets in /bin"),
}
PAUSE_GO = """package main

import (
	"os"
	"os/signal"
	"syscall"
)

// The sandbox of every pod of cronctl's local real node: it sleeps until it is told to stop.
func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
"""


class NodeError(Exception):
    """Something the real node needs is missing or failed; the message says what."""


def log(msg: str) -> None:
    print(f"cluster: {msg}", file=sys.stderr, flush=True)


def containerd_bin() -> Path:
    return CACHE / "containerd" / f"v{CONTAINERD_VERSION}" / "bin"


def _run(argv: list[str], what: str, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=timeout)
    if r.returncode != 0:
        raise NodeError(f"{what} failed (exit {r.returncode}): {' '.join(argv)}\n{r.stdout.strip()[-3000:]}")
    return r.stdout


# ---------------------------------------------------------------------------------------------
# install: Debian packages, containerd, kubelet, images
# ---------------------------------------------------------------------------------------------

def install_packages() -> None:
    missing = [p for p, f in DEBIAN_PACKAGES.items() if not os.path.exists(f)]
    if not missing:
        return
    if not shutil.which("apt-get"):
        raise NodeError(f"the real node needs Debian's {', '.join(missing)} and apt-get is not available")
    log(f"installing Debian packages {', '.join(missing)}")
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _run(sudo + ["apt-get", "update", "-qq"], "apt-get update", env)
    _run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], "apt-get install", env)


def install_containerd() -> Path:
    b = containerd_bin()
    if not all(os.access(b / x, os.X_OK) for x in ("containerd", "containerd-shim-runc-v2", "ctr")):
        log(f"building containerd v{CONTAINERD_VERSION} (once; a few minutes)")
        t0 = time.monotonic()
        r = subprocess.run([str(ROOT / "scripts" / "build-containerd.sh")],
                           env=dict(os.environ, CONTAINERD_VERSION=CONTAINERD_VERSION))
        if r.returncode != 0:
            raise NodeError(f"scripts/build-containerd.sh failed (exit {r.returncode})")
        log(f"containerd built in {time.monotonic() - t0:.0f}s")
    return b


def install_kubelet(version: str, bin_dir: Path) -> None:
    if os.access(bin_dir / "kubelet", os.X_OK):
        return
    log(f"building kubelet v{version} (once per version; a few minutes)")
    t0 = time.monotonic()
    r = subprocess.run([str(ROOT / "scripts" / "build-k8s.sh")],
                       env=dict(os.environ, K8S_VERSION=version, BUILD_K8S_BINS="kubelet"))
    if r.returncode != 0:
        raise NodeError(f"scripts/build-k8s.sh (kubelet) failed (exit {r.returncode})")
    log(f"kubelet built in {time.monotonic() - t0:.0f}s")


# --- images --------------------------------------------------------------------------------------

def _tar_add(tar: tarfile.TarFile, name: str, *, data: bytes | None = None, src: str | None = None,
             mode: int = 0o755, link: str | None = None, directory: bool = False) -> None:
    """One entry with fixed owner and time, so the same inputs give the same layer digest."""
    ti = tarfile.TarInfo(name)
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = "root"
    ti.mtime = 0
    ti.mode = mode
    if directory:
        ti.type = tarfile.DIRTYPE
        tar.addfile(ti)
    elif link is not None:
        ti.type = tarfile.SYMTYPE
        ti.linkname = link
        ti.mode = 0o777
        tar.addfile(ti)
    else:
        body = data if data is not None else Path(src or "").read_bytes()
        ti.size = len(body)
        tar.addfile(ti, io.BytesIO(body))


def docker_archive(tag: str, layer: bytes, config: dict[str, object]) -> bytes:
    """A `docker save` archive (manifest.json, the config, one layer) that `ctr images import` takes."""
    diff = hashlib.sha256(layer).hexdigest()
    cfg = json.dumps({"architecture": "amd64", "os": "linux", "config": config,
                      "rootfs": {"type": "layers", "diff_ids": [f"sha256:{diff}"]},
                      "history": [{"created_by": "scripts/realnode.py"}]}, sort_keys=True).encode()
    cfg_name = f"{hashlib.sha256(cfg).hexdigest()}.json"
    manifest = json.dumps([{"Config": cfg_name, "RepoTags": [tag], "Layers": [f"{diff}/layer.tar"]}]).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as t:
        _tar_add(t, f"{diff}/", directory=True)
        _tar_add(t, f"{diff}/layer.tar", data=layer, mode=0o644)
        _tar_add(t, cfg_name, data=cfg, mode=0o644)
        _tar_add(t, "manifest.json", data=manifest, mode=0o644)
    return out.getvalue()


def _layer(fill: Callable[[tarfile.TarFile], None]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for d in ("bin/", "etc/", "tmp/"):
            _tar_add(t, d, directory=True, mode=0o1777 if d == "tmp/" else 0o755)
        _tar_add(t, "etc/passwd", data=b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n", mode=0o644)
        _tar_add(t, "etc/group", data=b"root:x:0:\nnogroup:x:65534:\n", mode=0o644)
        fill(t)
    return buf.getvalue()


def image_pause(work: Path) -> bytes:
    src = work / "pause.go"
    src.write_text(PAUSE_GO)
    out = work / "pause"
    _run(["go", "build", "-trimpath", "-ldflags=-s -w", "-o", str(out), str(src)], "go build pause",
         env=dict(os.environ, CGO_ENABLED="0", GO111MODULE="off", GOFLAGS=""))
    layer = _layer(lambda t: _tar_add(t, "pause", src=str(out)))
    return docker_archive(IMAGES["pause"][0], layer, {"Entrypoint": ["/pause"]})


def image_shell(work: Path) -> bytes:
    applets = _run(["/bin/busybox", "--list"], "busybox --list").split()

    def fill(t: tarfile.TarFile) -> None:
        _tar_add(t, "bin/busybox", src="/bin/busybox")
        for a in sorted(set(applets) - {"busybox"}):
            _tar_add(t, f"bin/{a}", link="busybox")
    return docker_archive(IMAGES["shell"][0], _layer(fill),
                          {"Env": ["PATH=/bin"], "Cmd": ["/bin/sh"], "WorkingDir": "/"})


BUILDERS: dict[str, Callable[[Path], bytes]] = {"pause": image_pause, "shell": image_shell}


def build_images() -> dict[str, Path]:
    """Each image's archive, built once into ~/.cache/cronctl/images (rebuilt when this file changes)."""
    d = CACHE / "images"
    d.mkdir(parents=True, exist_ok=True)
    stamp = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    got: dict[str, Path] = {}
    for name, build in BUILDERS.items():
        path = d / f"{name}-{stamp}.tar"
        if not path.exists():
            work = d / f".work-{name}-{os.getpid()}"
            work.mkdir(exist_ok=True)
            try:
                data = build(work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(data)
            tmp.replace(path)
            log(f"image {IMAGES[name][0]}: built {path} ({len(data) // 1024} KiB)")
        got[name] = path
    return got


# ---------------------------------------------------------------------------------------------
# the node of one cluster
# ---------------------------------------------------------------------------------------------

def _cgroup_mounts() -> list[Path]:
    """The mount points of the cgroup hierarchies (v1 ones and a v2 one, hybrid or unified)."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        pre, _, post = line.partition(" - ")
        if post.split()[0] in ("cgroup", "cgroup2"):
            out.append(Path(pre.split()[4]))
    return out


class Node:
    """The real node of the cluster whose state directory is `state`."""

    def __init__(self, state: Path, pki: Path, logs: Path):
        self.state, self.pki, self.logs = state, pki, logs
        self.dir = state / "node"
        tag = hashlib.sha256(str(state.resolve()).encode()).hexdigest()
        self.cgroup = f"cronctl-{tag[:10]}"
        self.bridge = f"cronctl{tag[:8]}"
        self.sock = self.dir / "containerd.sock"
        self.kubelet_root = self.dir / "kubelet"

    # --- paths and configuration -------------------------------------------------------------

    def check_state_dir(self) -> None:
        s = str(self.state.resolve())
        for d in PRIVATE_DIRS:
            if s == d or s.startswith(d + "/"):
                raise NodeError(f"the real node hides {d} in its mount namespace: put the cluster's "
                                f"directory (CRONCTL_CLUSTER_DIR={self.state}) elsewhere")
        if len(str(self.sock)) > 100:
            raise NodeError(f"the cluster's directory {self.state} is too long for containerd's socket path "
                            f"(at most ~90 characters)")

    def containerd_config(self) -> str:
        d = self.dir
        return f"""version = 3
root = "{d}/containerd/root"
state = "{d}/containerd/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.nri.v1.nri", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "{self.sock}"
[ttrpc]
  address = "{self.sock}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "{IMAGES['pause'][0]}"
  [plugins.'io.containerd.cri.v1.runtime']
    cdi_spec_dirs = []
    # no CAP_SYS_RESOURCE in these machines' root: a pod's oom_score_adj (-998 for the sandbox) can
    # only be raised, never lowered below containerd's own
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "{RUNC}"
          Root = "{d}/runc"
          SystemdCgroup = false
          ShimCgroup = "/{self.cgroup}/shims"
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["{CNI_BIN}"]
      conf_dir = "{d}/cni/net.d"
      max_conf_num = 1
  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
"""

    def cni_config(self) -> str:
        return json.dumps({
            "cniVersion": "1.0.0", "name": "cronctl-pods",
            "plugins": [
                {"type": "bridge", "bridge": self.bridge, "isGateway": False, "ipMasq": False, "hairpinMode": False,
                 "ipam": {"type": "host-local", "dataDir": str(self.dir / "cni" / "ipam"),
                          "ranges": [[{"subnet": POD_SUBNET}]], "routes": []}},
                {"type": "loopback"},
            ]}, indent=1)

    def kubelet_config(self, port: int) -> str:
        p = self.pki
        return f"""apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: {port}
readOnlyPort: 0
healthzPort: 0
tlsCertFile: {p}/kubelet.crt
tlsPrivateKeyFile: {p}/kubelet.key
authentication:
  anonymous: {{enabled: false}}
  webhook: {{enabled: false}}
  x509: {{clientCAFile: {p}/ca.crt}}
authorization: {{mode: AlwaysAllow}}
containerRuntimeEndpoint: unix://{self.sock}
cgroupDriver: cgroupfs
cgroupRoot: /{self.cgroup}
failCgroupV1: false
failSwapOn: false
podLogsDir: {self.dir}/pod-logs
volumePluginDir: {self.dir}/volume-plugins
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {{memory.available: "1Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%", imagefs.inodesFree: "1%"}}
mergeDefaultEvictionSettings: false
serializeImagePulls: false
shutdownGracePeriod: 0s
"""

    def write_configs(self, server: str, kubelet_port: int, write_kubeconfig: Callable[[Path, str, str, str], None]) -> None:
        for sub in ("containerd", "runc", "cni/net.d", "cni/ipam", "pod-logs", "volume-plugins", "kubelet/pki",
                    *(f"ns{d}" for d in PRIVATE_DIRS)):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "sysctl").mkdir(exist_ok=True)
        for k, v in KUBELET_SYSCTLS.items():
            (self.dir / "sysctl" / k.replace("/", ".")).write_text(f"{v}\n")
        (self.dir / "containerd.toml").write_text(self.containerd_config())
        (self.dir / "cni" / "net.d" / "10-cronctl.conflist").write_text(self.cni_config())
        (self.dir / "kubelet.yaml").write_text(self.kubelet_config(kubelet_port))
        write_kubeconfig(self.dir / "kubelet.kubeconfig", server, f"system:node:{NODE_NAME}", "kubelet-client")

    # --- cgroups -------------------------------------------------------------------------------

    def make_cgroups(self) -> None:
        for m in _cgroup_mounts():
            for sub in ("", "node", "shims"):
                d = m / self.cgroup / sub
                try:
                    d.mkdir(exist_ok=True)
                except OSError as e:
                    raise NodeError(f"cannot create cgroup {d}: {e}") from e
                # a new v1 cpuset cgroup has no CPUs and no memory nodes until given its parent's
                for f in ("cpuset.cpus", "cpuset.mems"):
                    if (d / f).exists() and not (d / f).read_text().strip():
                        (d / f).write_text((d.parent / f).read_text())

    def join_cgroup(self) -> None:
        """Called in a child before exec (preexec_fn): it joins /<cgroup>/node everywhere."""
        pid = str(os.getpid())
        for m in _cgroup_mounts():
            try:
                (m / self.cgroup / "node" / "cgroup.procs").write_text(pid)
            except OSError:
                pass

    def cgroup_pids(self) -> list[int]:
        """Every process in the node's cgroup tree (containerd, kubelet, shims, containers)."""
        pids: set[int] = set()
        for m in _cgroup_mounts():
            top = m / self.cgroup
            if not top.is_dir():
                continue
            for dirpath, _dirs, files in os.walk(top):
                if "cgroup.procs" in files:
                    try:
                        pids.update(int(x) for x in (Path(dirpath) / "cgroup.procs").read_text().split())
                    except (OSError, ValueError):
                        pass
        return sorted(pids)

    def remove_cgroups(self) -> list[str]:
        """rmdir the node's cgroups, deepest first; what could not be removed."""
        left = []
        for m in _cgroup_mounts():
            top = m / self.cgroup
            if not top.is_dir():
                continue
            for dirpath, _dirs, _files in sorted(os.walk(top), key=lambda w: -len(Path(w[0]).parts)):
                for _ in range(20):
                    try:
                        os.rmdir(dirpath)
                        break
                    except FileNotFoundError:
                        break
                    except OSError:
                        time.sleep(0.1)
                else:
                    left.append(dirpath)
        return left

    # --- processes -----------------------------------------------------------------------------

    def argv(self, name: str, holder_pid: int | None, bin_dir: Path) -> list[str]:
        if name == "node-ns":
            binds = "; ".join([f"mount -n --bind '{self.dir}/ns{d}' '{d}'" for d in PRIVATE_DIRS] +
                              [f"mount -n --bind '{self.dir}/sysctl/{k.replace('/', '.')}' /proc/sys/{k}"
                               for k in KUBELET_SYSCTLS if os.path.exists(f"/proc/sys/{k}")])
            return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
                    f"set -e; {binds}; exec sleep 2147483647"]
        if holder_pid is None:
            raise NodeError(f"{name}: the node's mount namespace (node-ns) does not run")
        enter = ["nsenter", f"--mount=/proc/{holder_pid}/ns/mnt", "--"]
        if name == "containerd":
            return enter + [str(containerd_bin() / "containerd"), "--config", str(self.dir / "containerd.toml"),
                            "--log-level", "info"]
        if name == "kubelet":
            return enter + [str(bin_dir / "kubelet"), f"--config={self.dir}/kubelet.yaml",
                            f"--kubeconfig={self.dir}/kubelet.kubeconfig", f"--root-dir={self.kubelet_root}",
                            f"--cert-dir={self.kubelet_root}/pki", f"--hostname-override={NODE_NAME}", "--v=1"]
        raise KeyError(name)

    def env(self, name: str) -> dict[str, str]:
        env = dict(os.environ)
        if name == "containerd":
            env["PATH"] = f"{containerd_bin()}:{env.get('PATH', '/usr/bin:/bin')}"
        if name == "kubelet":
            # no /usr/sbin, /sbin: no iptables, so no rules of the kubelet's in the host's tables
            env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
        return env

    def ctr(self, holder_pid: int, *args: str, timeout: float = 120) -> str:
        """ctr in the node's mount namespace (what it makes under /run stays in the node's /run)."""
        return _run(["nsenter", f"--mount=/proc/{holder_pid}/ns/mnt", "--", str(containerd_bin() / "ctr"),
                     "--address", str(self.sock), "--namespace", "k8s.io", *args], f"ctr {args[0]}", timeout=timeout)

    def serving(self, holder_pid: int) -> bool:
        try:
            return self.sock.is_socket() and bool(self.ctr(holder_pid, "version", timeout=5))
        except (NodeError, subprocess.TimeoutExpired):
            return False

    def import_images(self, holder_pid: int) -> None:
        for path in build_images().values():
            self.ctr(holder_pid, "images", "import", str(path))

    # --- down ----------------------------------------------------------------------------------

    def kill_leftovers(self) -> None:
        """SIGKILL every process left in the node's cgroup tree until it is empty (10 s at most)."""
        deadline = time.monotonic() + 10
        while True:
            pids = self.cgroup_pids()
            if not pids:
                return
            if time.monotonic() > deadline:
                raise NodeError(f"processes left in cgroup /{self.cgroup} after SIGKILL: {pids}")
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)

    def delete_bridge(self) -> None:
        if Path(f"/sys/class/net/{self.bridge}").exists():
            subprocess.run(["ip", "link", "delete", self.bridge], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def leftovers(self, holder_ns: str | None) -> list[str]:
        """What of the node is still there (for `down` and its test): processes in its cgroup, its
        cgroups, its bridge, processes in its mount namespace, mounts under the state directory."""
        out = [f"process {p} in cgroup /{self.cgroup}" for p in self.cgroup_pids()]
        out += [f"cgroup {m / self.cgroup}" for m in _cgroup_mounts() if (m / self.cgroup).exists()]
        if Path(f"/sys/class/net/{self.bridge}").exists():
            out.append(f"network link {self.bridge}")
        if holder_ns:
            for p in Path("/proc").iterdir():
                if p.name.isdigit():
                    try:
                        if os.readlink(p / "ns" / "mnt") == holder_ns:
                            out.append(f"process {p.name} in the node's mount namespace {holder_ns}")
                    except OSError:
                        pass
        s = str(self.state.resolve())
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            mp = line.split()[4]
            if mp == s or mp.startswith(s + "/"):
                out.append(f"mount {mp}")
        return out
