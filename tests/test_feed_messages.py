"""The feed's table-state messages from logged records, old and new (records written before a field existed still
give a message), the chat notice of each, and the publication frontier around a suspension."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studio.domain import events as e
from studio.domain.events import encode
from studio.domain.feed import (
    RESOLVES,
    SUSPENDS,
    TABLE_NOTICES,
    UNDER_INVESTIGATION,
    PublicationFrontier,
    chat_notice,
    feed_message,
)
from studio.domain.records import GENESIS_HASH, Record

AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def record(kind: str, data: dict[str, Any], seq: int = 7) -> Record:
    return Record("T1", seq, AT, "pit_boss:bob", kind, data, None, GENESIS_HASH, "h" * 64)


def message_of(event: e.Event) -> dict[str, Any]:
    kind, data, _raw = encode(event)
    message = feed_message(record(kind, data))
    assert message is not None
    return message


def test_every_suspension_reason_has_a_category_and_the_same_message_for_players() -> None:
    for reason in e.SuspensionReason:
        message = message_of(e.TableSuspended(reason.value, "staff detail: QH from shoe-1", None, "G-1"))
        assert message["reason"] in {"procedure", "card_reading", "equipment"}
        assert message["message"] == UNDER_INVESTIGATION and message["game_id"] == "G-1"
        assert "QH" not in str(message) and "shoe-1" not in str(message)


def test_records_written_before_the_new_fields_still_give_their_message() -> None:
    old_suspension = feed_message(
        record(
            "TableSuspended",
            {
                "reason": "no_such_reason",
                "detail": "x",
                "card": None,
                "source": None,
                "device_seq": None,
                "confidence": None,
            },
        )
    )
    assert old_suspension is not None
    assert (old_suspension["game_id"], old_suspension["reason"]) == (None, "other")
    ended = feed_message(record("ShoeEnded", {"shoe": 3, "rounds": 70, "voids": 1}))
    assert ended is not None and (ended["shoe"], ended["reason"]) == (3, "cut_card")
    started = feed_message(record("CutCardPlaced", {"shoe": 3, "cards_in_front": 364}))
    assert started is not None and (started["decks"], started["cut_position"]) == (None, 364)
    changed = feed_message(record("DealerChanged", {"dealer": "dealer:alice"}))
    assert changed is not None and changed["dealer"] is None  # never the account name
    corrected = feed_message(record("CardCorrected", {"round": 1, "position": 2, "original": "2S", "corrected": "3S",
                                                      "reason": "r", "by": "pit_boss:bob"}))  # fmt: skip
    assert corrected is not None and corrected["game_id"] is None and "by" not in corrected


def test_a_shoe_ended_by_the_casino_says_so() -> None:
    ended = feed_message(record("ShoeEnded", {"shoe": 3, "rounds": 20, "voids": 0, "reason": "early_shuffle"}))
    assert ended is not None and ended["reason"] == "early_shuffle"
    assert chat_notice(ended) == "The casino is reshuffling: a new shoe follows."


@pytest.mark.parametrize(
    ("event", "notice"),
    [
        (e.TableSuspended("card_not_due", "d"), UNDER_INVESTIGATION),
        (e.TableResumed(e.Resumption.CONTINUED), "The problem is resolved: play continues."),
        (e.TableResumed(e.Resumption.VOIDED), "The round was voided: every stake is refunded."),
        (e.CutCardPlaced(4, 364, 8), "A new shoe (shoe 4) has started."),
        (e.CutCardAppeared("shoe-1", 12), "The cut card is out: round 12 is the last of this shoe."),
        (e.TableClosed("staff reason", "pit_boss:bob", "ready"), "The table is closed for now."),
        (e.TableOpened("pit_boss:bob"), "The table is open again."),
        (e.DealerChanged("dealer:alice", "Alice"), "Alice is now dealing."),
        (e.DealerChanged("dealer:alice"), "A new dealer has taken over."),
    ],
)
def test_each_table_notice_reads_well_in_the_chat(event: e.Event, notice: str) -> None:
    message = message_of(event)
    assert message["type"] in TABLE_NOTICES
    assert chat_notice(message) == notice


def test_round_messages_are_not_chat_notices() -> None:
    assert chat_notice({"type": "card"}) is None and chat_notice({"type": "result"}) is None


KINDS = st.sampled_from(["CardDealt", "BurnRequired", SUSPENDS, *sorted(RESOLVES), "CardReadWhileSuspended"])


@given(st.lists(KINDS, max_size=40))
def test_the_frontier_lets_a_suspension_out_at_once_and_holds_what_follows_until_it_is_resolved(
    kinds: list[str],
) -> None:
    frontier = PublicationFrontier()
    suspended_at = 0
    for seq, kind in enumerate(kinds, start=1):
        before = frontier.published
        frontier.advance(seq, kind)
        if suspended_at:
            if kind in RESOLVES:
                assert frontier.published == seq  # all of it released, the decision included
                suspended_at = 0
            else:
                assert frontier.published == before == suspended_at  # held back
        elif kind == SUSPENDS:
            assert frontier.published == seq  # the suspension itself goes out at once
            suspended_at = seq
        else:
            assert frontier.published == seq


@pytest.mark.parametrize(
    ("event", "fields"),
    [
        (e.SeatTaken(3, "p1", "operator-1", "Ann", 42), {"type": "seat_taken", "seat": 3, "nickname": "Ann",
                                                          "first_round": 42}),
        (e.SeatChanged(3, 5, "p1", "Ann"), {"type": "seat_changed", "from_seat": 3, "seat": 5, "nickname": "Ann"}),
        (e.SeatLeft(5, "p1", "Ann"), {"type": "seat_left", "seat": 5, "nickname": "Ann"}),
        (e.RoundPassed(42, "G-42", 5, "p1", "Ann"), {"type": "round_passed", "round": 42, "game_id": "G-42",
                                                      "seat": 5, "nickname": "Ann"}),
        (e.PlayerSatOut(42, "G-42", 5, "p1", "Ann"), {"type": "sat_out", "round": 42, "game_id": "G-42", "seat": 5,
                                                       "nickname": "Ann"}),
    ],
)  # fmt: skip
def test_seat_messages_name_the_seat_and_the_nickname_never_the_player_or_their_game_server(
    event: e.Event, fields: dict[str, Any]
) -> None:
    message = message_of(event)
    assert message == {"table": "T1", "seq": 7, "at": AT.isoformat(), **fields}
    assert "p1" not in str(message) and "operator" not in str(message)
    assert message["type"] not in TABLE_NOTICES and chat_notice(message) is None  # the seats show it, not the chat
