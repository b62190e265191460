#!/usr/bin/env bash
# Quickstart command 1: set up, then index the sample Zettelkasten in examples/vault and search it.
# Usage: bash scripts/demo.sh ["query"]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
query="${1:-fusing ranked lists from BM25 and embeddings}"
echo "== zettel-lsp search examples/vault \"$query\"" >&2
.venv/bin/zettel-lsp search examples/vault "$query" --limit 5
echo >&2
echo "== where [[RRF]] sits in the link graph: zettel-lsp graph examples/vault --card RRF" >&2
.venv/bin/zettel-lsp graph examples/vault --card "RRF" --top 5 | sed -n '/^\[\[/,$p'
