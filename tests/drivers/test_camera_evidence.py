"""The camera keeps the evidence of every card it reports: the crop (PNG) and, beside it, a JSON of the frame's size
and boxes; the report carries the SHA-256 of both, and no file of evidence is ever overwritten (a source restarted
numbers its reports from 1 again).

The report is built from a sighting here as `CameraSource.reports` builds it once the stability rule decides, so
that these tests hold whatever recognizer finds the cards (the recognizer has tests of its own in tests/camera).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from drivers.camera.source import CameraSource, _Evidence
from studio.clock import ManualClock
from studio.domain.reads import DeviceReport, ReportKind

START = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
QUAD = np.array([[500, 200], [700, 200], [700, 480], [500, 480]], dtype=np.float32)  # a card upright in the frame
BOXES = ({"code": "QH", "confidence": 0.97, "box": [500, 200, 200, 280], "zone": "player"},
         {"code": "9S", "confidence": 0.91, "box": [800, 200, 200, 280], "zone": "banker"})  # fmt: skip


def frame() -> np.ndarray:
    image = np.full((720, 1280, 3), (40, 110, 30), np.uint8)  # felt
    image[200:480, 500:700] = 250  # the card
    image[220:260, 515:545] = (20, 20, 200)  # its index
    return image


def report(source: CameraSource, confirmed: bool = True, read_now: bool = True) -> DeviceReport:
    evidence = _Evidence(frame(), QUAD, (500, 200, 200, 280), BOXES, read_now)
    code = "QH" if confirmed else "Q?"
    return asyncio.run(source._report(confirmed, code, 0.97 if confirmed else 0.5, "", evidence))


def test_a_report_carries_the_hashes_of_its_crop_and_boxes(tmp_path: Path) -> None:
    source = CameraSource("cam-1", tmp_path / "frames", evidence_dir=tmp_path / "evidence", clock=ManualClock(START))
    assert source.evidence_dir == tmp_path / "evidence" / "cam-1"
    for confirmed in (True, False):  # a card and a misread alike
        read = report(source, confirmed)
        assert read.kind is (ReportKind.CARD if confirmed else ReportKind.MISREAD) and read.raw is not None
        crop = Path(read.raw)
        assert crop.parent == source.evidence_dir and crop.suffix == ".png"
        assert crop.read_bytes().startswith(b"\x89PNG")
        assert read.evidence_sha256 == hashlib.sha256(crop.read_bytes()).hexdigest()
        sidecar = crop.with_suffix(".json")
        assert read.evidence_boxes_sha256 == hashlib.sha256(sidecar.read_bytes()).hexdigest()
        assert json.loads(sidecar.read_text()) == {
            "source": "cam-1", "device_seq": read.device_seq, "code": "QH" if confirmed else "Q?",
            "crop": crop.name, "crop_sha256": read.evidence_sha256,
            "frame": {"width": 1280, "height": 720}, "box": [500, 200, 200, 280], "boxes": list(BOXES),
            "boxes_from_this_frame": True,
        }  # fmt: skip


def test_the_boxes_say_when_they_were_read_in_an_earlier_frame_the_report_s_frame_matched(tmp_path: Path) -> None:
    source = CameraSource("cam-1", tmp_path / "frames", evidence_dir=tmp_path / "evidence", clock=ManualClock(START))
    read = report(source, read_now=False)
    assert read.raw is not None
    assert json.loads(Path(read.raw).with_suffix(".json").read_text())["boxes_from_this_frame"] is False


def test_no_evidence_is_ever_overwritten(tmp_path: Path) -> None:
    """The same camera started again (at the same instant, even) numbers its reports from 1 again."""
    first = report(CameraSource("cam-1", tmp_path, evidence_dir=tmp_path / "e", clock=ManualClock(START)))
    assert first.raw is not None
    kept = Path(first.raw).read_bytes(), Path(first.raw).with_suffix(".json").read_bytes()
    again = report(CameraSource("cam-1", tmp_path, evidence_dir=tmp_path / "e", clock=ManualClock(START)))
    assert again.device_seq == first.device_seq == 1 and again.raw is not None and again.raw != first.raw
    assert (Path(first.raw).read_bytes(), Path(first.raw).with_suffix(".json").read_bytes()) == kept
    assert again.evidence_sha256 == hashlib.sha256(Path(again.raw).read_bytes()).hexdigest()
    assert len(list((tmp_path / "e" / "cam-1").iterdir())) == 4


def test_a_crop_that_cannot_be_written_leaves_a_report_without_evidence(tmp_path: Path) -> None:
    (tmp_path / "e").write_text("a file where the evidence folder should be")
    read = report(CameraSource("cam-1", tmp_path, evidence_dir=tmp_path / "e", clock=ManualClock(START)))
    assert read.kind is ReportKind.CARD and read.card is not None and read.card.code == "QH"
    assert read.raw is None and read.evidence_sha256 is None and read.evidence_boxes_sha256 is None
    assert "crop not saved" in read.detail
