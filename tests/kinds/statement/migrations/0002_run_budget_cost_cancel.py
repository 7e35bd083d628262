"""The statement run's budget, cost and request to stop now come from
``LLMRun`` and ``Run``: help texts, and a budget that may be null."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("statement_test", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="statementrun",
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
            model_name="statementrun",
            name="cancel_requested",
            field=models.BooleanField(
                default=False,
                help_text="Asked to stop: it stops before its next step (an LLM call, a training epoch).",
            ),
        ),
        migrations.AlterField(
            model_name="statementrun",
            name="cost",
            field=models.DecimalField(
                decimal_places=6,
                default=0,
                help_text="From the token usage at the deployment's prices.",
                max_digits=12,
            ),
        ),
    ]
