"""The sweep's plot (judge.sweep.plot): a standalone SVG with one row per setting in grid order,
a dot at each mean placed on a scale from 0 to 1 (wider when a mean lies outside), the default's
value as a dashed line, the default, adopted and best-not-adopted settings told apart, and
every piece of data escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from judge.sweep.plot import primary_svg

SVG = "{http://www.w3.org/2000/svg}"


def _rows(svg: str) -> list[tuple[str, str, str, str]]:
    """(label text, circle x, circle colour, value text) per setting row."""
    return re.findall(
        r'text-anchor="end">([^<]*)</text><circle cx="([\d.]+)" cy="[\d.]+" r="5" '
        r'fill="(#[0-9a-f]+)"/><text x="[\d.]+" y="[\d.]+">([^<]*)</text>',
        svg,
    )


def test_one_row_per_setting_on_a_zero_to_one_scale() -> None:
    svg = primary_svg("ndcg@5", {"k=1": 0.5, "k=2": 0.75, "k=3": 0.25}, "k=1", "k=2", True)
    root = ET.fromstring(svg)  # well-formed: it opens in a browser as it is
    # 300 label + 360 plot + 70 margin wide; 44 top + 22 per row (3) + 34 bottom high.
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == (
        "730",
        "144",
        "0 0 730 144",
    )
    assert root.findtext(f"{SVG}title") == "ndcg@5 per setting"
    # x = 300 + mean · 360 on the 0-1 scale.
    assert _rows(svg) == [
        ("k=1 (default)", "480.0", "#555", "0.500"),
        ("k=2 (adopted)", "570.0", "#1a7f37", "0.750"),
        ("k=3", "390.0", "#0969da", "0.250"),
    ]
    # The default's dashed line at its value, from above the first row to the axis (44 + 66).
    assert (
        '<line x1="480.0" y1="34" x2="480.0" y2="110" stroke="#555" stroke-dasharray="4 3"/>' in svg
    )
    ticks = re.findall(r'text-anchor="middle">([^<]*)</text>', svg)
    assert ticks == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    assert svg.endswith("</svg>\n")


def test_a_best_setting_not_adopted_says_so() -> None:
    svg = primary_svg("mrr", {"a": 0.4, "b": 0.6}, "a", "b", False)
    assert [(label, colour) for label, _, colour, _ in _rows(svg)] == [
        ("a (default)", "#555"),
        ("b (best, not adopted)", "#0969da"),
    ]
    # The default winning: it is only the default.
    kept = primary_svg("mrr", {"a": 0.6, "b": 0.4}, "a", "a", False)
    assert [label for label, *_ in _rows(kept)] == ["a (default)", "b"]


def test_a_mean_outside_zero_to_one_widens_the_scale() -> None:
    svg = primary_svg("gain", {"a": -0.5, "b": 2.0}, "a", "b", True)
    # lo −0.5, hi 2.0: x = 300 + (mean + 0.5) / 2.5 · 360.
    assert [x for _, x, _, _ in _rows(svg)] == ["300.0", "660.0"]
    ticks = re.findall(r'text-anchor="middle">([^<]*)</text>', svg)
    assert ticks[0] == "-0.5" and ticks[-1] == "2.0"


def test_labels_and_the_metric_are_escaped_and_long_labels_cut() -> None:
    long = "mode=" + '"' + "x" * 50 + '"'
    svg = primary_svg("a<b & c", {'q="<i>"': 0.5, long: 0.7}, 'q="<i>"', long, True)
    root = ET.fromstring(svg)
    assert root.findtext(f"{SVG}title") == "a<b & c per setting"
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "end"]
    # 44 characters at most: the first 43 and an ellipsis, then the mark.
    assert labels == ['q="<i>" (default)', long[:43] + "… (adopted)"]
