"""Step 6, wait for the Job (watch, one deadline; run-manual's and ``wait``'s), with live progress
on a terminal."""

from __future__ import annotations

import threading

from cronctl import model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import CronctlError
from cronctl.procedure.base import Clock, Progress, Reporter
from cronctl.procedure.steps.context import RunContext, unreachable
from cronctl.procedure.steps.evidence import save_logs
from cronctl.procedure.wait import wait_for_jobs
from cronctl.timeutil import human_duration


def wait(ctx: RunContext, job: Obj, deadline: float) -> Obj | None:
    t0 = ctx.clock.monotonic()
    last: list[tuple[int, int, int]] = []

    def on_change(j: Obj) -> None:
        st = j.get("status") or {}
        key = (int(st.get("active") or 0), int(st.get("succeeded") or 0), int(st.get("failed") or 0))
        if not ctx.reporter.live and (not last or last[-1] != key):
            ctx.reporter.step(f"job {ctx.job_name}: active={key[0]} succeeded={key[1]} failed={key[2]} "
                              f"({human_duration(ctx.clock.monotonic() - t0)})")
        last.append(key)

    sampler = ProgressSampler(ctx.cluster, job, ctx.clock, ctx.reporter, t0) if ctx.reporter.live else None
    if sampler:
        sampler.start()
    try:
        state = wait_for_jobs(ctx.cluster, {ctx.job_name}, deadline=deadline, clock=ctx.clock, on_change=on_change,
                              stats=ctx.wait_stats, on_unreachable=lambda e: unreachable(ctx, e))
    finally:
        if sampler:
            sampler.stop()
        ctx.reporter.progress_done()
    return state[ctx.job_name]


def save_logs_so_far(ctx: RunContext) -> None:
    """After Ctrl-C: the logs the Job's pods have written so far (a second Ctrl-C skips them)."""
    try:
        job = ctx.cluster.get_job(ctx.job_name)
        if job is not None and ctx.dir is not None:
            save_logs(ctx, job)
    except (CronctlError, OSError, KeyboardInterrupt):
        pass


class ProgressSampler:
    """Live progress on a terminal: pods by phase and the last log line every few seconds.

    Runs beside the watch (which alone decides when the wait ends); only used when a person
    is looking, so scripted runs make no extra requests.
    """

    def __init__(self, cluster: Cluster, job: Obj, clock: Clock, reporter: Reporter, t0: float,
                 every: float = 3.0) -> None:
        self.c, self.job, self.clock, self.r, self.t0, self.every = cluster, job, clock, reporter, t0, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cronctl-progress", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        uid = model.meta(self.job).get("uid")
        while not self._stop.is_set():
            last = ""
            pods: list[Obj] = []
            try:
                pods = self.c.list_pods(label_selector=f"batch.kubernetes.io/controller-uid={uid}")
                running = [p for p in pods if (p.get("status") or {}).get("phase") in ("Running", "Succeeded", "Failed")]
                if running:
                    p = max(running, key=lambda p: str(model.meta(p).get("creationTimestamp", "")))
                    view = model.pod_view(p)
                    text = self.c.read_pod_log(view.name, view.first_container(), tail_lines=1)
                    last = text.strip().splitlines()[-1] if text.strip() else ""
            except CronctlError:
                pass
            self.r.progress(Progress(elapsed=self.clock.monotonic() - self.t0, pods=model.pods_by_phase(pods),
                                     last_log=last[:200]))
            self._stop.wait(self.every)
