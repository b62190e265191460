#!/usr/bin/env bash
# Test set-up step: Debian's neovim for tests/server/test_neovim.py (a headless Neovim client).
# Safe to run again: it does nothing when nvim is on PATH. If it cannot install (no apt-get, no
# root and no sudo, no network), it says so and exits 0: that test is then skipped with a reason.
set -uo pipefail

if command -v nvim >/dev/null 2>&1; then
  exit 0
fi

skip() {
  echo "setup-neovim: $1; tests/server/test_neovim.py will be skipped (install Debian's 'neovim' to run it)." >&2
  exit 0
}

command -v apt-get >/dev/null 2>&1 || skip "apt-get not found"
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    skip "not root and no password-less sudo"
  fi
fi

echo "== installing neovim (apt-get)" >&2
log="$(mktemp)"
if ! { "${SUDO[@]}" apt-get update -qq \
    && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim; } >"$log" 2>&1; then
  tail -n 5 "$log" >&2
  rm -f "$log"
  skip "apt-get could not install neovim (output above)"
fi
rm -f "$log"
command -v nvim >/dev/null 2>&1 || skip "neovim installed but nvim is not on PATH"
echo "== $(nvim --version | head -n 1)" >&2
