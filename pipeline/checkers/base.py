"""The one shape every checker shares: claims in, findings out.

Four kinds of LLM output are checked (extracted fields against their
document, RAG answers against their context, free-form answers against other
models' samples, legal citations against case law). Each reduces to a claim,
the evidence found for or against it, and a verdict with a reason and a
score, which an expert then labels. A checker is configured with where its
evidence comes from (documents, a case-law source) and turns claims into
:class:`Finding` records; the web app, the labeling screen and the training
loop see only findings.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ..errors import InputError
from ..grader_prompts import GraderPrompt
from ..score import Scorer
from ..types import Claim, Document, Label, VerdictValue

C = TypeVar("C")


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence for or against a claim.

    ``source`` names what it was found in (a document id, a context item, a
    sample, a court opinion), ``start``/``end`` are character offsets into
    that source (None when the evidence is the whole source or nothing was
    found), ``role`` says what it is to the claim (``aligned`` span,
    ``context`` item, ``sample``, ``opinion``...) and ``score`` how strongly
    it counts (alignment score, relevance, judgment), if the checker has one.
    """

    source: str
    start: int | None
    end: int | None
    text: str
    role: str
    score: float | None = None


_EVIDENCE_FIELDS = {
    "source": (str,),
    "start": (int, type(None)),
    "end": (int, type(None)),
    "text": (str,),
    "role": (str,),
    "score": (int, float, type(None)),
}


def evidence_problem(value: Any) -> str | None:
    """What is wrong with ``value`` as stored evidence (a list of
    :class:`Evidence` as dicts), or None."""
    if not isinstance(value, list):
        return "a list of evidence records"
    for i, item in enumerate(value):
        if not isinstance(item, dict) or set(item) != set(_EVIDENCE_FIELDS):
            return f"item {i}: an object with {', '.join(_EVIDENCE_FIELDS)}"
        for name, types in _EVIDENCE_FIELDS.items():
            v = item[name]
            if not isinstance(v, types) or isinstance(v, bool):
                return f"item {i}: {name} has the wrong type"
    return None


@dataclass(frozen=True)
class ClaimData:
    """A kind's own fields of a claim: what the web app stores as the claim's
    ``data``, beside the fields every kind shares (document, source model,
    hypothesis, evidence, verdict...).

    ``fields`` maps each key to the JSON types its value may have: every key
    is required and no other is allowed. ``of`` takes them from a claim,
    ``claim`` makes the claim back from its id, document id and them (the
    caller adds its model and other fields). ``statement`` says what the claim
    states, shown until its check writes the hypothesis. ``group``, if any,
    names the key whose value sorts claims into groups (an entity type): the
    stratified queue draws from every group alike. ``corrects`` names the keys
    an expert may correct with a label, what the claim says first (the key a
    suggested rewrite replaces), then its group where it has one.
    """

    fields: Mapping[str, tuple[type, ...]]
    of: Callable[[Claim], dict[str, Any]]
    claim: Callable[[str, str, Mapping[str, Any]], Claim]
    statement: Callable[[Mapping[str, Any]], str]
    corrects: tuple[str, ...]
    group: str | None = None

    def problem(self, data: Any) -> str | None:
        """What is wrong with ``data`` as this kind's fields, or None."""
        if not isinstance(data, dict):
            return "must be an object"
        if missing := [k for k in self.fields if k not in data]:
            return f"lacks {', '.join(missing)}"
        if unknown := sorted(set(data) - set(self.fields)):
            return f"has unknown fields {', '.join(unknown)}"
        return self._values_problem(data)

    def _values_problem(self, data: Mapping[str, Any]) -> str | None:
        for name, types in self.fields.items():
            if name not in data:
                continue
            value = data[name]
            if not isinstance(value, types) or (
                isinstance(value, bool) and bool not in types
            ):
                wanted = " or ".join(_JSON_TYPE_NAMES[t] for t in types)
                return f"field {name!r} must be {wanted}"
        return None

    def correction_problem(self, correction: Any) -> str | None:
        """What is wrong with ``correction``, an expert's right values for
        some of the keys in :attr:`corrects`, or None."""
        if not isinstance(correction, dict) or not correction:
            return f"must be an object with some of {', '.join(self.corrects)}"
        if unknown := sorted(set(correction) - set(self.corrects)):
            return (
                f"cannot correct {', '.join(unknown)} "
                f"(what may be corrected: {', '.join(self.corrects)})"
            )
        return self._values_problem(correction)


def text_claim_data(
    claim_type: str,
    fields: Mapping[str, tuple[type, ...]],
    *,
    context_is_text: bool = False,
) -> ClaimData:
    """The :class:`ClaimData` of a kind whose claim is one text, the claim's
    value, under the first key of ``fields``; the other keys are fields the
    claim keeps in its ``extra`` (a citation's place in the brief). Its
    claims are of ``claim_type``; their context is the text itself where
    ``context_is_text``, else empty."""
    text, *kept = fields
    return ClaimData(
        fields=fields,
        of=lambda c: {text: c.value, **{k: c.extra.get(k) for k in kept}},
        claim=lambda id, document_id, d: Claim(
            id,
            document_id,
            type=claim_type,
            value=d[text],
            context=d[text] if context_is_text else "",
            extra={k: d[k] for k in kept},
        ),
        statement=lambda d: d[text],
        corrects=(text,),
    )


#: A JSON value of any type, for :attr:`ClaimData.fields`.
ANY_JSON: tuple[type, ...] = (str, int, float, bool, list, dict, type(None))
_JSON_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


@dataclass(frozen=True)
class Finding:
    """A checker's answer about one claim.

    ``hypothesis`` is the claim as the scorer and the expert read it (for
    extraction, "{Entity Type}: {value}") and ``premise`` the
    evidence text the scorer read it against (the LLM grader and retraining
    read the same pair); ``score`` is the scorer's p(supported) where one
    ran; ``reason`` says why an unsafe verdict is unsafe, in the checker's own
    vocabulary. ``evidence`` lists the deciding item first. ``decided`` is
    True when the evidence alone settles a safe verdict with no scorer (a
    citation whose case, name, pincite and quotation all check out);
    otherwise a safe verdict without a score counts as unscored.
    """

    claim_id: str
    hypothesis: str
    verdict: VerdictValue
    reason: str | None
    score: float | None
    evidence: tuple[Evidence, ...] = ()
    premise: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    decided: bool = False


@dataclass(frozen=True)
class Example:
    """One training pair; ``supported`` is True for a safe passage.
    ``document_id`` groups pairs for the validation split (a document's pairs
    stay on one side); ``source`` says where the label came from."""

    premise: str
    hypothesis: str
    supported: bool
    document_id: str
    source: str


@dataclass(frozen=True)
class Pair:
    """What the scorer reads for one claim: the evidence text (``premise``)
    and the claim as a hypothesis. ``scored`` is False when the checker
    decides the claim without the scorer (extraction: a context not found in
    the document is unsafe whatever the scorer says): such a claim is not
    trained on, and counts in validation as flagged."""

    claim_id: str
    premise: str
    hypothesis: str
    document_id: str
    scored: bool = True


@dataclass
class CheckResult:
    """Findings in the order of the claims, and the claims that could not be
    checked (an unknown document, say), each as an error naming it."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)


@dataclass(frozen=True)
class ScorerCard:
    """What a kind's scorer reads, in its model card's words: the sentence
    saying which (premise, hypothesis) pair it scores, and one such pair."""

    reads: str
    example: tuple[str, str]


@dataclass(frozen=True)
class PaperFigures:
    """What a checker's paper reports that a project's dashboard can be held
    against: precision, recall and F1 flagging unsafe claims, and the pace of
    its experts in labels an hour (None where it reports none), ``source``
    naming where (e.g. "paper Table 1")."""

    source: str
    precision: float
    recall: float
    f1: float
    labels_per_hour: int | None = None


class Checker(Protocol, Generic[C]):
    """What the rest of the system knows of a checker.

    ``kind`` names it (``Project.kind`` in the web app), ``title`` says what
    it checks, ``claim_data`` which fields of its claims are its own (the web
    app stores and validates them by it), ``evidence_score_name`` what its
    evidence scores measure, ``aligns`` whether they are alignments kept at
    the ``align_threshold`` option (so the app may show that threshold and
    rank claims near it), ``grader_prompt`` what an LLM grader is asked of
    its (premise, claim) pairs (None: its claims are not graded by an LLM),
    ``scorer_card`` what its scorer reads, for the model card of a downloaded
    scorer, ``reasons`` what each reason for an unsafe verdict means, for
    people, and ``score_fields`` which keys of a finding's ``extra`` (at any
    depth) hold a scorer's judgement, hidden from experts where a project
    hides machine scores, ``paper_figures`` what its paper reports in
    the dashboard's terms (None: nothing comparable, so no reference line). A
    checker is built with the documents its claims came from (by id) and
    keyword options (the web app passes those its constructor names among
    the project's ``schema`` and ``align_threshold`` and the deployment's
    ``caselaw``, ``relevance`` and ``int8``), ignoring options it has no use
    for. ``claim_from_json`` reads one line of its JSONL claims; ``check``
    judges a batch of claims, scoring with ``scorer`` (an NLI cross-encoder,
    an LLM grader) when given.

    For retraining (:func:`pipeline.train.train_scorer`, which knows no kind)
    a checker gives the pairs its scorer reads for labelled claims
    (``training_pairs``, of the claims whose id is in ``only`` when given) and
    synthetic silver pairs made from claims (``silver_examples``; none is a
    valid answer).
    """

    kind: ClassVar[str]
    title: ClassVar[str]
    claim_data: ClassVar[ClaimData]
    evidence_score_name: ClassVar[str]
    aligns: ClassVar[bool]
    paper_figures: ClassVar[PaperFigures | None]
    grader_prompt: ClassVar[GraderPrompt | None]
    scorer_card: ClassVar[ScorerCard]
    reasons: ClassVar[dict[str, str]]
    score_fields: ClassVar[frozenset[str]]

    def __init__(self, documents: Mapping[str, Document], **options: Any): ...

    def claim_from_json(self, raw: Any) -> C: ...

    def check(
        self,
        claims: Sequence[C],
        *,
        scorer: Scorer | None = None,
        progress: bool = False,
    ) -> CheckResult: ...

    def training_pairs(
        self, claims: Sequence[C], *, only: Collection[str] | None = None
    ) -> list[Pair]: ...

    def silver_examples(self, claims: Sequence[C], *, seed: int) -> list[Example]: ...


class FindsClaims(Protocol):
    """A checker whose claims are read from the documents themselves (the
    citations of a brief) rather than given: the web app asks it for the
    claims of every new document."""

    def find_claims(self, documents: Mapping[str, Document]) -> list[Any]: ...


def _nothing(item: Any) -> tuple[()]:
    return ()


@dataclass(frozen=True)
class ItemFormat:
    """How one JSONL line of a checker's items becomes the records the rest
    of the system stores: a document (whose id is the item's) and the claims
    and labels the item brings with it.

    Args:
        read: a parsed line to an item; raises ``ValueError`` naming the
            field that is wrong.
        document: the item's document.
        claims: the claims the item brings (a RAG item's answer); none for a
            checker that finds its claims in the document (:class:`FindsClaims`).
        labels: the labels the item carries (a benchmark's).
    """

    read: Callable[[Any], Any]
    document: Callable[[Any], Document]
    claims: Callable[[Any], Sequence[Claim]] = _nothing
    labels: Callable[[Any], Sequence[Label]] = _nothing


class TakesItems(Protocol):
    """A checker whose inputs come as items, one JSONL line each (a RAG
    item, a prompt with its response and samples) rather than as documents
    and claims apart: the web app imports a line as its ``item_format``
    says."""

    item_format: ClassVar[ItemFormat]
