"""Every LLM run's budget and cost, and every run's request to stop, are
declared once (``LLMRun``, ``Run``), so an extraction run gains
``cancel_requested`` and can be stopped like the others; the other changes
are help texts and a budget that may be null on every kind of LLM run (as on
extraction runs from before budgets)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0006_project_options_only"),
    ]

    operations = [
        migrations.AddField(
            model_name="extractionrun",
            name="cancel_requested",
            field=models.BooleanField(
                default=False,
                help_text="Asked to stop: it stops before its next step (an LLM call, a training epoch).",
            ),
        ),
        migrations.AlterField(
            model_name="consistencyrun",
            name="budget",
            field=models.DecimalField(
                blank=True,
                decimal_places=6,
                help_text="The run stops before its cost would pass this; null only on runs started before their kind had budgets (its default then).",
                max_digits=12,
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="consistencyrun",
            name="cancel_requested",
            field=models.BooleanField(
                default=False,
                help_text="Asked to stop: it stops before its next step (an LLM call, a training epoch).",
            ),
        ),
        migrations.AlterField(
            model_name="consistencyrun",
            name="cost",
            field=models.DecimalField(
                decimal_places=6,
                default=0,
                help_text="From the token usage at the deployment's prices.",
                max_digits=12,
            ),
        ),
        migrations.AlterField(
            model_name="extractionrun",
            name="budget",
            field=models.DecimalField(
                blank=True,
                decimal_places=6,
                help_text="The run stops before its cost would pass this; null only on runs started before their kind had budgets (its default then).",
                max_digits=12,
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="gradingrun",
            name="budget",
            field=models.DecimalField(
                blank=True,
                decimal_places=6,
                help_text="The run stops before its cost would pass this; null only on runs started before their kind had budgets (its default then).",
                max_digits=12,
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="gradingrun",
            name="cancel_requested",
            field=models.BooleanField(
                default=False,
                help_text="Asked to stop: it stops before its next step (an LLM call, a training epoch).",
            ),
        ),
        migrations.AlterField(
            model_name="gradingrun",
            name="cost",
            field=models.DecimalField(
                decimal_places=6,
                default=0,
                help_text="From the token usage at the deployment's prices.",
                max_digits=12,
            ),
        ),
        migrations.AlterField(
            model_name="trainingrun",
            name="cancel_requested",
            field=models.BooleanField(
                default=False,
                help_text="Asked to stop: it stops before its next step (an LLM call, a training epoch).",
            ),
        ),
    ]
