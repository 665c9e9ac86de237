"""bench/reader_losses.py: where the studio renders' cards are lost, scored as the benchmark scores them."""

from __future__ import annotations

import numpy as np
import pytest

from bench.camera_bench import reader_studio
from bench.reader_losses import INDEX_CENTRE, LOSSES, OUTCOMES, loss, losses, printed_indices
from drivers.camera.indices import Proposal
from drivers.camera.reader import IndexReader
from tests.camera.conftest import REAL_DATA
from tests.camera.scenes import Card, card_images


def _card(x: float, y: float, width: float = 100.0) -> Card:
    """An upright card with its top-left corner at (x, y), clockwise from there."""
    height = width * 88 / 63
    corners = [[x, y], [x + width, y], [x + width, y + height], [x, y + height]]
    return Card("AS", np.array(corners, dtype=np.float32))


def test_the_printed_indices_lie_in_the_top_left_and_bottom_right_corners() -> None:
    card = _card(0.0, 0.0)
    height = 100.0 * 88 / 63
    top, bottom = printed_indices(card)
    assert (top.x, top.y) == pytest.approx((INDEX_CENTRE[0] * 100, INDEX_CENTRE[1] * height))
    assert (bottom.x, bottom.y) == pytest.approx((100 - INDEX_CENTRE[0] * 100, height - INDEX_CENTRE[1] * height))
    assert top.side == pytest.approx(0.251 * height)


def test_a_lost_card_is_traced_to_its_stage() -> None:
    card = _card(100.0, 100.0)
    index = printed_indices(card)[0]
    framing = Proposal(index.x + 1, index.y, index.side * 1.1)
    elsewhere = Proposal(index.x + 60, index.y + 60, index.side)
    assert loss([card], 0, []) == "not_framed"
    assert loss([card], 0, [(elsewhere, True)]) == "not_framed"
    assert loss([card], 0, [(framing, False), (elsewhere, True)]) == "gate"
    assert loss([card], 0, [(framing, True)]) == "read_dropped"
    # a later card laid over both printed corners
    cover = Card("KD", np.array([[90, 90], [210, 90], [210, 260], [90, 260]], dtype=np.float32))
    assert loss([card, cover], 0, [(framing, True)]) == "covered"
    assert loss([cover, card], 1, [(framing, True)]) == "read_dropped"  # the card lies over the other one


def test_the_losses_add_up_and_read_right_is_the_benchmarks() -> None:
    cards = card_images(REAL_DATA, "train/cam_image")
    if not cards:
        pytest.fail(f"the real card photographs are missing under {REAL_DATA}")
    reader = IndexReader()
    result = losses(reader, cards, (1280, 720), 3)
    assert result["cards"] == 18
    assert sum(result["outcomes"][key] for key in OUTCOMES) + sum(result["not_found"][key] for key in LOSSES) == 18
    benchmark = reader_studio(reader, cards, (1280, 720), 3, 5000)
    assert result["read_right"] == benchmark["read_right"]
    assert result["outcomes"]["confident_wrong"] == benchmark["confident_wrong"]
    not_found = benchmark["errors"]["not_found"]
    assert sum(result["not_found"].values()) == not_found
    # by rank: every card counted once, under its own rank, with the same outcomes and losses as in all
    by_rank = result["by_rank"]
    assert set(by_rank) <= {code[:-1] for code, _ in cards}
    assert sum(sum(counts.values()) for counts in by_rank.values()) == 18
    for key in OUTCOMES:
        assert sum(counts.get(key, 0) for counts in by_rank.values()) == result["outcomes"][key]
    for key in LOSSES:
        assert sum(counts.get(f"not_found:{key}", 0) for counts in by_rank.values()) == result["not_found"][key]
