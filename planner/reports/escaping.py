"""Escaping for documents: Markdown control characters, spreadsheet formulas, and the HTML page's policy."""

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
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def md_escape(value: Any, inline: bool = False) -> str:
    r"""Text safe inside Markdown: HTML escaped, Markdown control characters backslashed, one line.

    ``inline`` text follows other text on its line (a table cell, a list item), so a leading ``-`` or
    ``1.`` cannot start a list and is left as is.

    >>> md_escape("<script>x</script> [a](javascript:b)\n# h")
    '&lt;script&gt;x&lt;/script&gt; \\[a\\](javascript:b) \\# h'
    >>> md_escape("- item"), md_escape("1. item"), md_escape("Llama-3.1-8B (GiB)")
    ('\\- item', '1\\. item', 'Llama-3.1-8B (GiB)')
    >>> md_escape("2026-12-03", inline=True), md_escape("-1.50", inline=True)
    ('2026-12-03', '-1.50')
    """
    text = _MD_SPECIAL.sub(r"\\\1", html.escape(" ".join(str(value).split()), quote=False))
    return text if inline else _MD_LINE_START.sub(r"\1\\\2", text)


def xlsx_safe(value: Any) -> Any:
    """A cell value that no spreadsheet reads as a formula: text starting with = + - @ gets a leading quote.

    >>> xlsx_safe("=HYPERLINK(1)"), xlsx_safe(-1.5), xlsx_safe("ok")
    ("'=HYPERLINK(1)", -1.5, 'ok')
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
