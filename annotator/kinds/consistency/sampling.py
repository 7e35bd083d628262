"""The sampling job of consistency runs: other models answer the prompts.

FINCH-ZK judges each block of an answer against samples, answers of other
models to variants of its prompt (paper 2.3, A.2, A.4). Answers imported
without samples get them here, from the project's LLM endpoint, with the
library's sampling (``pipeline.checkers.consistency.sampling.sample_item``);
the run around it is :mod:`.consistency_runs`'. The samples go into each
document's metadata, where the check reads them; corrections made from the
old ones are dropped.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.db.models import Q, QuerySet

from annotator.claims.records import document_record
from annotator.core.errors import ApplicationError
from annotator.kinds.consistency.jobs import Calls, model_param, tokens
from annotator.models import Document, Project
from annotator.runs.budgets import integer_param, llm_model_check
from pipeline.checkers.consistency import sampling
from pipeline.checkers.consistency.items import item_from_document, sample_to_json
from pipeline.checkers.consistency.prompts import Prompts

#: Most samples per answer (the paper takes ten, A.4).
MAX_SAMPLES = 50

# Deliberate approximations, for the estimate only: a sample is about as
# long as the answer checked, which answers the same prompt; the long-answer
# variant asks for 1,000 words (~1,400 tokens); an LLM-made variant (and the
# reformulator's answer) about twice the prompt, since the expansions add
# to it.
LONG_ANSWER_TOKENS = 1400
REFORMULATED_GROWTH = 2


def _library():
    # The library imports openai: the web process pays for that import only
    # when an admin asks for an estimate or starts a run.

    return sampling


#: An answer without samples: none given, null or an empty list.
NO_SAMPLES = (
    ~Q(metadata__has_key="samples")
    | Q(metadata__samples=None)
    | Q(metadata__samples=[])
)


def unsampled(project: Project) -> QuerySet[Document]:
    """The project's answers a run would sample: with a prompt, no samples."""
    return (
        Document.objects.filter(project=project, metadata__has_key="prompt")
        .exclude(metadata__prompt="")
        .exclude(metadata__prompt=None)
        .filter(NO_SAMPLES)
    )


class SamplesJob:
    """Samplers answer variants of the prompt of each answer without samples."""

    name = "samples"
    noun = "sampling"
    left = "answers left without samples"
    option_keys: tuple[str, ...] = (
        "samplers",
        "reformulator",
        "samples",
        "seed",
        "variants",
    )
    call_kinds: tuple[str, ...] = ("sample_calls", "reformulation_calls")

    def options(self, project: Project, params: dict[str, Any]) -> dict[str, Any]:
        """``samplers`` (models of the project), ``reformulator`` (writes the
        LLM-made variants; the first sampler by default), ``samples`` per
        answer, ``seed``, ``variants``."""
        samplers = params.get("samplers")
        if (
            not isinstance(samplers, list)
            or not samplers
            or not all(isinstance(m, str) and m for m in samplers)
        ):
            raise ApplicationError("params.samplers must be a non-empty list of models")
        samplers = list(dict.fromkeys(samplers))
        for model in samplers:
            llm_model_check(project, model)
        library = _library()
        variants = params.get("variants", list(library.VARIANTS))
        if not isinstance(variants, list):
            raise ApplicationError("params.variants must be a list")
        try:
            library.check_variants(variants)
        except ValueError as e:
            raise ApplicationError(f"params.variants: {e}") from None
        return {
            "samplers": samplers,
            "reformulator": model_param(project, params, "reformulator", samplers[0]),
            "samples": integer_param(
                params, "samples", library.DEFAULT_SAMPLES, low=1, high=MAX_SAMPLES
            ),
            "seed": integer_param(params, "seed", 0, low=0, high=2**63 - 1),
            "variants": list(dict.fromkeys(variants)),
        }

    def models(self, options: dict[str, Any]) -> list[str]:
        return list(dict.fromkeys([options["reformulator"], *options["samplers"]]))

    def todo(
        self, project: Project, ids: Collection[int] | None = None
    ) -> list[tuple[Document, None]]:
        documents = unsampled(project)
        if ids is not None:
            documents = documents.filter(pk__in=ids)
        return [(d, None) for d in documents.order_by("pk")]

    def estimate(self, document: Document, data: None, options: dict) -> Calls:
        """The calls the library would make for one answer: the same seeded
        assignment, so the same variants are asked for."""
        library = _library()

        prompt = str(document.metadata.get("prompt") or "")
        assignment = library.assign_samples(
            options["samples"],
            variants=options["variants"],
            models=options["samplers"],
            seed=f"{options['seed']}:{document.external_id}",
        )
        made = sorted({v for v, _ in assignment if v in library.REFORMULATED})
        cap = options.get("max_tokens")
        prompts = Prompts()
        prompt_tokens = sum(
            tokens(len(library.reformulation_request(v, prompt, prompts))) for v in made
        )
        completion = len(made) * tokens(REFORMULATED_GROWTH * len(prompt))
        answer = tokens(len(document.text))
        for variant, _ in assignment:
            if variant in library.REFORMULATED:
                prompt_tokens += tokens(REFORMULATED_GROWTH * len(prompt))
            else:
                prompt_tokens += tokens(len(library.static_variant(variant, prompt)))
            wanted = (
                max(answer, LONG_ANSWER_TOKENS) if variant == "long_answer" else answer
            )
            completion += min(wanted, cap) if cap else wanted
        return Calls(
            {"sample_calls": len(assignment), "reformulation_calls": len(made)},
            prompt_tokens,
            completion,
        )

    def work(self, document, data, *, specs, ledger, pool, options):
        item = item_from_document(document_record(document, external=True))
        samples = _library().sample_item(
            item,
            samplers=[specs[m] for m in options["samplers"]],
            reformulator=specs[options["reformulator"]],
            ledger=ledger,
            pool=pool,
            count=options["samples"],
            variants=options["variants"],
            seed=options["seed"],
        )
        return samples, []

    def store(self, row: Document, document: Document, data: None, result) -> bool:
        """The samples, unless the answer got some meanwhile (an import) or
        was asked another prompt since; corrections made from the judgements
        of earlier samples go."""

        if _has_samples(row.metadata) or row.metadata.get(
            "prompt"
        ) != document.metadata.get("prompt"):
            return False
        metadata = {k: v for k, v in row.metadata.items() if k != "corrections"}
        row.metadata = {**metadata, "samples": [sample_to_json(s) for s in result]}
        return True


def _has_samples(metadata: Any) -> bool:
    return isinstance(metadata, dict) and bool(metadata.get("samples"))


SAMPLES = SamplesJob()
