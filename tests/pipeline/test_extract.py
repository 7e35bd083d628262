"""Extraction against the fake OpenAI-compatible server, with the real client."""

from __future__ import annotations

import itertools

import pytest

from pipeline.checkers.extraction.extract import (
    build_json_schema,
    build_prompt,
    extract_document,
    extract_documents,
    split_document,
)
from pipeline.checkers.extraction.schema import schema_from_dict
from pipeline.llm import LLMConfig, Usage, make_client, schema_error
from pipeline.types import Document

SCHEMA = schema_from_dict(
    {
        "name": "asylex",
        "instructions": "Dates are day-month-year in these documents.",
        "entity_types": {
            "HearingDate": {
                "description": "date of the hearing",
                "fields": {"yyyy": "year", "mm": "month", "dd": "day"},
                "render": "date",
            },
            "HearingType": {"enum": ["In Person", "Virtual"]},
            "GPE": {"display_name": "Geopolitical Entity"},
        },
    }
)

DATE = {
    "type": "HearingDate",
    "value": {"yyyy": "2012", "mm": "01", "dd": "17"},
    "raw": "17 January 2012",
    "context": "heard on 17 January 2012",
}
CITY = {"type": "GPE", "value": "Toronto", "raw": "Toronto", "context": "in Toronto"}
VIRTUAL = {
    "type": "HearingType",
    "value": "Virtual",
    "raw": "by video",
    "context": "held by video conference",
}
TEXT = "The claim was heard on 17 January 2012 in Toronto. It was held by video."


def make_config(fake, **overrides) -> LLMConfig:
    settings = {
        "base_url": fake.base_url,
        "model": "fake-model",
        "api_key": "test-key",
        "timeout": 5.0,
        "max_retries": 1,
    }
    return LLMConfig(**(settings | overrides))


def run(fake, document=None, **overrides):
    config = make_config(fake, **overrides)
    document = document or Document("doc-1", TEXT)
    return extract_document(make_client(config), config, document, SCHEMA)


def test_scripted_answer_becomes_claims(fake_openai):
    fake_openai.reply_json({"entities": [DATE, CITY, VIRTUAL]})

    result = run(fake_openai)

    assert result.error is None
    assert [p.id for p in result.claims] == [
        "doc-1:fake-model:0",
        "doc-1:fake-model:1",
        "doc-1:fake-model:2",
    ]
    date = result.claims[0]
    assert (date.document_id, date.type, date.model) == (
        "doc-1",
        "HearingDate",
        "fake-model",
    )
    assert date.value == {"yyyy": "2012", "mm": "01", "dd": "17"}
    assert date.context == "heard on 17 January 2012"
    assert date.extra == {"raw": "17 January 2012"}
    assert [p.value for p in result.claims[1:]] == ["Toronto", "Virtual"]
    assert result.usage == Usage(prompt_tokens=10, completion_tokens=5, requests=1)


def test_request_carries_prompt_schema_and_document(fake_openai):
    fake_openai.reply_json({"entities": []})

    result = run(fake_openai)

    assert result.ok and result.claims == []
    (body,) = fake_openai.bodies
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0.0
    system, user = body["messages"]
    assert system == {"role": "system", "content": build_prompt(SCHEMA)}
    assert user["role"] == "user" and TEXT in user["content"]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "entities",
            "schema": build_json_schema(SCHEMA),
            "strict": True,
        },
    }
    assert fake_openai.requests[0].headers["authorization"] == "Bearer test-key"


def test_prompt_lists_types_display_names_enums_and_instructions():
    prompt = build_prompt(SCHEMA)

    assert "<role_and_objective>" in prompt and "</notes>" in prompt
    assert "- HearingDate (Hearing Date): date of the hearing" in prompt
    assert "yyyy (year), mm (month), dd (day)" in prompt
    assert 'one of "In Person", "Virtual"' in prompt
    assert "- GPE (Geopolitical Entity)" in prompt
    assert prompt.rstrip().endswith(
        "Dates are day-month-year in these documents.\n</additional_instructions>"
    )


def _objects(node):
    if isinstance(node, dict):
        if node.get("type") == "object":
            yield node
        for child in node.values():
            yield from _objects(child)
    elif isinstance(node, list):
        for child in node:
            yield from _objects(child)


def test_json_schema_is_strict_mode_compatible():
    json_schema = build_json_schema(SCHEMA)

    for obj in _objects(json_schema):
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    branches = json_schema["properties"]["entities"]["items"]["anyOf"]
    assert [b["properties"]["type"]["enum"] for b in branches] == [
        ["HearingDate"],
        ["HearingType"],
        ["GPE"],
    ]
    assert schema_error({"entities": [DATE, CITY, VIRTUAL]}, json_schema) is None
    unnormalised = {**DATE, "value": None}
    assert schema_error({"entities": [unnormalised]}, json_schema) is None
    wrong_enum = {**VIRTUAL, "value": "By Phone"}
    assert "is not one of" in schema_error({"entities": [wrong_enum]}, json_schema)
    date_as_text = {**DATE, "value": "2012-01-17"}
    assert schema_error({"entities": [date_as_text]}, json_schema)


@pytest.mark.parametrize(
    ("bad_answer", "complaint"),
    [
        ('{"entities": [', "not valid JSON"),
        ('{"entities": [{"type": "Judge", "value": "x"}]}', "does not match"),
    ],
)
def test_unusable_answer_is_repaired_by_second_request(
    fake_openai, bad_answer, complaint
):
    fake_openai.reply_text(bad_answer)
    fake_openai.reply_json({"entities": [CITY]}, prompt_tokens=30, completion_tokens=7)

    result = run(fake_openai)

    assert result.ok
    assert [p.value for p in result.claims] == ["Toronto"]
    first, second = fake_openai.bodies
    assert second["messages"][:2] == first["messages"]
    assistant, repair = second["messages"][2:]
    assert assistant == {"role": "assistant", "content": bad_answer}
    assert repair["role"] == "user"
    assert complaint in repair["content"]
    assert "corrected JSON only" in repair["content"]
    assert second["response_format"] == first["response_format"]
    assert result.usage == Usage(prompt_tokens=40, completion_tokens=12, requests=2)


def test_unusable_answer_twice_fails_that_document_only(fake_openai):
    fake_openai.reply_text("not json")
    fake_openai.reply_text("still not json")
    fake_openai.reply_json({"entities": [CITY]})
    config = make_config(fake_openai)
    documents = [Document("bad", TEXT), Document("good", TEXT)]

    results, usage = extract_documents(make_client(config), config, documents, SCHEMA)

    bad, good = results
    assert bad.document_id == "bad" and good.document_id == "good"
    assert bad.claims == []
    assert "still unusable after one repair attempt" in bad.error
    assert "fake-model" in bad.error
    assert bad.usage.requests == 2
    assert good.ok and [p.id for p in good.claims] == ["good:fake-model:0"]
    assert usage == Usage(prompt_tokens=30, completion_tokens=15, requests=3)


def test_rate_limit_is_retried(fake_openai):
    fake_openai.reply_status(429, message="slow down")
    fake_openai.reply_json({"entities": [CITY]})

    result = run(fake_openai)

    assert result.ok and len(result.claims) == 1
    assert len(fake_openai.bodies) == 2
    assert result.usage.requests == 1


def test_timeout_is_retried(fake_openai):
    fake_openai.reply_delay(3.0, {"entities": []})
    fake_openai.reply_json({"entities": [CITY]})

    result = run(fake_openai, timeout=0.5)

    assert result.ok and [p.value for p in result.claims] == ["Toronto"]
    assert len(fake_openai.bodies) == 2


def test_persistent_timeout_fails_the_document(fake_openai):
    fake_openai.reply_delay(3.0)
    fake_openai.reply_delay(3.0)

    result = run(fake_openai, timeout=0.5)

    assert result.claims == []
    assert "timed out after 0.5 s" in result.error
    assert fake_openai.base_url in result.error


def test_persistent_server_error_fails_the_document_naming_the_status(fake_openai):
    fake_openai.reply_status(500, message="model crashed")
    fake_openai.reply_status(500, message="model crashed")
    fake_openai.reply_json({"entities": [CITY]})
    config = make_config(fake_openai)
    documents = [Document("down", TEXT), Document("up", TEXT)]

    (down, up), _ = extract_documents(
        make_client(config), config, documents, SCHEMA, progress=True
    )

    assert down.claims == []
    assert "HTTP 500" in down.error
    assert "model crashed" in down.error
    assert fake_openai.base_url in down.error and "fake-model" in down.error
    assert up.ok and len(up.claims) == 1
    assert fake_openai.pending == 0


def test_long_document_is_split_and_overlap_duplicates_merged(fake_openai):
    first = "The claim was heard on 17 January 2012 in Toronto. " * 3
    shared = "The panel sat in Toronto for the day. "
    last = "The hearing was held by video conference for all parties. " * 2
    text = first + shared + "\n\n" + last
    chunks = split_document(text, max_chars=200, overlap=60)
    assert len(chunks) == 2 and shared in chunks[0] and shared in chunks[1]
    seen_twice = {**CITY, "context": "sat in Toronto"}
    fake_openai.reply_json({"entities": [DATE, seen_twice]})
    fake_openai.reply_json(
        {"entities": [{**seen_twice, "context": "sat  in\ntoronto"}, VIRTUAL]}
    )
    config = make_config(fake_openai)

    result = extract_document(
        make_client(config),
        config,
        Document("long", text),
        SCHEMA,
        max_chars=200,
        overlap=60,
    )

    assert result.ok
    assert [(p.id, p.type) for p in result.claims] == [
        ("long:fake-model:0", "HearingDate"),
        ("long:fake-model:1", "GPE"),
        ("long:fake-model:2", "HearingType"),
    ]
    assert result.claims[1].context == "sat in Toronto"
    bodies = fake_openai.bodies
    assert [b["messages"][1]["content"] for b in bodies] == [
        f'<document part="1 of 2">\n{chunks[0]}\n</document>',
        f'<document part="2 of 2">\n{chunks[1]}\n</document>',
    ]
    assert result.usage == Usage(prompt_tokens=20, completion_tokens=10, requests=2)


def test_same_value_with_another_context_is_kept(fake_openai):
    fake_openai.reply_json({"entities": [CITY, {**CITY, "context": "from Toronto"}]})

    result = run(fake_openai)

    assert [p.context for p in result.claims] == ["in Toronto", "from Toronto"]


def test_split_keeps_short_text_whole():
    assert split_document("One sentence.", max_chars=100, overlap=10) == [
        "One sentence."
    ]


def test_split_breaks_at_sentences_and_overlaps():
    text = " ".join(f"Sentence number {i} ends here." for i in range(40))

    chunks = split_document(text, max_chars=150, overlap=40)

    assert len(chunks) > 1
    assert all(len(c) <= 150 for c in chunks)
    assert all(c.rstrip().endswith(".") for c in chunks)
    assert all(c.startswith("Sentence") for c in chunks)
    position = 0
    for previous, chunk in itertools.pairwise(chunks):
        start = text.index(chunk, position)
        end = text.index(previous, position) + len(previous)
        assert start < end, "neighbouring chunks overlap"
        position = start
    assert text.endswith(chunks[-1])


def test_split_cuts_text_without_spaces_hard():
    chunks = split_document("x" * 250, max_chars=100, overlap=0)

    assert [len(c) for c in chunks] == [100, 100, 50]


def test_split_rejects_overlap_of_half_a_chunk():
    with pytest.raises(ValueError):
        split_document("text", max_chars=100, overlap=50)


def test_config_passes_extra_params_and_a_placeholder_key(fake_openai):
    fake_openai.reply_json({"entities": []})

    run(fake_openai, api_key=None, temperature=None, extra={"max_tokens": 256})

    (body,) = fake_openai.bodies
    assert body["max_tokens"] == 256
    assert "temperature" not in body
    assert fake_openai.requests[0].headers["authorization"] == "Bearer no-key"


def test_json_object_mode_puts_the_schema_in_the_prompt(fake_openai):
    fake_openai.reply_text('```json\n{"entities": []}\n```')

    result = run(fake_openai, json_mode="json_object")

    assert result.ok
    (body,) = fake_openai.bodies
    assert body["response_format"] == {"type": "json_object"}
    assert '"additionalProperties": false' in body["messages"][-1]["content"]


def test_usage_adds_up():
    total = Usage(1, 2, 1) + Usage(3, 4, 1)

    assert total == Usage(prompt_tokens=4, completion_tokens=6, requests=2)
    assert total.total_tokens == 10
