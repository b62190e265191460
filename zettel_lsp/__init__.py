"""zettel-lsp: a language server that searches a folder of linked Markdown notes."""

from importlib.metadata import PackageNotFoundError, version

# The version has one source, pyproject.toml; the installed package's metadata carries it.
try:
    __version__ = version("zettel-lsp")
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
