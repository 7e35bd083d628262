import json
import re

import pytest

from annotator.models import Claim, Label
from tests.annotator.factories import aligned, make_claim, make_document
from tests.browser.conftest import log_in, wait_all_sent

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEYS = {"safe": "s", "unsafe": "k", "unsure": " "}
CYCLE = ["safe", "unsafe", "safe", "unsure"]


def _corpus(project, n_docs=6, per_doc=5):
    text = (
        "The hearing took place in Toronto on 17 January 2012 before member "
        "Jane Smith. The claimant, a citizen of Colombia, fears the FARC. "
    ) * 4
    for d in range(n_docs):
        document = make_document(project, external_id=f"decision-{d}", text=text)
        for i in range(per_doc):
            make_claim(
                document,
                value="Toronto" if i % 2 else "Toronto, Ontario",
                context="The hearing took place in Toronto, Ontario",
                hypothesis="GPE: Toronto" if i % 2 else "GPE: Toronto, Ontario",
                **aligned(document, 0, 33, 0.8),
                score=0.1 * i,
            )


def _shown(page):
    page.wait_for_selector("#item:not([hidden])")
    return int(page.get_attribute("#item", "data-claim-id"))


def _press(page, key, before):
    page.keyboard.press(key)
    page.wait_for_function(
        "before => document.querySelector('#item').dataset.claimId != before",
        arg=str(before),
    )


def _outbox(page):
    return page.evaluate(
        "() => Object.entries(localStorage)"
        ".filter(([k]) => k.startsWith('safepassage:outbox:'))"
        ".map(([, v]) => JSON.parse(v)).flat()"
    )


def test_keyboard_labeling_with_undo_offline_and_reload_stores_exactly_20(
    personas, new_page, artifacts
):
    project = personas.project
    project.overlap_share = 0.0
    project.save()
    _corpus(project)
    page = new_page()
    log_in(page, "ann1", "ann1-pass")
    page.goto(f"/projects/{project.pk}/label/")
    expected = {}

    def label(n):
        current = _shown(page)
        assert current not in expected, "a claim came back after its label"
        choice = CYCLE[len(expected) % len(CYCLE)]
        expected[current] = choice
        _press(page, KEYS[choice], current)
        return current

    page.keyboard.press("?")
    assert page.is_visible("#help")
    page.keyboard.press("Escape")
    assert page.is_hidden("#help")
    page.screenshot(path=str(artifacts / "label-screen.png"), full_page=True)

    for n in range(5):
        last = label(n)
    # Undo brings the last claim back; it is then labelled differently.
    page.keyboard.press("z")
    page.wait_for_function(
        f"() => document.querySelector('#item').dataset.claimId == '{last}'"
    )
    del expected[last]
    expected[last] = "unsafe"
    _press(page, "u", last)

    # A note and a correction travel with the next decision.
    with_note = _shown(page)
    page.keyboard.press("n")
    page.keyboard.type("checked the hearing notes")
    page.keyboard.press("Enter")
    page.keyboard.press("c")
    page.keyboard.press("Control+a")
    page.keyboard.type("Ottawa")
    page.keyboard.press("Enter")
    expected[with_note] = "unsafe"
    _press(page, "u", with_note)

    # Offline: decisions go on, kept in the outbox...
    page.context.set_offline(True)
    for n in range(4):
        label(n)
    assert len(_outbox(page)) >= 1
    page.wait_for_selector("#sync:text('unsent')")
    page.screenshot(path=str(artifacts / "label-screen-offline.png"), full_page=True)
    # ...and survive a reload halfway through.
    page.context.set_offline(False)
    page.reload()
    assert len(expected) == 10
    while len(expected) < 20:
        label(len(expected))
    wait_all_sent(page)
    page.screenshot(path=str(artifacts / "label-screen-done.png"), full_page=True)

    stored = {a.claim_id: a for a in Label.objects.filter(annotator=personas.annotator)}
    assert {pk: a.label for pk, a in stored.items()} == expected
    assert Label.objects.count() == 20
    assert all(a.seconds_spent is not None for a in stored.values())
    noted = stored[with_note]
    assert noted.note == "checked the hearing notes"
    assert noted.correction == {"value": "Ottawa"}


def test_two_annotators_in_two_browsers_never_share_a_single_item(personas, new_page):
    project = personas.project
    project.overlap_share = 0.2
    project.save()
    _corpus(project, n_docs=20, per_doc=5)
    pages = {}
    seen = {}
    for username in ("ann1", "ann2"):
        page = new_page()
        log_in(page, username, f"{username}-pass")
        seen[username] = set()

        def record(response, username=username):
            if response.url.endswith("/queue/next/") and response.ok:
                seen[username].update(i["id"] for i in response.json()["items"])

        page.on("response", record)
        page.goto(f"/projects/{project.pk}/label/")
        initial = json.loads(page.text_content("#label-data"))
        seen[username].update(i["id"] for i in initial["items"])
        pages[username] = page
    # Interleaved labeling makes both pages prefetch more.
    for _ in range(16):
        for page in pages.values():
            current = _shown(page)
            _press(page, "j", current)
    for page in pages.values():
        wait_all_sent(page)
    overlap = {
        p.pk
        for p in Claim.objects.filter(project=project)
        if (p.pk * 7919) % 10007 < round(0.2 * 10007)
    }
    shared = seen["ann1"] & seen["ann2"]
    # Both pages came back for more after their first batch.
    assert len(seen["ann1"]) > 20 and len(seen["ann2"]) > 20
    assert len(seen["ann1"] | seen["ann2"]) > 50
    assert shared <= overlap, shared - overlap
    labels = Label.objects.filter(claim__project=project)
    singles = labels.exclude(claim__in=overlap)
    assert singles.count() == singles.values("claim").distinct().count()


def test_document_html_is_shown_as_text(personas, new_page, artifacts):
    project = personas.project
    hostile = (
        "Before <script>window.__pwned = 1</script> and "
        '<img src=x onerror="window.__pwned = 2"> after <b>bold</b>.'
    )
    document = make_document(project, text=hostile)
    make_claim(
        document,
        value='<img src=x onerror="window.__pwned = 3">',
        context="<script>window.__pwned = 4</script>",
        **aligned(document, 7, 42),
    )
    page = new_page()
    log_in(page, "ann1", "ann1-pass")
    page.goto(f"/projects/{project.pk}/label/")
    _shown(page)
    page.keyboard.press("e")
    page.wait_for_selector("#doc.expanded")
    assert page.text_content("#doc").strip() == hostile
    context = page.text_content("[data-diff=context]")
    assert "<script>window.__pwned = 4</script>" in context
    assert (
        page.text_content("[data-field=value_display]")
        == '<img src=x onerror="window.__pwned = 3">'
    )
    assert page.text_content(".d-hit") == hostile[7:42]
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("#labeling script, #labeling img, #labeling b").count() == 0
    page.screenshot(
        path=str(artifacts / "label-screen-html-as-text.png"), full_page=True
    )


def test_page_loads_each_of_its_modules_once_under_the_csp(personas, new_page):
    # label.js imports the modules under js/label/, which the template also
    # preloads: a preload under another URL than the import's (a hashed name
    # against an unhashed one, say) would fetch a module twice. The CSP allows
    # only same-origin scripts; a violation is logged as a console error.
    _corpus(personas.project, n_docs=1, per_doc=2)
    page = new_page()
    log_in(page, "ann1", "ann1-pass")
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    scripts = []
    page.on(
        "response",
        lambda r: scripts.append((r.url, r.status)) if "/js/" in r.url else None,
    )
    page.goto(f"/projects/{personas.project.pk}/label/")
    _shown(page)
    page.wait_for_selector("#sync:text('all saved')")
    # One file per module, hashed (STATIC_MANIFEST) or not.
    modules = [re.sub(r"(\.[0-9a-f]{12})?\.js(\?.*)?$", "", url) for url, _ in scripts]
    assert len(modules) == len(set(modules)), modules
    assert all(status == 200 for _, status in scripts), scripts
    assert any("/js/label/" in url for url in modules)
    assert errors == []


def test_a_refused_label_is_set_aside_with_its_reason_and_can_be_resent_or_discarded(
    personas, new_page, artifacts
):
    project = personas.project
    project.overlap_share = 0.0
    project.save()
    _corpus(project, n_docs=2)
    page = new_page()
    log_in(page, "ann1", "ann1-pass")
    refuse = set()  # claims whose labels a proxy refuses (413)
    refused_posts = []

    def proxy(route, request):
        labels = (request.post_data_json or {}).get("labels", [])
        if request.method == "POST" and {x["claim"] for x in labels} & refuse:
            refused_posts.append(labels)
            route.fulfill(status=413, content_type="text/html", body="<h1>Too big</h1>")
        else:
            route.continue_()

    page.route("**/labels/", proxy)
    page.goto(f"/projects/{project.pk}/label/")

    # The note has a visible limit.
    first = _shown(page)
    page.keyboard.press("n")
    assert page.get_attribute("#note-input", "maxlength") == "10000"
    page.keyboard.type("kept in the browser")
    assert page.text_content("#note-count") == "19 / 10,000"
    page.keyboard.press("Enter")
    refuse.add(first)
    _press(page, "k", first)
    page.wait_for_selector("#failed-button:text('1 set aside')")

    # Later labels still go through, and one the server itself refuses (its
    # claim deleted meanwhile) is set aside too.
    later = []
    for _ in range(3):
        later.append(_shown(page))
        _press(page, "s", later[-1])
    gone = _shown(page)
    Claim.objects.filter(pk=gone).delete()
    _press(page, "s", gone)
    page.wait_for_selector("#failed-button:text('2 set aside')")
    page.wait_for_function(
        "() => Object.entries(localStorage)"
        ".filter(([k]) => k.startsWith('safepassage:outbox:'))"
        ".every(([, v]) => JSON.parse(v).length === 0)"
    )
    stored = Label.objects.filter(annotator=personas.annotator)
    assert sorted(stored.values_list("claim_id", flat=True)) == sorted(later)
    # A 4xx is an answer, not a hiccup: sent once, never retried.
    assert len(refused_posts) == 1

    page.click("#failed-button")
    rows = page.locator("#failed-rows tr")
    assert rows.count() == 2
    proxied = rows.filter(has_text="HTTP 413")
    assert "unsafe ✎" in proxied.text_content()
    assert "no such claim" in rows.nth(1).text_content()
    page.screenshot(path=str(artifacts / "label-screen-set-aside.png"), full_page=True)

    refuse.clear()
    proxied.get_by_role("button", name="Resend").click()
    page.wait_for_function(
        "() => document.querySelectorAll('#failed-rows tr').length == 1"
    )
    gone_row = rows.filter(has_text="no such claim")
    gone_row.get_by_role("button", name="Discard").click()
    page.wait_for_selector("#failed", state="hidden")
    assert page.is_hidden("#failed-button")
    wait_all_sent(page)
    resent = Label.objects.get(claim_id=first)
    assert (resent.label, resent.note) == ("unsafe", "kept in the browser")
    assert stored.count() == 4
    assert page.evaluate(
        "() => Object.entries(localStorage)"
        ".filter(([k]) => k.startsWith('safepassage:failed:'))"
        ".every(([, v]) => JSON.parse(v).length === 0)"
    )


def _legal_text():
    # Lines of different lengths, so windows cut at lines and at words.
    return "\n".join(
        f"{i}. The tribunal weighed the appellant's submission on ground {i}"
        + " and found the reasoning of the decision below persuasive" * (1 + i % 3)
        + "."
        for i in range(40)
    )


def test_each_item_says_why_it_is_shown_and_a_context_not_found_is_said_plainly(
    personas, new_page, artifacts
):
    project = personas.project
    project.overlap_share = 0.0
    project.gold_share = 0.0
    project.show_machine_scores = False
    project.save()
    text = _legal_text()
    document = make_document(project, external_id="opinion", text=text)
    at = text.index("20. The tribunal")
    copied = text[at : at + len("20. The tribunal weighed")]
    unscored = make_claim(
        document,
        value="the tribunal",
        context=copied,
        **aligned(document, at, at + len(copied), 1.0),
        verdict="unscored",
        uncertainty=0.0,
    )
    invented = "the appeal was heard in Montreal by a panel of three"
    meaningless = text.index("ground 25") + len("ground ")
    not_found = make_claim(
        document,
        value="Montreal",
        context=invented,
        **aligned(document, meaningless, meaningless + 12, 0.3),
        verdict="unsafe",
        reason="not_in_document",
    )
    changed = make_claim(
        document,
        value="ground 12",
        context="ground 12 and found the reasonning",
        **aligned(document, *_span(text, "ground 12 and found the reasoning"), 0.9),
        verdict="safe",
        score=0.95,
        uncertainty=0.45,
    )
    page = new_page()
    log_in(page, "ann1", "ann1-pass")
    page.goto(f"/projects/{project.pk}/label/")
    seen = []
    for _ in range(3):
        if seen:
            _press(page, " ", seen[-1])  # unsure: on to the next
        shown = _shown(page)
        seen.append(shown)
        why = page.text_content("#why")
        context = page.text_content("[data-diff=context]")
        span_row = page.text_content("[data-diff=premise]")
        legend = page.is_visible("[data-diff-legend]")
        doc = page.text_content("#doc")
        assert page.is_hidden("#machine")
        if shown == unscored.pk:
            assert "No scorer has judged this yet" in why
            assert page.text_content(".d-hit") == copied
            # The context agrees with the document: nothing to explain.
            assert not legend
            # The excerpt starts and ends on word boundaries of the document.
            assert doc.startswith("… ") and doc.endswith(" …")
            excerpt = doc[2:-2]
            start = text.index(excerpt)
            assert text[start - 1].isspace() and not excerpt[0].isspace()
            end = start + len(excerpt)
            assert text[end].isspace() and not excerpt[-1].isspace()
            page.screenshot(path=str(artifacts / "label-why-unscored.png"))
        elif shown == not_found.pk:
            assert "Flagged: not in document" in why
            assert context == invented
            assert "Not found in the document" in span_row
            assert page.locator("#doc .d-hit").count() == 0
            # Shown as claimed, with no diff against a meaningless span.
            assert page.locator("[data-diff] span:not(.d-none)").count() == 0
            assert not legend
            page.screenshot(path=str(artifacts / "label-why-not-found.png"))
        else:
            assert shown == changed.pk
            assert "Spot check of an item judged safe" in why
            assert "0.95" not in page.text_content("#item")
            assert legend
    assert sorted(seen) == sorted([unscored.pk, not_found.pk, changed.pk])


def _span(text, part):
    start = text.index(part)
    return start, start + len(part)


def test_labels_waiting_in_an_outbox_of_the_last_release_are_sent_as_claims(
    personas, new_page
):
    """The last release's page kept its unsent labels under `prediction`: the
    upgraded page reads them as claims, sends them and stores them."""
    project = personas.project
    _corpus(project, n_docs=1, per_doc=2)
    waiting = Claim.objects.filter(project=project).last()
    page = new_page()
    log_in(page, "ann1", "ann1-pass")
    sent = []
    page.on(
        "request",
        lambda r: (
            sent.extend((r.post_data_json or {}).get("labels", []))
            if r.method == "POST" and r.url.endswith("/labels/")
            else None
        ),
    )
    page.goto(f"/projects/{project.pk}/label/")
    _shown(page)
    old_op = {
        "kind": "label",
        "client_id": "6f1c2a4e-0b7d-4c55-9a39-2d1e8f0c7b11",
        "prediction": waiting.pk,
        "label": "unsafe",
        "note": "written before the upgrade",
    }
    key = f"safepassage:outbox:{personas.annotator.pk}:{project.pk}"
    page.evaluate(
        "([k, op]) => localStorage.setItem(k, JSON.stringify([op]))", [key, old_op]
    )
    page.reload()
    wait_all_sent(page)
    assert [(x.get("claim"), "prediction" in x) for x in sent] == [(waiting.pk, False)]
    label = Label.objects.get(annotator=personas.annotator)
    assert (label.claim_id, label.label, label.note) == (
        waiting.pk,
        "unsafe",
        "written before the upgrade",
    )
