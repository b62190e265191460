#!/usr/bin/env bash
# Build the zettel-lsp wheel that the .vsix bundles (editors/vscode/server/, not tracked):
# "Zettel: Install zettel-lsp" installs it into a virtual environment of the extension's own.
# It is built from a clean copy of the package's sources (pyproject.toml, README.md,
# zettel_lsp/), so neither a stale build/ folder nor __pycache__ ends up in it. Needs a Python
# with pip, and PyPI (or pip's cache) for the build backend (setuptools). A few seconds.
#   ZETTEL_WHEEL_PYTHON   the Python to build with (default: <repo>/.venv/bin/python, else python3)
set -euo pipefail
ext_dir="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$ext_dir/../.." && pwd)"

py="${ZETTEL_WHEEL_PYTHON:-}"
if [ -z "$py" ]; then
  for cand in "$repo/.venv/bin/python" python3 python; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -m pip --version >/dev/null 2>&1; then py="$cand"; break; fi
  done
fi
[ -n "$py" ] || { echo "build-wheel: no Python with pip found (set ZETTEL_WHEEL_PYTHON)" >&2; exit 1; }

# The same sources make the same wheel (zip times from SOURCE_DATE_EPOCH): the extension upgrades
# an installed server when the wheel's hash changes, so only a change of the sources does that.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-315532800}"  # 1980-01-01, the earliest zip time
tmp="$(mktemp -d "${TMPDIR:-/tmp}/zettel-wheel.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src"
tar -C "$repo" --exclude=__pycache__ --exclude='*.pyc' -cf - pyproject.toml README.md zettel_lsp \
  | tar -C "$tmp/src" -xf -
"$py" -m pip wheel --no-deps --disable-pip-version-check --quiet --wheel-dir "$tmp/out" "$tmp/src" >"$tmp/pip.log" 2>&1 \
  || { cat "$tmp/pip.log" >&2; echo "build-wheel: pip wheel failed" >&2; exit 1; }
wheels=("$tmp"/out/zettel_lsp-*.whl)
[ -f "${wheels[0]}" ] || { cat "$tmp/pip.log" >&2; echo "build-wheel: no wheel was built" >&2; exit 1; }
rm -rf "$ext_dir/server"
mkdir -p "$ext_dir/server"
cp "${wheels[0]}" "$ext_dir/server/"
echo "build-wheel: server/$(basename "${wheels[0]}")" >&2
