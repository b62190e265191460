"""Remote mode: a writer killed (SIGKILL) in the middle of indexing into a server collection;
the next start on the same folder finishes, and nothing is lost or doubled. The writer is a
real process; the server is the HTTP fake of ``test_remote_fake.py``, whose data outlives it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.index.conftest import assert_index_matches_folder
from tests.index.test_remote_fake import FakeQdrant, fake
from zettel_lsp.index.sync import Indexer, IndexSettings

__all__ = ["fake"]  # the fixture, imported
pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")

# the writer: small batches so that the kill lands between and inside requests
WRITER = """
import sys
import threading
from pathlib import Path
from zettel_lsp.index import remote_store
remote_store.BATCH_POINTS = 16
from zettel_lsp.index.sync import Indexer, IndexSettings
vault, idx, url, cache = sys.argv[1:5]
ix = Indexer(Path(vault), Path(idx), IndexSettings(qdrant_url=url, multilingual="off"),
             cache_dir=Path(cache))
ix.sync()
ix.embed_pending()
ix.close()
print("finished")
"""


@pytest.mark.parametrize(
    ("method", "path", "skip"),
    [("PUT", "/points", 2), ("PUT", "/points/vectors", 2)],
    ids=["lexical", "dense"],
)
def test_resume_after_kill(
    fake: FakeQdrant, tmp_path: Path, cache_dir: Path, method: str, path: str, skip: int
) -> None:
    vault = tmp_path / "vault"
    for part in ("baking", "method"):
        shutil.copytree(EXAMPLE_VAULT / part, vault / part)
    idx = tmp_path / "idx"
    held = fake.fail(method, path, skip=skip, hold=threading.Event())
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(vault), str(idx), fake.url, str(cache_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert held.reached.wait(60), proc.communicate(timeout=5)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        assert held.hold is not None
        held.hold.set()  # the request in flight is answered (not applied) after its writer died
    before = fake.count(method, path)
    assert before == skip + 1

    # the folder changes while nothing runs
    (vault / "baking" / "Levain.md").write_text("# Levain\nNow about a rye levain only.\n")
    (vault / "method" / "Backlinks.md").unlink()
    (vault / "New card.md").write_text("# New card\nWritten after the kill.\n")

    settings = IndexSettings(qdrant_url=fake.url, multilingual="off")
    with Indexer(vault, idx, settings, cache_dir=cache_dir) as ix:
        r = ix.sync()
        ix.embed_pending()
        assert_index_matches_folder(ix)
        assert ix.store.count() == r.chunks  # no leftovers, no doubles
        assert ix.store.keyword_search("rye levain", 3, phrase=True)[0].path == ("baking/Levain.md")
        assert ix.store.keyword_search("written after the kill", 3, phrase=True)
