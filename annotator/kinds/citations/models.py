"""The citations kind's case-law store, of the annotator app (its tables and
migrations are the app's)."""

from django.db import models
from django.db.models import Q


class CaseOpinion(models.Model):
    """A court opinion of the deployment's case-law store, shared by every
    citation project: cited cases are looked up in it by citation."""

    external_id = models.CharField(max_length=255, unique=True)
    case_name = models.TextField(blank=True)
    citations = models.JSONField(default=list, blank=True)
    court = models.TextField(blank=True)
    date = models.CharField(max_length=32, blank=True)
    text = models.TextField()
    pages = models.JSONField(
        default=list, blank=True, help_text="Page markers with their offsets."
    )
    syllabus = models.TextField(blank=True)
    first_page = models.IntegerField(null=True, blank=True)
    last_page = models.IntegerField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "annotator"

    def __str__(self) -> str:
        return self.case_name or self.external_id


class CaseCitation(models.Model):
    """A reporter citation known to name a case: one of a stored opinion's
    citations, or an entry of a citation index (no ``opinion``: the case
    exists, its text is not held). ``key`` is the citation in standard
    spelling; ``reporter``/``volume``/``page`` split it (null where not a
    number) for the page bounds of the next case in a volume and the years
    of the volumes."""

    key = models.CharField(max_length=255)
    reporter = models.CharField(max_length=100)
    volume = models.IntegerField(null=True)
    page = models.IntegerField(null=True)
    opinion = models.ForeignKey(
        CaseOpinion,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="citation_keys",
    )
    case_name = models.TextField(blank=True)
    date = models.CharField(max_length=32, blank=True)

    class Meta:
        app_label = "annotator"
        constraints = [
            models.UniqueConstraint(
                fields=["key", "opinion"], name="case_citation_unique_opinion"
            ),
            models.UniqueConstraint(
                fields=["key"],
                condition=Q(opinion=None),
                name="case_citation_unique_index_entry",
            ),
        ]
        indexes = [
            models.Index(fields=["key"]),
            models.Index(fields=["reporter", "volume", "page"]),
        ]

    def __str__(self) -> str:
        return self.key
