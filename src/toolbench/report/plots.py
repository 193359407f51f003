"""Forest plots (point and 95% interval whiskers) with matplotlib, as SVG data URIs.

Figures are built with ``matplotlib.figure.Figure`` and the SVG canvas directly, never
``pyplot``: no global state, no GUI backend, safe in a library. Text stays text in the SVG
(``svg.fonttype: none``), which keeps each plot to a few kilobytes. The HTML embeds a plot as
an ``<img>`` data URI, where an SVG cannot run script whatever its labels say.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from toolbench.tables.bootstrap import Estimate

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


@dataclass(frozen=True)
class Point:
    group: str  # the task
    series: int  # the run's index (its colour)
    estimate: Estimate


def forest(
    title: str, points: Sequence[Point], series_names: Sequence[str], zero_line: bool = False
) -> str:
    """One row per (group, series) with its interval; a data URI (empty when nothing to plot)."""
    shown = [p for p in points if p.estimate.defined]
    if not shown:
        return ""
    groups = list(dict.fromkeys(p.group for p in shown))
    rows: list[tuple[float, Point]] = []
    y = 0.0
    for group in groups:
        for point in [p for p in shown if p.group == group]:
            rows.append((y, point))
            y += 1
        y += 0.6
    height = 0.9 + 0.22 * len(rows)
    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 8, "svg.hashsalt": "tb"}):
        figure = Figure(figsize=(6.4, height))
        FigureCanvasSVG(figure)
        axes = figure.add_subplot()
        for series in sorted({p.series for _, p in rows}):  # one artist per run, not per row
            mine = [(y_pos, p.estimate) for y_pos, p in rows if p.series == series]
            axes.errorbar(
                [e.mean for _, e in mine],
                [y_pos for y_pos, _ in mine],
                xerr=[[e.mean - e.low for _, e in mine], [e.high - e.mean for _, e in mine]],
                fmt="o",
                color=PALETTE[series % len(PALETTE)],
                markersize=4,
                capsize=3,
                linewidth=1.2,
            )
        centres = [
            sum(y_pos for y_pos, p in rows if p.group == g)
            / sum(1 for _, p in rows if p.group == g)
            for g in groups
        ]
        axes.set_yticks(centres, [g[:40] for g in groups])
        axes.invert_yaxis()
        if zero_line:
            axes.axvline(0.0, color="#888888", linewidth=0.8, linestyle="--")
        axes.set_title(title[:80], fontsize=9)
        axes.grid(axis="x", color="#dddddd", linewidth=0.6)
        _legend(axes, sorted({p.series for p in shown}), series_names)
        # Fixed margins in inches (labels left, legend right): tight_layout would draw the
        # figure once more only to measure it, doubling the cost of each plot.
        figure.subplots_adjust(left=0.19, right=0.70, top=1 - 0.32 / height, bottom=0.4 / height)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _legend(axes: object, series: list[int], names: Sequence[str]) -> None:
    handles = [
        Line2D([], [], color=PALETTE[i % len(PALETTE)], marker="o", linestyle="", markersize=4)
        for i in series
    ]
    axes.legend(  # type: ignore[attr-defined]
        handles,
        [names[i][:50] for i in series],
        fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
    )
