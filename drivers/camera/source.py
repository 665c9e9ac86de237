"""`CameraSource`: the camera as a `CardSource` (studio.sources).

Frames come from a camera, a video file or stream, or a folder of images (`frames.reader_for`). Each frame is read
for cards (in the configured zones, or anywhere), and a card becomes a report only by the stability rule
(`stability.py`): a CARD once read alike and confidently in `stable_frames` consecutive frames, else a MISREAD with
the best guess in its detail. Every report carries the confidence and its evidence, kept under
`evidence_dir/<source id>/`: the card's rectified crop (PNG), whose path is the report's `raw`, and beside it a JSON
file of the same name with the frame's size and every card box read in that frame (`evidence_json`). The report
carries the SHA-256 of both files (`evidence_sha256`, `evidence_boxes_sha256`); the table logs them with the read, so
the hash chain makes the files tamper-evident. A file of evidence is never overwritten: its name holds the time and
the report's sequence number, and it is created exclusively.

A frame whose zones look as they did in the frame last read is not read again: it gets that frame's cards
(`still.StillTable`; read again when a cell of the zones changes, and at least every `reread_every` frames: 25, one
second at 25 frames a second, by default; 1 reads every frame). After a change the first `stable_frames` frames are
each read, so that a card is still reported on that many readings of its own.

Blocking work (opening the device, grabbing a frame, recognising, writing a crop) runs in worker threads so that the
event loop never waits on OpenCV. A frame that is unusable (undecodable, empty, of the wrong pixel type, too large)
is counted and skipped, and the health degrades while they are frequent; a stream that ends, fails, or gives no frame
within `read_timeout` seconds raises `SourceDisconnected`. Reconnecting is the supervisor's job.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import cv2

from drivers.camera.detect import Quad, Zone, warp
from drivers.camera.errors import CameraError, ImageError
from drivers.camera.frames import BadFrame, FrameReader, StreamFailed, reader_for
from drivers.camera.image_io import Image, check_frame
from drivers.camera.options import camera_options
from drivers.camera.reader import IndexReader
from drivers.camera.recognize import CardRead
from drivers.camera.stability import Sighting, StabilityTracker
from drivers.camera.still import REREAD_EVERY, StillTable
from drivers.camera.templates import Templates
from studio.clock import SystemClock
from studio.domain.cards import parse_card
from studio.domain.reads import DeviceReport, ReportKind
from studio.sources import ManagedSource, SourceDisconnected, SourceHealth, SourceState, SourceUnavailable

DEFAULT_TEMPLATES = Path(__file__).with_name("data") / "templates.npz"
HEALTH_WINDOW = 50  # frames over which the share of unusable frames is judged
DEGRADED_SHARE = 0.1  # more unusable frames than this share of the window: degraded
DEGRADED_RUN = 3  # or this many in a row


class Clock(Protocol):
    def now(self) -> datetime: ...


@dataclass(frozen=True, slots=True)
class _Evidence:
    frame: object
    quad: Quad
    box: tuple[int, int, int, int]  # the card's box in the frame
    frame_boxes: tuple[dict[str, Any], ...]  # every card read in the frame: code, confidence, box, zone
    # False when the frame was not read but given the cards of the frame last read, which it matched (`StillTable`)
    boxes_from_this_frame: bool = True


def evidence_json(
    source_id: str,
    device_seq: int,
    code: str,
    crop_name: str,
    crop_sha256: str,
    frame_size: tuple[int, int],
    box: Sequence[int],
    frame_boxes: Sequence[Mapping[str, Any]],
    boxes_from_this_frame: bool = True,
) -> bytes:
    """The JSON kept beside a crop: which read it is, the crop's hash, the frame's size and boxes (canonical form),
    and whether the boxes were read in this frame or in the frame last read, which this one matched (`StillTable`)."""
    document = {
        "source": source_id, "device_seq": device_seq, "code": code,
        "crop": crop_name, "crop_sha256": crop_sha256,
        "frame": {"width": frame_size[0], "height": frame_size[1]},
        "box": [int(v) for v in box],  # this card's box, x y w h in frame pixels
        "boxes": list(frame_boxes),  # every card read in the frame
        "boxes_from_this_frame": boxes_from_this_frame,
    }  # fmt: skip
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode("ascii")


def _frame_boxes(reads: Sequence[CardRead]) -> tuple[dict[str, Any], ...]:
    return tuple({"code": r.code, "confidence": round(float(r.confidence), 4), "box": [int(v) for v in r.box],
                  "zone": r.zone} for r in reads)  # fmt: skip


class CameraSource(ManagedSource):
    @classmethod
    def from_options(cls, source_id: str, options: Mapping[str, Any], clock: Clock) -> CameraSource:
        """A camera from its `[[sources]]` entry (see `drivers.camera.options`)."""
        kwargs = camera_options(source_id, options)
        return cls(source_id, kwargs.pop("input"), clock=clock, **kwargs)

    def __init__(
        self,
        source_id: str,
        input: str | int | Path | FrameReader,
        *,
        templates: Path | str | None = None,
        zones: Sequence[Zone] = (),
        stable_frames: int = 3,
        min_confidence: float = 0.8,
        misread_after: int | None = None,
        clear_after: int = 2,
        evidence_dir: Path | str = Path("artifacts") / "camera",
        read_timeout: float = 5.0,
        reread_every: int = REREAD_EVERY,
        clock: Clock | None = None,
    ) -> None:
        if read_timeout <= 0:
            raise ValueError(f"read_timeout must be positive, not {read_timeout}")
        if reread_every < 1:
            raise ValueError(f"reread_every must be at least 1, not {reread_every}")
        self._id = source_id
        self._input = input
        # No templates: the shipped reader alone (no enrollment needed); an enrolled deck confirms or overrides it.
        self._templates_path = Path(templates) if templates is not None else None
        self._zones = tuple(zones)
        self._stable_frames = stable_frames
        self._min_confidence = min_confidence
        self._misread_after = misread_after
        self._clear_after = clear_after
        self._evidence_dir = Path(evidence_dir)  # the crops go in a folder of the source's own in it
        self._read_timeout = read_timeout
        self._reread_every = reread_every  # a frame is read at least every this many frames (1: every frame)
        self._clock: Clock = clock or SystemClock()
        self._reader: FrameReader | None = None
        self._recognizer: IndexReader | None = None
        self._pending: asyncio.Future[object | None] | None = None  # a frame grab still running in its thread
        self._open = False
        self._closed_reason = "not opened"
        self._outcomes: collections.deque[bool] = collections.deque(maxlen=HEALTH_WINDOW)  # True: usable frame
        self._bad_run = 0
        self._last_problem = ""
        self._last_seen: datetime | None = None
        self._seq = 0
        # The reports' numbers count from 1 again in each process: this names the numbering (a restart's is new).
        self._device_session = f"started-{self._clock.now():%Y%m%dT%H%M%S.%f}"
        self.frames_read = 0
        self.bad_frames = 0
        self._still: StillTable | None = None  # the frames of the current `reports` pass, read when they change

    @property
    def source_id(self) -> str:
        return self._id

    @property
    def frames_still(self) -> int:
        """Usable frames of the current pass given the cards of the frame last read (nothing in the zones changed)."""
        return self._still.frames_still if self._still is not None else 0

    @property
    def evidence_dir(self) -> Path:
        """Where this camera keeps its evidence (the server serves crops from here and from nowhere else)."""
        return self._evidence_dir / _safe(self._id)

    async def open(self) -> None:
        if self._open:
            return
        try:
            templates = None
            if self._templates_path is not None:
                templates = await asyncio.to_thread(Templates.load, self._templates_path)
            recognizer = await asyncio.to_thread(IndexReader, templates=templates)
            reader = reader_for(self._input)
            await asyncio.to_thread(reader.open)
        except CameraError as error:
            raise SourceUnavailable(f"{self._id}: {error}") from None
        self._recognizer = recognizer
        self._reader = reader
        self._open = True
        self._closed_reason = ""
        self._outcomes.clear()
        self._bad_run = 0

    async def close(self) -> None:
        self._open = False
        self._closed_reason = self._closed_reason or "closed"
        reader, self._reader = self._reader, None
        if reader is None:
            return
        pending, self._pending = self._pending, None
        if pending is not None and not pending.done():
            # the grab still blocks in its thread: release the device once it returns, not under its feet
            pending.add_done_callback(lambda _: reader.close())
            return
        await asyncio.to_thread(reader.close)

    def health(self) -> SourceHealth:
        if not self._open:
            return SourceHealth(SourceState.DISCONNECTED, self._closed_reason, self._last_seen)
        bad = self._outcomes.count(False)
        if self._bad_run >= DEGRADED_RUN or (self._outcomes and bad > DEGRADED_SHARE * len(self._outcomes)):
            detail = f"{bad} of the last {len(self._outcomes)} frames unusable (last: {self._last_problem})"
            return SourceHealth(SourceState.DEGRADED, detail, self._last_seen)
        return SourceHealth(SourceState.CONNECTED, "", self._last_seen)

    async def reports(self) -> AsyncIterator[DeviceReport]:
        if not self._open or self._recognizer is None:
            raise SourceDisconnected(f"{self._id}: not open")
        # after a change the first `stable_frames` frames are each read: a card is reported on that many readings
        still = self._still = StillTable(self._recognizer, self._zones, self._reread_every, self._stable_frames)
        tracker: StabilityTracker[_Evidence] = StabilityTracker(
            self._stable_frames, self._min_confidence, self._misread_after, self._clear_after
        )
        while self._open:
            try:
                frame = await self._grab()
            except StreamFailed as error:
                raise self._lost(str(error)) from None
            if frame is None:
                raise self._lost("the stream ended" if self._reader is not None else "closed")
            self.frames_read += 1
            if isinstance(frame, BadFrame):
                self._bad(frame.reason)
                continue
            try:
                image, reads, read_now = await asyncio.to_thread(self._recognise, still, frame)
            except ImageError as error:
                self._bad(str(error))
                continue
            except Exception as error:  # OpenCV can fail on a frame in ways no check foresees: count it, go on
                self._bad(f"frame {self.frames_read}: {type(error).__name__}: {error}")
                continue
            self._good()
            boxes = _frame_boxes(reads)
            sightings = [Sighting(r.code, r.confidence, r.box, r.zone, _Evidence(image, r.quad, r.box, boxes, read_now))
                         for r in reads]  # fmt: skip
            for decision in tracker.update(sightings):
                yield await self._report(decision.confirmed, decision.code, decision.confidence, decision.detail,
                                         decision.evidence)  # fmt: skip
        raise SourceDisconnected(f"{self._id}: {self._closed_reason or 'closed'}")  # closed while reading

    def _recognise(self, still: StillTable, frame: object) -> tuple[Image, list[CardRead], bool]:
        """Check the frame and read its cards (in a worker thread: both can take milliseconds); whether it was read
        (else it matched the frame last read and has its cards)."""
        image = check_frame(frame, f"frame {self.frames_read}")
        reads = still.read_frame(image)
        return image, reads, still.read_now

    async def _grab(self) -> object | None:
        reader = self._reader
        if reader is None:
            return None
        self._pending = asyncio.ensure_future(asyncio.to_thread(reader.read))
        try:
            return await asyncio.wait_for(asyncio.shield(self._pending), self._read_timeout)
        except TimeoutError:
            raise self._lost(f"no frame from {reader.name} within {self._read_timeout:g} s") from None
        finally:
            if self._pending is not None and self._pending.done():
                self._pending = None

    def _lost(self, reason: str) -> SourceDisconnected:
        """Mark the source disconnected; the error to raise from the report iterator."""
        self._open = False
        self._closed_reason = reason
        return SourceDisconnected(f"{self._id}: {reason}")

    def _bad(self, reason: str) -> None:
        self.bad_frames += 1
        self._outcomes.append(False)
        self._bad_run += 1
        self._last_problem = reason

    def _good(self) -> None:
        self._outcomes.append(True)
        self._bad_run = 0
        self._last_seen = self._clock.now()

    async def _report(self, confirmed: bool, code: str, confidence: float, detail: str, evidence: _Evidence | None
                      ) -> DeviceReport:  # fmt: skip
        self._seq += 1
        at = self._clock.now()
        raw, crop_hash, boxes_hash, problem = None, None, None, ""
        if evidence is not None:
            try:
                raw, crop_hash, boxes_hash = await asyncio.to_thread(self._save_crop, evidence, code, at)
            except (OSError, ValueError) as error:
                problem = f"; crop not saved: {error}"
        card = parse_card(code) if confirmed else None
        kind = ReportKind.CARD if confirmed else ReportKind.MISREAD
        return DeviceReport(self._id, kind, at, card, self._seq, confidence, raw, detail + problem, crop_hash,
                            boxes_hash, self._device_session)  # fmt: skip

    def _save_crop(self, evidence: _Evidence, code: str, at: datetime) -> tuple[str, str, str]:
        """Write the crop and its JSON (never over an older file); (the crop's path, the SHA-256 of each)."""
        frame = check_frame(evidence.frame)
        crop = warp(frame, evidence.quad)
        ok, encoded = cv2.imencode(".png", crop)
        if not ok:
            raise ValueError("the crop could not be encoded")
        png = encoded.tobytes()
        crop_hash = hashlib.sha256(png).hexdigest()
        folder = self.evidence_dir
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"{at:%Y%m%dT%H%M%S%f}-{self._seq:06d}-{_safe(code)}"
        for attempt in range(100):  # a name already taken (a restart within the same microsecond): the next one
            path = folder / (f"{stem}.png" if attempt == 0 else f"{stem}-{attempt}.png")
            try:
                out = path.open("xb")
            except FileExistsError:
                continue
            with out:
                out.write(png)
            break
        else:
            raise ValueError(f"no free name for {stem}.png in {folder}")
        height, width = frame.shape[:2]
        boxes = evidence_json(self._id, self._seq, code, path.name, crop_hash, (width, height), evidence.box,
                              evidence.frame_boxes, evidence.boxes_from_this_frame)  # fmt: skip
        path.with_suffix(".json").write_bytes(boxes)  # named as the crop, which was just taken exclusively
        return str(path), crop_hash, hashlib.sha256(boxes).hexdigest()


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text) or "_"
