"""Emacs with eglot, set up as docs/getting-started.md says, against the real server.

One ``emacs --batch -q`` (Debian's ``emacs-nox``, ``elpa-eglot``, ``elpa-markdown-mode``;
``scripts/setup-editors.sh`` installs them) loads the first ``elisp`` block of the guide's Emacs
section, with this Python's server in place of the path, then ``eglot_session.el``: it opens a
card one folder down in a vault that is not a git repository (``.obsidian`` at its root), so
eglot sends that folder as the root and the server must find the vault itself. Through eglot's
own functions it asks hover, definition, references, the workspace-symbol search, two code
actions (applied), ``[[`` completion and Flymake's diagnostics, loads the guide's second block
(the vault as one project), and writes a JSON report; the tests below read it. Without Emacs,
eglot or markdown-mode the module is skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

EMACS = os.environ.get("ZETTEL_TEST_EMACS") or shutil.which("emacs")
SESSION_EL = Path(__file__).with_name("eglot_session.el")
GUIDE = ROOT / "docs" / "getting-started.md"
PLACEHOLDER = '"/path/to/.venv/bin/zettel-lsp"'
EMACS_TIMEOUT = 180.0
INSTALL = "scripts/setup-editors.sh installs Debian's emacs-nox, elpa-eglot, elpa-markdown-mode"

pytestmark = pytest.mark.skipif(EMACS is None, reason=f"emacs not on PATH ({INSTALL})")

CARDS = {
    "Hydration.md": "# Hydration\n\nThe water to flour ratio of a dough, in percent.\n",
    "Sourdough starter.md": "# Sourdough starter\n\nFlour and water, fermented by wild yeast.\n",
    "Sourdough bread.md": "# Sourdough bread\n\nBread raised by a [[Sourdough starter]].\n",
    # one folder down: its links name cards one folder up
    "baking/Crumb.md": (
        "# Crumb\n\nThe inside of a loaf. An open crumb needs a high [[Hydration]].\n\n"
        "A dense crumb comes from too little [[Hydraton]].\n"
    ),
}
CARD = "baking/Crumb.md"


def guide_elisp() -> list[str]:
    """The ``elisp`` blocks of the guide's Emacs section, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index("### Emacs (eglot)") :]
    section = section[: section.index("\n### ", 1)]
    return re.findall(r"```elisp\n(.*?)```", section, flags=re.S)


def emacs_missing_packages(env: dict[str, str]) -> str | None:
    """Why eglot or markdown-mode cannot be loaded, or None."""
    assert EMACS is not None
    probe = "(progn (require 'eglot) (require 'markdown-mode))"
    done = subprocess.run(
        [EMACS, "--batch", "-q", "--eval", probe],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    if done.returncode == 0:
        return None
    return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"


def run_emacs(work: Path, params: dict[str, Any], env: dict[str, str]) -> tuple[Any, str]:
    """(the session's JSON report or None, how Emacs ended and its output)."""
    assert EMACS is not None
    params_file = work / "params.json"
    params_file.write_text(json.dumps(params), encoding="utf-8")
    env = {**env, "ZETTEL_EMACS_PARAMS": str(params_file)}
    command = [EMACS, "--batch", "-q", "-l", str(work / "setup.el"), "-l", str(SESSION_EL)]
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=work,
        env=env,
        start_new_session=True,  # a timeout kills the server Emacs started too
    )
    try:
        output, _ = proc.communicate(timeout=EMACS_TIMEOUT)
        ended = f"emacs exited with {proc.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        ended = f"emacs killed after {EMACS_TIMEOUT} s"
    with contextlib.suppress(ProcessLookupError):  # a server Emacs left behind
        os.killpg(proc.pid, signal.SIGTERM)
    diagnostic = f"{ended}\n--- emacs output:\n{output.decode(errors='replace')[-4000:]}"
    out = Path(params["output"])
    if not out.is_file():
        return None, diagnostic
    return json.loads(out.read_text(encoding="utf-8")), diagnostic


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("emacs")
    env = dict(os.environ)
    env["HOME"] = str(work / "home")  # no user init, no ~/.emacs.d
    env["XDG_CACHE_HOME"] = str(work / "cache")  # the server's model assembly and index
    (work / "home").mkdir()
    missing = emacs_missing_packages(env)
    if missing is not None:
        pytest.skip(f"eglot or markdown-mode not loadable in Emacs: {missing} ({INSTALL})")
    vault = work / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (work / ".zettel-lsp.toml").touch()  # a marker farther up: the nearest one wins
    for rel, text in CARDS.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    blocks = guide_elisp()
    assert len(blocks) == 2, f"the guide's Emacs section has {len(blocks)} elisp blocks, not 2"
    setup, project = blocks
    assert PLACEHOLDER in setup, setup
    server = " ".join(json.dumps(a) for a in (sys.executable, "-m", "zettel_lsp"))
    (work / "setup.el").write_text(setup.replace(PLACEHOLDER, server), encoding="utf-8")
    (work / "project.el").write_text(project, encoding="utf-8")
    params = {
        "card": str(vault / CARD),
        "link": "[[Hydration]]",
        "typo": "[[Hydraton]]",
        "query": "the water to flour ratio",
        "prefix": "sour",
        "unique": "hydr",  # lower case: the guide sets completion-ignore-case
        "new_card": str(vault / "baking" / "Proofing.md"),
        "project_snippet": str(work / "project.el"),
        "ready_seconds": 120,
        "output": str(work / "out.json"),
    }
    out, diagnostic = run_emacs(work, params, env)
    assert out is not None, f"the session wrote no report\n{diagnostic}"
    assert "error" not in out, f"elisp error: {out['error']}\n{out}\n{diagnostic}"
    out["vault"] = str(vault)
    out["diagnostic"] = diagnostic
    return dict(out)


def in_vault(session: dict[str, Any], rel: str) -> str:
    return str(Path(session["vault"]) / rel)


def step(session: dict[str, Any], key: str) -> Any:
    """What the session saw in one step, or fail with the step's error."""
    value = session[key]
    if isinstance(value, dict) and set(value) == {"error"}:
        pytest.fail(f"{key}: {value['error']}\n{session['diagnostic']}")
    return value


def test_eglot_starts_the_server_on_the_vault_root(session: dict[str, Any]) -> None:
    assert session["emacs"].startswith(("28.", "29.", "3")), session["emacs"]
    assert session["major_mode"] == "markdown-mode"
    # eglot's root is the card's folder (no git, no project marker): the server found the vault
    assert session["project_root"] == in_vault(session, "baking") + "/"
    vaults = session["status"]["vaults"]
    assert [(v["root"], v["phase"]) for v in vaults] == [(session["vault"], "ready")]
    assert any(session["vault"] in line and ".obsidian" in line for line in session["root_log"])
    errors = [m for m in session["messages"] if m["type"] == 1]
    assert not errors, errors
    assert session["server_exit"] == 0, session.get("server_stderr")


def test_flymake_shows_only_the_unresolved_link(session: dict[str, Any]) -> None:
    diags = step(session, "diagnostics")
    # [[Hydration]] (one folder up) resolves: the only diagnostic is the typo's
    assert [(d["line"], d["text"], d["type"]) for d in diags] == [
        (5, "[[Hydraton]]", "eglot-warning")
    ], diags
    assert "did you mean «Hydration»" in diags[0]["message"], diags
    after = step(session, "diagnostics_after")  # once the code action below fixed the link
    assert after == [], after


def test_hover_on_a_link_shows_the_card(session: dict[str, Any]) -> None:
    hover = step(session, "hover")  # eglot 1.9 shows the Markdown as it is, links and all
    assert hover.startswith("### [Hydration](file://"), hover
    assert "`Hydration.md` · 1 backlink" in hover, hover
    assert "water to flour ratio" in hover, hover


def test_definition_opens_the_card_one_folder_up(session: dict[str, Any]) -> None:
    found = step(session, "definition")
    assert found["file"] == in_vault(session, "Hydration.md"), found
    assert found["line"] == 1, found


def test_references_are_the_backlinks(session: dict[str, Any]) -> None:
    found = step(session, "references")
    # eglot asks with includeDeclaration: the card itself, then its one backlink
    assert found == [
        {"file": in_vault(session, "Hydration.md"), "line": 1},
        {"file": in_vault(session, CARD), "line": 3},
    ], found


def test_workspace_symbol_is_the_semantic_search(session: dict[str, Any]) -> None:
    symbols = step(session, "symbols")
    assert symbols, session
    assert symbols[0]["file"] == in_vault(session, "Hydration.md"), symbols


def test_code_action_fixes_the_link(session: dict[str, Any]) -> None:
    action = step(session, "code_action")
    assert action["titles"][0] == "Link to «Hydration»", action
    assert "Create card «Hydraton»" in action["titles"], action
    assert action["line"] == "A dense crumb comes from too little [[Hydration]].", action


def test_create_card_without_file_operations(session: dict[str, Any]) -> None:
    # eglot 1.9 announces no resourceOperations: the new card is a text edit to its path, which
    # eglot opens as a new buffer holding the title (saved by the user, not the server)
    created = step(session, "create_card")
    assert created == {"exists_on_disk": False, "text": "# Proofing\n"}, created


def test_completion_after_brackets(session: dict[str, Any]) -> None:
    empty = step(session, "completion_empty")
    assert empty["probe"] == ""
    assert set(empty["candidates"]) >= {"Hydration", "Sourdough starter", "Sourdough bread"}
    typed = step(session, "completion")
    assert typed["probe"] == "sour", typed
    assert set(typed["candidates"]) == {"Sourdough starter", "Sourdough bread"}, typed
    # completion-at-point on a unique prefix inserts the link and closes it, once
    line = step(session, "completed_line")
    assert line == "Wet dough, [[Hydration]]", line


def test_rename_without_file_operations(session: dict[str, Any]) -> None:
    # eglot 1.9 cannot move files: the links and the title change, a message names the move
    renamed = step(session, "rename")
    assert renamed["links"] == ["[[Water ratio]]", "[[Water ratio]]"], renamed
    others = [(o["file"], o["first_line"]) for o in renamed["others"]]
    assert others == [(in_vault(session, "Hydration.md"), "# Water ratio")], renamed
    [message] = renamed["messages"]
    assert "move Hydration.md to Water ratio.md yourself" in message["message"], message


def test_the_guide_project_function_makes_the_vault_one_project(session: dict[str, Any]) -> None:
    assert step(session, "project_after_snippet") == session["vault"] + "/"
