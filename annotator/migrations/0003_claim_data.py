"""A claim's own fields move into ``data`` (issue 29): the ``type``,
``value`` and ``context`` columns were extraction's, which the other kinds
filled with a constant, the citation twice or nothing. Each row's fields are
moved by its project's kind, as its checker's ``ClaimData`` keeps them; the
fields a found claim kept in ``extra`` (a citation's place and form, a
sentence's block and offsets) move with them. A kind not known here (one a
deployment added) keeps extraction's three. Reversible: going back puts the
columns back from ``data``. The columns go in the next migration, in a
transaction of its own: Postgres alters no table with row updates pending.

The rules are written out here, not read from the checkers, so that this
migration moves rows the same way whatever the checkers later become.
"""

from django.db import migrations, models

BATCH = 2000
#: Per kind: the key of ``data`` the value moves to, and the keys of ``extra``
#: that move with it.
MOVED = {
    "citations": ("citation", ("start", "end", "form")),
    "consistency": ("sentence", ("block", "start", "end")),
    "provenance": ("answer", ()),
}
#: The constant type the checkers gave their claims, for going back.
CLAIM_TYPES = {
    "citations": "case_citation",
    "consistency": "response_block",
    "provenance": "rag_answer",
}


def to_data(claim, kind: str) -> None:
    if kind not in MOVED:
        claim.data = {
            "type": claim.type,
            "value": claim.value,
            "context": claim.context,
        }
        return
    key, moved = MOVED[kind]
    extra = dict(claim.extra)
    claim.data = {key: claim.value, **{k: extra.pop(k, None) for k in moved}}
    if kind == "provenance":
        # The question the answer answers, which its item's document keeps.
        claim.data["query"] = str(claim.document.metadata.get("query") or "")
    claim.extra = extra


def from_data(claim, kind: str) -> None:
    data = claim.data
    if kind not in MOVED:
        claim.type, claim.value = data.get("type", ""), data.get("value")
        claim.context = data.get("context", "")
        return
    key, moved = MOVED[kind]
    claim.type, claim.value = CLAIM_TYPES[kind], data.get(key)
    claim.context = claim.value if kind == "citations" else ""
    claim.extra = {**claim.extra, **{k: data[k] for k in moved if k in data}}


def move(apps, schema_editor, *, step, fields):
    Claim = apps.get_model("annotator", "Claim")
    db = schema_editor.connection.alias
    rows = (
        Claim.objects.using(db)
        .select_related("project", "document")
        .order_by("pk")
        .iterator(chunk_size=BATCH)
    )
    batch = []
    for claim in rows:
        step(claim, claim.project.kind)
        batch.append(claim)
        if len(batch) == BATCH:
            Claim.objects.using(db).bulk_update(batch, fields)
            batch = []
    Claim.objects.using(db).bulk_update(batch, fields)


def forward(apps, schema_editor):
    move(apps, schema_editor, step=to_data, fields=["data", "extra"])


def backward(apps, schema_editor):
    move(
        apps,
        schema_editor,
        step=from_data,
        fields=["type", "value", "context", "extra"],
    )


class Migration(migrations.Migration):
    dependencies = [("annotator", "0002_prediction_is_claim")]

    operations = [
        migrations.AddField(
            model_name="claim",
            name="data",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="The claim's own fields, as its project's checker kind "
                "defines and checks them (ClaimData): an extracted field's type, "
                "value and context, a citation's text and place, a RAG answer "
                "and its query.",
            ),
        ),
        # Blank until the rows are moved back, on the way back.
        migrations.AlterField(
            model_name="claim",
            name="type",
            field=models.CharField(max_length=200, blank=True),
        ),
        migrations.RunPython(forward, backward),
    ]
