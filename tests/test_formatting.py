"""Numbers and cells as people read them."""

import csv
import io

from judge.formatting import bom_csv, fmt_number, fmt_share, spreadsheet_text


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
