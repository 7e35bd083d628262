"""Sampling runs become consistency runs: the same budgeted run, with a job
(sample other models, or correct flagged blocks)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0016_sampling_runs"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameModel("SamplingRun", "ConsistencyRun"),
        migrations.AlterField(
            model_name="consistencyrun",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="consistency_runs",
                to="annotator.project",
            ),
        ),
        migrations.AddField(
            model_name="consistencyrun",
            name="job",
            field=models.CharField(
                choices=[
                    ("samples", "Sample other models"),
                    ("corrections", "Correct flagged blocks"),
                ],
                default="samples",
                max_length=16,
            ),
        ),
    ]
