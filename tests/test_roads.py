"""The scoreboards (studio/roads.py, `studio roads`, DESIGN.md §6) against hand-worked shoes and the roads' rules.

Notation in the hand-worked comments: big-road columns are numbered from 1 and written as their lengths, e.g. B P P P B
is columns 1:[B] 2:[P P P] 3:[B] = lengths 1, 3, 1. A cell is (column, row), both from 1. For a derived road comparing
k columns back (big eye boy k=1, small road k=2, cockroach pig k=3):
  - new column c (row 1): red if len(c-1) == len(c-1-k), else blue;
  - row r > 1 of column c: red if len(c-k) >= r (filled left), blue if len(c-k) == r-1 (empty left, filled
    above-left), red if len(c-k) < r-1 (the straight drop);
  - marks start at the cell after the first cell of column k+1.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Callable, Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.domain.cards import parse_cards
from studio.domain.errors import StudioError
from studio.domain.roads import (
    DERIVED_ROADS,
    InvalidResult,
    Mark,
    ResultLike,
    RoundResult,
    compute_roads,
    parse_results,
    place_on_grid,
)
from studio.domain.rules import Winner, outcome
from studio_cli import main as cli_main
from studio_cli import roads_command

R: Mark = "red"
U: Mark = "blue"  # "blUe": B is taken by the Banker

SEQUENCES = st.text(alphabet="BPT", max_size=80)


def marks(sequence: str) -> tuple[tuple[Mark, ...], tuple[Mark, ...], tuple[Mark, ...]]:
    roads = compute_roads(sequence)
    return roads.big_eye_boy, roads.small_road, roads.cockroach_pig


def big_road(sequence: str) -> list[list[tuple[str, int]]]:
    return [[(cell.winner, cell.ties) for cell in column] for column in compute_roads(sequence).big_road]


# ---------------------------------------------------------------------------------------------------------------------
# Hand-worked shoes


def test_b_p_p_p_b() -> None:
    # Columns 1:[B] 2:[P P P] 3:[B], lengths 1 3 1.
    # Big eye boy (k=1) starts after (2,1):
    #   (2,2): len(1) = 1 = r-1, empty left, filled above-left  -> blue
    #   (2,3): len(1) = 1 < r-1 = 2, straight drop               -> red
    #   (3,1): new column, len(2) = 3 vs len(1) = 1              -> blue
    # Small road (k=2) starts after (3,1), the last cell: no marks. Cockroach pig (k=3): column 4 not reached.
    roads = compute_roads("BPPPB")
    assert big_road("BPPPB") == [[("B", 0)], [("P", 0)] * 3, [("B", 0)]]
    assert roads.bead_plate == ("B", "P", "P", "P", "B")
    assert roads.big_eye_boy == (U, R, U)
    assert roads.small_road == ()
    assert roads.cockroach_pig == ()
    # Ask Banker: (3,2): big eye boy len(2) = 3 >= 2 red; small road len(1) = 1 = r-1 blue; cockroach: no column 0.
    assert roads.ask_banker.to_json() == {"big_eye_boy": R, "small_road": U, "cockroach_pig": None}
    # Ask Player: (4,1): big eye boy len(3)=1 vs len(2)=3 blue; small road len(3)=1 vs len(1)=1 red; cockroach
    # would compare len(3) with column 0: not yet.
    assert roads.ask_player.to_json() == {"big_eye_boy": U, "small_road": R, "cockroach_pig": None}


def test_b_b_p_p_b() -> None:
    # Columns 1:[B B] 2:[P P] 3:[B], lengths 2 2 1.
    # Big eye boy starts after (2,1):
    #   (2,2): len(1) = 2 >= 2, filled left   -> red
    #   (3,1): len(2) = 2 vs len(1) = 2       -> red
    # Small road starts after (3,1): nothing yet; cockroach pig neither.
    roads = compute_roads("BBPPB")
    assert big_road("BBPPB") == [[("B", 0)] * 2, [("P", 0)] * 2, [("B", 0)]]
    assert (roads.big_eye_boy, roads.small_road, roads.cockroach_pig) == ((R, R), (), ())
    # Ask Banker (3,2): big eye boy len(2) = 2 red; small road len(1) = 2 red; cockroach not yet.
    assert roads.ask_banker.to_json() == {"big_eye_boy": R, "small_road": R, "cockroach_pig": None}
    # Ask Player (4,1): big eye boy len(3)=1 vs len(2)=2 blue; small road len(3)=1 vs len(1)=2 blue.
    assert roads.ask_player.to_json() == {"big_eye_boy": U, "small_road": U, "cockroach_pig": None}


def test_a_longer_shoe_on_all_three_roads() -> None:
    # BB P BBB PP B PPPP B: lengths 2 1 3 2 1 4 1 (columns 1..7), 14 cells.
    sequence = "BBPBBBPPBPPPPB"
    # Big eye boy (k=1), from the cell after (2,1):
    #   (3,1) len2=1 vs len1=2 blue | (3,2) len2=1 = r-1 blue | (3,3) len2=1 < 2 straight drop red
    #   (4,1) len3=3 vs len2=1 blue | (4,2) len3=3 >= 2 red
    #   (5,1) len4=2 vs len3=3 blue
    #   (6,1) len5=1 vs len4=2 blue | (6,2) len5=1 = r-1 blue | (6,3) red (drop) | (6,4) red (drop)
    #   (7,1) len6=4 vs len5=1 blue
    big_eye_boy = (U, U, R, U, R, U, U, U, R, R, U)
    # Small road (k=2), from the cell after (3,1):
    #   (3,2) len1=2 >= 2 red | (3,3) len1=2 = r-1 blue
    #   (4,1) len3=3 vs len1=2 blue | (4,2) len2=1 = r-1 blue
    #   (5,1) len4=2 vs len2=1 blue
    #   (6,1) len5=1 vs len3=3 blue | (6,2) len4=2 red | (6,3) len4=2 = r-1 blue | (6,4) len4=2 < 3 red (drop)
    #   (7,1) len6=4 vs len4=2 blue
    small_road = (R, U, U, U, U, U, R, U, R, U)
    # Cockroach pig (k=3), from the cell after (4,1):
    #   (4,2) len1=2 red
    #   (5,1) len4=2 vs len1=2 red
    #   (6,1) len5=1 vs len2=1 red | (6,2) len3=3 red | (6,3) len3=3 red | (6,4) len3=3 = r-1 blue
    #   (7,1) len6=4 vs len3=3 blue
    cockroach_pig = (R, R, R, R, R, U, U)
    assert marks(sequence) == (big_eye_boy, small_road, cockroach_pig)
    roads = compute_roads(sequence)
    # Ask Banker (7,2): len6=4 red | len5=1 = r-1 blue | len4=2 red.
    assert roads.ask_banker.to_json() == {"big_eye_boy": R, "small_road": U, "cockroach_pig": R}
    # Ask Player (8,1): len7=1 vs len6=4 blue | vs len5=1 red | vs len4=2 blue.
    assert roads.ask_player.to_json() == {"big_eye_boy": U, "small_road": R, "cockroach_pig": U}


@pytest.mark.parametrize(
    ("sequence", "expected"),
    [
        # Big eye boy: B P B B B, lengths 1 1 3. (3,1) 1 vs 1 red; (3,2) len2=1 = r-1 blue; (3,3) len2=1 < 2: red.
        ("BPBBB", {"big_eye_boy": (R, U, R)}),
        # ... and the drop goes on red: (3,4), (3,5) too.
        ("BPBBBBB", {"big_eye_boy": (R, U, R, R, R)}),
        # Small road: same shoe, (3,2) len1=1 = r-1 blue; (3,3) len1=1 < 2: red.
        ("BPBBB", {"small_road": (U, R)}),
        # Cockroach pig: B P B P B B B, lengths 1 1 1 1 3. (5,1) len4=1 vs len1=1 red; (5,2) len2=1 = r-1 blue;
        # (5,3) len2=1 < 2: red.
        ("BPBPBBB", {"cockroach_pig": (R, U, R)}),
        # Big eye boy and small road on the same shoe: (3,1) red (4,1) red (5,1) red (5,2) blue (5,3) red, and
        # small road (4,1) 1 vs 1 red (5,1) red (5,2) blue (5,3) red.
        ("BPBPBBB", {"big_eye_boy": (R, R, R, U, R), "small_road": (R, R, U, R)}),
    ],
)
def test_the_straight_drop_is_red(sequence: str, expected: dict[str, tuple[Mark, ...]]) -> None:
    roads = compute_roads(sequence)
    for name, road in expected.items():
        assert roads.derived(name) == road, name
        # A rule that only looked at the cell to the left would have made the drop blue.
        assert road[-1] == R


def test_a_column_equal_to_the_compared_one_then_passing_it() -> None:
    # P B B B P P P P: lengths 1 3 4. Big eye boy: (2,2) len1=1 = r-1 blue; (2,3) drop red; (3,1) len2=3 vs len1=1
    # blue; (3,2) (3,3) len2=3 red red; (3,4) len2=3 = r-1 blue.
    assert compute_roads("PBBBPPPP").big_eye_boy == (U, R, U, R, R, U)
    # One more P: (3,5) len2=3 < 4, straight drop red.
    assert compute_roads("PBBBPPPPP").big_eye_boy == (U, R, U, R, R, U, R)


# ---------------------------------------------------------------------------------------------------------------------
# Ties


def test_leading_ties_are_counted_on_the_first_cell() -> None:
    assert big_road("TTBP") == [[("B", 2)], [("P", 0)]]
    assert compute_roads("TTBP").bead_plate == ("T", "T", "B", "P")


def test_ties_are_counted_on_the_cell_before_them_and_make_no_marks() -> None:
    assert big_road("BTTBTPT") == [[("B", 2), ("B", 1)], [("P", 1)]]
    # A tie between two wins by the same side does not start a new column.
    assert big_road("BTB") == [[("B", 1), ("B", 0)]]
    for with_ties, without in [("BTPPTTPTB", "BPPPB"), ("TBBTPPBT", "BBPPB")]:
        assert marks(with_ties) == marks(without)
        roads, plain = compute_roads(with_ties), compute_roads(without)
        assert (roads.ask_banker, roads.ask_player) == (plain.ask_banker, plain.ask_player)


def test_ties_alone_have_an_empty_big_road() -> None:
    roads = compute_roads("TTT")
    assert roads.big_road == ()
    assert roads.big_road_grid == ()
    assert marks("TTT") == ((), (), ())
    assert roads.bead_plate == ("T", "T", "T")
    assert roads.counts.tie == 3
    assert roads.ask_banker.to_json() == {"big_eye_boy": None, "small_road": None, "cockroach_pig": None}
    assert compute_roads("").to_json()["big_road"] == []


# ---------------------------------------------------------------------------------------------------------------------
# Grids


def test_bead_plate_fills_six_rows_column_by_column() -> None:
    roads = compute_roads("BPTBPTBP")
    assert roads.bead_plate_grid == ((0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 0), (1, 1))


def test_a_column_longer_than_six_turns_right_along_the_bottom() -> None:
    roads = compute_roads("B" * 8 + "P" * 7 + "BB")
    # The logical column keeps all 8 cells; the derived roads use it as 8 long.
    assert [len(column) for column in roads.big_road] == [8, 7, 2]
    col1 = ((0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5), (2, 5))
    # The Player column starts at (1,0); (1,5) is taken by the tail, so it turns right at row 4.
    col2 = ((1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4), (3, 4))
    assert roads.big_road_grid == (col1, col2, ((2, 0), (2, 1)))


def test_a_tail_on_the_top_row_pushes_the_next_column_right() -> None:
    # Lengths 8 7 6 5 3 1: each column's tail runs one row above the previous one's.
    grid = place_on_grid([8, 7, 6, 5, 3, 1])
    assert grid[2] == ((2, 0), (2, 1), (2, 2), (2, 3), (3, 3), (4, 3))
    assert grid[3] == ((3, 0), (3, 1), (3, 2), (4, 2), (5, 2))
    assert grid[4] == ((4, 0), (4, 1), (5, 1))
    assert grid[5] == ((5, 0),)
    # A column whose second cell finds row 1 taken turns right on row 0; the next column starts after it.
    grid = place_on_grid([8, 7, 6, 5, 4, 2, 1])
    assert grid[4] == ((4, 0), (4, 1), (5, 1), (6, 1))
    assert grid[5] == ((5, 0), (6, 0))
    assert grid[6] == ((7, 0),)


def test_json_grids_match_the_roads() -> None:
    report = compute_roads("BBBBBBBBPPBBP").to_json()
    assert report["big_road_grid"][0][6:] == [[1, 5], [2, 5]]
    assert [len(column) for column in report["big_road_grid"]] == [len(column) for column in report["big_road"]]
    assert report["big_road_results"] == [list(range(8)), [8, 9], [10, 11], [12]]
    for name, _ in DERIVED_ROADS:
        assert len(report["derived_grids"][name]) == len(report[name])


# ---------------------------------------------------------------------------------------------------------------------
# Records, markers and counts


def test_rich_records_carry_pairs_and_naturals() -> None:
    natural_pair = outcome(parse_cards("9H 9S"), parse_cards("KH 2D"))  # Player 8 natural with a pair: Player wins
    assert natural_pair.winner is Winner.PLAYER
    results: list[ResultLike] = [
        RoundResult("B", banker_pair=True),
        {"winner": "banker", "natural": True, "player_pair": True, "banker_pair": False},  # `studio simulate` shape
        natural_pair,
        Winner.TIE,
        "t",
        "P",
    ]
    roads = compute_roads(results)
    assert roads.bead_plate == ("B", "B", "P", "T", "T", "P")
    assert [(r.player_pair, r.banker_pair, r.natural) for r in roads.results] == [
        (False, True, False),
        (True, False, True),
        (True, False, True),
        (False, False, False),
        (False, False, False),
        (False, False, False),
    ]
    assert roads.counts.to_json() == {
        "rounds": 6,
        "banker": 2,
        "player": 2,
        "tie": 2,
        "player_pair": 2,
        "banker_pair": 1,
        "natural": 2,
    }
    assert [[(cell.winner, cell.ties) for cell in column] for column in roads.big_road] == [
        [("B", 0), ("B", 0)],
        [("P", 2), ("P", 0)],
    ]
    assert roads.to_json()["markers"][1] == {"player_pair": True, "banker_pair": False, "natural": True}


@pytest.mark.parametrize("bad", ["X", {"natural": True}, {"winner": "dragon"}, 3, None])
def test_a_bad_record_is_a_studio_error(bad: object) -> None:
    with pytest.raises(InvalidResult, match="position 2"):
        compute_roads(["B", bad])  # type: ignore[list-item]


def test_parse_results_is_case_insensitive_and_names_the_bad_character() -> None:
    assert parse_results("bPt") == ("B", "P", "T")
    with pytest.raises(InvalidResult) as caught:
        parse_results("BPPXB")
    assert "'X'" in str(caught.value) and "position 4" in str(caught.value)


# ---------------------------------------------------------------------------------------------------------------------
# The command line


@pytest.fixture
def studio(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Runs `studio ARGS` through studio_cli.main, with `roads` registered if main does not register it (yet)."""
    original = cli_main.build_parser

    def build_parser() -> argparse.ArgumentParser:
        parser = original()
        for action in parser._actions:  # argparse keeps sub-commands in a private action type
            if isinstance(action, argparse._SubParsersAction) and "roads" not in action.choices:
                roads_command.register(action)
        return parser

    monkeypatch.setattr(cli_main, "build_parser", build_parser)

    def run(*args: str) -> tuple[int, str, str]:
        code = cli_main.main(list(args))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def test_cli_json_follows_the_contract(studio: Callable[..., tuple[int, str, str]]) -> None:
    code, out, _ = studio("roads", "--results", "tBpPpB", "--json")
    assert code == 0
    report = json.loads(out)
    assert {"bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"} <= set(report)
    assert report["bead_plate"] == ["T", "B", "P", "P", "P", "B"]
    assert report["big_road"] == [
        [{"winner": "B", "ties": 1}],
        [{"winner": "P", "ties": 0}, {"winner": "P", "ties": 0}, {"winner": "P", "ties": 0}],
        [{"winner": "B", "ties": 0}],
    ]
    assert report["big_eye_boy"] == ["blue", "red", "blue"]  # as B P P P B
    assert report["small_road"] == [] and report["cockroach_pig"] == []
    assert report["ask"]["banker"] == {"big_eye_boy": "red", "small_road": "blue", "cockroach_pig": None}
    assert report["counts"]["tie"] == 1


def test_cli_text_draws_the_grids(studio: Callable[..., tuple[int, str, str]]) -> None:
    code, out, _ = studio("roads", "--results", "BBBBBBBBTTPP")
    assert code == 0
    assert "Big road" in out and "Big eye boy" in out and "Ask Banker" in out
    big_road_rows = out.split("Big road")[1].splitlines()[1:7]
    assert big_road_rows[0].split() == ["B", "P", "."]
    assert big_road_rows[5].split() == ["B", "B", "B2"]  # the dragon tail along the bottom, ties counted on its end


@pytest.mark.parametrize(("sequence", "bad", "position"), [("BPQ", "Q", 3), ("b p", " ", 2), ("1", "1", 1)])
def test_cli_bad_input_is_a_one_line_error(
    studio: Callable[..., tuple[int, str, str]], sequence: str, bad: str, position: int
) -> None:
    code, out, err = studio("roads", "--results", sequence)
    assert code == cli_main.EXIT_USER_ERROR
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("studio: error: ")
    assert repr(bad) in err and f"position {position}" in err


def test_cli_errors_are_studio_errors() -> None:
    parser = argparse.ArgumentParser()
    roads_command.register(parser.add_subparsers())
    args = parser.parse_args(["roads", "--results", "BX"])
    with pytest.raises(StudioError):
        args.run(args)


# ---------------------------------------------------------------------------------------------------------------------
# Properties


def reference_marks(sequence: str, k: int) -> list[Mark]:
    """The derived road by the cell-by-cell wording on an unbounded logical grid: new column → compare the two columns'
    lengths; going down → filled left: red; empty left, filled above-left: blue; both empty: red."""
    cells: set[tuple[int, int]] = set()
    lengths: list[int] = []
    out: list[Mark] = []
    last = ""
    for code in sequence:
        if code == "T":
            continue
        if code == last:
            column, row = len(lengths) - 1, lengths[-1]
            lengths[-1] += 1
        else:
            column, row = len(lengths), 0
            lengths.append(1)
        cells.add((column, row))
        last = code
        if row == 0 and column - 1 - k >= 0:
            out.append(R if lengths[column - 1] == lengths[column - 1 - k] else U)
        elif row > 0 and column - k >= 0:
            left, above_left = (column - k, row) in cells, (column - k, row - 1) in cells
            out.append(R if left or not above_left else U)
    return out


def cells_after_the_start(sequence: str, k: int) -> int:
    """Big-road cells after the first cell of column k+1 (from 1): where the road comparing k columns back starts."""
    lengths = [len(column) for column in compute_roads(sequence).big_road]
    if len(lengths) <= k:
        return 0
    return sum(lengths) - sum(lengths[:k]) - 1


@settings(max_examples=300, deadline=None)
@given(SEQUENCES)
def test_each_derived_road_marks_every_cell_after_its_start(sequence: str) -> None:
    roads = compute_roads(sequence)
    for name, k in DERIVED_ROADS:
        assert len(roads.derived(name)) == cells_after_the_start(sequence, k), name
        assert list(roads.derived(name)) == reference_marks(sequence, k), name


@settings(max_examples=300, deadline=None)
@given(SEQUENCES)
def test_the_ask_road_is_the_next_mark(sequence: str) -> None:
    roads = compute_roads(sequence)
    for side, ask in (("B", roads.ask_banker), ("P", roads.ask_player)):
        after = compute_roads(sequence + side)
        for name, _ in DERIVED_ROADS:
            expected = getattr(ask, name)
            assert after.derived(name) == roads.derived(name) + ((expected,) if expected else ()), (side, name)


def grid_cells(grid: Sequence[Sequence[tuple[int, int]]]) -> Iterator[tuple[int, int]]:
    return (position for column in grid for position in column)


@settings(max_examples=300, deadline=None)
@given(SEQUENCES)
def test_big_road_placement_is_a_valid_grid(sequence: str) -> None:
    roads = compute_roads(sequence)
    grid = roads.big_road_grid
    positions = list(grid_cells(grid))
    assert len(positions) == len(set(positions)) == sum(len(column) for column in roads.big_road)
    assert all(0 <= row < 6 for _, row in positions)
    starts = [column[0] for column in grid]
    assert all(row == 0 for _, row in starts)
    assert [column for column, _ in starts] == sorted({column for column, _ in starts})
    for column in grid:
        for (x0, y0), (x1, y1) in itertools.pairwise(column):
            # Each step goes one down, or one right once turned (and never down again after a turn).
            assert (x1, y1) in ((x0, y0 + 1), (x0 + 1, y0))
        turned = [x1 > x0 for (x0, _), (x1, _) in itertools.pairwise(column)]
        assert turned == sorted(turned)
    # Counts add up, and the bead plate is the input.
    assert roads.counts.rounds == len(sequence)
    assert "".join(roads.bead_plate) == sequence
    assert sum(cell.ties for column in roads.big_road for cell in column) == (
        sequence.count("T") if roads.big_road else 0
    )
