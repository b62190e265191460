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


def _project_copy(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "zettel_lsp", src / "zettel_lsp", ignore=shutil.ignore_patterns("__pycache__")
    )
    return src


def _pip(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=600
    )
    log = out.stdout + out.stderr
    if out.returncode != 0 and ("NewConnectionError" in log or "No matching distribution" in log):
        pytest.skip(f"no package index reachable for the build's setuptools: {log[-300:]}")
    assert out.returncode == 0, log[-3000:]
    return log


def test_building_the_wheel_prints_no_deprecation_warning(tmp_path: Path) -> None:
    log = _pip("wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(_project_copy(tmp_path)))
    assert "deprecat" not in log.lower(), log
    assert list((tmp_path / "dist").glob("zettel_lsp-*.whl"))


def test_the_editable_install_of_the_quickstart_prints_no_notice(tmp_path: Path) -> None:
    """scripts/setup.sh installs with ``pip install -e``; setuptools printed a boxed "Editable
    installation ... folders in your working directory with the same name" notice there."""
    src = _project_copy(tmp_path)
    # Into a venv of its own (this pip drives it with --python): an install with --prefix would
    # first uninstall the zettel-lsp of the environment running the tests.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    log = _pip("--python", str(python), "install", "--quiet", "--no-deps", "-e", str(src))
    log = "\n".join(line for line in log.splitlines() if not line.startswith("WARNING: Location"))
    assert "Editable installation" not in log and "warning" not in log.lower(), log
    assert (venv / "lib").exists() and any(venv.glob("lib/python*/site-packages/__editable__*"))
