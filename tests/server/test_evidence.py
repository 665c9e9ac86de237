"""Camera evidence over HTTP: the crop of a logged camera read (and the frame's boxes beside it) is served to the pit
boss, surveillance and admin only after its SHA-256 matches the one logged with the read; an altered file is a 409,
a missing one a 404, a logged path outside the camera's evidence folder a 403; nobody is 401, a dealer or a game
server 403. The pit boss's table view links the crop of the read that suspended the table; surveillance's timeline
says of each camera read whether its crop is verified.

The table reads a memory source standing for a camera (`evidence_dir` set); reports go through the supervisor's
`command_for` on the event loop, as a camera's would.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dealer_ui import evidence
from dealer_ui.app import create_app
from dealer_ui.runtime import Studio, StudioSettings
from drivers.camera.source import evidence_json
from studio.clock import ManualClock
from studio.domain.cards import Card
from studio.domain.reads import DeviceReport, ReportKind
from studio.domain.roles import Role
from studio.supervisor import command_for
from tests.server.conftest import T0, Desk, session_for

TABLE = """\
[table]
id = "T1"

[procedure]
burn_after_shuffle = 2
burn_after_error = 1
betting_seconds = 10
allow_early_close = true

[[sources]]
id = "cam-1"
driver = "memory"
evidence_dir = "{evidence}"
"""


@pytest.fixture
def app(tmp_path: Path, clock: ManualClock) -> FastAPI:
    table = tmp_path / "t1.toml"
    table.write_text(TABLE.format(evidence=tmp_path / "evidence"))
    settings = StudioSettings(database=str(tmp_path / "s.db"), demo=True, table_files=(table,))
    return create_app(settings, clock)


class Camera:
    """Writes crops as the camera does (a PNG and its JSON) and reports them to the table."""

    def __init__(self, desk: Desk, folder: Path) -> None:
        self.desk = desk
        self.folder = folder
        self.seq = 0

    def crop(self, code: str, folder: Path | None = None) -> tuple[Path, str, str]:
        self.seq += 1
        image = np.full((140, 100, 3), 255, np.uint8)
        cv2.putText(image, code, (8, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (0, 0, 200), 2)
        png = cv2.imencode(".png", image)[1].tobytes()
        target = folder or self.folder
        target.mkdir(parents=True, exist_ok=True)
        path = target / f"{self.seq:06d}-{code}.png"
        path.write_bytes(png)
        crop_hash = hashlib.sha256(png).hexdigest()
        box = [600, 300, 100, 140]
        read = {"code": code, "confidence": 0.97, "box": box, "zone": None}
        boxes = evidence_json("cam-1", self.seq, code, path.name, crop_hash, (1280, 720), box, [read])
        path.with_suffix(".json").write_bytes(boxes)
        return path, crop_hash, hashlib.sha256(boxes).hexdigest()

    def report(self, code: str | None, folder: Path | None = None) -> tuple[int, Path]:
        """The camera reports a card (None: a misread) with its evidence; the seq of the record made, and the crop."""
        path, crop_hash, boxes_hash = self.crop(code or "unreadable", folder)
        kind = ReportKind.CARD if code else ReportKind.MISREAD
        report = DeviceReport("cam-1", kind, T0, Card.parse(code) if code else None, self.seq, 0.97 if code else 0.4,
                              str(path), "", crop_hash, boxes_hash)  # fmt: skip
        command = command_for(report)
        assert command is not None and self.desk.client.portal is not None
        logged = self.desk.client.portal.call(self.desk.studio.handle, "T1", command)
        return logged[0].record.seq, path


@pytest.fixture
def camera(desk: Desk, tmp_path: Path) -> Camera:
    return Camera(desk, tmp_path / "evidence")


@pytest.fixture
def people(studio: Studio) -> dict[str, dict[str, str]]:
    return {role.value: session_for(studio, role.value, role) for role in (Role.SURVEILLANCE, Role.ADMIN)}


def get(desk: Desk, path: str, who: dict[str, str] | None = None) -> Any:
    return desk.client.get(path, headers=who if who is not None else desk.pit_boss)


def suspended_by_a_camera_read(desk: Desk, camera: Camera) -> tuple[int, Path]:
    """A camera card comes out while betting is open: the table suspends with it."""
    desk.to_ready()
    desk.ok("open-betting")
    seq, crop = camera.report("QH")
    assert desk.phase == "suspended"
    return seq, crop


def test_the_read_logs_the_hashes_and_the_pit_boss_sees_the_crop(desk: Desk, camera: Camera) -> None:
    seq, crop = suspended_by_a_camera_read(desk, camera)
    record = next(iter(desk.studio.store.read("T1", after=seq - 1)))
    assert record.kind == "TableSuspended" and record.raw == str(crop)
    assert record.data["evidence_sha256"] == hashlib.sha256(crop.read_bytes()).hexdigest()
    boxes = crop.with_suffix(".json").read_bytes()
    assert record.data["evidence_boxes_sha256"] == hashlib.sha256(boxes).hexdigest()

    read = get(desk, "/api/tables/T1").json()["suspension"]["read"]
    assert read["evidence"] == {"seq": seq, "sha256": record.data["evidence_sha256"], "url": f"/api/evidence/T1/{seq}"}
    answer = get(desk, read["evidence"]["url"])
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"
    assert answer.content == crop.read_bytes()
    assert answer.headers["x-evidence-sha256"] == record.data["evidence_sha256"]
    frame = get(desk, f"/api/evidence/T1/{seq}/boxes")
    assert frame.status_code == 200
    assert frame.json()["frame"] == {"width": 1280, "height": 720} and frame.json()["boxes"][0]["code"] == "QH"
    assert frame.json()["crop_sha256"] == record.data["evidence_sha256"]


def test_staff_only(desk: Desk, camera: Camera, people: dict[str, dict[str, str]], game_server: dict[str, str]) -> None:
    seq, _ = suspended_by_a_camera_read(desk, camera)
    for path in (f"/api/evidence/T1/{seq}", f"/api/evidence/T1/{seq}/boxes"):
        assert get(desk, path, {}).status_code == 401
        assert get(desk, path, desk.dealer).status_code == 403
        assert get(desk, path, game_server).status_code == 403
        for who in (desk.pit_boss, people["surveillance"], people["admin"]):
            assert get(desk, path, who).status_code == 200


def test_an_altered_crop_or_boxes_file_is_refused(desk: Desk, camera: Camera) -> None:
    seq, crop = suspended_by_a_camera_read(desk, camera)
    boxes = crop.with_suffix(".json")
    boxes.write_text(json.dumps({**json.loads(boxes.read_text()), "boxes": []}))
    answer = get(desk, f"/api/evidence/T1/{seq}/boxes")
    assert answer.status_code == 409 and "was altered" in answer.json()["detail"]
    assert get(desk, f"/api/evidence/T1/{seq}").status_code == 200  # the crop itself is intact
    crop.write_bytes(crop.read_bytes() + b"\0")
    answer = get(desk, f"/api/evidence/T1/{seq}")
    assert answer.status_code == 409
    assert answer.json()["detail"].startswith(f"the camera crop of seq {seq} was altered: its SHA-256 is ")


def test_a_missing_crop_is_404_with_a_sentence(desk: Desk, camera: Camera) -> None:
    seq, crop = suspended_by_a_camera_read(desk, camera)
    crop.unlink()
    answer = get(desk, f"/api/evidence/T1/{seq}")
    assert answer.status_code == 404
    missing = f"the camera crop of seq {seq} is missing: {crop.name} is not in the evidence folder"
    assert answer.json()["detail"] == missing


def test_a_logged_path_outside_the_evidence_folder_is_refused(desk: Desk, camera: Camera, tmp_path: Path) -> None:
    desk.to_ready()
    desk.ok("open-betting")
    seq, outside = camera.report("QH", tmp_path / "elsewhere")  # a camera configured elsewhere than the table says
    answer = get(desk, f"/api/evidence/T1/{seq}")
    assert answer.status_code == 403 and "outside the evidence folders" in answer.json()["detail"]
    # a link inside the folder that leads out of it is refused too
    link = tmp_path / "evidence" / "link.png"
    link.parent.mkdir()
    link.symlink_to(outside)
    record = next(iter(desk.studio.store.read("T1", after=seq - 1)))
    with pytest.raises(evidence.EvidenceProblem) as refused:
        evidence.locate("T1", replace(record, raw=str(link)), [tmp_path / "evidence"])
    assert refused.value.status == 403
    # a read two sources agreed on names the crop in its part of the raw data
    inside = tmp_path / "evidence" / "000009-QH.png"
    agreed = replace(record, raw=f"shoe-1: 0a0b | cam-1: {inside}")
    assert evidence.locate("T1", agreed, [tmp_path / "evidence"]).crop == inside.resolve()


def test_reads_without_evidence_unknown_records_and_tables_are_404(desk: Desk) -> None:
    desk.to_ready()  # two keyed burns: reads with no evidence
    assert get(desk, "/api/evidence/T1/4").json()["detail"] == (
        "seq 4 of table T1 (CardBurned) records no camera evidence with a hash"
    )
    assert get(desk, "/api/evidence/T1/1").status_code == 404  # ShuffleConfirmed
    assert get(desk, "/api/evidence/T1/999").json()["detail"] == "table T1 has no record 999"
    assert get(desk, "/api/evidence/T9/1").status_code == 404
    assert get(desk, "/api/evidence/T1/0").status_code == 422


def test_surveillance_timeline_says_verified_or_altered_for_each_camera_read(
    desk: Desk, camera: Camera, people: dict[str, dict[str, str]]
) -> None:
    desk.to_ready()
    desk.to_dealing()
    crops = [camera.report(code)[1] for code in ("9H", "2S", "KD", "3C")]
    game_id = get(desk, "/api/tables/T1").json()["last_result"]["game_id"]
    crops[1].write_bytes(b"not the crop")
    crops[2].unlink()
    timeline = get(desk, f"/api/surveillance/rounds/{game_id}", people["surveillance"]).json()["timeline"]
    dealt = [entry for entry in timeline if entry["kind"] == "CardDealt"]
    assert [entry["evidence"]["status"] for entry in dealt] == ["verified", "altered", "missing", "verified"]
    assert dealt[0]["evidence"]["url"] == f"/api/evidence/T1/{dealt[0]['seq']}"
    assert all(entry["evidence"] is None for entry in timeline if entry["kind"] not in ("CardDealt",))


def test_the_evidence_routes_are_in_the_openapi_document(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    crop = paths["/api/evidence/{table}/{seq}"]["get"]
    assert "image/png" in crop["responses"]["200"]["content"]
    assert {"403", "404", "409"} <= set(crop["responses"])
    assert "/api/evidence/{table}/{seq}/boxes" in paths
