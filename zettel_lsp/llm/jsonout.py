"""Reading JSON out of a model's answer: fenced, prefixed with prose, or trailing junk."""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from typing import Any

MAX_SCAN_CHARS = 20_000
MAX_TRIES = 50
_FENCE = re.compile(r"```(?:json|JSON)?(.*?)```", re.DOTALL)  # no \\s* before .*?: quadratic


def loads_lenient(text: str) -> Any | None:
    """The first JSON object or array in ``text``, or None when there is none.

    Tries, in order: the whole text; the inside of a ```json fence; the first ``{`` or ``[``
    from which a JSON value decodes (trailing text ignored)."""
    text = text.strip()
    if not text:
        return None
    with contextlib.suppress(ValueError):
        return json.loads(text)
    fenced = _FENCE.search(text)
    if fenced:
        with contextlib.suppress(ValueError):
            return json.loads(fenced.group(1))
    decoder = json.JSONDecoder()
    starts = (at for at, char in enumerate(text[:MAX_SCAN_CHARS]) if char in "{[")
    for at in itertools.islice(starts, MAX_TRIES):
        with contextlib.suppress(ValueError):
            return decoder.raw_decode(text, at)[0]
    return None
