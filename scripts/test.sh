#!/usr/bin/env bash
# Quickstart command 2: set up, then run lint, type checks and the whole test suite.
# Extra arguments go to pytest (e.g. bash scripts/test.sh -k parser).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup-editors.sh  # Neovim and Emacs for the editor tests; skipped if it can't
bash editors/vscode/scripts/check.sh  # VS Code extension: types, unit tests, build, .vsix
echo "== ruff" >&2
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy" >&2
.venv/bin/mypy
echo "== pytest" >&2
# pytest exits 5 when it collected no test: that fails this script like any other failure.
.venv/bin/pytest "$@"
