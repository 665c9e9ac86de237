"""Where frames come from: a camera, a video file or stream (`cv2.VideoCapture`), or a folder of images.

Every reader is blocking and meant to run in a worker thread (`asyncio.to_thread`). `read()` returns the next frame
as it came (the caller checks it), `None` when the stream has ended, and raises `StreamFailed` when the device or
stream fails. An image that cannot be decoded is not a failed stream: it is returned as `BadFrame`, counted by the
caller, and the next image follows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import cv2

from drivers.camera.errors import CameraError, ImageError
from drivers.camera.image_io import IMAGE_SUFFIXES, load_image

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
OPEN_TIMEOUT_MS = 5000
READ_TIMEOUT_MS = 5000


class StreamFailed(CameraError):
    """The camera or stream could not be opened or stopped giving frames."""


@dataclass(frozen=True, slots=True)
class BadFrame:
    """A frame that could not even be decoded, with the reason."""

    reason: str


class FrameReader(Protocol):
    @property
    def name(self) -> str: ...

    def open(self) -> None: ...

    def read(self) -> object | None: ...

    def close(self) -> None: ...


def reader_for(source: str | int | Path | FrameReader) -> FrameReader:
    """A device index (`0`, or "0"), a folder of images, or anything `cv2.VideoCapture` opens (a video file, an
    RTSP/HTTP URL); a `FrameReader` is used as it is (a capture card's own SDK, a test)."""
    if not isinstance(source, str | int | Path):
        return source
    if isinstance(source, int) or (isinstance(source, str) and source.strip().isdigit()):
        return VideoReader(int(source))
    if isinstance(source, Path) or not _URL.match(str(source)):
        path = Path(source)
        if path.is_dir():
            return FolderReader(path)
        return VideoReader(str(path))
    return VideoReader(str(source))


class VideoReader:
    def __init__(self, source: str | int) -> None:
        self._source = source
        self._capture: cv2.VideoCapture | None = None

    @property
    def name(self) -> str:
        return f"camera {self._source}" if isinstance(self._source, int) else str(self._source)

    def open(self) -> None:
        if isinstance(self._source, str) and not _URL.match(self._source) and not Path(self._source).is_file():
            raise StreamFailed(f"{self._source}: no such video file")
        params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, OPEN_TIMEOUT_MS, cv2.CAP_PROP_READ_TIMEOUT_MSEC, READ_TIMEOUT_MS]
        try:
            capture = cv2.VideoCapture(self._source, cv2.CAP_ANY, params)
        except cv2.error as error:
            raise StreamFailed(f"{self.name}: cannot open ({str(error).strip().splitlines()[-1]})") from None
        if not capture.isOpened():
            capture.release()
            raise StreamFailed(f"{self.name}: cannot open the camera or stream")
        self._capture = capture

    def read(self) -> object | None:
        if self._capture is None:
            raise StreamFailed(f"{self.name}: not open")
        try:
            ok, frame = self._capture.read()
        except cv2.error as error:
            raise StreamFailed(f"{self.name}: read failed ({str(error).strip().splitlines()[-1]})") from None
        if not ok:
            return None  # the file ended, or the device stopped: either way no more frames
        return frame

    def close(self) -> None:
        capture, self._capture = self._capture, None
        if capture is not None:
            capture.release()


class FolderReader:
    """The images of a folder in name order, one per frame (a recorded session, or a test)."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._files: list[Path] = []
        self._next = 0

    @property
    def name(self) -> str:
        return str(self._folder)

    def open(self) -> None:
        try:
            self._files = sorted(
                path for path in self._folder.iterdir() if path.suffix.lower() in IMAGE_SUFFIXES and path.is_file()
            )
        except OSError as error:
            raise StreamFailed(f"{self._folder}: cannot list the folder ({error.strerror or error})") from None
        self._next = 0

    def read(self) -> object | None:
        if self._next >= len(self._files):
            return None
        path = self._files[self._next]
        self._next += 1
        try:
            return load_image(path)
        except ImageError as error:
            return BadFrame(str(error))

    def close(self) -> None:
        self._files = []
