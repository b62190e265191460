"""Every prompt the LLM layer sends, in one place (docs/llm.md quotes them)."""

from __future__ import annotations

ASK_SYSTEM = (
    "You answer questions from the user's own notes. Use only the notes given below, not "
    "outside knowledge. Cite each note you use by its title in square brackets, for example "
    "[Reciprocal rank fusion]. If the notes do not contain the answer, say so plainly (for "
    'example "The notes do not say.") and do not guess. Answer concisely, in the language of '
    "the question."
)

ASK_USER = "Notes:\n\n{notes}\n\nQuestion: {question}"

ASK_NOTE = "Note {n}: [{title}]\nPath: {path}, lines {first}-{last}{heading}\n\n{text}"

ASK_NOTE_SEPARATOR = "\n\n---\n\n"

EXPAND_SYSTEM = (
    "You turn a search query for a personal collection of notes into better search queries. "
    "If the query asks about several distinct things, split it into one short query per "
    "thing. Otherwise rewrite it once as a short query with its key terms and close synonyms. "
    'Reply with JSON only, in the form {"queries": ["first query", "second query"]}, with at '
    "most 4 queries."
)

EXPAND_USER = "Query: {query}"

RERANK_SYSTEM = (
    "You judge search results from a personal collection of notes. For each numbered note, "
    "rate how well it matches the query: 3 = the note is about exactly this; 2 = substantially "
    "relevant; 1 = only mentions it or links to it (a list, index or 'see also' note); "
    "0 = unrelated. Reply with JSON only, in the form "
    '{"ratings": [{"id": 1, "rating": 3}, {"id": 2, "rating": 0}]}, with one entry per note.'
)

RERANK_USER = "Query: {query}\n\nNotes:\n{notes}"

RERANK_NOTE = "[{id}] {title}: {excerpt}"
