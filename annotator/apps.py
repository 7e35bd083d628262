from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "SafePassage"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotator.core import accounts  # noqa: F401  (connects the failed-login counter)
        from annotator.core.embedded import start_configured

        start_configured()
