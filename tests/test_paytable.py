"""Pay tables (DESIGN.md §5, payouts): how every bet resolves, and how malformed pay-table files are reported."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from studio.domain.errors import ConfigError
from studio.domain.money import Rounding
from studio.domain.paytable import BetType, DealFacts, PayTable, Resolution, Verdict
from studio.domain.rules import Winner
from studio.settings import load_pay_table

CONFIG = Path(__file__).resolve().parent.parent / "config"

WIN_1 = Resolution(Verdict.WIN, Fraction(1))
LOSE = Resolution(Verdict.LOSE)
PUSH = Resolution(Verdict.PUSH)


def win(pays: int, commission: Fraction = Fraction(0)) -> Resolution:
    return Resolution(Verdict.WIN, Fraction(pays), commission)


def facts(
    player_total: int,
    banker_total: int,
    *,
    player_natural: bool = False,
    banker_natural: bool = False,
    player_cards: int = 2,
    banker_cards: int = 2,
    player_pair: bool = False,
    banker_pair: bool = False,
    player_perfect_pair: bool = False,
    banker_perfect_pair: bool = False,
) -> DealFacts:
    return DealFacts(
        player_total=player_total,
        banker_total=banker_total,
        player_natural=player_natural,
        banker_natural=banker_natural,
        player_card_count=player_cards,
        banker_card_count=banker_cards,
        player_pair=player_pair or player_perfect_pair,
        banker_pair=banker_pair or banker_perfect_pair,
        player_perfect_pair=player_perfect_pair,
        banker_perfect_pair=banker_perfect_pair,
    )


@pytest.fixture(scope="module")
def standard() -> PayTable:
    return load_pay_table("standard", base=CONFIG)


@pytest.fixture(scope="module")
def no_commission() -> PayTable:
    return load_pay_table("no-commission", base=CONFIG)


# Hand-built deals used throughout.
PLAYER_WINS = facts(7, 5, player_cards=3, banker_cards=3)
BANKER_WINS = facts(4, 6, player_cards=3, banker_cards=3)
TIE = facts(6, 6)
NATURAL_TIE = facts(8, 8, player_natural=True, banker_natural=True)


def test_standard_table_metadata(standard: PayTable) -> None:
    assert standard.name == "standard"
    assert set(standard.terms) == set(BetType)
    assert standard.commission_rounding is Rounding.DOWN
    assert standard.payout_rounding is Rounding.DOWN


def test_a_bet_type_is_a_key_by_identity_whichever_way_it_was_named() -> None:
    """Bet types hash by identity (a group commit counts by them): a parsed name and a value find the same entry."""
    counts = {bet_type: n for n, bet_type in enumerate(BetType)}
    assert counts[BetType.parse(" Player-Pair ")] == counts[BetType("player_pair")] == counts[BetType.PLAYER_PAIR]
    assert all(hash(bet_type) == object.__hash__(bet_type) for bet_type in BetType)
    assert "player_pair" not in counts  # a member is not its value


def test_winner_of_facts() -> None:
    assert PLAYER_WINS.winner is Winner.PLAYER
    assert BANKER_WINS.winner is Winner.BANKER
    assert TIE.winner is Winner.TIE


# ---------------------------------------------------------------------------------------------------------------------
# Player, Banker, Tie


def test_player_bet(standard: PayTable) -> None:
    assert standard.resolve(BetType.PLAYER, PLAYER_WINS) == WIN_1
    assert standard.resolve(BetType.PLAYER, BANKER_WINS) == LOSE
    assert standard.resolve(BetType.PLAYER, TIE) == PUSH
    assert standard.resolve(BetType.PLAYER, NATURAL_TIE) == PUSH


def test_banker_bet_pays_even_money_less_five_percent(standard: PayTable) -> None:
    assert standard.resolve(BetType.BANKER, BANKER_WINS) == win(1, Fraction(5, 100))
    assert standard.resolve(BetType.BANKER, PLAYER_WINS) == LOSE
    assert standard.resolve(BetType.BANKER, TIE) == PUSH


def test_standard_banker_three_card_seven_still_pays(standard: PayTable) -> None:
    seven = facts(5, 7, player_cards=3, banker_cards=3)
    assert standard.resolve(BetType.BANKER, seven) == win(1, Fraction(1, 20))


def test_tie_bet(standard: PayTable) -> None:
    assert standard.resolve(BetType.TIE, TIE) == win(8)
    assert standard.resolve(BetType.TIE, NATURAL_TIE) == win(8)
    assert standard.resolve(BetType.TIE, facts(0, 0, player_cards=3, banker_cards=3)) == win(8)
    assert standard.resolve(BetType.TIE, PLAYER_WINS) == LOSE
    assert standard.resolve(BetType.TIE, BANKER_WINS) == LOSE


# ---------------------------------------------------------------------------------------------------------------------
# Pairs


def test_player_pair(standard: PayTable) -> None:
    assert standard.resolve(BetType.PLAYER_PAIR, facts(2, 5, player_pair=True)) == win(11)
    assert standard.resolve(BetType.PLAYER_PAIR, facts(2, 5, banker_pair=True)) == LOSE
    assert standard.resolve(BetType.PLAYER_PAIR, facts(2, 5)) == LOSE


def test_banker_pair(standard: PayTable) -> None:
    assert standard.resolve(BetType.BANKER_PAIR, facts(2, 5, banker_pair=True)) == win(11)
    assert standard.resolve(BetType.BANKER_PAIR, facts(2, 5, player_pair=True)) == LOSE
    assert standard.resolve(BetType.BANKER_PAIR, facts(2, 5)) == LOSE


def test_either_pair(standard: PayTable) -> None:
    assert standard.resolve(BetType.EITHER_PAIR, facts(2, 5, player_pair=True)) == win(5)
    assert standard.resolve(BetType.EITHER_PAIR, facts(2, 5, banker_pair=True)) == win(5)
    assert standard.resolve(BetType.EITHER_PAIR, facts(2, 5, player_pair=True, banker_pair=True)) == win(5)
    assert standard.resolve(BetType.EITHER_PAIR, facts(2, 5)) == LOSE


def test_perfect_pair(standard: PayTable) -> None:
    assert standard.resolve(BetType.PERFECT_PAIR, facts(2, 5, player_perfect_pair=True)) == win(25)
    assert standard.resolve(BetType.PERFECT_PAIR, facts(2, 5, banker_perfect_pair=True)) == win(25)
    both = facts(2, 6, player_perfect_pair=True, banker_perfect_pair=True)
    assert standard.resolve(BetType.PERFECT_PAIR, both) == win(200)
    # A pair of equal rank but different suits is not a perfect pair.
    assert standard.resolve(BetType.PERFECT_PAIR, facts(2, 5, player_pair=True, banker_pair=True)) == LOSE
    assert standard.resolve(BetType.PERFECT_PAIR, facts(2, 5)) == LOSE


def test_perfect_pair_on_one_hand_and_plain_pair_on_the_other(standard: PayTable) -> None:
    mixed = facts(2, 6, player_perfect_pair=True, banker_pair=True)
    assert standard.resolve(BetType.PERFECT_PAIR, mixed) == win(25)


# ---------------------------------------------------------------------------------------------------------------------
# Player and Banker Bonus


@pytest.mark.parametrize("bet", [BetType.PLAYER_BONUS, BetType.BANKER_BONUS])
def test_bonus_natural_tie_pushes_and_other_ties_lose(standard: PayTable, bet: BetType) -> None:
    assert standard.resolve(bet, NATURAL_TIE) == PUSH
    assert standard.resolve(bet, facts(9, 9, player_natural=True, banker_natural=True)) == PUSH
    assert standard.resolve(bet, TIE) == LOSE
    assert standard.resolve(bet, facts(7, 7, player_cards=3, banker_cards=3)) == LOSE


def test_player_bonus_natural_win_pays_even_money(standard: PayTable) -> None:
    # Natural 9 over natural 8: a natural win, margin 1, still 1:1.
    assert standard.resolve(BetType.PLAYER_BONUS, facts(9, 8, player_natural=True, banker_natural=True)) == WIN_1
    # Natural 8 over a two-card 0: margin 8 but a natural win pays 1:1, not 10:1.
    assert standard.resolve(BetType.PLAYER_BONUS, facts(8, 0, player_natural=True)) == WIN_1
    assert standard.resolve(BetType.BANKER_BONUS, facts(8, 0, player_natural=True)) == LOSE


def test_banker_bonus_natural_win_pays_even_money(standard: PayTable) -> None:
    assert standard.resolve(BetType.BANKER_BONUS, facts(3, 9, banker_natural=True)) == WIN_1
    assert standard.resolve(BetType.PLAYER_BONUS, facts(3, 9, banker_natural=True)) == LOSE


MARGIN_PAYS = [(9, 30), (8, 10), (7, 6), (6, 4), (5, 2), (4, 1)]


@pytest.mark.parametrize(("margin", "pays"), MARGIN_PAYS)
def test_player_bonus_non_natural_margins(standard: PayTable, margin: int, pays: int) -> None:
    deal = facts(9, 9 - margin, player_cards=3, banker_cards=3)
    assert standard.resolve(BetType.PLAYER_BONUS, deal) == win(pays)
    assert standard.resolve(BetType.BANKER_BONUS, deal) == LOSE


@pytest.mark.parametrize(("margin", "pays"), MARGIN_PAYS)
def test_banker_bonus_non_natural_margins(standard: PayTable, margin: int, pays: int) -> None:
    deal = facts(0, margin, player_cards=3, banker_cards=3)
    assert standard.resolve(BetType.BANKER_BONUS, deal) == win(pays)
    assert standard.resolve(BetType.PLAYER_BONUS, deal) == LOSE


@pytest.mark.parametrize("margin", [1, 2, 3])
def test_bonus_small_non_natural_wins_lose(standard: PayTable, margin: int) -> None:
    player_wins = facts(7, 7 - margin, player_cards=2, banker_cards=3)
    banker_wins = facts(6 - margin, 6, player_cards=3, banker_cards=2)
    assert standard.resolve(BetType.PLAYER_BONUS, player_wins) == LOSE
    assert standard.resolve(BetType.BANKER_BONUS, banker_wins) == LOSE


def test_bonus_two_card_non_natural_win_uses_margin(standard: PayTable) -> None:
    # Player stands on a two-card 7 against a three-card Banker 1: no natural, margin 6 → 4:1.
    assert standard.resolve(BetType.PLAYER_BONUS, facts(7, 1, player_cards=2, banker_cards=3)) == win(4)


# ---------------------------------------------------------------------------------------------------------------------
# No-commission variant


def test_no_commission_banker_pays_even_money(no_commission: PayTable) -> None:
    assert no_commission.name == "no-commission"
    assert no_commission.resolve(BetType.BANKER, BANKER_WINS) == WIN_1
    assert no_commission.resolve(BetType.BANKER, PLAYER_WINS) == LOSE
    assert no_commission.resolve(BetType.BANKER, TIE) == PUSH


def test_no_commission_banker_three_card_seven_pushes(no_commission: PayTable) -> None:
    seven = facts(5, 7, player_cards=3, banker_cards=3)
    assert no_commission.resolve(BetType.BANKER, seven) == PUSH
    assert no_commission.resolve(BetType.PLAYER, seven) == LOSE
    # The Banker Bonus does not care: a non-natural win by 2 loses.
    assert no_commission.resolve(BetType.BANKER_BONUS, seven) == LOSE


def test_no_commission_banker_two_card_seven_pays(no_commission: PayTable) -> None:
    seven = facts(5, 7, player_cards=3, banker_cards=2)
    assert no_commission.resolve(BetType.BANKER, seven) == WIN_1


def test_no_commission_banker_three_card_other_totals_pay(no_commission: PayTable) -> None:
    assert no_commission.resolve(BetType.BANKER, facts(5, 6, player_cards=3, banker_cards=3)) == WIN_1
    assert no_commission.resolve(BetType.BANKER, facts(5, 8, player_cards=3, banker_cards=3)) == WIN_1


def test_no_commission_player_three_card_seven_is_unaffected(no_commission: PayTable) -> None:
    seven = facts(7, 5, player_cards=3, banker_cards=3)
    assert no_commission.resolve(BetType.PLAYER, seven) == WIN_1
    assert no_commission.resolve(BetType.BANKER, seven) == LOSE


def test_no_commission_side_bets_match_standard(no_commission: PayTable, standard: PayTable) -> None:
    assert no_commission.resolve(BetType.TIE, TIE) == win(8)
    assert no_commission.resolve(BetType.PLAYER_PAIR, facts(2, 5, player_pair=True)) == win(11)
    assert no_commission.resolve(BetType.PERFECT_PAIR, facts(2, 5, banker_perfect_pair=True)) == win(25)
    for bet in (BetType.PLAYER_BONUS, BetType.BANKER_BONUS, BetType.EITHER_PAIR):
        assert no_commission.terms[bet] == standard.terms[bet]


# ---------------------------------------------------------------------------------------------------------------------
# Malformed pay tables

VALID = """\
name = "custom"
commission_rounding = "down"
payout_rounding = "down"

[bets.player]
pays = "1"

[bets.banker]
pays = "1"
commission = "0.05"

[bets.tie]
pays = "8"

[bets.player_pair]
pays = "11"

[bets.banker_pair]
pays = "11"

[bets.either_pair]
pays = "5"

[bets.perfect_pair]
one_hand = "25"
both_hands = "200"

[bets.player_bonus]
natural_win = "1"
natural_tie = "push"
margins = { 9 = "30", 8 = "10", 7 = "6", 6 = "4", 5 = "2", 4 = "1" }

[bets.banker_bonus]
natural_win = "1"
natural_tie = "push"
margins = { 9 = "30", 8 = "10", 7 = "6", 6 = "4", 5 = "2", 4 = "1" }
"""


def _write(tmp_path: Path, text: str, name: str = "custom.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _config_error(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_pay_table(path)
    message = str(info.value)
    assert str(path) in message
    assert "\n" not in message
    return message


def test_valid_custom_table_loads(tmp_path: Path) -> None:
    table = load_pay_table(_write(tmp_path, VALID))
    assert table.name == "custom"
    assert table.resolve(BetType.BANKER, BANKER_WINS) == win(1, Fraction(1, 20))


def test_table_by_name_from_a_base_folder(tmp_path: Path) -> None:
    (tmp_path / "paytables").mkdir()
    _write(tmp_path / "paytables", VALID.replace('pays = "8"', 'pays = "9"'))
    table = load_pay_table("custom", base=tmp_path)
    assert table.resolve(BetType.TIE, TIE) == win(9)


def test_name_defaults_to_file_stem(tmp_path: Path) -> None:
    table = load_pay_table(_write(tmp_path, VALID.replace('name = "custom"\n', ""), "house.toml"))
    assert table.name == "house"


def test_missing_bet_is_named(tmp_path: Path) -> None:
    text = VALID.replace('[bets.either_pair]\npays = "5"\n', "")
    message = _config_error(_write(tmp_path, text))
    assert "missing" in message
    assert "either_pair" in message


def test_unknown_bet_is_named(tmp_path: Path) -> None:
    message = _config_error(_write(tmp_path, VALID + '\n[bets.dragon_7]\npays = "40"\n'))
    assert "unknown bet" in message
    assert "dragon_7" in message


def test_unknown_top_level_key_is_named(tmp_path: Path) -> None:
    message = _config_error(_write(tmp_path, 'colour = "green"\n' + VALID))
    assert "unknown setting" in message
    assert "colour" in message


def test_unknown_key_in_a_bet_is_named(tmp_path: Path) -> None:
    text = VALID.replace('[bets.tie]\npays = "8"\n', '[bets.tie]\npays = "8"\nodds = "9"\n')
    message = _config_error(_write(tmp_path, text))
    assert "bets.tie" in message
    assert "odds" in message


def test_missing_key_in_a_bet_is_named(tmp_path: Path) -> None:
    text = VALID.replace('one_hand = "25"\n', "")
    message = _config_error(_write(tmp_path, text))
    assert "bets.perfect_pair" in message
    assert "one_hand" in message


def test_negative_pays(tmp_path: Path) -> None:
    text = VALID.replace('[bets.tie]\npays = "8"', '[bets.tie]\npays = "-8"')
    message = _config_error(_write(tmp_path, text))
    assert "bets.tie.pays" in message
    assert "negative" in message


@pytest.mark.parametrize("value", ['"eleven"', "11.0", "true", '""'])
def test_non_numeric_pays(tmp_path: Path, value: str) -> None:
    text = VALID.replace('[bets.player_pair]\npays = "11"', f"[bets.player_pair]\npays = {value}")
    message = _config_error(_write(tmp_path, text))
    assert "bets.player_pair.pays" in message


def test_non_numeric_margin(tmp_path: Path) -> None:
    text = VALID.replace('9 = "30", 8 = "10"', '9 = "thirty", 8 = "10"', 1)
    message = _config_error(_write(tmp_path, text))
    assert "bets.player_bonus.margins.9" in message


def test_margin_out_of_range(tmp_path: Path) -> None:
    text = VALID.replace('9 = "30", 8 = "10"', '10 = "30", 8 = "10"', 1)
    message = _config_error(_write(tmp_path, text))
    assert "margins" in message
    assert "'10'" in message


@pytest.mark.parametrize("key", ["0", '"²"', '"٩"', '"a"'])
def test_margin_key_that_is_not_a_digit_1_to_9(tmp_path: Path, key: str) -> None:
    # "²" counts as a digit to str.isdigit() but not to int(): it must still be a ConfigError naming the file.
    text = VALID.replace('9 = "30", 8 = "10"', f'{key} = "30", 8 = "10"', 1)
    message = _config_error(_write(tmp_path, text))
    assert "bets.player_bonus.margins" in message
    assert "not a winning margin" in message


def test_commission_above_one(tmp_path: Path) -> None:
    text = VALID.replace('commission = "0.05"', 'commission = "1.5"')
    message = _config_error(_write(tmp_path, text))
    assert "bets.banker.commission" in message
    assert "at most 1" in message


def test_commission_of_exactly_one_is_allowed(tmp_path: Path) -> None:
    table = load_pay_table(_write(tmp_path, VALID.replace('commission = "0.05"', 'commission = "1"')))
    assert table.resolve(BetType.BANKER, BANKER_WINS) == win(1, Fraction(1))


@pytest.mark.parametrize("key", ["commission_rounding", "payout_rounding"])
def test_bad_rounding(tmp_path: Path, key: str) -> None:
    text = VALID.replace(f'{key} = "down"', f'{key} = "nearest"')
    message = _config_error(_write(tmp_path, text))
    assert key in message
    assert "nearest" in message


def test_rounding_variants_load(tmp_path: Path) -> None:
    text = VALID.replace('commission_rounding = "down"', 'commission_rounding = "half_even"').replace(
        'payout_rounding = "down"', 'payout_rounding = "up"'
    )
    table = load_pay_table(_write(tmp_path, text))
    assert table.commission_rounding is Rounding.HALF_EVEN
    assert table.payout_rounding is Rounding.UP


def test_malformed_toml(tmp_path: Path) -> None:
    message = _config_error(_write(tmp_path, VALID + "\n[bets.tie\npays = 8\n"))
    assert "malformed TOML" in message


def test_missing_file(tmp_path: Path) -> None:
    message = _config_error(tmp_path / "absent.toml")
    assert "no such file" in message


def test_missing_named_table(tmp_path: Path) -> None:
    (tmp_path / "paytables").mkdir()
    with pytest.raises(ConfigError) as info:
        load_pay_table("absent", base=tmp_path)
    message = str(info.value)
    assert str(tmp_path / "paytables" / "absent.toml") in message
    assert "no such file" in message


def test_bets_not_a_table(tmp_path: Path) -> None:
    message = _config_error(_write(tmp_path, 'bets = "all"\n'))
    assert "[bets]" in message


def test_missing_bets_section(tmp_path: Path) -> None:
    message = _config_error(_write(tmp_path, 'name = "empty"\n'))
    assert "missing bets" in message
