"""The sweep's plot: the primary metric per setting, the default marked, as a standalone SVG.

Plain SVG text (no plotting library, nothing fetched): it opens in any browser and shows inline
in a Markdown viewer next to ``sweep.md``. One row per setting, so long labels stay readable:
a dot at the mean over the tuning questions, the default's value as a dashed line.
"""

from __future__ import annotations

from html import escape

ROW = 22
LABEL_WIDTH = 300
PLOT_WIDTH = 360
TOP = 44
BOTTOM = 34


def primary_svg(
    metric: str, means: dict[str, float], default: str, winner: str, adopted: bool
) -> str:
    """``means``: setting label → mean primary metric, in grid order."""
    labels = list(means)
    lo = min(0.0, *means.values())
    hi = max(1.0, *means.values())
    width = LABEL_WIDTH + PLOT_WIDTH + 70
    height = TOP + ROW * len(labels) + BOTTOM

    def x(value: float) -> float:
        return LABEL_WIDTH + (value - lo) / (hi - lo) * PLOT_WIDTH

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(metric)} per setting</title>",
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="8" y="18" font-size="14">{escape(metric)}: mean over the tuning questions '
        "(default: dashed line)</text>",
    ]
    axis_y = TOP + ROW * len(labels)
    for tick in range(0, 11, 2):
        value = lo + (hi - lo) * tick / 10
        parts.append(
            f'<line x1="{x(value):.1f}" y1="{TOP - 6}" x2="{x(value):.1f}" y2="{axis_y}" '
            'stroke="#ddd"/>'
            f'<text x="{x(value):.1f}" y="{axis_y + 16}" text-anchor="middle">{value:.1f}</text>'
        )
    default_x = x(means[default])
    parts.append(
        f'<line x1="{default_x:.1f}" y1="{TOP - 10}" x2="{default_x:.1f}" y2="{axis_y}" '
        'stroke="#555" stroke-dasharray="4 3"/>'
    )
    for row, label in enumerate(labels):
        y = TOP + ROW * row + ROW / 2
        is_default, is_winner = label == default, label == winner
        colour = "#555" if is_default else ("#1a7f37" if is_winner and adopted else "#0969da")
        mark = " (default)" if is_default else (" (adopted)" if is_winner and adopted else "")
        mark = mark or (" (best, not adopted)" if is_winner else "")
        shown = label if len(label) <= 44 else label[:43] + "…"
        parts.append(
            f'<text x="{LABEL_WIDTH - 8}" y="{y + 4:.1f}" text-anchor="end">'
            f"{escape(shown + mark)}</text>"
            f'<circle cx="{x(means[label]):.1f}" cy="{y:.1f}" r="5" fill="{colour}"/>'
            f'<text x="{x(means[label]) + 9:.1f}" y="{y + 4:.1f}">{means[label]:.3f}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
