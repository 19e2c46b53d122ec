"""Writes orders-fast-catch-up.dump.yaml: the objects a cluster would serve at 16:40Z after the issue's incident
(a simulation of the CronJob controller's events and history cleanup, by hand; review the YAML, not this)."""
import yaml
from datetime import datetime, timedelta, timezone
UTC = timezone.utc
NS, CJ, UID = "shop", "orders-fast", "cj-uid-orders-fast"
def T(h, m, s=0): return datetime(2026, 12, 2, h, m, s, tzinfo=UTC)
def z(t): return t.strftime("%Y-%m-%dT%H:%M:%SZ")
def jname(t): return f"{CJ}-{int(t.timestamp()) // 60}"
IMG_OLD = "registry.example/orders-fast:2.3.1"
IMG_NEW = "registry.example/orders-fast:2.3.2"
DIGEST = {IMG_OLD: "registry.example/orders-fast@sha256:" + "1" * 64, IMG_NEW: "registry.example/orders-fast@sha256:" + "2" * 64}
HOSTILE = ("upstream 502 \x1b]52;c;ZWNobyBoaQ==\x07| see <script>alert(1)</script> [x](https://evil.example) "
           "DB_PASSWORD=hunter2xyz")

def pod_spec(image):
    return {"containers": [{"name": "worker", "image": image,
                            "env": [{"name": "ORDERS_API_TOKEN", "value": "tok-orders-5551234"}]}],
            "restartPolicy": "Never"}

items = []
events = []
evn = [0]
def event(reason, msg, at, *, kind="CronJob", name=CJ, uid=UID, etype="Normal", comp="cronjob-controller"):
    evn[0] += 1
    events.append({"apiVersion": "v1", "kind": "Event",
                   "metadata": {"name": f"{name}.{evn[0]:04x}", "namespace": NS, "creationTimestamp": z(at)},
                   "involvedObject": {"apiVersion": "batch/v1", "kind": kind, "name": name, "namespace": NS, "uid": uid},
                   "reason": reason, "message": msg, "type": etype, "count": 1,
                   "firstTimestamp": z(at), "lastTimestamp": z(at), "source": {"component": comp}})

# (slot or None, name, created, done, outcome, image, annotations)
runs = []
def sched(h, m, outcome="Complete", took=20, image=IMG_OLD, delay=1):
    t = T(h, m)
    c = t + timedelta(seconds=delay)
    runs.append((t, jname(t), c, c + timedelta(seconds=took), outcome, image, {}))
for m in range(20, 24):
    sched(16, m)
manual_ann = {"cronjob.kubernetes.io/instantiate": "manual", "cronctl.dev/run-id": "r-5c1d", "cronctl.dev/operator": "alice",
              "cronctl.dev/reason": "replay the 16:1x orders", "cronctl.dev/started": "2026-12-02T16:24:30Z"}
runs.append((None, f"{CJ}-manual", T(16, 24, 40), T(16, 27, 50), "Complete", IMG_OLD, manual_ann))
sched(16, 28, delay=55, took=45)  # the restore's catch-up, created 16:28:55, ran to 16:29:40
for m in (30, 31, 32):
    sched(16, m)
sched(16, 33, outcome="Failed", took=39)
for m in (34, 35):
    sched(16, m)
sched(16, 36, outcome="Failed", took=39)
for m in (37, 38, 39):
    sched(16, m, image=IMG_NEW)

# the controller: SuccessfulCreate, SawCompletedJob, history cleanup (success 3, failed 1, by start time)
done = {"Complete": [], "Failed": []}
limits = {"Complete": 3, "Failed": 1}
deleted = set()
timeline = []
for slot, name, c, d, outcome, image, ann in runs:
    timeline.append((c, "create", (slot, name, c, d, outcome, image, ann)))
    timeline.append((d, "finish", (slot, name, c, d, outcome, image, ann)))
timeline.sort(key=lambda x: (x[0], x[1]))
for at, what, r in timeline:
    slot, name, c, d, outcome, image, ann = r
    if what == "create":
        if slot is not None:
            event("SuccessfulCreate", f"Created job {name}", c)
        else:
            event("UnexpectedJob", f"Saw a job that the controller did not create or forgot: {name}", c + timedelta(seconds=1), etype="Warning")
        continue
    if outcome == "Failed":
        event("BackoffLimitExceeded", "Job has reached the specified backoff limit", d, kind="Job", name=name,
              uid=f"uid-{name}", etype="Warning", comp="job-controller")
    else:
        event("Completed", "Job completed", d, kind="Job", name=name, uid=f"uid-{name}", comp="job-controller")
    if slot is not None:
        event("SawCompletedJob", f"Saw completed job: {name}, condition: {outcome}", d + timedelta(seconds=1))
    done[outcome].append((c, name))
    done[outcome].sort()
    while len(done[outcome]) > limits[outcome]:
        _, old = done[outcome].pop(0)
        deleted.add(old)
        event("SuccessfulDelete", f"Deleted job {old}", d + timedelta(seconds=1))
event("JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid", T(16, 29, 0))

tmpl_image = IMG_NEW
cronjob = {"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": {"name": CJ, "namespace": NS, "uid": UID, "creationTimestamp": z(T(16, 19, 30)),
                        "managedFields": [
                            {"apiVersion": "batch/v1", "fieldsType": "FieldsV1", "manager": "cronctl", "operation": "Update",
                             "time": z(T(16, 28, 50)), "fieldsV1": {"f:spec": {"f:suspend": {}}}},
                            {"apiVersion": "batch/v1", "fieldsType": "FieldsV1", "manager": "kube-controller-manager",
                             "operation": "Update", "subresource": "status", "time": z(T(16, 39, 22)),
                             "fieldsV1": {"f:status": {"f:lastScheduleTime": {}, "f:lastSuccessfulTime": {}}}}]},
           "spec": {"schedule": "*/1 * * * *", "timeZone": "Etc/UTC", "concurrencyPolicy": "Forbid", "suspend": False,
                    "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                    "jobTemplate": {"spec": {"backoffLimit": 0, "template": {"spec": pod_spec(tmpl_image)}}}},
           "status": {"lastScheduleTime": z(T(16, 39)), "lastSuccessfulTime": z(T(16, 39, 21))}}
items.append(cronjob)
for slot, name, c, d, outcome, image, ann in runs:
    if name in deleted:
        continue
    a = dict(ann)
    if slot is not None:
        a["batch.kubernetes.io/cronjob-scheduled-timestamp"] = z(slot)
    status = {"startTime": z(c + timedelta(seconds=1))}
    if outcome == "Complete":
        status.update(completionTime=z(d), succeeded=1, conditions=[
            {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": z(d)},
            {"type": "Complete", "status": "True", "lastTransitionTime": z(d)}])
    else:
        status.update(failed=1, conditions=[
            {"type": "FailureTarget", "status": "True", "lastTransitionTime": z(d - timedelta(seconds=1)),
             "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"},
            {"type": "Failed", "status": "True", "lastTransitionTime": z(d),
             "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}])
    items.append({"apiVersion": "batch/v1", "kind": "Job",
                  "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "creationTimestamp": z(c),
                               "annotations": a,
                               "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": CJ, "uid": UID,
                                                    "controller": True, "blockOwnerDeletion": True}]},
                  "spec": {"backoffLimit": 0, "template": {"spec": pod_spec(image)}},
                  "status": status})
    pod = f"{name}-k8p2m"
    term = {"exitCode": 0 if outcome == "Complete" else 3, "reason": "Completed" if outcome == "Complete" else "Error",
            "startedAt": z(c + timedelta(seconds=2)), "finishedAt": z(d - timedelta(seconds=1))}
    if outcome == "Failed":
        term["message"] = HOSTILE
    items.append({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": pod, "namespace": NS, "uid": f"pod-uid-{name}", "creationTimestamp": z(c + timedelta(seconds=1)),
                               "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": f"uid-{name}",
                                                    "controller": True, "blockOwnerDeletion": True}]},
                  "spec": {**pod_spec(image), "nodeName": "node-a"},
                  "status": {"phase": "Succeeded" if outcome == "Complete" else "Failed", "startTime": z(c + timedelta(seconds=1)),
                             "containerStatuses": [{"name": "worker", "image": image, "imageID": DIGEST[image],
                                                    "restartCount": 0, "ready": False, "state": {"terminated": term}}]}})
items.extend(events)
doc = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
import sys
out = sys.argv[1]
with open(out, "w") as f:
    f.write("# The issue's incident (issue 10 item 5): a */1 Forbid CronJob suspended by cronctl run-manual; the restore's\n"
            "# catch-up orders-fast-29937148 (16:28) ran and the history limit deleted it; failed runs with their reasons,\n"
            "# hostile text in a termination message, and the image each pod ran.\n"
            "# Written by orders-fast-catch-up.gen.py (python3 orders-fast-catch-up.gen.py orders-fast-catch-up.dump.yaml).\n")
    yaml.safe_dump(doc, f, sort_keys=False, allow_unicode=False, width=200)
print(len(items), sorted(deleted))
