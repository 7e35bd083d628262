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
import uuid
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _labeling_site import labeling_site  # noqa: E402
from bench_queue_load import pct  # noqa: E402


def _times_ms(fn, runs) -> list[float]:
    times = []
    for arg in runs:
        started = time.perf_counter()
        fn(arg)
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=2000, help="10 claims each")
    parser.add_argument("--experts", type=int, default=20)
    args = parser.parse_args()
    with labeling_site(
        annotators=args.experts, documents=args.documents, per_document=10
    ) as site:
        needed = site.labels_needed
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
            f"uncertainty order; p95 and median over {len(experts)} experts"
        )
        print(
            f"{'labelled':>9} {'next p95':>9} {'median':>7} {'submit p95':>11} "
            f"{'median':>7} {'progress':>9} {'duplicates':>11}"
        )
        labelled, first, worst, duplicates = 0, None, 0.0, 0
        for share in (0.0, 0.1, 0.4, 0.75):
            target = int(share * total)
            Label.objects.bulk_create(
                (
                    Label(
                        claim_id=pk,
                        annotator=experts[i % len(experts)],
                        label="safe",
                    )
                    for i, pk in enumerate(order[labelled:target], start=labelled)
                ),
                batch_size=5000,
                ignore_conflicts=True,  # an expert's own label of the last round
            )
            labelled = target
            Lease.objects.all().delete()  # each round hands out afresh
            # As autovacuum leaves a live database: a label arriving one at a
            # time leaves one dead index entry, which the next scan clears;
            # thousands inserted at once would leave them all to the first.
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
            handed: dict[str, list[int]] = {}

            def hand_out(u, handed=handed):
                handed[u.username] = labels.labeling_next(
                    project=project, annotator=u, count=20
                )

            def submit(u, handed=handed):
                labels.labels_submit(
                    project=project,
                    annotator=u,
                    labels=[
                        {
                            "client_id": str(uuid.uuid4()),
                            "claim": handed[u.username][0],
                            "label": "safe",
                        }
                    ],
                )

            nexts = _times_ms(hand_out, experts)
            holders = Counter(c for ids in handed.values() for c in ids)
            round_duplicates = sum(max(0, n - needed(c)) for c, n in holders.items())
            duplicates += round_duplicates
            submits = _times_ms(submit, experts)
            progress = _times_ms(
                lambda u: queue.queue_progress(
                    project=project, annotator=u, now=timezone.now()
                ),
                experts,
            )
            hand_med = statistics.median(nexts)
            first = first or hand_med
            worst = max(worst, pct(nexts, 0.95), pct(submits, 0.95))
            print(
                f"{share:>8.0%} {pct(nexts, 0.95):>9.1f} {hand_med:>7.1f} "
                f"{pct(submits, 0.95):>11.1f} {statistics.median(submits):>7.1f} "
                f"{statistics.median(progress):>9.1f} {round_duplicates:>11}"
            )
        print(f"hand-out at 75% labelled / at none: {hand_med / first:.2f}x (medians)")
        met = worst <= 50 and not duplicates
        print(
            f"target next and submit p95 <= 50 ms, no duplicate hand-out: "
            f"{'met' if met else 'NOT met'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
