"""SafePassage: extracted fields checked against their document.

A claim is a :class:`~pipeline.types.Claim` (an entity type, a value and
the context the LLM copied); its evidence is where that context aligns in the
document; the scorer judges the aligned span against the hypothesis
"{Entity Type}: {value}".

Modules: ``schema`` (entity types), ``extract`` (the LLM extraction the
checked fields come from), ``hypothesis`` (h(y) and value rendering),
``check`` (align, score, judge), ``silver`` (perturbation pairs for training)
and ``checker`` (all of it behind the checker protocol).
"""

from .checker import ExtractionChecker

__all__ = ["ExtractionChecker"]
