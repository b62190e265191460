"""Installing the package: a real wheel build (pip, build isolation, setuptools from PyPI) of a
copy of the project, which must print no deprecation warning (issue #14: ``project.license``
as a TOML table printed one at every install)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_license_is_an_spdx_expression() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["license"] == "MIT"
    assert any(r.startswith("setuptools>=77") for r in data["build-system"]["requires"])


def test_building_the_wheel_prints_no_deprecation_warning(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "zettel_lsp", src / "zettel_lsp", ignore=shutil.ignore_patterns("__pycache__")
    )
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    log = out.stdout + out.stderr
    if out.returncode != 0 and ("NewConnectionError" in log or "No matching distribution" in log):
        pytest.skip(f"no package index reachable for the build's setuptools: {log[-300:]}")
    assert out.returncode == 0, log[-3000:]
    assert "deprecat" not in log.lower(), log
    assert list((tmp_path / "dist").glob("zettel_lsp-*.whl"))
