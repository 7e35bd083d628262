"""Keypress to next claim on screen, in headless Chromium.

One expert labels ``--items`` claims by keyboard on the real labeling
page (gunicorn on 127.0.0.1, Debian's Chromium driven by Playwright). Timing
is taken inside the page with performance.now(): from the keydown event to
the page's ``label:rendered`` event (the next item's DOM is in place), and to
the next animation frame after it (about when it is painted). The first
``--warmup`` presses are not counted.

    python bench/bench_label_ui.py            # ~30 s
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _labeling_site import labeling_site  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
]

PROBE = """
window.__bench = { t0: 0, dom: [], frame: [], count: 0 };
document.addEventListener("keydown", () => { window.__bench.t0 = performance.now(); },
                          { capture: true });
document.addEventListener("label:rendered", () => {
  const b = window.__bench;
  if (!b.t0) return;
  const t0 = b.t0;
  b.t0 = 0;
  b.dom.push(performance.now() - t0);
  requestAnimationFrame(() =>
    setTimeout(() => {
      b.frame.push(performance.now() - t0);
      b.count += 1;
    }),
  );
});
"""


def pct(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    total = args.items + args.warmup
    with (
        labeling_site(annotators=1, documents=total // 5 + 10, per_document=5) as site,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.add_init_script(PROBE)
        page.goto(site.url + "/login/")
        page.fill("input[name=username]", site.usernames[0])
        page.fill("input[name=password]", site.password)
        page.press("input[name=password]", "Enter")
        page.wait_for_url(lambda url: "/login/" not in url)
        page.goto(f"{site.url}/projects/{site.project_id}/label/")
        page.wait_for_selector("#item:not([hidden])")
        keys = "sjkul "
        for n in range(total):
            page.keyboard.press(keys[n % len(keys)])
            page.wait_for_function(f"() => window.__bench.count > {n}")
            if n + 1 == args.warmup:
                page.evaluate(
                    "() => { window.__bench.dom = []; window.__bench.frame = []; }"
                )
        dom = page.evaluate("() => window.__bench.dom")
        frame = page.evaluate("() => window.__bench.frame")
        page.wait_for_selector("#sync:text('all saved')", timeout=30_000)
        browser.close()
    print(
        f"{len(dom)} keypresses in headless Chromium ({CHROMIUM}), "
        f"{args.warmup} warm-up"
    )
    for name, values in (
        ("keydown -> next item in DOM", dom),
        ("keydown -> next frame", frame),
    ):
        print(
            f"{name:28s} median {statistics.median(values):6.2f} ms  "
            f"p95 {pct(values, 0.95):6.2f} ms  max {max(values):6.2f} ms"
        )
    print(
        "target median <= 50 ms: "
        + ("met" if statistics.median(dom) <= 50 else "NOT met")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
