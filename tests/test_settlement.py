"""Settlement in integer minor units: wins, commission and its rounding, pushes, losses, refunds, payout caps."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.domain.cards import ALL_CARDS, Card, parse_cards
from studio.domain.errors import BetRejected
from studio.domain.limits import TableLimits
from studio.domain.paytable import BetType, DealFacts, PayTable, Verdict
from studio.domain.rules import Outcome, Winner, deal, next_recipient, outcome
from studio.domain.settlement import Bet, Settlement, Void, expand_shortcut, settle
from studio.settings import load_pay_table, load_table_config

CONFIG = Path(__file__).resolve().parent.parent / "config"
STANDARD = load_pay_table("standard", base=CONFIG)
NO_COMMISSION = load_pay_table("no-commission", base=CONFIG)
LIMITS = load_table_config(base=CONFIG).limits


def hand(player: str, banker: str) -> Outcome:
    return outcome(parse_cards(player), parse_cards(banker))


# Hand-worked deals.
BANKER_WINS = hand("2S 2D 6C", "3H 3C AS")  # Player 0, Banker 7 (three cards); both first pairs are pairs
PLAYER_WINS = hand("9S KD", "8H QC")  # naturals 9 over 8
TIE = hand("3S 3D", "KH 6C")  # 6-6, Player Pair
BANKER_THREE_CARD_SEVEN = BANKER_WINS


def one(bet_type: BetType, stake: int, deal_outcome: Outcome | DealFacts | Void, table: PayTable = STANDARD,
        limits: TableLimits | None = None) -> Settlement:  # fmt: skip
    settled = settle([Bet("b1", bet_type, stake)], deal_outcome, table, limits)
    assert len(settled) == 1
    return settled[0]


def _modified_standard(tmp_path: Path, replacements: dict[str, str]) -> PayTable:
    text = (CONFIG / "paytables" / "standard.toml").read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "modified.toml"
    path.write_text(text, encoding="utf-8")
    return load_pay_table(path)


# ---------------------------------------------------------------------------------------------------------------------
# Fixed amounts


def test_banker_win_pays_even_money_less_five_percent() -> None:
    result = one(BetType.BANKER, 1000, BANKER_WINS)
    assert result.verdict is Verdict.WIN
    assert result.returned == 1950
    assert result.commission == 50
    assert result.withheld == 0
    assert result.net == 950


def test_commission_is_rounded_down_by_default() -> None:
    # 5% of 1050 is 52.5: the house takes 52, not 53.
    result = one(BetType.BANKER, 1050, BANKER_WINS)
    assert result.commission == 52
    assert result.returned == 1050 + 1050 - 52


def test_commission_rounded_down_below_half() -> None:
    result = one(BetType.BANKER, 1001, BANKER_WINS)  # 50.05
    assert result.commission == 50
    assert result.returned == 1001 + 1001 - 50


@pytest.mark.parametrize(
    ("rounding", "stake", "commission"),
    [
        ("half_even", 1050, 52),  # 52.5 → 52 (even)
        ("half_even", 1150, 58),  # 57.5 → 58 (even)
        ("half_even", 1001, 50),  # 50.05 → 50
        ("half_even", 1019, 51),  # 50.95 → 51
        ("up", 1050, 53),  # 52.5 → 53
        ("up", 1001, 51),  # 50.05 → 51
        ("up", 1000, 50),  # exact: no rounding
        ("down", 1019, 50),  # 50.95 → 50
    ],
)
def test_commission_rounding_variants(tmp_path: Path, rounding: str, stake: int, commission: int) -> None:
    table = _modified_standard(tmp_path, {'commission_rounding = "down"': f'commission_rounding = "{rounding}"'})
    result = one(BetType.BANKER, stake, BANKER_WINS, table)
    assert result.commission == commission
    assert result.returned == 2 * stake - commission


@pytest.mark.parametrize(
    ("rounding", "stake", "returned"),
    [
        ("down", 1001, 1001 + 1501),  # 1.5 × 1001 = 1501.5 → 1501
        ("half_even", 1001, 1001 + 1502),  # 1501.5 → 1502 (even)
        ("half_even", 1003, 1003 + 1504),  # 1504.5 → 1504 (even)
        ("up", 1003, 1003 + 1505),  # 1504.5 → 1505
        ("up", 1000, 1000 + 1500),  # exact
    ],
)
def test_payout_rounding_variants(tmp_path: Path, rounding: str, stake: int, returned: int) -> None:
    table = _modified_standard(
        tmp_path,
        {
            'payout_rounding = "down"': f'payout_rounding = "{rounding}"',
            '[bets.player]\npays = "1"': '[bets.player]\npays = "1.5"',
        },
    )
    result = one(BetType.PLAYER, stake, PLAYER_WINS, table)
    assert result.verdict is Verdict.WIN
    assert result.returned == returned
    assert result.commission == 0


def test_player_win_pays_even_money() -> None:
    result = one(BetType.PLAYER, 1234, PLAYER_WINS)
    assert result.verdict is Verdict.WIN
    assert result.returned == 2468
    assert result.commission == 0


def test_tie_pays_eight_to_one() -> None:
    result = one(BetType.TIE, 5000, TIE)
    assert result.verdict is Verdict.WIN
    assert result.returned == 45000
    assert result.net == 40000


def test_tie_at_the_limit_is_exactly_the_cap() -> None:
    result = one(BetType.TIE, 5000, TIE, limits=LIMITS)
    assert result.returned == 45000
    assert result.withheld == 0


@pytest.mark.parametrize("bet_type", [BetType.PLAYER, BetType.BANKER])
def test_main_bets_push_on_a_tie(bet_type: BetType) -> None:
    result = one(bet_type, 2500, TIE)
    assert result.verdict is Verdict.PUSH
    assert result.returned == 2500
    assert result.commission == 0
    assert result.net == 0


@pytest.mark.parametrize(
    ("bet_type", "deal_outcome"),
    [
        (BetType.PLAYER, BANKER_WINS),
        (BetType.BANKER, PLAYER_WINS),
        (BetType.TIE, PLAYER_WINS),
        (BetType.BANKER_PAIR, TIE),
        (BetType.PERFECT_PAIR, BANKER_WINS),
        (BetType.PLAYER_BONUS, BANKER_WINS),
    ],
)
def test_losses_return_nothing(bet_type: BetType, deal_outcome: Outcome) -> None:
    result = one(bet_type, 1500, deal_outcome)
    assert result.verdict is Verdict.LOSE
    assert result.returned == 0
    assert result.commission == 0
    assert result.net == -1500


def test_side_bets_on_a_hand_worked_deal() -> None:
    # Player 2S 2D 6C, Banker 3H 3C AS: both hands start with a pair (not perfect); Banker wins 7-0 with 3 cards.
    bets = [
        Bet("pp", BetType.PLAYER_PAIR, 1000),
        Bet("bp", BetType.BANKER_PAIR, 1000),
        Bet("ep", BetType.EITHER_PAIR, 1000),
        Bet("perfect", BetType.PERFECT_PAIR, 1000),
        Bet("bb", BetType.BANKER_BONUS, 1000),
    ]
    returned = {s.bet.bet_id: s.returned for s in settle(bets, BANKER_WINS, STANDARD)}
    assert returned == {"pp": 12000, "bp": 12000, "ep": 6000, "perfect": 0, "bb": 7000}


def test_perfect_pair_both_hands() -> None:
    # Player 4H 4H natural 8, Banker QS QS 0: perfect pairs on both hands pay 200:1.
    result = one(BetType.PERFECT_PAIR, 500, hand("4H 4H", "QS QS"))
    assert result.returned == 500 * 201


def test_settle_accepts_deal_facts() -> None:
    result = one(BetType.BANKER, 1000, DealFacts.of(BANKER_WINS))
    assert result.returned == 1950


def test_no_commission_table_amounts() -> None:
    # Banker 7 with three cards pushes; a two-card Banker win pays 1:1 with no commission.
    seven = one(BetType.BANKER, 1000, BANKER_THREE_CARD_SEVEN, NO_COMMISSION)
    assert seven.verdict is Verdict.PUSH
    assert seven.returned == 1000
    # Player A+2 = 3 draws K → 3; Banker K+7 = 7 stands: a two-card 7 wins.
    banker_two_card_seven = one(BetType.BANKER, 1000, hand("AS 2D KC", "KH 7C"), NO_COMMISSION)
    assert banker_two_card_seven.verdict is Verdict.WIN
    assert banker_two_card_seven.returned == 2000
    assert banker_two_card_seven.commission == 0


def test_void_refunds_every_stake_in_order() -> None:
    bets = [Bet("a", BetType.BANKER, 1000), Bet("b", BetType.TIE, 700), Bet("c", BetType.PERFECT_PAIR, 300)]
    settled = settle(bets, Void("camera fault"), STANDARD, LIMITS)
    assert [s.bet.bet_id for s in settled] == ["a", "b", "c"]
    assert [s.verdict for s in settled] == [Verdict.REFUND] * 3
    assert [s.returned for s in settled] == [1000, 700, 300]
    assert [s.commission for s in settled] == [0, 0, 0]
    assert [s.net for s in settled] == [0, 0, 0]


def test_settle_keeps_the_order_of_bets() -> None:
    bets = [Bet("x", BetType.TIE, 100), Bet("y", BetType.PLAYER, 100), Bet("z", BetType.BANKER, 100)]
    settled = settle(bets, PLAYER_WINS, STANDARD)
    assert [(s.bet.bet_id, s.returned) for s in settled] == [("x", 0), ("y", 200), ("z", 0)]


# ---------------------------------------------------------------------------------------------------------------------
# Maximum payout


def test_banker_max_stake_win_is_exactly_the_cap() -> None:
    # 40000 × 1 = 40000, less 5% (2000) = 38000: the Banker cap of 380.00.
    result = one(BetType.BANKER, 40000, BANKER_WINS, limits=LIMITS)
    assert result.returned == 40000 + 38000
    assert result.commission == 2000
    assert result.withheld == 0


def test_higher_pay_is_capped_and_withheld_recorded(tmp_path: Path) -> None:
    table = _modified_standard(tmp_path, {'[bets.banker]\npays = "1"': '[bets.banker]\npays = "2"'})
    result = one(BetType.BANKER, 40000, BANKER_WINS, table, LIMITS)
    # gross 80000, commission 4000, win 76000, cap 38000
    assert result.verdict is Verdict.WIN
    assert result.commission == 4000
    assert result.returned == 40000 + 38000
    assert result.withheld == 38000


def test_player_cap(tmp_path: Path) -> None:
    table = _modified_standard(tmp_path, {'[bets.player]\npays = "1"': '[bets.player]\npays = "3"'})
    result = one(BetType.PLAYER, 20000, PLAYER_WINS, table, LIMITS)
    assert result.returned == 20000 + 40000
    assert result.withheld == 20000


def test_tie_cap_over_the_limit() -> None:
    # Settlement itself does not enforce the stake limit; the payout cap still applies.
    result = one(BetType.TIE, 6000, TIE, limits=LIMITS)
    assert result.returned == 6000 + 40000
    assert result.withheld == 8000


def test_cap_by_a_single_minor_unit() -> None:
    # 5001 × 8 = 40008: eight cents over the Tie cap of 400.00.
    result = one(BetType.TIE, 5001, TIE, limits=LIMITS)
    assert result.returned == 5001 + 40000
    assert result.withheld == 8
    # 40020 × 1 = 40020, less 2001 commission = 38019: nineteen cents over the Banker cap of 380.00.
    banker = one(BetType.BANKER, 40020, BANKER_WINS, limits=LIMITS)
    assert banker.commission == 2001
    assert banker.returned == 40020 + 38000
    assert banker.withheld == 19


def test_without_limits_nothing_is_capped() -> None:
    result = one(BetType.TIE, 6000, TIE)
    assert result.returned == 6000 * 9
    assert result.withheld == 0


def test_bet_type_without_max_payout_is_not_capped() -> None:
    result = one(BetType.PLAYER_PAIR, 5000, TIE, limits=LIMITS)
    assert result.returned == 5000 * 12
    assert result.withheld == 0


# ---------------------------------------------------------------------------------------------------------------------
# Shortcuts and stake validation


@pytest.mark.parametrize("name", ["two_way", "2 Way", "2 way", "Two Way", " two_way "])
def test_two_way(name: str) -> None:
    bets = expand_shortcut("c7", name, 500)
    assert bets == [Bet("c7:player_pair", BetType.PLAYER_PAIR, 500), Bet("c7:banker_pair", BetType.BANKER_PAIR, 500)]


@pytest.mark.parametrize("name", ["three_way", "3 way", "3 Way", "THREE WAY"])
def test_three_way(name: str) -> None:
    bets = expand_shortcut("c8", name, 300)
    assert [(b.bet_id, b.bet_type, b.stake) for b in bets] == [
        ("c8:player_pair", BetType.PLAYER_PAIR, 300),
        ("c8:banker_pair", BetType.BANKER_PAIR, 300),
        ("c8:tie", BetType.TIE, 300),
    ]


@pytest.mark.parametrize("name", ["four_way", "", "way", "tie", "2"])
def test_unknown_shortcut_is_rejected(name: str) -> None:
    with pytest.raises(BetRejected) as info:
        expand_shortcut("c9", name, 100)
    assert "unknown shortcut" in str(info.value)
    assert info.value.bet_type == name


@pytest.mark.parametrize("stake", [0, -100, True, False, 10.0])
def test_bad_stakes_are_rejected(stake: object) -> None:
    with pytest.raises(BetRejected, match="positive whole number"):
        settle([Bet("b", BetType.PLAYER, stake)], PLAYER_WINS, STANDARD)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------------------
# Properties over random bets and random valid deals

# The largest "X to 1" each bet can pay on the seeds' tables, written out by hand.
MAX_PAYS = {
    BetType.PLAYER: 1,
    BetType.BANKER: 1,
    BetType.TIE: 8,
    BetType.PLAYER_PAIR: 11,
    BetType.BANKER_PAIR: 11,
    BetType.EITHER_PAIR: 5,
    BetType.PERFECT_PAIR: 200,
    BetType.PLAYER_BONUS: 30,
    BetType.BANKER_BONUS: 30,
}


@st.composite
def complete_deals(draw: st.DrawFn) -> Outcome:
    six: list[Card] = draw(st.lists(st.sampled_from(ALL_CARDS), min_size=6, max_size=6))
    for count in range(4, 7):
        player, banker = deal(six[:count])
        if next_recipient(player, banker) is None:
            return outcome(player, banker)
    raise AssertionError("six cards always complete a deal")


bets_strategy = st.lists(
    st.builds(Bet, st.text(min_size=1, max_size=4), st.sampled_from(list(BetType)), st.integers(1, 10**7)),
    min_size=1,
    max_size=5,
)


@settings(max_examples=200, deadline=None)
@given(
    bets=bets_strategy,
    deal_outcome=complete_deals(),
    table=st.sampled_from([STANDARD, NO_COMMISSION]),
    limits=st.sampled_from([None, LIMITS]),
)
def test_settlement_properties(
    bets: list[Bet], deal_outcome: Outcome, table: PayTable, limits: TableLimits | None
) -> None:
    settled = settle(bets, deal_outcome, table, limits)
    assert [s.bet for s in settled] == bets
    for s in settled:
        stake = s.bet.stake
        for amount in (s.returned, s.commission, s.withheld):
            assert type(amount) is int
        assert s.commission >= 0
        assert s.withheld >= 0
        if s.verdict is Verdict.LOSE:
            assert (s.returned, s.commission, s.withheld) == (0, 0, 0)
        elif s.verdict is Verdict.PUSH:
            assert (s.returned, s.commission, s.withheld) == (stake, 0, 0)
        else:
            assert s.verdict is Verdict.WIN
            assert stake <= s.returned <= stake * (1 + MAX_PAYS[s.bet.bet_type])
            gross = s.returned - stake + s.commission + s.withheld
            assert s.commission <= gross
            assert gross <= stake * MAX_PAYS[s.bet.bet_type]
            if s.commission:
                assert table is STANDARD
                assert s.bet.bet_type is BetType.BANKER
                assert s.commission == gross // 20  # 5%, rounded down
            limit = limits.bets[s.bet.bet_type] if limits is not None else None
            if limit is not None and limit.max_payout is not None:
                assert s.returned - stake <= limit.max_payout
            else:
                assert s.withheld == 0
        # The main bets follow the winner.
        if s.bet.bet_type is BetType.PLAYER:
            expected = {Winner.PLAYER: Verdict.WIN, Winner.BANKER: Verdict.LOSE, Winner.TIE: Verdict.PUSH}
            assert s.verdict is expected[deal_outcome.winner]
        if s.bet.bet_type is BetType.TIE:
            assert (s.verdict is Verdict.WIN) is (deal_outcome.winner is Winner.TIE)


@settings(max_examples=100, deadline=None)
@given(bets=bets_strategy, table=st.sampled_from([STANDARD, NO_COMMISSION]))
def test_void_refunds_exactly_the_stakes(bets: list[Bet], table: PayTable) -> None:
    settled = settle(bets, Void("error"), table, LIMITS)
    assert [(s.verdict, s.returned, s.commission, s.withheld) for s in settled] == [
        (Verdict.REFUND, b.stake, 0, 0) for b in bets
    ]
    assert all(type(s.returned) is int for s in settled)


@pytest.mark.parametrize("spelling", ["two_way", "2 Way", "Two-Way", "2way", "TWO WAY"])
def test_every_spelling_of_two_way_covers_both_pairs(spelling: str) -> None:
    assert [bet.bet_type for bet in expand_shortcut("b1", spelling, 500)] == [BetType.PLAYER_PAIR, BetType.BANKER_PAIR]


def test_a_void_refuses_an_invalid_stake_too() -> None:
    with pytest.raises(BetRejected):
        settle([Bet("b1", BetType.PLAYER, True)], Void("misdeal"), load_pay_table("standard"))  # type: ignore[arg-type]
