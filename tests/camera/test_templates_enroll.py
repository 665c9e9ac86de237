"""Enrollment from a folder of photos, and the templates file: round trip, and every way it can be wrong."""

from __future__ import annotations

import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from drivers.camera.enroll import enroll_folder, read_labels
from drivers.camera.errors import EnrollmentError, TemplatesError
from drivers.camera.source import DEFAULT_TEMPLATES
from drivers.camera.templates import FILE_NAME, VERSION, Templates
from tests.camera.render import photo, render_card


def test_templates_survive_a_round_trip_through_a_file_and_a_folder(synthetic_templates: Path, tmp_path: Path) -> None:
    templates = Templates.load(synthetic_templates)
    in_folder = templates.save(tmp_path / "deck")
    assert in_folder == tmp_path / "deck" / FILE_NAME
    for loaded in (Templates.load(in_folder), Templates.load(tmp_path / "deck")):
        assert loaded.rank_labels == templates.rank_labels and loaded.suit_labels == templates.suit_labels
        assert np.array_equal(loaded.rank_glyphs, templates.rank_glyphs)
        assert loaded.layout == templates.layout
        assert loaded.suit_redness == pytest.approx(templates.suit_redness)
        assert loaded.description == "synthetic deck"


def test_a_missing_or_corrupt_templates_file_is_a_clear_error(synthetic_templates: Path, tmp_path: Path) -> None:
    with pytest.raises(TemplatesError, match="no such templates file"):
        Templates.load(tmp_path / "absent.npz")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"PK\x03\x04 not really a zip archive")
    with pytest.raises(TemplatesError, match="not a templates file"):
        Templates.load(garbage)
    cut = tmp_path / "cut.npz"
    cut.write_bytes(synthetic_templates.read_bytes()[:500])
    with pytest.raises(TemplatesError, match="not a templates file"):
        Templates.load(cut)
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    with pytest.raises(TemplatesError):
        Templates.load(empty)


def test_templates_of_another_version_or_shape_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.npz"
    np.savez(path, version=np.array(VERSION + 1))
    with pytest.raises(TemplatesError, match=f"version {VERSION + 1}"):
        Templates.load(path)
    np.savez(
        path,
        version=np.array(VERSION),
        rank_glyphs=np.zeros((1, 5, 5), dtype=np.uint8),
        rank_labels=np.array(["A"]),
        suit_glyphs=np.zeros((0, 24, 24), dtype=np.uint8),
        suit_labels=np.array([], dtype="<U2"),
        redness_suits=np.array([], dtype="<U2"),
        redness_values=np.array([], dtype=np.float32),
        layout=np.array([], dtype=np.float64),
        description=np.array(""),
    )
    with pytest.raises(TemplatesError, match="shape"):
        Templates.load(path)


def test_the_shipped_templates_know_the_real_decks_ranks_and_suits() -> None:
    templates = Templates.load(DEFAULT_TEMPLATES)
    assert templates.ranks == ("A", "9", "10", "J", "Q", "K")
    assert templates.suits == ("S", "H", "D", "C")
    assert templates.layout is not None
    assert DEFAULT_TEMPLATES.stat().st_size < 400_000


def test_enrolling_a_folder_skips_what_it_cannot_use_and_says_why(synthetic_photos: Path, tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    for name in ("QH.png", "10S.png", "AC.png", "KD.png", "2H.png"):
        shutil.copy(synthetic_photos / name, folder / name)
    shutil.copy(synthetic_photos / "QH.png", folder / "qh_2.png")  # lower case, a second photo of a card
    cv2.imwrite(str(folder / "TS.png"), photo("10S", seed=99))  # T for ten
    (folder / "notes.png").write_bytes(b"not a photo")
    cv2.imwrite(str(folder / "XY.png"), photo("QH"))
    cv2.imwrite(str(folder / "9C.png"), np.full((300, 300, 3), 40, dtype=np.uint8))  # no card in it
    card, _ = render_card("JS")
    cv2.imwrite(str(folder / "JS.png"), card)  # a tight crop of the card, nothing around it
    (folder / "README.txt").write_text("ignored: not an image name")
    enrollment = enroll_folder(folder)
    skipped = dict(enrollment.skipped)
    assert set(skipped) == {"notes.png", "XY.png", "9C.png"}
    assert "not a card code" in skipped["XY.png"] and "not a card code" in skipped["notes.png"]
    assert "no card found" in skipped["9C.png"]
    assert enrollment.cards == 8
    templates = enrollment.templates()
    assert templates.ranks == ("A", "2", "10", "J", "Q", "K")
    assert templates.suits == ("S", "H", "D", "C")


def test_enrolling_nothing_usable_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(EnrollmentError, match="not a folder"):
        enroll_folder(tmp_path / "absent")
    with pytest.raises(EnrollmentError, match="no photos"):
        enroll_folder(tmp_path)
    (tmp_path / "QH.png").write_bytes(b"garbage")
    enrollment = enroll_folder(tmp_path)
    with pytest.raises(EnrollmentError, match=r"no card could be enrolled.*QH\.png"):
        enrollment.templates()


def test_labels_files_are_checked(tmp_path: Path) -> None:
    with pytest.raises(EnrollmentError, match="no such labels file"):
        read_labels(tmp_path / "absent.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("image,code,xmin,ymin,xmax,ymax\na.jpg,QX,1,2,3,4\n")
    with pytest.raises(EnrollmentError, match="line 2"):
        read_labels(bad)
    good = tmp_path / "good.csv"
    good.write_text("image,rank,suit,code,xmin,ymin,xmax,ymax\nimages/a.jpg,Q,H,qh,10,20,110,160\n")
    (box,) = read_labels(good)
    assert box.card.code == "QH" and box.box == (10, 20, 100, 140) and box.image == tmp_path / "images" / "a.jpg"
