"""Prediction is now Claim and PredictionScore ClaimScore (issue 29): new
names in code only. Tables, columns, indexes, constraints and the queue
state triggers keep theirs, so the database is neither rewritten nor locked;
the models' content types are renamed with them, as Django's RenameModel
does, so admin history and permissions follow. The extraction run items'
``prediction_count`` column is renamed (a catalogue change, no rewrite).
Help texts now say claim."""

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models

import annotator.models

RENAMED = [("prediction", "claim"), ("predictionscore", "claimscore")]


def rename_content_types(apps, schema_editor, reverse=False):
    types = apps.get_model("contenttypes", "ContentType").objects.using(
        schema_editor.connection.alias
    )
    for old, new in RENAMED:
        old, new = (new, old) if reverse else (old, new)
        if not types.filter(app_label="annotator", model=new).exists():
            types.filter(app_label="annotator", model=old).update(model=new)


def restore_content_types(apps, schema_editor):
    rename_content_types(apps, schema_editor, reverse=True)


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0001_squashed_0021_run_help_texts"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.RenameModel("Prediction", "Claim"),
                migrations.AlterModelTable("claim", "annotator_prediction"),
                migrations.RenameModel("PredictionScore", "ClaimScore"),
                migrations.AlterModelTable("claimscore", "annotator_predictionscore"),
                migrations.RenameField("claimscore", "prediction", "claim"),
                migrations.RenameField("annotation", "prediction", "claim"),
                migrations.RenameField("labelreceipt", "prediction", "claim"),
                migrations.RenameField("lease", "prediction", "claim"),
                migrations.RenameField("adjudication", "prediction", "claim"),
                # Constraints and indexes name their fields: the same ones,
                # under the fields' new names.
                migrations.RemoveConstraint(
                    "annotation", "annotation_one_per_annotator"
                ),
                migrations.RemoveConstraint("annotation", "annotation_one_imported"),
                migrations.RemoveConstraint(
                    "claimscore", "prediction_score_unique_scorer"
                ),
                migrations.RemoveConstraint("lease", "lease_one_per_annotator"),
                migrations.RemoveIndex("annotation", "annotator_a_predict_4f7b1c_idx"),
                migrations.AlterField(
                    model_name="adjudication",
                    name="claim",
                    field=models.OneToOneField(
                        db_column="prediction_id",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="adjudication",
                        to="annotator.claim",
                    ),
                ),
                migrations.AlterField(
                    model_name="annotation",
                    name="claim",
                    field=models.ForeignKey(
                        db_column="prediction_id",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="annotations",
                        to="annotator.claim",
                    ),
                ),
                migrations.AlterField(
                    model_name="claimscore",
                    name="claim",
                    field=models.ForeignKey(
                        db_column="prediction_id",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="scores",
                        to="annotator.claim",
                    ),
                ),
                migrations.AlterField(
                    model_name="labelreceipt",
                    name="claim",
                    field=models.ForeignKey(
                        db_column="prediction_id",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="annotator.claim",
                    ),
                ),
                migrations.AlterField(
                    model_name="lease",
                    name="claim",
                    field=models.ForeignKey(
                        db_column="prediction_id",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="leases",
                        to="annotator.claim",
                    ),
                ),
                migrations.AlterField(
                    model_name="claim",
                    name="document",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="claims",
                        to="annotator.document",
                    ),
                ),
                migrations.AlterField(
                    model_name="claim",
                    name="project",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="claims",
                        to="annotator.project",
                    ),
                ),
                migrations.AlterField(
                    model_name="claim",
                    name="source_run",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="claims",
                        to="annotator.extractionrun",
                    ),
                ),
                migrations.AddIndex(
                    "annotation",
                    models.Index(
                        fields=["claim", "label"], name="annotator_a_predict_4f7b1c_idx"
                    ),
                ),
                migrations.AddConstraint(
                    "annotation",
                    models.UniqueConstraint(
                        condition=models.Q(("annotator__isnull", False)),
                        fields=("claim", "annotator"),
                        name="annotation_one_per_annotator",
                    ),
                ),
                migrations.AddConstraint(
                    "annotation",
                    models.UniqueConstraint(
                        condition=models.Q(("source", "import")),
                        fields=("claim",),
                        name="annotation_one_imported",
                    ),
                ),
                migrations.AddConstraint(
                    "claimscore",
                    models.UniqueConstraint(
                        fields=("claim", "scorer", "scorer_version"),
                        name="prediction_score_unique_scorer",
                    ),
                ),
                migrations.AddConstraint(
                    "lease",
                    models.UniqueConstraint(
                        fields=("claim", "annotator"), name="lease_one_per_annotator"
                    ),
                ),
            ],
        ),
        migrations.RenameField("extractionitem", "prediction_count", "claim_count"),
        migrations.AlterField(
            model_name="project",
            name="gold_share",
            field=models.FloatField(
                default=0.1,
                help_text="Share of documents whose claims form the gold test set: handed out in random order, used to measure scorer versions, never trained on. Changing it moves documents in or out of the set.",
                validators=[
                    django.core.validators.MinValueValidator(0.0),
                    django.core.validators.MaxValueValidator(1.0),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="project",
            name="overlap_labels",
            field=models.PositiveSmallIntegerField(
                default=2,
                help_text="How many experts label each overlap claim.",
                validators=[django.core.validators.MinValueValidator(2)],
            ),
        ),
        migrations.AlterField(
            model_name="project",
            name="overlap_share",
            field=models.FloatField(
                default=0.1,
                help_text="Share of claims labelled by several experts, to measure agreement; every other claim goes to one expert only.",
                validators=[
                    django.core.validators.MinValueValidator(0.0),
                    django.core.validators.MaxValueValidator(1.0),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="project",
            name="queue_strategy",
            field=models.CharField(
                default="uncertainty",
                help_text="Order in which the labeling queue hands out claims: uncertainty (score nearest the threshold first) or random.",
                max_length=64,
                validators=[annotator.models.validate_queue_strategy],
            ),
        ),
        migrations.AlterField(
            model_name="project",
            name="uncertainty_threshold",
            field=models.FloatField(
                editable=False,
                help_text="The threshold Claim.uncertainty was computed against; the queue recomputes it when the active threshold differs.",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="scorermodel",
            name="gold_f1",
            field=models.FloatField(
                blank=True,
                help_text="F1 flagging unsafe claims on the gold test set, measured when registered; decides promotion.",
                null=True,
            ),
        ),
        migrations.RunPython(rename_content_types, restore_content_types),
    ]
