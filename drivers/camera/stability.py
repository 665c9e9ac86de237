"""When a card seen by the camera becomes a report: the stability rule. Pure logic, no images, no clock.

Rules:
- A card is followed from frame to frame by its place (same zone, overlapping box). A frame without it breaks its run
  of sightings; `clear_after` frames without it and it is gone (taken away, or the next card may come there).
- It is confirmed (a CARD report) once the same full code has been read in `stable_frames` consecutive frames, each
  with a confidence of at least `min_confidence`.
- It is a MISREAD, never a silent guess, when it stays unconfirmed: read the same way `stable_frames` times in a row
  but never confidently enough, or still unconfirmed after `misread_after` sightings (codes that keep changing, a
  suit that cannot be read). The best guess (the code with the most confidence summed over its sightings) goes with
  the misread for the dealer or the pit boss to confirm.
- A card is reported once, as a card or as a misread, however long it stays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

Evidence = TypeVar("Evidence")
Box = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class Sighting(Generic[Evidence]):
    """One card read in one frame. `code` has `?` for the suit when only the rank was read."""

    code: str
    confidence: float
    box: Box
    zone: str | None = None
    evidence: Evidence | None = None  # what the report will carry (the frame and the card's outline)


@dataclass(frozen=True, slots=True)
class Decision(Generic[Evidence]):
    confirmed: bool  # True: a card; False: a misread
    code: str  # the confirmed code, or the best guess
    confidence: float  # mean over the run that confirmed it, or the best guess's best confidence
    sightings: int
    detail: str
    evidence: Evidence | None


@dataclass(slots=True)
class _Track(Generic[Evidence]):
    zone: str | None
    box: Box
    run: list[Sighting[Evidence]] = field(default_factory=list)  # consecutive sightings, latest last
    seen: int = 0  # sightings since the card appeared
    missing: int = 0
    reported: bool = False
    totals: dict[str, float] = field(default_factory=dict)  # confidence summed per code
    best: dict[str, float] = field(default_factory=dict)  # best confidence per code
    counts: dict[str, int] = field(default_factory=dict)  # sightings per code


class StabilityTracker(Generic[Evidence]):
    def __init__(
        self, stable_frames: int = 3, min_confidence: float = 0.8, misread_after: int | None = None,
        clear_after: int = 2,
    ) -> None:  # fmt: skip
        if stable_frames < 1:
            raise ValueError(f"stable_frames must be at least 1, not {stable_frames}")
        if not 0.0 <= min_confidence <= 1.0:
            raise ValueError(f"min_confidence is between 0 and 1, not {min_confidence}")
        self.stable_frames = stable_frames
        self.min_confidence = min_confidence
        self.misread_after = max(misread_after or 3 * stable_frames, stable_frames)
        self.clear_after = max(1, clear_after)
        self._tracks: list[_Track[Evidence]] = []

    @property
    def cards_in_view(self) -> int:
        return len(self._tracks)

    def update(self, sightings: list[Sighting[Evidence]]) -> list[Decision[Evidence]]:
        """Take one frame's sightings; return the cards confirmed and the misreads decided by this frame."""
        unmatched = list(self._tracks)
        matched: list[tuple[_Track[Evidence], Sighting[Evidence]]] = []
        for sighting in sorted(sightings, key=lambda s: -s.box[2] * s.box[3]):
            track = max(
                (t for t in unmatched if t.zone == sighting.zone), key=lambda t: _iou(t.box, sighting.box), default=None
            )
            if track is None or _iou(track.box, sighting.box) < 0.3:
                track = _Track(sighting.zone, sighting.box)
                self._tracks.append(track)
            else:
                unmatched.remove(track)
            matched.append((track, sighting))
        for track in unmatched:
            track.missing += 1
            track.run.clear()
        self._tracks = [t for t in self._tracks if t.missing < self.clear_after]
        decisions = []
        for track, sighting in matched:
            decision = self._see(track, sighting)
            if decision is not None:
                decisions.append(decision)
        return decisions

    def _see(self, track: _Track[Evidence], sighting: Sighting[Evidence]) -> Decision[Evidence] | None:
        track.box, track.missing = sighting.box, 0
        track.seen += 1
        track.run.append(sighting)
        del track.run[: -self.stable_frames]
        track.totals[sighting.code] = track.totals.get(sighting.code, 0.0) + sighting.confidence
        track.best[sighting.code] = max(track.best.get(sighting.code, 0.0), sighting.confidence)
        track.counts[sighting.code] = track.counts.get(sighting.code, 0) + 1
        if track.reported or len(track.run) < self.stable_frames:
            if not track.reported and track.seen >= self.misread_after:
                return self._misread(track, sighting, f"no stable confident read in {track.seen} frames")
            return None
        codes = {s.code for s in track.run}
        if len(codes) == 1 and not sighting.code.endswith("?"):
            confidences = [s.confidence for s in track.run]
            if min(confidences) >= self.min_confidence:
                track.reported = True
                mean = round(sum(confidences) / len(confidences), 4)
                return Decision(True, sighting.code, mean, track.seen, f"read alike in {len(confidences)} frames",
                                sighting.evidence)  # fmt: skip
            if max(confidences) < self.min_confidence:
                return self._misread(track, sighting, f"read alike in {len(confidences)} frames but never surely")
        if track.seen >= self.misread_after:
            return self._misread(track, sighting, f"no stable confident read in {track.seen} frames")
        return None

    def _misread(self, track: _Track[Evidence], sighting: Sighting[Evidence], why: str) -> Decision[Evidence]:
        track.reported = True
        guess = max(track.totals, key=lambda code: track.totals[code])
        confidence = round(track.best[guess], 4)
        reads = ", ".join(f"{code} x{count}" for code, count in track.counts.items())
        detail = f"{why}; best guess {guess} (confidence {confidence:.2f}); reads: {reads}"
        return Decision(False, guess, confidence, track.seen, detail, sighting.evidence)


def _iou(a: Box, b: Box) -> float:
    ix = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    iy = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    inter = max(0, ix) * max(0, iy)
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0
