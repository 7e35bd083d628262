"""A claim no scorer judged is ``unscored``, not safe: rows a check passed on
their evidence alone (safe, no score) become unscored and go to the front of
the labeling queue (uncertainty 0)."""

from django.db import migrations, models

TO_UNSCORED = """
UPDATE annotator_prediction SET verdict = 'unscored', uncertainty = 0
 WHERE verdict = 'safe' AND score IS NULL;
"""
FROM_UNSCORED = """
UPDATE annotator_prediction SET verdict = 'safe', uncertainty = NULL
 WHERE verdict = 'unscored';
"""


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0012_claim_evidence"),
    ]

    operations = [
        migrations.AlterField(
            model_name="prediction",
            name="verdict",
            field=models.CharField(
                blank=True,
                choices=[
                    ("", "Not checked yet"),
                    ("safe", "Safe"),
                    ("unsafe", "Unsafe"),
                    ("unscored", "Unscored (no scorer yet)"),
                ],
                default="",
                max_length=8,
            ),
        ),
        migrations.RunSQL(TO_UNSCORED, FROM_UNSCORED),
    ]
