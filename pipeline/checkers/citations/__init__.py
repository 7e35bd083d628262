"""Legal citations in briefs checked against case law (LePhantomCite).

Every component a citation encodes is a claim with evidence: the case
exists, its name matches, the pincite falls in its pages, the quotation is
in it, the proposition is supported by it. :func:`~.parse.find_citations`
reads citations with eyecite, :mod:`.sources` looks cases up (a local
store, a citation index, CourtListener), :mod:`.checks` decides.
"""

from .checker import CLAIM_TYPE, CitationChecker, citation_claims
from .checks import PROBLEMS, CaseLaw, CitationResult, check_citations
from .parse import Citation, find_citations
from .reporters import Coverage, citation_key
from .sources import CaseRecord, CitationIndex, LocalStore, Opinion

__all__ = [
    "CLAIM_TYPE",
    "PROBLEMS",
    "CaseLaw",
    "CaseRecord",
    "Citation",
    "CitationChecker",
    "CitationIndex",
    "CitationResult",
    "Coverage",
    "LocalStore",
    "Opinion",
    "check_citations",
    "citation_claims",
    "citation_key",
    "find_citations",
]
