"""Shell completion in a real bash: used by tests/unit/test_completion.py and
tests/cluster/test_conventions_live.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv's bin, where the `cronctl` console script lives


def bash_complete(*words: str, **extra_env: str) -> list[str]:
    """Load completions/cronctl.bash into a real bash, set COMP_WORDS/COMP_CWORD as bash would
    for the command line `words` (cursor on the last word), call the function, return COMPREPLY."""
    assert (BIN / "cronctl").exists(), "install the package into the venv first (pip install -e .)"
    arr = " ".join(f"'{w}'" for w in words)
    script = (f"source {ROOT / 'completions' / 'cronctl.bash'}\n"
              f"COMP_WORDS=({arr}); COMP_CWORD={len(words) - 1}\n"
              "_cronctl_completion cronctl\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("_CRONCTL")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra_env)
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if line]


def zsh_first_tab(line: str, expect: bytes, home: Path, *, fpath_dir: Path | None = None, sourced: bool = False,
                  timeout: float = 20) -> bytes:
    """Type `line` and one TAB into a new interactive zsh on a pseudo-terminal, as a user does in a
    fresh shell, and return what the terminal received after the TAB (until `expect`, the text the
    completion inserts, or `timeout`). The shell's .zshrc (in `home`, its ZDOTDIR) puts `fpath_dir` (default completions/)
    on $fpath and runs compinit, as `cronctl completion zsh --install` tells the user to; with
    `sourced` it runs ``source <(cronctl completion zsh)`` instead."""
    import pty
    import select
    import time

    assert (BIN / "cronctl").exists(), "install the package into the venv first (pip install -e .)"
    compinit = f"autoload -Uz compinit && compinit -u -d {home}/.zcompdump\n"
    rc = (compinit + "source <(cronctl completion zsh)\n" if sourced else  # compdef needs compinit first
          f"fpath=({fpath_dir or ROOT / 'completions'} $fpath)\n" + compinit)
    (home / ".zshrc").write_text(rc + "PS1='ready> '\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("_CRONCTL")}
    env.update({"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "HOME": str(home), "ZDOTDIR": str(home),
                "TERM": "xterm", "NO_COLOR": "1"})
    pid, fd = pty.fork()
    if pid == 0:  # the child: a new interactive zsh
        os.execvpe("zsh", ["zsh", "-i"], env)
    try:
        def read_until(needle: bytes, seconds: float) -> bytes:
            got = b""
            end = time.monotonic() + seconds
            while needle not in got and time.monotonic() < end:
                if select.select([fd], [], [], 0.2)[0]:
                    try:
                        got += os.read(fd, 4096)
                    except OSError:
                        break
            return got

        assert b"ready> " in read_until(b"ready> ", timeout), "zsh did not start"
        os.write(fd, line.encode())
        read_until(line.encode()[-2:], 5)  # its echo
        os.write(fd, b"\t")
        return read_until(expect, timeout)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
