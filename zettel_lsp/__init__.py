"""zettel-lsp: a language server that searches a folder of linked Markdown notes."""

__version__ = "0.1.0"
