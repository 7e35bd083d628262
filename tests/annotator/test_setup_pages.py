"""Each kind's set-up page says what to upload, in which format, with sample
files that import cleanly; a citation project loads its case law there, a
consistency project sees its samples and asks other models for more."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.core.errors import ApplicationError
from annotator.kinds.citations.models import CaseOpinion
from annotator.kinds.consistency.models import ConsistencyRun
from annotator.models import Claim, Role, TrainingRun
from annotator.training import runs as training_runs
from annotator.training import schedule
from tests.annotator.factories import make_claim, make_document, make_project
from tests.conftest import ROOT
from tools import setup_samples

pytestmark = pytest.mark.django_db

STATIC = ROOT / "frontend" / "static"
KINDS = ["extraction", "citations", "provenance", "consistency"]


def _page(client, project) -> str:
    response = client.get(f"/projects/{project.pk}/setup/")
    assert response.status_code == 200
    return response.content.decode()


def _samples(html: str) -> list[tuple[str, str, Path]]:
    """(action, file field, sample file) of each sample link, in page order:
    the form a link follows is the one it is a sample of."""
    out = []
    for link in re.finditer(r'href="/static/(samples/[^"]+)"', html):
        before = html[: link.start()]
        action = re.findall(r'name="action" value="([^"]+)"', before)[-1]
        field = re.findall(r'<input type="file" name="([^"]+)"', before)[-1]
        out.append((action, field, STATIC / link[1]))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_each_kinds_sample_files_import_cleanly_from_its_set_up_page(
    personas, client, unread_broker, kind
):
    project = make_project(kind=kind)
    client.force_login(personas.admin)
    samples = _samples(_page(client, project))
    assert samples and all(path.parent.name == kind for _, _, path in samples)
    for action, field, path in samples:
        upload = SimpleUploadedFile(path.name, path.read_bytes())
        response = client.post(
            f"/projects/{project.pk}/setup/", {"action": action, field: [upload]}
        )
        html = response.content.decode()
        assert response.status_code == 200, html
        summary = re.search(r'<p id="report-summary">([^<]*)</p>', html)[1]
        assert "skipped" not in summary and not summary.startswith("0 created")


def test_the_sample_files_are_those_the_example_tools_make():
    for kind, files in setup_samples.SAMPLES.items():
        for name in files:
            path = STATIC / "samples" / kind / name
            assert path.read_text(encoding="utf-8") == setup_samples.sample_text(
                kind, name
            ), f"{path} is stale: python -m tools.setup_samples"


def test_each_kind_says_what_it_takes(personas, client):
    client.force_login(personas.admin)
    pages = {kind: _page(client, make_project(kind=kind)) for kind in KINDS}
    assert "Upload documents" in pages["extraction"]
    assert "Upload claims" in pages["extraction"]
    assert "Upload briefs" in pages["citations"]
    assert "There is no claims file" in pages["citations"]
    assert "Upload claims" not in pages["citations"]
    for kind in ("provenance", "consistency"):
        assert "Upload answers" in pages[kind] and "Upload claims" not in pages[kind]
    assert 'id="samples-state"' in pages["consistency"]


def test_case_law_is_loaded_from_the_page_and_rechecks_every_citation_project(
    personas, client, unread_broker, settings
):
    settings.CITATION_COMPLETE_REPORTERS = "U.S.:1-9"
    project = make_project(kind="citations")
    other = make_project(kind="citations")
    brief = make_document(other, text="See Doe v. Roe, 5 U.S. 11 (1990).")
    make_claim(
        brief, external_id="c1", type="citation", value="5 U.S. 11", verdict="unsafe"
    )
    client.force_login(personas.admin)
    html = _page(client, project)
    assert "No case law loaded yet" in html
    assert "U.S. volumes 1 to 9" in html
    sample = STATIC / "samples" / "citations" / "caselaw.jsonl"
    response = client.post(
        f"/projects/{project.pk}/setup/",
        {
            "action": "caselaw",
            "file": SimpleUploadedFile("c.jsonl", sample.read_bytes()),
        },
    )
    html = response.content.decode()
    assert "2 created" in html
    assert "The case law holds 2 opinions and 0 further cases" in html
    assert CaseOpinion.objects.count() == 2
    # Checked again, the verdict kept until the new check replaces it.
    claim = Claim.objects.get(external_id="c1")
    assert claim.checked_at is None and claim.verdict == "unsafe"


def test_loading_case_law_needs_the_deployments_permission(
    personas, client, unread_broker
):
    project = make_project(kind="citations")
    manager = get_user_model().objects.create_user("manager", password="m-pass")
    project.memberships.create(user=manager, role=Role.ADMIN)
    client.force_login(manager)
    html = _page(client, project)
    assert 'id="caselaw-ask"' in html and 'id="caselaw-form"' not in html
    sample = STATIC / "samples" / "citations" / "index.jsonl"
    response = client.post(
        f"/projects/{project.pk}/setup/",
        {
            "action": "caselaw_index",
            "file": SimpleUploadedFile("i.jsonl", sample.read_bytes()),
        },
    )
    assert response.status_code == 403
    assert "add_caseopinion" in response.content.decode()


def test_a_citation_project_without_case_law_starts_no_first_scorer_and_says_why(
    personas, client, unread_broker, settings
):
    settings.FIRST_SCORER_AUTO = True
    project = make_project(kind="citations")
    document = make_document(project, text="See Doe v. Roe, 5 U.S. 11 (1990).")
    make_claim(document, type="citation", value="5 U.S. 11")
    assert schedule.first_scorer_due(project) is None
    assert not TrainingRun.objects.filter(project=project).exists()
    with pytest.raises(ApplicationError, match="no case law loaded"):
        training_runs.training_run_start(project=project)
    client.force_login(personas.admin)
    html = _page(client, project)
    assert 'id="training-blocked"' in html and "no case law loaded" in html


def test_a_consistency_project_asks_other_models_for_samples_from_the_page(
    personas, client, unread_broker, fake_openai, settings
):
    settings.LLM_PRICES = {"*": (Decimal(1), Decimal(2))}
    offline = make_project(kind="consistency")
    client.force_login(personas.admin)
    assert 'id="samples-no-llm"' in _page(client, offline)

    project = make_project(
        kind="consistency",
        llm_base_url=fake_openai.base_url,
        llm_models=["sampler-a", "sampler-b"],
    )
    sample = STATIC / "samples" / "consistency" / "items.jsonl"
    lines = sample.read_text().splitlines()
    unsampled = re.sub(r', "samples": \[.*\]', "", lines[0])
    client.post(
        f"/projects/{project.pk}/setup/",
        {
            "action": "documents",
            "files": [
                SimpleUploadedFile("a.jsonl", (unsampled + "\n" + lines[1]).encode())
            ],
        },
    )
    html = _page(client, project)
    assert "1 of 2 answers has samples; 1 with a prompt waits for some" in html
    response = client.post(
        f"/projects/{project.pk}/setup/",
        {"action": "sample", "samplers": ["sampler-b"], "budget": "0.50"},
    )
    html = response.content.decode()
    assert response.status_code == 200 and 'id="sample-started"' in html
    run = ConsistencyRun.objects.get(project=project)
    assert run.params["samplers"] == ["sampler-b"] and run.budget == Decimal("0.50")
    response = client.post(
        f"/projects/{project.pk}/setup/",
        {"action": "sample", "samplers": ["not-allowed"], "budget": "0.50"},
    )
    assert response.status_code == 400
    assert 'id="sample-problem"' in response.content.decode()


def _stages(client, project) -> dict[str, str]:
    html = _page(client, project)
    return {
        name: re.sub(r"<[^>]+>", "", body).strip()
        for name, body in re.findall(r'<li data-stage="(\w+)"[^>]*>(.*?)</li>', html)
    }


def test_the_set_up_page_shows_each_stage_and_what_it_waits_on(
    personas, client, unread_broker
):
    client.force_login(personas.admin)
    extraction = make_project()
    stages = _stages(client, extraction)
    assert list(stages) == ["uploaded", "found", "checked", "scored", "labelled"]
    assert stages["uploaded"] == "Uploaded 0 waits on an upload"
    document = make_document(extraction)
    assert "waits on claims: none uploaded yet" in _stages(client, extraction)["found"]

    make_claim(document, checked_at=None)
    make_claim(document, verdict="unscored")
    stages = _stages(client, extraction)
    assert stages["checked"] == "Checked 1 of 2 waits on the checking worker"
    assert stages["scored"] == (
        "Scored 0 of 1 waits on a scorer: none trained yet (expert labels train one)"
    )
    assert (
        stages["labelled"] == "Labelled 0 of 2 waits on an expert: none is a member yet"
    )
    run = TrainingRun.objects.create(project=extraction, status="running", progress=0.4)
    assert _stages(client, extraction)["scored"].endswith(
        f"waits on a scorer training (run {run.pk}, 40% done)"
    )

    citations = make_project(kind="citations", members=[personas.annotator])
    brief = make_document(citations, text="See Doe v. Roe, 5 U.S. 11 (1990).")
    stages = _stages(client, citations)
    assert stages["found"].endswith(
        "waits on the checking worker, which finds them in the documents"
    )
    make_claim(brief, type="citation", value="5 U.S. 11", verdict="unscored")
    stages = _stages(client, citations)
    assert "cannot be trained yet: no case law loaded" in stages["scored"]
    assert stages["labelled"] == "Labelled 0 of 1"
