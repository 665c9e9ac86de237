"""A round's cards (`studio.domain.procedure.Round`): `with_card`, which the table runs for every card it deals, checks
the card's side and gives what `with_dealt`'s whole check gives; the game number keeps its form."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.domain.cards import ALL_CARDS, Card
from studio.domain.errors import InvalidDeal
from studio.domain.procedure import Round, game_id
from studio.domain.rules import Side

OPENED = datetime(2026, 3, 14, 15, 9, 26, tzinfo=UTC)


def new_round() -> Round:
    return Round(4, "T7-20260314-150926-0004", OPENED, OPENED + timedelta(seconds=15))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(ALL_CARDS), min_size=6, max_size=6))
def test_with_card_gives_what_the_whole_check_gives(six: list[Card]) -> None:
    current = new_round()
    for card in six:
        side = current.next_side
        if side is None:
            break
        after = current.with_card(side, card)
        assert after == current.with_dealt((*current.dealt, (side, card)))
        assert current.with_card(side, card) is after  # asked again (evolve after decide): the same answer
        current = after
    assert current.next_side is None


def test_with_card_to_the_side_not_due_raises_and_a_complete_deal_takes_none() -> None:
    current = new_round().with_card(Side.PLAYER, Card.parse("9S"))
    with pytest.raises(InvalidDeal, match="card 2 went to the player; the rules give it to the banker"):
        current.with_card(Side.PLAYER, Card.parse("KH"))
    for side, code in ((Side.BANKER, "2H"), (Side.PLAYER, "KD"), (Side.BANKER, "3C")):  # Player 9: a natural
        current = current.with_card(side, Card.parse(code))
    assert current.next_side is None
    with pytest.raises(InvalidDeal, match="the rules give it to nobody: the deal is complete"):
        current.with_card(Side.BANKER, Card.parse("4C"))


def test_the_same_cards_on_another_round_object_give_an_equal_round() -> None:
    first, second = new_round(), new_round()
    assert first == second and first is not second
    after_first = first.with_card(Side.PLAYER, Card.parse("QH"))
    after_second = second.with_card(Side.PLAYER, Card.parse("QH"))
    assert after_second == after_first and after_second is not after_first


@pytest.mark.parametrize("opened", [OPENED, datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                                    datetime(2030, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                                    datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC)])  # fmt: skip
def test_game_id_is_table_utc_start_and_round_as_strftime_writes_them(opened: datetime) -> None:
    assert game_id("T7", 12, opened) == f"T7-{opened:%Y%m%d-%H%M%S}-0012"
    assert game_id("T7", 12345, opened).endswith("-12345")
