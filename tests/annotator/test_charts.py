import xml.etree.ElementTree as ET

import pytest

from annotator.dashboard.charts import (
    BarSeries,
    Reference,
    Series,
    bar_chart,
    bin_values,
    histogram,
    line_chart,
    nice_ticks,
    pr_curve,
)

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert("x")</script> & "quotes"'


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def texts(root) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def tooltips(root, cls: str) -> list[str]:
    return [
        el.find(f"{SVG}title").text
        for el in root.iter()
        if el.get("class") == cls and el.find(f"{SVG}title") is not None
    ]


def test_nice_ticks_cover_the_range_with_round_steps():
    assert nice_ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0, 537) == [0, 200, 400, 600]
    ticks = nice_ticks(0.31, 0.93)
    assert ticks[0] <= 0.31 and ticks[-1] >= 0.93
    assert nice_ticks(5, 5)[0] < 5 < nice_ticks(5, 5)[-1]


def test_line_chart_has_title_axes_ticks_points_and_legend():
    svg = line_chart(
        [
            Series("synth>human", [(0, 0.25), (200, 0.83), (500, 0.89)]),
            ("human only", [(0, 0.25), (500, 0.82)]),
        ],
        title="Learning curve",
        x_label="Expert labels",
        y_label="F1 on the gold set",
        y_range=(0, 1),
        references=[Reference(0.827, "LLM scorer")],
    )
    root = parse(svg)
    assert root.find(f"{SVG}title").text == "Learning curve"
    assert root.get("role") == "img" and root.get("aria-label") == "Learning curve"
    words = texts(root)
    assert {"Expert labels", "F1 on the gold set", "LLM scorer"} <= set(words)
    assert {"0.0", "0.2", "1.0", "0", "200", "400"} <= set(words)
    assert {"synth>human", "human only"} <= set(words)  # legend
    points = tooltips(root, "point")
    assert "synth>human: 200, 0.830" in points
    assert sum(p.startswith("human only:") for p in points) == 2
    assert len(root.findall(f".//{SVG}polyline")) == 2
    # Series differ in dash pattern, not colour alone.
    dashes = {p.get("stroke-dasharray") for p in root.iter(f"{SVG}polyline")}
    assert len(dashes) == 2


def test_points_are_placed_by_value():
    root = parse(
        line_chart(
            [Series("s", [(0, 0), (10, 1)], notes=["low", "high"])],
            title="t",
            x_label="x",
            y_label="y",
            x_range=(0, 10),
            y_range=(0, 1),
        )
    )
    low, high = (
        el
        for el in root.iter()
        if el.get("class") == "point" and el.tag.endswith("circle")
    )
    assert low.find(f"{SVG}title").text == "low"
    assert float(low.get("cx")) < float(high.get("cx"))
    assert float(low.get("cy")) > float(high.get("cy"))  # SVG y grows downwards


def test_hostile_labels_are_escaped_everywhere():
    svgs = [
        line_chart(
            [Series(HOSTILE, [(1, 1)], notes=[HOSTILE])],
            title=HOSTILE,
            x_label=HOSTILE,
            y_label=HOSTILE,
            references=[Reference(0.5, HOSTILE)],
        ),
        bar_chart(
            [HOSTILE], [BarSeries(HOSTILE, [0.5])], title=HOSTILE, value_label=HOSTILE
        ),
        histogram(
            [1, 2], title=HOSTILE, x_label=HOSTILE, markers=[Reference(0.5, HOSTILE)]
        ),
        pr_curve([(HOSTILE, [(0.5, 0.5)])], title=HOSTILE),
    ]
    for svg in svgs:
        assert "<script" not in svg
        root = parse(svg)  # still well-formed XML
        assert root.find(f"{SVG}title").text == HOSTILE
        assert root.get("aria-label") == HOSTILE
        assert not list(root.iter(f"{SVG}script"))


def test_control_characters_in_labels_keep_the_document_parseable():
    root = parse(
        line_chart([("a\x00b\x1b", [(1, 1)])], title="t", x_label="x", y_label="y")
    )
    assert "ab" in texts(root)


def test_bar_chart_groups_series_per_category_and_marks_missing_values():
    svg = bar_chart(
        ["gpt-4.1", "llama-4-scout"],
        [
            BarSeries("SafePassage score", [0.9, 0.7]),
            BarSeries("Human score", [0.95, None]),
        ],
        title="Per source LLM",
        value_label="Share safe",
        value_range=(0, 1),
    )
    root = parse(svg)
    bars = tooltips(root, "bar")
    assert bars == [
        "gpt-4.1 · SafePassage score: 0.900",
        "gpt-4.1 · Human score: 0.950",
        "llama-4-scout · SafePassage score: 0.700",
    ]
    assert "llama-4-scout · Human score: no data" in tooltips(root, "bar-missing")
    widths = [
        float(r.get("width"))
        for r in root.iter(f"{SVG}rect")
        if r.get("class") == "bar"
    ]
    assert widths[1] > widths[0] > widths[2] > 0
    # The two series differ in lightness, so they read in greyscale.
    fills = [r.get("fill") for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]
    assert fills[0] != fills[1]
    assert {"gpt-4.1", "llama-4-scout", "Share safe"} <= set(texts(root))


def test_bar_chart_rejects_a_series_of_the_wrong_length():
    with pytest.raises(ValueError, match="2 values for 1 categories"):
        bar_chart(["a"], [("s", [1, 2])], title="t", value_label="v")


def test_histogram_bins_and_threshold_marker():
    assert bin_values([0.0, 0.05, 0.5, 0.99, 1.0, 1.2], bins=4) == [2, 0, 1, 3]
    root = parse(
        histogram(
            bin_values([0.1, 0.7, 0.72], bins=10),
            title="Alignment scores",
            x_label="Alignment score",
            markers=[Reference(0.6, "keep >= 0.6")],
        )
    )
    bars = tooltips(root, "bar")
    assert len(bars) == 10
    assert bars[1] == "[0.10, 0.20): 1" and bars[7] == "[0.70, 0.80): 2"
    assert bars[-1].endswith("]: 0")
    assert "keep >= 0.6" in texts(root)


def test_empty_charts_say_so():
    for svg in (
        line_chart([], title="t", x_label="x", y_label="y"),
        bar_chart([], [], title="t", value_label="v"),
        histogram([0] * 5, title="t", x_label="x"),
    ):
        assert "No data yet" in texts(parse(svg))


def test_pr_curve_has_fixed_unit_axes_and_marker_only_operating_points():
    root = parse(
        pr_curve(
            [("v3", [(0.2, 1.0), (0.6, 0.9), (1.0, 0.5)])],
            operating_points=[("paper Table 1", [(0.857, 0.928)])],
        )
    )
    words = texts(root)
    assert "0.0" in words and "1.0" in words
    assert len(root.findall(f".//{SVG}polyline")) == 1  # the operating point has none
    assert "paper Table 1: 0.857, 0.928" in tooltips(root, "point")


def test_pr_curve_without_a_curve_says_so_even_with_operating_points():
    root = parse(pr_curve([("v1", [])], operating_points=[("paper", [(0.857, 0.93)])]))
    assert "No labelled scores yet" in texts(root)
    assert "paper: 0.857, 0.930" in tooltips(root, "point")


def test_dense_series_are_drawn_as_a_line_without_a_marker_per_point():
    dense = [(i / 100, 1 - i / 200) for i in range(101)]
    root = parse(
        line_chart(
            [("dense", dense), ("sparse", [(0.5, 0.5)])],
            title="t",
            x_label="x",
            y_label="y",
        )
    )
    points = tooltips(root, "point")
    assert points == ["sparse: 0.500, 0.500"]
    assert [p.find(f"{SVG}title").text for p in root.iter(f"{SVG}polyline")] == [
        "dense"
    ]


def bar_heights(root) -> dict[str, float]:
    return {
        r.find(f"{SVG}title").text: float(r.get("height"))
        for r in root.iter(f"{SVG}rect")
        if r.get("class") == "bar"
    }


def test_log_scale_histogram_keeps_a_small_bin_visible_beside_a_huge_one():
    counts = bin_values([1.0] * 1000 + [0.7] * 5 + [0.4], bins=10)
    linear = bar_heights(parse(histogram(counts, title="t", x_label="x")))
    assert linear["[0.70, 0.80): 5"] < 2  # the problem: a hairline
    root = parse(histogram(counts, title="t", x_label="x", log_scale=True))
    bars = bar_heights(root)
    full = bars["[0.90, 1.00]: 1000"]
    # log10(1 + n) over log10(1 + 1000): 5 reaches a quarter of the peak, 1 a
    # tenth, an empty bin stays at zero.
    assert bars["[0.70, 0.80): 5"] == pytest.approx(full * 0.259, rel=0.02)
    assert bars["[0.70, 0.80): 5"] > 40
    assert bars["[0.40, 0.50): 1"] == pytest.approx(full * 0.1, rel=0.02)
    assert bars["[0.50, 0.60): 0"] == 0
    words = texts(root)
    assert {"0", "1", "10", "100", "1000"} <= set(words)
    assert "Count (log scale)" in words
    assert "Count (log scale)" in root.find(f"{SVG}desc").text


def test_log_scale_ticks_stop_at_the_first_power_of_ten_above_the_peak():
    words = texts(parse(histogram([3, 0, 40], title="t", x_label="x", log_scale=True)))
    assert {"0", "1", "10", "100"} <= set(words) and "1000" not in words
