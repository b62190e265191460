"""No regular expression in the project backtracks super-linearly (issue #12: ~30 nested quote
markers made the fence pattern take minutes and hung the server).

Every module-level compiled pattern of the package is found by import (a new one is covered
without touching this file) and timed on adversarial inputs of growing size: a prefix, then a
unit repeated n and 8n times, then a suffix. Linear work grows ~8x; the test fails when it grows
more than 24x (quadratic: ~64x, exponential: never ends). Ratios, not absolute limits; a child
process with a timeout turns a hang into a failure. The whole parse of a card is timed the same
way.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

MODULES = [
    "zettel_lsp.notes.masking",
    "zettel_lsp.notes.parser",
    "zettel_lsp.notes.frontmatter",
    "zettel_lsp.notes.title_rule",
    "zettel_lsp.notes.mentions",
    "zettel_lsp.graph.resolver",
    "zettel_lsp.index.chunker",
    "zettel_lsp.index.sync",
    "zettel_lsp.index.verify",
    "zettel_lsp.search.query",
    "zettel_lsp.search.fallback",
    "zettel_lsp.search.rerank",
    "zettel_lsp.search.results",
    "zettel_lsp.search.beir",
    "zettel_lsp.search.eval_links",
    "zettel_lsp.llm.jsonout",
    "zettel_lsp.server.features",
    "zettel_lsp.server.protocol",
    "zettel_lsp.cli",
]

UNITS = ["> ", " >", "#", " #", "#1", "`", "[[", "[", "](", "(", "\\", " ", "\t", "-", "a", "1",
         ".", "*", "_", "|", "<!--", "~", "---\n", "\n", "a ", "[a"]  # fmt: skip
PREFIXES = ["", "# a", "[[", "[x](", "#", "```", "a."]
SUFFIXES = ["", "x", "\n"]
SMALL, GROWTH, MAX_RATIO, FLOOR_S = 400, 8, 24.0, 0.02

_MEASURE = textwrap.dedent(
    """
    import importlib, json, re, sys, time
    mod = importlib.import_module(sys.argv[1])
    units, prefixes, suffixes = json.loads(sys.argv[2])
    small, growth = int(sys.argv[3]), int(sys.argv[4])
    patterns = {k: v for k, v in vars(mod).items() if isinstance(v, re.Pattern)}
    worst = {}
    def run(p, s):
        if isinstance(p.pattern, bytes):
            s = s.encode("utf-8", "surrogatepass")
        t = time.perf_counter()
        p.findall(s)
        p.sub(s[:0], s)
        return time.perf_counter() - t
    for name, p in patterns.items():
        for unit in units:
            for pre in prefixes:
                for suf in suffixes:
                    t1 = run(p, pre + unit * small + suf)
                    t2 = run(p, pre + unit * small * growth + suf)
                    if t2 > worst.get(name, (0, 0, ""))[1]:
                        worst[name] = (t1, t2, repr((pre, unit, suf)))
    print(json.dumps({"patterns": sorted(patterns), "worst": worst}))
    """
)


@pytest.mark.parametrize("module", MODULES)
def test_every_pattern_is_linear_on_adversarial_input(module: str) -> None:
    args = json.dumps([UNITS, PREFIXES, SUFFIXES])
    try:
        out = subprocess.run(
            [sys.executable, "-c", _MEASURE, module, args, str(SMALL), str(GROWTH)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"a pattern of {module} did not finish on adversarial input (backtracking)")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    slow = {
        name: (round(t1, 4), round(t2, 4), case)
        for name, (t1, t2, case) in result["worst"].items()
        if t2 > FLOOR_S and t2 / max(t1, 1e-6) > MAX_RATIO
    }
    assert slow == {}, f"super-linear patterns in {module}: {slow}"


_PARSE = textwrap.dedent(
    """
    import json, sys, time
    from zettel_lsp.index.chunker import chunk_cards
    from zettel_lsp.notes.parser import parse_card
    unit, small, growth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    words = lambda texts: [len(t.split()) for t in texts]
    times = []
    for n in (small, small * growth):
        text = unit * n + "x\\n"
        t = time.perf_counter()
        card = parse_card("adversarial.md", text, budget_s=3600.0)
        chunk_cards([card], words)
        times.append(time.perf_counter() - t)
    print(json.dumps(times))
    """
)

NOTES = [
    "> ",  # the reported hang: nested quote markers before a fence-like line
    "> > ```\n",
    "# a" + " " * 50,
    "#1",
    "[[a",
    "[a](",
    "`` ` ",
    "<!-- ",
    "~~~ \n> ",
    "- [ ] #tag ^id\n",
]


@pytest.mark.parametrize("unit", NOTES)
def test_parsing_and_chunking_a_card_is_linear(unit: str) -> None:
    try:
        out = subprocess.run(
            [sys.executable, "-c", _PARSE, unit, "1000", str(GROWTH)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"parsing {unit!r} repeated did not finish (backtracking)")
    assert out.returncode == 0, out.stderr
    t1, t2 = json.loads(out.stdout)
    assert t2 < FLOOR_S * 5 or t2 / t1 < MAX_RATIO, (unit, t1, t2)


def test_thirty_nested_quote_markers_parse_at_once() -> None:
    """The input from the issue (30 levels took over a minute before the fix)."""
    code = (
        "from zettel_lsp.notes.parser import parse_card\n"
        "card = parse_card('q.md', '> ' * 30 + '```\\ncode\\n' + '> ' * 30 + '```\\nafter\\n')\n"
        "print(len(card.masked))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0 and int(out.stdout) >= 1, out.stderr


def test_a_card_over_its_parse_budget_is_plain_text_with_a_warning() -> None:
    from zettel_lsp.notes.parser import parse_card

    text = "# Heading\nSee [[Other]] and #tag.\n"
    full = parse_card("notes/Budget card.md", text)
    assert full.links and full.tags and full.problems == []
    plain = parse_card("notes/Budget card.md", text, budget_s=0.0)
    assert plain.title == "Budget card" and plain.text == text
    assert (plain.links, plain.tags, plain.headings) == ([], [], [])
    assert plain.problems == [
        "notes/Budget card.md: parsing took longer than 0 s; indexed as plain text"
    ]
