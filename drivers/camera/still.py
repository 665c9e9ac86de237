"""A still table read once: a frame whose zones look as they did in the frame last read gets that frame's cards.

Most of a shift the felt is still: cards lie where they were dealt, and between rounds nothing moves. Reading such a
frame again finds what the last reading found (a card lying still is read the same in every frame), at the full cost
of proposing and of the networks (about 25 ms a 1280 x 720 frame in two zones on one core). `StillTable` compares
each frame, in the zones it reads and a margin round them, with the frame last read, as means of 8 x 8 pixel cells,
and reads it when some cell changed by more than `CHANGED` grey levels or its size or pixel type changed, when it is
one of the first `first_readings` frames since a change, or when `reread_every` frames have passed since a reading
(`REREAD_EVERY` by default). Comparing with the frame last read, not with the frame before, keeps a slow drift
(light, a card pushed a pixel a frame) from passing unread.

The level (`bench/still_levels.py`; docs/camera.md, "A still table read once") lies between what a camera's noise
does and what a changed card does, on frames of 1280 x 720: two frames of one still scene, each with its own sensor
noise and JPEG compression, differ by at most 7 levels in a cell for a studio camera's stream (sigma 4, quality 80),
9 to 10 at sigma 6 and quality 70 (such a camera's still frames are sometimes read again: safe, and slower), 11 to 12
at sigma 8 and quality 60; a corner index of 20 pixels or more replaced by another card's, at the least noise,
changes some cell by 10 levels or more (878 swaps in the validation and held-out webcam scenes and in 60 studio
scenes composed from those sets' photos). When in doubt a frame is read; a change below the level would be read at
the next `reread_every`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.detect import Zone
from drivers.camera.image_io import Image, u8
from drivers.camera.recognize import CardRead

CELL = 8  # pixels a side of the cells whose means are compared
CHANGED = 8  # a cell whose mean moved by more than this many grey levels (in any colour) is a change: read again
REREAD_EVERY = 25  # frames: by default a table is read at least this often (a second at 25 frames a second)
# The zones are compared with this margin (a fraction of their size) round them: the reader looks past a zone's edge
# (its outlines with `DetectorConfig.zone_margin` = 0.15, an index's crop past its square), so a change there counts.
MARGIN = 0.25


class Reader(Protocol):
    """What reads a frame's cards: `reader.IndexReader`."""

    def read_frame(self, frame: object, zones: Sequence[Zone] = ()) -> list[CardRead]: ...


class StillTable:
    """`reader.read_frame` for a stream of frames, read again only when the zones (or the whole frame, with none)
    changed, and at least every `reread_every` frames (1: every frame is read). After a change the first
    `first_readings` frames are all read (the camera's `stable_frames`: a card that just came to rest is still reported
    on that many readings of their own, as before, not on one reading repeated). `read_now` says whether the last
    frame was read; `frames_read_again` and `frames_still` count what it did."""

    def __init__(self, reader: Reader, zones: Sequence[Zone] = (), reread_every: int = REREAD_EVERY,
                 first_readings: int = 1) -> None:  # fmt: skip
        for name, value in (("reread_every", reread_every), ("first_readings", first_readings)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, not {value}")
        self._reader = reader
        self._zones = tuple(zones)
        self._reread_every = reread_every
        self._first_readings = first_readings
        self._last: list[npt.NDArray[np.uint8]] | None = None  # the cells of the frame last read
        self._last_size: tuple[int, ...] = ()
        self._reads: list[CardRead] = []
        self._since_read = 0  # frames given the last reading's cards since it
        self._readings = 0  # frames read since the last change, that one included
        self.frames_read_again = 0
        self.frames_still = 0
        self.read_now = False  # whether the last frame was read (else it was given the last reading's cards)

    def read_frame(self, image: Image) -> list[CardRead]:
        """The cards of `image` (checked already: `image_io.check_frame`): read, or the last reading's if still."""
        now = cells(image, self._zones)
        changed = self._changed(image.shape, now)
        due = self._readings < self._first_readings or self._since_read + 1 >= self._reread_every
        self.read_now = changed or due
        if not self.read_now:
            self._since_read += 1
            self.frames_still += 1
            return list(self._reads)
        self._reads = self._reader.read_frame(image, self._zones)
        self._last, self._last_size, self._since_read = now, image.shape, 0
        self._readings = 1 if changed else self._readings + 1
        self.frames_read_again += 1
        return list(self._reads)

    def _changed(self, size: tuple[int, ...], now: list[npt.NDArray[np.uint8]]) -> bool:
        if self._last is None or size != self._last_size:
            return True
        return largest_change(now, self._last) > CHANGED


def cells(image: Image, zones: Sequence[Zone] = ()) -> list[npt.NDArray[np.uint8]]:
    """The means of the 8 x 8 pixel cells of each region compared (each zone and its margin; with none, the whole
    frame), whole cells only (OpenCV's fast path); a region smaller than a cell as its pixels."""
    height, width = image.shape[:2]
    regions = [_around(zone.box, width, height) for zone in zones] or [(0, 0, width, height)]
    found = []
    for x0, y0, x1, y1 in regions:
        across, down = (x1 - x0) // CELL, (y1 - y0) // CELL
        if across == 0 or down == 0:
            found.append(image[y0:y1, x0:x1].copy())
            continue
        view = image[y0 : y0 + down * CELL, x0 : x0 + across * CELL]
        found.append(u8(cv2.resize(view, (across, down), interpolation=cv2.INTER_AREA)))
    return found


def largest_change(now: list[npt.NDArray[np.uint8]], then: list[npt.NDArray[np.uint8]]) -> int:
    """The largest change of a cell (in any colour, grey levels) between two frames' `cells` of the same regions."""
    return max((int(cv2.absdiff(a, b).max()) for a, b in zip(now, then, strict=True) if a.size), default=0)


def _around(box: tuple[int, int, int, int], width: int, height: int) -> tuple[int, int, int, int]:
    """The zone's box grown by `MARGIN` of its size on every side, clipped to the frame: x0, y0, x1, y1."""
    x, y, w, h = box
    grow_x, grow_y = int(w * MARGIN), int(h * MARGIN)
    x0, y0 = min(max(0, x - grow_x), width), min(max(0, y - grow_y), height)
    return x0, y0, max(x0, min(width, x + w + grow_x)), max(y0, min(height, y + h + grow_y))
