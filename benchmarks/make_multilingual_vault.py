"""Generate a synthetic non-English vault for index-time and memory benchmarks (issue #17).

    python benchmarks/make_multilingual_vault.py [N] OUT [--seed 0] [--source DIR]

The hand-written example vault ``examples/multilingual`` (German, Russian and Chinese cards) is
too small to time the indexer or to measure its memory on text in other scripts. This script
recombines its sentences into ``N`` (default 2000) new cards written under ``OUT``:

- about a third each German, Russian and Chinese, in the folders ``de/``, ``ru/`` and ``zh/``;
  most cards sit in a subfolder named after one of the tags of the source cards of the same
  language (``de/backen/``, ``ru/огород/``, ``zh/天文/`` ...), and those carry that tag;
- a unique title made of two words of the card's language and the card's number, which is also
  the file name and the ``# H1``;
- 3 to 12 sentences drawn from the sentences of the source cards in the same language (German and
  Russian text split on ``". "``, Chinese on ``"。"``; wikilinks flattened to their label, tags
  dropped, sentences containing another language's script, such as the "same topic in other
  languages" lines, left out), in one to three paragraphs;
- 0 to 4 ``[[links]]`` to other generated cards of any language, so every link resolves.

The output depends only on ``N``, ``--seed`` and the source cards: two runs with the same
arguments write identical files. ``OUT`` must not exist or be empty. The vault is meant for
benchmarks, not for judged queries: recombined sentences do not make sense together.
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

LANGS = ("de", "ru", "zh")
DEFAULT_SOURCE = Path(__file__).resolve().parent.parent / "examples" / "multilingual"

_FRONTMATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)
_LIST_FIELD = re.compile(r"^(aliases|tags):\s*\[(.*)\]\s*$", re.MULTILINE)
_WIKILINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_TAG = re.compile(r"(?<!\S)#[^\s#]+")
_CJK = re.compile(r"[\u3400-\u9fff]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_LATIN = re.compile(r"[A-Za-zÄÖÜäöüß]")
_WORD = re.compile(r"[^\W\d_]{5,}")
_HEADING = re.compile(r"#{1,6}\s")

# A script that must not occur in a sentence of the language (mixed "see also" lines).
_FOREIGN = {
    "de": (_CJK, _CYRILLIC),
    "ru": (_CJK, _LATIN),
    "zh": (_CYRILLIC, _LATIN),
}
_SEE_ALSO = {"de": "Siehe auch: ", "ru": "См. также: ", "zh": "另见："}
_LINK_SEP = {"de": ", ", "ru": ", ", "zh": "、"}
_LINK_END = {"de": ".", "ru": ".", "zh": "。"}


@dataclass
class Pool:
    """What the source cards of one language offer: sentences, title words and folder names."""

    sentences: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)


def language_of(title: str) -> str:
    """The language of a source card, told by the script of its title."""
    if _CJK.search(title):
        return "zh"
    if _CYRILLIC.search(title):
        return "ru"
    return "de"


def split_sentences(paragraph: str, lang: str) -> list[str]:
    """The sentences of one paragraph, each ending in its full stop."""
    if lang == "zh":
        parts, stop = paragraph.split("。"), "。"
    else:
        parts, stop = paragraph.split(". "), "."
    out: list[str] = []
    for part in parts:
        s = part.strip()
        if not s:
            continue
        if s[-1] not in ".!?。！？":
            s += stop
        out.append(s)
    return out


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def load_pools(source: Path) -> dict[str, Pool]:
    """Read every ``*.md`` under ``source`` (in sorted order) into one pool per language."""
    pools = {lang: Pool() for lang in LANGS}
    paths = sorted(source.rglob("*.md"), key=lambda p: p.relative_to(source).as_posix())
    for path in paths:
        text = path.read_text(encoding="utf-8")
        lang = language_of(path.stem)
        pool = pools[lang]
        names = [path.stem]
        body = text
        if fm := _FRONTMATTER.match(text):
            body = text[fm.end() :]
            for key, values in _LIST_FIELD.findall(fm.group(1)):
                items = [v.strip() for v in values.split(",") if v.strip()]
                if key == "tags":
                    pool.folders.extend(items)
                else:
                    names.extend(items)
        if lang == "zh":  # no spaces to split on: titles and aliases are the words
            pool.words.extend(names)
        for paragraph in re.split(r"\n\s*\n", body):
            if _HEADING.match(paragraph.lstrip()):
                continue
            flat = _TAG.sub("", _WIKILINK.sub(r"\1", paragraph)).replace("\n", " ")
            for sentence in split_sentences(flat, lang):
                if any(script.search(sentence) for script in _FOREIGN[lang]):
                    continue
                pool.sentences.append(sentence)
                if lang != "zh":
                    pool.words.extend(_WORD.findall(sentence))
    for lang, pool in pools.items():
        pool.sentences = _unique(pool.sentences)
        pool.words = _unique(pool.words)
        pool.folders = sorted(set(pool.folders))
        if not pool.sentences or len(pool.words) < 2:
            raise ValueError(f"no {lang} cards with text under {source}")
    return pools


def make_title(rng: random.Random, pool: Pool, lang: str, number: int, width: int) -> str:
    """Two words of the language and the card's number, which makes the title unique."""
    first, second = rng.sample(pool.words, 2)
    if lang == "zh":
        return f"{first}{second} {number:0{width}d}"
    return f"{first[0].upper()}{first[1:]} {second} {number:0{width}d}"


def make_body(rng: random.Random, pool: Pool, lang: str) -> str:
    """3 to 12 sentences of the language in one to three paragraphs."""
    count = rng.randint(3, 12)
    if len(pool.sentences) >= count:
        sentences = rng.sample(pool.sentences, count)
    else:
        sentences = rng.choices(pool.sentences, k=count)
    breaks = sorted(rng.sample(range(1, count), rng.randint(0, min(2, count - 1))))
    joiner = "" if lang == "zh" else " "
    bounds = [0, *breaks, count]
    return "\n\n".join(joiner.join(sentences[a:b]) for a, b in itertools.pairwise(bounds))


def generate(n: int, out: Path, seed: int, source: Path) -> tuple[dict[str, int], int]:
    """Write ``n`` cards under ``out``; return the count per language and the count of links."""
    pools = load_pools(source)
    rng = random.Random(seed)
    langs = [LANGS[i % len(LANGS)] for i in range(n)]
    rng.shuffle(langs)
    width = max(4, len(str(n - 1)))
    titles = [make_title(rng, pools[lang], lang, i, width) for i, lang in enumerate(langs)]
    per_lang = dict.fromkeys(LANGS, 0)
    links = 0
    for i, (lang, title) in enumerate(zip(langs, titles, strict=True)):
        pool = pools[lang]
        per_lang[lang] += 1
        folder = rng.choice(["", *pool.folders])
        lines: list[str] = []
        if folder:
            lines += ["---", f"tags: [{folder}]", "---"]
        lines += [f"# {title}", "", make_body(rng, pool, lang)]
        k = min(rng.randint(0, 4), n - 1)
        if k:
            targets: list[int] = []
            while len(targets) < k:
                j = rng.randrange(n)
                if j != i and j not in targets:
                    targets.append(j)
            joined = _LINK_SEP[lang].join(f"[[{titles[j]}]]" for j in targets)
            lines += ["", f"{_SEE_ALSO[lang]}{joined}{_LINK_END[lang]}"]
            links += k
        path = out / lang / folder / f"{title}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    return per_lang, links


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=2000, help="cards to write (2000)")
    parser.add_argument("out", type=Path, help="output folder; must not exist or be empty")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument(
        "--source", type=Path, default=DEFAULT_SOURCE, help="cards to recombine (%(default)s)"
    )
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("N must be at least 1")
    if args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        parser.error(f"{args.out} exists and is not an empty folder")
    try:
        per_lang, links = generate(args.n, args.out, args.seed, args.source)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    counts = ", ".join(f"{per_lang[lang]} {lang}" for lang in LANGS)
    print(f"wrote {args.n} cards ({counts}) with {links} links to {args.out} (seed {args.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
