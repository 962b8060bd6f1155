"""Escaping of text that came from a user, a file, a link or a log: Markdown and HTML control characters,
web addresses that a Markdown viewer would turn into links, spreadsheet formulas, and the HTML page's policy.

:func:`plain_text` is the one helper the app uses for such text (every page, every message);
:func:`md_escape` is what the Markdown documents use.
"""

from __future__ import annotations

import html
import re
from typing import Any

#: Inline styles and data: images only: no script, file, URL, frame, font or fetch can load.
CONTENT_POLICY = (
    "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
    "connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"
)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]#!|~])")
_MD_LINE_START = re.compile(r"^([0-9]*)([-+>=.)])")
#: What GFM and Streamlit turn into a link without brackets: a scheme's "://" or ":", "www.", an e-mail's "@".
#: Viewers find these in the text after Markdown escapes are resolved (mdast-util-gfm-autolink-literal), so a
#: backslash does not stop them: a zero-width space (U+200B) inside each does, and the text reads the same.
_AUTOLINK = re.compile(r"(?i)\b(https?|s?ftp|file|mailto|data|javascript|vbscript|xmpp|irc)(:)|\b(www)(\\?\.)|(@)")
ZERO_WIDTH_SPACE = "\u200b"
#: Streamlit renders $...$ as LaTeX.
_DOLLAR = re.compile(r"\$")
_INTRAWORD_UNDERSCORE = re.compile(r"(?<=[0-9A-Za-z])\\_(?=[0-9A-Za-z])")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def md_escape(value: Any, inline: bool = False, *, links: bool = False) -> str:
    r"""Text safe inside Markdown: HTML escaped, Markdown control characters backslashed, one line.

    ``inline`` text follows other text on its line (a table cell, a list item), so a leading ``-`` or
    ``1.`` cannot start a list and is left as is.

    >>> md_escape("<script>x</script> [a](javascript:b)\n# h").replace(ZERO_WIDTH_SPACE, "^")
    '&lt;script&gt;x&lt;/script&gt; \\[a\\](javascript:^b) \\# h'
    >>> md_escape("- item"), md_escape("1. item"), md_escape("Llama-3.1-8B (GiB)")
    ('\\- item', '1\\. item', 'Llama-3.1-8B (GiB)')
    >>> md_escape("2026-12-03", inline=True), md_escape("-1.50", inline=True)
    ('2026-12-03', '-1.50')

    A web address stays plain text (no viewer makes it a link) unless ``links`` (the document's own sources):

    >>> md_escape("see https://x.example or www.x.example, a@x.example").replace(ZERO_WIDTH_SPACE, "^")
    'see https:^//x.example or www^.x.example, a^@x.example'
    """
    text = _MD_SPECIAL.sub(r"\\\1", html.escape(" ".join(str(value).split()), quote=False))
    if not links:
        text = _AUTOLINK.sub(_break_autolink, text)
    return text if inline else _MD_LINE_START.sub(r"\1\\\2", text)


def _break_autolink(match: re.Match) -> str:
    scheme, colon, www, dot, at = match.groups()
    if scheme:
        return f"{scheme}{colon}{ZERO_WIDTH_SPACE}"
    if www:
        return f"{www}{ZERO_WIDTH_SPACE}{dot}"
    return f"{ZERO_WIDTH_SPACE}{at}"


def plain_text(value: Any, max_chars: int | None = None) -> str:
    r"""Text from a user, a file, a link or a log, safe wherever the app renders Markdown (messages, captions,
    headings): no link, image, emphasis, heading, list, HTML, LaTeX or colour it could carry takes effect, and
    it stays on one line. ``max_chars`` cuts it first (with "…").

    >>> print(plain_text("![x](https://t.example/p.png) **b** <i>c</i> $x$ :red[d]").replace(ZERO_WIDTH_SPACE, "^"))
    \!\[x\](https:^//t.example/p.png) \*\*b\*\* &lt;i&gt;c&lt;/i&gt; \$x\$ :red\[d\]
    >>> plain_text("prompt_tokens = 5 and _soft_")
    'prompt_tokens = 5 and \\_soft\\_'
    >>> plain_text("x" * 10, max_chars=4)
    'xxx…'
    """
    text = str(value)
    if max_chars is not None and len(text) > max_chars:
        text = text[: max_chars - 1] + "…"
    # an underscore inside a word never starts emphasis (CommonMark's flanking rule): field names stay as typed
    return _INTRAWORD_UNDERSCORE.sub("_", _DOLLAR.sub(r"\\$", md_escape(text, inline=True)))


def xlsx_safe(value: Any) -> Any:
    """A cell value that no spreadsheet reads as a formula: text starting with = + - @ gets a leading quote.

    >>> xlsx_safe("=HYPERLINK(1)"), xlsx_safe(-1.5), xlsx_safe("ok")
    ("'=HYPERLINK(1)", -1.5, 'ok')
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
