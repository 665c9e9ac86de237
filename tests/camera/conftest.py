"""Shared fixtures: a deck enrolled from synthetic photos, and the real photographs with a deck enrolled from them."""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest

from drivers.camera.enroll import LabelledBox, enroll_boxes, enroll_folder, read_labels
from drivers.camera.templates import Templates
from tests.camera.photos import card_photos
from tests.camera.render import CODES, photo

REAL_DATA = card_photos()


@pytest.fixture(scope="session")
def synthetic_photos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One enrollment photo per card of a synthetic deck, named by its code."""
    folder = tmp_path_factory.mktemp("deck")
    for index, code in enumerate(CODES):
        cv2.imwrite(str(folder / f"{code}.png"), photo(code, seed=index))
    return folder


@pytest.fixture(scope="session")
def synthetic_templates(synthetic_photos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    templates = enroll_folder(synthetic_photos).templates("synthetic deck")
    return templates.save(tmp_path_factory.mktemp("templates") / "synthetic.npz")


@pytest.fixture(scope="session")
def real_labels() -> list[LabelledBox]:
    """Every labelled card of the real photographs. Missing photographs fail the tests that need them, loudly."""
    labels = REAL_DATA / "labels_rank_suit.csv"
    if not labels.is_file():
        pytest.fail(
            f"the real card photographs are missing: expected {labels} (set STUDIO_CARD_PHOTOS, or put "
            "shared/data/cards/webcam-9-to-ace next to this checkout, see DESIGN.md §7)"
        )
    return read_labels(labels)


def is_top_down(box: LabelledBox) -> bool:
    return box.image.name.startswith("cam_image")


@pytest.fixture(scope="session")
def real_split(real_labels: list[LabelledBox]) -> tuple[list[LabelledBox], list[LabelledBox]]:
    """The source's own split of the top-down webcam photos: `images/train` to enroll, `images/test` held out."""
    top_down = [box for box in real_labels if is_top_down(box)]
    train = [box for box in top_down if box.image.parent.name == "train"]
    test = [box for box in top_down if box.image.parent.name == "test"]
    assert len(train) == 95 and len(test) == 28, "the labelled top-down photos are not the expected 95 + 28 cards"
    return train, test


@pytest.fixture(scope="session")
def real_templates(real_split: tuple[list[LabelledBox], list[LabelledBox]]) -> Templates:
    return enroll_boxes(real_split[0]).templates("real webcam photos, images/train")
