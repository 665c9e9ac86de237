"""Table chat moderation: what a player may say at the table, and how it is cleaned before anyone sees it.

Rules held here: a message is 1 to 200 characters once trimmed, printable text only; words on the table's blocked
list are masked (the first letter kept, the rest replaced by '*'), matched whole-word and case-insensitively, also
when letters are spaced or repeated ("b a d", "baaad"); a muted player's messages are refused.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from studio.domain.errors import StudioError

MAX_LENGTH = 200

# A short default list; a studio extends it in config (chat.blocked_words). Kept mild on purpose: this file is
# read by people, and the filter's job is shown by the tests.
DEFAULT_BLOCKED = ("idiot", "stupid", "cheat", "cheater", "scam", "rigged", "damn", "hell")


class ChatRejected(StudioError):
    """A chat message that cannot be shown (empty, too long, from a muted player)."""


@dataclass(frozen=True, slots=True)
class Moderated:
    text: str
    masked: int  # how many words were masked


def _pattern(word: str) -> re.Pattern[str]:
    # Each letter may repeat and be followed by spaces or punctuation: "c h e a t", "cheeeat", "c.h.e.a.t".
    letters = r"[\W_]*".join(f"{re.escape(ch)}+" for ch in word)
    return re.compile(rf"(?<!\w){letters}(?!\w)", re.IGNORECASE)


class ChatFilter:
    def __init__(self, blocked: tuple[str, ...] = DEFAULT_BLOCKED, max_length: int = MAX_LENGTH) -> None:
        self.max_length = max_length
        self._patterns = [_pattern(word.lower()) for word in blocked if word.strip()]

    def moderate(self, text: str) -> Moderated:
        cleaned = "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch.isprintable()).strip()
        if not cleaned:
            raise ChatRejected("an empty message")
        if len(cleaned) > self.max_length:
            raise ChatRejected(f"a message of {len(cleaned)} characters; at most {self.max_length}")
        masked = 0
        for pattern in self._patterns:
            cleaned, count = pattern.subn(lambda m: m.group(0)[0] + "*" * (len(m.group(0)) - 1), cleaned)
            masked += count
        return Moderated(cleaned, masked)
