"""`studio odds`: the DESIGN.md §6 contract, the seeds' published figures, and one-line errors for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from studio_cli.main import main

BETS = {"banker", "player", "tie", "player_pair", "banker_pair", "either_pair", "perfect_pair", "player_bonus",
        "banker_bonus"}  # fmt: skip


def studio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "studio_cli.main", *args], capture_output=True, text=True, check=False)


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["odds", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_full_shoe_reproduces_the_published_returns(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys)
    assert report["decks"] == 8
    assert report["cards_remaining"] == 416
    bets = report["bets"]
    assert isinstance(bets, dict) and set(bets) == BETS
    published = {"banker": 98.94, "player_pair": 89.64, "banker_pair": 89.64, "perfect_pair": 91.95,
                 "either_pair": 86.29, "player_bonus": 97.35, "banker_bonus": 90.63}  # fmt: skip
    for bet, rtp in published.items():
        assert round(bets[bet]["rtp"] * 100, 2) == rtp, bet
    # The optimal RTP is the Banker's: no other bet returns more.
    assert max(bets, key=lambda name: bets[name]["rtp"]) == "banker"
    for value in bets.values():
        ev = Fraction(value["ev"])
        assert value["rtp"] == pytest.approx(float(1 + ev))
        assert value["house_edge"] == pytest.approx(float(-ev))


def test_probabilities_are_exact_and_sum_to_one(capsys: pytest.CaptureFixture[str]) -> None:
    exact = run_json(capsys)["exact_probabilities"]
    assert isinstance(exact, dict)
    assert sum(Fraction(p) for p in exact.values()) == 1
    assert Fraction(exact["tie"]) == Fraction(475627426473216, 4998398275503360)


def test_removed_cards_deplete_the_shoe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dealt = tmp_path / "dealt.txt"
    dealt.write_text("QH 10s\n9D td\n" + "5C " * 8)
    report = run_json(capsys, "--removed", str(dealt))
    assert report["cards_remaining"] == 416 - 12
    full = run_json(capsys)
    # With all eight 5C gone, and fives scarce, the Banker's edge moves: the analysis really used the depleted shoe.
    assert report["bets"]["banker"]["ev"] != full["bets"]["banker"]["ev"]  # type: ignore[index]


def test_decks_and_pay_table_options(capsys: pytest.CaptureFixture[str]) -> None:
    six = run_json(capsys, "--decks", "6")
    assert six["decks"] == 6 and six["cards_remaining"] == 312
    no_commission = run_json(capsys, "--pay-table", "no-commission")
    assert round(no_commission["bets"]["banker"]["house_edge"] * 100, 2) == 1.02  # type: ignore[index]


def test_human_readable_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["odds"]) == 0
    out = capsys.readouterr().out
    assert "416 cards remaining" in out
    assert "banker_bonus" in out and "98.9421" in out


@pytest.mark.parametrize(
    ("args", "file_text", "message"),
    [
        (["--removed", "{file}"], "QH ZZ", "invalid card code 'ZZ'"),
        (["--removed", "{file}"], "AS " * 9, "cannot remove 9 × AS: the shoe holds only 8"),
        (["--removed", "{missing}"], None, "No such file"),
        (["--decks", "-1"], None, "whole, positive number of decks, not -1"),
        (["--decks", "0"], None, "not 0"),
        (["--pay-table", "{file}"], "bets = [", "malformed TOML"),
        (["--pay-table", "{file}"], '[bets.player]\npays = "1"\n', "missing the bet banker"),
        (["--pay-table", "nonexistent"], None, "no such file"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], file_text: str | None, message: str
) -> None:
    file = tmp_path / "input.toml"
    if file_text is not None:
        file.write_text(file_text)
    argv = [a.format(file=file, missing=tmp_path / "missing.txt") for a in args]
    assert main(["odds", *argv]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("studio: error: ") and message in lines[0]


def test_console_script_prints_no_traceback_for_user_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("QQ")
    done = studio("odds", "--removed", str(bad))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "invalid card code 'QQ'" in done.stderr


def test_help_explains_the_commands() -> None:
    done = studio("--help")
    assert done.returncode == 0 and "odds" in done.stdout
    done = studio("odds", "--help")
    assert "--removed FILE" in done.stdout and "examples:" in done.stdout
