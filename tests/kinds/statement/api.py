"""The statement kind's endpoint: its runs, on the shared LLM-run viewset."""

from rest_framework import serializers

from annotator.api.llm_runs import LLMRunSerializer, LLMRunViewSet, run_fields
from tests.kinds.statement import runs
from tests.kinds.statement.models import StatementRun


class StatementRunSerializer(LLMRunSerializer):
    """A run writing a project's statements with an LLM."""

    class Meta(LLMRunSerializer.Meta):
        model = StatementRun
        fields = run_fields(completion_tokens=("cancel_requested",))
        read_only_fields = fields


class StatementEstimateRequestSerializer(serializers.Serializer):
    project = serializers.IntegerField()
    model = serializers.CharField()
    params = serializers.DictField(required=False, default=dict)


class StatementRunStartSerializer(StatementEstimateRequestSerializer):
    budget = serializers.DecimalField(max_digits=12, decimal_places=6)


class StatementEstimateSerializer(serializers.Serializer):
    project = serializers.IntegerField()
    model = serializers.CharField()
    documents = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=6, allow_null=True)


class StatementRunViewSet(LLMRunViewSet):
    """Runs that write a project's statements with an LLM."""

    serializer_class = StatementRunSerializer
    start_serializer_class = StatementRunStartSerializer
    estimate_request_serializer_class = StatementEstimateRequestSerializer
    estimate_serializer_class = StatementEstimateSerializer
    project_action = "writing statements with an LLM"
    create_description = "Start a run writing statements for every document."
    estimate_description = "What a run would ask and roughly cost; starts nothing."

    def run_start(self, project, data, user):
        return runs.statement_run_start(
            project=project,
            model=data["model"],
            budget=data["budget"],
            params=data["params"],
            created_by=user,
        )

    def run_estimate(self, project, data):
        return runs.statement_estimate(project, data["model"], data["params"])

    def run_cancel(self, run):
        return runs.statement_run_cancel(run=run)
