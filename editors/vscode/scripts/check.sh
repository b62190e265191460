#!/usr/bin/env bash
# The VS Code extension's checks, as scripts/test.sh (and so CI) runs them: install the locked
# dependencies, typecheck, unit tests, build, package the .vsix with the server wheel in it
# (scripts/build-wheel.sh, run by `vscode:prepublish`; needs PyPI or pip's cache for setuptools). With ZETTEL_E2E=1 it then runs
# the end-to-end test in code-server (test/e2e.sh; downloads ~700 MB on its first run).
# Skips cleanly (exit 0) where there is no npm. About 25 s when node_modules is current.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "editors/vscode: npm/node not found; skipping the VS Code extension's checks." >&2
  exit 0
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "editors/vscode: Node $(node --version) is older than 20; skipping the VS Code extension's checks." >&2
  exit 0
fi

# npm ci only when package-lock.json changed since the last install (it deletes node_modules).
stamp="node_modules/.zettel-lock-sha256"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "== editors/vscode: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi

echo "== editors/vscode: typecheck" >&2
npm run --silent typecheck
echo "== editors/vscode: unit tests" >&2
npm test --silent
echo "== editors/vscode: build and package" >&2
rm -f zettel.vsix
log="$(mktemp)"
# vsce runs the `vscode:prepublish` script (the production esbuild build, the wheel) first.
if ! npx --no-install vsce package --no-dependencies --out zettel.vsix >"$log" 2>&1 || [ ! -s zettel.vsix ]; then
  cat "$log" >&2
  rm -f "$log"
  echo "editors/vscode: packaging failed" >&2
  exit 1
fi
if ! grep -qE "zettel_lsp-[^ ]+\.whl \[" "$log"; then
  cat "$log" >&2
  rm -f "$log"
  echo "editors/vscode: the .vsix has no server wheel (server/zettel_lsp-*.whl)" >&2
  exit 1
fi
grep -E "DONE" "$log" >&2 || true
rm -f "$log"

if [ "${ZETTEL_E2E:-}" = "1" ]; then
  echo "== editors/vscode: end-to-end (code-server + Chromium)" >&2
  bash test/e2e.sh
fi
