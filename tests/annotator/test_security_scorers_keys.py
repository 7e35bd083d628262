"""Issue 27, items 1 and 7: no scorer crosses projects, no key follows a URL.

1. A training run's ``base`` was any folder under VAR_DIR/scorers, where
   every project's versions live in predictable folders: project A trained
   from B's scorer and downloaded the copy. A base is now a model or shared
   folder the deployment lists, or one of the project's own versions by id.
2. Keys and endpoints were allow-listed apart, with a ``*`` port: a project's
   key went to any port of an allowed host. Each key is now bound to its
   endpoints, each endpoint names its port.
"""

from __future__ import annotations

import io
import os
import zipfile
from types import SimpleNamespace

import pytest
from django.core.exceptions import ImproperlyConfigured, ValidationError

from annotator.core import env as env_vars
from annotator.core.errors import ApplicationError
from annotator.kinds.extraction import tasks as extraction_tasks
from annotator.kinds.extraction.extraction_runs import extraction_run_start
from annotator.models import Membership, Project, Role, ScorerModel, TrainingRun
from annotator.training import config
from tests.annotator.factories import make_document, make_project
from tests.annotator.settings import FAKE_OPENAI_URL
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db

KEY = "SAFEPASSAGE_TEST_KEY"
MODEL = "fake-model"


# --- 1. scorers stay in their project -----------------------------------------


def _trained(project: Project, run: int, marker: str) -> ScorerModel:
    """A version training wrote for ``project``, in its predictable folder."""
    from annotator.core.allowlists import project_scorers_dir

    folder = project_scorers_dir(project.pk) / f"run-{run}"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "marker.txt").write_text(marker)
    return ScorerModel.objects.create(
        project=project, version=f"v{run}", base_model="b", path=str(folder)
    )


@pytest.fixture
def two_projects(settings, tmp_path, django_user_model):
    settings.VAR_DIR = tmp_path
    a, b = make_project(name="project-a"), make_project(name="project-b")
    admin = django_user_model.objects.create_user("a-admin", password="pw-x1!")
    Membership.objects.create(project=a, user=admin, role=Role.ADMIN)
    return SimpleNamespace(
        a=a,
        b=b,
        admin=admin,
        mine=_trained(a, 1, "A's own"),
        theirs=_trained(b, 2, "B's secret"),
        tmp=tmp_path,
    )


def _start(api, ctx, base):
    return api(ctx.admin).post(
        "/api/training-runs/",
        {"project": ctx.a.pk, "params": {"base": base}},
        format="json",
    )


def test_another_projects_scorer_is_no_base_by_folder_or_by_id(
    two_projects, api, settings
):
    ctx = two_projects
    # Even a deployment that lists the trained scorers' folder as a root (the
    # old default) does not open one project's versions to another.
    settings.SCORER_ROOTS = [(ctx.tmp / "scorers").resolve()]
    by_folder = _start(api, ctx, ctx.theirs.path)
    assert by_folder.status_code == 400, by_folder.content
    assert "base:" in by_folder.json()["detail"]
    assert "named by its id" in by_folder.json()["detail"]
    by_id = _start(api, ctx, ctx.theirs.pk)
    assert by_id.status_code == 400, by_id.content
    # The same answer as for an id no project has: ids are not disclosed.
    assert by_id.json()["detail"] == (
        f"base: this project has no scorer version {ctx.theirs.pk}"
    )
    assert not TrainingRun.objects.filter(project=ctx.a).exists()


def test_a_projects_own_scorer_is_a_base_by_id_and_resolves_to_its_folder(
    two_projects, api
):
    ctx = two_projects
    response = _start(api, ctx, ctx.mine.pk)
    assert response.status_code == 201, response.content
    run = TrainingRun.objects.get(pk=response.json()["id"])
    assert run.params == {"base": ctx.mine.pk}
    assert run.base_model == ctx.mine.path
    # The worker resolves the id again, within the run's project.
    assert config.train_config(run.params, project=ctx.a).base == ctx.mine.path
    with pytest.raises(ApplicationError, match="no scorer version"):
        config.train_config(run.params, project=ctx.b)


def test_a_row_pointing_at_another_projects_folder_is_never_served_or_loaded(
    two_projects, api
):
    """A row written by hand (or before the rule) naming B's folder."""
    ctx = two_projects
    stolen = ScorerModel.objects.create(
        project=ctx.a, version="stolen", base_model="b", path=ctx.theirs.path
    )
    client = api(ctx.admin)
    download = client.get(f"/api/scorer-models/{stolen.pk}/download/")
    assert download.status_code == 400
    assert "SCORER_ROOTS" in download.json()["detail"]
    activate = client.post(f"/api/scorer-models/{stolen.pk}/activate/")
    assert activate.status_code == 400
    assert "cannot be activated" in activate.json()["detail"]
    stolen.refresh_from_db()
    assert not stolen.is_active
    # The project's own version still downloads.
    own = client.get(f"/api/scorer-models/{ctx.mine.pk}/download/")
    assert own.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(own.streaming_content)))
    assert archive.read("project-a-v1/marker.txt") == b"A's own"


def test_the_admin_form_refuses_another_projects_folder(two_projects):
    ctx = two_projects
    row = ScorerModel(project=ctx.a, version="v9", base_model="b", path=ctx.theirs.path)
    with pytest.raises(ValidationError) as refused:
        row.full_clean()
    assert "another project's" in str(refused.value.message_dict["path"])
    ScorerModel(
        project=ctx.a, version="v9", base_model="b", path=ctx.mine.path
    ).full_clean()


BAD_BASES = {
    "relative traversal": lambda c: f"../scorers/project-{c.b.pk}/run-2",
    "traversal out of a shared root": lambda c: str(
        c.tmp / "shared" / ".." / "scorers" / f"project-{c.b.pk}" / "run-2"
    ),
    "absolute path outside the roots": lambda c: "/etc",
    "every project's folders": lambda c: str(c.tmp / "shared" / ".." / "scorers"),
    "own folder by path": lambda c: c.mine.path,
    "another project's id": lambda c: c.theirs.pk,
    "an id no project has": lambda c: c.theirs.pk + 1000,
    "id as a string": lambda c: str(c.mine.pk),
    "non-integer id": lambda c: 1.5,
    "boolean": lambda c: True,
    "negative id": lambda c: -c.mine.pk,
    "id past bigint": lambda c: 2**70,
    "object": lambda c: {"id": c.mine.pk},
    "null": lambda c: None,
}


@pytest.mark.bad_input
@pytest.mark.parametrize("make", BAD_BASES.values(), ids=BAD_BASES)
def test_a_bad_training_base_is_a_400_naming_base(two_projects, api, settings, make):
    ctx = two_projects
    # A shared folder, and the trained scorers' folder as the old default had.
    (ctx.tmp / "shared").mkdir()
    settings.SCORER_ROOTS = [(ctx.tmp / d).resolve() for d in ("shared", "scorers")]
    response = _start(api, ctx, make(ctx))
    assert response.status_code == 400, response.content
    assert response.json()["detail"].startswith("base: ")
    assert not TrainingRun.objects.filter(project=ctx.a).exists()


def test_a_shared_root_and_a_listed_model_are_still_bases(two_projects, api, settings):
    ctx = two_projects
    shared = ctx.tmp / "shared" / "legal-nli"
    shared.mkdir(parents=True)
    settings.SCORER_ROOTS = [shared.parent.resolve()]
    assert config.train_config({"base": str(shared)}).base == str(shared)
    listed = settings.SCORER_MODELS[0]
    assert config.train_config({"base": listed}).base == listed


# --- 7. each key goes to its own endpoints ------------------------------------


@pytest.fixture
def other_endpoint(settings):
    """A second allowed endpoint (another port of the same host), bound to no
    key: a listener that records what reaches it."""
    other = FakeOpenAI().start()
    settings.LLM_BASE_URLS = [FAKE_OPENAI_URL, other.base_url]
    settings.LLM_API_KEY_ENVS = {KEY: [FAKE_OPENAI_URL]}
    yield other
    other.stop()


def test_a_key_pointed_at_an_endpoint_it_is_not_bound_to_is_refused_at_save(
    personas, api, other_endpoint
):
    project = personas.project
    client = api(personas.admin)
    response = client.patch(
        f"/api/projects/{project.pk}/",
        {"llm_base_url": other_endpoint.base_url, "llm_api_key_env": KEY},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert "LLM_API_KEY_ENVS" in str(response.json()["llm_api_key_env"])
    # The key on its own endpoint is fine; moving the endpoint alone is not.
    bound = {"llm_base_url": FAKE_OPENAI_URL, "llm_api_key_env": KEY}
    assert (
        client.patch(f"/api/projects/{project.pk}/", bound, format="json").status_code
        == 200
    )
    moved = client.patch(
        f"/api/projects/{project.pk}/",
        {"llm_base_url": other_endpoint.base_url},
        format="json",
    )
    assert moved.status_code == 400, moved.content
    project.refresh_from_db()
    assert (project.llm_base_url, project.llm_api_key_env) == (FAKE_OPENAI_URL, KEY)
    # Without a key, the other endpoint is an allowed one.
    keyless = client.patch(
        f"/api/projects/{project.pk}/",
        {"llm_base_url": other_endpoint.base_url, "llm_api_key_env": ""},
        format="json",
    )
    assert keyless.status_code == 200, keyless.content


def test_a_stored_key_never_reaches_an_endpoint_it_is_not_bound_to(
    other_endpoint, settings, monkeypatch
):
    """A row saved before the rule: the worker refuses it before any request
    leaves; bound to that endpoint, the same run sends the key there."""
    monkeypatch.setenv(KEY, "the-real-key")
    project = make_project(llm_models=[MODEL])
    Project.objects.filter(pk=project.pk).update(
        llm_base_url=other_endpoint.base_url, llm_api_key_env=KEY
    )
    project.refresh_from_db()
    make_document(project, external_id="d1")
    run = extraction_run_start(project=project, model=MODEL)
    assert extraction_tasks.run_extraction(run.pk)["status"] == "failed"
    run.refresh_from_db()
    assert "may only be sent to" in run.error
    assert other_endpoint.requests == []

    # The listener does see the key once the deployment binds it there.
    settings.LLM_API_KEY_ENVS = {KEY: [other_endpoint.base_url]}
    other_endpoint.reply_json({"entities": []})
    again = extraction_run_start(project=project, model=MODEL)
    assert extraction_tasks.run_extraction(again.pk)["status"] == "succeeded"
    authorization = {r.headers.get("authorization") for r in other_endpoint.requests}
    assert authorization == {"Bearer the-real-key"}


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/v1",  # no port: the scheme's (80), which is not listed
        "http://127.0.0.1:*/v1",  # a wildcard is no port
        "http://127.0.0.1:0/v1",
        "http://127.0.0.1:99999/v1",
        "http://localhost:{port}/v1",  # another name: the list names the host
        "http://user:pw@127.0.0.1:{port}/v1",
        "http://127.0.0.1:{port}/v1?redirect=elsewhere",
        "http://127.0.0.1:{port}/v1#x",
        "ftp://127.0.0.1:{port}/v1",
    ],
)
def test_an_endpoint_that_is_not_the_listed_one_is_a_400(personas, api, url):
    url = url.format(port=os.environ["FAKE_OPENAI_PORT"])
    response = api(personas.admin).patch(
        f"/api/projects/{personas.project.pk}/", {"llm_base_url": url}, format="json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["llm_base_url"]
    personas.project.refresh_from_db()
    assert personas.project.llm_base_url == ""


@pytest.mark.bad_input
@pytest.mark.parametrize("name", ["OTHER_KEY", "SECRET_KEY", "safepassage_test_key"])
def test_a_key_variable_not_bound_to_the_endpoint_is_a_400(
    personas, api, other_endpoint, settings, name
):
    settings.LLM_API_KEY_ENVS = {
        KEY: [FAKE_OPENAI_URL],
        "OTHER_KEY": [other_endpoint.base_url],
    }
    response = api(personas.admin).patch(
        f"/api/projects/{personas.project.pk}/",
        {"llm_base_url": FAKE_OPENAI_URL, "llm_api_key_env": name},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert "LLM_API_KEY_ENVS" in str(response.json()["llm_api_key_env"])
    personas.project.refresh_from_db()
    assert personas.project.llm_api_key_env == ""


def test_key_bindings_are_read_from_the_environment(monkeypatch):
    monkeypatch.setenv(
        "SAFEPASSAGE_PROBE",
        "A=https://api.openai.com/v1,A=http://10.0.0.5:8000/v1/,B=http://10.0.0.5:8000/v1",
    )
    urls = ["https://api.openai.com/v1", "http://10.0.0.5:8000/v1"]
    assert env_vars.env_key_bindings("SAFEPASSAGE_PROBE", urls) == {
        "A": ["https://api.openai.com/v1", "http://10.0.0.5:8000/v1/"],
        "B": ["http://10.0.0.5:8000/v1"],
    }
    # The form before the binding: a bare name, one endpoint.
    monkeypatch.setenv("SAFEPASSAGE_PROBE", "OPENAI_API_KEY")
    assert env_vars.env_key_bindings("SAFEPASSAGE_PROBE", urls[:1]) == {
        "OPENAI_API_KEY": urls[:1]
    }


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "helper, raw, message",
    [
        ("urls", "http://127.0.0.1:*/v1", "no wildcard"),
        ("urls", "http://127.0.0.1:port/v1", "no wildcard"),
        ("urls", "127.0.0.1:8000", r"not an http\(s\) URL"),
        ("keys", "OPENAI_API_KEY", "names no endpoint"),
        ("keys", "OPENAI_API_KEY=http://127.0.0.1:9/v1", "does not list"),
    ],
)
def test_a_deployment_list_that_leaves_a_key_unbound_refuses_to_start(
    monkeypatch, helper, raw, message
):
    monkeypatch.setenv("SAFEPASSAGE_PROBE", raw)
    two = ["https://api.openai.com/v1", "http://10.0.0.5:8000/v1"]
    with pytest.raises(ImproperlyConfigured, match=message):
        if helper == "urls":
            env_vars.env_endpoints("SAFEPASSAGE_PROBE")
        else:
            env_vars.env_key_bindings("SAFEPASSAGE_PROBE", two)
