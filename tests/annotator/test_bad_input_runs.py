"""Bad input to the endpoints that start paid or long runs (grading,
extraction, sampling and corrections) and to a scorer's calibration: each is
a 400 naming what is wrong, never a 500, and starts or changes nothing."""

import pytest

from annotator.kinds.consistency.models import ConsistencyRun
from annotator.kinds.extraction.models import ExtractionRun
from annotator.models import (
    GradingRun,
    ScorerModel,
)
from tests.annotator.factories import make_document, make_project

pytestmark = [pytest.mark.django_db, pytest.mark.bad_input]

MODEL = "fake-model"
SAMPLERS = ["sampler-a", "sampler-b"]

GRADING, EXTRACTION, CONSISTENCY = "grading", "extraction", "consistency"
URLS = {
    GRADING: "/api/grading-runs/",
    EXTRACTION: "/api/extraction-runs/",
    CONSISTENCY: "/api/consistency-runs/",
}


@pytest.fixture
def projects(personas, fake_openai):
    """The personas' project with an LLM, and a consistency project."""
    project = personas.project
    project.llm_base_url = fake_openai.base_url
    project.llm_models = [MODEL]
    project.save()
    make_document(project)
    consistency = make_project(
        kind="consistency",
        llm_base_url=fake_openai.base_url,
        llm_models=[*SAMPLERS, "improver"],
    )
    return {GRADING: project, EXTRACTION: project, CONSISTENCY: consistency}


def _body(kind, project, changes):
    """A start request that would be accepted, with ``changes``: a params
    dict is merged into the good params, None drops a key."""
    body = {"project": project.pk, "budget": "1"}
    if kind == CONSISTENCY and changes.get("job") == "corrections":
        body["params"] = {"improver": "improver"}
    elif kind == CONSISTENCY:
        body["params"] = {"samplers": SAMPLERS, "samples": 2}
    else:
        body["model"] = MODEL
        body["params"] = {}
    for key, value in changes.items():
        if key == "params" and isinstance(value, dict):
            body["params"] = {**body["params"], **value}
        elif value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return body


RUN_CASES = {
    # grading
    "grading: budget a word": (GRADING, {"budget": "lots"}, "budget"),
    "grading: budget NaN": (GRADING, {"budget": "NaN"}, "budget"),
    "grading: budget Infinity": (GRADING, {"budget": "Infinity"}, "budget"),
    "grading: budget a boolean": (GRADING, {"budget": True}, "budget"),
    "grading: budget negative": (GRADING, {"budget": "-5"}, "budget"),
    "grading: budget huge": (GRADING, {"budget": "1e30"}, "budget"),
    "grading: budget over the cap": (
        GRADING,
        {"budget": "100.000001"},
        "budget must be at most 100",
    ),
    "grading: a caller's price": (
        GRADING,
        {"params": {"price_per_mtok_completion": 0}},
        "params.price_per_mtok_completion: prices are set by the deployment",
    ),
    "grading: max_retries a string": (
        GRADING,
        {"params": {"max_retries": "3"}},
        "params.max_retries must be an integer",
    ),
    "grading: max_retries a boolean": (
        GRADING,
        {"params": {"max_retries": True}},
        "params.max_retries must be an integer",
    ),
    "grading: timeout negative": (
        GRADING,
        {"params": {"timeout": -1}},
        "params.timeout must be more than 0",
    ),
    "grading: timeout a string": (
        GRADING,
        {"params": {"timeout": "10"}},
        "params.timeout must be a number",
    ),
    "grading: temperature huge": (
        GRADING,
        {"params": {"temperature": 1e308}},
        "params.temperature must be at least 0 and at most 2",
    ),
    "grading: n zero": (GRADING, {"params": {"n": 0}}, "params.n must be at least 1"),
    "grading: n huge": (
        GRADING,
        {"params": {"n": 10**30}},
        "params.n must be at least 1 and at most 1",
    ),
    "grading: json_mode a boolean": (
        GRADING,
        {"params": {"json_mode": True}},
        "params.json_mode must be one of",
    ),
    "grading: unknown param": (
        GRADING,
        {"params": {"stream": True}},
        "unknown params ['stream']",
    ),
    "grading: unknown model": (
        GRADING,
        {"model": "gpt-unknown"},
        "'gpt-unknown' is not one of the project's models",
    ),
    "grading: params a list": (GRADING, {"params": [1, 2]}, "params"),
    "grading: no budget": (GRADING, {"budget": None}, "budget"),
    # extraction
    "extraction: budget zero": (EXTRACTION, {"budget": "0"}, "budget must be more"),
    "extraction: budget a list": (EXTRACTION, {"budget": ["1"]}, "budget"),
    "extraction: a caller's price": (
        EXTRACTION,
        {"params": {"price_per_mtok_prompt": 0}},
        "params.price_per_mtok_prompt: prices are set by the deployment",
    ),
    "extraction: max_retries a million": (
        EXTRACTION,
        {"params": {"max_retries": 1_000_000}},
        "params.max_retries must be at least 0 and at most 5",
    ),
    "extraction: max_tokens a float": (
        EXTRACTION,
        {"params": {"max_tokens": 100.5}},
        "params.max_tokens must be an integer",
    ),
    "extraction: seed negative": (
        EXTRACTION,
        {"params": {"seed": -1}},
        "params.seed must be at least 0",
    ),
    "extraction: top_p a string": (
        EXTRACTION,
        {"params": {"top_p": "all"}},
        "params.top_p must be a number",
    ),
    "extraction: unknown param": (
        EXTRACTION,
        {"params": {"logit_bias": {"1": 100}}},
        "unknown params ['logit_bias']",
    ),
    "extraction: documents strings": (EXTRACTION, {"documents": ["one"]}, "documents"),
    "extraction: unknown model": (
        EXTRACTION,
        {"model": "gpt-unknown"},
        "'gpt-unknown' is not one of the project's models",
    ),
    # sampling and corrections
    "sampling: samples a string": (
        CONSISTENCY,
        {"params": {"samples": "4"}},
        "params.samples must be an integer",
    ),
    "sampling: samples huge": (
        CONSISTENCY,
        {"params": {"samples": 10**9}},
        "params.samples must be at least 1 and at most 50",
    ),
    "sampling: samples a boolean": (
        CONSISTENCY,
        {"params": {"samples": True}},
        "params.samples must be an integer",
    ),
    "sampling: samplers a string": (
        CONSISTENCY,
        {"params": {"samplers": "sampler-a"}},
        "params.samplers must be a non-empty list",
    ),
    "sampling: unknown sampler": (
        CONSISTENCY,
        {"params": {"samplers": ["gpt-unknown"]}},
        "'gpt-unknown' is not one of the project's models",
    ),
    "sampling: max_concurrency huge": (
        CONSISTENCY,
        {"params": {"max_concurrency": 10**6}},
        "params.max_concurrency must be at least 1 and at most 16",
    ),
    "sampling: max_retries a million": (
        CONSISTENCY,
        {"params": {"max_retries": 1_000_000}},
        "params.max_retries must be at least 0 and at most 5",
    ),
    "sampling: seed a float": (
        CONSISTENCY,
        {"params": {"seed": 1.5}},
        "params.seed must be an integer",
    ),
    "sampling: seed past 64 bits": (
        CONSISTENCY,
        {"params": {"seed": 2**64}},
        "params.seed must be at least 0 and at most",
    ),
    "sampling: a caller's price": (
        CONSISTENCY,
        {"params": {"price_per_mtok_prompt": 1}},
        "params.price_per_mtok_prompt: prices are set by the deployment",
    ),
    "sampling: unknown job": (CONSISTENCY, {"job": "everything"}, "job"),
    "sampling: budget Infinity": (CONSISTENCY, {"budget": "-Infinity"}, "budget"),
    "corrections: summaries a string": (
        CONSISTENCY,
        {"job": "corrections", "params": {"summaries": "no"}},
        "params.summaries must be true or false",
    ),
}


def _runs() -> int:
    return sum(m.objects.count() for m in (GradingRun, ExtractionRun, ConsistencyRun))


@pytest.mark.parametrize(
    ("kind", "changes", "named"), RUN_CASES.values(), ids=RUN_CASES
)
def test_a_bad_run_start_is_a_400_naming_it_and_starts_nothing(
    personas, api, projects, kind, changes, named
):
    body = _body(kind, projects[kind], changes)
    response = api(personas.admin).post(URLS[kind], body, format="json")
    assert response.status_code == 400, response.content
    assert named in str(response.json())
    assert _runs() == 0


RAW_BODIES = {
    "grading: temperature NaN": (
        GRADING,
        '{"project": %d, "model": "fake-model", "budget": "1", '
        '"params": {"temperature": NaN}}',
    ),
    "extraction: timeout Infinity": (
        EXTRACTION,
        '{"project": %d, "model": "fake-model", "params": {"timeout": Infinity}}',
    ),
    "extraction: timeout past a double": (
        EXTRACTION,
        '{"project": %d, "model": "fake-model", "params": {"timeout": 1e999}}',
    ),
    "sampling: budget a bare number past a double": (
        CONSISTENCY,
        '{"project": %d, "budget": 1e999, "params": {"samplers": ["sampler-a"]}}',
    ),
}


@pytest.mark.parametrize(("kind", "raw"), RAW_BODIES.values(), ids=RAW_BODIES)
def test_non_finite_numbers_in_a_run_start_are_a_400(
    personas, api, projects, kind, raw
):
    response = api(personas.admin).post(
        URLS[kind], raw % projects[kind].pk, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert _runs() == 0


# --- calibration ---------------------------------------------------------------


@pytest.fixture
def scorer(personas):
    return ScorerModel.objects.create(
        project=personas.project,
        version="v1",
        base_model="b",
        path="/x",
        threshold=0.5,
        is_active=True,
    )


CALIBRATION_CASES = {
    "calibrate: unknown method": ("calibrate/", {"method": "magic"}, "method"),
    "calibrate: method a boolean": ("calibrate/", {"method": True}, "method"),
    "calibrate: method a list": ("calibrate/", {"method": ["auto"]}, "method"),
    "operating point: target_recall a word": (
        "operating-point/",
        {"target_recall": "most"},
        "target_recall",
    ),
    "operating point: target_recall a boolean": (
        "operating-point/",
        {"target_recall": True},
        "target_recall",
    ),
    "operating point: target_recall over 1": (
        "operating-point/",
        {"target_recall": 2},
        "target_recall",
    ),
    "operating point: target_recall 0": (
        "operating-point/",
        {"target_recall": 0},
        "target_recall",
    ),
    "operating point: target_recall huge": (
        "operating-point/",
        {"target_recall": 10**400},
        "target_recall",
    ),
    "operating point: no target_recall": ("operating-point/", {}, "target_recall"),
}


@pytest.mark.parametrize(
    ("action", "body", "named"), CALIBRATION_CASES.values(), ids=CALIBRATION_CASES
)
def test_a_bad_calibration_request_is_a_400_and_changes_nothing(
    personas, api, scorer, action, body, named
):
    response = api(personas.admin).post(
        f"/api/scorer-models/{scorer.pk}/{action}", body, format="json"
    )
    assert response.status_code == 400, response.content
    assert named in str(response.json())
    scorer.refresh_from_db()
    assert (scorer.threshold, scorer.calibration, scorer.operating_point) == (
        0.5,
        {},
        {},
    )


@pytest.mark.parametrize("value", ["NaN", "-Infinity", "abc", "1e999", "true"])
def test_a_bad_target_recall_in_a_preview_is_a_400(personas, api, scorer, value):
    response = api(personas.admin).get(
        f"/api/scorer-models/{scorer.pk}/operating-point/?target_recall={value}"
    )
    assert response.status_code == 400, response.content
    assert "target_recall" in str(response.json())
