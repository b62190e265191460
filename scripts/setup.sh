#!/usr/bin/env bash
# Create .venv (Python >= 3.11) and install zettel-lsp with its dev tools. Safe to run again:
# it reinstalls only when pyproject.toml changed. Everything comes from the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for cand in python3.13 python3.12 python3.11 python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      PY="$cand"; break
    fi
  done
fi
if [ -z "$PY" ]; then
  echo "zettel-lsp needs Python >= 3.11; none was found (set PYTHON=/path/to/python3.11)." >&2
  exit 1
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $PY" >&2
  "$PY" -m venv .venv
fi
stamp=".venv/.zettel-lsp-setup"
want="$(cat pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "== installing zettel-lsp and its dependencies into .venv" >&2
  .venv/bin/python -m pip install --quiet --upgrade pip 2>&1 | grep -v "^WARNING: Location" >&2 || true
  .venv/bin/python -m pip install --quiet -e ".[dev]" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  .venv/bin/python -c "import zettel_lsp, pygls, qdrant_edge, fastembed, ahocorasick" \
    || { echo "zettel-lsp: installation failed (see the pip output above)" >&2; exit 1; }
  echo "$want" > "$stamp"
fi
