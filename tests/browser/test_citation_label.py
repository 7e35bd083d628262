"""A brief uploaded to a citation project shows its citations checked, with
their evidence, in the labeling screen: the citation and its quotation on
the left, the failed check named, the case it matched and the opinion's
passage on the right; the expert labels them by keyboard."""

import pytest
from django.core.management import call_command

from annotator.claims.checking import claims_check
from tests.annotator.factories import upload
from tests.browser.conftest import (
    label_by_key,
    log_in,
    project_over_api,
    stored_labels,
    wait_all_sent,
)
from tests.citation_data import write_caselaw

pytestmark = pytest.mark.django_db(transaction=True)

BRIEF = (
    "The Court was clear. “We hold that the statute does not create a private"
    " right of action.” Doe v. Roe, 5 U.S. 11, 12 (1990). Other courts agree."
    " See Smith v. Jones, 5 U.S. 11 (1990)."
)


def test_a_briefs_citations_are_labelled_with_their_evidence(
    personas, api, new_page, settings, tmp_path, unread_broker, artifacts
):
    settings.CITATION_COMPLETE_REPORTERS = "U.S.:1-10"
    store, index = write_caselaw(tmp_path)
    call_command("import_caselaw", str(store))
    call_command("import_caselaw", str(index), "--index")
    admin = api(personas.admin)
    expert = personas.annotator
    project = project_over_api(admin, name="briefs", kind="citations", expert=expert)
    response = upload(
        admin,
        "/api/documents/upload/",
        project,
        "brief.txt",
        BRIEF.encode(),
        "files",
    )
    assert response.status_code in (200, 201), response.content
    assert claims_check(project_id=project.pk).checked == 2

    page = new_page()
    log_in(page, expert.username, "ann1-pass")
    page.goto(f"/projects/{project.pk}/label/")
    page.wait_for_selector("#item:not([hidden])")
    shown = {}
    for _ in range(2):
        citation = page.inner_text(".cite-text")
        # The brief on the left opens on the citation, highlighted.
        assert citation in page.inner_text("#doc .d-hit")
        if citation.startswith("Doe"):
            assert page.inner_text(".cite-quotes") == (
                "We hold that the statute does not create a private right of action."
            )
            assert page.is_hidden(".cite-failed")
            assert page.inner_text(".cite-matched") == "Doe v. Roe"
            assert page.locator(".cite-evidence .lbl-text").all_inner_texts()[1] == (
                "We hold that the statute does not create a private right of action"
            )
            checks = page.inner_text(".cite-checks")
            assert "The quotation is in the opinion: yes" in checks
            key = "s"
            page.screenshot(path=str(artifacts / "label-citation.png"), full_page=True)
        else:
            assert citation == "Smith v. Jones, 5 U.S. 11 (1990)"
            assert page.inner_text(".cite-failed") == (
                "Failed check: Case name mismatch: 5 U.S. 11 is Doe v. Roe"
            )
            assert page.inner_text(".cite-matched") == "Doe v. Roe"
            assert "The case name matches: no" in page.inner_text(".cite-checks")
            key = "u"
        shown[citation] = "safe" if key == "s" else "unsafe"
        label_by_key(page, key)
    wait_all_sent(page)
    assert stored_labels(expert) == shown
    assert len(shown) == 2
