"""The server's background threads (server/background.py): named, referenced while they run,
and a failure reaches the log with its traceback, never stdout or stderr."""

from __future__ import annotations

import logging
import threading

import pytest

from zettel_lsp.server.background import in_background, running


def test_a_failing_background_thread_is_logged_not_printed(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    release = threading.Event()

    def work() -> None:
        release.wait(5)
        raise ValueError("boom")

    caplog.set_level(logging.ERROR, logger="zettel_lsp.server.background")
    thread = in_background("zettel-test-work", work)
    assert thread.name == "zettel-test-work" and thread in running()
    release.set()
    thread.join(5)
    assert thread not in running()
    [record] = caplog.records
    assert record.getMessage() == "zettel-test-work failed"
    assert record.exc_info is not None and "boom" in str(record.exc_info[1])
    out, err = capfd.readouterr()
    assert out == "" and "boom" not in err
