"""The lexical phase alone: ``Indexer.sync()`` on a fresh index folder, timed in-process, with
the process's peak RSS. For comparing settings (``--multilingual``) or commits, run it several
times, alternating: the phase's run-to-run noise on 2 cores is about a second.

    python benchmarks/lexical_phase.py VAULT [--multilingual auto|on|off] [--runs 3]

The vault is only read; the index folder is temporary. Prints one JSON line per run.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

from zettel_lsp.index.sync import Indexer, IndexSettings


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--multilingual", choices=("auto", "on", "off"), default="auto")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--cache-dir", type=Path, default=None, help="models cache folder")
    args = ap.parse_args()
    for _ in range(args.runs):
        work = Path(tempfile.mkdtemp(prefix="zettel-lexical-"))
        try:
            settings = IndexSettings(multilingual=args.multilingual)
            ix = Indexer(args.vault, work / "index", settings, cache_dir=args.cache_dir)
            t0 = time.perf_counter()
            report = ix.sync()
            seconds = time.perf_counter() - t0
            ix.close()
        finally:
            shutil.rmtree(work, ignore_errors=True)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        row = {
            "multilingual": args.multilingual,
            "cards": report.cards,
            "chunks": report.chunks,
            "sync_seconds": round(seconds, 2),
            "peak_rss_mb": peak_mb,
        }
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
