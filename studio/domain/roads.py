"""The scoreboards ("roads") of a baccarat shoe: bead plate, big road, the three derived roads and the ask road.

Contract: DESIGN.md §6 (`studio roads --results SEQ --json`). Pure and standard library only.

The rules implemented here are the standard ones described in the Wizard of Odds' "Baccarat Score Boards" page
(wizardofodds.com/games/baccarat/history/, written with the Venetian's help) and in the Chinese rule of thumb that
road programs implement: a mark is red where the compared column "has a partner" (有對), blue where it has none; a new
column is red when the two columns compared are level (齊整); the straight drop (直落) is red. Cross-checked against
public road implementations (the three-case test "left filled: red; left empty, above-left filled: blue; both empty:
red" and "new column: equal lengths red"); tests/test_roads.py re-derives every mark that way, cell by cell.

Bead plate
    Every result in order, Banker (B), Player (P) or Tie (T), placed on a 6-row grid top to bottom, then the next
    column to the right: result i sits at (column i // 6, row i % 6).

Big road
    Only Banker and Player wins make cells. A logical column holds one run of wins by the same side; a change of
    winner starts a new column. A tie is counted on the cell before it (a green slash on the display); ties before
    the first Banker or Player win are counted on the first cell; a sequence of ties alone has an empty big road.

    Physical placement on a 6-row grid: a new logical column starts on the top row of the grid column right after the
    one where the previous logical column started (further right if that top cell is already taken). Its next cell
    goes one row down, unless that would pass row 6 or the cell below is already taken: then it turns right (the
    "dragon tail") and every further cell of that column continues to the right along that row.

Derived roads: big eye boy (k = 1), small road (k = 2), cockroach pig (k = 3)
    Computed from the big road's LOGICAL columns (a dragon tail is treated as if the column went on down), one mark per
    big-road cell from the road's starting point on, in the order the cells are made. With columns numbered from 1:
    the road starts at row 2 of column k + 1, or, if that column has a single cell, at row 1 of column k + 2; that is,
    at the big-road cell after the first cell of column k + 1, and every cell after it gets a mark. Ties make none.

    For a new cell at column c, row r:
    - r = 1 (the cell starts a new column): compare the lengths of column c - 1 (the one just finished) and column
      c - 1 - k. Equal lengths: red; different: blue.
    - r > 1 (the column grows down): look at column c - k, the column k to the left.
        * it has a cell at row r (the cell to the left is filled): red;
        * its last cell is at row r - 1 (left empty, above-left filled: the column just outgrew it): blue;
        * it is shorter still, ending above row r - 1 (left and above-left both empty): red, the "straight drop"
          (直落): the column already passed the compared one at the previous row, and keeps going the same way.
      Put shortly: blue exactly when r = (length of column c - k) + 1, red otherwise.

Ask road ("ask Banker" / "ask Player")
    The mark each derived road would make if the next result were a Banker win, or a Player win (none where the road
    would not yet make a mark). A tie never makes a mark, so it is not asked.

Markers and counts
    Each result may carry a Player pair, a Banker pair and a natural; the roads count Banker, Player and Tie wins,
    Player and Banker pairs, and naturals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from studio.domain.errors import StudioError
from studio.domain.rules import Winner

ROWS = 6
"""Rows of the bead plate and big road grids."""

Code = Literal["B", "P", "T"]
Side = Literal["B", "P"]
Mark = Literal["red", "blue"]
Position = tuple[int, int]
"""(column, row) on a grid, both counted from 0: column 0 is the leftmost, row 0 the top."""

DERIVED_ROADS: tuple[tuple[str, int], ...] = (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3))
"""Each derived road's name and how many columns back it compares."""

_CODES: dict[str, Code] = {"B": "B", "P": "P", "T": "T", "BANKER": "B", "PLAYER": "P", "TIE": "T"}
_WINNERS: dict[Winner, Code] = {Winner.BANKER: "B", Winner.PLAYER: "P", Winner.TIE: "T"}


class InvalidResult(StudioError, ValueError):
    """A round result that is not a Banker win, a Player win or a tie."""


class ResultRecord(Protocol):
    """Anything with a winner: `RoundResult`, `studio.domain.rules.Outcome`, ... (pairs and natural are read if
    present)."""

    @property
    def winner(self) -> object: ...


ResultLike = str | Winner | Mapping[str, object] | ResultRecord
"""`"B"`, `"P"`, `"T"` (or `"banker"`, `"player"`, `"tie"`, any case), a `Winner`, a mapping with a `"winner"` key and
optional `"player_pair"`, `"banker_pair"`, `"natural"` keys (the shape `studio simulate --json` prints), or a record
with such attributes (`RoundResult`, `studio.domain.rules.Outcome`)."""


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One round's result as the scoreboards see it."""

    winner: Code
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False


@dataclass(frozen=True, slots=True)
class BigRoadCell:
    """A Banker or Player win on the big road, the ties counted on it, and the index of its result in the input."""

    winner: Side
    ties: int
    result: int


@dataclass(frozen=True, slots=True)
class Ask:
    """The marks the derived roads would make next (None: that road would make no mark yet)."""

    big_eye_boy: Mark | None
    small_road: Mark | None
    cockroach_pig: Mark | None

    def to_json(self) -> dict[str, Mark | None]:
        return {"big_eye_boy": self.big_eye_boy, "small_road": self.small_road, "cockroach_pig": self.cockroach_pig}


@dataclass(frozen=True, slots=True)
class Counts:
    banker: int
    player: int
    tie: int
    player_pair: int
    banker_pair: int
    natural: int

    @property
    def rounds(self) -> int:
        return self.banker + self.player + self.tie

    def to_json(self) -> dict[str, int]:
        return {
            "rounds": self.rounds,
            "banker": self.banker,
            "player": self.player,
            "tie": self.tie,
            "player_pair": self.player_pair,
            "banker_pair": self.banker_pair,
            "natural": self.natural,
        }


@dataclass(frozen=True, slots=True)
class Roads:
    """Every scoreboard for a sequence of results (oldest first)."""

    results: tuple[RoundResult, ...]
    big_road: tuple[tuple[BigRoadCell, ...], ...]
    big_road_grid: tuple[tuple[Position, ...], ...]
    """The physical placement of `big_road[i][j]` on the 6-row grid, with dragon tails."""
    big_eye_boy: tuple[Mark, ...]
    small_road: tuple[Mark, ...]
    cockroach_pig: tuple[Mark, ...]
    ask_banker: Ask
    ask_player: Ask
    counts: Counts

    @property
    def bead_plate(self) -> tuple[Code, ...]:
        return tuple(result.winner for result in self.results)

    @property
    def bead_plate_grid(self) -> tuple[Position, ...]:
        return tuple(divmod(index, ROWS) for index in range(len(self.results)))

    def derived(self, name: str) -> tuple[Mark, ...]:
        """A derived road by its JSON name: `big_eye_boy`, `small_road` or `cockroach_pig`."""
        marks: tuple[Mark, ...] = getattr(self, name)
        return marks

    def derived_grid(self, name: str) -> tuple[Position, ...]:
        """Where each mark of a derived road sits on its 6-row grid: a new column at each change of colour, placed
        like the big road (dragon tails included)."""
        return _flat_grid(_runs(self.derived(name)))

    def to_json(self) -> dict[str, Any]:
        """The DESIGN.md §6 object, plus grids, markers, the ask road and counts under extra keys."""
        return {
            "bead_plate": list(self.bead_plate),
            "big_road": [[{"winner": cell.winner, "ties": cell.ties} for cell in column] for column in self.big_road],
            "big_eye_boy": list(self.big_eye_boy),
            "small_road": list(self.small_road),
            "cockroach_pig": list(self.cockroach_pig),
            "bead_plate_grid": [list(position) for position in self.bead_plate_grid],
            "big_road_grid": [[list(position) for position in column] for column in self.big_road_grid],
            "big_road_results": [[cell.result for cell in column] for column in self.big_road],
            "derived_grids": {
                name: [list(position) for position in self.derived_grid(name)] for name, _ in DERIVED_ROADS
            },
            "markers": [
                {"player_pair": result.player_pair, "banker_pair": result.banker_pair, "natural": result.natural}
                for result in self.results
            ],
            "ask": {"banker": self.ask_banker.to_json(), "player": self.ask_player.to_json()},
            "counts": self.counts.to_json(),
        }


# ---------------------------------------------------------------------------------------------------------------------
# Reading results


def parse_results(text: str) -> tuple[Code, ...]:
    """A string of `B`, `P`, `T` (any case, oldest first); anything else names the bad character and its position."""
    codes: list[Code] = []
    for position, char in enumerate(text, start=1):
        upper = char.upper()
        if upper not in ("B", "P", "T"):
            raise InvalidResult(f"invalid result {char!r} at position {position}: each result is B, P or T")
        codes.append(_CODES[upper])
    return tuple(codes)


def to_result(item: ResultLike, position: int = 1) -> RoundResult:
    """Read one result record (see `ResultLike`); `position` (from 1) only names it in an error."""
    if isinstance(item, RoundResult):
        return item
    if isinstance(item, str | Winner):
        return RoundResult(_code(item, position))
    if isinstance(item, Mapping):
        if "winner" not in item:
            raise InvalidResult(f"result at position {position} has no winner")
        return RoundResult(
            _code(item["winner"], position),
            player_pair=bool(item.get("player_pair", False)),
            banker_pair=bool(item.get("banker_pair", False)),
            natural=bool(item.get("natural", False)),
        )
    return RoundResult(
        _code(getattr(item, "winner", None), position),
        player_pair=bool(getattr(item, "player_pair", False)),
        banker_pair=bool(getattr(item, "banker_pair", False)),
        natural=bool(getattr(item, "natural", False)),
    )


def _code(winner: object, position: int) -> Code:
    if isinstance(winner, Winner):
        return _WINNERS[winner]
    if isinstance(winner, str) and winner.strip().upper() in _CODES:
        return _CODES[winner.strip().upper()]
    raise InvalidResult(f"invalid result {winner!r} at position {position}: expected B, P or T")


# ---------------------------------------------------------------------------------------------------------------------
# The roads


def compute_roads(results: Iterable[ResultLike]) -> Roads:
    """All the scoreboards for `results`, oldest first."""
    records = tuple(to_result(item, position) for position, item in enumerate(results, start=1))
    columns = _big_road(records)
    lengths = [len(column) for column in columns]
    marks = {name: _derived_marks(lengths, k) for name, k in DERIVED_ROADS}
    return Roads(
        results=records,
        big_road=columns,
        big_road_grid=place_on_grid(lengths),
        big_eye_boy=marks["big_eye_boy"],
        small_road=marks["small_road"],
        cockroach_pig=marks["cockroach_pig"],
        ask_banker=_ask(columns, "B"),
        ask_player=_ask(columns, "P"),
        counts=Counts(
            banker=sum(record.winner == "B" for record in records),
            player=sum(record.winner == "P" for record in records),
            tie=sum(record.winner == "T" for record in records),
            player_pair=sum(record.player_pair for record in records),
            banker_pair=sum(record.banker_pair for record in records),
            natural=sum(record.natural for record in records),
        ),
    )


def _big_road(records: Sequence[RoundResult]) -> tuple[tuple[BigRoadCell, ...], ...]:
    columns: list[list[BigRoadCell]] = []
    leading_ties = 0
    for index, record in enumerate(records):
        if record.winner == "T":
            if columns:
                last = columns[-1][-1]
                columns[-1][-1] = BigRoadCell(last.winner, last.ties + 1, last.result)
            else:
                leading_ties += 1
            continue
        cell = BigRoadCell(record.winner, 0, index)
        if not columns:
            columns.append([BigRoadCell(record.winner, leading_ties, index)])
        elif columns[-1][-1].winner == record.winner:
            columns[-1].append(cell)
        else:
            columns.append([cell])
    return tuple(tuple(column) for column in columns)


def derived_mark(lengths: Sequence[int], column: int, row: int, k: int) -> Mark | None:
    """The mark a derived road comparing `k` columns back makes for the big-road cell at (`column`, `row`) (logical,
    from 0), given the lengths of the logical columns before it; None before the road's starting point."""
    if row == 0:
        if column - 1 - k < 0:
            return None
        return "red" if lengths[column - 1] == lengths[column - 1 - k] else "blue"
    if column - k < 0:
        return None
    # Filled to the left: red. Empty to the left but filled above-left: blue. Both empty (straight drop): red.
    return "blue" if row == lengths[column - k] else "red"


def _derived_marks(lengths: Sequence[int], k: int) -> tuple[Mark, ...]:
    marks: list[Mark] = []
    for column, length in enumerate(lengths):
        for row in range(length):
            mark = derived_mark(lengths, column, row, k)
            if mark is not None:
                marks.append(mark)
    return tuple(marks)


def _ask(columns: Sequence[Sequence[BigRoadCell]], side: Side) -> Ask:
    """The derived roads' next marks if the next result were a win for `side`."""
    lengths = [len(column) for column in columns]
    if columns and columns[-1][-1].winner == side:
        column, row = len(lengths) - 1, lengths[-1]
        lengths[-1] += 1
    else:
        column, row = len(lengths), 0
        lengths.append(1)
    mark = {name: derived_mark(lengths, column, row, k) for name, k in DERIVED_ROADS}
    return Ask(mark["big_eye_boy"], mark["small_road"], mark["cockroach_pig"])


# ---------------------------------------------------------------------------------------------------------------------
# Grids


def place_on_grid(lengths: Sequence[int], rows: int = ROWS) -> tuple[tuple[Position, ...], ...]:
    """The (column, row) of every cell of logical columns of the given lengths on a grid `rows` high, with the big
    road's dragon tail: a column turns right, and stays on that row, when the next row would pass the bottom or the
    cell below is taken; each logical column starts on the top row right of where the previous one started."""
    taken: set[Position] = set()
    placed: list[tuple[Position, ...]] = []
    start = -1
    for length in lengths:
        start += 1
        while (start, 0) in taken:
            start += 1
        column, row = start, 0
        cells = [(column, row)]
        turned = False
        taken.add((column, row))
        for _ in range(length - 1):
            if not turned and row + 1 < rows and (column, row + 1) not in taken:
                row += 1
            else:
                turned = True
                column += 1
            cells.append((column, row))
            taken.add((column, row))
        placed.append(tuple(cells))
    return tuple(placed)


def _runs(marks: Sequence[Mark]) -> list[int]:
    """Lengths of the runs of equal marks (a derived road's columns)."""
    runs: list[int] = []
    for index, mark in enumerate(marks):
        if index and mark == marks[index - 1]:
            runs[-1] += 1
        else:
            runs.append(1)
    return runs


def _flat_grid(lengths: Sequence[int]) -> tuple[Position, ...]:
    return tuple(position for column in place_on_grid(lengths) for position in column)
