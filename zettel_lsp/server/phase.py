"""Where a vault's start-up is: what its answers can use (docs/server.md, "Start-up")."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    STARTING = "starting"  # the last session's titles only (open_stored)
    SYNCING = "syncing"  # index open (previous content), reconciling the folder
    GRAPH = "graph"  # index current, parsing the link graph
    EMBEDDING = "embedding"  # everything but some vectors
    READY = "ready"
    READ_ONLY = "read-only"  # index locked by another server: graph + text scan
    FAILED = "failed"  # the index could not be opened at all: graph + text scan
    CLOSED = "closed"
