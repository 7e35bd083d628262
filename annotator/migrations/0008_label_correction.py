"""A label's correction moves into ``correction`` (issue 29): the
``corrected_type`` and ``corrected_value`` columns were extraction's words,
which a sentence's rewrite filled as a "value". Each label's correction is
keyed by its claim's kind, as its checker's ``ClaimData.corrects`` names the
keys: the value under what the claim says, the type under the kind's group.
A type given for a kind without groups (only the API could send one) is kept
in the label's ``extra``. A kind not known here (one a deployment added)
takes extraction's keys. Reversible. The columns go in the next migration.

The rules are written out here, not read from the checkers, so that this
migration moves rows the same way whatever the checkers later become.
"""

from django.db import migrations, models

BATCH = 2000
#: Per kind: the key of the claim's data a corrected value belongs to.
TEXT_KEYS = {
    "citations": "citation",
    "consistency": "sentence",
    "provenance": "answer",
}


def to_correction(label, kind: str) -> None:
    correction = {}
    if label.corrected_value is not None:
        correction[TEXT_KEYS.get(kind, "value")] = label.corrected_value
    if label.corrected_type:
        if kind in TEXT_KEYS:
            label.extra = {**label.extra, "corrected_type": label.corrected_type}
        else:
            correction["type"] = label.corrected_type
    label.correction = correction or None


def from_correction(label, kind: str) -> None:
    correction = label.correction or {}
    label.corrected_value = correction.get(TEXT_KEYS.get(kind, "value"))
    extra = dict(label.extra)
    label.corrected_type = correction.get("type") or extra.pop("corrected_type", "")
    label.extra = extra


def move(apps, schema_editor, *, step, fields, corrected):
    Annotation = apps.get_model("annotator", "Annotation")
    db = schema_editor.connection.alias
    rows = (
        Annotation.objects.using(db)
        .filter(corrected)
        .select_related("claim__project")
        .order_by("pk")
        .iterator(chunk_size=BATCH)
    )
    batch = []
    for label in rows:
        step(label, label.claim.project.kind)
        batch.append(label)
        if len(batch) == BATCH:
            Annotation.objects.using(db).bulk_update(batch, fields)
            batch = []
    Annotation.objects.using(db).bulk_update(batch, fields)


def forward(apps, schema_editor):
    corrected = ~models.Q(corrected_type="") | models.Q(corrected_value__isnull=False)
    move(
        apps,
        schema_editor,
        step=to_correction,
        fields=["correction", "extra"],
        corrected=corrected,
    )


def backward(apps, schema_editor):
    move(
        apps,
        schema_editor,
        step=from_correction,
        fields=["corrected_type", "corrected_value", "extra"],
        corrected=models.Q(correction__isnull=False)
        | models.Q(extra__has_key="corrected_type"),
    )


class Migration(migrations.Migration):
    dependencies = [("annotator", "0007_run_budget_cost_cancel")]

    operations = [
        migrations.AddField(
            model_name="annotation",
            name="correction",
            field=models.JSONField(
                blank=True,
                null=True,
                help_text="The expert's right values for some of the claim's data, "
                "those its kind lets an expert correct (ClaimData.corrects): an "
                "extracted field's value and type, a sentence's text; null if none.",
            ),
        ),
        migrations.RunPython(forward, backward),
    ]
