"""Requests read the index's bookkeeping while a sync on another thread adds cards to it: they
must not fail. (Seen at 100k cards: every ``zettel.status`` failed with "dictionary changed
size during iteration" while the start-up's sync added cards, because ``Vault.dense_ready``
walked the live dict.)"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from zettel_lsp.vault import Vault


def test_requests_read_the_state_while_a_sync_adds_cards(tmp_path: Path, cache_dir: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(1500):
        (vault / f"Card {i}.md").write_text(f"# Card {i}\n\nA note about topic {i % 37}.\n")
    v = Vault(vault, tmp_path / "index", cache_dir=cache_dir)  # model "loaded": no vectors yet
    errors: list[BaseException] = []
    calls = 0
    done = threading.Event()

    def read() -> None:
        nonlocal calls
        while not done.is_set():
            try:
                assert not v.dense_ready  # nothing is embedded: walks every card each time
                v.summary()
                v.status()
                calls += 1
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)
                return

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    reader = threading.Thread(target=read)
    reader.start()
    try:
        report = v.indexer.sync()
    finally:
        done.set()
        reader.join()
        sys.setswitchinterval(old)
        v.close()
    assert report.cards == 1500
    assert calls > 0
    assert errors == [], errors[0]
