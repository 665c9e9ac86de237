"""The synthetic training scenes (drivers/camera/training/compose.py): their index labels follow the pixels."""

from __future__ import annotations

import numpy as np

from drivers.camera.training.compose import Piece, scene


def test_labelled_indices_lie_where_the_pieces_put_them() -> None:
    """A piece with a marked spot at each labelled index: after the turn, the scale, the overlap and the camera's
    perspective, every label of the scene still lies on a marked spot (to within a pixel or two of blur)."""
    image = np.full((200, 140, 3), 235, dtype=np.uint8)
    truths = []
    for x, y in ((20, 30), (120, 170), (70, 100)):
        image[y - 6 : y + 7, x - 6 : x + 7] = (0, 0, 255)
        truths.append((0, float(x), float(y), 30.0))
    piece = Piece(image, tuple(truths))
    labelled = 0
    for seed in range(8):
        frame, found = scene([piece], np.random.default_rng(seed))
        for _, square in found:
            labelled += 1
            b, g, r = frame[round(square.y), round(square.x)].astype(int)
            assert r - max(g, b) > 60, (seed, square)
    assert labelled >= 10
