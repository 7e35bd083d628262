"""A newcomer's first day with each other kind, on an empty database and in
the README's words: an admin creates the project, downloads the set-up
page's sample files and uploads them step by step, opens an account for an
annotator and watches the checks finish; the annotator labels the first
item handed to them, whose evidence the page shows."""

import pytest

from annotator.models import Claim, Label, Project
from tests.browser.conftest import log_in, wait_all_sent
from tests.conftest import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: kind -> (its name on the new-project form, what shows a claim's evidence).
KINDS = {
    "citations": ("Legal citations in briefs against case law", ".cite-evidence li"),
    "provenance": ("RAG answers against their retrieved context", ".prov-source"),
    "consistency": (
        "Free-form answers against other models' samples",
        ".cons-judgement",
    ),
}


def _upload_samples(admin) -> list[str]:
    """Each sample file the page offers, downloaded and uploaded with the
    form before it, in page order; the import summaries."""
    summaries = []
    links = admin.locator(".setup-sample a, .setup-step small a[download]")
    for href in [links.nth(i).get_attribute("href") for i in range(links.count())]:
        name = href.rsplit("/", 1)[1]
        data = admin.request.get(href).body()
        form = admin.locator(f'a[href="{href}"]').locator(
            "xpath=preceding::form[.//input[@type='file']][1]"
        )
        form.locator("input[type=file]").set_input_files(
            [{"name": name, "mimeType": "application/octet-stream", "buffer": data}]
        )
        form.locator("button[type=submit]").click()
        admin.wait_for_selector("#report-summary")
        summaries.append(admin.text_content("#report-summary"))
    return summaries


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_newcomer_sets_up_each_kind_and_an_annotator_labels_it(
    personas, new_page, artifacts, celery_worker, kind
):
    title, evidence = KINDS[kind]
    admin = new_page()
    log_in(admin, "admin", "admin-pass")
    admin.goto("/")
    admin.click("#new-project")
    admin.fill("input[name=name]", f"first {kind}")
    admin.select_option("select[name=kind]", label=title)
    admin.click("text=Create the project")
    admin.wait_for_url("**/setup/")
    project = Project.objects.get(name=f"first {kind}")
    assert project.kind == kind

    summaries = _upload_samples(admin)
    assert summaries and all("skipped" not in s for s in summaries), summaries
    admin.fill("#account-form input[name=username]", "newcomer")
    admin.select_option("#account-form select[name=role]", "expert")
    admin.click("text=Open an account")
    admin.wait_for_selector("#new-account")
    password = admin.text_content("#new-password").strip()

    def checked():
        claims = Claim.objects.filter(project=project)
        return claims.exists() and not claims.filter(checked_at=None).exists()

    wait_for(checked, timeout=180, worker=celery_worker)
    admin.reload()
    admin.wait_for_selector("#check-status:text('Checks finished')")
    admin.screenshot(path=str(artifacts / f"newcomer-{kind}-setup.png"), full_page=True)

    annotator = new_page()
    log_in(annotator, "newcomer", password)
    annotator.goto("/")
    annotator.get_by_role("row", name=f"first {kind}").get_by_role(
        "link", name="Label"
    ).click()
    annotator.wait_for_selector("#item:not([hidden])")
    assert annotator.locator(evidence).count() > 0
    assert annotator.locator(evidence).first.inner_text().strip()
    annotator.screenshot(
        path=str(artifacts / f"newcomer-{kind}-label.png"), full_page=True
    )
    shown = int(annotator.get_attribute("#item", "data-claim-id"))
    annotator.click("button[data-action=unsafe]")
    wait_all_sent(annotator)
    label = Label.objects.get(claim_id=shown, annotator__username="newcomer")
    assert label.label == "unsafe" and label.claim.project_id == project.pk
