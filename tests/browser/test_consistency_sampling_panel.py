"""The dashboard's sampling panel of a consistency project: the admin sees
the estimate, starts a run under a budget, follows and cancels it."""

import json

import pytest
from django.conf import settings

from annotator.claims import ingest
from annotator.kinds.consistency.models import ConsistencyRun
from tests.annotator.factories import make_project
from tests.browser.conftest import log_in
from tests.consistency_data import LAMPORT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sampling_panel_estimates_starts_and_cancels(personas, new_page):
    project = make_project(
        kind="consistency",
        # The allowed endpoint with nothing listening: calls fail and retry.
        llm_base_url=settings.FAKE_OPENAI_URL,
        llm_models=["sampler-a", "sampler-b"],
    )
    items = [
        {k: v for k, v in LAMPORT.items() if k != "samples"} | {"id": f"a{i}"}
        for i in range(3)
    ]
    data = "".join(json.dumps(item) + "\n" for item in items)
    ingest.documents_import(
        project=project, files=[("answers.jsonl", ingest.stream_of(data))]
    )
    page = new_page()
    log_in(page, "admin", "admin-pass")
    page.goto(f"/projects/{project.pk}/dashboard/")
    panel = page.locator("#sampling")
    assert page.input_value("#sample-models") == "sampler-a, sampler-b"
    page.fill("#sample-count", "4")
    panel.get_by_role("button", name="Estimate").click()
    page.wait_for_function(
        "() => document.querySelector('#sample-estimate').textContent"
        ".startsWith('3 answers to sample with sampler-a, sampler-b')"
    )
    assert page.input_value("#sample-budget") != ""  # suggested from the estimate
    page.fill("#sample-budget", "1.50")
    panel.get_by_role("button", name="Start run").click()
    page.wait_for_selector("#sample-run:not([hidden])")
    run = ConsistencyRun.objects.get(project=project)
    assert (run.params["samplers"], run.params["samples"]) == (
        ["sampler-a", "sampler-b"],
        4,
    )
    assert (str(run.budget), run.progress_total) == ("1.500000", 3)
    assert page.text_content("#sr-count") == "0 / 3 answers"
    panel.get_by_role("button", name="Cancel run").click()
    page.wait_for_function(
        "() => document.querySelector('#sr-status').textContent === 'cancelled'",
        # A worker may be mid-call (the SDK retrying an unreachable LLM): it
        # stops at the end of that call.
        timeout=30_000,
    )
    run.refresh_from_db()
    assert run.status == "cancelled"
