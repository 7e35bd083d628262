import re
import xml.etree.ElementTree as ET
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotator.dashboard import stats
from annotator.labeling import gold
from annotator.models import Claim, Label, ScorerModel, TrainingRun
from tests.annotator.factories import make_claim, make_document, make_project

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert("x")</script>'


def label(claim, user, value, *, seconds=None, **fields):
    return Label.objects.create(
        claim=claim,
        annotator=user,
        label=value,
        seconds_spent=seconds,
        **fields,
    )


@pytest.fixture
def project(personas):
    """Two source LLMs, verdicts, alignment scores and two experts' labels."""
    project = personas.project
    document = make_document(project, external_id="decision-1")
    # gpt-x: 4 safe, 2 unsafe, 1 unchecked; llama: 1 safe, 1 unsafe.
    verdicts = {
        "gpt-x": ["safe"] * 4 + ["unsafe"] * 2 + [""],
        "llama": ["safe", "unsafe"],
    }
    align = iter([0.1, 0.62, 0.65, 1.0, 0.99, 0.97, None, 0.8, 0.3])
    rows = []
    for model, vs in verdicts.items():
        for v in vs:
            rows.append(
                make_claim(document, model=model, verdict=v, evidence_score=next(align))
            )
    project.rows = rows
    return project


def test_experts_get_403_outsiders_404_anonymous_a_login_redirect(personas, client):
    url = f"/projects/{personas.project.pk}/dashboard/"
    assert client.get(url).status_code == 302
    assert "/login/" in client.get(url)["Location"]
    client.force_login(personas.annotator)
    denied = client.get(url)
    assert denied.status_code == 403
    # A page of the app, saying why, with the way back.
    html = denied.content.decode()
    assert "Not allowed" in html and "needs the role admin" in html
    assert 'href="/"' in html and 'class="topbar"' in html
    # Outsiders cannot tell the project exists, as everywhere else.
    client.force_login(personas.outsider)
    missing = client.get(url)
    assert missing.status_code == 404
    assert "Not found" in missing.content.decode()
    client.force_login(personas.admin)
    assert client.get(url).status_code == 200
    assert client.get("/projects/999999/dashboard/").status_code == 404


def test_dashboard_is_linked_for_admins_only(personas, client):
    link = f"/projects/{personas.project.pk}/dashboard/"
    client.force_login(personas.annotator)
    assert link not in client.get("/").content.decode()
    client.force_login(personas.admin)
    assert link in client.get("/").content.decode()
    page = client.get(f"/projects/{personas.project.pk}/claims/")
    assert link in page.content.decode()


def test_overview_counts_labelled_share_and_unsafe_rate(project, personas):
    a = project.rows
    label(a[0], personas.annotator, "safe")
    label(a[0], personas.annotator2, "unsafe")
    label(a[1], personas.annotator, "unsure")  # not decisive: not labelled
    Label.objects.create(claim=a[2], label="unsafe", source="import")
    o = stats.overview(project)
    assert (o["documents"], o["claims"], o["checked"], o["unchecked"]) == (
        1,
        9,
        8,
        1,
    )
    assert o["unsafe_rate"] == 3 / 8
    assert (o["labelled"], o["labels"], o["unsure"]) == (2, 3, 1)
    assert o["labelled_share"] == 2 / 9


def test_kappa_on_pairs_of_decisive_labels_from_two_experts(project, personas):
    # 10 overlap items: both safe 4, both unsafe 3, safe/unsafe 2, unsafe/safe 1:
    # p_o 0.7, p_e (6*5 + 4*5) / 100 = 0.5, kappa 0.4.
    document = make_document(project)
    cells = [("safe", "safe")] * 4 + [("unsafe", "unsafe")] * 3
    cells += [("safe", "unsafe")] * 2 + [("unsafe", "safe")]
    for first, second in cells:
        p = make_claim(document)
        label(p, personas.annotator, first)
        label(p, personas.annotator2, second)
    # Not pairs: one expert only, an unsure, and an imported label.
    single = make_claim(document)
    label(single, personas.annotator, "unsafe")
    unsure = make_claim(document)
    label(unsure, personas.annotator, "safe")
    label(unsure, personas.annotator2, "unsure")
    label(single, None, "safe", source="import")
    result = stats.agreement(project)
    assert result["kappa"] == 0.4
    assert result["strength"] == "fair"
    assert (result["pairs"], result["items"], result["observed"]) == (10, 10, 0.7)
    assert result["matrix"] == {
        "safe": {"safe": 4, "unsafe": 2},
        "unsafe": {"safe": 1, "unsafe": 3},
    }


def test_kappa_without_overlap_is_undefined(project, personas):
    label(project.rows[0], personas.annotator, "safe")
    result = stats.agreement(project)
    assert (result["kappa"], result["pairs"], result["observed"]) == (None, 0, None)
    assert result["strength"] == "undefined"


def bulk_labels(project, user, seconds: list[float | None]) -> None:
    """One label by ``user`` per entry of ``seconds``, each on a new claim."""
    document = make_document(project)
    claims = Claim.objects.bulk_create(
        Claim(
            project=project,
            document=document,
            external_id=f"bulk-{document.pk}-{i}",
            data={"type": "GPE", "value": "Toronto", "context": ""},
        )
        for i in range(len(seconds))
    )
    Label.objects.bulk_create(
        Label(claim=p, annotator=user, label="safe", seconds_spent=s)
        for p, s in zip(claims, seconds, strict=True)
    )


def test_pace_is_the_median_over_plausible_times_not_scripted_bursts(project, personas):
    # 20 read items at 10 s, 500 scripted at 0 s, 3 breaks, 2 untimed.
    bulk_labels(project, personas.annotator, [10.0] * 20 + [0.0] * 500 + [3600.0] * 3)
    bulk_labels(project, personas.annotator, [None, None])
    now = timezone.now()
    Label.objects.filter(annotator=personas.annotator).update(
        created_at=now - timedelta(hours=1)
    )
    label(project.rows[0], personas.annotator, "unsafe", seconds=10.0)
    rates = {r["annotator"]: r for r in stats.labels_per_hour(project)}
    ann1 = rates["ann1"]
    assert (ann1["labels"], ann1["paced"], ann1["too_fast"], ann1["breaks"]) == (
        526,
        21,
        500,
        3,
    )
    assert ann1["untimed"] == 2
    assert ann1["median_seconds"] == pytest.approx(10.0)
    assert ann1["per_hour"] == pytest.approx(360)
    assert ann1["first"] < ann1["last"]


def test_a_scripted_expert_gets_no_pace_rather_than_thousands_an_hour(
    project, personas
):
    bulk_labels(project, personas.annotator2, [0.25] * 300)  # 14,400 "an hour"
    bulk_labels(project, personas.annotator, [8.0, 12.0, 9.0, 400.0])
    rates = {r["annotator"]: r for r in stats.labels_per_hour(project)}
    assert rates["ann2"]["labels"] == 300 and rates["ann2"]["too_fast"] == 300
    assert rates["ann2"]["per_hour"] is None
    assert rates["ann1"]["per_hour"] == pytest.approx(400)  # median 9 s


def test_per_llm_safepassage_score_beside_human_score(project, personas):
    gpt = [p for p in project.rows if p.model == "gpt-x"]
    label(gpt[0], personas.annotator, "safe")
    label(gpt[0], personas.annotator2, "unsafe")  # disagreement counts half
    label(gpt[4], personas.annotator, "unsafe")
    label(gpt[5], personas.annotator, "unsure")  # not decisive
    rows = {r["model"]: r for r in stats.llm_scores(project)}
    assert rows["gpt-x"]["claims"] == 7
    assert rows["gpt-x"]["safepassage_score"] == 4 / 6  # of the checked ones
    assert rows["gpt-x"]["labels"] == 3
    assert rows["gpt-x"]["human_score"] == 1 / 3
    assert rows["llama"]["safepassage_score"] == 0.5
    assert (rows["llama"]["labels"], rows["llama"]["human_score"]) == (0, None)


def test_the_page_says_how_well_safepassage_ranks_the_llms(personas, client):
    """Figure 5 as one number: three LLMs whose SafePassage and human scores
    rank them alike give rho 1."""
    document = make_document(personas.project, external_id="decision-rho")
    for model, n_safe in (("best", 3), ("mid", 2), ("worst", 1)):
        for i in range(3):
            verdict = "safe" if i < n_safe else "unsafe"
            row = make_claim(document, model=model, verdict=verdict)
            label(row, personas.annotator, verdict)
    assert stats.dashboard(personas.project)["llm_rank_rho"] == 1.0
    client.force_login(personas.admin)
    page = client.get(f"/projects/{personas.project.pk}/dashboard/")
    assert "Spearman's rho between the two across LLMs: 1.00" in page.text


def test_learning_curve_points_come_from_measured_versions(project):
    def scorer(version, labels, f1, active=False):
        return ScorerModel.objects.create(
            project=project,
            version=version,
            base_model="base",
            path="/tmp/x",
            expert_labels=labels,
            gold_f1=f1,
            is_active=active,
        )

    scorer("v2", 200, 0.81, active=True)
    scorer("v1", 0, 0.42)
    scorer("v3", 400, None)
    curve = stats.learning_curve(stats.scorer_versions(project))
    assert curve["points"] == [
        {"version": "v1", "expert_labels": 0, "gold_f1": 0.42, "active": False},
        {"version": "v2", "expert_labels": 200, "gold_f1": 0.81, "active": True},
    ]
    assert curve["unmeasured"] == ["v3"]


def test_pr_curve_uses_only_gold_document_labels(personas):
    project = personas.project
    project.gold_share = 0.5
    project.save()
    documents = [make_document(project) for _ in range(12)]
    gold_doc = next(d for d in documents if gold.is_gold_document(project, d.pk))
    train_doc = next(d for d in documents if not gold.is_gold_document(project, d.pk))
    for score, value in [
        (0.1, "unsafe"),
        (0.3, "unsafe"),
        (0.4, "safe"),
        (0.9, "safe"),
    ]:
        p = make_claim(gold_doc, score=score, verdict="safe")
        label(p, personas.annotator, value)
    # Training side: would spoil the curve if counted.
    p = make_claim(train_doc, score=0.95, verdict="safe")
    label(p, personas.annotator, "unsafe")
    ScorerModel.objects.create(
        project=project, version="v1", base_model="b", path="/x", threshold=0.35
    )
    active = ScorerModel.objects.get()
    pr = stats.gold_pr_curve(project, active)
    assert (pr["labels"], pr["unsafe"]) == (4, 2)
    assert [(p["precision"], p["recall"]) for p in pr["points"]] == [
        (1.0, 0.5),
        (1.0, 1.0),
        (0.6667, 1.0),
        (0.5, 1.0),
    ]
    assert pr["operating"]["f1"] == 1.0  # score < 0.35 flags exactly the unsafe


def test_alignment_histogram_is_binned_in_sql(project):
    counts = stats.evidence_histogram(project, bins=10)
    assert sum(counts) == 8  # one claim is not aligned
    assert counts[1] == 1 and counts[3] == 1 and counts[6] == 2
    assert counts[8] == 1 and counts[9] == 3  # 1.0 falls in the last bin


def test_page_shows_charts_numbers_and_version_buttons(project, personas, client):
    ScorerModel.objects.create(
        project=project, version="v1", base_model="b", path="/x", gold_f1=0.6
    )
    ScorerModel.objects.create(
        project=project,
        version="v2",
        base_model="b",
        path="/x",
        gold_f1=0.8,
        expert_labels=100,
        metrics={"validation": {"f1": 0.7771}},
        is_active=True,
    )
    ScorerModel.objects.create(project=project, version="v3", base_model="b", path="/x")
    client.force_login(personas.admin)
    html = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg"') == 6
    for title in (
        "Learning curve: gold-set F1 by expert labels",
        "Per source LLM: share safe",
        "Precision-recall on the gold set",
        "Reliability on the gold set",
        "Evidence scores",
        "Labels per hour per expert (median pace)",
    ):
        assert f"<title>{title}</title>" in html
    assert "38%" in html  # unsafe rate 3 / 8
    # v2's validation F1, as training stores it: from before training recorded
    # its split, so on expert labels.
    assert '<td class="val-f1">0.777 <small>(expert labels)</small></td>' in html
    # v1 is older than the active v2: a rollback; v3 is newer: a promotion.
    assert ">Roll back</button>" in html and ">Promote</button>" in html
    active = ScorerModel.objects.get(version="v2")
    assert f'href="/api/scorer-models/{active.pk}/download/"' in html
    assert 'data-action="retrain"' in html and "onclick" not in html


def test_hostile_model_names_and_usernames_are_escaped(project, personas, client):
    from django.contrib.auth import get_user_model

    expert = get_user_model().objects.create_user(HOSTILE, password="x")
    p = make_claim(project.rows[0].document, model=HOSTILE, verdict="unsafe")
    label(p, expert, "unsafe", seconds=12)
    ScorerModel.objects.create(
        project=project,
        version=HOSTILE,
        base_model=HOSTILE,
        path="/x",
        gold_f1=0.5,
        is_active=True,
    )
    client.force_login(personas.admin)
    html = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    # Every inlined chart is still a well-formed SVG document.
    start = 0
    while (start := html.find("<svg ", start)) != -1:
        end = html.index("</svg>", start) + len("</svg>")
        ET.fromstring(html[start:end])
        start = end


def test_query_count_does_not_grow_with_rows(project, personas, client):
    client.force_login(personas.admin)
    url = f"/projects/{project.pk}/dashboard/"
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    document = make_document(project)
    for i in range(40):
        p = make_claim(document, model=f"m{i % 4}", verdict="safe", score=0.5)
        label(p, personas.annotator, "safe", seconds=5)
        label(p, personas.annotator2, "unsafe", seconds=5)
    with CaptureQueriesContext(connection) as many:
        assert client.get(url).status_code == 200
    assert len(many.captured_queries) == len(few.captured_queries)


def test_demo_simulates_two_experts_on_overlap_items_only(personas):
    from types import SimpleNamespace

    from annotator.labeling.queue import is_overlap
    from annotator.management.commands.demo import Command
    from pipeline.types import Label as LabelRecord

    project = personas.project
    project.overlap_share = 0.5
    project.save()
    document = make_document(project)
    claims = [make_claim(document) for _ in range(80)]
    corpus = SimpleNamespace(
        labels=[
            LabelRecord(p.external_id, "unsafe" if i % 4 == 0 else "safe")
            for i, p in enumerate(claims)
        ]
    )
    command = Command()
    command.simulated_overlap_labels(project, corpus, items=30)
    command.simulated_overlap_labels(project, corpus, items=30)  # replaces
    simulated = Label.objects.filter(extra__simulated=True)
    assert simulated.count() == 60
    labelled = set(simulated.values_list("claim_id", flat=True))
    assert len(labelled) == 30
    assert all(is_overlap(project, pk) for pk in labelled)
    result = stats.agreement(project)
    assert result["items"] >= 25 and 0.5 < result["kappa"] <= 1.0
    rates = {r["annotator"]: r for r in stats.labels_per_hour(project)}
    assert set(rates) == {"demo-expert-1", "demo-expert-2"}
    for r in rates.values():
        assert 100 < r["per_hour"] < 400
        assert r["last"] - r["first"] > timedelta(minutes=5)


def f1_figures(html: str) -> list[str]:
    """Every number the page calls "F1", with the words that name it."""
    # The paper's Table 1 F1, the learning curve's reference line, is no version's.
    return re.findall(r"(?<!Table 1 )\bF1(?::| is)? (\d\.\d+)", html)


def test_a_version_s_f1_is_its_gold_f1_everywhere_validation_is_labelled(
    project, personas, client
):
    project.gold_share = 0.5
    project.save()
    documents = [make_document(project) for _ in range(12)]
    gold_doc = next(d for d in documents if gold.is_gold_document(project, d.pk))
    # Today's scores on the gold set: precision 0.5, recall 0.5 at 0.5 (F1 0.5,
    # a figure the page must not call F1).
    for score, value in [(0.1, "unsafe"), (0.3, "safe"), (0.6, "unsafe")]:
        p = make_claim(gold_doc, score=score, verdict="safe")
        label(p, personas.annotator, value)
    validation = {"f1": 0.83, "source": "silver", "flag_all_f1": 0.5}
    run = TrainingRun.objects.create(
        project=project,
        status="succeeded",
        trigger="first",
        val_f1=0.81,  # the last epoch's, before the threshold was tuned
        metrics={
            "version": "v1",
            "promoted": True,
            "gold": {"precision": 0.8, "recall": 0.76, "f1": 0.78},
            "validation": validation,
        },
    )
    ScorerModel.objects.create(
        project=project,
        version="v1",
        base_model="b",
        path="/x",
        threshold=0.5,
        gold_f1=0.78,
        metrics={"validation": validation, "gold": {"f1": 0.78}},
        training_run=run,
        is_active=True,
    )
    client.force_login(personas.admin)
    html = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    # The card, the learning curve's point, the PR caption: all 0.780.
    figures = f1_figures(html)
    assert len(figures) >= 3 and set(figures) == {"0.780"}
    assert "F1 0.780 (gold set)" in html  # the card
    assert "v1's F1 is 0.780, its gold-set F1" in html  # the PR caption
    # The versions table and the runs table: one gold F1 column each, 0.780.
    assert re.findall(r'<td class="gold-f1">([^<]*)</td>', html) == ["0.780"] * 2
    # Validation appears only under its own name, on silver pairs.
    silver = '<td class="val-f1">0.830 <small>(silver pairs)</small></td>'
    assert html.count(silver) == 2
    assert html.count("0.830") == 2
    assert "0.810" not in html  # the epoch's figure is superseded by the final
    # The PR chart's own operating point: precision and recall, never F1.
    assert "precision 0.5, recall 0.5." in html


def test_a_version_without_gold_labels_says_so(project, personas, client):
    ScorerModel.objects.create(
        project=project,
        version="v1",
        base_model="b",
        path="/x",
        metrics={"validation": {"f1": 0.91, "source": "human"}},
        is_active=True,
    )
    client.force_login(personas.admin)
    html = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert f1_figures(html) == []
    assert "F1: no gold labels yet" in html  # the card
    assert '<td class="gold-f1">no gold labels yet</td>' in html
    assert "v1's F1 is not known: no gold labels yet." in html
    assert '<td class="val-f1">0.910 <small>(expert labels)</small></td>' in html
    assert html.count("0.910") == 1


def test_a_running_training_shows_its_latest_epoch_as_validation(
    project, personas, client
):
    TrainingRun.objects.create(project=project, status="running", val_f1=0.61)
    client.force_login(personas.admin)
    html = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert '<td class="val-f1">0.610 <small>(latest epoch)</small></td>' in html
    assert '<td class="gold-f1">&ndash;</td>' in html
    assert f1_figures(html) == []


def test_the_alignment_histogram_shows_a_small_bin_beside_a_huge_one(personas):
    project = personas.project
    document = make_document(project)
    Claim.objects.bulk_create(
        Claim(
            project=project,
            document=document,
            external_id=f"h-{i}",
            data={"type": "GPE", "value": "Toronto", "context": ""},
            evidence_score=1.0 if i < 1000 else 0.7,
        )
        for i in range(1005)
    )
    svg = stats.dashboard(project)["charts"]["histogram"]
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    bars = {
        rect.find(f"{ns}title").text: float(rect.get("height"))
        for rect in root.iter(f"{ns}rect")
        if rect.get("class") == "bar"
    }
    assert bars["[0.95, 1.00]: 1000"] > 150
    assert bars["[0.70, 0.75): 5"] > 40  # about 1 pixel on a linear axis
    assert bars["[0.65, 0.70): 0"] == 0
    ticks = ["".join(t.itertext()) for t in root.iter(f"{ns}text")]
    assert {"0", "1", "10", "100", "1000"} <= set(ticks)
    assert "Claims (log scale)" in ticks


def test_page_shows_the_median_pace_and_no_absurd_rate(project, personas, client):
    bulk_labels(project, personas.annotator, [10.0] * 20 + [0.0] * 500)
    bulk_labels(project, personas.annotator2, [0.25] * 300)
    client.force_login(personas.admin)
    html = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert "Median pace" in html
    assert re.findall(r'<td class="pace">([^<]*)</td>', html) == ["360", "n/a"]
    assert "ann1: median pace 360 labels/hour (10.0 s a label, over 20 of 520" in html
    assert "14400" not in html and "14,400" not in html


@pytest.mark.parametrize("kind,marked", [("extraction", True), ("citations", False)])
def test_only_alignments_are_drawn_against_the_alignment_threshold(
    personas, kind, marked
):
    project = personas.project
    project.kind = kind
    project.save(update_fields=["kind"])
    svg = stats.dashboard(project)["charts"]["histogram"]
    texts = "".join(ET.fromstring(svg).itertext())
    assert ("keep >= " in texts) is marked


@pytest.mark.parametrize("kind", ["citations", "provenance", "consistency"])
def test_each_kinds_dashboard_holds_it_to_its_own_paper_or_none(personas, client, kind):
    extraction = personas.project
    make_claim(make_document(extraction), model="gpt-x")
    other = make_project(kind=kind)
    make_claim(make_document(other), model="")
    client.force_login(personas.admin)
    pages = {
        p.kind: client.get(f"/projects/{p.pk}/dashboard/").content.decode()
        for p in (extraction, other)
    }
    # Extraction is SafePassage's: its Table 1, its experts' pace, alignments.
    assert "paper Table 1 F1 0.891" in pages["extraction"]
    assert "paper: 250/h" in pages["extraction"]
    assert 'id="chart-histogram"' in pages["extraction"]
    assert 'id="chart-llms"' in pages["extraction"]
    # Another kind's paper reports nothing comparable, and its evidence is
    # no alignment; its claims name no LLM.
    assert "Table 1" not in pages[kind] and "250/h" not in pages[kind]
    assert 'id="chart-histogram"' not in pages[kind]
    assert 'id="chart-llms"' not in pages[kind]
    assert "Learning curve: gold-set F1 by expert labels" in pages[kind]


def test_a_badge_says_what_the_check_concluded():
    from annotator.models import verdict_text

    assert verdict_text("unscored", "") == "Unscored (no scorer yet)"
    assert verdict_text("unscored", "unverifiable") == "Unverifiable"
    assert verdict_text("unsafe", "not_in_document") == "Unsafe: Not in document"
    assert verdict_text("safe", "") == "Safe"
    assert verdict_text("", "") == "Not checked yet"


def test_retrain_now_says_how_long_it_will_take(personas):
    project = personas.project
    assert stats.retrain_takes(project) == (
        "No run has finished yet to time a retrain by."
    )
    now = timezone.now()
    TrainingRun.objects.create(
        project=make_project(),
        status="succeeded",
        started_at=now - timedelta(minutes=7),
        finished_at=now,
    )
    assert stats.retrain_takes(project) == (
        "A retrain takes about 7 minutes (the last run of another project); "
        "checks go on meanwhile."
    )
    TrainingRun.objects.create(
        project=project,
        status="succeeded",
        started_at=now - timedelta(seconds=50),
        finished_at=now,
    )
    assert "about 1 minute (this project's last run)" in stats.retrain_takes(project)
