"""Shared fixtures: paths to the example vault and to ../shared (evaluation data, never copied),
and one real index of examples/vault that tests needing an indexed vault copy."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.llm.stub import OllamaStub
from zettel_lsp.index.sparse_copy import copy_tree
from zettel_lsp.index.state import read_state, write_state
from zettel_lsp.vault import Vault

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_VAULT = ROOT / "examples" / "vault"
SHARED = ROOT.parent / "shared"
VAULTS = SHARED / "data" / "vaults"
EVAL = SHARED / "eval"


def shared_vault(name: str) -> Path:
    """A vault under ../shared/data/vaults, or skip the test with the reason."""
    path = VAULTS / name
    if not path.is_dir():
        pytest.skip(
            f"shared vault {name} not found at {path} (../shared is beside the project in CI)"
        )
    return path


@pytest.fixture
def example_vault(tmp_path: Path) -> Path:
    """A temporary copy of examples/vault that a test may change freely."""
    dst = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, dst)
    return dst


@pytest.fixture(scope="session")
def indexed_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/vault indexed once with the default settings (lexical and dense vectors, as a
    server or ``zettel-lsp index`` leaves it), closed: ``<root>/vault`` and ``<root>/index``.
    Never modified: tests copy it with :func:`copy_indexed` (embedding the example vault takes
    ~10 s here, so tests that only need an index to start from share this one)."""
    root = tmp_path_factory.mktemp("indexed-example")
    shutil.copytree(EXAMPLE_VAULT, root / "vault")
    v = Vault(root / "vault", root / "index", cache_dir=tmp_path_factory.mktemp("template-cache"))
    try:
        v.open()
    finally:
        v.close()
    return root


def copy_indexed(template: Path, vault: Path, index_dir: Path) -> None:
    """A private copy of :func:`indexed_example`'s vault at ``vault`` and of its index folder at
    ``index_dir``; the index state points at the copy (so it opens warm: nothing to re-embed).
    The index is copied with its holes kept: its files are preallocated (249 MB by length,
    1.6 MB of data), and a plain copy per test filled a small disk in CI."""
    shutil.copytree(template / "vault", vault)
    copy_index(template, vault, index_dir)


def copy_index(template: Path, vault: Path, index_dir: Path) -> None:
    """A copy of :func:`indexed_example`'s index folder at ``index_dir``, for ``vault`` (a copy
    of the template's vault made before)."""
    copy_tree(template / "index", index_dir, ignore=shutil.ignore_patterns("lock"))
    state = read_state(index_dir)
    assert state is not None
    state.vault = str(vault.resolve())
    write_state(index_dir, state)


@pytest.fixture
def stub() -> Iterator[OllamaStub]:
    """A stand-in for an Ollama server on 127.0.0.1 (tests/llm/stub.py)."""
    s = OllamaStub()
    s.start()
    yield s
    s.close()
