"""Deck designs no training uses (drivers/camera/training/unseen_designs.py): each package fetched once and checked by
SHA-256, each of its 52 cards found by file name. The tarballs here are made in the test and fetched from a file URL
(the registry is not reached; rendering needs `rsvg-convert`, installed for training only)."""

from __future__ import annotations

import hashlib
import io
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from drivers.camera.training.dataset import CODES
from drivers.camera.training.unseen_designs import DESIGNS, Design, card_files, tarball


def package(path: Path, design: Design, leave_out: str = "") -> bytes:
    """A tarball laid out as `design`'s package, each card's file holding its code; `leave_out` missing."""
    with tarfile.open(path, "w:gz") as archive:
        for code in CODES:
            if code != leave_out:
                data = code.encode()
                member = tarfile.TarInfo(f"{design.folder}/{design.file_name(code)}")
                member.size = len(data)
                archive.addfile(member, io.BytesIO(data))
    return path.read_bytes()


def test_the_registry_urls_are_npms_own_for_scoped_packages() -> None:
    assert DESIGNS["kennard"].url == (
        "https://registry.npmjs.org/@heruka_urgyen/react-playing-cards/-/react-playing-cards-0.5.0.tgz"
    )
    assert DESIGNS["aguilar"].url == (
        "https://registry.npmjs.org/@younestouati/playing-cards-standard-deck/-/playing-cards-standard-deck-3.0.0.tgz"
    )


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_every_card_has_a_file_of_its_own(name: str) -> None:
    files = {DESIGNS[name].file_name(code) for code in CODES}
    assert len(files) == 52


def test_the_file_names_are_the_packages() -> None:
    assert [DESIGNS["kennard"].file_name(code) for code in ("10H", "AS", "KC", "2D")] == [
        "TH.svg", "AS.svg", "KC.svg", "2D.svg"]  # fmt: skip
    assert [DESIGNS["aguilar"].file_name(code) for code in ("10H", "AS", "KC", "JD", "QS")] == [
        "10h.svg", "1s.svg", "13c.svg", "11d.svg", "12s.svg"]  # fmt: skip


def test_a_tarball_is_fetched_once_and_its_cards_read(tmp_path: Path) -> None:
    source = tmp_path / "source.tgz"
    data = package(source, DESIGNS["aguilar"])
    design = replace(DESIGNS["aguilar"], sha256=hashlib.sha256(data).hexdigest())
    cache = tmp_path / "cache"
    path = tarball(design, cache, source.as_uri())
    assert path.read_bytes() == data
    source.unlink()  # cached: not fetched again
    assert tarball(design, cache, source.as_uri()) == path
    files = card_files(design, path)
    assert sorted(files) == sorted(CODES) and files["10H"] == b"10H"


def test_a_tarball_whose_hash_differs_is_refused_and_not_kept(tmp_path: Path) -> None:
    source = tmp_path / "source.tgz"
    package(source, DESIGNS["kennard"])
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match="SHA-256 differs"):
        tarball(DESIGNS["kennard"], cache, source.as_uri())
    assert not any(cache.iterdir())


def test_a_cached_tarball_changed_since_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "source.tgz"
    data = package(source, DESIGNS["kennard"])
    design = replace(DESIGNS["kennard"], sha256=hashlib.sha256(data).hexdigest())
    path = tarball(design, tmp_path / "cache", source.as_uri())
    path.write_bytes(data + b"\0")
    with pytest.raises(ValueError, match="delete it to fetch it again"):
        tarball(design, tmp_path / "cache", source.as_uri())


def test_a_card_missing_from_the_package_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "source.tgz"
    package(path, DESIGNS["kennard"], leave_out="QH")
    with pytest.raises(ValueError, match=r"QH\.svg for QH"):
        card_files(DESIGNS["kennard"], path)
