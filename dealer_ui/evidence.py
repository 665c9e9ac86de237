"""Camera evidence for staff: the crop (and its JSON of boxes) behind a logged camera read, checked against the
SHA-256 the log recorded with the read.

Rules held here:
- The file's path comes from the log (the read's `raw`), never from a request, and it must lie inside the evidence
  folder of one of the table's card sources once links are resolved; any other path is refused.
- The bytes served are the bytes hashed: the file is read once, hashed, compared with the logged hash, and only then
  served. A file that differs is reported as altered, never served.
- A read logged without a hash (a device that keeps no crop, or a record older than the hashes) has no evidence to
  serve: what cannot be verified is not shown as evidence.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.domain.records import Record

READ_KINDS = frozenset({"CardDealt", "CardBurned", "TableSuspended", "CardReadWhileSuspended"})


class EvidenceProblem(Exception):
    """Why evidence cannot be served: `status` is the HTTP status, the message one sentence for the page."""

    def __init__(self, status: int, message: str, state: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.state = state  # "none", "refused", "missing", "altered"


@dataclass(frozen=True, slots=True)
class Evidence:
    table: str
    seq: int
    crop: Path  # resolved, inside an evidence folder
    crop_sha256: str
    boxes_sha256: str | None

    @property
    def boxes(self) -> Path:
        return self.crop.with_suffix(".json")


def url_of(table: str, seq: int) -> str:
    return f"/api/evidence/{table}/{seq}"


def has_evidence(record: Record) -> bool:
    return record.kind in READ_KINDS and isinstance(record.data.get("evidence_sha256"), str)


def _candidates(raw: str) -> list[str]:
    """The paths `raw` may name: itself, or, for a read two sources agreed on ("shoe-1: 0a0b | cam-1: /x/y.png"),
    each source's part."""
    found = [raw.strip()]
    for part in raw.split(" | "):
        _, separator, rest = part.partition(": ")
        if separator:
            found.append(rest.strip())
    return [text for text in found if text]


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


def locate(table: str, record: Record, roots: Iterable[Path]) -> Evidence:
    """The evidence a logged read names, or `EvidenceProblem` (404: no evidence logged; 403: outside the folders)."""
    where = f"seq {record.seq} of table {table}"
    if not has_evidence(record):
        raise EvidenceProblem(404, f"{where} ({record.kind}) records no camera evidence with a hash", "none")
    if not record.raw:
        raise EvidenceProblem(404, f"{where} records a hash but no path to its crop", "none")
    resolved_roots = [root.resolve() for root in roots]
    paths = [Path(text) for text in _candidates(record.raw) if text.lower().endswith(".png")]
    if not paths:
        raise EvidenceProblem(404, f"{where} names no crop file", "none")
    for path in paths:
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError):
            continue
        if _inside(resolved, resolved_roots):
            boxes = record.data.get("evidence_boxes_sha256")
            return Evidence(table, record.seq, resolved, str(record.data["evidence_sha256"]),
                            boxes if isinstance(boxes, str) else None)  # fmt: skip
    outside = f"{where}: the logged crop path lies outside the evidence folders of the table's cameras: refused"
    raise EvidenceProblem(403, outside, "refused")


def _verified(path: Path, expected: str, what: str, where: str) -> bytes:
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        raise EvidenceProblem(404, f"the {what} of {where} is missing: {path.name} is not in the evidence folder",
                              "missing") from None  # fmt: skip
    except OSError as error:
        raise EvidenceProblem(404, f"the {what} of {where} cannot be read: {error.strerror}", "missing") from None
    actual = hashlib.sha256(content).hexdigest()
    if actual != expected:
        raise EvidenceProblem(
            409, f"the {what} of {where} was altered: its SHA-256 is {actual}, the log recorded {expected}", "altered"
        )
    return content


def crop_bytes(evidence: Evidence) -> bytes:
    """The crop, once its hash matches the log's."""
    return _verified(evidence.crop, evidence.crop_sha256, "camera crop", f"seq {evidence.seq}")


def boxes_bytes(evidence: Evidence) -> bytes:
    """The crop's JSON (frame size and boxes), once its hash matches the log's."""
    if evidence.boxes_sha256 is None:
        raise EvidenceProblem(404, f"seq {evidence.seq} records no hash of the frame's boxes", "none")
    return _verified(evidence.boxes, evidence.boxes_sha256, "boxes file", f"seq {evidence.seq}")


def status(table: str, record: Record, roots: Iterable[Path]) -> dict[str, Any] | None:
    """What surveillance sees beside a read: None without evidence; else its url, the logged hash and whether the
    file on disk is that file ("verified") or not ("altered", "missing", "refused"), with a sentence."""
    if not has_evidence(record):
        return None
    found = {"url": url_of(table, record.seq), "sha256": record.data["evidence_sha256"]}
    try:
        evidence = locate(table, record, roots)
        crop_bytes(evidence)
        if evidence.boxes_sha256 is not None:
            boxes_bytes(evidence)
    except EvidenceProblem as problem:
        return {**found, "status": problem.state, "detail": problem.message}
    return {**found, "status": "verified", "detail": "the SHA-256 of the crop and of its boxes match the log"}


def roots_of(sources: Iterable[object]) -> list[Path]:
    """The evidence folders of a table's card sources (those that keep evidence: cameras, and their test twin)."""
    roots = []
    for source in sources:
        folder = getattr(source, "evidence_dir", None)
        if isinstance(folder, Path):
            roots.append(folder)
    return roots
