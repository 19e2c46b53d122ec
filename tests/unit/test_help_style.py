"""Help in one style (issue 34): kubectl's and click's placeholders (``CRONJOB``, ``[CRONJOB]``,
``-f FILE``, ``--timeout DURATION``, ``-o [text|json|yaml]``), never typer's ``<str>``, ``<int range>``
or ``{cronjob}``; the command list without "..."; no word split by the wrapping; no pointer to a
``docs/`` file, which an installed cronctl does not have."""

from __future__ import annotations

import re

import pytest

from conftest import RunCli

from cronctl.cli.app import COMMANDS

NAMES = [e.name for e in COMMANDS]
WIDTHS = (80, 100, 120, 200)


def _help(run_cli: RunCli, *argv: str, width: int = 100) -> str:
    res = run_cli(*argv, "--help", env={"COLUMNS": str(width)})
    assert res.exit_code == 0, res
    return res.stdout


def _flat(text: str) -> str:
    """One line; a break after a hyphen (click wraps there, as English does) joined back."""
    return re.sub(r"(\w-) (?=\w)", r"\1", " ".join(text.split()))


@pytest.mark.parametrize("name", NAMES)
def test_placeholders_are_kubectl_style(run_cli: RunCli, name: str) -> None:
    text = _help(run_cli, name)
    usage = text.splitlines()[0]
    assert re.fullmatch(r"Usage: cronctl \S+ \[OPTIONS\]( \[?(-- )?[A-Z][A-Za-z|/]*(\.\.\.)?\]?)*", usage), usage
    options = text[text.index("\nOptions:"):]
    for line in text.splitlines():
        assert not re.search(r"<(str|int|float|text|path|int range|float range)>", line), line
    assert not re.search(r"\{[a-z]+\}", usage), usage
    for line in options.splitlines():
        m = re.match(r"  (-\w, )?--[\w-]+ (\S+)", line)
        if m and m.group(2) != "/":  # --lease / --no-lease is a switch  # an option's placeholder: capitals (FILE, DURATION, KEY=VALUE) or the choices in brackets
            assert re.fullmatch(r"[A-Z][A-Z0-9:_=\[\]/|.-]*|\[[a-z0-9|-]+\]", m.group(2)), line


def test_root_help_placeholders(run_cli: RunCli) -> None:
    text = _help(run_cli)
    for flag in ("--kubeconfig FILE", "--context NAME", "-n, --namespace NAME", "--request-timeout DURATION"):
        assert flag in text, text


@pytest.mark.parametrize("width", (40, 60, 80, 120, 200))
def test_the_command_list_has_every_summary_whole(run_cli: RunCli, width: int) -> None:
    text = _help(run_cli, width=width)
    listing = _flat(text[text.index("Commands:"):])
    assert "..." not in listing and "\u2026" not in listing, listing
    for e in COMMANDS:
        assert f"{e.name} {_flat(e.summary)}" in listing, (e.name, listing)


@pytest.mark.parametrize("name", NAMES)
def test_wrapping_splits_no_word(run_cli: RunCli, name: str) -> None:
    """Each option's help reads whole after click wraps it (before: ``kustomiz e.toolkit...``)."""
    from cronctl.cli.app import load_command

    cmd = load_command(next(e for e in COMMANDS if e.name == name))
    for width in WIDTHS:
        flat = _flat(_help(run_cli, name, width=width))
        for p in cmd.params:
            if getattr(p, "help", None) and not getattr(p, "hidden", False):
                assert _flat(p.help) in flat, (name, width, p.name)


@pytest.mark.parametrize("argv", [[], *([n] for n in NAMES)])
def test_help_points_at_nothing_the_wheel_lacks(run_cli: RunCli, argv: list[str]) -> None:
    # prose only: alerts' --runbook-url default is a value (a URL template), not a pointer to read
    text = re.sub(r"\[default: [^\]]*\]", "", _flat(_help(run_cli, *argv)))
    assert not re.search(r"\b(docs|runbooks)/[\w./-]+\.md\b", text), text
