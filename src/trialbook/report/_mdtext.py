"""Text from a ledger, an import or an agent made inert for GitHub's markdown renderer.

A run id, a system name, a task id or an error text lands in a pull-request comment or a job
summary. Raw, ``<img src=...>`` or ``</details>`` is HTML, a backtick closes the code span around
it, ``[x](https://...)`` is a link, ``![x](...)`` an image, ``|`` splits a table cell, and GitHub
itself turns ``@name`` into a mention (a notification), ``#12`` into an issue link, ``:skull:``
into an emoji and ``www.`` or ``https://`` into a link. :func:`md_text` writes every character
that markdown reads as syntax as a numeric character reference, which CommonMark reads as the
character itself, never as markup (CommonMark 0.31, "Entity and numeric character references"),
and it is read the same inside an HTML block such as ``<summary>``, where backslash escapes are
not. GitHub finds mentions, issue references, emoji and bare links in the text after the
markdown is parsed, where a reference is already the character again; a zero-width space
(``&#8203;``) after the ``@``, the ``#``, the first ``:`` or inside ``://`` and ``www.`` breaks
each of those patterns without changing what a reader sees.
"""

from __future__ import annotations

import re

from trialbook.report._printable import printable

__all__ = ["md_code", "md_text"]

# ASCII punctuation that markdown reads as syntax (code, emphasis, link and image brackets, HTML,
# references, headings, table cells, strikethrough, GitHub math); with the brackets and '<'
# written as references, '(', ')', '!', quotes and the rest are text wherever they stand
_SYNTAX = frozenset("\\`*_[]<>#|~&")
# a '$' opens or closes GitHub math unless it is an amount: after a space (or nothing, or a
# bracket) and before a digit; a closing '$' follows a non-space, so every math span loses it
_MATH = re.compile(r"(?<=[^\s(])\$|\$(?![0-9])")
_ZWSP = "&#8203;"
# GitHub's text filters, each matched where it would start (first principles: a mention is @
# after a non-word character and before a name; an e-mail autolink is name@domain.tld; an issue
# reference is # before a digit; an emoji code is :name:; a bare link starts www. or scheme://)
_BREAK = re.compile(
    r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])"
    r"|@(?=[A-Za-z0-9-]+\.[A-Za-z])"
    r"|#(?=[0-9])"
    r"|:(?=[A-Za-z0-9_+-]+:)"
    r"|:(?=//)"
    r"|(?i:www)(?=\.)"
)


_NAMED = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# an underscore between two letters or digits never opens or closes emphasis (CommonMark,
# "Emphasis and strong emphasis", rules 2 and 4): test_edge_cases stays as written
_INTRAWORD = re.compile(r"(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])")


def _reference(ch: str) -> str:
    return _NAMED.get(ch) or f"&#{ord(ch)};"


def md_text(text: str) -> str:
    """``text`` for GitHub markdown, a table cell or a line of a list: printable
    (:func:`trialbook.report.printable`, so on one line), every markdown syntax character a
    numeric reference, and GitHub's mention, issue, emoji and bare-link patterns broken by a
    zero-width space. What GitHub shows is the text as written."""
    # printable first: no raw U+200B is left in it, so the ones put in below are the breaks
    shown = _BREAK.sub(lambda m: m.group(0) + "\u200b", printable(text))
    shown = _INTRAWORD.sub("\u200c", shown)  # kept through the pass below
    out = "".join(_reference(ch) if ch in _SYNTAX else ch for ch in shown).replace("\u200c", "_")
    out = _MATH.sub("&#36;", out)
    # at the start of a list item (the caller's '- '): a nested list, an ordered list, a rule
    if re.match(r"[-+]( |$)|=+ *$", out):
        out = _reference(out[0]) + out[1:]
    elif found := re.match(r"[0-9]{1,9}([.)])( |$)", out):
        out = out[: found.start(1)] + _reference(found.group(1)) + out[found.end(1) :]
    return out.replace("\u200b", _ZWSP)


def md_code(text: str) -> str:
    """``text`` as a GitHub markdown code span, outside a table and outside HTML: printable, fenced
    by one backtick more than its longest run of backticks (so none of its own closes the span),
    and padded with a space where it starts or ends with a backtick or a space (CommonMark strips
    one space from each side). In a code span nothing is markup, and GitHub finds no mention,
    issue, emoji or link in it."""
    shown = printable(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", shown)), default=0) + 1)
    pad = " " if shown[:1] in ("`", " ") or shown[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"
