"""Numbers and cells as people read them."""

import csv
import io

from judge.formatting import (
    bom_csv,
    fmt_number,
    fmt_share,
    from_spreadsheet_text,
    markdown_text,
    spreadsheet_text,
    terminal_text,
)


def test_fmt_share_is_a_percentage_with_one_decimal() -> None:
    assert fmt_share(0.0) == "0.0%"
    assert fmt_share(1.0) == "100.0%"
    assert fmt_share(2 / 3) == "66.7%"
    assert fmt_share(0.1234) == "12.3%"
    assert fmt_share(0.9996) == "100.0%"  # rounded, not cut
    assert fmt_share(None) == "–"


def test_fmt_number_has_two_decimals() -> None:
    assert fmt_number(1 - 0.25 / 0.35) == "0.29"  # the quadratic kappa of tests/audit/test_stats
    assert fmt_number(-0.125) == "-0.12"  # round half to even: -0.125 is exact in binary
    assert fmt_number(2) == "2.00"
    assert fmt_number(None) == "–"


def test_spreadsheet_text_quotes_what_a_spreadsheet_would_read_as_a_formula() -> None:
    assert spreadsheet_text("=SUM(A1:A3)") == "'=SUM(A1:A3)"
    assert spreadsheet_text("+81 3 1234") == "'+81 3 1234"
    assert spreadsheet_text("- 設定を開く\n- 復元をタップ") == "'- 設定を開く\n- 復元をタップ"
    assert spreadsheet_text("@user") == "'@user"
    assert spreadsheet_text("\tindented") == "'\tindented"
    # Everything else is left alone: Japanese, and operators that do not start the cell.
    assert spreadsheet_text("年額3,800円です。") == "年額3,800円です。"
    assert spreadsheet_text("1 + 1 = 2") == "1 + 1 = 2"
    assert spreadsheet_text("") == ""


def test_bom_csv_starts_with_the_bom_and_round_trips() -> None:
    text = bom_csv(["id", "answer"], [["q1", "年額3,800円です。"], ["q2", 'he said "はい"\n次']])
    assert text.startswith("\ufeffid,answer\r\n")
    assert text.encode("utf-8")[:3] == b"\xef\xbb\xbf"
    # The cell with a comma is quoted, so it stays one cell.
    assert '"年額3,800円です。"' in text
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))
    assert rows == [["id", "answer"], ["q1", "年額3,800円です。"], ["q2", 'he said "はい"\n次']]
    # Read as a spreadsheet would, with utf-8-sig, the header has no stray BOM.
    decoded = text.encode("utf-8").decode("utf-8-sig")
    assert next(csv.reader(io.StringIO(decoded)))[0] == "id"


def test_bom_csv_quotes_every_formula_like_text_cell_and_leaves_numbers_alone() -> None:
    text = bom_csv(
        ["question_id", "n", "delta", "ok", "missing"],
        [
            ['=HYPERLINK("http://x","y")', 3, -0.5, True, None],
            ["+cmd|' /C calc'!A0", 0, 1.0, 0, ""],
        ],
    )
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))
    assert rows[1] == ['\'=HYPERLINK("http://x","y")', "3", "-0.5", "True", ""]
    assert rows[2][0] == "'+cmd|' /C calc'!A0"
    # Full-width forms, which a Japanese spreadsheet may read as the ASCII ones.
    assert spreadsheet_text("＝SUM(A1)") == "'＝SUM(A1)"
    assert spreadsheet_text("'=x") == "'=x"  # already quoted: left as it is


def test_from_spreadsheet_text_takes_off_only_the_quote_the_export_added() -> None:
    for text in ("=SUM(A1)", "-2", "@x", "\t=1", "plain", "'quoted' word", "", "'"):
        assert from_spreadsheet_text(spreadsheet_text(text)) == text
    assert from_spreadsheet_text("'not a formula") == "'not a formula"


def test_terminal_text_shows_control_characters_as_escapes() -> None:
    assert terminal_text("\x1b]0;pwned\x07") == "\\x1b]0;pwned\\x07"
    assert terminal_text("\x1b[2J\x9b31m\x7f\x00") == "\\x1b[2J\\x9b31m\\x7f\\x00"
    assert terminal_text("abc\u202edcba\u2066") == "abc\\u202edcba\\u2066"
    assert terminal_text("tag\U000e0041") == "tag\\U000e0041"
    assert terminal_text("FAILED\rok") == "FAILED\\rok"
    # Lines and tabs stay (a CRLF becomes a newline); on one line they are escaped too.
    assert terminal_text("一行目\r\n二行目\tタブ") == "一行目\n二行目\tタブ"
    assert terminal_text("a\nb\tc", one_line=True) == "a\\nb\\tc"
    # Japanese, emoji (with their joiners) and our own symbols are left alone.
    plain = "年額3,800円です。👨\u200d👩\u200d👧 ⟦引用⟧ · ◀ weakest"
    assert terminal_text(plain) == plain
    assert terminal_text(3) == "3"


def test_markdown_text_renders_as_the_text_it_is() -> None:
    assert markdown_text("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert markdown_text("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    assert markdown_text("[x](javascript:alert(1))") == "\\[x\\](javascript:alert(1))"
    assert markdown_text("a | b\n| c |") == "a \\| b \\| c \\|"
    assert markdown_text("`code` *em* $x$ ~s~ \\") == "\\`code\\` \\*em\\* \\$x\\$ \\~s\\~ \\\\"
    assert markdown_text("&lt;") == "&amp;lt;"
    assert markdown_text("\x1b]0;t\x07") == "\\\\x1b\\]0;t\\\\x07"  # the escape, as text
    # Underscores inside a word do nothing in Markdown, so ids stay readable.
    assert markdown_text("out_of_scope") == "out_of_scope"
    assert markdown_text("_em_ __b__") == "\\_em\\_ \\_\\_b\\_\\_"
    assert markdown_text("年額3,800円です。") == "年額3,800円です。"


def test_timestamped_outputs_share_one_name_format() -> None:
    from datetime import UTC, datetime

    from judge.formatting import timestamp

    assert timestamp(datetime(2026, 12, 1, 16, 58, 7, 999, tzinfo=UTC)) == "20261201T165807Z"


def test_bom_csv_quotes_exactly_the_cells_spreadsheet_text_quotes() -> None:
    """``bom_csv`` looks a cell's first character up instead of calling ``spreadsheet_text``
    per cell: the two must agree on every formula start, and on what is no text."""
    from judge.formatting import FORMULA_START, bom_csv, spreadsheet_text

    cells: list[object] = [f"{start}SUM(1)" for start in FORMULA_START]
    cells += ["", "plain", "年額", "'=already", " =spaced", 3, 2.5, None, True]
    text = bom_csv(["x"] * len(cells), [cells])
    written = next(iter(csv.reader(io.StringIO(text.removeprefix("\ufeff")).readlines()[1:])))
    assert written == [
        spreadsheet_text(c) if isinstance(c, str) else ("" if c is None else str(c)) for c in cells
    ]
