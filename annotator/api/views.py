"""DRF viewsets. Visibility comes from ``selectors.*_for(user)`` (a 404 for
rows of other projects); write access from the permission classes."""

from __future__ import annotations

import json
import tempfile

from django.conf import settings
from django.db.models import Count, Exists, OuterRef
from django.http import FileResponse, StreamingHttpResponse
from django.utils import timezone
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.api import serializers as s
from annotator.api.calibration import ScorerCalibrationActions
from annotator.api.params import bool_param, float_param, id_param, project_param
from annotator.api.parsers import BoundedJSONParser, UploadParser, upload_limit_check
from annotator.api.permissions import (
    IsProjectAdmin,
    ProjectAdminWrites,
    managed_project,
    require_held_role,
)
from annotator.claims import checking, export, ingest, records, selectors
from annotator.core import errors
from annotator.labeling import handout, labels, queue
from annotator.models import (
    ACTIVE_RUN_STATUSES,
    Label,
    Project,
)
from annotator.projects import access, services
from annotator.training import card
from annotator.training import runs as training_runs


def _check_upload_size(files) -> None:
    upload_limit_check(sum(f.size or 0 for f in files))


def _upload_stream(upload):
    """Uploaded files as binary line iterators (Django's File iterates lines)."""
    upload.open("rb")
    return upload


# Every line used, some skipped (the rest stored), nothing stored: the body is
# the line-by-line report in each case.
IMPORT_STATUS = {
    ingest.Outcome.COMPLETE: status.HTTP_200_OK,
    ingest.Outcome.PARTIAL: status.HTTP_207_MULTI_STATUS,
    ingest.Outcome.REFUSED: status.HTTP_400_BAD_REQUEST,
}
IMPORT_RESPONSES = {
    code: OpenApiResponse(s.ImportReportSerializer, description=outcome.value)
    for outcome, code in IMPORT_STATUS.items()
}


def _import_response(report: ingest.ImportReport) -> Response:
    return Response(
        s.ImportReportSerializer(report.as_dict()).data,
        status=IMPORT_STATUS[report.outcome],
    )


class ProjectViewSet(viewsets.ModelViewSet):
    """Members see their projects; project admins change them; users with the
    ``annotator.add_project`` permission create them (and become their admin)."""

    serializer_class = s.ProjectSerializer
    permission_classes = [ProjectAdminWrites]

    def get_queryset(self):
        return access.projects_for(self.request.user).prefetch_related(
            "memberships__user"
        )

    def perform_create(self, serializer):
        if not self.request.user.has_perm("annotator.add_project"):
            raise PermissionDenied("creating projects needs the add_project permission")
        serializer.instance = services.project_create(
            creator=self.request.user, **serializer.validated_data
        )

    def perform_update(self, serializer):
        serializer.instance = services.project_update(
            serializer.instance, **serializer.validated_data
        )

    @extend_schema(
        request=s.MembershipSerializer, responses={200: s.MembershipSerializer}
    )
    @action(detail=True, methods=["post"], permission_classes=[IsProjectAdmin])
    def members(self, request, pk=None):
        """Add a member or change a member's role (admin, expert or viewer)."""
        project = self.get_object()
        payload = s.MembershipSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        membership = services.membership_set(
            project=project,
            user=payload.validated_data["user"],
            role=payload.validated_data["role"],
        )
        return Response(s.MembershipSerializer(membership).data)

    @extend_schema(
        parameters=[OpenApiParameter("user", int, description="User id.")],
        responses={204: None},
    )
    @members.mapping.delete
    def remove_member(self, request, pk=None):
        """Remove a member (``?user=<id>``); their labels stay."""
        project = self.get_object()
        user = id_param(request.query_params, "user", what="a user id")
        if user is None:
            raise ValidationError({"user": "must be a user id"})
        services.membership_remove(project=project, user_id=user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "kind",
                enum=list(export.EXPORT_KINDS),
                description="Which records: documents, claims (checked "
                "records where checked) or labels.",
            )
        ],
        responses={(200, "application/x-ndjson"): OpenApiTypes.STR},
    )
    @action(detail=True, methods=["get"], permission_classes=[IsProjectAdmin])
    def export(self, request, pk=None):
        """JSONL export in the pipeline's formats."""
        project = self.get_object()
        kind = request.query_params.get("kind", "claims")
        kind = export.OLD_EXPORT_KINDS.get(kind, kind)
        if kind not in export.EXPORT_KINDS:
            raise ValidationError({"kind": f"one of {', '.join(export.EXPORT_KINDS)}"})
        rows = selectors.export_rows(project=project, kind=kind)
        response = StreamingHttpResponse(
            (json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
            content_type="application/x-ndjson",
        )
        response["Content-Disposition"] = content_disposition_header(
            True, export.download_name(f"{project.name}-{kind}.jsonl")
        )
        return response

    @extend_schema(
        request=None,
        parameters=[
            OpenApiParameter(
                "force",
                bool,
                description="Recheck every claim, not only new ones.",
            )
        ],
        responses={202: OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["post"], permission_classes=[IsProjectAdmin])
    def check(self, request, pk=None):
        """Queue alignment and scoring of the project's unchecked claims
        (``waiting``: how many). With ``force`` every claim is rescored;
        its verdict stays until the new one replaces it."""
        project = self.get_object()
        force = request.query_params.get("force", "").lower() in ("1", "true", "yes")
        waiting = checking.claims_check_queue(project=project, force=force)
        return Response(
            {"queued": True, "waiting": waiting}, status=status.HTTP_202_ACCEPTED
        )


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("project", int, description="Project id.")]
    )
)
class DocumentViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = s.DocumentSerializer

    def get_queryset(self):
        queryset = access.documents_for(self.request.user).annotate(
            claim_count=Count("claims")
        )
        project = project_param(self.request.query_params)
        if project is not None:
            queryset = queryset.filter(project_id=project)
        return queryset.order_by("pk")

    @extend_schema(
        request={"multipart/form-data": s.DocumentUploadSerializer},
        responses=IMPORT_RESPONSES,
    )
    @action(
        detail=False,
        methods=["post"],
        parser_classes=[UploadParser],
    )
    def upload(self, request):
        """Bulk upload: JSONL files and/or .txt or .pdf files (in a provenance
        project, JSONL files of RAG items; in a consistency project, of
        answers with their samples). Duplicate ids upsert; bad lines are
        reported with their line number and the rest still go in."""
        # The role first: a member who may not import learns nothing more.
        project = managed_project(
            request.user, request.data.get("project"), action="importing documents"
        )
        payload = s.DocumentUploadSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        _check_upload_size(payload.validated_data["files"])
        report = ingest.documents_import(
            project=project,
            files=[
                (f.name, _upload_stream(f)) for f in payload.validated_data["files"]
            ],
        )
        return _import_response(report)


_CLAIM_FILTERS = [
    OpenApiParameter("project", int, description="Project id."),
    OpenApiParameter("document", str, description="Document external id."),
    OpenApiParameter(
        "verdict", enum=list(selectors.VERDICT_FILTERS), description="Verdict."
    ),
    OpenApiParameter(
        "group",
        str,
        description="The claims' group: the value of their kind's group field "
        "in data (an extracted field's entity type). Read as type before.",
    ),
    OpenApiParameter("model", str, description="Source LLM."),
    OpenApiParameter("min_score", float, description="Minimum scorer score."),
    OpenApiParameter("max_score", float, description="Maximum scorer score."),
    OpenApiParameter("labelled", bool, description="With (true) or without labels."),
]


@extend_schema_view(list=extend_schema(parameters=_CLAIM_FILTERS))
class ClaimViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = s.ClaimSerializer

    def get_queryset(self):
        params = self.request.query_params
        verdict = params.get("verdict") or None
        if verdict not in (None, *selectors.VERDICT_FILTERS):
            raise ValidationError(
                {"verdict": "one of " + ", ".join(selectors.VERDICT_FILTERS)}
            )
        project = project_param(params)
        visible = access.claims_for(self.request.user)
        if verdict or params.get("min_score") or params.get("max_score"):
            # Filtering on scores or verdicts would reveal them where they
            # are hidden from this user.
            visible = visible.filter(
                project__in=access.projects_with_scores_for(self.request.user)
            )
        queryset = selectors.claims_filter(
            visible,
            project=project,
            document=params.get("document") or None,
            verdict=verdict,
            # "type" was its name before, still read for one release.
            group=params.get("group") or params.get("type") or None,
            model=params.get("model") or None,
            min_score=float_param(params, "min_score"),
            max_score=float_param(params, "max_score"),
            labelled=bool_param(params, "labelled"),
        )
        return (
            queryset.select_related("document")
            .prefetch_related("scores")
            .annotate(labelled=Exists(Label.objects.filter(claim=OuterRef("pk"))))
            .order_by("pk")
        )

    @extend_schema(
        request={"multipart/form-data": s.JsonlUploadSerializer},
        responses=IMPORT_RESPONSES,
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        parser_classes=[UploadParser],
    )
    def import_claims(self, request):
        """Import claims JSONL (the pipeline's claim records); they are
        aligned and scored by a worker once the import commits."""
        # The role first: a member who may not import learns nothing more.
        project = managed_project(
            request.user, request.data.get("project"), action="importing claims"
        )
        payload = s.JsonlUploadSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        upload = payload.validated_data["file"]
        _check_upload_size([upload])
        report = ingest.claims_import(
            project=project, stream=_upload_stream(upload), source=upload.name
        )
        return _import_response(report)


@extend_schema(exclude=True)
class OldClaimViewSet(ClaimViewSet):
    """/api/predictions/, the claims' address in an earlier release."""


class LabelViewSet(
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.ReadOnlyModelViewSet,
):
    """Expert labels. Experts create and change their own; project admins see
    and change all of their projects' labels. Writes go through
    ``labels.label_submit``, like the labeling page's."""

    serializer_class = s.LabelSerializer
    permission_classes = [IsAuthenticated]
    parser_classes = [BoundedJSONParser, FormParser, MultiPartParser]

    def get_queryset(self):
        queryset = access.labels_for(self.request.user).select_related("annotator")
        project = project_param(self.request.query_params)
        if project is not None:
            queryset = queryset.filter(claim__project_id=project)
        return queryset.order_by("pk")

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        # Only claims the user may label validate (LabelableClaimField).
        claim = data.pop("claim")
        correction = labels.label_correction(claim, data)
        for name in ("correction", *labels.OLD_CORRECTION_FIELDS):
            data.pop(name, None)
        stored, outcome = labels.label_submit(
            claim=claim, annotator=request.user, correction=correction, **data
        )
        return self._submitted(stored, created=outcome == "created")

    def update(self, request, *args, **kwargs):
        stored = self.get_object()
        user = request.user
        role = access.project_role(user, stored.claim.project)
        own = stored.annotator_id == user.pk
        if not (own and role in access.LABEL) and role not in access.MANAGE:
            raise PermissionDenied("only its annotator can change a label")
        if stored.annotator_id is None:
            raise ValidationError(
                {"source": "an imported label changes by importing it again"}
            )
        serializer = self.get_serializer(
            stored, data=request.data, partial=kwargs.get("partial", False)
        )
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        if data.pop("claim", stored.claim) != stored.claim:
            raise ValidationError({"claim": "cannot move a label"})
        fields = ("label", "suggestion", "note", "seconds_spent")
        stored, _ = labels.label_change(
            stored=stored,
            client_id=data.get("client_id"),
            # Not kept from the stored label: a change is a decision made now,
            # under the version sent or the latest one.
            guideline_version=data.get("guideline_version"),
            correction=labels.label_correction(
                stored.claim,
                data
                if {"correction", *labels.OLD_CORRECTION_FIELDS} & data.keys()
                else {"correction": stored.correction},
            ),
            **{name: data.get(name, getattr(stored, name)) for name in fields},
        )
        return self._submitted(stored, created=False)

    def _submitted(self, stored, *, created: bool) -> Response:
        if stored is None:
            # A resent client_id of a label since undone: not brought back.
            raise errors.LabelConflict("client_id already used")
        return Response(
            self.get_serializer(stored).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(
        request={"multipart/form-data": s.JsonlUploadSerializer},
        responses=IMPORT_RESPONSES,
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        parser_classes=[UploadParser],
    )
    def import_labels(self, request):
        """Import labels JSONL ({claim_id, label: safe|unsafe, ...})."""
        # The role first: a member who may not import learns nothing more.
        project = managed_project(
            request.user, request.data.get("project"), action="importing labels"
        )
        payload = s.JsonlUploadSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        upload = payload.validated_data["file"]
        _check_upload_size([upload])
        report = ingest.labels_import(
            project=project, stream=_upload_stream(upload), source=upload.name
        )
        return _import_response(report)


@extend_schema(exclude=True)
class OldLabelViewSet(LabelViewSet):
    """/api/annotations/, the labels' address in an earlier release."""


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("project", int, description="Project id.")]
    )
)
class ScorerModelViewSet(
    ScorerCalibrationActions,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.ReadOnlyModelViewSet,
):
    """The scorer registry of the projects you administer. Versions come from
    training (or the server's own commands): their folders are fixed by the
    deployment, so no API call creates one, names its path or moves it."""

    serializer_class = s.ScorerModelSerializer
    permission_classes = [IsProjectAdmin]

    def perform_update(self, serializer):
        threshold = serializer.validated_data.get("threshold")
        if threshold is not None:
            checking.scorer_threshold_set(
                scorer=serializer.instance, threshold=threshold
            )

    def get_queryset(self):
        queryset = access.scorer_models_for(self.request.user).select_related("project")
        project = project_param(self.request.query_params)
        if project is not None:
            queryset = queryset.filter(project_id=project)
        return queryset

    @extend_schema(request=None, responses={200: s.ScorerModelSerializer})
    @action(detail=True, methods=["post"])
    def activate(self, request, pk=None):
        """Make this version the project's scorer: promotes a newer one or rolls
        back to an older one. Every claim is rescored with it."""
        scorer = checking.scorer_activate(scorer=self.get_object())
        return Response(self.get_serializer(scorer).data)

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"])
    def download(self, request, pk=None):
        """The model folder as a zip, loadable with sentence-transformers'
        CrossEncoder, with a README.md model card."""

        scorer = self.get_object()
        out = tempfile.TemporaryFile()  # closed by FileResponse when sent
        try:
            card.scorer_archive(scorer, out)
        except BaseException:
            out.close()
            raise
        out.seek(0)
        name = export.download_name(f"{scorer.project.name}-{scorer.version}.zip")
        return FileResponse(
            out, as_attachment=True, filename=name, content_type="application/zip"
        )


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("project", int, description="Project id.")]
    )
)
class TrainingRunViewSet(
    mixins.CreateModelMixin, mixins.DestroyModelMixin, viewsets.ReadOnlyModelViewSet
):
    """Training runs with live progress; admins start and cancel them."""

    serializer_class = s.TrainingRunSerializer
    permission_classes = [IsProjectAdmin]
    parser_classes = [BoundedJSONParser]

    def get_queryset(self):
        queryset = access.training_runs_for(self.request.user)
        project = project_param(self.request.query_params)
        if project is not None:
            queryset = queryset.filter(project_id=project)
        return queryset

    @extend_schema(
        request=s.TrainingRunStartSerializer, responses={201: s.TrainingRunSerializer}
    )
    def create(self, request, *args, **kwargs):
        """Start training the project's scorer on the training queue (400 when
        a run of the project is already pending or running)."""

        payload = s.TrainingRunStartSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        project = managed_project(
            request.user, payload.validated_data["project"], action="training"
        )
        run = training_runs.training_run_start(
            project=project,
            created_by=request.user,
            params=payload.validated_data["params"],
        )
        return Response(
            s.TrainingRunSerializer(run).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(request=None, responses={200: s.TrainingRunSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Cancel: a pending run at once, a running one at its next training
        step (it registers nothing). 400 once the run has ended."""

        run = training_runs.training_run_cancel(run=self.get_object())
        return Response(self.get_serializer(run).data)

    def perform_destroy(self, instance):
        if instance.status in ACTIVE_RUN_STATUSES:
            raise ValidationError({"status": "cancel the run before deleting it"})
        instance.delete()


# --- labeling ----------------------------------------------------------------
# The labeling page's API. Every write goes through session auth with its CSRF
# check (or a token); a project the user cannot see is a 404.


class _LabelingView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [BoundedJSONParser]

    def project(self, pk) -> Project:
        """The project, if the user labels on it (viewers only look)."""
        project, role = access.project_and_role(user=self.request.user, pk=pk)
        require_held_role(role, project, access.LABEL, action="labeling")
        return project

    def progress(self, project: Project) -> dict:
        return queue.queue_progress(
            project=project, annotator=self.request.user, now=timezone.now()
        )


class QueueNextView(_LabelingView):
    @extend_schema(
        request=s.QueueNextSerializer, responses={200: s.QueueItemsSerializer}
    )
    def post(self, request, pk):
        """Lease the next claims to label (your own live leases first)."""
        project = self.project(pk)
        payload = s.QueueNextSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        ids = labels.labeling_next(
            project=project,
            annotator=request.user,
            count=payload.validated_data.get("count") or settings.LABEL_BATCH_SIZE,
            exclude=payload.validated_data["exclude"],
        )
        return Response(
            {
                "items": handout.labeling_items(
                    project=project, annotator=request.user, ids=ids
                ),
                "lease_seconds": settings.LABEL_LEASE_SECONDS,
            }
        )


class LabelingItemView(_LabelingView):
    @extend_schema(responses={200: s.LabelingItemSerializer})
    def get(self, request, pk, claim_pk):
        """One claim as the labeling page shows it (no lease): for the
        other claims of a document and for changing a past label."""
        project = self.project(pk)
        items = handout.labeling_items(
            project=project, annotator=request.user, ids=[int(claim_pk)]
        )
        if not items:
            raise NotFound("no such claim")
        return Response(items[0])


def _sent_client_id(item) -> str:
    """The client_id a refused label was sent with, to answer it by."""
    client_id = item.get("client_id") if isinstance(item, dict) else None
    return client_id if isinstance(client_id, str) and len(client_id) <= 64 else ""


def _errors_text(errors, limit: int = 300) -> str:
    """A serializer's errors as one line: ``field: message; ...``."""
    if isinstance(errors, dict):
        parts = [
            (
                _errors_text(value, limit)
                if name == "non_field_errors"
                else f"{name}: {_errors_text(value, limit)}"
            )
            for name, value in errors.items()
        ]
    elif isinstance(errors, list):
        parts = [_errors_text(value, limit) for value in errors]
    else:
        parts = [str(errors)]
    text = "; ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LabelsView(_LabelingView):
    @extend_schema(request=s.LabelsInSerializer, responses={200: s.LabelsOutSerializer})
    def post(self, request, pk):
        """Save labels (a batch from the page's outbox). Each label gets its own
        result, in order: a refused one (status error) does not hold back the
        others. Resending a label with the same client_id is safe, even after
        you changed or undid it (duplicate); labelling a claim again
        replaces your earlier label."""
        project = self.project(pk)
        payload = s.LabelsBatchSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        sent = payload.validated_data["labels"]
        limit = labels.LABELS_BATCH_MAX
        checked = [s.LabelInSerializer(data=item) for item in sent[:limit]]
        stored = iter(
            labels.labels_submit(
                project=project,
                annotator=request.user,
                labels=[item.validated_data for item in checked if item.is_valid()],
            )
        )
        results = [
            next(stored)
            if item.is_valid()
            else labels.LabelResult(
                _sent_client_id(item.initial_data),
                "error",
                error=_errors_text(item.errors),
            )
            for item in checked
        ]
        results += [
            labels.LabelResult(
                _sent_client_id(item),
                "error",
                error=f"not processed: over {limit} labels in one batch; send it again",
            )
            for item in sent[limit:]
        ]
        # No progress here: counting what is left scans the project, and the
        # page sends one label at a time; it gets progress with each batch.
        return Response({"results": [r.as_dict() for r in results]})


class LabelUndoView(_LabelingView):
    @extend_schema(request=None, responses={200: s.UndoOutSerializer})
    def delete(self, request, pk, client_id):
        """Undo: delete your label saved under client_id. Repeating it is safe."""
        project = self.project(pk)
        claim = labels.label_undo(
            project=project, annotator=request.user, client_id=str(client_id)
        )
        return Response({"claim": claim})


class ProgressView(_LabelingView):
    @extend_schema(responses={200: s.ProgressSerializer})
    def get(self, request, pk):
        """Your progress: labels done, pace and what is left."""
        return Response(self.progress(self.project(pk)))


class MyLabelsView(_LabelingView, generics.ListAPIView):
    serializer_class = s.MyLabelSerializer

    def get_serializer_context(self):
        # The project get_queryset checked, which list() calls first.
        return super().get_serializer_context() | {
            "statement": records.claim_statement(self.checked_project)
        }

    def get_queryset(self):
        project = self.checked_project = self.project(self.kwargs["pk"])
        return queue.labels_recent(
            project=project, annotator=self.request.user
        ).select_related("claim__document", "claim__project")

    @extend_schema(responses={200: s.MyLabelSerializer(many=True)})
    def get(self, request, *args, **kwargs):
        """Your labels on the project, newest change first, to page back and
        change them."""
        return super().get(request, *args, **kwargs)
