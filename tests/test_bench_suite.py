"""The benchmark suite (bench/run.py, `studio bench`): figures picked out of a script's JSON, targets judged, the
generated section of docs/benchmarks.md rewritten in place, failing scripts reported without stopping the others, and
one quick run of a real benchmark."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from studio.domain.errors import StudioError
from studio_cli.bench_command import load_runner
from studio_cli.main import main as studio

RAW = {"full": {"median": 5.6, "best": 5.3}, "runs": [{"p99": 0.4}, {"p99": 1.2}], "rank": 0.9965, "ok": True,
       "label": "text", "cpu": None}  # fmt: skip


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_runner()


def write_script(folder: Path, name: str, body: str) -> str:
    (folder / name).write_text(textwrap.dedent(body))
    return name


# ------------------------------------------------------------------------------------------------ figures and targets


def test_a_figure_is_picked_by_dotted_path_list_index_or_function(bench: ModuleType) -> None:
    assert bench.extract(bench.Figure("median", "full.median", "ms"), RAW) == 5.6
    assert bench.extract(bench.Figure("second run", "runs.1.p99", "ms"), RAW) == 1.2
    assert bench.extract(bench.Figure("rank", bench.percent("rank"), "%"), RAW) == pytest.approx(99.65)
    assert bench.extract(bench.Figure("ok", "ok"), RAW) is True
    assert bench.extract(bench.Figure("cpu", "cpu", "µs"), RAW) is None  # no target: may be unmeasured


@pytest.mark.parametrize(
    ("figure_args", "message"),
    [
        (("p50", "full.p50", "ms"), "no 'full.p50' in the output (stopped at 'p50')"),
        (("third run", "runs.2.p99", "ms"), "stopped at '2'"),
        (("inside a number", "full.median.x", "ms"), "stopped at 'x'"),
        (("label", "label", ""), "expected a number, found 'text'"),
    ],
)
def test_a_figure_that_is_not_there_or_not_a_number_is_missing(
    bench: ModuleType, figure_args: tuple[str, str, str], message: str
) -> None:
    with pytest.raises(bench.FigureMissing, match=message.replace("(", r"\(").replace(")", r"\)")):
        bench.extract(bench.Figure(*figure_args), RAW)


def test_a_missing_figure_with_a_target_or_a_failing_picker_is_missing(bench: ModuleType) -> None:
    with pytest.raises(bench.FigureMissing, match="expected a number, found None"):
        bench.extract(bench.Figure("cpu", "cpu", "µs", bench.at_most(10)), RAW)
    with pytest.raises(bench.FigureMissing, match="no 'nothing'"):
        bench.extract(bench.Figure("accuracy", bench.percent("nothing"), "%"), RAW)


def test_targets_compare_in_their_direction(bench: ModuleType) -> None:
    assert bench.at_most(5).met(5.0) and not bench.at_most(5).met(5.01)
    assert bench.at_least(50_000).met(50_000) and not bench.at_least(50_000).met(49_999)
    assert bench.equals(0).met(0) and not bench.equals(0).met(1)
    assert bench.equals(True).met(True) and not bench.equals(True).met(False)
    assert bench.at_most(500).describe("ms") == "≤ 500 ms"
    assert bench.at_least(50_000).describe("events/s") == "≥ 50,000 events/s"
    assert bench.at_least(99.5).describe("%") == "≥ 99.5%"
    assert bench.equals(0).describe("") == "= 0"
    assert bench.equals(True).describe("") == "yes"


def test_judging_gives_met_missed_no_target_and_never_compares_quick_figures(bench: ModuleType) -> None:
    fast = bench.Figure("time", "t", "ms", bench.at_most(10))
    assert bench.judge(fast, 9.9, quick=False) == "met"
    assert bench.judge(fast, 10.1, quick=False) == "missed"
    assert bench.judge(bench.Figure("time", "t", "ms"), 10.1, quick=False) == "no target"
    assert bench.judge(fast, 10.1, quick=True) == "not compared"


def test_evaluate_judges_every_figure_and_skips_full_only_figures_when_quick(bench: ModuleType) -> None:
    benchmark = bench.Benchmark("fake", "fake.py", figures=(
        bench.Figure("median", "full.median", "ms", bench.at_most(5)),
        bench.Figure("best", "full.best", "ms", bench.at_most(10)),
        bench.Figure("p50", "full.p50", "ms"),
        bench.Figure("rank", bench.percent("rank"), "%", quick=False),
    ))  # fmt: skip
    full = bench.evaluate(benchmark, RAW, quick=False)
    assert [result.status for result in full] == ["missed", "met", "missing", "no target"]
    quick = bench.evaluate(benchmark, RAW, quick=True)
    assert [result.status for result in quick] == ["not compared", "not compared", "missing"]


def test_values_are_shown_with_three_significant_digits_and_thousands_separators(bench: ModuleType) -> None:
    assert bench.format_value(5.598, "ms") == "5.6 ms"
    assert bench.format_value(0.2874, "ms") == "0.287 ms"
    assert bench.format_value(63530, "events/s") == "63,530 events/s"
    assert bench.format_value(100.0, "%") == "100%"
    assert bench.format_value(0, "") == "0"
    assert bench.format_value(True, "") == "yes"
    assert bench.format_value(None, "µs") == "—"


# ------------------------------------------------------------------------------------------------ the Markdown section


DOC = """# Benchmarks

Intro written by hand.

<!-- bench:begin -->
old table
<!-- bench:end -->

## Odds

Hand-written explanation | with a pipe.
"""


def test_the_section_between_the_markers_is_replaced_and_the_rest_kept(bench: ModuleType) -> None:
    rewritten = bench.replace_section(DOC, "| new | table |\n")
    assert "old table" not in rewritten
    assert rewritten.startswith("# Benchmarks\n\nIntro written by hand.\n\n<!-- bench:begin -->\n| new | table |\n")
    assert rewritten.endswith("<!-- bench:end -->\n\n## Odds\n\nHand-written explanation | with a pipe.\n")
    assert bench.replace_section(rewritten, "| new | table |") == rewritten  # the same section twice: no drift


@pytest.mark.parametrize(
    "text",
    ["# Benchmarks\nno markers\n", "<!-- bench:begin -->\nno end\n", "<!-- bench:end -->\n<!-- bench:begin -->\n"],
)
def test_without_both_markers_in_order_the_rewrite_fails_naming_them(bench: ModuleType, text: str) -> None:
    with pytest.raises(bench.MarkersMissing, match="expected <!-- bench:begin --> and then <!-- bench:end -->"):
        bench.replace_section(text, "table")


def test_markdown_is_written_into_the_markers_or_as_a_new_file(bench: ModuleType, tmp_path: Path) -> None:
    existing = tmp_path / "benchmarks.md"
    existing.write_text(DOC)
    bench.write_markdown(existing, "| a | b |")
    assert "| a | b |" in existing.read_text() and "## Odds" in existing.read_text()
    fresh = tmp_path / "new" / "section.md"
    bench.write_markdown(fresh, "| a | b |")
    assert fresh.read_text() == "<!-- bench:begin -->\n| a | b |\n<!-- bench:end -->\n"
    unmarked = tmp_path / "unmarked.md"
    unmarked.write_text("# nothing to rewrite\n")
    with pytest.raises(bench.MarkersMissing, match=r"unmarked\.md"):
        bench.check_markdown(unmarked)


# ------------------------------------------------------------------------------------------------ running scripts


def test_a_script_that_fails_prints_no_json_or_hangs_is_reported_failed(bench: ModuleType, tmp_path: Path) -> None:
    crash = write_script(
        tmp_path, "crash.py", "import sys\nprint('starting', file=sys.stderr)\nraise SystemExit('boom')\n"
    )
    text = write_script(tmp_path, "text.py", "print('42 ms, all good')\n")
    array = write_script(tmp_path, "array.py", "print('[1, 2]')\n")
    hang = write_script(tmp_path, "hang.py", "import time\ntime.sleep(30)\n")
    figure = bench.Figure("t", "t", "ms", bench.at_most(1))

    crashed = bench.run_benchmark(bench.Benchmark("crash", crash, (figure,)), quick=False, bench_dir=tmp_path)
    assert crashed.status == "failed" and crashed.exit_code == 1
    assert "starting" in crashed.stderr_tail and "boom" in crashed.stderr_tail
    assert "did not print one JSON object" in crashed.error
    no_json = bench.run_benchmark(bench.Benchmark("text", text, (figure,)), quick=False, bench_dir=tmp_path)
    assert no_json.status == "failed" and "'42 ms, all good'" in no_json.error
    not_object = bench.run_benchmark(bench.Benchmark("array", array, (figure,)), quick=False, bench_dir=tmp_path)
    assert not_object.status == "failed" and "not an object: list" in not_object.error
    hung = bench.run_benchmark(bench.Benchmark("hang", hang, (figure,), timeout=0.5), quick=False, bench_dir=tmp_path)
    assert hung.status == "failed" and hung.error == "timed out after 0.5 s"
    assert all(bench.problems(result.to_json()) for result in (crashed, no_json, not_object, hung))


def test_figures_of_a_script_that_exits_non_zero_are_still_read(bench: ModuleType, tmp_path: Path) -> None:
    script = write_script(tmp_path, "lossy.py", "import json, sys\nprint(json.dumps({'lost': 3}))\nsys.exit(1)\n")
    benchmark = bench.Benchmark("lossy", script, (bench.Figure("messages lost", "lost", "", bench.equals(0)),))
    result = bench.run_benchmark(benchmark, quick=False, bench_dir=tmp_path)
    assert result.status == "failed" and result.error == "exit status 1"
    assert [(figure.value, figure.status) for figure in result.figures] == [(3, "missed")]
    assert bench.problems(result.to_json()) == ["lossy: failed: exit status 1", "lossy: messages lost: 3, target = 0"]


def test_a_benchmark_needing_an_unset_variable_is_skipped(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BENCH_TEST_PG_URL", raising=False)
    benchmark = bench.Benchmark("pg", "absent.py", (), requires_env=("BENCH_TEST_PG_URL",))
    result = bench.run_benchmark(benchmark, quick=False, bench_dir=tmp_path)
    assert result.status == "skipped" and result.error == "needs BENCH_TEST_PG_URL in the environment"
    assert bench.problems(result.to_json()) == []


def test_a_benchmark_needing_files_the_checkout_lacks_is_skipped_and_runs_once_they_are_there(
    bench: ModuleType, tmp_path: Path
) -> None:
    """`requires_files`: data a new machine may not have (the printed decks' renders of `camera-unseen`)."""
    folder = tmp_path / "bench"
    folder.mkdir()
    write_script(folder, "decks.py", "import json\nprint(json.dumps({'wrong': 0}))\n")
    benchmark = bench.Benchmark("decks", "decks.py", (bench.Figure("wrong", "wrong", "", bench.equals(0)),),
                                requires_files=("artifacts/decks",))  # fmt: skip
    result = bench.run_benchmark(benchmark, quick=False, bench_dir=folder)
    assert result.status == "skipped" and result.error == "needs artifacts/decks in the checkout"
    assert bench.problems(result.to_json()) == []
    (tmp_path / "artifacts" / "decks").mkdir(parents=True)
    result = bench.run_benchmark(benchmark, quick=False, bench_dir=folder)
    assert result.status == "ok" and [(figure.value, figure.status) for figure in result.figures] == [(0, "met")]
    assert next(b for b in bench.BENCHMARKS if b.name == "camera-unseen").requires_files == ("artifacts/printed-decks",)


def test_camera_designs_counts_the_confident_wrong_reads_of_index_squares_of_32_px_or_more(bench: ModuleType) -> None:
    """`camera-designs`' third figure: the confident wrong reads in `unseen_printed.py`'s size bands from 32 px up."""
    bands = {"0-24": 1, "24-32": 2, "32-40": 4, "40-52": 8, "52+": 16}
    raw = {"all": {"by_side_px": {name: {"confident_wrong": wrong, "sure_right": 5} for name, wrong in bands.items()}}}
    assert bench.large_indices_wrong(raw) == 4 + 8 + 16
    figure = next(b for b in bench.BENCHMARKS if b.name == "camera-designs").figures[2]
    assert figure.pick(raw) == 28


def fake_suite(bench: ModuleType, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry of two scripts in `folder`: the first crashes, the second meets one target and misses another."""
    folder.mkdir()
    write_script(folder, "crash.py", "raise SystemExit(2)\n")
    write_script(
        folder, "fine.py", "import json, sys\nprint(json.dumps({'ms': 4.2, 'rate': 900, 'argv': sys.argv[1:]}))\n"
    )
    monkeypatch.setattr(bench, "BENCH", folder)
    monkeypatch.setattr(bench, "BENCHMARKS", (
        bench.Benchmark("crash", "crash.py", (bench.Figure("t", "t", "ms", bench.at_most(1)),)),
        bench.Benchmark("fine", "fine.py", args=("--full",), quick_args=("--small",), figures=(
            bench.Figure("latency", "ms", "ms", bench.at_most(5)),
            bench.Figure("rate", "rate", "rounds/s", bench.at_least(1_000)),
        )),
    ))  # fmt: skip


def test_a_run_goes_on_after_a_failure_writes_json_and_markdown_and_exits_1(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_suite(bench, tmp_path / "bench", monkeypatch)
    doc = tmp_path / "benchmarks.md"
    doc.write_text(DOC)
    assert bench.main(["--json", str(tmp_path / "results.json"), "--markdown", str(doc)]) == 1
    report = json.loads((tmp_path / "results.json").read_text())
    assert set(report["machine"]) >= {"cpu", "cores", "memory_gib", "python", "os"}
    assert report["commit"] and report["time_utc"].endswith("UTC") and report["ok"] is False
    crash, fine = report["benchmarks"]
    assert crash["status"] == "failed" and crash["error"].startswith("exit status 2")
    assert fine["status"] == "ok" and fine["raw"]["argv"] == ["--full"]
    assert [(f["label"], f["status"], f["target"]) for f in fine["figures"]] == [
        ("latency", "met", {"op": "<=", "value": 5}),
        ("rate", "missed", {"op": ">=", "value": 1_000}),
    ]
    text = doc.read_text()
    assert "| fine | latency | ≤ 5 ms | 4.2 ms | yes |" in text
    assert "| fine | rate | ≥ 1,000 rounds/s | 900 rounds/s | **no** |" in text
    assert "| crash | failed: exit status 2" in text
    assert text.startswith("# Benchmarks\n\nIntro written by hand.\n") and text.endswith(
        DOC[DOC.index("<!-- bench:end") :]
    )
    assert "rate: 900 rounds/s, target ≥ 1,000 rounds/s" in capsys.readouterr().out


def test_a_quick_run_uses_the_small_sizes_and_compares_nothing(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_suite(bench, tmp_path / "bench", monkeypatch)
    assert bench.main(["--quick", "--only", "fine", "--json", str(tmp_path / "quick.json")]) == 0
    report = json.loads((tmp_path / "quick.json").read_text())
    (fine,) = report["benchmarks"]
    assert fine["raw"]["argv"] == ["--small"] and {f["status"] for f in fine["figures"]} == {"not compared"}


def test_a_markdown_file_without_markers_stops_the_run_before_any_benchmark(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench, "BENCHMARKS", ())
    doc = tmp_path / "plain.md"
    doc.write_text("# no markers\n")
    assert bench.main(["--markdown", str(doc), "--json", str(tmp_path / "r.json")]) == 2
    assert "plain.md: expected <!-- bench:begin -->" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists() and doc.read_text() == "# no markers\n"


def test_a_rerun_alone_is_merged_into_the_last_full_run(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_suite(bench, tmp_path / "bench", monkeypatch)
    results, doc = tmp_path / "results.json", tmp_path / "benchmarks.md"
    doc.write_text(DOC)
    assert bench.main(["--json", str(results), "--markdown", str(doc)]) == 1
    full = json.loads(results.read_text())
    write_script(tmp_path / "bench", "crash.py", "import json\nprint(json.dumps({'t': 0.5}))\n")  # fixed meanwhile
    assert bench.main(["--only", "crash", "--merge", "--json", str(results), "--markdown", str(doc)]) == 1
    merged = json.loads(results.read_text())
    assert [entry["name"] for entry in merged["benchmarks"]] == ["crash", "fine"]  # the registry's order
    assert merged["benchmarks"][0]["status"] == "ok" and merged["benchmarks"][1] == full["benchmarks"][1]
    assert merged["commit"] == full["commit"] and merged["time_utc"] == full["time_utc"]
    assert [rerun["benchmarks"] for rerun in merged["reruns"]] == [["crash"]]
    assert merged["problems"] == ["fine: rate: 900 rounds/s, target ≥ 1,000 rounds/s"]  # judged again, merged
    text = doc.read_text()
    assert "| crash | t | ≤ 1 ms | 0.5 ms | yes |" in text and "| crash | failed" not in text
    assert "Re-run alone afterwards, figures replaced: crash," in text


def test_merging_needs_a_full_run_of_this_machine(bench: ModuleType, tmp_path: Path) -> None:
    host = bench.machine()
    with pytest.raises(bench.MergeError, match="quick run"):
        bench.check_mergeable({"quick": True, "machine": host}, host)
    with pytest.raises(bench.MergeError, match="another machine"):
        bench.check_mergeable({"quick": False, "machine": host | {"cores": 64}}, host)
    with pytest.raises(bench.MergeError, match="run the whole suite first"):
        bench.read_previous(tmp_path / "absent.json")
    bench.check_mergeable({"quick": False, "machine": host}, host)


def test_an_unknown_benchmark_name_is_a_usage_error(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--only", "nonesuch"])
    assert exit_info.value.code == 2
    assert "unknown benchmark nonesuch: choose from odds, engine" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------ `studio bench`


def test_studio_bench_without_a_bench_folder_says_it_needs_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(StudioError, match="runs the benchmarks of a checkout"):
        load_runner(tmp_path / "bench")


def test_studio_bench_help_is_bench_run_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        studio(["bench", "--help"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("usage: studio bench [-h] [--only NAME [NAME ...]] [--quick]")


def test_studio_bench_quick_runs_the_real_odds_benchmark(tmp_path: Path) -> None:
    results, doc = tmp_path / "results.json", tmp_path / "benchmarks.md"
    assert studio(["bench", "--quick", "--only", "odds", "--json", str(results), "--markdown", str(doc)]) == 0
    report = json.loads(results.read_text())
    assert report["quick"] is True and report["command"].startswith("studio bench --quick")
    (odds,) = report["benchmarks"]
    assert odds["status"] == "ok" and odds["raw"]["repeats"] == 3
    assert {figure["status"] for figure in odds["figures"]} == {"not compared"}  # the analysis and PyBaccarat's
    assert 0 < odds["figures"][0]["value"] < 500
    assert "| odds | exact analysis of every bet, full 8-deck shoe, median | ≤ 500 ms |" in doc.read_text()
    assert "Quick run (`--quick`)" in doc.read_text()


def test_each_run_keeps_its_load_and_one_whose_load_moved_by_more_than_1_runs_again(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_suite(bench, tmp_path / "bench", monkeypatch)
    loads = iter([0.5, 0.7, 0.4, 2.0, 2.1, 1.9])  # fine: 0.4 -> 2.0 moved, run again: 2.1 -> 1.9
    monkeypatch.setattr(bench, "load_average", lambda: next(loads))
    crash, fine = bench.run_all(bench.BENCHMARKS, quick=False)
    assert crash["status"] == "failed" and crash["load_average"] == {"before": 0.5, "after": 0.7}
    assert fine["status"] == "ok"
    assert fine["load_average"] == {
        "before": 2.1,
        "after": 1.9,
        "runs": [{"before": 0.4, "after": 2.0}, {"before": 2.1, "after": 1.9}],
    }
    text = bench.markdown_section({"machine": {"cpu": "x", "cores": 2, "memory_gib": 1, "python": "3", "os": "y",
                                               "load_average": [0.5]}, "commit": "c", "time_utc": "t",
                                   "command": "run", "results_file": "r", "quick": False, "problems": [],
                                   "benchmarks": [crash, fine]})  # fmt: skip
    assert "crash 0.5 → 0.7; fine 2.1 → 1.9 (run twice: the load moved by more than 1)" in text


def test_a_benchmark_that_loads_the_machine_is_not_run_again_for_its_own_load(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load test moves the load average by itself: it runs once, its loads kept, where another benchmark whose run
    moved the load as much runs twice. The registry's two load tests are marked so, and nothing else is."""
    registry = bench.BENCHMARKS
    assert {benchmark.name for benchmark in registry if benchmark.loads_the_machine} == {"load", "load-redis"}
    fake_suite(bench, tmp_path / "bench", monkeypatch)
    fine = bench.BENCHMARKS[1]
    loaded = bench.Benchmark(fine.name, fine.script, fine.figures, args=fine.args, loads_the_machine=True)
    runs = []
    real_run = bench.run_benchmark
    monkeypatch.setattr(bench, "run_benchmark", lambda benchmark, quick: runs.append(1) or real_run(benchmark, quick))
    loads = iter([0.1, 1.5, 0.1, 1.5, 1.4, 1.4])  # each run: 0.1 -> 1.5 (moved by more than 1), then 1.4 -> 1.4
    monkeypatch.setattr(bench, "load_average", lambda: next(loads))
    entry = bench.run_measured(loaded, quick=False)
    assert len(runs) == 1 and entry["status"] == "ok"
    assert entry["load_average"] == {"before": 0.1, "after": 1.5}
    again = bench.run_measured(fine, quick=False)
    assert len(runs) == 3 and again["load_average"]["runs"] == [{"before": 0.1, "after": 1.5},
                                                                {"before": 1.4, "after": 1.4}]  # fmt: skip
