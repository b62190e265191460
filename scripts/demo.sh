#!/usr/bin/env bash
# Quickstart command 1: set up, then run zettel-lsp on the sample Zettelkasten in examples/vault.
# Usage: bash scripts/demo.sh ["query"]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
query="${1:-reciprocal rank fusion}"
.venv/bin/zettel-lsp graph examples/vault --card "$query"
