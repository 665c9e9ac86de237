"""Camera evidence in Chromium: the pit boss sees the crop of the camera read that suspended a table, beside the
read, verified against the log; surveillance sees a thumbnail and "hash verified" for each camera read of the round,
and "ALTERED" for a crop changed after it was logged. Both pages are looked at in 1280×720 and 1920×1080.

The studio's log is written before the server starts, by the table service itself, from camera reports built as the
camera builds them (`CameraSource` writes each crop and its boxes from a rendered frame): a round dealt by the
camera, then a card it could not read, which suspends the table. `studio run` then resumes the table from that log.
The table's card source is the camera's in-memory twin, with the camera's evidence folder.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from drivers.camera.source import CameraSource, _Evidence
from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain.reads import DeviceReport
from studio.settings import load_table_config
from studio.store_sql import SqlEventStore
from studio.supervisor import command_for
from studio.table_service import TableService
from tests.browser.conftest import running_studio
from tests.browser.support import StudioServer, assert_no_js_errors, screenshot, sign_in
from tests.camera.render import table as render_table
from tests.server.conftest import T0

TABLE = """\
[table]
id = "T1"

[procedure]
burn_after_shuffle = 2
betting_seconds = 3
warning_seconds = 1

[[sources]]
id = "cam-1"
driver = "memory"
evidence_dir = "{evidence}"
"""
VIEWPORTS = ((1280, 720), (1920, 1080))


@dataclass
class EvidenceStudio:
    server: StudioServer
    game_id: str  # the round the camera dealt, suspended on its last read
    altered_seq: int  # the seq of a dealt card whose crop was changed after it was logged


def camera_reports(evidence: Path, codes: list[str | None]) -> list[DeviceReport]:
    """What the camera reports for these cards (None: a card it cannot read), with the crops it keeps."""
    source = CameraSource("cam-1", evidence / "frames", evidence_dir=evidence, clock=ManualClock(T0))
    scene, placed = render_table([code or "7C" for code in codes], seed=4, any_angle=False)
    boxes = tuple({"code": card.code, "confidence": 0.97, "box": list(card.box), "zone": None} for card in placed)
    reports = []
    for code, card in zip(codes, placed, strict=True):
        shown = code or "7?"
        found = _Evidence(scene, card.corners, card.box, boxes)
        reports.append(asyncio.run(source._report(code is not None, shown, 0.97 if code else 0.42, "", found)))
    return reports


@pytest.fixture(scope="module")
def evidence_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvidenceStudio]:
    folder = tmp_path_factory.mktemp("evidence-studio")
    evidence = folder / "evidence"
    table_file = folder / "t1.toml"
    table_file.write_text(TABLE.format(evidence=evidence))
    game_id, altered_seq = seed_log(folder, table_file, evidence)
    with running_studio(folder, table_file) as server:
        yield EvidenceStudio(server, game_id, altered_seq)


def seed_log(folder: Path, table_file: Path, evidence: Path) -> tuple[str, int]:
    """The log the server resumes: shuffle, cut, two camera burns, a round the camera deals until it cannot read a
    card (the table suspends with that read). One dealt card's crop is then changed on disk. (game id, its seq)."""
    config = load_table_config(table_file)
    store = SqlEventStore(f"sqlite:///{folder / 'studio.db'}")
    clock = ManualClock(T0)
    service = TableService("T1", store, clock, config.procedure)
    reports = iter(camera_reports(evidence, ["2D", "3D", "9H", "2S", "KD", None]))

    def camera() -> list[Any]:
        command = command_for(next(reports))
        assert command is not None
        return service.handle(command)

    service.handle(c.ConfirmShuffle("dealer:dealer"))
    service.handle(c.PlaceCutCard("dealer:dealer"))
    camera()
    camera()
    opened = service.handle(c.OpenBetting("dealer:dealer"))
    game_id = str(opened[0].record.data["game_id"])
    clock.advance(5)
    service.handle(c.CloseBetting("dealer:dealer"))
    dealt = [camera()[0].record for _ in range(3)]
    suspended = camera()[0].record
    assert suspended.kind == "TableSuspended" and suspended.data["evidence_sha256"]
    store.close()
    altered = Path(str(dealt[1].raw))
    altered.write_bytes(altered.read_bytes()[:-12] + b"\0" * 12)  # someone changes the crop after it was logged
    return game_id, dealt[1].seq


def resize(page: Page, width: int, height: int) -> None:
    page.set_viewport_size({"width": width, "height": height})


def test_the_pit_boss_sees_the_crop_beside_the_suspended_read(
    evidence_studio: EvidenceStudio, new_context: Any
) -> None:
    boss = sign_in(new_context(), evidence_studio.server, "pitboss", "pitboss", "/static/pitboss.html")
    card = boss.locator('[data-testid="suspended-tables"] [data-testid="table-card"][data-table="T1"]')
    expect(card).to_be_visible()
    expect(card.get_by_test_id("suspension-reason")).to_contain_text("unreadable card")
    figure = card.get_by_test_id("evidence")
    expect(figure).to_have_attribute("data-state", "verified")
    expect(figure.get_by_test_id("evidence-status")).to_have_text("camera crop · hash verified")
    crop = figure.get_by_test_id("evidence-crop")
    assert crop.evaluate("(image) => image.naturalWidth > 0 && image.naturalHeight > image.naturalWidth")
    for width, height in VIEWPORTS:
        resize(boss, width, height)
        expect(figure).to_be_in_viewport()
        read_box, crop_box = card.get_by_test_id("raw").bounding_box(), crop.bounding_box()
        assert read_box is not None and crop_box is not None
        assert crop_box["x"] >= read_box["x"] + read_box["width"], "the crop stands beside the read"
        screenshot(boss, f"e01-pit-boss-evidence-{width}x{height}")
    assert_no_js_errors(boss)


def test_surveillance_sees_each_camera_read_verified_or_altered(
    evidence_studio: EvidenceStudio, new_context: Any
) -> None:
    game = f"/static/surveillance.html?game={evidence_studio.game_id}"
    page = sign_in(new_context(), evidence_studio.server, "surveillance", "surveillance", game)
    timeline = page.get_by_test_id("timeline")
    expect(timeline).to_be_visible()
    reads = timeline.locator('[data-testid="event"]:has([data-testid="evidence"])')
    expect(reads).to_have_count(4)  # three cards dealt, the unreadable one
    altered = timeline.locator(f'[data-testid="event"][data-seq="{evidence_studio.altered_seq}"]')
    expect(altered.get_by_test_id("evidence")).to_have_attribute("data-state", "altered")
    expect(altered.get_by_test_id("evidence-status")).to_have_text("ALTERED")
    detail = altered.get_by_test_id("evidence-detail")
    expect(detail).to_contain_text("the crop on disk is not the one logged")
    expect(detail).to_have_attribute("title", re.compile(r"was altered: its SHA-256 is [0-9a-f]{64}, the log recorded"))
    expect(altered.get_by_test_id("evidence-thumb")).to_have_count(0)
    verified = timeline.locator('[data-testid="evidence"][data-state="verified"]')
    expect(verified).to_have_count(3)
    for index in range(3):
        expect(verified.nth(index).get_by_test_id("evidence-status")).to_have_text("hash verified")
        thumb = verified.nth(index).get_by_test_id("evidence-thumb")
        expect(thumb).to_be_visible()
        page.wait_for_function("(image) => image.complete && image.naturalWidth > 0", arg=thumb.element_handle())
    for width, height in VIEWPORTS:
        resize(page, width, height)
        expect(timeline).to_be_visible()
        screenshot(page, f"e02-surveillance-evidence-{width}x{height}")
    assert_no_js_errors(page)
