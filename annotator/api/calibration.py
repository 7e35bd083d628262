"""A scorer version's calibration and operating point: the actions that
``views.ScorerModelViewSet`` takes on from this mixin (admins only, as the
rest of the scorer registry)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from annotator.training import calibration


class CalibrateSerializer(serializers.Serializer):
    method = serializers.ChoiceField(
        choices=calibration.FIT_METHODS,
        default="auto",
        help_text="isotonic, temperature, or auto (isotonic when each class has "
        f"{calibration.AUTO_ISOTONIC_MIN_PER_CLASS} gold labels, else temperature).",
    )


class OperatingPointSerializer(serializers.Serializer):
    target_recall = serializers.FloatField(
        help_text="Share of the unsafe gold claims to flag, in (0, 1]."
    )

    def validate_target_recall(self, value: float) -> float:
        # DRF's FloatField reads true as 1.0: a boolean is no share.
        if isinstance(self.initial_data.get("target_recall"), bool):
            raise serializers.ValidationError("must be a number, not true or false")
        if not 0 < value <= 1:
            raise serializers.ValidationError("must be in (0, 1]")
        return value


class ScorerCalibrationActions:
    """Calibrate a scorer on the gold set; preview and apply an operating
    point chosen by target recall of unsafe claims."""

    @extend_schema(request=CalibrateSerializer, responses={200: None})
    @action(detail=True, methods=["post"])
    def calibrate(self, request, pk=None):
        """Fit this version's calibration on its gold-set scores and gold
        labels (per type where a type has enough of both classes)."""
        payload = CalibrateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        scorer = self.get_object()
        scorer = calibration.scorer_calibrate(
            project=scorer.project,
            scorer=scorer,
            method=payload.validated_data["method"],
        )
        return Response(self.get_serializer(scorer).data)

    @extend_schema(
        methods=["GET"],
        parameters=[
            OpenApiParameter(
                "target_recall", float, required=True, description="In (0, 1]."
            )
        ],
        responses={200: None},
    )
    @extend_schema(methods=["POST"], request=OperatingPointSerializer)
    @action(detail=True, methods=["get", "post"], url_path="operating-point")
    def operating_point(self, request, pk=None):
        """GET: the threshold that flags ``target_recall`` of the unsafe gold
        claims, its precision and recall on the gold set and the expert
        workload on the project (changes nothing). POST: apply it as the
        scorer's threshold; the active scorer's verdicts are checked again."""
        source = request.query_params if request.method == "GET" else request.data
        payload = OperatingPointSerializer(data=source)
        payload.is_valid(raise_exception=True)
        target = payload.validated_data["target_recall"]
        scorer = self.get_object()
        if request.method == "GET":
            return Response(
                calibration.operating_point_preview(
                    project=scorer.project, scorer=scorer, target_recall=target
                )
            )
        scorer = calibration.operating_point_apply(
            project=scorer.project,
            scorer=scorer,
            target_recall=target,
            user=request.user,
        )
        return Response(self.get_serializer(scorer).data)
