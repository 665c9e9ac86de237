"""Players' PINs: checked for form, kept only as a salted scrypt hash (the standard library's `hashlib.scrypt`).

Rules held here:
- A PIN is 4 to 12 digits. It confirms a player's change of their own maximum stake (seed 004). The player's game
  server sets it for them through the API; the studio never stores, returns or logs it in plain text, and an error
  about a PIN never quotes it.
- The stored form is `scrypt$N$r$p$<salt hex>$<hash hex>`, with a random 16-byte salt per PIN, so the cost can be
  raised later without making older hashes unreadable. Checking compares in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from studio.domain.errors import StudioError

N, R, P = 2**14, 8, 1  # 16 MiB and some tens of milliseconds a hash: costly to guess, cheap enough for a request
MIN_DIGITS, MAX_DIGITS = 4, 12


class BadPin(StudioError, ValueError):
    """A PIN of the wrong form (the message never quotes it)."""


def check_form(pin: object) -> str:
    if not isinstance(pin, str) or not MIN_DIGITS <= len(pin) <= MAX_DIGITS or not all("0" <= c <= "9" for c in pin):
        raise BadPin(f"a PIN is {MIN_DIGITS} to {MAX_DIGITS} digits (0-9)")
    return pin


def _derive(pin: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(pin.encode("ascii"), salt=salt, n=n, r=r, p=p, maxmem=2 * 128 * n * r * p + 2**20, dklen=32)


def hash_pin(pin: str) -> str:
    """The stored form of a PIN (`BadPin` if it is not 4 to 12 digits)."""
    salt = secrets.token_bytes(16)
    return f"scrypt${N}${R}${P}${salt.hex()}${_derive(check_form(pin), salt, N, R, P).hex()}"


def verify_pin(pin: str, stored: str) -> bool:
    """Whether `pin` is the PIN whose stored form is `stored` (False for a PIN of the wrong form)."""
    try:
        check_form(pin)
        name, n, r, p, salt, digest = stored.split("$")
        if name != "scrypt":
            return False
        expected = bytes.fromhex(digest)
        derived = _derive(pin, bytes.fromhex(salt), int(n), int(r), int(p))
    except (BadPin, ValueError):
        return False
    return hmac.compare_digest(derived, expected)
