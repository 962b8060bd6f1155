"""Render a PDF's pages with pypdfium2 and measure where ink falls (shared by report and browser tests)."""

from __future__ import annotations

import io

#: A pixel darker than this (0-255, every channel) is ink; anti-aliased page edges stay lighter.
INK_THRESHOLD = 245


def page_images(pdf: bytes, scale: float = 1.0) -> list:
    """Each page as a PIL image (RGB)."""
    import pypdfium2 as pdfium  # noqa: PLC0415 (tests only)

    doc = pdfium.PdfDocument(io.BytesIO(pdf))
    try:
        return [doc[i].render(scale=scale).to_pil().convert("RGB") for i in range(len(doc))]
    finally:
        doc.close()


def page_texts(pdf: bytes) -> list[str]:
    import pypdfium2 as pdfium  # noqa: PLC0415

    doc = pdfium.PdfDocument(io.BytesIO(pdf))
    try:
        return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    finally:
        doc.close()


def ink_box(image) -> tuple[int, int, int, int] | None:
    """The bounding box (left, top, right, bottom) of every non-white pixel, or None for a blank page."""
    from PIL import ImageOps  # noqa: PLC0415

    gray = ImageOps.invert(image.convert("L"))  # ink becomes bright
    mask = gray.point(lambda v: 255 if v > 255 - INK_THRESHOLD else 0)
    return mask.getbbox()


def overflowing_pages(pdf: bytes, margin_mm: float = 14.0, tolerance_px: int = 2) -> list[tuple[int, tuple]]:
    """Pages with ink outside the printable area (the page less its ``margin_mm`` margins), at 72 px per inch."""
    margin = margin_mm / 25.4 * 72
    bad = []
    for i, image in enumerate(page_images(pdf)):
        box = ink_box(image)
        if box is None:
            continue
        width, height = image.size
        left, top, right, bottom = box
        inside = (
            left >= margin - tolerance_px
            and top >= margin - tolerance_px
            and right <= width - margin + tolerance_px
            and bottom <= height - margin + tolerance_px
        )
        if not inside:
            bad.append((i, box))
    return bad


#: A4's printable width at the documents' margins (210 mm - 2 x 14 mm) in CSS pixels (96 per inch).
PRINTABLE_WIDTH_PX = round((210 - 2 * 14) / 25.4 * 96)
_OVERFLOW_JS = """() => {
  const limit = document.documentElement.clientWidth + 1;
  return [...document.querySelectorAll('body *')]
    .filter(el => el.getBoundingClientRect().right > limit)
    .map(el => el.tagName + ':' + (el.textContent || '').slice(0, 40));
}"""


def print_layout_overflow(page_html: str) -> list[str]:
    """Elements of ``page_html`` that run past the printable width when laid out for print (Chromium clips
    them at the margin, so the PDF alone cannot show it). Empty when everything fits.

    Runs in its own thread: Playwright's sync API refuses a thread where an event loop already runs.
    """
    import threading  # noqa: PLC0415

    box: dict = {}

    def work() -> None:
        try:
            box["result"] = _layout_overflow(page_html)
        except Exception as exc:  # re-raised in the caller
            box["error"] = exc

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(timeout=300)
    if "error" in box:
        raise box["error"]
    return box["result"]


def _layout_overflow(page_html: str) -> list[str]:
    import shutil  # noqa: PLC0415

    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--headless"])
        try:
            page = browser.new_page(viewport={"width": PRINTABLE_WIDTH_PX, "height": 1000})
            page.route("**/*", lambda route: route.abort())
            page.emulate_media(media="print")
            page.set_content(page_html)
            return page.evaluate(_OVERFLOW_JS)
        finally:
            browser.close()
