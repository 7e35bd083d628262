"""The LLM grader against the fake OpenAI-compatible server, real client."""

from __future__ import annotations

import pytest

from pipeline.checkers.extraction.grading import GRADER_PROMPT
from pipeline.errors import ScorerError
from pipeline.grader import GRADE_SCHEMA, LLMGrader
from pipeline.grader_prompts import SUPPORT_PROMPT
from pipeline.llm import LLMConfig, LLMError, Usage

SUPPORTS = {"reasoning": "The context names the date.", "label": "SUPPORTS"}
INSUFFICIENT = {"reasoning": "Toronto is not a judge.", "label": "INSUFFICIENT"}


def make_grader(fake, **overrides) -> LLMGrader:
    settings = {
        "base_url": fake.base_url,
        "model": "fake-model",
        "timeout": 5.0,
        "max_retries": 1,
    }
    return LLMGrader(LLMConfig(**(settings | overrides)), prompt=GRADER_PROMPT)


def test_labels_map_to_one_and_zero_in_pair_order(fake_openai):
    fake_openai.reply_json(SUPPORTS)
    fake_openai.reply_json(INSUFFICIENT)
    grader = make_grader(fake_openai)

    scores = grader.score_pairs(
        [
            ("heard on 17 January 2012", "Hearing Date: 2012-01-17"),
            ("in Toronto", "Judge Name: Toronto"),
        ],
        batch_size=1,
    )

    assert scores == [1.0, 0.0]
    assert grader.usage == Usage(prompt_tokens=20, completion_tokens=10, requests=2)


def test_request_sends_prompt_hypothesis_and_context(fake_openai):
    fake_openai.reply_json(SUPPORTS)

    make_grader(fake_openai).grade(
        "heard on 17 January 2012", "Hearing Date: 2012-01-17"
    )

    (body,) = fake_openai.bodies
    system, user = body["messages"]
    assert system == {"role": "system", "content": GRADER_PROMPT.system}
    assert user["content"] == (
        "<extracted_entity>Hearing Date: 2012-01-17</extracted_entity>\n"
        "<context>heard on 17 January 2012</context>"
    )
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "grade", "schema": GRADE_SCHEMA, "strict": True},
    }


def test_grade_returns_label_reasoning_score_and_usage(fake_openai):
    fake_openai.reply_json(INSUFFICIENT, prompt_tokens=100, completion_tokens=20)

    grade = make_grader(fake_openai).grade("in Toronto", "Judge Name: Toronto")

    assert grade.label == "INSUFFICIENT"
    assert grade.reasoning == "Toronto is not a judge."
    assert grade.score == 0.0
    assert grade.usage == Usage(prompt_tokens=100, completion_tokens=20, requests=1)


def test_prompt_asks_for_reasoning_then_a_strict_label():
    assert list(GRADE_SCHEMA["properties"]) == ["reasoning", "label"]
    assert GRADE_SCHEMA["properties"]["label"]["enum"] == ["SUPPORTS", "INSUFFICIENT"]
    assert "Hallucination Detection" in GRADER_PROMPT.system
    for prompt in (GRADER_PROMPT, SUPPORT_PROMPT):
        assert "SUPPORTS or INSUFFICIENT" in prompt.system


def test_each_kind_asks_its_own_question_and_consistency_none(fake_openai):
    from pipeline.checkers import checker_class

    fake_openai.reply_json(SUPPORTS)
    prompt = checker_class("provenance").grader_prompt
    grader = LLMGrader(
        LLMConfig(base_url=fake_openai.base_url, model="m", max_retries=1),
        prompt=prompt,
    )
    grader.grade("The tower is in Paris.", "The tower stands in Paris.")
    system, user = fake_openai.bodies[0]["messages"]
    assert system["content"] == SUPPORT_PROMPT.system
    assert user["content"] == (
        "<claim>The tower stands in Paris.</claim>\n"
        "<evidence>The tower is in Paris.</evidence>"
    )
    assert grader.version != make_grader(fake_openai).version
    assert checker_class("citations").grader_prompt is SUPPORT_PROMPT
    assert checker_class("extraction").grader_prompt is GRADER_PROMPT
    assert checker_class("consistency").grader_prompt is None


def test_scorer_interface(fake_openai):
    grader = make_grader(fake_openai)

    assert grader.name == "llm:fake-model"
    assert grader.threshold == 0.5
    assert grader.score_pairs([]) == []
    assert fake_openai.requests == []


def test_malformed_answer_is_repaired(fake_openai):
    fake_openai.reply_text("SUPPORTS")
    fake_openai.reply_json(SUPPORTS)

    grade = make_grader(fake_openai).grade("jun 14, 25", "Date: 2025-06-14")

    assert grade.score == 1.0
    assert grade.usage.requests == 2
    assert "not valid JSON" in fake_openai.bodies[1]["messages"][-1]["content"]


def test_unusable_answer_after_repair_raises_scorer_error(fake_openai):
    fake_openai.reply_text("SUPPORTS")
    fake_openai.reply_json({"reasoning": "fine", "label": "TRUE"})
    grader = make_grader(fake_openai)

    with pytest.raises(ScorerError, match="is not one of") as raised:
        grader.grade("jun 14, 25", "Date: 2025-06-14")

    assert isinstance(raised.value.__cause__, LLMError)
    assert grader.usage.requests == 2


def test_server_error_raises_scorer_error_naming_the_status(fake_openai):
    fake_openai.reply_status(503, message="overloaded")

    with pytest.raises(ScorerError, match="HTTP 503"):
        make_grader(fake_openai, max_retries=0).score_pairs([("c", "GPE: x")])


def test_rate_limit_is_retried(fake_openai):
    fake_openai.reply_status(429)
    fake_openai.reply_json(SUPPORTS)

    assert make_grader(fake_openai).score_pairs([("in Toronto", "GPE: Toronto")]) == [
        1.0
    ]
    assert len(fake_openai.bodies) == 2


def test_concurrent_scoring_keeps_pair_order(fake_openai):
    def answer(body):
        supported = "Toronto" in body["messages"][1]["content"]
        return SUPPORTS if supported else INSUFFICIENT

    fake_openai.responder = answer
    pairs = [(f"in {city}", f"GPE: {city}") for city in ["Toronto", "Paris"] * 4]

    scores = make_grader(fake_openai).score_pairs(pairs, batch_size=4)

    assert scores == [1.0, 0.0] * 4
    assert len(fake_openai.bodies) == 8
