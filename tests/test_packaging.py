"""Installing the package: a real wheel build (pip, build isolation, setuptools from PyPI) of a
copy of the project, which must print no deprecation warning (issue #14: ``project.license``
as a TOML table printed one at every install)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import version
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


def test_the_wheel_holds_the_package_and_its_version_drives_version(tmp_path: Path) -> None:
    """The version has one source (pyproject.toml): a wheel built with another version prints
    that version on ``--version``, and the wheel carries the package data, not the tests."""
    src = _project_copy(tmp_path)
    pyproject = src / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    bumped = re.sub(r'^version = "[^"]*"$', 'version = "9.9.9"', text, count=1, flags=re.M)
    assert bumped != text
    pyproject.write_text(bumped, encoding="utf-8")
    _pip("wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(src))
    (wheel,) = (tmp_path / "dist").glob("zettel_lsp-9.9.9-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "site")
    for needed in ("__init__.py", "__main__.py", "cli/__init__.py", "py.typed"):
        assert f"zettel_lsp/{needed}" in names, sorted(names)
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "examples/"))]
    entry_points = (tmp_path / "site/zettel_lsp-9.9.9.dist-info/entry_points.txt").read_text()
    assert "zettel-lsp = zettel_lsp.cli:main" in entry_points
    # The unpacked wheel comes first on the path; its dependencies come from this environment.
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    script = "import sys; from zettel_lsp.cli import main; sys.exit(main(['--version']))"
    for args in (["-m", "zettel_lsp", "--version"], ["-c", script]):
        out = subprocess.run(
            [sys.executable, *args], capture_output=True, text=True, env=env, cwd=tmp_path
        )
        assert (out.returncode, out.stdout) == (0, "zettel-lsp 9.9.9\n"), out.stderr


def test_the_installed_version_is_the_package_metadata() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "zettel_lsp", "--version"], capture_output=True, text=True
    )
    assert (out.returncode, out.stdout) == (0, f"zettel-lsp {version('zettel-lsp')}\n")


def test_no_install_placeholder_is_left_in_the_docs() -> None:
    for doc in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        text = doc.read_text(encoding="utf-8")
        for placeholder in ("<this repository>", "<repository URL>", "git+<"):
            assert placeholder not in text, f"{doc.relative_to(ROOT)}: {placeholder}"
