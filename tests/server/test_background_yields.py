"""Background work in the server (the suggestions' self-tuning) waits for a quiet editor: while
requests keep coming it does not run at all, and it goes on once they pause."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from zettel_lsp.server.service import SELF_TUNE_QUIET, VaultService
from zettel_lsp.server.settings import ServerSettings


def test_background_work_waits_while_requests_keep_coming(tmp_path: Path) -> None:
    settings = ServerSettings(
        index_dir=str(tmp_path / "idx"), cache_dir=str(tmp_path / "cache"), watch=False
    )
    service = VaultService(tmp_path, settings)
    busy, went_on = threading.Event(), threading.Event()
    busy.set()

    def editor() -> None:  # a request every 50 ms: never a quiet moment
        while busy.is_set():
            service.read(lambda: None)
            time.sleep(0.05)

    def background() -> None:
        if not service.when_quiet():
            went_on.set()

    requests = threading.Thread(target=editor)
    requests.start()
    time.sleep(0.1)
    threading.Thread(target=background, daemon=True).start()
    try:
        assert not went_on.wait(3.0), "background work ran between back-to-back requests"
    finally:
        busy.clear()
        requests.join()
    assert went_on.wait(SELF_TUNE_QUIET + 2.0), "background work did not go on once quiet"
    service.close()
