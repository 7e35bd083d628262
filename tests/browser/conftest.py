"""Real headless Chromium (Debian's package) driven by Playwright against
pytest-django's live server. Tests here need committed data, so they are
marked ``django_db(transaction=True)``."""

import os
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

# Playwright's sync API runs an event loop in this thread; the ORM calls the
# tests make between browser steps are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(
            f"{CHROMIUM} is missing: browser tests need Debian's Chromium "
            "(apt-get install -y chromium), or CHROMIUM=/path/to/chromium"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture
def site(live_server, settings):
    # The live server speaks plain HTTP; production-like secure cookies would
    # never be sent back.
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    return live_server.url


@pytest.fixture
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def new_page(browser, site):
    contexts = []

    def make():
        context = browser.new_context(
            base_url=site, viewport={"width": 1400, "height": 900}
        )
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def log_in(page, username, password):
    """By keyboard alone, on the login page."""
    page.goto("/login/")
    # The username field has autofocus, which Chromium applies a frame after
    # "load": typing before that lost the first character.
    page.wait_for_function("document.activeElement?.name === 'username'")
    page.keyboard.type(username)
    page.keyboard.press("Tab")
    page.keyboard.type(password)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/login/" not in url)


def project_over_api(admin, *, name, kind, expert):
    """A project made over the API by ``admin`` (an admin's API client),
    with ``expert`` as its expert and no overlap."""
    from annotator.models import Project

    response = admin.post(
        "/api/projects/",
        {"name": name, "kind": kind, "overlap_share": 0.0},
        format="json",
    )
    assert response.status_code == 201, response.content
    project = Project.objects.get(pk=response.json()["id"])
    response = admin.post(
        f"/api/projects/{project.pk}/members/",
        {"user": expert.pk, "role": "expert"},
        format="json",
    )
    assert response.status_code == 200, response.content
    return project


def label_by_key(page, key):
    """Press a labeling key and wait for the next item (or the end)."""
    before = page.get_attribute("#item", "data-claim-id")
    page.keyboard.press(key)
    page.wait_for_function(
        "before => document.querySelector('#item').dataset.claimId"
        " != before || !document.querySelector('#empty').hidden",
        arg=before,
    )


def wait_all_sent(page):
    """Until the labeling page's outbox is empty and it says so."""
    page.wait_for_function(
        "() => Object.entries(localStorage)"
        ".filter(([k]) => k.startsWith('safepassage:outbox:'))"
        ".every(([, v]) => JSON.parse(v).length === 0)"
    )
    page.wait_for_selector("#sync:text('all saved')")


def stored_labels(expert) -> dict:
    """The labels ``expert`` stored, by the labelled claim's value (as its
    kind's record has it)."""
    from annotator.claims.records import claim_record
    from annotator.models import Label

    return {
        claim_record(a.claim, a.claim.project.kind).value: a.label
        for a in Label.objects.filter(annotator=expert).select_related("claim__project")
    }
