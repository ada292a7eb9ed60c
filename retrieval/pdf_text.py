"""Text out of a PDF (a boiler manual, a tenancy handbook) with pypdf.

Pages are joined as paragraphs. A scanned PDF has no text layer: it is refused
with a message saying so rather than stored empty (no OCR here). A glyph the
extractor cannot name (NUL) is dropped, not a reason to refuse the file."""

from __future__ import annotations

import io
import logging

from django.conf import settings
from pypdf import PdfReader
from pypdf.errors import DependencyError, PyPdfError

logger = logging.getLogger(__name__)


class PdfTextError(ValueError):
    """The PDF cannot give us text; the message says why, for the user."""


def pdf_text(data: bytes) -> str:
    try:
        reader = PdfReader(io.BytesIO(data))
        # Restricted only (copy, print) opens with the empty password; one that asks for a password does not.
        if reader.is_encrypted and not reader.decrypt(""):
            raise PdfTextError("The PDF is password-protected: upload an unprotected copy.")
        if len(reader.pages) > settings.DOCUMENT_PDF_MAX_PAGES:
            raise PdfTextError(
                f"The PDF has {len(reader.pages)} pages, more than {settings.DOCUMENT_PDF_MAX_PAGES}: split it."
            )
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except DependencyError:  # an encryption pypdf cannot open without a crypto library
        raise PdfTextError("The PDF is encrypted in a way we cannot open: upload an unprotected copy.") from None
    except (PyPdfError, ValueError, KeyError, TypeError, RecursionError) as error:
        if isinstance(error, PdfTextError):
            raise
        logger.info("unreadable PDF: %s", error)
        raise PdfTextError("The PDF could not be read (it may be damaged).") from None
    # A glyph the font maps to no character comes out as NUL, which a text column cannot hold.
    text = "\n\n".join(page for page in pages if page).replace("\x00", "")
    if not text.strip():
        raise PdfTextError("The PDF has no text layer (a scan?): upload a text PDF, or the text as .txt or .md.")
    return text
