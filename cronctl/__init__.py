"""cronctl: safe manual runs, exact schedules and incident bundles for Kubernetes CronJobs."""

__version__ = "0.1.0"
