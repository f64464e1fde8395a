"""The first screen, measured in a browser as a reader reads it.

Debian's ``chromium``, headless at 1280×800, opens each case page of the built site (the
book's own theme and configuration; the pages are not executed, since the card stands above
every output) and measures it with ``tests/browser/measure.js``: the title's lines, where the
first code block after the words "Do this" starts, the visible words above it, and any
visible code wider than its column. It also saves each first screen as a PNG in
``_build/screens/``. The book's own search, the site's ``searchtools.js`` run in the same
browser on the site's index, must rank each registry wording's case page or the Errors page
first. Each story, from the title to the Exercises heading, must read in 20 minutes (visible
words at 200 a minute plus 10 seconds per visible line of code, read by
``tests/browser/story.js``; printed outputs count where the site was executed, as
``python3 -m casebook book`` builds it), and a page's visible code names at most 3 of the
book's own helpers. The zh_CN edition's cards (``_build/html/zh_CN/``) are held to the same
first-screen limits, their screenshots in ``_build/screens/zh_CN/``. Without chromium these tests skip, and the test command says so in its
last lines.
"""

from __future__ import annotations

import functools
import hashlib
import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from casebook import cases, storage
from casebook.maintainer.tools import buildcache

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENS = ROOT / "_build" / "screens"
MEASURE = Path(__file__).resolve().parent / "browser" / "measure.js"
SEARCH = Path(__file__).resolve().parent / "browser" / "search.js"
STORY = Path(__file__).resolve().parent / "browser" / "story.js"
VISIBLE = Path(__file__).resolve().parent / "browser" / "visible.js"

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not found: install Debian's chromium (`apt-get install chromium`) to "
    "measure the first screens; .ci/run installs it",
)

WIDTH, HEIGHT = 1280, 800
FIX_TOP_PX = 800  # the first code block after "Do this" starts on screen 1
WORDS_ABOVE = 150  # visible words above it, code included
H1_LINES = 2
STORY_MINUTES = 20  # the story, read: words at 200 a minute, 10 s per line of code
WORDS_PER_MINUTE, SECONDS_PER_CODE_LINE = 200, 10
HELPERS = 3  # the book's own names a page's visible code may show
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--allow-file-access-from-files",
    f"--window-size={WIDTH},{HEIGHT}",
]


def _dump(url: str, budget_ms: int = 5000, screenshot: Path | None = None) -> str:
    """The DOM of ``url`` once its scripts ran; with ``screenshot``, the first screen saved
    there by the same chromium run."""
    shot = [f"--screenshot={screenshot}"] if screenshot else []
    proc = subprocess.run(
        [CHROMIUM, *FLAGS, f"--virtual-time-budget={budget_ms}", *shot, "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.stdout


def _read(dom: str, element: str) -> dict | list:
    m = re.search(rf'<pre id="{element}"[^>]*>([^<]*)</pre>', dom)
    assert m, f"the page wrote no {element}: {dom[-2000:]}"
    return json.loads(html.unescape(m.group(1)))


MEASURED = ROOT / "_build" / "test-sites" / "measured"
"""What chromium measured on each built page, kept between test runs under the digest of
everything the measure reads (:func:`_inputs`): a page whose built HTML did not change is
not opened again (about 2.5 s each on two cores). ``--fresh`` and ``CI=true`` open every
page."""


@functools.cache
def _site_digest(site: Path) -> str:
    """The sha256 of what a built page's layout reads besides its own HTML: the theme's
    CSS, scripts and fonts (``_static``), and the images (``_images``)."""
    digest = hashlib.sha256()
    for path in sorted(p for d in ("_static", "_images") for p in (site / d).rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(site).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@functools.cache
def _chromium_version() -> str:
    return subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout


def _inputs(page: Path, do_this: str) -> str:
    """The digest of everything a measure of ``page`` reads: its HTML, its site's assets,
    the probe scripts, the words that introduce the fix, chromium and its flags."""
    digest = hashlib.sha256(page.read_bytes())
    for script in (VISIBLE, MEASURE, STORY):
        digest.update(script.read_bytes())
    site = next(p for p in page.parents if (p / "_static").is_dir())
    extra = [_site_digest(site), do_this, _chromium_version(), *FLAGS]
    digest.update("\0".join(extra).encode())
    return digest.hexdigest()


@functools.cache
def _read_page(page: Path, do_this: str = "Do this", screens: Path = SCREENS) -> dict[str, dict]:
    """What :data:`MEASURE` and :data:`STORY` write on a copy of ``page`` opened in chromium
    (each appends its element at the end of the body, below the first screen), and the
    first screen saved in ``screens``: one chromium run per page, or none where
    :data:`MEASURED` holds this page's figures and screenshot under the digest of its
    inputs. ``do_this``: the words that introduce the card's fix, in the page's language."""
    key = _inputs(page, do_this)
    kept, shot = MEASURED / f"{key}.json", MEASURED / f"{key}.png"
    screens.mkdir(parents=True, exist_ok=True)
    if kept.exists() and shot.exists() and not buildcache.fresh():
        shutil.copy(shot, screens / (page.stem + ".png"))
        return json.loads(kept.read_text())
    probe = page.with_name(page.stem + ".probe.html")
    label = f"<script>window.casebookDoThis = {json.dumps(do_this)};</script>"
    scripts = label + "".join(
        f"<script>{s.read_text()}</script>" for s in (VISIBLE, MEASURE, STORY)
    )
    probe.write_text(page.read_text().replace("</body>", scripts + "</body>", 1))
    try:
        dom = _dump(probe.as_uri(), screenshot=screens / (page.stem + ".png"))
    finally:
        probe.unlink()
    found = {element: _read(dom, element) for element in ("casebook-measure", "casebook-story")}
    assert all(isinstance(f, dict) for f in found.values()), found
    MEASURED.mkdir(parents=True, exist_ok=True)
    scratch = shot.with_name(f".{shot.name}.{os.getpid()}")  # two workers may measure a page
    shutil.copy(screens / (page.stem + ".png"), scratch)
    os.replace(scratch, shot)
    storage.write_atomic(kept, json.dumps(found))
    return found


def measure(page: Path, do_this: str = "Do this", screens: Path = SCREENS) -> dict:
    """The first-screen figures of one built page, and its screenshot in ``screens``."""
    return _read_page(page, do_this, screens)["casebook-measure"]


#: How the book's own package shows in a page's code: a module of it and an attribute.
_QUALIFIED = re.compile(
    r"\b(?:releases|trace|bench|cases|display|stack|failure|claims)\.[A-Za-z_]\w*"
)


def _helper_names() -> re.Pattern[str]:
    """The bare names the pages import from the book's package, called or used."""
    import casebook.bench.claims
    import casebook.check
    import casebook.display
    import casebook.failure
    import casebook.releases.program

    modules = (
        casebook.bench.claims,
        casebook.check,
        casebook.display,
        casebook.failure,
        casebook.releases.program,
    )
    names = sorted({n for m in modules for n in getattr(m, "__all__", ())}, key=len, reverse=True)
    return re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, names)) + r")(?=\s*[(.\[])")


def read_story(page: Path) -> dict:
    """A case page's story as a reader reads it: words, lines of code, minutes, and the
    book's own names in the page's visible code."""
    found = _read_page(page)["casebook-story"]
    magic = re.compile(r"^(%%on_release|%load_ext)", re.M)
    story = [c["text"] for c in found["code"] if c["story"] and not magic.match(c["text"])]
    lines = sum(len(text.splitlines()) for text in story)
    bare = _helper_names()
    names = sorted(
        {m.group(0) for c in found["code"] for m in _QUALIFIED.finditer(c["text"])}
        | {m.group(0) for c in found["code"] for m in bare.finditer(c["text"])}
    )
    minutes = found["words"] / WORDS_PER_MINUTE + lines * SECONDS_PER_CODE_LINE / 60
    return {
        **found,
        "code": None,
        "codeLines": lines,
        "minutes": round(minutes, 1),
        "helpers": names,
    }


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: c.key)
def test_the_card_s_fix_is_on_the_first_screen(site, case):
    page = site / (case.docname + ".html")
    figures = measure(page)
    print(case.key, figures)
    assert figures["h1Lines"] <= H1_LINES, figures
    assert figures["fixTop"] is not None and figures["fixTop"] < FIX_TOP_PX, figures
    changed = figures["changedTop"]
    assert changed is not None or not case.do_this[0] == "python", figures
    assert changed is None or changed <= FIX_TOP_PX, figures
    assert figures["wordsAbove"] <= WORDS_ABOVE, figures
    assert figures["overflowPx"] <= 0, figures
    assert (SCREENS / (page.stem + ".png")).stat().st_size > 10_000


ZH_DO_THIS = "这样改"
"""How the zh cards introduce the fix: the translation of "**Do this**" in each card's
catalog (``locale/zh_CN/LC_MESSAGES/notebooks/``)."""


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: c.key)
def test_the_zh_card_s_fix_is_on_the_first_screen(zh_site, case):
    """The same limits as the English card's: the fix (and its changed line) above 800 px,
    the title in at most 2 lines, no code wider than its column."""
    page = zh_site / (case.docname + ".html")
    figures = measure(page, ZH_DO_THIS, SCREENS / "zh_CN")
    print(case.key, figures)
    assert ZH_DO_THIS in page.read_text(), "the card's fix is not introduced in Chinese"
    assert figures["h1Lines"] <= H1_LINES, figures
    assert figures["fixTop"] is not None and figures["fixTop"] < FIX_TOP_PX, figures
    changed = figures["changedTop"]
    assert changed is None or changed <= FIX_TOP_PX, figures
    assert figures["overflowPx"] <= 0, figures


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: c.key)
def test_the_story_reads_in_twenty_minutes_with_few_helpers(site, case):
    figures = read_story(site / (case.docname + ".html"))
    print(case.key, figures)
    assert figures["exercises"], "no Exercises heading: the story has no end"
    assert figures["minutes"] <= STORY_MINUTES, figures
    assert len(figures["helpers"]) <= HELPERS, figures


def test_the_story_measure_counts_code_and_helpers(site, tmp_path):
    """The check can fail: a page with 200 more lines of visible code, using four helpers."""
    page = site / (cases.CASES[0].docname + ".html")
    padded = page.with_name(page.stem + ".padded.html")
    code = "\n".join(["x = releases.patched(trace.cut(bench.interleave(glue(1))))"] * 200)
    block = f'<div class="highlight"><pre>{code}</pre></div>'
    text = page.read_text()
    story = text.index('<h2><span class="section-number">')  # the story's first section
    padded.write_text(text[:story] + block + text[story:])
    try:
        figures = read_story(padded)
    finally:
        padded.unlink()
        (SCREENS / (padded.stem + ".png")).unlink(missing_ok=True)
    assert figures["minutes"] > STORY_MINUTES
    assert {"releases.patched", "trace.cut", "bench.interleave", "glue"} <= set(figures["helpers"])


def _wordings() -> list[tuple[cases.Case, str]]:
    seen: dict[str, cases.Case] = {}
    for case in cases.CASES:
        for message in case.messages:
            seen.setdefault(f"{message.exc_type}: {message.text.splitlines()[0]}", case)
    return [(case, query) for query, case in seen.items()]


@pytest.fixture(scope="module")
def ranks(site) -> dict[str, list[str]]:
    """Each query's search results (``[docname, anchor]``, best first), from the site's own
    ``searchtools.js`` on the site's own index, all in one browser run: the book's wordings
    and the messages as readers paste them."""
    queries = [q for _, q in _wordings()] + list(PASTED)
    probe = site / "search.measure.html"
    data = f"<script>const CASEBOOK_QUERIES = {json.dumps(queries)};</script>"
    script = f"{data}<script>{SEARCH.read_text()}</script></body>"
    probe.write_text((site / "search.html").read_text().replace("</body>", script, 1))
    try:
        found = _read(_dump(probe.as_uri(), budget_ms=20000), "casebook-search")
    finally:
        probe.unlink()
    assert isinstance(found, dict)
    return found


@pytest.mark.parametrize("cq", _wordings(), ids=lambda cq: cq[1][:40])
def test_search_ranks_each_wording_s_case_or_the_errors_page_first(ranks, cq):
    case, query = cq
    results = ranks[query]
    assert results, f"no result for {query!r}"
    assert results[0][0] in (case.docname, "book/errors"), (query, results[:3])


PASTED = json.loads((Path(__file__).resolve().parent / "browser" / "pasted.json").read_text())
"""Messages as a reader's program prints them (their own addresses, class, function and path
names, which no page holds), each with the case that answers it (issue 51)."""


@pytest.mark.parametrize("query", PASTED, ids=lambda q: q[:40])
def test_a_pasted_message_opens_its_case_or_its_heading_on_the_errors_page(site, ranks, query):
    """``book/_ext/search_scorer.js`` drops the reader's own words and ranks pages by how
    many terms they hold: the first result is the case's page, or the Errors page opened at a
    heading whose fix is that case's card (before: 1 of 14; 6 found nothing)."""
    case = cases.get(PASTED[query])
    results = ranks[query]
    assert results, f"no result for {query!r}"
    docname, anchor = results[0]
    if docname == "book/errors":
        errors = (site / "book" / "errors.html").read_text()
        assert anchor.startswith("#") and f'id="{anchor[1:]}"' in errors, results[:3]
        after = errors[errors.index(f'id="{anchor[1:]}"') :]
        fix = re.search(r'href="\.\./(notebooks/[^"#]+)\.html', after)
        assert fix and fix[1] == case.docname, (anchor, fix and fix[1])
    else:
        assert docname == case.docname, results[:3]


def test_the_measure_goes_red_when_the_fix_moves_below_the_fold(site, tmp_path):
    """The check can fail: the same page with 30 paragraphs put before the card's code."""
    case = cases.CASES[0]
    page = site / (case.docname + ".html")
    moved = page.with_name(page.stem + ".moved.html")
    filler = "<p>A paragraph a reader must scroll past.</p>" * 30
    moved.write_text(
        page.read_text().replace(
            "<p><strong>You probably wrote</strong>",
            filler + "<p><strong>You probably wrote</strong>",
            1,
        )
    )
    try:
        figures = measure(moved)
    finally:
        moved.unlink()
        (SCREENS / (moved.stem + ".png")).unlink(missing_ok=True)
    assert figures["fixTop"] > FIX_TOP_PX and figures["wordsAbove"] > WORDS_ABOVE


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: c.key)
def test_a_magic_line_is_a_label_on_the_web(site, case):
    """No visible code block holds ``%%on_release`` or ``%load_ext casebook``: copied into
    plain Jupyter, none raises a ``UsageError``. Each such cell carries its label."""
    page = (site / (case.docname + ".html")).read_text()
    blocks = re.findall(r"<pre>(.*?)</pre>", page, flags=re.S)
    code = [html.unescape(re.sub(r"<[^>]+>", "", b)) for b in blocks]
    magic = re.compile(r"^(%%on_release|%load_ext casebook)", re.M)
    assert not [c for c in code if magic.search(c)]
    assert 'class="casebook-ran-on"' in page


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: c.key)
def test_a_link_preview_shows_the_card_s_first_sentence(site, case):
    """``og:description`` (what a chat or social link preview shows) is the card's title,
    lead and message, not an imports cell or the stack line."""
    page = (site / (case.docname + ".html")).read_text()
    previews = re.findall(r'<meta property="og:description" content="([^"]*)"', page)
    card = case.card
    assert len(previews) == 1 and html.unescape(previews[0]).startswith(
        cases.with_eras(f"{card['title']}. {card['lead']}").replace("`", "")[:100]
    ), previews


def test_the_teach_page_links_the_handouts_the_site_holds(site):
    """A teacher gets the editions from the site: teach.html links a student zip and a
    teacher zip, and both are there, holding every workshop page's edition (the student
    zip the committed editions the Colab links open; the teacher zip with solutions)."""
    import zipfile

    from casebook.maintainer import workshop

    teach = (site / "book" / "teach.html").read_text()
    names = {f"{Path(p).name}.ipynb" for p in workshop.PAGES}
    first_screen = teach[: teach.index('id="who-it-is-for"')]  # above the first section
    for kind in ("student", "teacher"):
        assert f'href="../handouts/{kind}.zip"' in first_screen, kind
        with zipfile.ZipFile(site / "handouts" / f"{kind}.zip") as z:
            assert {Path(n).name for n in z.namelist()} == names, kind
            if kind == "teacher":
                edition = json.loads(z.read(f"teacher/{sorted(names)[0]}"))
                tags = [t for c in edition["cells"] for t in c["metadata"].get("tags", [])]
                assert workshop.EXERCISE_TAG in tags and "check" in tags


EXPLAIN_PROBE = """
(() => {
  const run = () => {
    const answers = CASEBOOK_TEXTS.map((text) => casebookExplain.answer(text));
    const box = document.querySelector("#casebook-explain textarea").getBoundingClientRect();
    const out = document.createElement("pre");
    out.id = "casebook-explain-corpus";
    out.textContent = JSON.stringify({ answers, boxBottom: box.bottom });
    document.body.appendChild(out);
  };
  window.addEventListener("load", run);
})();
"""


def test_the_paste_box_answers_as_explain_does(site):
    """The Errors page's box (``book/_static/explain.js``, on the data the build exported)
    is on its first screen, and it and ``python3 -m casebook explain`` give the same answer to
    every traceback of the variant corpus and every pasted message: the one-line hint, the
    user's-own-code sentence, and the cards shown with why each matched."""
    from casebook.explain import _answer, rank as explain_rank

    spec = importlib.util.spec_from_file_location(
        "measure", ROOT / "tests" / "explain_variants" / "measure.py"
    )
    assert spec and spec.loader
    measure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(measure)
    texts = [text for *_, text in measure.corpus()] + list(PASTED) + ["", "no traceback here"]
    want = []
    for text in texts:
        r = explain_rank(text)
        shown = [[c.owner, "; ".join(dict.fromkeys(c.reasons))] for c in _answer.shown(r)]
        want.append({"hint": _answer.hint_line(r), "says": r.says, "shown": shown})
    errors = site / "book" / "errors.html"
    probe = errors.with_name("errors.probe.html")
    data = json.dumps(texts).replace("</", "<\\/")
    script = f"<script>const CASEBOOK_TEXTS = {data};</script><script>{EXPLAIN_PROBE}</script>"
    probe.write_text(errors.read_text().replace("</body>", script + "</body>", 1))
    try:
        seen = _read(_dump(probe.as_uri(), budget_ms=20000), "casebook-explain-corpus")
    finally:
        probe.unlink()
    assert isinstance(seen, dict) and seen["boxBottom"] <= 800, seen.get("boxBottom")
    got = seen["answers"]
    assert len(got) == len(want) >= 60
    differ = [(t[:80], w, g) for t, w, g in zip(texts, want, got, strict=True) if w != g]
    assert not differ, differ[:3]
    assert sum(bool(w["shown"]) for w in want) >= 40  # most of the corpus is answered
