"""Agent mode of the citation check against the fake OpenAI-compatible
server (real client): the agent settles what the checks left unverifiable,
repeats are answered from the cache, and the budget or an LLM failure ends
an episode without settling anything."""

import json

import pytest

from pipeline.checkers.citations import (
    CaseLaw,
    Coverage,
    LocalStore,
    check_citations,
    find_citations,
)
from pipeline.checkers.citations.agent import AGENT_CHECK, settle_with_agent
from pipeline.checkers.citations.checks import Check
from pipeline.checkers.citations.sources import opinion_from_json
from pipeline.cli import main
from pipeline.llm import LLMConfig, Usage, make_client

DOE_TEXT = (
    "Opinion of the Court. The question is whether the statute reaches private"
    " suits. *12 We hold that the statute does not create a private right of"
    " action. *13 The text says “only the Secretary” may enforce it. *14"
    " Accordingly, the judgment of the Court of Appeals is reversed."
)
POE_TEXT = (
    "Opinion. Contracts signed on Sunday are enforceable in this State. Nothing"
    " in the statute of frauds says otherwise, and the parties may sue on them."
)
OPINIONS = [
    {
        "id": "doe",
        "case_name": "Doe v. Roe",
        "citations": ["5 U.S. 11"],
        "text": DOE_TEXT,
        "pages": [
            {"page": p, "offset": DOE_TEXT.index(f"*{p}")} for p in ("12", "13", "14")
        ],
    },
    {
        "id": "poe",
        "case_name": "Poe v. Moe",
        "citations": ["5 U.S. 20"],
        "text": POE_TEXT,
        "pages": [],
    },
]
# Doe is verified (its quotation is in the opinion); Poe is unverifiable:
# no scorer reads the proposition it is cited for.
BRIEF = (
    "“We hold that the statute does not create a private right of action.”"
    " Doe v. Roe, 5 U.S. 11, 12 (1990). Contracts signed on Sunday are void."
    " Poe v. Moe, 5 U.S. 20 (1990)."
)
NOTE = "Poe holds Sunday contracts enforceable, not void."


class CountingStore(LocalStore):
    """The local store, counting its lookups."""

    lookups = 0

    def lookup(self, citations):
        self.lookups += 1
        return super().lookup(citations)


@pytest.fixture
def store():
    return CountingStore(opinion_from_json(o) for o in OPINIONS)


@pytest.fixture
def caselaw(store):
    return CaseLaw([store], coverage=Coverage.parse("U.S.:1-4"))


@pytest.fixture
def checked(caselaw):
    results = check_citations(find_citations(BRIEF, brief_id="b"), caselaw)
    assert [r.status for r in results] == ["verified", "unverifiable"]
    return results


def act(tool, belief=(), **args):
    """One scripted step: the beliefs stated and an action."""
    every = {"citation": None, "case_id": None, "query": None, "start": None}
    return {"belief": list(belief), "action": {"tool": tool, "args": every | args}}


def belief(status, kind=None, *, confidence=0.8, note=NOTE, evidence=None):
    return {
        "citation": 0,
        "status": status,
        "kind": kind,
        "confidence": confidence,
        "note": note,
        "evidence": evidence,
    }


def settle(fake, caselaw, results, **options):
    config = LLMConfig(base_url=fake.base_url, model="fake-model", max_retries=0)
    return settle_with_agent(
        results,
        caselaw,
        client=make_client(config),
        config=config,
        briefs={"b": BRIEF},
        **options,
    )


def told(fake, request):
    """The last message of the ``request``-th request: what the agent was
    told before that step."""
    return fake.bodies[request]["messages"][-1]["content"]


def test_agent_settles_a_citation_as_hallucinated_after_lookup_and_search(
    fake_openai, caselaw, checked
):
    fake_openai.reply_json(act("lookup", citation="5 U.S. 20"))
    query = "Contracts signed on Sunday are void"
    fake_openai.reply_json(act("search_opinion", case_id="poe", query=query))
    # E1 is Poe's record, E2 the text closest to the query, E3 the best passage.
    fake_openai.reply_json(
        act(
            "finish",
            [belief("hallucinated", "proposition_not_supported", evidence="E3")],
        )
    )

    report = settle(fake_openai, caselaw, checked)

    doe, poe = report.results
    assert doe is checked[0]
    assert (poe.status, poe.problems, poe.score) == (
        "hallucinated",
        ("proposition_not_supported",),
        0.8,
    )
    agent = poe.checks[-1]
    assert (agent.name, agent.passed, agent.problem, agent.detail) == (
        AGENT_CHECK,
        False,
        "proposition_not_supported",
        NOTE,
    )
    assert poe.evidence == agent.evidence
    assert (poe.evidence.source, poe.evidence.start) == ("poe", 0)
    assert "Sunday are enforceable" in poe.evidence.text
    [episode] = report.episodes
    assert [s.tool for s in episode.steps] == ["lookup", "search_opinion", "finish"]
    assert (episode.finished, episode.error) == (True, None)
    assert episode.citations == (poe.citation.id,)
    assert report.steps == 3
    assert report.usage == Usage(prompt_tokens=30, completion_tokens=15, requests=3)
    task = told(fake_openai, 0)
    assert "[0] Poe v. Moe, 5 U.S. 20" in task
    assert "\n[1]" not in task  # Doe, verified, is not the agent's to settle
    assert "[E1] Poe v. Moe, 5 U.S. 20" in told(fake_openai, 1)
    assert "[E3] (0-" in told(fake_openai, 2)


def test_a_repeated_lookup_is_answered_from_the_cache(
    fake_openai, caselaw, checked, store
):
    fake_openai.reply_json(act("lookup", citation="5 U.S. 20"))
    fake_openai.reply_json(act("lookup", citation="5 U. S. 20, 21"))  # the same
    fake_openai.reply_json(act("finish", [belief("verified", confidence=0.9)]))
    store.lookups = 0

    report = settle(fake_openai, caselaw, checked)

    assert store.lookups == 1
    first, repeat, _ = report.episodes[0].steps
    assert (first.cached, repeat.cached) == (False, True)
    assert told(fake_openai, 2).startswith("Step 2: ")
    assert "You already ran this at step 1" in told(fake_openai, 2)
    poe = report.results[1]
    assert (poe.status, poe.problems, poe.score) == ("verified", (), 0.1)
    assert poe.checks[-1].passed is True


def test_unknown_tools_and_bad_arguments_get_an_error_and_cost_a_step(
    fake_openai, caselaw, checked
):
    fake_openai.reply_json(act("web_search", query="Poe v. Moe"))
    fake_openai.reply_json(act("search_opinion", query="Sunday"))
    fake_openai.reply_json(act("open_opinion", case_id="nobody"))
    fake_openai.reply_json(act("finish"))

    report = settle(fake_openai, caselaw, checked)

    errors = [s.error for s in report.episodes[0].steps]
    assert errors[0].startswith("there is no tool 'web_search'")
    assert errors[1:] == [
        "search_opinion needs case_id",
        "no case_id 'nobody' is known; look its citation up",
        None,
    ]
    assert "Error: there is no tool" in told(fake_openai, 1)
    assert report.results == checked


def test_open_opinion_shows_a_window_with_its_page_markers(fake_openai, caselaw):
    text = "The statute gives no private remedy. Doe v. Roe, 5 U.S. 11, 13 (1990)."
    results = check_citations(find_citations(text, brief_id="b"), caselaw)
    assert [r.status for r in results] == ["unverifiable"]
    fake_openai.reply_json(act("open_opinion", case_id="doe", start=90))
    fake_openai.reply_json(act("finish"))

    settle(fake_openai, caselaw, results)

    shown = told(fake_openai, 1)
    assert "Pages: starts on star page 12; star page 13 begins at" in shown
    assert f"star page 13 begins at {DOE_TEXT.index('*13')}" in shown
    assert DOE_TEXT[90:] in shown


def test_the_step_budget_ends_an_episode_that_never_finishes(
    fake_openai, caselaw, checked
):
    fake_openai.reply_json(act("lookup", citation="5 U.S. 20"))
    fake_openai.reply_json(act("search_opinion", case_id="poe", query="Sunday"))

    report = settle(fake_openai, caselaw, checked, max_steps=2)

    [episode] = report.episodes
    assert (len(episode.steps), episode.finished, episode.error) == (2, False, None)
    assert len(fake_openai.bodies) == 2
    assert "This is your last step: finish." in told(fake_openai, 1)
    assert report.results == checked  # still pending: still unverifiable


def test_an_llm_failure_leaves_the_citations_unverifiable(
    fake_openai, caselaw, checked
):
    hallucinated = belief("hallucinated", "no_such_case")
    fake_openai.reply_json(act("lookup", [hallucinated], citation="5 U.S. 20"))
    fake_openai.reply_status(500, message="model crashed")

    report = settle(fake_openai, caselaw, checked)

    assert report.results == checked  # the belief before the failure is dropped
    [episode] = report.episodes
    assert "HTTP 500" in episode.error and "model crashed" in episode.error
    assert (len(episode.steps), episode.finished) == (1, False)
    assert episode.usage.requests == 1


def test_nothing_unverifiable_means_no_request(fake_openai, caselaw, checked):
    results = checked[:1]

    report = settle(fake_openai, caselaw, results)

    assert report.results == results
    assert (report.episodes, report.steps) == ([], 0)
    assert fake_openai.requests == []


def test_a_pending_citation_keeps_the_agents_note(fake_openai, caselaw, checked):
    note = "Poe is held, but nothing in it speaks to void contracts."
    fake_openai.reply_json(act("finish", [belief("pending", note=note)]))

    poe = settle(fake_openai, caselaw, checked).results[1]

    assert poe.status == "unverifiable"
    assert poe.checks[-1] == Check(AGENT_CHECK, None, detail=note)


@pytest.fixture
def cli_files(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    store = tmp_path / "caselaw.jsonl"
    store.write_text("".join(json.dumps(o) + "\n" for o in OPINIONS))
    briefs = tmp_path / "briefs.jsonl"
    briefs.write_text(json.dumps({"id": "b", "text": BRIEF}) + "\n")
    return briefs, store, tmp_path / "out.jsonl"


def cite_check_with_agent(fake, briefs, store, out):
    return main(
        ["cite-check", "--briefs", str(briefs), "--caselaw", str(store),
         "--out", str(out), "--agent", "fake-model",
         "--base-url", fake.base_url, "--max-retries", "0"]
    )  # fmt: skip


def test_cli_agent_settles_before_writing(fake_openai, cli_files, capsys):
    briefs, store, out = cli_files
    fake_openai.reply_json(act("search_opinion", case_id="poe", query="void"))
    fake_openai.reply_json(
        act(
            "finish",
            [belief("hallucinated", "proposition_not_supported", evidence="E2")],
        )
    )

    assert cite_check_with_agent(fake_openai, briefs, store, out) == 0

    assert json.loads(capsys.readouterr().out) == {
        "briefs": 1,
        "citations": 2,
        "verified": 1,
        "hallucinated": 1,
        "unverifiable": 0,
        "agent_steps": 2,
    }
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(x["status"], x["problems"]) for x in lines] == [
        ("verified", []),
        ("hallucinated", ["proposition_not_supported"]),
    ]
    assert lines[1]["checks"][-1] == {"name": "agent", "passed": False, "detail": NOTE}
    assert fake_openai.bodies[0]["model"] == "fake-model"


def test_cli_reports_a_failed_episode(fake_openai, cli_files, capsys):
    briefs, store, out = cli_files
    fake_openai.reply_status(500)

    assert cite_check_with_agent(fake_openai, briefs, store, out) == 1

    captured = capsys.readouterr()
    assert "agent failed for brief 'b': HTTP 500" in captured.err
    assert json.loads(captured.out)["unverifiable"] == 1
