"""Ask: answer a question from the notes, with sources.

1. Retrieve with the search pipeline (:func:`~zettel_lsp.llm.search.search_llm`: hybrid legs,
   optional expansion and LLM rerank, graph rerank).
2. Choose how many chunks go into the prompt: ``ceil(sqrt(N))`` for N cards in the vault (a
   published heuristic for top-k in RAG), at most ``max_context_chunks``, and only as many as
   fit the model's window (``/api/show``'s context length, capped by ``context_window``) after
   reserving room for the instructions, the question and the answer. One chunk per card: the
   card's best chunk.
3. Stream the answer (``on_delta`` gets each piece) with the prompt in
   :mod:`zettel_lsp.llm.prompts`: cite notes by title, say when the notes do not answer.

No Ollama, an unknown model, a timeout or a broken answer: the result has ``fallback`` (one
line), ``answer`` is what arrived before the failure (usually ""), and ``sources`` are still the
retrieved cards. Never raises for LLM problems.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from zettel_lsp.llm.client import Cancel, Message, Ollama, is_cancelled
from zettel_lsp.llm.errors import LLMCancelled, LLMError
from zettel_lsp.llm.prompts import ASK_NOTE, ASK_NOTE_SEPARATOR, ASK_SYSTEM, ASK_USER
from zettel_lsp.llm.search import search_llm
from zettel_lsp.search.engine import Reader, SearchEngine, SearchOptions, direct
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import parse_query
from zettel_lsp.search.results import result_dict

CHARS_PER_TOKEN = 3.5  # a conservative estimate for English with LLM tokenizers
ANSWER_RESERVE_TOKENS = 1024  # at most; a quarter of a small window
PROMPT_SLACK_TOKENS = 64  # chat template and role markers


@dataclass(slots=True)
class AskResult:
    question: str
    answer: str
    model: str
    sources: list[dict[str, Any]]  # {path, title, chunk, line_start, line_end, score, excerpt}
    fallback: str | None = None  # one line when the LLM could not answer
    messages: list[str] = field(default_factory=list)  # LLM steps skipped, notes
    context_chunks: int = 0  # chunks sent to the model
    cancelled: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def context_chunk_count(cards: int, cap: int) -> int:
    """ceil(sqrt(N)), at least 1, at most ``cap``."""
    return max(1, min(cap, math.ceil(math.sqrt(max(cards, 1)))))


def source_dict(r: CardResult, words: Sequence[str]) -> dict[str, Any]:
    """A source as in ``zettel.search`` rows (excerpt: at most 200 characters; ``excerpt_text``:
    the text as a reader sees it, ``heading``: its headings as a breadcrumb), and its chunk."""
    row = result_dict(r, words)
    keys = ("line_start", "line_end", "score", "excerpt", "heading", "excerpt_text")
    return {"path": r.path, "title": r.title, "chunk": int(r.chunk.get("chunk", 0))} | {
        k: row[k] for k in keys
    }


def build_prompt(
    question: str, candidates: Sequence[CardResult], window: int
) -> tuple[list[Message], list[CardResult]]:
    """The chat messages and the candidates that fit ``window`` tokens (in order; the first
    one always, shortened if it alone is too long)."""
    reserve = min(ANSWER_RESERVE_TOKENS, window // 4)
    budget = (
        window
        - reserve
        - estimate_tokens(ASK_SYSTEM)
        - estimate_tokens(ASK_USER.format(notes="", question=question))
        - PROMPT_SLACK_TOKENS
    )
    blocks: list[str] = []
    used: list[CardResult] = []
    spent = 0
    for r in candidates:
        c = r.chunk
        heading = str(c.get("heading", "") or "")
        block = ASK_NOTE.format(
            n=len(used) + 1,
            title=r.title,
            path=r.path,
            first=int(c.get("line_start", 0)) + 1,
            last=int(c.get("line_end", 0)) + 1,
            heading=f", section '{heading}'" if heading else "",
            text=str(c.get("text", "")).strip(),
        )
        cost = estimate_tokens(block + ASK_NOTE_SEPARATOR)
        if spent + cost > budget:
            if used:
                break
            block = block[: max(0, int(budget * CHARS_PER_TOKEN))]
            cost = budget
        blocks.append(block)
        used.append(r)
        spent += cost
    user = ASK_USER.format(notes=ASK_NOTE_SEPARATOR.join(blocks), question=question)
    return [{"role": "system", "content": ASK_SYSTEM}, {"role": "user", "content": user}], used


def ask(
    engine: SearchEngine,
    llm: Ollama,
    question: str,
    *,
    on_delta: Callable[[str], None] | None = None,
    cancel: Cancel | None = None,
    options: SearchOptions | None = None,
    read: Reader = direct,
) -> AskResult:
    """Answer ``question`` from the notes (see module doc). Thread-safe for one engine.
    ``read`` runs the steps that read the index and the graph (see :func:`search_llm`)."""
    s = llm.settings
    opts = options or SearchOptions()
    model = s.chat_model
    query = parse_query(question)
    if query.empty:
        return AskResult(question, "", model, [], messages=["the question has no words"])
    k = context_chunk_count(len(engine.graph.cards), s.max_context_chunks)
    retrieval = replace(opts, limit=max(opts.limit, k))
    results, messages = search_llm(
        engine,
        llm,
        question,
        retrieval,
        expand=s.expand_query,
        rerank=s.llm_rerank,
        cancel=cancel,
        read=read,
    )
    words = query.terms
    top = results[:k]

    def result(used: Sequence[CardResult], answer: str, err: LLMError | None) -> AskResult:
        cancelled = isinstance(err, LLMCancelled) or is_cancelled(cancel)
        return AskResult(
            question,
            answer,
            model,
            [source_dict(r, words) for r in used],
            None if cancelled or err is None else err.message,
            messages,
            len(used) if answer or err is None else 0,
            cancelled,
        )

    if not top:
        messages.append("no card matches the question; nothing was sent to the model")
        return AskResult(question, "", model, [], None, messages)
    if is_cancelled(cancel):
        return result(top, "", LLMCancelled("cancelled"))
    try:
        window = llm.context_window(cancel=cancel)
    except LLMError as exc:
        return result(top, "", exc)
    prompt, used = build_prompt(question, top, window)
    parts: list[str] = []
    try:
        for delta in llm.chat_stream(prompt, cancel, options={"num_ctx": window}):
            parts.append(delta)
            if on_delta is not None:
                on_delta(delta)
    except LLMError as exc:
        if parts:
            exc = LLMError(f"the answer was cut off: {exc.message}")
        return result(used, "".join(parts), exc)
    return result(used, "".join(parts), None)
