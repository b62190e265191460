"""Serve the repository's stand-in for Ollama's HTTP API (tests/llm/stub.py) until killed.

Used by test/e2e.sh so the Ask box can be tested without a real Ollama: it prints the URL on
the first line of stdout (then flushes), and serves until SIGTERM/SIGINT. The default answer
cites the first note of the prompt: "According to [<title>], the notes answer the question."

    python editors/vscode/test/ollama_stub.py [--token-delay SECONDS]

The repository's root is put on sys.path, so PYTHONPATH is not needed.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.llm.stub import OllamaStub


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--token-delay",
        type=float,
        default=0.0,
        help="seconds between streamed pieces of an answer (to watch it stream)",
    )
    args = parser.parse_args()
    stub = OllamaStub(token_delay=args.token_delay)
    url = stub.start()
    print(url, flush=True)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    stub.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
