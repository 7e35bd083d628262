"""Two experts label an overlap item differently in the labeling screen, a
reviewer sees both labels with their notes and times on the adjudication page
and decides it, the training labels take the decision, and the dashboard
shows the agreement per type."""

import pytest
from django.contrib.auth import get_user_model

from annotator.labeling import gold
from annotator.models import Adjudication, Label, Role
from annotator.projects import services
from annotator.training.data import expert_labels
from tests.annotator.factories import aligned, make_claim, make_document
from tests.browser.conftest import label_by_key, log_in, wait_all_sent

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_disagreement_is_adjudicated_and_the_decision_trains(
    personas, new_page, artifacts
):
    project = personas.project
    project.overlap_share = 1.0
    project.overlap_labels = 2
    project.save(update_fields=["overlap_share", "overlap_labels"])
    document = make_document(project, external_id="decision-1")
    claim = make_claim(
        document,
        type="amount",
        value="$12,000",
        context="The hearing took place in Toronto",
        hypothesis="amount: $12,000",
        **aligned(document, 0, 33, 0.8),
        score=0.4,
    )
    reviewer = get_user_model().objects.create_user("rev", password="rev-pass")
    services.membership_set(project=project, user=reviewer, role=Role.REVIEWER)

    for username, key, note in (("ann1", "s", ""), ("ann2", "k", "no amount here")):
        page = new_page()
        log_in(page, username, f"{username}-pass")
        page.goto(f"/projects/{project.pk}/label/")
        page.wait_for_selector("#item:not([hidden])")
        if note:
            page.keyboard.press("n")
            page.fill("#note-input", note)
            page.keyboard.press("Enter")
        label_by_key(page, key)
        wait_all_sent(page)
    assert sorted(Label.objects.values_list("label", flat=True)) == [
        "safe",
        "unsafe",
    ]
    side = gold.is_gold_document(project, document.pk)
    assert expert_labels(project, gold_set=side)[claim.pk] == "unsafe"  # a tie

    page = new_page()
    log_in(page, "rev", "rev-pass")
    page.goto(f"/projects/{project.pk}/adjudicate/")
    item = page.locator(f".adj-item[data-claim='{claim.pk}']")
    labels = item.locator(".adj-labels tbody tr")
    assert labels.count() == 2
    assert "ann1" in labels.nth(0).inner_text() and "safe" in labels.nth(0).inner_text()
    assert "no amount here" in labels.nth(1).inner_text()
    item.locator("input[name=note]").fill("The amount is on page 3.")
    page.screenshot(path=str(artifacts / "adjudicate.png"), full_page=True)
    item.get_by_role("button", name="Safe", exact=True).click()
    page.wait_for_selector(".notice")
    assert "Decided safe by rev" in page.inner_text(".adj-item.adj-done")

    decision = Adjudication.objects.get(claim=claim)
    assert (decision.label, decision.reviewer, decision.note) == (
        "safe",
        reviewer,
        "The amount is on page 3.",
    )
    assert expert_labels(project, gold_set=side)[claim.pk] == "safe"

    page = new_page()
    log_in(page, "admin", "admin-pass")
    page.goto(f"/projects/{project.pk}/dashboard/")
    row = page.locator(".agreement-types tr[data-type='amount']")
    assert row.locator("td").all_inner_texts()[:3] == ["amount", "1", "0.000"]
    assert "1 disagreement, 0 waiting" in page.inner_text("#disagreements")
