"""``python -m zettel_lsp`` is the same as the ``zettel-lsp`` command."""

from zettel_lsp.cli import main

raise SystemExit(main())
