"""FINCH-ZK cross-model consistency: prompts, model configs, the seeded
assignment, judges, scoring, mitigation, the budget, and ``python -m
pipeline consistency`` / ``consistency-evaluate``, every LLM call made by
the real openai client against the fake server."""

import json
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipeline.checkers.consistency import (
    VARIANTS,
    BudgetExceeded,
    CallLedger,
    ConsistencyConfig,
    LLMJudge,
    ModelSpec,
    ModelSpecError,
    NLIJudge,
    UnusableAnswer,
    assign_samples,
    block_label,
    block_score,
    check_items,
    item_from_json,
    read_batch_judgements,
    read_judgement,
    read_spec,
    read_specs,
    rebuild,
    render,
    response_verdict,
    result_to_json,
    sample_item,
    segment_offsets,
    tag_text,
)
from pipeline.checkers.consistency import prompts as P
from pipeline.checkers.consistency.items import Block
from pipeline.cli import main
from tests.scorers import WordOverlapScorer

RESPONSE = (
    "Paris is the capital of France. Paris has 90 million residents. "
    "The Eiffel Tower opened in 1889. Its mayor likes cheese. "
    "Many tourists visit it."
)
SAMPLE_A = (
    "Paris is the capital of France. About 2 million people live in Paris. "
    "The Eiffel Tower opened in 1889."
)
SAMPLE_B = "The capital of France is Paris. Paris has roughly 2 million inhabitants."


def spec(fake, model, **fields):
    return ModelSpec(model=model, base_url=fake.base_url, **fields)


def ledger(specs, **options):
    return CallLedger(specs, timeout=5.0, max_retries=2, **options)


def content(body):
    return body["messages"][0]["content"]


def judge_answer(passage, reference):
    """The fake judge: a verdict per block, the Eiffel one by sample."""
    if "capital" in passage:
        return "<explain>Both name Paris.</explain>\n<answer> Yes </answer>"
    if "90 million" in passage:
        return "<explain>The reference says 2 million.</explain><answer>no</answer>"
    if "Eiffel" in passage:
        word = "yes" if "Eiffel" in reference else "neutral"
        return f"<EXPLAIN>Eiffel.</EXPLAIN><Answer>{word}</Answer>"
    if "mayor" in passage:
        return "<explain>Not covered.</explain><answer>neutral</answer>"
    return "I am not sure what to say."  # malformed: no tags


def between(text, tag):
    return re.search(f"<{tag}>\n(.*?)\n</{tag}>", text, re.DOTALL).group(1)


def responder(body):
    """Answers by model and prompt: concurrent requests come in any order.

    The fake sends the returned string JSON-encoded, quotes and all: tags
    still read, and answers here hold no newline or double quote.
    """
    model, prompt = body["model"], content(body)
    if model == "sampler-a":
        return SAMPLE_A
    if model == "sampler-b":
        return SAMPLE_B
    if prompt.startswith("Given a prompt, rephrase"):
        return "<new>Which city is the capital of France, and what is it like?</new>"
    if prompt.startswith("I have a passage"):
        return judge_answer(between(prompt, "passage"), between(prompt, "reference"))
    if prompt.startswith("I need you to summarize"):
        return "<summary>The population is wrong.</summary>"
    if prompt.startswith("I need you to correct"):
        if "90 million" in between(prompt, "passage"):
            return "<corrected>Paris has about 2 million residents.</corrected>"
        return "I would rather not."  # no tag: the block is kept
    if prompt.startswith("I have a response"):
        return "<explain>Fixed the count.</explain><improved>Better text.</improved>"
    raise AssertionError(f"unexpected request to {model}: {prompt[:60]}")


# -- prompts -----------------------------------------------------------------


def test_prompts_are_the_papers_and_render_fills_each_placeholder_once():
    assert P.JUDGE.startswith("I have a passage that is part of the response")
    assert 'Your answer should be "yes", "no", or "neutral".' in P.JUDGE
    assert "in less than 30 words in <explain> </explain> tags" in P.JUDGE
    assert '[{"id": <passage-id>, "answer": <answer>, "explanation":' in (P.BATCH_JUDGE)
    assert P.REFLECT.endswith(
        "respond with your answer in <improved> </improved> tags."
    )
    assert P.COT_SUFFIX == "Let's think step by step."
    assert P.LONG_ANSWER_PREFIX.startswith("Provide an answer with at least a 1000")
    filled = render(
        P.BATCH_JUDGE, prompt="say {reference}", reference="R", passages="[]"
    )
    assert "<prompt>\nsay {reference}\n</prompt>" in filled
    assert "<reference>\nR\n</reference>" in filled
    assert '[{"id": <passage-id>, "text": <passage-text>}, ...]' in filled
    conflicts = P.conflicts_text([("CONTRADICTION", "x"), ("NEUTRAL", "y")])
    assert conflicts == (
        "<conflict>\nSEVERITY: CONTRADICTION\nx\n</conflict>\n\n"
        "<conflict>\nSEVERITY: NEUTRAL\ny\n</conflict>"
    )
    assert P.contexts_text(["s1", "s2"]).startswith("<context>\nContext 1:\ns1\n")


def test_tags_are_read_whatever_the_case_and_spacing_and_a_missing_one_is_named():
    assert tag_text("<Answer >\n  Yes \n</ ANSWER>", "answer") == "Yes"
    # Instructions quoted before the answer: the last pair counts.
    assert tag_text("in <answer> </answer> tags... <answer>no</answer>", "answer") == (
        "no"
    )
    assert tag_text("<sub-prompts>a\nb</sub-prompts>", "sub-prompts") == "a\nb"
    with pytest.raises(UnusableAnswer, match="no <corrected>"):
        tag_text("<corrected>never closed", "corrected")
    assert read_judgement("<answer>yes</answer>") == ("ACCURATE", "")
    assert read_judgement("<explain>e</explain><answer>No.</answer>") == (
        "CONTRADICTION",
        "e",
    )
    label, evidence = read_judgement("<answer>maybe</answer>")
    assert label == "UNKNOWN" and "'maybe'" in evidence
    assert read_judgement("no tags")[0] == "UNKNOWN"


# -- models and the ledger ---------------------------------------------------


def test_model_configs_parse_inline_or_from_a_file_and_name_bad_fields(tmp_path):
    path = tmp_path / "judge.json"
    path.write_text(
        json.dumps(
            {
                "model": "haiku",
                "base_url": "http://x/v1",
                "api_key_env": "KEY",
                "price_per_mtok_prompt": 0.25,
                "price_per_mtok_completion": 1.25,
                "max_concurrency": 2,
                "max_tokens": 300,
            }
        )
    )
    judge = read_spec(str(path))
    assert (judge.model, judge.max_concurrency, judge.temperature) == ("haiku", 2, 1.0)
    config = judge.llm_config("secret")
    assert config.api_key == "secret" and config.extra == {"max_tokens": 300}
    inline = read_spec('{"model": "m", "base_url": "u", "temperature": null}')
    assert inline.temperature is None and inline.max_tokens is None
    for bad, named in [
        ('{"base_url": "u"}', "'model'"),
        ('{"model": "m", "base_url": "u", "max_concurrency": 0}', "'max_concurrency'"),
        ('{"model": "m", "base_url": "u", "price_per_mtok_prompt": "1"}', "prompt'"),
        ('{"model": "m", "base_url": "u", "tempreature": 1}', "tempreature"),
        (str(tmp_path / "missing.json"), "cannot read"),
    ]:
        with pytest.raises(ModelSpecError, match=named):
            read_spec(bad)
    with pytest.raises(ModelSpecError, match="entry 1: field 'base_url'"):
        read_specs('[{"model": "a", "base_url": "u"}, {"model": "b"}]')
    with pytest.raises(ModelSpecError, match="non-empty JSON list"):
        read_specs("[]")
    with pytest.raises(ModelSpecError, match="needs the key in KEY"):
        CallLedger([judge])
    with pytest.raises(ModelSpecError, match="a budget needs prices"):
        CallLedger([inline], budget_usd=1.0)


def test_each_endpoint_has_at_most_its_max_concurrency_in_flight(fake_openai):
    in_flight, peak, lock = [0], [0], threading.Lock()

    def slow(body):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.05)
        with lock:
            in_flight[0] -= 1
        return "ok"

    fake_openai.responder = slow
    # Two models at one endpoint share its smaller limit.
    a = spec(fake_openai, "a", max_concurrency=2)
    b = spec(fake_openai, "b", max_concurrency=3)
    calls = ledger([a, b])
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda i: calls.chat((a, b)[i % 2], "hi"), range(8)))
    assert answers == ['"ok"'] * 8
    assert peak[0] == 2
    assert calls.tally.usage("a").requests == 4


# -- sampling ----------------------------------------------------------------


def test_assignment_is_seeded_and_cycles_variants_and_models():
    models = ["m1", "m2", "m3", "m4"]
    first = assign_samples(10, variants=VARIANTS, models=models, seed=7)
    assert first == assign_samples(10, variants=VARIANTS, models=models, seed=7)
    rng = random.Random(7)
    variants, shuffled = list(VARIANTS), list(models)
    rng.shuffle(variants)
    rng.shuffle(shuffled)
    assert first == [(variants[i % 7], shuffled[i % 4]) for i in range(10)]
    assert {v for v, _ in first[:7]} == set(VARIANTS)
    assert {m for _, m in first[:4]} == set(models)
    assert first != assign_samples(10, variants=VARIANTS, models=models, seed=8)


def test_llm_variants_are_made_once_per_item_and_an_unusable_one_falls_back(
    fake_openai,
):
    def answer(body):
        prompt = content(body)
        if body["model"] == "sampler":
            return "A sample."
        if prompt.startswith("I need you to add sentences at the beginning"):
            return "<answer>Paris is a city.</answer>"
        if prompt.startswith("I need you to add sentences at the end"):
            return "<answer>  Mention the river. </answer>"
        return "Sub-prompts: what, where."  # break-down without its tag

    fake_openai.responder = answer
    sampler, reformulator = spec(fake_openai, "sampler"), spec(fake_openai, "ref")
    item = item_from_json({"id": "v", "prompt": "Describe Paris.", "response": "R."})
    calls = ledger([sampler, reformulator])
    variants = ("expand_before", "expand_after", "break_down", "long_answer")
    with ThreadPoolExecutor(4) as pool:
        samples = sample_item(
            item,
            samplers=[sampler],
            reformulator=reformulator,
            ledger=calls,
            pool=pool,
            count=8,
            variants=variants,
        )

    assert sorted(s.variant for s in samples) == sorted(variants * 2)
    assert calls.tally.usage("ref").requests == 3  # once per LLM variant
    sent = sorted(content(b) for b in fake_openai.bodies if b["model"] == "sampler")
    assert sent == sorted(
        2
        * [
            "Paris is a city.\n\nDescribe Paris.",
            "Describe Paris.\n\nMention the river.",
            "Describe Paris.",
            f"{P.LONG_ANSWER_PREFIX}\n\nDescribe Paris.",
        ]
    )
    notes = {s.note for s in samples if s.variant == "break_down"}
    assert notes == {
        "break_down: unusable reformulation (no <sub-prompts> </sub-prompts> in "
        "the answer); sent the original prompt"
    }
    assert all(s.note is None for s in samples if s.variant != "break_down")


def test_a_failed_call_fails_its_item_and_the_others_go_on(fake_openai):
    fake_openai.reply_status(400, message="bad request")  # not retried
    fake_openai.responder = responder
    judge = spec(fake_openai, "judge")
    calls = ledger([judge])
    items = [
        item_from_json(
            {
                "id": i,
                "prompt": "P?",
                "response": "Paris is the capital of France.",
                "samples": [SAMPLE_A],
            }
        )
        for i in ("a", "b")
    ]

    report = check_items(items, judge=LLMJudge(judge, calls), workers=1)

    assert report.failures == [
        ("a", f"HTTP 400 from {fake_openai.base_url} (model 'judge'): bad request")
    ]
    assert [r.item.id for r in report.results] == ["b"]
    assert report.stopped is None and report.not_started == []
    with pytest.raises(ValueError, match="another ledger"):
        check_items(items, judge=LLMJudge(judge, calls), ledger=ledger([judge]))


# -- an LLM run --------------------------------------------------------------


def test_run_samples_judges_scores_and_survives_a_429_and_a_bad_answer(fake_openai):
    fake_openai.reply_status(429)  # the first request; the SDK retries it
    fake_openai.responder = responder
    samplers = [spec(fake_openai, "sampler-a"), spec(fake_openai, "sampler-b")]
    judge = spec(fake_openai, "judge", temperature=None, max_concurrency=3)
    calls = ledger([*samplers, judge])
    item = item_from_json(
        {"id": "q1", "prompt": "Tell me about Paris.", "response": RESPONSE}
    )
    config = ConsistencyConfig(samples=4, variants=("identity", "cot", "rephrase"))

    report = check_items(
        [item],
        judge=LLMJudge(judge, calls),
        samplers=samplers,
        ledger=calls,
        config=config,
    )

    assert report.failures == [] and report.stopped is None
    (r,) = report.results
    expected = assign_samples(
        4, variants=config.variants, models=["sampler-a", "sampler-b"], seed="0:q1"
    )
    assert [(s.variant, s.model) for s in r.item.samples] == expected
    assert [b.label for b in r.blocks] == [
        "ACCURATE",
        "CONTRADICTION",
        "ACCURATE",
        "NEUTRAL",
        "UNKNOWN",
    ]
    eiffel = r.blocks[2]
    by_model = {r.item.samples[j.sample].model: j.label for j in eiffel.judgements}
    assert by_model == {"sampler-a": "ACCURATE", "sampler-b": "NEUTRAL"}
    assert eiffel.score == pytest.approx(1 / 6)  # (2*0 + 2*0 + 1*.5 + 1*.5) / 6
    assert r.blocks[1].judgements[0].evidence == "The reference says 2 million."
    unknown = r.blocks[4]
    assert unknown.score is None
    assert all("unusable judge answer" in j.evidence for j in unknown.judgements)
    assert r.label == "NON-FACTUAL"
    assert r.score == pytest.approx((0 + 1 + 1 / 6 + 0.5) / 4)
    # The judge's model summarizes the flagged blocks; nothing is corrected.
    assert [b.summary for b in r.blocks] == [
        None,
        "The population is wrong.",
        None,
        "The population is wrong.",
        None,
    ]
    assert r.corrected is None

    bodies = fake_openai.bodies
    sampled = {content(b) for b in bodies if b["model"].startswith("sampler")}
    prompts = {
        "identity": "Tell me about Paris.",
        "cot": "Tell me about Paris.\n\nLet's think step by step.",
        "rephrase": "Which city is the capital of France, and what is it like?",
    }
    assert sampled == {prompts[v] for v, _ in expected}
    assert all(
        b["temperature"] == 1.0 for b in bodies if b["model"].startswith("sampler")
    )
    assert all("temperature" not in b for b in bodies if b["model"] == "judge")
    rephrasings = sum(content(b).startswith("Given a prompt") for b in bodies)
    assert rephrasings == 2  # once, and once more after the 429
    judged = 5 * 4
    assert calls.tally.usage("judge").requests == 1 + judged + 2
    assert len(bodies) == 1 + 1 + 4 + judged + 2

    line = result_to_json(r)
    assert line["usage"]["models"]["sampler-a"]["requests"] == 2
    assert line["blocks"][1]["judgements"][0] == {
        "sample": 0,
        "label": "CONTRADICTION",
        "evidence": "The reference says 2 million.",
    }
    again = item_from_json(json.loads(json.dumps(line)))
    assert again.samples == r.item.samples and "blocks" not in again.extra


def test_batch_judge_reads_one_json_list_per_sample(fake_openai):
    answer = (
        '<explain>x</explain><output>\n```json\n[{"id": 0, "answer": "yes"}, '
        '{"id": "1", "answer": "no", "explanation": "It is 2 million."}, '
        '{"id": 1, "answer": "yes"}, {"id": 9, "answer": "no"}]\n```\n</output>'
    )
    fake_openai.reply_text(answer)
    fake_openai.reply_text(answer)
    fake_openai.responder = responder  # the summary of the flagged block
    judge = spec(fake_openai, "judge")
    calls = ledger([judge])
    item = item_from_json(
        {
            "id": "b",
            "prompt": "Tell me about Paris.",
            "response": "Paris is the capital of France. Paris has 90 million "
            "residents. Many tourists visit it.",
            "samples": [SAMPLE_A, {"text": SAMPLE_B, "model": "m", "variant": "cot"}],
        }
    )

    report = check_items([item], judge=LLMJudge(judge, calls, batch=True), ledger=calls)

    (r,) = report.results
    assert [b.label for b in r.blocks] == ["ACCURATE", "CONTRADICTION", "UNKNOWN"]
    assert r.blocks[1].judgements[1].evidence == "It is 2 million."
    assert "no entry for this passage" in r.blocks[2].judgements[0].evidence
    first = content(fake_openai.bodies[0])
    passages = json.loads(between(first, "passages"))
    assert [p["id"] for p in passages] == [0, 1, 2]
    assert passages[1]["text"] == "Paris has 90 million residents."
    assert len(fake_openai.bodies) == 2 + 1
    for broken in ("no output tag", "<output>[{'id': 0}]</output>"):
        read = read_batch_judgements(broken, 2)
        assert [label for label, _ in read] == ["UNKNOWN", "UNKNOWN"]
        assert read[0][1].startswith("unusable batch answer")


# -- mitigation --------------------------------------------------------------


def test_mitigation_replaces_only_the_flagged_blocks_byte_for_byte(fake_openai):
    fake_openai.responder = responder
    judge, improver = spec(fake_openai, "judge"), spec(fake_openai, "improver")
    calls = ledger([judge, improver])
    response = (
        "Paris is the capital of France.  Paris has 90 million residents.\n\n"
        "Its mayor likes cheese.\tThe Eiffel Tower opened in 1889."
    )
    item = item_from_json(
        {
            "id": "m",
            "prompt": "Tell me about Paris.",
            "response": response,
            "samples": [SAMPLE_A],
        }
    )

    report = check_items(
        [item],
        judge=LLMJudge(judge, calls),
        improver=improver,
        ledger=calls,
        config=ConsistencyConfig(reflect=True),
    )

    (r,) = report.results
    assert [b.label for b in r.blocks] == [
        "ACCURATE",
        "CONTRADICTION",
        "NEUTRAL",
        "ACCURATE",
    ]
    assert r.corrected == response.replace(
        "Paris has 90 million residents.", "Paris has about 2 million residents."
    )
    assert r.blocks[1].correction == "Paris has about 2 million residents."
    assert r.blocks[2].correction is None  # the improver's answer had no tag
    assert r.notes == (
        "block 2: unusable correction (no <corrected> </corrected> "
        "in the answer); kept",
    )
    assert (r.improved.text, r.improved.explanation) == (
        "Better text.",
        "Fixed the count.",
    )
    correction = next(
        content(b)
        for b in fake_openai.bodies
        if content(b).startswith("I need you to correct") and "90 million" in content(b)
    )
    assert "<summary>\nThe population is wrong.\n</summary>" in correction
    assert (
        "<conflict>\nSEVERITY: CONTRADICTION\nThe reference says 2 million.\n"
        "</conflict>" in correction
    )
    reflection = next(
        content(b) for b in fake_openai.bodies if content(b).startswith("I have a re")
    )
    assert f"<response>\n{r.corrected}\n</response>" in reflection
    assert f"<context>\nContext 1:\n{SAMPLE_A}\n</context>" in reflection
    line = result_to_json(r)
    assert line["corrected"] == r.corrected and "correction" not in line["blocks"][0]


def test_rebuild_keeps_everything_but_the_corrected_blocks():
    text = "A one.  B two.\n\nC three."
    blocks = [
        Block(0, 6, "A one.", (), 0.0, "ACCURATE"),
        Block(8, 14, "B two.", (), 1.0, "CONTRADICTION", correction="B 2."),
        Block(16, 24, "C three.", (), 0.5, "NEUTRAL"),
    ]
    assert rebuild(text, blocks) == "A one.  B 2.\n\nC three."


# -- scoring -----------------------------------------------------------------


def test_block_scores_are_weighted_and_labelled_by_tau():
    assert block_score(["ACCURATE", "ACCURATE", "NEUTRAL"]) == pytest.approx(0.1)
    assert block_score(["ACCURATE", "CONTRADICTION"]) == pytest.approx(4 / 6)
    assert block_score(["CONTRADICTION", "NEUTRAL", "UNKNOWN"]) == pytest.approx(0.9)
    assert block_score(["UNKNOWN", "UNKNOWN"]) is None
    assert block_label(0.33) == "ACCURATE"
    assert block_label(4 / 6) == "NEUTRAL"  # just under 1 - tau
    assert block_label(0.67) == "CONTRADICTION"
    assert block_label(0.5, tau=0.5 - 1e-9) == "NEUTRAL"
    assert block_label(None) == "UNKNOWN"
    assert response_verdict([(0.0, "ACCURATE"), (None, "UNKNOWN")]) == (
        0.0,
        "FACTUAL",
    )
    assert response_verdict([(0.2, "ACCURATE"), (1.0, "CONTRADICTION")]) == (
        0.6,
        "NON-FACTUAL",
    )
    assert response_verdict([(None, "UNKNOWN")]) == (None, "FACTUAL")


# -- the budget --------------------------------------------------------------


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_budget_stops_the_run_before_passing_it_and_keeps_what_finished(
    fake_openai, tmp_path, capsys
):
    fake_openai.responder = responder
    judge = spec(
        fake_openai,
        "judge",
        price_per_mtok_prompt=1.0,
        price_per_mtok_completion=2.0,
        max_tokens=100,
    )
    rows = [
        {
            "id": str(i),
            "prompt": "Tell me about Paris.",
            "response": "Paris is the capital of France.",
            "samples": [SAMPLE_A],
        }
        for i in range(4)
    ]
    # Each item is one judge call: 10 prompt and 5 completion tokens (the
    # fake's usage), priced beforehand at prompt characters / 4 + 100.
    request = render(
        P.JUDGE,
        prompt=rows[0]["prompt"],
        full_response=rows[0]["response"],
        reference=SAMPLE_A,
        passage=rows[0]["response"],
    )
    estimate = CallLedger([judge]).estimate_usd(judge, len(request))
    assert estimate == pytest.approx((len(request) / 4 * 1.0 + 100 * 2.0) / 1e6)
    spent = (10 * 1.0 + 5 * 2.0) / 1e6
    budget = 2 * spent + estimate - 1e-9  # room for two calls, not a third
    items, out = tmp_path / "items.jsonl", tmp_path / "out.jsonl"
    _write(items, rows)

    code = main(
        [
            "consistency",
            "--items",
            str(items),
            "--judge",
            json.dumps(
                {
                    "model": "judge",
                    "base_url": fake_openai.base_url,
                    "price_per_mtok_prompt": 1.0,
                    "price_per_mtok_completion": 2.0,
                    "max_tokens": 100,
                }
            ),
            "--budget",
            repr(budget),
            "--workers",
            "1",
            "--out",
            str(out),
        ]
    )

    assert code == 1
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert (summary["checked"], summary["failed"], summary["not_started"]) == (2, 1, 1)
    assert summary["stopped"].startswith(f"budget of ${budget:g} reached")
    assert summary["usage"]["cost_usd"] == pytest.approx(2 * spent)
    assert summary["usage"]["cost_usd"] <= budget
    assert "consistency failed for item '2': budget of" in captured.err
    assert "1 items not started" in captured.err
    written = [json.loads(line) for line in out.open()]
    assert [w["id"] for w in written] == ["0", "1"]
    assert written[0]["usage"]["models"]["judge"] == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "requests": 1,
        "cost_usd": pytest.approx(spent),
    }
    assert len(fake_openai.bodies) == 2
    assert fake_openai.bodies[0]["max_tokens"] == 100


def test_a_refused_call_is_never_sent_and_every_later_one_is_refused(fake_openai):
    fake_openai.responder = lambda body: "ok"
    dear = spec(
        fake_openai, "dear", price_per_mtok_prompt=0, price_per_mtok_completion=1e6
    )
    free = spec(
        fake_openai, "free", price_per_mtok_prompt=0, price_per_mtok_completion=0
    )
    calls = ledger([dear, free], budget_usd=1.0, completion_tokens=2)
    assert calls.chat(free, "hi") == '"ok"'
    with pytest.raises(BudgetExceeded, match="'dear' could cost \\$2.000000"):
        calls.chat(dear, "hi")  # $1 a completion token, two expected
    with pytest.raises(BudgetExceeded):
        calls.chat(free, "hi")  # it would fit, but the run has stopped
    assert [b["model"] for b in fake_openai.bodies] == ["free"]


# -- the offline judge -------------------------------------------------------


# FELM-like items carrying their own samples; two contradict a sentence.
OFFLINE_ITEMS = [
    {
        "index": "0",
        "prompt": "Tell me a bio of Leslie Lamport.",
        "response": "Leslie Lamport is a computer scientist. Lamport received "
        "his PhD from Berkeley in 1972. He won the Turing Award in 2013.",
        "segmented_response": [
            "Leslie Lamport is a computer scientist.",
            "Lamport received his PhD from Berkeley in 1972.",
            "He won the Turing Award in 2013.",
        ],
        "labels": [True, False, True],
        "samples": [
            "Leslie Lamport is a computer scientist. Lamport received his PhD "
            "from Brandeis in 1972. He won the Turing Award in 2013.",
            "Leslie Lamport is a computer scientist known for Paxos. He won the "
            "Turing Award in 2013.",
        ],
    },
    {
        "index": 1,
        "prompt": "Which country has the most nuclear reactors?",
        "response": "The United States has the most nuclear reactors. "
        "The United States operates 94 reactors.",
        "segmented_response": [
            "The United States has the most nuclear reactors.",
            "The United States operates 94 reactors.",
        ],
        "labels": [True, False],
        "samples": [
            "The United States has the most nuclear reactors. The United States "
            "operates 92 reactors.",
        ],
    },
    {
        "index": "2",
        "prompt": "Give me the largest even prime.",
        "response": "The largest even prime number is 2.",
        "segmented_response": ["The largest even prime number is 2."],
        "labels": [True],
        "samples": ["The largest even prime number is 2.", "Two is prime."],
    },
    {
        "index": "3",
        "prompt": "What is the boiling point of water at sea level?",
        "response": "Water boils at 100 degrees Celsius at sea level. "
        "Pasta tastes better with salt.",
        "segmented_response": [
            "Water boils at 100 degrees Celsius at sea level.",
            "Pasta tastes better with salt.",
        ],
        "labels": [True, True],
        "samples": ["At sea level water boils at 100 degrees Celsius."],
    },
]


def test_offline_judge_flags_contradicted_sentences_without_any_llm():
    items = [item_from_json(row) for row in OFFLINE_ITEMS]

    report = check_items(items, judge=NLIJudge(WordOverlapScorer()))

    results = {r.item.id: r for r in report.results}
    assert [b.label for b in results["0"].blocks] == [
        "ACCURATE",
        "CONTRADICTION",  # Brandeis in one sample, nothing in the other: 0.9
        "ACCURATE",
    ]
    phd = results["0"].blocks[1].judgements
    assert [j.label for j in phd] == ["CONTRADICTION", "NEUTRAL"]
    assert phd[0].evidence == "Lamport received his PhD from Brandeis in 1972."
    assert [b.label for b in results["1"].blocks] == ["ACCURATE", "CONTRADICTION"]
    assert results["2"].label == "FACTUAL"
    assert results["2"].score == pytest.approx(1 / 6)  # "Two is prime." is NEUTRAL
    assert [b.label for b in results["3"].blocks] == ["ACCURATE", "NEUTRAL"]
    assert [r.label for r in report.results] == [
        "NON-FACTUAL",
        "NON-FACTUAL",
        "FACTUAL",
        "FACTUAL",
    ]
    assert report.usage == {"models": {}, "cost_usd": 0}
    assert results["1"].item.extra["labels"] == [True, False]


@pytest.mark.slow
def test_cli_runs_offline_with_the_packaged_nli_scorer_and_no_llm(tmp_path, capsys):
    items, out = tmp_path / "items.jsonl", tmp_path / "out.jsonl"
    _write(items, [*OFFLINE_ITEMS, {"index": "9", "prompt": "p", "response": 3}])

    code = main(
        ["consistency", "--items", str(items), "--offline-judge", "--out", str(out)]
    )

    assert code == 1
    assert "items.jsonl:5: field 'response'" in capsys.readouterr().err
    written = [json.loads(line) for line in out.open()]
    assert [w["id"] for w in written] == ["0", "1", "2", "3"]
    for w in written:
        assert w["label"] in ("FACTUAL", "NON-FACTUAL")
        assert w["usage"] == {"models": {}, "cost_usd": 0}
        for b in w["blocks"]:
            assert w["response"][b["start"] : b["end"]] == b["text"]
            assert len(b["judgements"]) == len(w["samples"])


# -- evaluation against FELM labels ------------------------------------------


def _checked(index, response, blocks, score, label):
    spans, at = [], 0
    for text, block_label_ in blocks:
        start = response.index(text, at)
        at = start + len(text)
        spans.append({"start": start, "end": at, "text": text, "label": block_label_})
    return {
        "id": index,
        "prompt": "p",
        "response": response,
        "blocks": spans,
        "score": score,
        "label": label,
    }


def test_evaluate_counts_segments_and_responses_with_errors_as_positive(
    tmp_path, capsys
):
    two = "Alpha one. Beta two."
    checked = [
        # segment truth (True = factual), block labels, score, response label
        _checked(
            "0",
            two,
            [("Alpha one.", "ACCURATE"), ("Beta two.", "CONTRADICTION")],
            0.6,
            "NON-FACTUAL",
        ),
        _checked(
            "1",
            two,
            [("Alpha one.", "CONTRADICTION"), ("Beta two.", "ACCURATE")],
            0.1,
            "NON-FACTUAL",
        ),
        _checked(
            "2",
            two,
            [("Alpha one.", "NEUTRAL"), ("Beta two.", "ACCURATE")],
            0.2,
            "FACTUAL",
        ),
        _checked(
            "3",
            two,
            [("Alpha one.", "ACCURATE"), ("Beta two.", "ACCURATE")],
            0.0,
            "FACTUAL",
        ),
        _checked("4", "Gamma.", [("Gamma.", "UNKNOWN")], None, "FACTUAL"),
        _checked("5", "Not labelled.", [], 0.0, "FACTUAL"),
    ]
    labels = [
        {
            "index": "0",
            "response": two,
            "segmented_response": ["Alpha one.", "Beta two."],
            "labels": [True, False],
        },
        {
            "index": "1",
            "response": two,
            "segmented_response": ["Alpha one.", "Beta two."],
            "labels": [True, True],
        },
        {
            "index": "2",
            "response": two,
            "segmented_response": ["*Alpha one.", "Beta two."],
            "labels": [False, True],
        },
        {
            "index": "3",
            "response": two,
            "segmented_response": ["Alpha one.", "Beta two."],
            "labels": [True, True],
        },
        {
            "index": "4",
            "response": "Gamma.",
            "segmented_response": ["Gamma."],
            "labels": [True],
        },
        {"index": "6", "response": "x", "segmented_response": ["x"], "labels": [False]},
    ]
    checked_path, labels_path = tmp_path / "checked.jsonl", tmp_path / "labels.jsonl"
    _write(checked_path, checked)
    _write(labels_path, labels)

    code = main(
        [
            "consistency-evaluate",
            "--checked",
            str(checked_path),
            "--labels",
            str(labels_path),
        ]
    )

    assert code == 0
    figures = json.loads(capsys.readouterr().out)
    assert (figures["items"], figures["unchecked"], figures["unlabelled"]) == (5, 1, 1)
    segment = figures["segment"]
    # Flagged = under a CONTRADICTION block: 0/Beta (an error: TP), 1/Alpha
    # (FP); 2/Alpha is an error under a NEUTRAL block (FN); six others TN,
    # 4/Gamma among them, under an UNKNOWN block.
    assert segment["confusion"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 6}
    assert (segment["precision"], segment["recall"], segment["f1"]) == (0.5, 0.5, 0.5)
    assert segment["balanced_accuracy"] == round((1 / 2 + 6 / 7) / 2, 4)
    assert (segment["unmatched"], segment["unscored"]) == (0, 1)
    response = figures["response"]
    # Non-factual truly: 0 and 2. Flagged: 0 (TP) and 1 (FP); 2 is a FN.
    assert response["confusion"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 2}
    assert response["balanced_accuracy"] == round((1 / 2 + 2 / 3) / 2, 4)
    # Scores 0.6, 0.1, 0.2, 0.0 against shares of false segments .5, 0, .5, 0
    # (item 4 has no score): r = .175 / sqrt(.2075 * .25); the ranks 4, 2, 3, 1
    # against 3.5, 1.5, 3.5, 1.5 give rho = 4 / sqrt(5 * 4).
    assert response["correlated"] == 4
    assert response["pearson"] == round(0.175 / (0.2075 * 0.25) ** 0.5, 4)
    assert response["spearman"] == round(4 / 20**0.5, 4)


def test_segments_are_found_in_order_despite_felm_escapes_and_markers():
    response = 'Cows give milk.\\n\\nThe milk is "fresh". Cows give milk.'
    segments = ["Cows give milk.", '*The milk is "fresh".', "Cows give milk.", "Zz"]
    offsets = segment_offsets(response, segments)
    assert offsets[0] == (0, 15)
    start, end = offsets[1]
    assert response[start:end] == 'The milk is "fresh'
    assert offsets[2] == (40, 55) and offsets[3] is None
    math = "So 3 x $5 = $<<3*5=15>>15.\nThen stop."
    start, end = segment_offsets(math, ["So 3 x $5 = $15.", "Then stop."])[0]
    assert math[start:end] == "So 3 x $5 = $<<3*5=15>>15"


# -- the command line's refusals ---------------------------------------------


def test_cli_refuses_bad_arguments_with_status_2(tmp_path, capsys, monkeypatch):
    items = tmp_path / "items.jsonl"
    _write(items, [{"id": "a", "prompt": "p", "response": "r"}])
    out = str(tmp_path / "out.jsonl")
    base = ["consistency", "--items", str(items), "--out", out]
    judge = '{"model": "j", "base_url": "http://127.0.0.1:9/v1"}'
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    for extra, message in [
        ([], "--judge is required unless --offline-judge"),
        (["--judge", '{"model": "j"}'], "field 'base_url'"),
        (["--judge", judge, "--reflect"], "--reflect needs --improver"),
        (["--judge", judge, "--samples", "0"], "samples must be 1 or more"),
        (["--judge", judge, "--variants", "identity,shout"], "'shout'"),
        (["--judge", judge], "have no samples"),
        (
            [
                "--judge",
                judge,
                "--samplers",
                '[{"model": "s", "base_url": "u", "api_key_env": "NO_SUCH_KEY"}]',
            ],
            "NO_SUCH_KEY is not set",
        ),
        (["--judge", judge, "--budget", "1"], "a budget needs prices"),
    ]:
        assert main([*base, *extra]) == 2, extra
        assert message in capsys.readouterr().err
