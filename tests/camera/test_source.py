"""`CameraSource` as a `CardSource`: frames from an image folder or a video file, the stability rule, misreads,
evidence crops, bad frames, a stream that ends or hangs, and its lifecycle. Time comes from a manual clock."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import cv2
import numpy as np
import pytest

from drivers.camera.detect import Zone
from drivers.camera.frames import StreamFailed
from drivers.camera.source import CameraSource
from drivers.camera.templates import Templates
from studio.clock import ManualClock
from studio.domain.reads import DeviceReport, ReportKind
from studio.sources import SourceDisconnected, SourceState, SourceUnavailable
from tests.camera.conftest import REAL_DATA
from tests.camera.render import Placed, degrade, felt, table

START = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)


def write_frames(folder: Path, frames: list[np.ndarray | bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for index, frame in enumerate(frames):
        path = folder / f"frame{index:03d}.png"
        if isinstance(frame, bytes):
            path.write_bytes(frame)
        else:
            cv2.imwrite(str(path), frame)
    return folder


def collect(source: CameraSource) -> tuple[list[DeviceReport], SourceDisconnected | None, list[int]]:
    """Open the source, take every report until it disconnects, close it (twice). Also: the frame count at each
    report."""

    async def scenario() -> tuple[list[DeviceReport], SourceDisconnected | None, list[int]]:
        await source.open()
        reports, at_frame, ended = [], [], None
        try:
            async for report in source.reports():
                reports.append(report)
                at_frame.append(source.frames_read)
        except SourceDisconnected as error:
            ended = error
        await source.close()
        await source.close()
        return reports, ended, at_frame

    return asyncio.run(scenario())


def still(frame: np.ndarray, count: int, seed: int = 0) -> list[np.ndarray | bytes]:
    """The same scene `count` times, each with its own sensor noise, as a camera films a card lying still."""
    rng = np.random.default_rng(seed)
    return [degrade(frame, rng, noise=2.0) for _ in range(count)]


def zone_around(card: Placed, name: str, margin: int = 12) -> Zone:
    x, y, w, h = card.box
    return Zone(name, (x - margin, y - margin, w + 2 * margin, h + 2 * margin))


def test_a_card_is_reported_once_stable_with_its_crop_and_time(synthetic_templates: Path, tmp_path: Path) -> None:
    empty = felt((1280, 720), np.random.default_rng(1))
    scene, _ = table(["QH"], seed=2)
    frames = write_frames(tmp_path / "frames", [empty, *still(scene, 5)])
    clock = ManualClock(START)
    source = CameraSource("camera-1", frames, templates=synthetic_templates, stable_frames=3,
                          evidence_dir=tmp_path / "evidence", clock=clock)  # fmt: skip
    reports, ended, at_frame = collect(source)
    assert [(r.kind, r.card.code if r.card else None) for r in reports] == [(ReportKind.CARD, "QH")]
    assert at_frame == [4]  # the empty table, then the third frame showing the card
    report = reports[0]
    assert report.source == "camera-1" and report.device_seq == 1 and report.at == START
    assert report.confidence is not None and report.confidence >= 0.8
    assert report.raw is not None
    crop = cv2.imread(report.raw)
    assert crop is not None and crop.shape == (280, 200, 3)
    assert Path(report.raw).parent == tmp_path / "evidence" / "camera-1"
    assert ended is not None and "the stream ended" in str(ended)
    assert source.health().state is SourceState.DISCONNECTED
    assert source.frames_read == 6 and source.bad_frames == 0
    # the card's first three frames are each read (stable_frames), the last two look as the third did: not read again
    assert source.frames_still == 2
    assert json.loads(Path(report.raw).with_suffix(".json").read_text())["boxes_from_this_frame"] is True


def dealt(codes: list[str], seed: int, frames_each: int = 6) -> list[np.ndarray | bytes]:
    """A hand dealt card by card: each card appears after two frames of a hand over its place and then lies still for
    `frames_each` frames, every frame with its own sensor noise."""
    scene, placed = table(codes, seed=seed)
    shown = felt((1280, 720), np.random.default_rng(seed))  # the cloth `table` laid the cards on
    rng = np.random.default_rng(seed + 1)
    frames: list[np.ndarray | bytes] = []
    for card in placed:
        x, y, w, h = card.box
        hand = shown.copy()
        hand[y : y + h // 2, x : x + w] = (120, 160, 210)
        frames += [degrade(hand, rng, noise=2.0) for _ in range(2)]
        mask = np.zeros(shown.shape[:2], dtype=np.uint8)
        cv2.fillConvexPoly(mask, card.corners.astype(np.int32), 255)
        shown[mask > 0] = scene[mask > 0]
        frames += [degrade(shown, rng, noise=2.0) for _ in range(frames_each)]
    return frames


def test_a_hand_dealt_card_by_card_is_reported_alike_whether_still_frames_are_read_or_not(
    synthetic_templates: Path, tmp_path: Path
) -> None:
    """The still table changes what reading costs, not what the camera reports: the same reports at the same frames
    with every frame read (`reread_every=1`) and with still frames given the last reading's cards."""
    codes = ["QH", "9S", "KD", "4C"]
    folder = write_frames(tmp_path / "frames", dealt(codes, seed=5))
    seen = {}
    for every in (1, 25):
        source = CameraSource("camera", folder, templates=synthetic_templates, reread_every=every,
                              evidence_dir=tmp_path / f"evidence-{every}")  # fmt: skip
        reports, _, at_frame = collect(source)
        seen[every] = [(r.kind, r.card.code if r.card else None) for r in reports], at_frame, source.frames_still
    assert seen[1][:2] == seen[25][:2]
    assert sorted(code for _, code in seen[25][0]) == sorted(codes)
    assert seen[1][2] == 0 and seen[25][2] == 4 * 3  # of each card's six still frames, the last three


def test_reread_every_one_has_the_camera_read_every_frame(synthetic_templates: Path, tmp_path: Path) -> None:
    scene, _ = table(["QH"], seed=2)
    source = CameraSource("camera", write_frames(tmp_path / "frames", still(scene, 4)), templates=synthetic_templates,
                          reread_every=1, evidence_dir=tmp_path / "evidence")  # fmt: skip
    reports, _, _ = collect(source)
    assert [r.card.code for r in reports if r.card] == ["QH"]
    assert source.frames_read == 4 and source.frames_still == 0
    raw = reports[0].raw
    assert raw is not None and json.loads(Path(raw).with_suffix(".json").read_text())["boxes_from_this_frame"] is True
    with pytest.raises(ValueError, match="reread_every must be at least 1"):
        CameraSource("camera", tmp_path, reread_every=0)


def test_cards_are_read_in_their_zones_only(real_templates: Templates, tmp_path: Path) -> None:
    """A real held-out photo of four cards (webcam-9-to-ace `images/test`), zones around two of them: only those two
    are reported, read with the deck's templates and the shipped network."""
    photo = cv2.imread(str(REAL_DATA / "images" / "test" / "cam_image45.jpg"))
    assert photo is not None
    boxes = {"AH": (150, 174, 358, 434), "9D": (562, 145, 733, 387)}  # from labels_rank_suit.csv
    zones = [Zone(name, (x0 - 12, y0 - 12, x1 - x0 + 24, y1 - y0 + 24))
             for name, (x0, y0, x1, y1) in zip(("player", "banker"), boxes.values(), strict=True)]  # fmt: skip
    templates = real_templates.save(tmp_path / "deck.npz")
    source = CameraSource("camera", write_frames(tmp_path / "f", still(photo, 5)), templates=templates, zones=zones,
                          evidence_dir=tmp_path / "e")  # fmt: skip
    reports, _, _ = collect(source)
    assert sorted(r.card.code for r in reports if r.card) == sorted(boxes)
    assert [r.device_seq for r in reports] == [1, 2]


def test_unsure_reads_are_misreads_with_the_best_guess_never_cards(synthetic_templates: Path, tmp_path: Path) -> None:
    """A smudge on the lens blurs the left of the picture: the cards there cannot be read surely and are misreads;
    the others are cards."""
    scene, placed = table(["QS", "KC", "9S", "AC", "JS", "5C"], seed=3)
    scene[:, :560] = cv2.GaussianBlur(scene[:, :560], (0, 0), 2.6)
    source = CameraSource("camera", write_frames(tmp_path / "f", [scene] * 6), templates=synthetic_templates,
                          stable_frames=3, misread_after=5, evidence_dir=tmp_path / "e")  # fmt: skip
    reports, _, _ = collect(source)
    assert len(reports) == len(placed)
    misreads = [r for r in reports if r.kind is ReportKind.MISREAD]
    cards = [r for r in reports if r.kind is ReportKind.CARD]
    assert misreads and cards
    for report in misreads:
        assert report.card is None and report.raw is not None and Path(report.raw).is_file()
        assert "best guess" in report.detail
        assert report.confidence is not None and report.confidence < 0.8
    codes = {card.code for card in placed}
    assert all(report.card is not None and report.card.code in codes for report in cards)


def test_bad_frames_are_counted_and_degrade_health_without_stopping_it(
    synthetic_templates: Path, tmp_path: Path
) -> None:
    # The drawn deck's spades are read as diamonds by the shipped network (docs/camera.md), which then overrules the
    # enrolled templates in a frame where it is sure of it; this test is about bad frames, so it deals a ten of hearts.
    scene, _ = table(["10H"], seed=8)
    bad: list[np.ndarray | bytes] = [b"", b"\x89PNG\r\n\x1a\n garbage", b"random bytes" * 50, b"\xff\xd8\xff\xe0"]
    frames = write_frames(tmp_path / "f", [*bad, *still(scene, 3)])
    source = CameraSource("camera", frames, templates=synthetic_templates, evidence_dir=tmp_path / "e")

    async def scenario() -> tuple[list[DeviceReport], SourceState, str]:
        await source.open()
        reports: list[DeviceReport] = []
        iterator = source.reports()
        reports.append(await anext(iterator))
        health = source.health()  # just after the bad run: still degraded, 4 bad of 7
        with pytest.raises(SourceDisconnected):
            await anext(iterator)
        await source.close()
        return reports, health.state, health.detail

    reports, state, detail = asyncio.run(scenario())
    assert [r.card.code for r in reports if r.card] == ["10H"]
    assert source.bad_frames == 4 and source.frames_read == 7
    assert state is SourceState.DEGRADED and "4 of the last 7 frames unusable" in detail


class FakeReader:
    """A frame reader under the test's control: frames from a list, or a read that blocks until released."""

    name = "fake camera"

    def __init__(self, frames: list[object], block: threading.Event | None = None) -> None:
        self.frames = list(frames)
        self.block = block
        self.closed = threading.Event()
        self.threads: set[str] = set()

    def open(self) -> None:
        self.threads.add(threading.current_thread().name)

    def read(self) -> object | None:
        self.threads.add(threading.current_thread().name)
        if not self.frames:
            if self.block is not None:
                self.block.wait(10)
            return None
        frame = self.frames.pop(0)
        if isinstance(frame, Exception):
            raise frame
        return frame

    def close(self) -> None:
        self.closed.set()


def test_frames_of_any_kind_never_crash_it(synthetic_templates: Path, tmp_path: Path) -> None:
    huge = np.lib.stride_tricks.as_strided(np.zeros(3, dtype=np.uint8), shape=(9000, 9000, 3), strides=(0, 0, 1))
    weird: list[object] = [
        0,
        b"bytes",
        np.zeros((0, 0, 3), dtype=np.uint8),
        np.zeros((720, 1280, 3), dtype=np.uint16),
        np.zeros((720, 1280, 3), dtype=np.float64),
        np.zeros((1, 1), dtype=np.uint8),
        huge,
        np.zeros((720, 1280, 3), dtype=np.uint8),
    ]
    reader = FakeReader(weird)
    source = CameraSource("camera", reader, templates=synthetic_templates, evidence_dir=tmp_path / "e")
    reports, ended, _ = collect(source)
    assert reports == [] and ended is not None
    assert source.bad_frames == 6 and source.frames_read == 8  # all but the 1x1 and the black frame


def test_a_failing_or_silent_stream_disconnects_and_blocking_work_stays_off_the_loop(
    synthetic_templates: Path, tmp_path: Path
) -> None:
    failing = FakeReader([StreamFailed("fake camera: unplugged")])
    source = CameraSource("camera", failing, templates=synthetic_templates, evidence_dir=tmp_path / "e")
    _, ended, _ = collect(source)
    assert ended is not None and "unplugged" in str(ended)
    assert failing.threads and threading.main_thread().name not in failing.threads

    release = threading.Event()
    silent = FakeReader([], block=release)
    source = CameraSource("camera", silent, templates=synthetic_templates, evidence_dir=tmp_path / "e",
                          read_timeout=0.05)  # fmt: skip

    async def hang() -> None:
        await source.open()
        with pytest.raises(SourceDisconnected, match=r"no frame from fake camera within 0\.05 s"):
            await anext(source.reports())
        assert source.health().state is SourceState.DISCONNECTED
        await source.close()
        assert not silent.closed.is_set()  # the grab still blocks: the device is not released under its feet
        release.set()
        assert await asyncio.to_thread(silent.closed.wait, 5)  # released as soon as the grab returned

    asyncio.run(hang())


def test_lifecycle_and_open_errors(synthetic_templates: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        never_opened = CameraSource("camera", tmp_path, templates=synthetic_templates)
        await never_opened.close()
        assert never_opened.health().state is SourceState.DISCONNECTED
        with pytest.raises(SourceDisconnected, match="not open"):
            await anext(never_opened.reports())
        with pytest.raises(SourceUnavailable, match="no such templates file"):
            await CameraSource("camera", tmp_path, templates=tmp_path / "absent.npz").open()
        with pytest.raises(SourceUnavailable, match="no such video file"):
            await CameraSource("camera", tmp_path / "absent.mp4", templates=synthetic_templates).open()
        with pytest.raises(SourceUnavailable, match="cannot open"):
            await CameraSource("camera", "rtsp://127.0.0.1:1/none", templates=synthetic_templates).open()
        source = CameraSource("camera", tmp_path, templates=synthetic_templates)
        await source.open()
        await source.open()  # idempotent
        assert source.health().state is SourceState.CONNECTED
        await source.close()
        await source.close()
        assert source.health().state is SourceState.DISCONNECTED

    asyncio.run(scenario())


def test_a_video_file_is_read_to_its_end(synthetic_templates: Path, tmp_path: Path) -> None:
    scene, _ = table(["JD"], seed=9, size=(640, 480), card_width=(140, 150))
    video = tmp_path / "deal.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*"MJPG"), 10, (640, 480))
    assert writer.isOpened()
    for frame in still(scene, 5):
        assert isinstance(frame, np.ndarray)
        writer.write(frame)
    writer.release()
    source = CameraSource("camera", str(video), templates=synthetic_templates, evidence_dir=tmp_path / "e")
    reports, ended, _ = collect(source)
    assert [r.card.code for r in reports if r.card] == ["JD"]
    assert ended is not None and source.frames_read == 5
