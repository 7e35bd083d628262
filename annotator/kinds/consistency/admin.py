from django.contrib import admin

from annotator.admin import LLMRunAdmin
from annotator.kinds.consistency.models import ConsistencyRun


@admin.register(ConsistencyRun)
class ConsistencyRunAdmin(LLMRunAdmin):
    list_display = ["id", "project", "job", *LLMRunAdmin.list_display[2:]]
    list_filter = ["job", "status", "project"]
