"""Shared fixtures: paths to the example vault and to ../shared (evaluation data, never copied)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.llm.stub import OllamaStub

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


@pytest.fixture
def stub() -> Iterator[OllamaStub]:
    """A stand-in for an Ollama server on 127.0.0.1 (tests/llm/stub.py)."""
    s = OllamaStub()
    s.start()
    yield s
    s.close()
