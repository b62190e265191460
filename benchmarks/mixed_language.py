"""A mixed-language vault: many English cards and a few German, Russian and Chinese ones
(issue #45, item 5b). Prints the top 3 for one question asked in English, German and Russian.

    python benchmarks/mixed_language.py [--english N] [--index-dir DIR] [--keep OUT]

**The vault.** ``N`` (default 1000) short English cards: one per topic below (everyday and
science topics), the others made of random sentences about towns, trains and archives; plus
three cards of ``examples/multilingual`` copied as they are:
``Sauerteig.md`` (German, sourdough), ``Закваска.md`` (Russian, sourdough) and ``天文望远镜.md``
(Chinese, telescopes). No English card is about sourdough; a few are about its neighbours (yogurt,
beer, flour, bacteria), so an English query about sourdough has English cards to prefer.

**The question.** "wild yeast and lactic acid bacteria in flour and water", and its German and
Russian forms. In each language the two sourdough cards belong in the top 3. An English query
reaches them only through the multilingual model (the lexical legs cannot read across
languages), so this checks that an English query runs the multilingual leg over the
non-English cards of a vault that has a few.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "multilingual"
FOREIGN = ("Sauerteig.md", "Закваска.md", "天文望远镜.md")
SOURDOUGH = ("Sauerteig.md", "Закваска.md")
QUERIES = {
    "en": "wild yeast and lactic acid bacteria in flour and water",
    "de": "wilde Hefen und Milchsäurebakterien in Mehl und Wasser",
    "ru": "дикие дрожжи и молочнокислые бактерии в муке и воде",
}

# topic -> its sentences; a card tells one topic in a few of them
TOPICS: dict[str, tuple[str, ...]] = {
    "Yogurt": (
        "Yogurt is milk fermented by bacteria that turn lactose into lactic acid.",
        "The acid thickens the milk proteins and gives yogurt its tang.",
        "A spoonful of the last batch starts the next one.",
        "Greek yogurt is strained to remove most of the whey.",
    ),
    "Beer brewing": (
        "Brewers mash malted barley in hot water to release fermentable sugars.",
        "Hops add bitterness and aroma while the wort boils.",
        "Ale yeast ferments warm and leaves fruity esters behind.",
        "Bottle conditioning adds a little sugar so the beer carbonates itself.",
    ),
    "Flour milling": (
        "A roller mill separates the bran and germ from the starchy endosperm.",
        "Whole wheat flour keeps the bran, so it absorbs more water.",
        "The protein content of flour decides how strong a dough becomes.",
        "Freshly milled flour improves after a few weeks of ageing.",
    ),
    "Soil bacteria": (
        "A gram of healthy soil holds billions of bacteria.",
        "Nitrogen-fixing bacteria live in nodules on the roots of legumes.",
        "Bacteria and fungi break down dead leaves into humus.",
        "Tilling disturbs the fungal networks that bind soil together.",
    ),
    "Water treatment": (
        "Drinking water is filtered through sand and then disinfected.",
        "Chlorine kills most bacteria but leaves a faint taste.",
        "Hard water carries calcium and magnesium from limestone.",
        "Reverse osmosis pushes water through a membrane under pressure.",
    ),
    "Bicycle maintenance": (
        "A clean, lightly oiled chain shifts smoothly and lasts longer.",
        "Brake pads wear down and need replacing when the grooves vanish.",
        "Tyre pressure matters more than most riders think.",
        "A loose headset makes the front wheel knock when braking.",
    ),
    "Chess openings": (
        "The Italian Game develops the bishop to an active square early.",
        "The Sicilian Defence answers the king's pawn with an unbalanced fight.",
        "Opening principles: control the centre, develop pieces, castle early.",
        "Memorising lines helps less than understanding the plans behind them.",
    ),
    "Volcanoes": (
        "Basaltic lava flows easily and builds broad shield volcanoes.",
        "Sticky, gas-rich magma erupts explosively and builds steep cones.",
        "Volcanic ash can ground aircraft across a whole continent.",
        "Hot springs and geysers form where groundwater meets hot rock.",
    ),
    "Photosynthesis": (
        "Plants capture light with chlorophyll in their chloroplasts.",
        "Carbon dioxide and water become sugar and oxygen.",
        "The light reactions split water and make ATP.",
        "The Calvin cycle fixes carbon into three-carbon sugars.",
    ),
    "Roman roads": (
        "Roman roads were built in layers of stone, gravel and sand.",
        "Milestones told travellers the distance to the next town.",
        "The Via Appia connected Rome with the south of Italy.",
        "Straight routes let legions march quickly between provinces.",
    ),
    "Jazz harmony": (
        "Jazz musicians extend chords with ninths, elevenths and thirteenths.",
        "The ii-V-I progression is the backbone of many standards.",
        "Tritone substitution replaces a dominant chord with another a tritone away.",
        "Voice leading keeps common tones while the chords change.",
    ),
    "Sleep": (
        "Sleep runs in cycles of about ninety minutes.",
        "Deep sleep helps the body repair tissue and store memories.",
        "Bright screens late at night delay the release of melatonin.",
        "A regular bedtime is the simplest way to sleep better.",
    ),
    "Cheese making": (
        "Rennet curdles milk into curds and whey.",
        "Starter cultures of bacteria acidify the milk before the rennet goes in.",
        "Hard cheeses are pressed and aged for months in cool cellars.",
        "Blue cheeses are pierced so the mould can breathe.",
    ),
    "Kimchi": (
        "Kimchi is cabbage salted and fermented with chilli, garlic and ginger.",
        "Lactobacilli sour it over days in a cool place.",
        "Young kimchi is crisp; aged kimchi is sour and good for stews.",
        "Families make large batches together in late autumn.",
    ),
    "Tides": (
        "The Moon's gravity pulls the oceans into two bulges.",
        "Spring tides come when the Sun and Moon line up.",
        "Some bays funnel the tide into a range of many metres.",
        "Tide tables predict high and low water years ahead.",
    ),
    "Password security": (
        "Long passphrases resist guessing better than short complex passwords.",
        "A password manager creates and remembers a unique password per site.",
        "Two-factor authentication stops most account takeovers.",
        "Reused passwords leak from one breach into every other account.",
    ),
    "Coffee roasting": (
        "Green coffee beans turn brown as sugars caramelise in the roaster.",
        "First crack signals a light roast.",
        "Dark roasts taste of the roast more than of the origin.",
        "Roasted beans release carbon dioxide for days.",
    ),
    "Honeybees": (
        "Worker bees communicate the direction of flowers with a waggle dance.",
        "A colony stores honey to survive the winter.",
        "The queen lays up to two thousand eggs a day in summer.",
        "Varroa mites are the greatest threat to managed hives.",
    ),
    "Glaciers": (
        "Glaciers form where snow accumulates faster than it melts.",
        "Moving ice carves U-shaped valleys and leaves moraines behind.",
        "Meltwater from glaciers feeds rivers through the dry summer.",
        "Most glaciers in the Alps have shrunk for a century.",
    ),
    "Spreadsheets": (
        "A spreadsheet cell holds a value or a formula.",
        "Absolute references keep a formula pointing at one cell when copied.",
        "Pivot tables summarise large tables by category.",
        "Charts make trends visible at a glance.",
    ),
    "Vinegar": (
        "Vinegar is made when acetic acid bacteria oxidise alcohol.",
        "A mother of vinegar is a slimy film of those bacteria.",
        "Wine, cider and rice wine all make good vinegar.",
        "Vinegar preserves vegetables because few microbes survive its acid.",
    ),
    "Typography": (
        "Serif typefaces guide the eye along lines of printed text.",
        "Kerning adjusts the space between particular pairs of letters.",
        "Line length of sixty to seventy characters reads comfortably.",
        "Too many typefaces on one page look chaotic.",
    ),
}


# the other cards' sentences: subject, verb, object and place drawn at random
SUBJECTS = (
    "The committee",
    "A traveller",
    "The engineer",
    "Our team",
    "The old library",
    "A startup",
    "The orchestra",
    "The city council",
    "A historian",
    "The museum",
    "The night train",
    "A software update",
    "The lighthouse keeper",
    "The football club",
    "A cartographer",
    "The weather station",
    "The school board",
    "A sculptor",
    "The harbour master",
    "The airline",
)
VERBS = (
    "planned",
    "documented",
    "repaired",
    "photographed",
    "rebuilt",
    "measured",
    "described",
    "catalogued",
    "designed",
    "debated",
    "restored",
    "mapped",
    "tested",
    "painted",
    "audited",
)
OBJECTS = (
    "the railway bridge",
    "a medieval manuscript",
    "the network router",
    "the marathon route",
    "an oil painting",
    "the tax records",
    "a wooden sailboat",
    "the solar panels",
    "the castle walls",
    "a violin concerto",
    "the parking garage",
    "the election results",
    "a clock tower",
    "the subway map",
    "an astronomy lecture",
    "the chess tournament",
    "a pottery kiln",
    "the city archive",
    "the ski lift",
    "a steam locomotive",
)
PLACES = (
    "in the spring",
    "after the storm",
    "before the festival",
    "for the new budget",
    "during the strike",
    "with volunteers",
    "for the exhibition",
    "in two weeks",
    "on a tight schedule",
    "for the visitors",
    "at the harbour",
    "in the mountains",
)


def english_cards(n: int, seed: int = 0) -> dict[str, str]:
    """``n`` English cards, file name -> text: one per topic of :data:`TOPICS` (its sentences),
    then cards of three to five random sentences (see :data:`SUBJECTS`), each drawn from
    ``Random(f"{seed}:{i}")``."""
    cards: dict[str, str] = {}
    for topic in sorted(TOPICS)[:n]:
        cards[f"{topic}.md"] = f"# {topic}\n\n{' '.join(TOPICS[topic])}\n"
    for i in range(n - len(cards)):
        rng = random.Random(f"{seed}:{i}")
        sentences = [
            f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
            f"{rng.choice(PLACES)}."
            for _ in range(rng.randint(3, 5))
        ]
        title = f"{rng.choice(OBJECTS).split(' ', 1)[1].capitalize()} {i + 1}"
        cards[f"{title}.md"] = f"# {title}\n\n{' '.join(sentences)}\n"
    return cards


def make_mixed_vault(out: Path, english: int = 1000, seed: int = 0) -> Path:
    """Write the vault (see the module) under ``out``, which is created; returns ``out``."""
    out.mkdir(parents=True)
    for name, text in english_cards(english, seed).items():
        (out / name).write_text(text, encoding="utf-8")
    for name in FOREIGN:
        shutil.copyfile(EXAMPLES / name, out / name)
    return out


def main(argv: list[str] | None = None) -> int:
    from zettel_lsp.search.engine import SearchOptions
    from zettel_lsp.vault import Vault

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--english", type=int, default=1000, help="English cards (default 1000)")
    p.add_argument("--index-dir", type=Path, default=None, help="keep the index here")
    p.add_argument("--keep", type=Path, default=None, help="write the vault here and keep it")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mixed-language-") as tmp:
        root = make_mixed_vault(args.keep or Path(tmp) / "vault", args.english)
        vault = Vault(root, args.index_dir or Path(tmp) / "index")
        try:
            vault.open()
            vault.indexer.embed_multilingual()
            vault.load_multilingual_model()
            found = 0
            for lang, query in QUERIES.items():
                if lang != "en":  # as the CLI does: every card gets its multilingual vector
                    vault.ensure_multilingual()
                top = vault.engine.search(query, SearchOptions(limit=3))
                hits = [r.path for r in top if r.path in SOURDOUGH]
                found += len(hits)
                print(f"{lang}: {query}")
                for r in top:
                    print(f"   {r.path}  {sorted(r.legs)}")
            print(f"sourdough cards in the top 3: {found} of {2 * len(QUERIES)}")
        finally:
            vault.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
