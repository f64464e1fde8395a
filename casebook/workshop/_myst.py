"""MyST Markdown to plain Markdown, for notebooks opened outside the book (Colab, Jupyter).

The book's pages use MyST: roles (``{cite}``, ``{ref}``, ``{doc}``, ``{glue:text}``),
targets (``(label)=``), and directives (admonitions, dropdowns, exercises). Colab and
Jupyter render none of them; they show the markup. :func:`render` turns a page's Markdown
into what they do render: a citation into a link to the issue, pull request or commit it
cites; a cross-reference into a link to the section on the published book; a glued number
into a pointer to the cell that prints it; an admonition into a block quote; a dropdown
into ``<details>``; an exercise into a heading. It raises :class:`RawMyST` on any markup
it does not know, so no raw MyST can reach a student.

Standard library only.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path, PurePosixPath

from casebook.project import BOOK_URL, ROOT

__all__ = ["BOOK_URL", "Links", "RawMyST", "render", "leftover"]


SOURCES = ("notebooks/*.md", "book/*.md")
"""The pages whose labels a reference may name."""


class RawMyST(ValueError):
    """A page holds MyST markup that :func:`render` cannot turn into plain Markdown."""


@dataclasses.dataclass(frozen=True)
class Links:
    """What references resolve against: each label's page and text, each page's title,
    each bibliography key's link."""

    labels: dict[str, tuple[str, str]]
    titles: dict[str, str]
    citations: dict[str, tuple[str, str]]

    @classmethod
    @functools.cache
    def of_book(cls, root: Path = ROOT) -> Links:
        """The labels, titles and citations of the book in ``root``."""
        labels: dict[str, tuple[str, str]] = {}
        titles: dict[str, str] = {}
        for pattern in SOURCES:
            for path in sorted(root.glob(pattern)):
                page = str(path.relative_to(root).with_suffix(""))
                text = path.read_text()
                title = re.search(r"^# (.+)$", text, re.M)
                titles[page] = _plain_title(title.group(1)) if title else page
                for label, heading in re.findall(r"^\(([\w-]+)\)=\s*\n+#+ (.+)$", text, re.M):
                    labels[label] = (page, _plain_title(heading))
                for number, label in enumerate(re.findall(r"^:label: ([\w-]+)", text, re.M), 1):
                    labels.setdefault(label, (page, f"Exercise {chapter(page)}{number}"))
        return cls(labels, titles, _citations(root / "book" / "references.bib"))


def _plain_title(text: str) -> str:
    return re.sub(r"\{[\w:-]+\}`([^`]*)`", r"\1", text).strip()


def _citations(bib: Path) -> dict[str, tuple[str, str]]:
    """``key: (text, url)``: ``optax#828`` for an issue or pull request, ``optax@6de95bf9``
    for a commit, else the entry's title."""
    out = {}
    for key, body in re.findall(r"^@\w+\{([^,]+),(.*?)^\}", bib.read_text(), re.M | re.S):
        url = re.search(r"url\s*=\s*\{([^}]*)\}", body)
        title = re.search(r"title\s*=\s*\{+(.*?)\}+,?\s*$", body, re.M)
        link = url.group(1) if url else ""
        github = re.match(r"https://github\.com/[^/]+/([^/]+)/(issues|pull|commit)/(\w+)", link)
        if github:
            repo, kind, ref = github.groups()
            text = f"{repo}@{ref[:8]}" if kind == "commit" else f"{repo}#{ref}"
        else:
            text = re.sub(r"[{}\\]", "", title.group(1)) if title else key
        out[key] = (text, link)
    return out


# ----------------------------------------------------------------------- directives

_DIRECTIVE = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<arg>[^\n]*)\n"
    r"(?P<body>(?:(?!^(?P=fence)[ \t]*$).*\n)*?)"
    r"^(?P=fence)[ \t]*$\n?",
    re.M,
)


def _options(body: str) -> tuple[dict[str, str], str]:
    options = {}
    lines = body.split("\n")
    while lines and (m := re.match(r"^:([\w-]+):\s*(.*)$", lines[0])):
        options[m.group(1)] = m.group(2)
        lines.pop(0)
    return options, "\n".join(lines).strip("\n")


def _quote(title: str, body: str) -> str:
    lines = [f"**{title}**", "", *body.split("\n")]
    return "\n".join(f"> {line}".rstrip() for line in lines) + "\n"


def _directive(m: re.Match[str], exercises: list[int], chapter: str) -> str:
    name, arg = m.group("name"), m.group("arg").strip()
    options, body = _options(_directives(m.group("body"), exercises, chapter))
    if name == "admonition":
        return _quote(arg, body)
    if name in ("note", "tip", "hint", "important", "warning", "caution", "seealso"):
        return _quote(name.capitalize() if not arg else arg, body)
    if name == "dropdown":
        return f"<details>\n<summary>{arg}</summary>\n\n{body}\n\n</details>\n"
    if name == "exercise":
        exercises[0] += 1
        return f"### Exercise {chapter}{exercises[0]}\n\n{body}\n"
    if name in ("code-block", "code"):
        return f"```{arg}\n{body}\n```\n"
    if name == "math":
        return f"$$\n{body}\n$$\n"
    raise RawMyST(f"no plain Markdown for the directive {{{name}}}")


def _directives(text: str, exercises: list[int], chapter: str = "") -> str:
    """Every directive of ``text`` rendered, the ones inside another first."""
    return _DIRECTIVE.sub(lambda m: _directive(m, exercises, chapter), text)


def chapter(page: str) -> str:
    """The book's number of ``page`` as its exercises carry it (``"5."`` for
    ``notebooks/05-...``: the web page's "Exercise 5.3"), or ``""`` for an unnumbered page."""
    m = re.match(r"(\d+)-", PurePosixPath(page).name)
    return f"{int(m.group(1))}." if m else ""


# ---------------------------------------------------------------------------- roles

_ROLE = re.compile(r"\{(?P<name>[a-z][\w:-]*)\}`(?P<content>[^`]*)`")


def _url(page: str, anchor: str = "") -> str:
    return BOOK_URL + page + ".html" + (f"#{anchor}" if anchor else "")


def _role(m: re.Match[str], links: Links, page: str) -> str:
    name, content = m.group("name"), m.group("content")
    explicit = re.match(r"^(.*?)\s*<([^>]+)>$", content, re.S)
    text, target = (explicit.group(1), explicit.group(2)) if explicit else ("", content)
    if name in ("cite", "cite:p", "cite:t"):
        cited = [links.citations.get(k.strip(), (k.strip(), "")) for k in target.split(",")]
        return "; ".join(f"[{t}]({u})" if u else t for t, u in cited)
    if name == "ref":
        if target not in links.labels:
            raise RawMyST(f"{{ref}} to an unknown label {target!r}")
        where, heading = links.labels[target]
        return f"[{text or heading}]({_url(where, target)})"
    if name == "doc":
        where = str(PurePosixPath(page).parent / target)
        where = str(PurePosixPath(*_normalize(where.split("/"))))
        return f"[{text or links.titles.get(where, where)}]({_url(where)})"
    if name.startswith("glue"):
        return "(the number the cell above prints)"
    if name == "math":
        return f"${content}$"
    raise RawMyST(f"no plain Markdown for the role {{{name}}}")


def _drop_repeated_citations(text: str, links: Links) -> str:
    """Drop a ``{cite}`` whose every source is already linked in ``text``: on the web it
    adds the author and year, in plain Markdown it would repeat the link."""

    def cite(m: re.Match[str]) -> str:
        if not m.group("name").startswith("cite"):
            return m.group(0)
        urls = [links.citations.get(k.strip(), ("", ""))[1] for k in m.group("content").split(",")]
        return "" if all(u and f"]({u})" in text for u in urls) else m.group(0)

    return re.sub(r"[ \t]*" + _ROLE.pattern, cite, text)


def _normalize(parts: list[str]) -> list[str]:
    out: list[str] = []
    for p in parts:
        if p == "..":
            out.pop()
        elif p not in (".", ""):
            out.append(p)
    return out


def _link(m: re.Match[str], links: Links, page: str) -> str:
    """A Markdown link to a label (``#case1-repro``) or a page (``../book/x.md``)."""
    text, target = m.group(1), m.group(2)
    if target.startswith("#"):
        label = target[1:]
        where = links.labels.get(label, (page, ""))[0]
        return f"[{text}]({_url(where, label)})"
    path, _, anchor = target.partition("#")
    where = str(PurePosixPath(*_normalize(str(PurePosixPath(page).parent / path).split("/"))))
    return f"[{text}]({_url(str(PurePosixPath(where).with_suffix('')), anchor)})"


def render(
    text: str, page: str, links: Links | None = None, exercises: list[int] | None = None
) -> str:
    """``text`` (a Markdown cell of ``page``, e.g. ``"notebooks/01-..."``) in plain
    Markdown; :class:`RawMyST` if markup is left that Colab would show raw.
    ``exercises`` counts the page's exercises across its cells (``[0]`` at the top)."""
    links = links or Links.of_book()
    text = re.sub(r"^\([\w-]+\)=[ \t]*\n", "", text, flags=re.M)  # targets
    text = re.sub(r"^%[^\n]*\n?", "", text, flags=re.M)  # MyST comments
    text = _directives(text, exercises if exercises is not None else [0], chapter(page))
    text = _drop_repeated_citations(text, links)
    text = _ROLE.sub(lambda m: _role(m, links, page), text)
    text = re.sub(
        r"\[([^\]]+)\]\((#[\w-]+|(?!https?:)[^)\s]+\.(?:md|ipynb)(?:#[\w-]+)?)\)",
        lambda m: _link(m, links, page),
        text,
    )
    found = leftover(text)
    if found:
        raise RawMyST(f"{page}: MyST left after rendering: {found}")
    return text


def leftover(text: str) -> list[str]:
    """The MyST constructs in ``text`` that Colab or Jupyter would show raw."""
    outside_code = re.sub(r"^```(?!\{).*?^```", "", text, flags=re.M | re.S)
    found = _ROLE.findall(outside_code)
    found += re.findall(r"^(?:`{3,}|:{3,})\{[\w:-]+\}", outside_code, re.M)
    found += re.findall(r"^\([\w-]+\)=", outside_code, re.M)
    return [f if isinstance(f, str) else f"{{{f[0]}}}`{f[1]}`" for f in found]
