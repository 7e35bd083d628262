"""The labeling guideline in a real browser: an admin writes it on its page, an
expert reads it with G, sees the section of the item's type under the claim,
and the labels saved carry the version shown."""

import pytest

from annotator.labeling import guidelines
from annotator.models import Guideline, Label, Membership, Role
from tests.annotator.factories import aligned, make_claim, make_document
from tests.browser.conftest import label_by_key, log_in, wait_all_sent

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GUIDE = """# How to label

Judge the claim against the document only.
<script>window.pwned = 1</script>
[a trap](javascript:window.pwned=2) and [the manual](https://example.org/manual)

## Hearing Date

Take the date of the hearing, **not** the date of the decision.
"""


def _two_items(project):
    project.overlap_share = 0.0
    project.gold_share = 0.0
    project.save(update_fields=["overlap_share", "gold_share"])
    document = make_document(project, external_id="decision-1")
    hearing = make_claim(
        document,
        type="HearingDate",
        value={"yyyy": "2012", "mm": "01", "dd": "17"},
        context="on 17 January 2012",
        **aligned(document, 37, 52, 0.8),
        score=0.5,
    )
    place = make_claim(
        document,
        context="took place in Toronto",
        **aligned(document, 15, 33, 0.8),
        score=0.4,
    )
    return hearing, place


def test_an_expert_reads_the_guideline_and_labels_record_its_version(
    personas, new_page, artifacts
):
    project = personas.project
    hearing, place = _two_items(project)
    guidelines.guideline_save(project=project, user=personas.admin, text="# Old")
    guidelines.guideline_save(project=project, user=personas.admin, text=GUIDE)
    page = new_page()
    log_in(page, "ann1", "ann1-pass")
    page.goto(f"/projects/{project.pk}/label/")
    page.wait_for_selector("#item:not([hidden])")

    page.keyboard.press("g")
    panel = page.locator("#guideline")
    assert panel.is_visible()
    assert panel.locator("#guideline-version").inner_text() == "version 2"
    assert panel.locator("h2:text('Hearing Date')").is_visible()
    assert panel.locator("strong").inner_text() == "not"
    # Raw HTML and a javascript: link in the Markdown stay text.
    assert "<script>window.pwned = 1</script>" in panel.inner_text()
    assert panel.locator("script").count() == 0
    assert panel.locator("a[href^='javascript']").count() == 0
    assert panel.locator("a[href='https://example.org/manual']").count() == 1
    assert page.evaluate("() => window.pwned") is None
    page.screenshot(path=str(artifacts / "label-guideline.png"))
    page.keyboard.press("g")  # G again closes it, as Esc does
    assert panel.is_hidden()

    section = page.locator("#guideline-section")
    seen = {}
    for _ in range(2):
        shown = int(page.get_attribute("#item", "data-claim-id"))
        if shown == hearing.pk:
            # Under the claim, collapsed: the section of the item's type.
            assert section.is_visible()
            assert "Hearing Date" in section.locator("summary").inner_text()
            body = section.locator("#guideline-section-body")
            assert body.is_hidden()
            section.locator("summary").click()
            assert "date of the hearing" in body.inner_text()
        else:
            # No heading names GPE: nothing shown.
            assert section.is_hidden()
        seen[shown] = True
        label_by_key(page, "s")
    assert set(seen) == {hearing.pk, place.pk}
    wait_all_sent(page)
    assert {
        a.claim_id: (a.label, a.guideline_version)
        for a in Label.objects.filter(annotator=personas.annotator)
    } == {hearing.pk: ("safe", 2), place.pk: ("safe", 2)}

    page.keyboard.press("?")
    assert page.locator("#help tr:has(kbd:text('G'))").is_visible()


def test_an_admin_writes_previews_and_saves_the_guideline(personas, new_page):
    project = personas.project
    Membership.objects.filter(user=personas.annotator2, project=project).update(
        role=Role.ADMIN
    )
    page = new_page()
    log_in(page, "ann2", "ann2-pass")
    page.goto(f"/projects/{project.pk}/dashboard/")
    page.click("#guideline-link")
    page.fill("textarea[name=text]", "## GPE\n\nA *place*. <b>bold?</b>")
    page.click("button[value=preview]")
    preview = page.locator("#guideline-preview")
    assert preview.locator("em").inner_text() == "place"
    assert preview.locator("b").count() == 0
    assert not Guideline.objects.exists()
    page.click("button[value=save]")
    assert "Saved as version 1" in page.locator("#guideline-saved").inner_text()
    assert page.locator("#guideline-rendered h2:text('GPE')").count() == 1
    assert Guideline.objects.get().text == "## GPE\n\nA *place*. <b>bold?</b>"
