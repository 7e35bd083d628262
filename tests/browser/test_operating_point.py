"""The admin previews an operating point on the dashboard, then applies it."""

import pytest
from playwright.sync_api import expect

from annotator.models import Claim, ScorerModel
from tests.annotator.test_calibration_app import scored_project
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_preview_then_apply_a_target_recall(personas, new_page, unread_broker):
    project, scorer, rows, *_ = scored_project(personas)
    page = new_page()
    log_in(page, "admin", "admin-pass")
    page.goto(f"/projects/{project.pk}/dashboard/")
    assert page.locator("#chart-reliability svg.chart").is_visible()
    panel = page.locator("#operating-point")
    assert page.is_disabled("#op-apply")  # nothing previewed yet

    page.fill("#op-target", "0.9")
    panel.get_by_role("button", name="Preview").click()
    page.wait_for_selector("#op-result:not([hidden])")
    expect(page.locator("#op-message")).to_contain_text("nothing has changed")
    workload = page.text_content("#op-workload")
    assert f"of {len(rows)} claims" in workload
    assert "experts would see" in workload
    assert "%" in page.text_content("#op-recall")
    scorer.refresh_from_db()
    assert scorer.threshold == 0.5 and scorer.operating_point == {}

    # A changed target needs its own preview before it can be applied.
    page.fill("#op-target", "0.8")
    assert page.is_disabled("#op-apply")
    page.fill("#op-target", "0.9")
    panel.get_by_role("button", name="Preview").click()
    expect(page.locator("#op-apply")).to_be_enabled()
    page.click("#op-apply")
    expect(page.locator("#op-message")).to_contain_text("Applied")
    scorer = ScorerModel.objects.get(pk=scorer.pk)
    assert scorer.operating_point["target_recall"] == 0.9
    assert scorer.threshold == scorer.operating_point["threshold"] != 0.5
    assert f"{scorer.threshold:.4f}" in page.text_content("#op-message")
    # Every claim waits for the check with the new threshold.
    assert not Claim.objects.filter(project=project, checked_at__isnull=False).exists()

    page.fill("#op-target", "1.5")
    panel.get_by_role("button", name="Preview").click()
    expect(page.locator("#op-message")).to_contain_text("at most 1")
