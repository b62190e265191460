#!/usr/bin/env bash
# Test set-up step: the editors the editor tests drive, from Debian.
#   neovim                                   tests/server/test_neovim*.py, tests/editors/test_nvim_*.py
#   emacs-nox, elpa-eglot, elpa-markdown-mode tests/editors/test_emacs_eglot.py
# Safe to run again: it installs only what is missing (one apt-get call) and does nothing when
# everything is there. If it cannot install (no apt-get, no root and no password-less sudo, no
# network), it says which tests will be skipped and exits 0: those tests skip with a reason.
set -uo pipefail

packages=()
skipped=""  # what is skipped if the packages cannot be installed

command -v nvim >/dev/null 2>&1 || {
  packages+=(neovim)
  skipped="the Neovim tests (tests/server/test_neovim*.py, tests/editors/test_nvim_*.py)"
}

emacs_lacks() {  # the Emacs features among "$@" that emacs cannot load, one per line
  emacs --batch -q --eval "(dolist (f '($*)) (unless (require f nil t) (princ (format \"%s\n\" f))))" \
    2>/dev/null
}
if ! command -v emacs >/dev/null 2>&1; then
  packages+=(emacs-nox elpa-eglot elpa-markdown-mode)
else
  for feature in $(emacs_lacks eglot markdown-mode); do
    packages+=("elpa-$feature")
  done
fi
[ "${#packages[@]}" -eq 0 ] && exit 0
case " ${packages[*]} " in
  *" emacs-nox "* | *" elpa-"*) skipped="${skipped:+$skipped and }the Emacs test (tests/editors/test_emacs_eglot.py)" ;;
esac

skip() {
  echo "setup-editors: $1; ${skipped} will be skipped (install Debian's ${packages[*]} to run them)." >&2
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

echo "== installing ${packages[*]} (apt-get)" >&2
log="$(mktemp)"
if ! { "${SUDO[@]}" apt-get update -qq \
    && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}"; } >"$log" 2>&1; then
  tail -n 5 "$log" >&2
  rm -f "$log"
  skip "apt-get could not install them (output above)"
fi
rm -f "$log"
if command -v nvim >/dev/null 2>&1; then
  echo "== $(nvim --version | head -n 1)" >&2
fi
if command -v emacs >/dev/null 2>&1; then
  echo "== $(emacs --version | head -n 1)" >&2
  missing="$(emacs_lacks eglot markdown-mode | tr '\n' ' ')"
  [ -z "$missing" ] || echo "setup-editors: Emacs still lacks ${missing% }; the Emacs test will be skipped." >&2
fi
