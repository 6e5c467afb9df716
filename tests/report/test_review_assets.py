"""The review page's script, styles and body are package files that tools can check, and the page
inlines them under a Content-Security-Policy computed from what it inlines."""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import re
import shutil
import string
import subprocess
import tomllib
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple

import pytest

from judge.config import Config
from judge.report import review_page
from judge.report.review_page import BODY_ASSET, SCRIPT_ASSET, STYLE_ASSET, review_asset
from tests.conftest import REPO, run_lexical

Tiny = Callable[..., Config]
ASSETS = REPO / "judge" / "report" / "assets"
NODE = shutil.which("node")


# --- the script: node --check ---------------------------------------------------------------


def _node_check(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    if NODE is None:
        pytest.skip(
            "node is not installed, so the page's script cannot be parsed (apt-get install nodejs)"
        )
    path = tmp_path / "review.js"
    path.write_text(text, encoding="utf-8")
    return subprocess.run(
        [NODE, "--check", str(path)], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_script_parses(tmp_path: Path) -> None:
    # Exactly the text the page inlines (and hashes).
    checked = _node_check(tmp_path, review_page._inline(SCRIPT_ASSET))
    assert checked.returncode == 0, checked.stderr


def test_node_check_rejects_a_broken_script(tmp_path: Path) -> None:
    """The check above can fail: the script with its last closing parenthesis dropped."""
    script = review_asset(SCRIPT_ASSET)
    broken = script[: script.rindex(")")] + script[script.rindex(")") + 1 :]
    checked = _node_check(tmp_path, broken)
    assert checked.returncode != 0
    assert "SyntaxError" in checked.stderr


# --- the styles: a small tokenizer ------------------------------------------------------------


class CssRule(NamedTuple):
    selector: str
    declarations: list[tuple[str, str]]
    line: int


_CSS_TOKEN = re.compile(
    r"""(?P<comment>/\*.*?\*/)
      | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
      | (?P<open>\{) | (?P<close>\}) | (?P<semi>;)
      | (?P<unterminated>/\*|["'])
      | (?P<other>[^{};"'/]+|/)""",
    re.S | re.X,
)
_PROPERTY = re.compile(r"--[\w-]+|-?[a-zA-Z][\w-]*")
_SELECTOR = re.compile(r"[\w\s.#:>+~*,\[\]=\"'()-]+")


def parse_css(text: str) -> list[CssRule]:
    """The rules of a stylesheet of plain rules, ``selector{property:value;…}``; a ``ValueError``
    naming the line of the first thing that is not one (an unbalanced brace, a stray ``;``, an
    unterminated comment or string, a declaration without a name, colon or value, unbalanced
    parentheses). At-rules are refused: the page has none, and this is no full CSS parser."""
    rules: list[CssRule] = []
    prelude: list[str] = []
    block: list[tuple[str, str, int]] | None = None  # (kind, text, line) inside braces
    start = 0

    def line_at(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    for token in _CSS_TOKEN.finditer(text):
        kind, value, line = token.lastgroup or "", token.group(), line_at(token.start())
        if kind == "comment":
            continue
        if kind == "unterminated":
            what = "comment" if value == "/*" else "string"
            raise ValueError(f"line {line}: unterminated {what}")
        if block is None:
            if kind == "open":
                selector = "".join(prelude).strip()
                if not selector:
                    raise ValueError(f"line {line}: a block without a selector")
                if selector.startswith("@"):
                    raise ValueError(
                        f"line {line}: at-rule {selector.split()[0]} (not supported here)"
                    )
                if not _SELECTOR.fullmatch(selector):
                    raise ValueError(f"line {line}: unexpected characters in selector {selector!r}")
                block, start, prelude = [], line, []
            elif kind in ("close", "semi"):
                raise ValueError(f"line {line}: stray {value!r} outside a rule")
            else:
                prelude.append(value)
        elif kind == "open":
            raise ValueError(f"line {line}: '{{' inside a declaration block (a missing '}}'?)")
        elif kind == "close":
            rules.append(CssRule(selector, _declarations(block), start))
            block = None
        else:
            block.append((kind, value, line))
    if block is not None:
        raise ValueError(f"line {start}: block of {selector!r} never closed")
    if "".join(prelude).strip():
        raise ValueError(f"line {line_at(len(text))}: text after the last rule")
    return rules


def _declarations(block: list[tuple[str, str, int]]) -> list[tuple[str, str]]:
    pieces: list[tuple[str, int]] = [("", block[0][2] if block else 0)]
    for kind, value, line in block:
        if kind == "semi":
            pieces.append(("", line))
        else:
            text, first = pieces[-1]
            pieces[-1] = (text + value, first if text.strip() else line)
    declarations = []
    for piece, line in pieces:
        if not piece.strip():
            continue
        name, colon, value = piece.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not _PROPERTY.fullmatch(name) or not value:
            raise ValueError(f"line {line}: not a declaration: {piece.strip()!r}")
        depth = 0
        for char in re.sub(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'", "", value):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth < 0:
                break
        if depth:
            raise ValueError(f"line {line}: unbalanced parentheses in {name}: {value}")
        declarations.append((name, value))
    return declarations


def test_the_styles_parse() -> None:
    rules = parse_css(review_asset(STYLE_ASSET))
    # Every rule of the file, one or two a line (``.message{…}.message.bad{…}``).
    opening_braces = review_asset(STYLE_ASSET).count("{")
    assert len(rules) == opening_braces
    assert all(rule.declarations for rule in rules)
    selectors = [rule.selector for rule in rules]
    assert "body" in selectors and ".sent.unsupported" in selectors
    assert len(set(selectors)) == len(selectors), "a selector defined twice"
    body = next(rule for rule in rules if rule.selector == "body")
    assert ("margin", "0") in body.declarations


@pytest.mark.parametrize(
    ("css", "error"),
    [
        ("a{color:red", "line 1: block of 'a' never closed"),
        ("a{color:red}}", "line 1: stray '}' outside a rule"),
        ("a{color:red}\nb{color red}", "line 2: not a declaration: 'color red'"),
        ("a{color:}", "line 1: not a declaration: 'color:'"),
        ("a{:red}", "line 1: not a declaration: ':red'"),
        ("a{color:red;\nb{color:blue}", "line 2: '{' inside a declaration block"),
        ("a{width:calc(1px + 2px}", "line 1: unbalanced parentheses in width: calc(1px + 2px"),
        ("a{color:red}\n/* unclosed", "line 2: unterminated comment"),
        ('a{font-family:"Noto}', "line 1: unterminated string"),
        ("a{color:red};", "line 1: stray ';' outside a rule"),
        ("{color:red}", "line 1: a block without a selector"),
        ("@media print{a{color:red}}", "line 1: at-rule @media"),
        ("a{color:red} b", "line 1: text after the last rule"),
    ],
)
def test_the_css_check_rejects_broken_styles(css: str, error: str) -> None:
    with pytest.raises(ValueError, match=re.escape(error)):
        parse_css(css)


def test_the_css_check_reads_comments_strings_and_custom_properties() -> None:
    css = '/* a { } */ a.b > c:focus-visible{--gap:4px;font-family:"x;y{}",serif;width:calc(1px + (2px));}'
    assert parse_css(css) == [
        CssRule(
            "a.b > c:focus-visible",
            [("--gap", "4px"), ("font-family", '"x;y{}",serif'), ("width", "calc(1px + (2px))")],
            1,
        )
    ]


# --- the body template ----------------------------------------------------------------------


class _Elements(HTMLParser):
    """The ids in an HTML fragment, and whether its elements close in order."""

    VOID = frozenset({"input", "br", "img", "meta", "hr", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.ids: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids += [value for name, value in attrs if name == "id" and value]
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1] if self.open else 'nothing'}")
        else:
            self.open.pop()


def test_the_body_template_is_balanced_html_with_the_ids_the_script_uses() -> None:
    template = review_asset(BODY_ASSET)
    fields = {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    assert fields == {"folder", "judge"}
    parser = _Elements()
    parser.feed(template.format(folder="f", judge="j"))
    parser.close()
    assert parser.problems == [] and parser.open == []
    script = review_asset(SCRIPT_ASSET)
    filter_ids = re.search(r"const filterIds = \[([^\]]*)\]", script)
    assert filter_ids is not None
    used = set(re.findall(r"\$\('([\w-]+)'\)", script)) | set(
        re.findall(r"'([\w-]+)'", filter_ids.group(1))
    )
    assert "f-triage" in used and "export" in used
    assert used <= set(parser.ids), (
        f"ids the script looks up but the body lacks: {used - set(parser.ids)}"
    )
    assert len(set(parser.ids)) == len(parser.ids)


# --- packaging and loading ------------------------------------------------------------------


def test_every_asset_is_package_data() -> None:
    """``pyproject.toml`` ships the assets, so an installed wheel renders the page too."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["judge"]
    files = sorted(ASSETS.iterdir())
    assert {path.name for path in files} >= {BODY_ASSET, STYLE_ASSET, SCRIPT_ASSET}
    for path in files:
        relative = path.relative_to(REPO / "judge").as_posix()
        # setuptools' "report/assets/*" takes the folder's files, not a subfolder's.
        assert path.is_file(), f"{relative}: a folder under assets is not shipped"
        assert any(fnmatch.fnmatchcase(relative, p) for p in patterns), f"{relative}: not shipped"


def test_the_assets_are_read_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_files = review_page.resources.files

    def files(anchor: str) -> object:
        opened.append(anchor)
        return real_files(anchor)

    review_asset.cache_clear()
    monkeypatch.setattr(review_page.resources, "files", files)
    try:
        for _ in range(3):
            for name in (SCRIPT_ASSET, STYLE_ASSET, BODY_ASSET):
                assert review_asset(name) == (ASSETS / name).read_text(encoding="utf-8")
    finally:
        review_asset.cache_clear()
    assert opened == ["judge.report"] * 3


# --- the inlined text and its CSP hash ------------------------------------------------------


class _Page(HTMLParser):
    """A rendered page's CSP and the exact text of its ``<script>`` and ``<style>`` elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.policy: str | None = None
        self.elements: list[tuple[str, dict[str, str | None], str]] = []
        self._current: tuple[str, dict[str, str | None], list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "meta" and attributes.get("http-equiv") == "Content-Security-Policy":
            self.policy = attributes["content"]
        if tag in ("script", "style"):
            self._current = (tag, attributes, [])

    def handle_data(self, data: str) -> None:
        if self._current:
            self._current[2].append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._current and tag == self._current[0]:
            self.elements.append((tag, self._current[1], "".join(self._current[2])))
            self._current = None


def _sha256_source(text: str) -> str:
    return (
        "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"
    )


def _page(html_text: str) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """The policy's directives, and the texts of the page's executable scripts and its styles."""
    parser = _Page()
    parser.feed(html_text)
    parser.close()
    assert parser.policy is not None
    directives = {
        name: sources
        for name, *sources in (part.split() for part in parser.policy.split(";") if part.strip())
    }
    scripts = [
        text
        for tag, attributes, text in parser.elements
        if tag == "script" and attributes.get("type") in (None, "text/javascript", "module")
    ]
    styles = [text for tag, _, text in parser.elements if tag == "style"]
    return directives, scripts, styles


def _allowed(sources: list[str], texts: list[str], what: str) -> None:
    """Every inline element is allowed, by its hash or by 'unsafe-inline', and no hash is stale."""
    hashes = {source for source in sources if source.startswith("'sha256-")}
    inlined = {_sha256_source(text) for text in texts}
    assert hashes <= inlined, f"{what}: a CSP hash matches no inlined element"
    if "'unsafe-inline'" not in sources:
        assert inlined <= hashes, f"{what}: an inlined element the CSP does not allow"


@pytest.fixture
def rendered(tiny: Tiny) -> str:
    config = tiny()
    assert run_lexical(config) == 0
    folder = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    return (config.reports.dir / folder / "review.html").read_text(encoding="utf-8")


def test_the_csp_allows_exactly_the_inlined_script_and_style(rendered: str) -> None:
    directives, scripts, styles = _page(rendered)
    assert directives["default-src"] == ["'none'"]
    # The page inlines the files as they are, one script (the data block is not executable) and
    # one stylesheet.
    assert scripts == ["\n" + (ASSETS / SCRIPT_ASSET).read_text(encoding="utf-8")]
    assert styles == ["\n" + (ASSETS / STYLE_ASSET).read_text(encoding="utf-8")]
    # The script runs by its hash alone; the styles are allowed inline (style-src
    # 'unsafe-inline': nothing in the page writes a style attribute from data).
    assert directives["script-src"] == [_sha256_source(scripts[0])]
    _allowed(directives["script-src"], scripts, "script")
    _allowed(directives["style-src"], styles, "style")
    assert "'unsafe-inline'" not in directives["script-src"]


def test_an_edited_script_gets_its_own_hash(
    rendered: str, tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hash follows the asset's text at render time: it is never a stored constant."""
    edited = review_asset(SCRIPT_ASSET) + "// one more line\n"
    real = review_page.review_asset
    monkeypatch.setattr(
        review_page, "review_asset", lambda name: edited if name == SCRIPT_ASSET else real(name)
    )
    config = tiny()
    assert run_lexical(config) == 0
    folder = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    directives, scripts, _ = _page(
        (config.reports.dir / folder / "review.html").read_text(encoding="utf-8")
    )
    assert scripts == ["\n" + edited]
    assert directives["script-src"] == [_sha256_source("\n" + edited)]
    assert directives["script-src"] != _page(rendered)[0]["script-src"]
