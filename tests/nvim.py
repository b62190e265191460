"""Run a Lua script in headless Neovim for the editor tests; shared by tests/server and
tests/editors.

Values reach the script through a JSON file named by ``$ZETTEL_NVIM_PARAMS`` (no quoting of
paths inside Lua); the script writes its report to ``params["output"]``. The editor runs in its
own process group, so a timeout also kills the language server it started. With ``quit=False``
Neovim stays in its main loop after the script (typed keys run, CursorMoved and CursorHold fire
as for a user) until the script itself quits.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

NVIM = os.environ.get("ZETTEL_TEST_NVIM") or shutil.which("nvim")
NVIM_TIMEOUT = 240.0  # one editor session: server start, indexing and the scenario


def run_headless(
    script: str,
    params: dict[str, Any],
    work: Path,
    *,
    rtp: Path | None = None,
    quit: bool = True,
) -> tuple[dict[str, Any] | None, str]:
    """(the script's JSON report or None, a diagnostic text: how nvim ended, its output and the
    tail of lsp.log)."""
    assert NVIM is not None
    script_file = work / "zettel_test.lua"
    script_file.write_text(script, encoding="utf-8")
    params_file = work / "params.json"
    params_file.write_text(json.dumps(params), encoding="utf-8")
    env = dict(os.environ)
    env["ZETTEL_NVIM_PARAMS"] = str(params_file)
    env["ZETTEL_NVIM_SCRIPT"] = str(script_file)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        env[var] = str(work / var.lower())  # keeps lsp.log and shada out of $HOME
    # -u NONE: no user config or plugins; -i NONE: no shada; -n: no swap files
    command = [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n"]
    if rtp is not None:
        command += ["--cmd", f"set rtp+={rtp}"]
    command += ["-c", "lua dofile(os.getenv('ZETTEL_NVIM_SCRIPT'))"]
    if quit:
        command += ["-c", "qa!"]
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=work,
        env=env,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=NVIM_TIMEOUT)
        ended = f"nvim exited with {proc.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        ended = f"nvim killed after {NVIM_TIMEOUT} s"
    with contextlib.suppress(ProcessLookupError):  # a server the editor left behind
        os.killpg(proc.pid, signal.SIGTERM)
    lsp_log = work / "xdg_state_home" / "nvim" / "lsp.log"
    if not lsp_log.is_file():
        lsp_log = work / "xdg_cache_home" / "nvim" / "lsp.log"  # Neovim < 0.8
    log_tail = lsp_log.read_text(errors="replace")[-4000:] if lsp_log.is_file() else ""
    diagnostic = f"{ended}\n--- nvim output:\n{output.decode(errors='replace')[-4000:]}"
    diagnostic += f"\n--- lsp.log (tail):\n{log_tail}"
    out_file = Path(params["output"])
    if not out_file.is_file():
        return None, diagnostic
    return json.loads(out_file.read_text(encoding="utf-8")), diagnostic
