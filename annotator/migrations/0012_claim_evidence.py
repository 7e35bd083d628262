"""Claims of every kind: the aligned span becomes the first item of a
checked evidence list, the aligned text the scorer's premise and the
alignment score the deciding evidence's score; ``Prediction.kind`` (which
said what ``Project.kind`` now says) is kept in ``extra`` where it was not
"entity". Every label, score and verdict stays where it was."""

from django.db import migrations, models

import annotator.models

TO_EVIDENCE = """
UPDATE annotator_prediction p
   SET evidence = jsonb_build_array(jsonb_build_object(
           'source', d.external_id, 'start', p.align_start, 'end', p.align_end,
           'text', p.premise, 'role', 'aligned', 'score', p.evidence_score))
  FROM annotator_document d
 WHERE d.id = p.document_id AND p.evidence_score IS NOT NULL;
UPDATE annotator_prediction
   SET extra = extra || jsonb_build_object('kind', kind)
 WHERE kind <> 'entity';
"""

FROM_EVIDENCE = """
UPDATE annotator_prediction
   SET align_start = (evidence -> 0 ->> 'start')::integer,
       align_end = (evidence -> 0 ->> 'end')::integer
 WHERE jsonb_array_length(evidence) > 0;
UPDATE annotator_prediction
   SET kind = extra ->> 'kind', extra = extra - 'kind'
 WHERE extra ? 'kind';
"""


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0011_project_kind"),
    ]

    operations = [
        migrations.AlterField(
            model_name="project",
            name="kind",
            field=models.CharField(
                choices=annotator.models.checker_kinds,
                default="extraction",
                help_text="What the project checks (a checker of pipeline.checkers, "
                "and the claim partial of the labeling page); chosen when it is "
                "created.",
                max_length=32,
            ),
        ),
        migrations.RenameField(
            model_name="prediction", old_name="align_text", new_name="premise"
        ),
        migrations.RenameField(
            model_name="prediction", old_name="align_score", new_name="evidence_score"
        ),
        migrations.AddField(
            model_name="prediction",
            name="evidence",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="The evidence found, deciding first: source, start, end, "
                "text, role, score.",
                validators=[annotator.models.validate_evidence],
            ),
        ),
        migrations.RunSQL(TO_EVIDENCE, FROM_EVIDENCE),
        migrations.RemoveField(model_name="prediction", name="align_start"),
        migrations.RemoveField(model_name="prediction", name="align_end"),
        migrations.RemoveField(model_name="prediction", name="kind"),
        migrations.AlterField(
            model_name="prediction",
            name="hypothesis",
            field=models.TextField(
                blank=True, help_text="The claim as the scorer and the expert read it."
            ),
        ),
        migrations.AlterField(
            model_name="prediction",
            name="premise",
            field=models.TextField(
                blank=True,
                help_text="The evidence text the scorer read the hypothesis against "
                "(for extraction, the aligned span of the document).",
            ),
        ),
        migrations.AlterField(
            model_name="prediction",
            name="evidence_score",
            field=models.FloatField(
                blank=True,
                null=True,
                help_text="Score of the deciding evidence (for extraction, the "
                "alignment score), kept as a column for charts and the queue.",
            ),
        ),
    ]
