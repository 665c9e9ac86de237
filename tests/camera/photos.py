"""Where the real card photographs are (shared/data/cards/webcam-9-to-ace, Apache-2.0; DESIGN.md §7)."""

from __future__ import annotations

import os
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
RELATIVE = Path("shared") / "data" / "cards" / "webcam-9-to-ace"


def card_photos() -> Path:
    """$STUDIO_CARD_PHOTOS if set; else the first of ../shared next to this checkout, or the studio's /work/shared,
    that holds them (a clone made elsewhere, e.g. by CI in a temporary folder, still finds them)."""
    configured = os.environ.get("STUDIO_CARD_PHOTOS")
    if configured:
        return Path(configured)
    candidates = [CHECKOUT.parent / RELATIVE, Path("/work") / RELATIVE]
    return next((path for path in candidates if path.is_dir()), candidates[0])
