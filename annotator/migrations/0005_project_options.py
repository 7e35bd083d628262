"""An extraction project's own settings (entity schema, prompt, alignment
threshold) move into ``Project.options``, which its kind defines (issue 29);
another kind's project had no use for them and keeps none. Reversible. The
columns go in the next migration, in a transaction of its own."""

from django.db import migrations, models

#: The settings that were columns of every project, extraction's own.
MOVED = ("entity_schema", "extraction_prompt", "align_threshold")


def forward(apps, schema_editor):
    Project = apps.get_model("annotator", "Project")
    for project in Project.objects.using(schema_editor.connection.alias):
        if project.kind == "extraction":
            project.options = {name: getattr(project, name) for name in MOVED}
            project.save(update_fields=["options"])


def backward(apps, schema_editor):
    Project = apps.get_model("annotator", "Project")
    for project in Project.objects.using(schema_editor.connection.alias):
        for name in MOVED:
            if name in project.options:
                setattr(project, name, project.options[name])
        project.save(update_fields=list(MOVED))


class Migration(migrations.Migration):
    dependencies = [("annotator", "0004_claim_data_only")]

    operations = [
        migrations.AddField(
            model_name="project",
            name="options",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="The settings its kind adds (KindHook.project_options): "
                "an extraction project's entity schema, prompt and alignment "
                "threshold.",
            ),
        ),
        migrations.RunPython(forward, backward),
    ]
