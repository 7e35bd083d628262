"""Agent mode: an LLM investigates the citations the checks leave unverifiable.

LePhantomCite's agent (Section 3.3, after Zheng et al.'s BOED framework)
keeps an explicit belief about every citation (pending, verified or
hallucinated) and picks one information-gathering action per step. Here the
code, not the model, holds that belief: each step the model states what it
now believes and one tool call; the code keeps the belief, runs the tool and
shows both back. The belief at the end is the answer, so a citation the
agent could not settle stays unverifiable.

Two failures of the paper's agent are designed out. Duplicate lookups and
opinion searches appeared in a third of its episodes: a repeated action is
not re-run, the model is told it already has the result, and the repeat
still costs a step, so the budget (the paper's 30 steps per excerpt) ends a
loop. And a failed call never sinks the check: an :class:`~pipeline.llm.LLMError`
ends that brief's episode with its citations left as the checks found them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from ...errors import PipelineError
from ...llm import Client, LLMConfig, LLMError, Usage, chat_json
from .checks import PROBLEMS, CaseLaw, Check, CitationResult, Span
from .quotes import find_quote
from .reporters import citation_key
from .sources import CaseRecord, Opinion, PageMarker

#: Steps per episode: the paper's budget for an excerpt of up to 18 citations.
DEFAULT_MAX_STEPS = 30
#: The check a settled citation gets.
AGENT_CHECK = "agent"
# A tool's result is cut to this many characters: enough for a few passages,
# short enough that thirty steps fit a small model's context.
_MAX_OBSERVATION_CHARS = 3000
# Characters of an opinion one open_opinion shows.
_WINDOW_CHARS = 2500
# Characters of the brief shown before each citation (its proposition).
_CONTEXT_CHARS = 300
# Passages search_opinion returns besides the verbatim match.
_PASSAGES = 3
_STATUSES = ("pending", "verified", "hallucinated")
# Each tool's required arguments; "start" is open_opinion's optional one.
_TOOLS = {
    "lookup": ("citation",),
    "open_opinion": ("case_id",),
    "search_opinion": ("case_id", "query"),
    "finish": (),
}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


# The tool name is a free string, not an enum, so that an unknown tool is
# answered with an error message (one step spent) rather than ending the
# episode when the answer cannot be repaired.
STEP_SCHEMA = _object(
    {
        "belief": {
            "type": "array",
            "items": _object(
                {
                    "citation": {"type": "integer"},
                    "status": {"type": "string", "enum": list(_STATUSES)},
                    "kind": _nullable({"type": "string", "enum": list(PROBLEMS)}),
                    "confidence": {"type": "number"},
                    "note": {"type": "string"},
                    "evidence": _nullable({"type": "string"}),
                }
            ),
        },
        "action": _object(
            {
                "tool": {"type": "string", "description": " | ".join(_TOOLS)},
                "args": _object(
                    {
                        "citation": _nullable({"type": "string"}),
                        "case_id": _nullable({"type": "string"}),
                        "query": _nullable({"type": "string"}),
                        "start": _nullable({"type": "integer"}),
                    }
                ),
            }
        ),
    }
)

# The paper's Appendix A5 action-selection prompt, cut to this harness's
# tools; its separate belief-update call is folded into the same answer.
AGENT_PROMPT = """\
You verify legal citations in a brief that automatic checks could not settle.
You use Bayesian optimal experimental design: keep a belief about each
citation and, each step, choose the ONE action whose result will most reduce
your uncertainty about which citations are hallucinated.

A citation is hallucinated when (its kind):
- no_such_case: no case is reported at its volume, reporter and first page;
- case_name_mismatch: the case reported there has another name;
- pincite_out_of_range: the pinpoint page is not a page of the opinion, or not
  the page its quotation is on;
- quote_not_found: a quotation it is given for is not in the opinion
  (ellipses and bracketed alterations are allowed, any other changed word
  is not);
- proposition_not_supported: the opinion does not hold what the brief cites
  it for.
If the case does not exist or its name does not match, the citation is
hallucinated and its quotations and proposition need no checking.
Absence from these sources is not absence from the law: a citation no lookup
finds stays pending unless the sources hold every case of its volume.

Tools (arguments a tool does not take are null):
- lookup(citation): the cases the sources list at a reporter citation, e.g.
  "561 U.S. 593" (volume, reporter and first page; no pincite).
- open_opinion(case_id, start): read a case's opinion from character offset
  start (null: the beginning); page markers are noted.
- search_opinion(case_id, query): look for query verbatim in the opinion
  (search a quotation's own words, without bracketed words and ellipses) and
  show the passages sharing most words with it (use it for a proposition).
- finish: stop; every citation is settled or nothing more can be learned.
Tool results label evidence [E1], [E2], ...; give the label a verdict rests on.
Repeating an action gives nothing new and still costs a step.

Answer each step with JSON:
- "belief": your belief about each citation you have news about: "citation"
  (its number), "status" (pending, verified or hallucinated), "kind" (the
  problem when hallucinated, else null), "confidence" (0 to 1, in that
  status), "note" (one short sentence: why), "evidence" (a label or null).
  Citations you leave out keep their belief. When you finish or run out of
  steps, your beliefs are the answer; a pending citation stays unverified.
- "action": {"tool": name, "args": {"citation", "case_id", "query", "start"}}.
"""


@dataclass(frozen=True)
class _Belief:
    """What the agent holds about one citation."""

    status: Literal["pending", "verified", "hallucinated"] = "pending"
    kind: str | None = None
    confidence: float = 0.0
    note: str = ""
    evidence: str | None = None


@dataclass(frozen=True)
class AgentStep:
    """One action: ``cached`` when it repeated an earlier one and was not
    re-run; ``error`` is what the model was told when the action was
    unusable (unknown tool, bad arguments, a failing source)."""

    step: int
    tool: str
    args: dict[str, Any]
    usage: Usage
    cached: bool = False
    error: str | None = None


@dataclass(frozen=True)
class Episode:
    """The agent's run over one brief's unverifiable citations (their ids
    in ``citations``). ``finished`` is False when the budget ended it or
    ``error`` (an LLM failure, which left the citations unverifiable)."""

    brief_id: str
    citations: tuple[str, ...]
    steps: tuple[AgentStep, ...]
    finished: bool
    usage: Usage
    error: str | None = None


@dataclass(frozen=True)
class AgentReport:
    """The results, unverifiable ones settled where the agent could, and
    the episodes that produced them, for the caller to log."""

    results: list[CitationResult]
    episodes: list[Episode]

    @property
    def steps(self) -> int:
        return sum(len(e.steps) for e in self.episodes)

    @property
    def usage(self) -> Usage:
        return sum((e.usage for e in self.episodes), Usage())


def settle_with_agent(
    results: Sequence[CitationResult],
    caselaw: CaseLaw,
    *,
    client: Client,
    config: LLMConfig,
    briefs: Mapping[str, str] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> AgentReport:
    """Let the agent investigate each brief's unverifiable citations.

    One episode per brief that has any; verified and hallucinated results
    are never shown to it, and with nothing unverifiable no call is made.

    Args:
        results: from :func:`~.checks.check_citations`, any number of briefs.
        caselaw: the sources the checks used; the agent's tools read them.
        client: from :func:`~pipeline.llm.make_client`.
        config: the model and request settings.
        briefs: each brief's text by id, for the passage around each
            citation; without it the agent sees the citations alone.
        max_steps: actions per episode; a repeated or unusable action
            counts too.

    Returns:
        The results in order (only unverifiable ones changed: settled ones
        verified or hallucinated with an ``agent`` check, pending ones with
        the agent's note) and the episodes.

    Raises:
        ValueError: ``max_steps`` is below 1.
    """
    if max_steps < 1:
        raise ValueError("max_steps must be at least 1")
    out = list(results)
    pending: dict[str, list[int]] = {}
    for i, r in enumerate(out):
        if r.status == "unverifiable":
            pending.setdefault(r.citation.brief_id, []).append(i)
    episodes = []
    for brief_id, indices in pending.items():
        run = _Episode(
            [out[i] for i in indices],
            caselaw,
            client=client,
            config=config,
            brief_text=(briefs or {}).get(brief_id),
            max_steps=max_steps,
        )
        episode = run.run()
        episodes.append(episode)
        if episode.error is None:
            for i, settled in zip(indices, run.settled(), strict=True):
                out[i] = settled
    return AgentReport(out, episodes)


def _apply(
    r: CitationResult, belief: _Belief, found: Mapping[str, _Found]
) -> CitationResult:
    """The result with the agent's final belief: settled, or still
    unverifiable with its note as a check not made."""
    if belief.status == "pending":
        if not belief.note:
            return r
        return replace(
            r, checks=(*r.checks, Check(AGENT_CHECK, None, detail=belief.note))
        )
    evidence = found.get(belief.evidence or "")
    span = evidence.span if evidence else None
    hallucinated = belief.status == "hallucinated"
    kind = belief.kind if hallucinated else None
    check = Check(
        AGENT_CHECK, not hallucinated, kind, evidence=span, detail=belief.note
    )
    return replace(
        r,
        status=belief.status,
        problems=(kind,) if kind else (),
        matched=r.matched or (evidence.record if evidence else None),
        checks=(*r.checks, check),
        score=round(belief.confidence if hallucinated else 1 - belief.confidence, 4),
        evidence=span or r.evidence,
    )


@dataclass(frozen=True)
class _Found:
    """A piece of evidence a tool showed, and the case it is from."""

    span: Span
    record: CaseRecord


class _Tools:
    """The agent's tools over the case law, with the evidence they showed
    (by label) and their results (by normalised action) so that a repeat
    is not re-run."""

    def __init__(self, caselaw: CaseLaw, records: Sequence[CaseRecord]):
        self.caselaw = caselaw
        self.records = {r.id: r for r in records}
        self.found: dict[str, _Found] = {}
        self._done: dict[tuple[Any, ...], int] = {}
        self._run: dict[str, Callable[[dict[str, Any]], str]] = {
            "lookup": self._lookup,
            "open_opinion": self._open,
            "search_opinion": self._search,
        }

    def run(self, tool: str, args: dict[str, Any], step: int) -> tuple[str, bool]:
        """What the tool shows for ``args`` and whether it was a repeat.

        Raises:
            _Unusable: an unknown tool, bad arguments or a failing source;
                its message is for the model.
        """
        if tool not in self._run:
            raise _Unusable(
                f"there is no tool {tool!r}; use one of {', '.join(_TOOLS)}"
            )
        missing = [a for a in _TOOLS[tool] if not str(args.get(a) or "").strip()]
        if missing:
            raise _Unusable(f"{tool} needs {', '.join(missing)}")
        key = self._key(tool, args)
        if key in self._done:
            return (
                f"You already ran this at step {self._done[key]}; its result is"
                " above. Repeating it finds nothing new: use that result, or settle"
                " the citation (pending if nothing more can be learned).",
                True,
            )
        try:
            observation = self._run[tool](args)
        except PipelineError as e:
            raise _Unusable(f"{tool} failed: {e}") from e
        self._done[key] = step
        return _truncate(observation), False

    def _key(self, tool: str, args: dict[str, Any]) -> tuple[Any, ...]:
        if tool == "lookup":
            return (tool, citation_key(args["citation"]))
        if tool == "open_opinion":
            return (tool, args["case_id"].strip(), _start(args))
        return (tool, args["case_id"].strip(), " ".join(args["query"].lower().split()))

    def _label(self, span: Span, record: CaseRecord) -> str:
        label = f"E{len(self.found) + 1}"
        self.found[label] = _Found(span, record)
        return label

    def _lookup(self, args: dict[str, Any]) -> str:
        key = citation_key(args["citation"])
        records = self.caselaw.lookup([key])[key]
        if not records:
            return f"No case in the sources at {key}. {self._coverage(key)}"
        lines = [f"Cases at {key}:"]
        for r in records:
            self.records[r.id] = r
            cites = ", ".join(r.citations[:3])
            label = self._label(Span(r.id, None, None, f"{r.case_name}, {cites}"), r)
            text = "has text" if r.has_text else "no text held"
            lines.append(
                f"[{label}] {r.case_name}, {cites} ({r.court or 'court unknown'},"
                f" {r.date or 'date unknown'}); case_id {r.id!r}, {text}"
            )
        return "\n".join(lines)

    def _coverage(self, key: str) -> str:
        volume, _, rest = key.partition(" ")
        reporter = rest.rpartition(" ")[0]
        if reporter and self.caselaw.coverage.covers(reporter, volume):
            return f"The sources hold every case of {volume} {reporter}."
        return "The sources do not hold every case of that volume."

    def _opinion(self, case_id: str) -> tuple[CaseRecord, Opinion]:
        record = self.records.get(case_id.strip())
        if record is None:
            raise _Unusable(f"no case_id {case_id!r} is known; look its citation up")
        opinion = self.caselaw.opinion(record) if record.has_text else None
        if opinion is None:
            raise _Unusable(f"the sources hold no text of {record.case_name}")
        return record, opinion

    def _open(self, args: dict[str, Any]) -> str:
        record, opinion = self._opinion(args["case_id"])
        start = _start(args)
        if start >= len(opinion.text):
            raise _Unusable(f"start is past the end ({len(opinion.text)} characters)")
        end = min(len(opinion.text), start + _WINDOW_CHARS)
        text = opinion.text[start:end]
        label = self._label(Span(opinion.id, start, end, text), record)
        more = f"; continue with start={end}" if end < len(opinion.text) else ""
        return (
            f"[{label}] {opinion.case_name}, characters {start}-{end} of"
            f" {len(opinion.text)}{more}.\n{_page_notes(opinion, start, end)}\n{text}"
        )

    def _search(self, args: dict[str, Any]) -> str:
        record, opinion = self._opinion(args["case_id"])
        query = args["query"].strip()
        m = find_quote(self.caselaw.words(opinion), query)
        if m.start is None or m.end is None:
            lines = ["Verbatim: the query has no words to search."]
        else:
            span = Span(opinion.id, m.start, m.end, opinion.text[m.start : m.end])
            found = "found verbatim" if m.exact else "NOT found verbatim; closest"
            lines = [
                f"[{self._label(span, record)}] {found} at {m.start}-{m.end}"
                f"{_on_pages(opinion, m.start)}: {span.text!r}"
            ]
        lines.append("Passages sharing most words with the query:")
        for p in self.caselaw.passages(opinion).best(query, k=_PASSAGES):
            source = f"{opinion.id}#syllabus" if p.in_syllabus else opinion.id
            label = self._label(Span(source, p.start, p.end, p.text), record)
            where = "syllabus" if p.in_syllabus else f"{p.start}-{p.end}"
            page = "" if p.start is None else _on_pages(opinion, p.start)
            lines.append(f"[{label}] ({where}{page}) {p.text}")
        return "\n".join(lines)


def _start(args: Mapping[str, Any]) -> int:
    return max(0, args.get("start") or 0)


class _Unusable(Exception):
    """An action the tools cannot run; the message tells the model why."""


def _page_notes(opinion: Opinion, start: int, end: int) -> str:
    """The pages the window starts on and the page markers inside it."""
    notes = [f"starts{_on_pages(opinion, start)}"] if _pages_at(opinion, start) else []
    notes += [
        f"{_marker_name(m)} begins at {m.offset}"
        for m in opinion.pages
        if start <= m.offset < end
    ] or ["no page marker inside"]
    return "Pages: " + "; ".join(notes) + "."


def _pages_at(opinion: Opinion, offset: int) -> list[PageMarker]:
    """The page of each pagination (star pages of each reporter, slip
    pages of each part) that the text at ``offset`` lies on."""
    last: dict[tuple[Any, ...], PageMarker] = {}
    for m in opinion.pages:
        if m.offset > offset:
            break
        last[(m.scheme, m.reporter, m.volume, m.part)] = m
    return list(last.values())


def _on_pages(opinion: Opinion, offset: int) -> str:
    pages = _pages_at(opinion, offset)
    return (" on " + " / ".join(map(_marker_name, pages))) if pages else ""


def _marker_name(m: PageMarker) -> str:
    where = f" of {m.volume} {m.reporter}" if m.reporter else ""
    kind = "slip op. page" if m.scheme == "slip_op" else f"{m.scheme} page"
    return f"{kind} {m.page}{where}"


def _truncate(text: str) -> str:
    if len(text) <= _MAX_OBSERVATION_CHARS:
        return text
    return text[:_MAX_OBSERVATION_CHARS] + "\n[... truncated]"


class _Episode:
    """One brief's conversation: the beliefs, the tools, the steps."""

    def __init__(
        self,
        results: Sequence[CitationResult],
        caselaw: CaseLaw,
        *,
        client: Client,
        config: LLMConfig,
        brief_text: str | None,
        max_steps: int,
    ):
        self.results = results
        self.client = client
        self.config = config
        self.max_steps = max_steps
        self.beliefs = [_Belief() for _ in results]
        self.tools = _Tools(caselaw, [r.matched for r in results if r.matched])
        self.messages: list[dict[str, str]] = [
            {"role": "system", "content": AGENT_PROMPT},
            {"role": "user", "content": self._task(caselaw, brief_text)},
        ]

    def run(self) -> Episode:
        """Step until the model finishes, the budget is spent or a call
        fails."""
        steps: list[AgentStep] = []
        usage = Usage()
        for step in range(1, self.max_steps + 1):
            try:
                answer, spent = chat_json(
                    self.client,
                    self.config,
                    self.messages,
                    STEP_SCHEMA,
                    name="citation_agent_step",
                )
            except LLMError as e:
                return self._episode(steps, usage + e.usage, error=str(e))
            usage += spent
            steps.append(self._step(step, answer, spent))
            if steps[-1].tool == "finish":
                return self._episode(steps, usage, finished=True)
        return self._episode(steps, usage)

    def _step(self, step: int, answer: Mapping[str, Any], spent: Usage) -> AgentStep:
        """Keep the stated beliefs, run the action and show the model both."""
        rejected = self._believe(answer["belief"])
        tool = str(answer["action"]["tool"]).strip()
        args = {k: v for k, v in answer["action"]["args"].items() if v is not None}
        if tool == "finish":
            return AgentStep(step, tool, args, spent)
        observation, taken = self._act(tool, args, step, spent)
        shown = self._observe(taken, observation, rejected, left=self.max_steps - step)
        self.messages += [
            {"role": "assistant", "content": json.dumps(answer)},
            {"role": "user", "content": shown},
        ]
        return taken

    def _episode(
        self,
        steps: list[AgentStep],
        usage: Usage,
        *,
        finished: bool = False,
        error: str | None = None,
    ) -> Episode:
        return Episode(
            brief_id=self.results[0].citation.brief_id,
            citations=tuple(r.citation.id for r in self.results),
            steps=tuple(steps),
            finished=finished,
            usage=usage,
            error=error,
        )

    def settled(self) -> list[CitationResult]:
        """The results with the final beliefs applied."""
        return [
            _apply(r, b, self.tools.found)
            for r, b in zip(self.results, self.beliefs, strict=True)
        ]

    def _act(
        self, tool: str, args: dict[str, Any], step: int, spent: Usage
    ) -> tuple[str, AgentStep]:
        try:
            observation, cached = self.tools.run(tool, args, step)
        except _Unusable as e:
            return f"Error: {e}.", AgentStep(step, tool, args, spent, error=str(e))
        return observation, AgentStep(step, tool, args, spent, cached=cached)

    def _believe(self, items: Sequence[Mapping[str, Any]]) -> list[str]:
        """Keep the stated beliefs; what could not be kept, for the model."""
        rejected = []
        for item in items:
            n = item["citation"]
            if not 0 <= n < len(self.beliefs):
                rejected.append(f"there is no citation {n}")
                continue
            if item["status"] == "hallucinated" and item["kind"] not in PROBLEMS:
                rejected.append(f"citation {n}: a hallucinated citation needs a kind")
                continue
            evidence = item["evidence"]
            if evidence is not None and evidence not in self.tools.found:
                rejected.append(f"citation {n}: no evidence is labelled {evidence!r}")
                evidence = None
            self.beliefs[n] = _Belief(
                status=item["status"],
                kind=item["kind"] if item["status"] == "hallucinated" else None,
                confidence=min(1.0, max(0.0, float(item["confidence"]))),
                note=item["note"].strip(),
                evidence=evidence,
            )
        return rejected

    def _belief_text(self) -> str:
        return json.dumps(
            [{"citation": n, **asdict(b)} for n, b in enumerate(self.beliefs)],
            ensure_ascii=False,
        )

    def _observe(
        self, step: AgentStep, observation: str, rejected: list[str], *, left: int
    ) -> str:
        call = json.dumps({"tool": step.tool, "args": step.args}, ensure_ascii=False)
        parts = [f"Step {step.step}: {call}\nResult:\n{observation}"]
        if rejected:
            parts.append("Beliefs not kept: " + "; ".join(rejected) + ".")
        parts.append(f"Current beliefs: {self._belief_text()}")
        last = " This is your last step: finish." if left == 1 else ""
        parts.append(f"Steps left: {left}.{last}")
        return "\n\n".join(parts)

    def _task(self, caselaw: CaseLaw, brief_text: str | None) -> str:
        parts = ["Citations to verify:"]
        for n, r in enumerate(self.results):
            parts.append(_describe(n, r, caselaw, brief_text))
        parts.append(f"Current beliefs: {self._belief_text()}")
        parts.append(f"Steps left: {self.max_steps}.")
        return "\n\n".join(parts)


def _describe(n: int, r: CitationResult, caselaw: CaseLaw, brief: str | None) -> str:
    """A citation as the agent first sees it: what it claims, where it
    stands in the brief, and what the checks found."""
    c = r.citation
    lines = [f"[{n}] {c.text}", f"  cited: {c.key or 'no first page'}"]
    if c.case_name:
        lines.append(f"  case name: {c.case_name}")
    if c.pincite:
        lines.append(f"  pincite: {c.pincite.text}")
    lines += [f"  quotation: {q.text!r}" for q in c.quotes]
    if c.proposition:
        lines.append(f"  cited for: {c.proposition!r}")
    if brief:
        before = brief[max(0, c.start - _CONTEXT_CHARS) : c.start].lstrip()
        lines.append(f"  in the brief: ...{before}{brief[c.start : c.end]}")
    if r.matched:
        has = "has text" if r.matched.has_text else "no text held"
        lines.append(
            f"  matched: {r.matched.case_name}, case_id {r.matched.id!r}, {has}"
        )
    if c.key and c.reporter and c.volume:
        covered = caselaw.coverage.covers(c.reporter, c.volume)
        lines.append(
            f"  sources hold every case of its volume: {'yes' if covered else 'no'}"
        )
    made = [
        f"{ch.name} {'passed' if ch.passed else 'not made'}"
        + (f" ({ch.detail})" if ch.detail else "")
        for ch in r.checks
    ]
    lines.append(
        "  automatic checks: " + ("; ".join(made) or "none") + "; the rest unchecked"
    )
    return "\n".join(lines)
