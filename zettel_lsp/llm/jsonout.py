"""Reading JSON out of a model's answer: fenced, prefixed with prose, or trailing junk."""

from __future__ import annotations

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
    try:
        return json.loads(text)
    except ValueError:
        pass
    fenced = _FENCE.search(text)
    if fenced:
        try:
            return json.loads(fenced.group(1))
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    tries = 0
    for at, char in enumerate(text[:MAX_SCAN_CHARS]):
        if char in "{[":
            try:
                value, _ = decoder.raw_decode(text, at)
            except ValueError:
                tries += 1
                if tries >= MAX_TRIES:
                    return None
                continue
            return value
    return None
