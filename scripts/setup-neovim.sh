#!/usr/bin/env bash
# The former name of scripts/setup-editors.sh (Neovim and Emacs for the editor tests).
exec bash "$(dirname "$0")/setup-editors.sh" "$@"
