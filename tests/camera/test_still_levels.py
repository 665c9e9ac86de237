"""bench/still_levels.py: both sides of the still table's level, on a held-out webcam scene."""

from __future__ import annotations

import numpy as np

from bench.still_levels import CAMERAS, change, levels
from drivers.camera.still import CHANGED
from drivers.camera.training import split
from drivers.camera.training.dataset import labels, load


def test_a_scene_s_noise_stays_at_or_below_the_level_and_its_swapped_indices_above_it() -> None:
    path = sorted(path for path in split.read()["test"] if path.name.startswith("WIN_"))[0]
    image = load(path)
    found = levels([(image, labels(path, image.shape[1], image.shape[0]))], np.random.default_rng(3))
    noise = found["noise_largest_cell_change"]
    assert list(noise) == [f"sigma {sigma:g}, quality {quality}" for sigma, quality in CAMERAS]
    assert noise["sigma 2, quality 90"] <= noise["sigma 8, quality 60"]
    assert noise["sigma 4, quality 80"] <= CHANGED  # a studio camera's still frames are not read again
    swapped = found["index_swapped"]
    assert swapped["swaps"] >= 5 and swapped["not_seen_20px_or_more"] == 0
    assert min(swapped["smallest_changes"]) > CHANGED
    assert change(image, image) == 0 and change(image, 255 - image) > 100
