"""Charts as standalone SVG strings: no dependencies, no Django, pure functions.

The dashboard inlines them in its page and the benchmarks write them to
``.svg`` files (paper Figure 4 and 5 style), so every chart is a complete
document: ``xmlns``, a ``viewBox``, a ``<title>`` and ``<desc>`` for screen
readers, axis labels and ticks, and a ``<title>`` tooltip on every point or
bar. Series differ in colour *and* in something that survives greyscale
printing: marker shape and dash pattern for lines, lightness and outline for
bars.

Drawing is the app's business, not the library's; this module still imports
nothing from Django, so the benchmarks use it without settings.

Every piece of caller text (titles, series and category labels, notes) is
escaped here, which is what makes the output safe to inline in an HTML page
even when the labels come from untrusted data (LLM names, usernames).

Example::

    svg = line_chart(
        [Series("NLI synth>human", [(0, 0.25), (200, 0.83), (500, 0.89)])],
        title="Learning curve",
        x_label="Expert labels",
        y_label="F1 (unsafe)",
        y_range=(0, 1),
    )
    Path("figure4.svg").write_text(svg)
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import TypeVar, cast

__all__ = [
    "BarSeries",
    "Reference",
    "Series",
    "bar_chart",
    "bin_values",
    "histogram",
    "line_chart",
    "nice_ticks",
    "pr_curve",
]

# Dark-to-light with distinct hues (Okabe-Ito-like): neighbours differ in
# lightness, so they stay apart in greyscale as well as for colour-blind readers.
PALETTE = ["#1f3b73", "#d55e00", "#009e73", "#7a7a7a", "#cc79a7", "#56b4e9"]
DASHES = ["", "6 3", "2 3", "8 3 2 3", "1 2", "10 4"]
MARKERS = ["circle", "square", "triangle", "diamond", "cross", "circle-open"]
# Bars: alternate dark and light fills, each outlined, so two series of a
# group are told apart on a greyscale print.
BAR_FILLS = ["#1f3b73", "#9ecae1", "#d55e00", "#fdd0a2", "#009e73", "#c7e9c0"]
MAX_MARKERS = 40
INK = "#101828"
GRID = "#e4e7ec"
MUTED = "#667085"
FONT = "system-ui, -apple-system, 'Segoe UI', sans-serif"

# Characters XML 1.0 forbids even escaped; a hostile label must not make the
# document unparseable.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class Series:
    """A named sequence of ``(x, y)`` points, drawn in the given order.

    ``notes``, when given, has one tooltip text per point (e.g. a model
    version); otherwise the tooltip is ``label: x, y``. ``markers``: draw a
    marker (with its tooltip) on every point; by default only when there are
    at most MAX_MARKERS, so a dense curve stays a readable line.
    """

    label: str
    points: Sequence[tuple[float, float]]
    notes: Sequence[str] = field(default_factory=tuple)
    line: bool = True
    markers: bool | None = None


@dataclass(frozen=True)
class BarSeries:
    """One value per category (``None``: no data, drawn as "n/a")."""

    label: str
    values: Sequence[float | None]
    notes: Sequence[str] = field(default_factory=tuple)


@dataclass(frozen=True)
class Reference:
    """A labelled straight line across the plot at ``value`` on one axis."""

    value: float
    label: str


def _text(value: object) -> str:
    """Escaped for both XML text and attribute values."""
    return escape(_XML_INVALID.sub("", str(value)), quote=True)


def _fmt(value: float, step: float | None = None) -> str:
    if step is not None and step > 0:
        decimals = max(0, -math.floor(math.log10(step) + 1e-9))
        return f"{value:.{decimals}f}"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.3g}" if abs(value) < 1e-2 or abs(value) >= 1e4 else f"{value:.3f}"


def _fmt_or_na(value: float | None) -> str:
    return "n/a" if value is None else _fmt(value)


def nice_ticks(lo: float, hi: float, *, count: int = 5) -> list[float]:
    """Round tick values covering ``[lo, hi]``, about ``count`` of them.

    Returns:
        Ascending values; the first is <= lo and the last >= hi.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError("tick range must be finite")
    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:
        lo, hi = (lo - 1, hi + 1) if lo == 0 else (lo - abs(lo) / 2, hi + abs(hi) / 2)
    raw = (hi - lo) / max(1, count)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    ticks = [round(i * step, 12) for i in range(first, last + 1)]
    return ticks


def _step(ticks: Sequence[float]) -> float | None:
    return ticks[1] - ticks[0] if len(ticks) > 1 else None


_S = TypeVar("_S", "Series", "BarSeries")


def _coerce(series: Sequence[_S | tuple], kind: type[_S]) -> list[_S]:
    # ``kind`` is exactly Series or BarSeries: whatever is not one is a tuple.
    return [s if isinstance(s, kind) else kind(*cast(tuple, s)) for s in series]


class _Frame:
    """The plot area inside margins, and the mapping from data to pixels."""

    def __init__(self, *, width, height, left, right, top, bottom, x, y):
        self.width, self.height = width, height
        self.x0, self.x1 = left, width - right
        self.y0, self.y1 = height - bottom, top  # y grows downwards
        self.xlo, self.xhi = x
        self.ylo, self.yhi = y

    def px(self, x: float) -> float:
        span = (self.xhi - self.xlo) or 1.0
        return round(self.x0 + (x - self.xlo) / span * (self.x1 - self.x0), 2)

    def py(self, y: float) -> float:
        span = (self.yhi - self.ylo) or 1.0
        return round(self.y0 - (y - self.ylo) / span * (self.y0 - self.y1), 2)


def _document(width: int, height: int, title: str, desc: str, body: list[str]) -> str:
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'aria-label="{_text(title)}" font-family="{_text(FONT)}" '
            f'font-size="12" fill="{INK}">',
            f"<title>{_text(title)}</title>",
            f"<desc>{_text(desc)}</desc>",
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
            f'<text class="chart-title" x="12" y="20" font-size="15" '
            f'font-weight="600">{_text(title)}</text>',
            *body,
            "</svg>",
        ]
    )


def _axes(
    frame: _Frame,
    *,
    x_ticks: Sequence[float],
    y_ticks: Sequence[float],
    x_label: str,
    y_label: str,
    x_tick_labels: Sequence[str] | None = None,
    y_tick_labels: Sequence[str] | None = None,
) -> list[str]:
    out = []
    x_step, y_step = _step(x_ticks), _step(y_ticks)
    for i, t in enumerate(y_ticks):
        y = frame.py(t)
        label = y_tick_labels[i] if y_tick_labels is not None else _fmt(t, y_step)
        out.append(
            f'<line x1="{frame.x0}" x2="{frame.x1}" y1="{y}" y2="{y}" stroke="{GRID}"/>'
        )
        out.append(
            f'<text class="tick" x="{frame.x0 - 6}" y="{y + 4}" '
            f'text-anchor="end">{_text(label)}</text>'
        )
    for i, t in enumerate(x_ticks):
        x = frame.px(t)
        label = x_tick_labels[i] if x_tick_labels is not None else _fmt(t, x_step)
        out.append(
            f'<line x1="{x}" x2="{x}" y1="{frame.y0}" y2="{frame.y0 + 4}" '
            f'stroke="{INK}"/>'
        )
        out.append(
            f'<text class="tick" x="{x}" y="{frame.y0 + 17}" '
            f'text-anchor="middle">{_text(label)}</text>'
        )
    out.append(
        f'<path d="M{frame.x0} {frame.y1} V{frame.y0} H{frame.x1}" fill="none" '
        f'stroke="{INK}"/>'
    )
    out.append(
        f'<text class="axis-label" x="{(frame.x0 + frame.x1) / 2}" '
        f'y="{frame.height - 8}" text-anchor="middle">{_text(x_label)}</text>'
    )
    middle = (frame.y0 + frame.y1) / 2
    out.append(
        f'<text class="axis-label" x="14" y="{middle}" text-anchor="middle" '
        f'transform="rotate(-90 14 {middle})">{_text(y_label)}</text>'
    )
    return out


def _marker(
    shape: str, x: float, y: float, colour: str, tip: str, cls: str = "point"
) -> str:
    tooltip = f"<title>{_text(tip)}</title>"
    r = 4.5
    attrs = f'fill="{colour}" stroke="#ffffff" stroke-width="1"'
    if shape == "square":
        return (
            f'<rect class="{cls}" x="{x - r}" y="{y - r}" width="{2 * r}" '
            f'height="{2 * r}" {attrs}>{tooltip}</rect>'
        )
    if shape == "circle-open":
        return (
            f'<circle class="{cls}" cx="{x}" cy="{y}" r="{r}" fill="#ffffff" '
            f'stroke="{colour}" stroke-width="2">{tooltip}</circle>'
        )
    if shape in ("triangle", "diamond", "cross"):
        if shape == "triangle":
            d = f"M{x} {y - r - 1} L{x + r + 1} {y + r} L{x - r - 1} {y + r} Z"
        elif shape == "diamond":
            d = f"M{x} {y - r - 1} L{x + r + 1} {y} L{x} {y + r + 1} L{x - r - 1} {y} Z"
        else:
            d = f"M{x - r} {y - r} L{x + r} {y + r} M{x - r} {y + r} L{x + r} {y - r}"
            attrs = f'fill="none" stroke="{colour}" stroke-width="2.5"'
        return f'<path class="{cls}" d="{d}" {attrs}>{tooltip}</path>'
    return f'<circle class="{cls}" cx="{x}" cy="{y}" r="{r}" {attrs}>{tooltip}</circle>'


def _legend(entries: list[tuple[str, str]], *, x: float, y: float) -> list[str]:
    """``entries``: (swatch SVG at the origin, label); laid out in one row,
    wrapping when long."""
    out = ['<g class="legend">']
    cx, cy = x, y
    for swatch, label in entries:
        width = 34 + 6.5 * len(label)
        if cx + width > x + 560 and cx > x:
            cx, cy = x, cy + 16
        out.append(
            f'<g transform="translate({round(cx, 1)} {cy})">{swatch}'
            f'<text x="30" y="4">{_text(label)}</text></g>'
        )
        cx += width
    out.append("</g>")
    return out


def _empty(frame: _Frame, message: str) -> str:
    return (
        f'<text class="empty" x="{(frame.x0 + frame.x1) / 2}" '
        f'y="{(frame.y0 + frame.y1) / 2}" text-anchor="middle" '
        f'fill="{MUTED}">{_text(message)}</text>'
    )


def _range(values: Sequence[float], fixed: tuple[float, float] | None) -> tuple:
    if fixed is not None:
        return fixed
    if not values:
        return (0.0, 1.0)
    return (min(values), max(values))


def line_chart(
    series: Sequence[Series | tuple],
    *,
    title: str,
    x_label: str,
    y_label: str,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    references: Sequence[Reference] = (),
    width: int = 640,
    height: int = 360,
    empty_message: str = "No data yet",
    empty: bool | None = None,
) -> str:
    """Several series of ``(x, y)`` points, e.g. F1 against labels (Figure 4).

    Args:
        series: :class:`Series` or ``(label, points)`` tuples; a series with
            ``line=False`` (or a single point) is drawn as markers only.
        x_range, y_range: fixed axis extents; by default the data's, widened
            to round ticks.
        references: horizontal lines (e.g. a baseline's F1), dashed and
            labelled.
        empty: show ``empty_message``; by default when there are no points.

    Returns:
        A standalone SVG document.
    """
    lines = _coerce(series, Series)
    xs = [x for s in lines for x, _ in s.points]
    ys = [y for s in lines for _, y in s.points] + [r.value for r in references]
    x_ticks = nice_ticks(*_range(xs, x_range))
    y_ticks = nice_ticks(*_range(ys, y_range))
    if x_range is not None:
        x_ticks = [t for t in x_ticks if x_range[0] <= t <= x_range[1]] or x_ticks
    if y_range is not None:
        y_ticks = [t for t in y_ticks if y_range[0] <= t <= y_range[1]] or y_ticks
    legend_rows = 1 + (len(lines) > 3)
    frame = _Frame(
        width=width,
        height=height,
        left=56,
        right=24,
        top=34 + 16 * legend_rows + 8,
        bottom=44,
        x=x_range or (x_ticks[0], x_ticks[-1]),
        y=y_range or (y_ticks[0], y_ticks[-1]),
    )
    body = _axes(
        frame, x_ticks=x_ticks, y_ticks=y_ticks, x_label=x_label, y_label=y_label
    )
    for ref in references:
        y = frame.py(ref.value)
        body.append(
            f'<g class="reference"><line x1="{frame.x0}" x2="{frame.x1}" y1="{y}" '
            f'y2="{y}" stroke="{MUTED}" stroke-dasharray="4 4">'
            f"<title>{_text(ref.label)}: {_text(_fmt(ref.value))}</title></line>"
            f'<text x="{frame.x0 + 6}" y="{y - 5}" '
            f'fill="{MUTED}">{_text(ref.label)}</text></g>'
        )
    legend = []
    for i, s in enumerate(lines):
        colour, dash = PALETTE[i % len(PALETTE)], DASHES[i % len(DASHES)]
        shape = MARKERS[i % len(MARKERS)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        body.append(f'<g class="series" data-series="{i}">')
        pixels = [(frame.px(x), frame.py(y)) for x, y in s.points]
        markers = (
            s.markers
            if s.markers is not None
            else len(pixels) <= MAX_MARKERS or not s.line
        )
        if s.line and len(pixels) > 1:
            path = " ".join(f"{x},{y}" for x, y in pixels)
            body.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" '
                f'stroke-width="2"{dash_attr}><title>{_text(s.label)}</title>'
                "</polyline>"
            )
        for j, ((x, y), (px, py)) in enumerate(zip(s.points, pixels, strict=True)):
            if not markers:
                break
            tip = s.notes[j] if j < len(s.notes) else f"{s.label}: {_fmt(x)}, {_fmt(y)}"
            body.append(_marker(shape, px, py, colour, tip))
        body.append("</g>")
        line = (
            f'<line x1="0" x2="24" y1="0" y2="0" stroke="{colour}" '
            f'stroke-width="2"{dash_attr}/>'
            if s.line
            else ""
        )
        legend.append(
            (line + _marker(shape, 12, 0, colour, s.label, "legend-marker"), s.label)
        )
    body += _legend(legend, x=12, y=42)
    if (not xs) if empty is None else empty:
        body.append(_empty(frame, empty_message))
    desc = "; ".join(
        f"{s.label}: " + ", ".join(f"({_fmt(x)}, {_fmt(y)})" for x, y in s.points)
        for s in lines
    )
    return _document(width, height, title, f"{x_label} against {y_label}. {desc}", body)


def pr_curve(
    curves: Sequence[Series | tuple],
    *,
    title: str = "Precision-recall, flagging unsafe",
    operating_points: Sequence[Series | tuple] = (),
    references: Sequence[Reference] = (),
    width: int = 560,
    height: int = 440,
    empty_message: str = "No labelled scores yet",
) -> str:
    """Precision against recall on fixed ``[0, 1]`` axes.

    Args:
        curves: ``(label, [(recall, precision), ...])`` series, e.g. from
            :func:`pipeline.evaluate.precision_recall_curve`.
        operating_points: single points drawn as markers only, e.g. the active
            threshold or a published result (paper Table 1: R 0.857, P 0.928).
    """
    lines = _coerce(curves, Series)
    series = lines + [
        Series(p.label, p.points, p.notes, line=False)
        for p in _coerce(operating_points, Series)
    ]
    return line_chart(
        series,
        title=title,
        x_label="Recall (share of unsafe flagged)",
        y_label="Precision (flags that are unsafe)",
        x_range=(0.0, 1.0),
        y_range=(0.0, 1.0),
        references=references,
        width=width,
        height=height,
        empty_message=empty_message,
        empty=not any(c.points for c in lines),
    )


def bar_chart(
    categories: Sequence[str],
    series: Sequence[BarSeries | tuple],
    *,
    title: str,
    value_label: str,
    value_range: tuple[float, float] | None = None,
    references: Sequence[Reference] = (),
    width: int = 640,
    empty_message: str = "No data yet",
) -> str:
    """Grouped horizontal bars: one group per category, one bar per series
    (e.g. per source LLM its SafePassage score beside its human score, as in
    paper Figure 5). Horizontal, so long model names stay readable; the height
    grows with the number of categories.

    Args:
        categories: group names, top to bottom.
        series: :class:`BarSeries` or ``(label, values)`` tuples, one value per
            category; ``None`` is drawn as "n/a".
        value_range: the value axis extent; by default 0 to the largest value.
        references: vertical lines on the value axis (e.g. a target rate).
    """
    bar_series = _coerce(series, BarSeries)
    for s in bar_series:
        if len(s.values) != len(categories):
            raise ValueError(
                f"series {s.label!r} has {len(s.values)} values "
                f"for {len(categories)} categories"
            )
    values = [v for s in bar_series for v in s.values if v is not None]
    values += [r.value for r in references]
    lo, hi = value_range or (0.0, max(values, default=1.0) or 1.0)
    ticks = [t for t in nice_ticks(lo, hi) if value_range is None or lo <= t <= hi]
    if value_range is None:
        lo, hi = ticks[0], ticks[-1]
    bar = 14
    group = bar * max(1, len(bar_series)) + 12
    names = [_clip(c, 22) for c in categories]
    left = 16 + min(170, 7 * max((len(n) for n in names), default=4))
    top = 34 + 16 + 12
    plot_height = max(group * len(categories), 60)
    height = top + plot_height + 44
    frame = _Frame(
        width=width,
        height=height,
        left=left,
        right=48,
        top=top,
        bottom=44,
        x=(lo, hi),
        y=(0, 1),
    )
    body = []
    step = _step(ticks)
    for t in ticks:
        x = frame.px(t)
        body.append(
            f'<line x1="{x}" x2="{x}" y1="{frame.y1}" y2="{frame.y0}" stroke="{GRID}"/>'
        )
        body.append(
            f'<text class="tick" x="{x}" y="{frame.y0 + 17}" '
            f'text-anchor="middle">{_text(_fmt(t, step))}</text>'
        )
    body.append(
        f'<path d="M{frame.x0} {frame.y1} V{frame.y0} H{frame.x1}" fill="none" '
        f'stroke="{INK}"/>'
    )
    body.append(
        f'<text class="axis-label" x="{(frame.x0 + frame.x1) / 2}" '
        f'y="{height - 8}" text-anchor="middle">{_text(value_label)}</text>'
    )
    for c, (category, name) in enumerate(zip(categories, names, strict=True)):
        gy = frame.y1 + c * group + 6
        body.append(
            f'<g class="group"><g class="category"><title>{_text(category)}</title>'
            f'<text x="{frame.x0 - 8}" y="{gy + group / 2 - 2}" '
            f'text-anchor="end">{_text(name)}</text></g>'
        )
        for i, s in enumerate(bar_series):
            y = gy + i * bar
            value = s.values[c]
            note = s.notes[c] if c < len(s.notes) else None
            if value is None:
                tip = note or f"{category} · {s.label}: no data"
                body.append(
                    f'<g class="bar-missing"><title>{_text(tip)}</title>'
                    f'<text x="{frame.x0 + 4}" y="{y + bar - 3}" fill="{MUTED}" '
                    'font-size="11">n/a</text></g>'
                )
                continue
            x_end = frame.px(min(max(value, lo), hi))
            fill = BAR_FILLS[i % len(BAR_FILLS)]
            tip = note or f"{category} · {s.label}: {_fmt(value)}"
            body.append(
                f'<rect class="bar" x="{frame.x0}" y="{y}" '
                f'width="{max(0.0, round(x_end - frame.x0, 2))}" height="{bar - 2}" '
                f'fill="{fill}" stroke="{INK}" stroke-width="0.6">'
                f"<title>{_text(tip)}</title></rect>"
            )
            body.append(
                f'<text class="bar-value" x="{x_end + 4}" y="{y + bar - 4}" '
                f'font-size="11">{_text(_fmt_value(value))}</text>'
            )
        body.append("</g>")
    for ref in references:
        x = frame.px(ref.value)
        body.append(
            f'<g class="reference"><line x1="{x}" x2="{x}" y1="{frame.y1 - 4}" '
            f'y2="{frame.y0}" stroke="{MUTED}" stroke-dasharray="4 4" '
            f'stroke-width="1.5"><title>{_text(ref.label)}: {_text(_fmt(ref.value))}'
            f'</title></line><text x="{x - 3}" y="{frame.y1 - 6}" fill="{MUTED}" '
            f'font-size="11" text-anchor="end">{_text(ref.label)}</text></g>'
        )
    legend = [
        (
            f'<rect x="4" y="-6" width="20" height="12" '
            f'fill="{BAR_FILLS[i % len(BAR_FILLS)]}" stroke="{INK}" '
            f'stroke-width="0.6"/>',
            s.label,
        )
        for i, s in enumerate(bar_series)
    ]
    body += _legend(legend, x=12, y=42)
    if not categories:
        body.append(_empty(frame, empty_message))
    desc = "; ".join(
        f"{category}: "
        + ", ".join(f"{s.label} {_fmt_or_na(s.values[c])}" for s in bar_series)
        for c, category in enumerate(categories)
    )
    return _document(width, height, title, f"{value_label}. {desc}", body)


def _log_count(count: float) -> float:
    return math.log10(1 + max(0.0, count))


def _fmt_value(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 10 else f"{value:.3f}"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def bin_values(
    values: Sequence[float], *, bins: int = 20, lo: float = 0.0, hi: float = 1.0
) -> list[int]:
    """Counts of ``values`` in ``bins`` equal bins over ``[lo, hi]`` (the last
    bin closed); values outside are clamped into the end bins."""
    if bins < 1 or hi <= lo:
        raise ValueError("need bins >= 1 and hi > lo")
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int((v - lo) / (hi - lo) * bins)))] += 1
    return counts


def histogram(
    counts: Sequence[int],
    *,
    lo: float = 0.0,
    hi: float = 1.0,
    title: str,
    x_label: str,
    y_label: str = "Count",
    markers: Sequence[Reference] = (),
    log_scale: bool = False,
    width: int = 640,
    height: int = 300,
    empty_message: str = "No data yet",
) -> str:
    """Pre-binned counts over ``[lo, hi]`` in equal bins (so a database can do
    the binning; :func:`bin_values` does it in Python).

    Args:
        markers: vertical lines at x values, e.g. a threshold.
        log_scale: a logarithmic count axis, so a bin of 5 stays visible
            beside one of 10,000. Heights are ``log10(1 + count)`` (an empty
            bin stays at zero, a bin of 1 does not), ticks 0, 1, 10, 100...
            labelled with counts; tooltips keep the exact counts.
    """
    bins = len(counts)
    edges = [lo + (hi - lo) * i / max(1, bins) for i in range(bins + 1)]
    top_count = max(max(counts, default=0), 1)
    count_label = f"{y_label} (log scale)" if log_scale else y_label
    if log_scale:
        tick_counts = [0, 1]
        while tick_counts[-1] < top_count:
            tick_counts.append(tick_counts[-1] * 10)
        y_ticks = [_log_count(t) for t in tick_counts]
        y_tick_labels: list[str] | None = [_fmt(t) for t in tick_counts]
    else:
        y_ticks = nice_ticks(0, top_count)
        y_ticks = [t for t in y_ticks if t == int(t)] or y_ticks
        y_tick_labels = None
    x_ticks = nice_ticks(lo, hi)
    frame = _Frame(
        width=width,
        height=height,
        left=56,
        right=24,
        top=34 + (16 if markers else 0) + 12,
        bottom=44,
        x=(lo, hi),
        y=(0, y_ticks[-1]),
    )
    body = _axes(
        frame,
        x_ticks=[t for t in x_ticks if lo <= t <= hi],
        y_ticks=y_ticks,
        x_label=x_label,
        y_label=count_label,
        y_tick_labels=y_tick_labels,
    )
    step = _step(x_ticks)
    for i, n in enumerate(counts):
        x0, x1 = frame.px(edges[i]), frame.px(edges[i + 1])
        y = frame.py(_log_count(n) if log_scale else n)
        closing = "]" if i == bins - 1 else ")"
        tip = f"[{_fmt(edges[i], step and step / 10)}, "
        tip += f"{_fmt(edges[i + 1], step and step / 10)}{closing}: {n}"
        body.append(
            f'<rect class="bar" x="{x0 + 0.5}" y="{y}" '
            f'width="{max(0.0, round(x1 - x0 - 1, 2))}" '
            f'height="{round(frame.y0 - y, 2)}" fill="{PALETTE[0]}">'
            f"<title>{_text(tip)}</title></rect>"
        )
    for ref in markers:
        x = frame.px(ref.value)
        body.append(
            f'<g class="reference"><line x1="{x}" x2="{x}" y1="{frame.y1 - 4}" '
            f'y2="{frame.y0}" stroke="{PALETTE[1]}" stroke-width="2" '
            f'stroke-dasharray="6 3"><title>{_text(ref.label)}: '
            f'{_text(_fmt(ref.value))}</title></line><text x="{x + 4}" '
            f'y="{frame.y1 - 6}" fill="{PALETTE[1]}">{_text(ref.label)}</text></g>'
        )
    if not any(counts):
        body.append(_empty(frame, empty_message))
    desc = ", ".join(
        f"{_fmt(edges[i])}-{_fmt(edges[i + 1])}: {n}" for i, n in enumerate(counts)
    )
    return _document(width, height, title, f"{x_label}, {count_label}. {desc}", body)
