"""Link suggestions for one card (its current text, unsaved edits included):

- **unlinked mentions** (:mod:`.mentions`): spans that name another card (title or alias)
  without linking it, each with its exact range and the ``[[...]]`` text to put there, ranked by
  how likely each becomes a link;
- **related** (:mod:`.reasons`): the cards a careful writer would link, even where the sentence
  that named them is gone: named rankings ("legs", :mod:`.legs`) from the card's passages, its
  text and the names it writes (:mod:`.names`), and graph evidence that is not a title
  (:mod:`.graph_legs`), fused by weighted RRF (:class:`SuggestFusion`); excluding the card itself
  and cards it already links to, each with a one-line reason. ``eval-links`` scores exactly this
  ranking (``--legs``, ``--no-graph``).
"""

from zettel_lsp.search.suggest.graph_legs import two_hop_neighbours as two_hop_neighbours
from zettel_lsp.search.suggest.legs import (
    DEFAULT_SUGGEST_FUSION as DEFAULT_SUGGEST_FUSION,
)
from zettel_lsp.search.suggest.legs import GRAPH_LEGS as GRAPH_LEGS
from zettel_lsp.search.suggest.legs import LEG_DEPTH as LEG_DEPTH
from zettel_lsp.search.suggest.legs import SUGGEST_LEGS as SUGGEST_LEGS
from zettel_lsp.search.suggest.legs import SuggestFusion as SuggestFusion
from zettel_lsp.search.suggest.legs import fuse_suggestions as fuse_suggestions
from zettel_lsp.search.suggest.legs import suggestion_legs as suggestion_legs
from zettel_lsp.search.suggest.mentions import MentionSuggestion as MentionSuggestion
from zettel_lsp.search.suggest.mentions import MentionTarget as MentionTarget
from zettel_lsp.search.suggest.mentions import by_specificity as by_specificity
from zettel_lsp.search.suggest.mentions import link_name as link_name
from zettel_lsp.search.suggest.mentions import linked_targets as linked_targets
from zettel_lsp.search.suggest.mentions import mention_fields as mention_fields
from zettel_lsp.search.suggest.mentions import mention_suggestions as mention_suggestions
from zettel_lsp.search.suggest.mentions import ranked_mentions as ranked_mentions
from zettel_lsp.search.suggest.reasons import related_suggestions as related_suggestions
