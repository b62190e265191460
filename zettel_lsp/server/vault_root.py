"""The vault a client's root belongs to.

A client may send a folder inside a vault as its root (eglot without a project marker sends the
open card's folder). The vault root is the nearest folder, the client's root included, that holds
a vault marker; with no marker anywhere above, the client's root is the vault. One vault is
served once: a root inside another root being served is that vault.
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger("zettel_lsp")

# In order of preference when one folder holds several. Not ``.git``: a client that sends a
# folder inside a repository chose it (eglot already sends the repository's root), and a
# repository above may be a code base or a home folder, far more than the vault.
MARKERS = (".zettel-lsp.toml", ".obsidian", ".dendron.yml", "dendron.yml", ".zk")


def marker_of(folder: Path) -> str | None:
    """The first vault marker ``folder`` holds, if any."""
    for name in MARKERS:
        try:
            if (folder / name).exists():
                return name
        except OSError:
            continue
    return None


def find_vault_root(root: Path) -> tuple[Path, str | None]:
    """The nearest folder at or above ``root`` holding a vault marker, and that marker; else
    ``root`` itself and None."""
    for folder in (root, *root.parents):
        marker = marker_of(folder)
        if marker is not None:
            return folder, marker
    return root, None


def vault_roots(roots: list[Path], served: list[Path] | None = None) -> list[Path]:
    """The vaults to start for the client's ``roots``: each root's vault root, once, leaving out
    any inside another of them or inside a vault in ``served``. Logs each choice."""
    served = list(served or [])
    chosen: list[Path] = []
    for root in roots:
        vault, marker = find_vault_root(root)
        if marker is None:
            log.info("vault root %s: the client's root (no vault marker at or above it)", vault)
        elif vault == root:
            log.info("vault root %s: it holds %s", vault, marker)
        else:
            log.info(
                "vault root %s: it holds %s; the client's root %s lies in it",
                vault,
                marker,
                root,
            )
        if vault not in chosen:
            chosen.append(vault)
    kept = []
    for vault in chosen:
        outer = [o for o in (*served, *chosen) if o != vault and o in vault.parents]
        if vault in served:
            log.info("vault %s is already served", vault)
        elif outer:
            log.info("%s is inside the vault %s: served as part of it", vault, outer[0])
        else:
            kept.append(vault)
    return kept
