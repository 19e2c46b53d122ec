"""The parts of ``-o json`` documents that several commands share, made of the model's types: a
pause (pause, resume, status) and a run record (restore, status). Unmasked: the command masks its
whole document. The model's Pause and RunRecord have no output methods of their own.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from cronctl.model import Pause, RunRecord
from cronctl.timeutil import rfc3339_z


def pause_doc(p: Pause) -> dict[str, Any]:
    """A pause: who paused it, when, why and until when (RFC3339 UTC, or null)."""
    return {"by": p.by, "at": rfc3339_z(p.at) if p.at else None, "reason": p.reason,
            "until": rfc3339_z(p.until) if p.until else None}


def record_doc(rec: RunRecord) -> dict[str, Any]:
    """A run record, every field under its own name (``gitops``: the hold's GitOps part as the
    annotation holds it, JSON text or "")."""
    return asdict(rec)


def effect_words(r: Any) -> str:
    """A slot row's business effect (cronctl claim's rows), after its reason: history and status;
    nothing for a row without one."""
    e = r.get("effect")
    if not e:
        return ""
    words = {"done": "done", "refused-duplicate": "done once", "running": "running", "ambiguous": "AMBIGUOUS",
             "failed": "FAILED", "none": "none"}[e["effect"]]
    by = f" by {e['holder']}" if e["holder"] and e["effect"] != "none" else ""
    refused = f", {e['refusals']} duplicate(s) refused (last {e['refused_by']})" if e["refusals"] else ""
    return f"; effect: {words}{by}{refused}"
