"""Masking of secret material before anything reaches the bundle: the rule set lives in
:mod:`cronctl.redact` (the bottom layer, so run-manual, errors and the API client use it too)."""

from __future__ import annotations

from cronctl.redact import LAST_APPLIED, Redactor, looks_secret, strip_managed_fields

__all__ = ["LAST_APPLIED", "Redactor", "looks_secret", "strip_managed_fields"]
