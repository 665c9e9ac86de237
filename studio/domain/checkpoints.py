"""Signed checkpoints of the log: a table's head (seq and hash), when and why it was taken, signed by the studio's
key. The signature makes a head kept off-site something only the key's holder could have written: a log cut short or
rewritten after a checkpoint no longer reaches that seq with that hash, and a forged checkpoint does not verify.

Pure: the record and the exact bytes signed (`payload`); the signing itself is `studio.signing`'s.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from studio.domain.chain import Head, canonical_json, format_at


class CheckpointReason(enum.StrEnum):
    SHOE_END = "shoe_end"  # every shoe's end
    INTERVAL = "interval"  # at least every N minutes while the log grows


@dataclass(frozen=True, slots=True)
class Checkpoint:
    head: Head
    at: datetime  # UTC, when it was signed
    reason: CheckpointReason
    key_id: str  # which key signed it: the SHA-256 (hex) of the raw public key
    signature: str = ""  # Ed25519, hex, over `payload()`

    def payload(self) -> bytes:
        """The bytes signed: canonical JSON of every field but the signature."""
        return canonical_json(self._fields()).encode("ascii")

    def _fields(self) -> dict[str, Any]:
        return {"table": self.head.stream, "seq": self.head.seq, "hash": self.head.hash, "at": format_at(self.at),
                "reason": self.reason.value, "key_id": self.key_id}  # fmt: skip

    def to_line(self) -> str:
        """One line of a checkpoint file (JSON)."""
        return canonical_json({**self._fields(), "signature": self.signature})

    @classmethod
    def from_line(cls, line: str) -> Checkpoint:
        """Read a line of a checkpoint file; `ValueError` saying what is wrong otherwise."""
        try:
            data = json.loads(line)
            head = Head.parse(f"{data['table']}:{data['seq']}:{data['hash']}")
            at = datetime.fromisoformat(str(data["at"]).replace("Z", "+00:00"))
            return cls(head, at, CheckpointReason(data["reason"]), str(data["key_id"]), str(data["signature"]))
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"not a checkpoint: {error}") from None
