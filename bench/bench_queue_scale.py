"""Cost of a hand-out as a project fills up with labels.

The uncertainty order labels the front of the queue first, so every label
lands where the next hand-out starts reading. The queue indexes hold open
claims only (their label state is kept by database triggers), so a
hand-out should cost the same with no labels as with most of the project
labelled. Times ``labels.labeling_next`` (20 items) and the expert's
progress in-process on a 20,000-claim project, labelled in queue order.

    python bench/bench_queue_scale.py      # ~1 minute
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _labeling_site import labeling_site  # noqa: E402


def _median_ms(fn, runs) -> float:
    times = []
    for arg in runs:
        started = time.perf_counter()
        fn(arg)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=2000, help="10 claims each")
    parser.add_argument("--experts", type=int, default=20)
    args = parser.parse_args()
    with labeling_site(
        annotators=args.experts, documents=args.documents, per_document=10
    ):
        from django.contrib.auth import get_user_model
        from django.db import connection
        from django.utils import timezone

        from annotator.labeling import labels, queue
        from annotator.models import Claim, Label, Lease, Project

        experts = list(get_user_model().objects.order_by("username"))
        project = Project.objects.get()
        order = list(
            Claim.objects.filter(project=project)
            .order_by("uncertainty", "pk")
            .values_list("pk", flat=True)
        )
        total = len(order)
        print(
            f"{total} claims, {len(experts)} experts, labelled in the "
            f"uncertainty order; medians over {len(experts)} experts"
        )
        print(f"{'labelled':>9} {'hand-out ms':>12} {'progress ms':>12}")
        labelled, first = 0, None
        for share in (0.0, 0.1, 0.4, 0.75):
            target = int(share * total)
            Label.objects.bulk_create(
                Label(
                    claim_id=pk,
                    annotator=experts[i % len(experts)],
                    label="safe",
                )
                for i, pk in enumerate(order[labelled:target], start=labelled)
            )
            labelled = target
            Lease.objects.all().delete()  # each round hands out afresh
            # As autovacuum leaves a live database: a label arriving one at a
            # time leaves one dead index entry, which the next scan clears;
            # thousands inserted at once would leave them all to the first.
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
            hand_out = _median_ms(
                lambda u: labels.labeling_next(project=project, annotator=u, count=20),
                experts,
            )
            progress = _median_ms(
                lambda u: queue.queue_progress(
                    project=project, annotator=u, now=timezone.now()
                ),
                experts,
            )
            first = first or hand_out
            print(f"{share:>8.0%} {hand_out:>12.1f} {progress:>12.1f}")
        print(f"hand-out at 75% labelled / at none: {hand_out / first:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
