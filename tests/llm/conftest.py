"""LLM test fixtures: the Ollama stand-in, a shared model cache, and one real index of a copy of
examples/vault (default embedding model) shared by the read-only ask/expand/rerank tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import copy_indexed
from zettel_lsp.llm import LLMSettings, Ollama
from zettel_lsp.vault import Vault


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One model cache for the whole run (assembling the model folder copies 23 MB)."""
    return tmp_path_factory.mktemp("llm-cache")


@pytest.fixture(scope="session")
def vault(
    tmp_path_factory: pytest.TempPathFactory, cache_dir: Path, indexed_example: Path
) -> Iterator[Vault]:
    """A real index of a copy of examples/vault (opened on a copy of ``indexed_example``'s
    index, so nothing is left to embed). Read-only for the tests that share it."""
    root = tmp_path_factory.mktemp("llm-vault") / "vault"
    copy_indexed(indexed_example, root, root.parent / "index")
    v = Vault(root, root.parent / "index", cache_dir=cache_dir)
    v.open()
    yield v
    v.close()


def make_llm(url: str, **settings: Any) -> Ollama:
    settings.setdefault("timeout", 5.0)
    return Ollama(LLMSettings(host=url, **settings))
