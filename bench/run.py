"""Run every benchmark of bench/, compare each figure with its target, and write the results as JSON and Markdown.

    .venv/bin/python bench/run.py [--only NAME ...] [--merge] [--quick] [--json PATH] [--markdown PATH]
    .venv/bin/studio bench [the same options]

Each benchmark is a script in this folder that prints one JSON object. This runner starts each one as a subprocess
(the same Python, from the repository root), picks the figures named in `BENCHMARKS` out of its JSON and compares
each with its target. A script that exits non-zero, times out or prints anything but one JSON object is reported as
failed, with the tail of its stderr, and the others still run. The exit status is 1 if any benchmark failed, any
figure is missing from a script's output or any target was missed, and 0 otherwise.

What it writes:

- JSON (`--json`, default `artifacts/bench/results.json`; `results-quick.json` for a quick run): the machine, the
  git commit, the UTC time, the command, and for every benchmark its raw JSON and each figure with its target and
  whether it was met.
- Markdown: the section of docs/benchmarks.md between `<!-- bench:begin -->` and `<!-- bench:end -->` is rewritten
  with the machine, the commit, the date, the command and one table (benchmark | figure | target | measured | met);
  the text outside the markers is left as it is. Only a full run (no `--quick`, no `--only`) rewrites
  docs/benchmarks.md; `--markdown PATH` writes the section to PATH instead (into its markers, or a new file).

The machine is shared with other work, which shows in latency tails first. Each benchmark's entry keeps the 1-minute
load average before and after it (also printed on stderr); a benchmark whose run moved it by more than 1 is run once
more, and the run whose load moved least is kept (both loads are in its entry). The load tests, which keep both cores
busy by design, are not run again for the load they make themselves (`loads_the_machine`). `--only NAME ... --merge`
re-runs some benchmarks alone and replaces their entries in the last full run's JSON (same machine; the re-run is
noted, with its time, commit and load average), then rewrites docs/benchmarks.md from the merged results.

`--quick` runs each script with small sizes (`quick_args`) so the suite takes seconds: a smoke test of the scripts
and of this registry. Quick figures are not compared with targets, and only figures marked `quick=True` are read.

Adding a benchmark
------------------
1. Write `bench/NAME_bench.py`: it prints one JSON object on stdout (progress, if any, on stderr) and exits 0 when it
   ran. Give it options for small sizes, keeping the defaults at the figures the targets are about.
2. Append a `Benchmark` to `BENCHMARKS` below: a short `name` (for `--only`), the `script`, its `args` for a full run
   and `quick_args` for `--quick`, and one `Figure` per reported figure: a label, where the value is in the script's
   JSON (a dotted path such as `"append.p99_ms"`, or a function of the JSON such as `percent("synthetic.rank")`), the
   unit, and the target: `at_most(5.0)`, `at_least(50_000)`, `equals(0)` or none. `quick=False` marks a figure that
   a quick run does not produce. A benchmark that needs a service names the environment variables it reads in
   `requires_env` (for instance a PostgreSQL URL), which its arguments may use as `{NAME}`: without them it is
   reported as skipped, not failed; so is one whose `requires_files` (paths under the checkout, data a new machine
   may lack) are missing. `timeout` (seconds) bounds a run.
3. Run `bench/run.py --quick --only NAME` to check the figures are found, then a full `bench/run.py` to refresh
   docs/benchmarks.md, and add a hand-written section there saying what the benchmark measures and what limits it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
DOCS = ROOT / "docs" / "benchmarks.md"
RESULTS = ROOT / "artifacts" / "bench" / "results.json"
QUICK_RESULTS = ROOT / "artifacts" / "bench" / "results-quick.json"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
STDERR_TAIL_LINES = 15

Picker = Callable[[Mapping[str, Any]], Any]
Op = Literal["<=", ">=", "=="]
Status = Literal["met", "missed", "no target", "not compared", "missing"]


# ---------------------------------------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Target:
    """What a figure must be: at most, at least, or exactly `value`."""

    op: Op
    value: float | bool

    def met(self, measured: float | bool) -> bool:
        if self.op == "<=":
            return measured <= self.value
        if self.op == ">=":
            return measured >= self.value
        return measured == self.value

    def describe(self, unit: str) -> str:
        if isinstance(self.value, bool):
            return format_value(self.value, "")
        sign = {"<=": "≤", ">=": "≥", "==": "="}[self.op]
        return f"{sign} {format_value(self.value, unit)}"


def at_most(value: float) -> Target:
    return Target("<=", value)


def at_least(value: float) -> Target:
    return Target(">=", value)


def equals(value: float | bool) -> Target:
    return Target("==", value)


@dataclass(frozen=True)
class Figure:
    """One figure a benchmark reports: where it is in the script's JSON, its unit and its target (None: no target)."""

    label: str
    pick: str | Picker
    unit: str = ""
    target: Target | None = None
    quick: bool = True  # a --quick run of the script reports it too


@dataclass(frozen=True)
class Benchmark:
    """A script of bench/ and the figures read from its JSON."""

    name: str
    script: str
    figures: tuple[Figure, ...]
    args: tuple[str, ...] = ()
    quick_args: tuple[str, ...] = ()
    requires_env: tuple[str, ...] = ()
    # Paths under the checkout that must exist (data a script reads that a new machine may not have yet, such as
    # rendered training decks): without them it is reported as skipped, not failed.
    requires_files: tuple[str, ...] = ()
    timeout: float = 900.0
    # It keeps the cores busy by design (the load tests): the load average it moves is its own, so it is not run again
    # for it (`run_measured`); its loads before and after are kept all the same.
    loads_the_machine: bool = False


def percent(path: str) -> Picker:
    """A picker for a fraction in the JSON (0.995), as a percentage (99.5)."""
    return lambda raw: 100 * dig(raw, path)


def large_indices_wrong(raw: Mapping[str, Any]) -> int:
    """`camera-designs`: the confident wrong reads of index squares of 32 px or more (the size under which `studio
    camera check` warns), from the bands of `unseen_printed.py`'s `by_side_px`."""
    bands = dig(raw, "all.by_side_px")  # named "32-40", ..., "52+"
    lower = {name: int(name.split("-")[0].rstrip("+")) for name in bands}
    return sum(int(band["confident_wrong"]) for name, band in bands.items() if lower[name] >= 32)


LOAD_CHANGE = 1.0  # a benchmark whose run moved the 1-minute load average by more than this is run again
POSTGRES = "STUDIO_BENCH_POSTGRES"  # a PostgreSQL URL to benchmark on (a database the benchmarks may write to)
LOAD_FIGURES = (
    Figure("20 tables at 10× speed, 2,000 subscribers, 10 min: messages lost", "lost", "", equals(0)),
    Figure("messages duplicated", "duplicated", "", equals(0)),
    Figure("messages out of order", "out_of_order", "", equals(0)),
    Figure("record logged → subscriber, p50", "latency_ms.p50", "ms"),
    Figure("record logged → subscriber, p99", "latency_ms.p99", "ms", at_most(100)),
    Figure("studio process memory, peak", "memory_mb.studio.peak", "MB"),
)

SERIAL_LINKS = ("smart-shoe@9600", "smart-shoe@115200", "line@9600", "line@115200")

BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("odds", "odds_bench.py", quick_args=("--repeats", "3", "--shoes", "2"), figures=(
        Figure("exact analysis of every bet, full 8-deck shoe, median", "full_8_decks_ms.median", "ms", at_most(500)),
        Figure("exact analysis, depleted shoe (60 cards out), median", "depleted_ms.median", "ms", at_most(50)),
        Figure("PyBaccarat's odds calculator, full 8-deck shoe, same run", "pybaccarat.full_8_decks_ms", "ms"),
        Figure("PyBaccarat's odds calculator ÷ studio's analysis, same run", "pybaccarat.times_studio", "×"),
    )),
    Benchmark("engine", "engine_bench.py", quick_args=("--shoes", "2"), figures=(
        Figure("rounds/s through the procedure engine in memory", "engine.rounds_per_second", "rounds/s",
               at_least(25_000)),
        Figure("PyBaccarat's bare game loop, same shoes, same run", "pybaccarat.rounds_per_second", "rounds/s"),
        Figure("PyBaccarat's bare game loop ÷ the engine, same run", "pybaccarat.times_engine", "×"),
        Figure("rounds/s through TableService, hash-chained memory log", "service_with_log.rounds_per_second",
               "rounds/s"),
        Figure("log replay into a table (SQLite)", "replay.replay_events_per_second", "events/s", at_least(50_000)),
        Figure("audit: hash chain + replay + result checks", "replay.audit_events_per_second", "events/s"),
        Figure("card command → durable on SQLite, p99", "card_to_durable_ms.p99", "ms", at_most(5)),
        Figure("card command → durable on SQLite, p50", "card_to_durable_ms.p50", "ms"),
        Figure("write + fdatasync of 100 bytes, same disk, same run, p99", "card_to_durable_ms.fsync_100_bytes.p99",
               "ms"),
        Figure("card command → durable p99 ÷ write + fdatasync p99", "card_to_durable_ms.p99_over_fsync_p99", "×",
               at_most(2)),
        Figure("the same once the log's WAL has wrapped (the rest of a day), p99",
               "card_to_durable_ms.after_wal_wrapped.p99", "ms"),
        Figure("the same ÷ write + fdatasync p99, same run", "card_to_durable_ms.after_wal_wrapped.p99_over_fsync_p99",
               "×"),
    )),
    Benchmark("store", "store_bench.py", quick_args=("--appends", "200", "--replay", "5000"), figures=(
        Figure("append one record, durable, p99", "append.p99_ms", "ms", at_most(5)),
        Figure("append one record, durable, p50", "append.p50_ms", "ms"),
        Figure("read + verify the hash chain of 100,000 records", "replay.events_per_s", "events/s", at_least(50_000)),
        Figure("the same, on the stored text (as `studio log verify` checks it)", "replay_stored.events_per_s",
               "events/s"),
    )),
    # The first run makes the table-year's log (about 7 minutes) and keeps it under artifacts/bench/audit-logs/.
    Benchmark("audit", "audit_bench.py", quick_args=("--events", "60000"), timeout=2_400, figures=(
        Figure("`studio log verify`, a table-year's log (4.4 million events, SQLite): chain + replay + results",
               "verify.events_per_second", "events/s", at_least(200_000)),
        Figure("the same: wall time, start-up included", "verify.seconds", "s"),
    )),
    Benchmark("serial", "serial_bench.py", quick_args=("--frames", "40"), figures=tuple(
        Figure(f"{link} baud: frame → card report beyond wire time, p99", f"{link}.overhead_p99_ms", "ms", at_most(1))
        for link in SERIAL_LINKS
    )),
    Benchmark("camera", "camera_bench.py", quick_args=("--quick", "--frames", "3", "--synthetic-frames", "6",
                                                       "--repeats", "1"), figures=(
        Figure("shipped reader: studio frames 1280×720 (real held-out cards, felt, 0–50°), read right",
               percent("shipped_reader.studio_frames.1280x720.read_right"), "%", at_least(99.5)),
        Figure("shipped reader: studio frames 1280×720, confident wrong reads",
               "shipped_reader.studio_frames.1280x720.confident_wrong", "", equals(0)),
        Figure("shipped reader: studio frames 1920×1080, read right",
               percent("shipped_reader.studio_frames.1920x1080.read_right"), "%", at_least(99.5)),
        Figure("shipped reader: studio frames 1920×1080, confident wrong reads",
               "shipped_reader.studio_frames.1920x1080.confident_wrong", "", equals(0)),
        Figure("shipped reader, studio deck enrolled: studio frames 1280×720, read right",
               percent("shipped_reader.studio_frames_enrolled.1280x720.read_right"), "%", at_least(99.5)),
        Figure("shipped reader, studio deck enrolled: studio frames 1280×720, confident wrong reads",
               "shipped_reader.studio_frames_enrolled.1280x720.confident_wrong", "", equals(0)),
        Figure("shipped reader, studio deck enrolled: studio frames 1920×1080, read right",
               percent("shipped_reader.studio_frames_enrolled.1920x1080.read_right"), "%", at_least(99.5)),
        Figure("shipped reader, studio deck enrolled: studio frames 1920×1080, confident wrong reads",
               "shipped_reader.studio_frames_enrolled.1920x1080.confident_wrong", "", equals(0)),
        Figure("shipped reader: real top-down webcam photos held out (7 photos, 28 cards, no enrollment), read right",
               percent("shipped_reader.real_top_down.test_photos.read_right"), "%", at_least(99.5)),
        Figure("shipped reader: real top-down webcam photos held out, confident wrong reads",
               "shipped_reader.real_top_down.test_photos.confident_wrong", "", equals(0)),
        Figure("shipped reader: real phone photos held out (60 photos, 115 cards, fanned, slanted), read right",
               percent("shipped_reader.real_top_down.phone_photos.read_right"), "%"),
        Figure("shipped reader: real phone photos held out, confident wrong reads",
               "shipped_reader.real_top_down.phone_photos.confident_wrong", "", equals(0)),
        Figure("shipped reader: held-out real webcam scenes, labelled cards read right",
               percent("shipped_reader.webcam_scenes_held_out.read_right"), "%", at_least(90)),
        Figure("shipped reader: held-out real webcam scenes, cards invented",
               percent("shipped_reader.webcam_scenes_held_out.invented_rate"), "%", at_most(2)),
        Figure("shipped reader: held-out real webcam scenes, confident wrong reads",
               "shipped_reader.webcam_scenes_held_out.confident_wrong", "", equals(0)),
        Figure("shipped reader: roboflow phone photos held out, white deck (58 photos, 71 cards), read right",
               percent("shipped_reader.roboflow_phone_photos_held_out.white_deck.read_right"), "%"),
        Figure("shipped reader: roboflow phone photos held out, white deck, confident wrong reads",
               "shipped_reader.roboflow_phone_photos_held_out.white_deck.confident_wrong", "", equals(0)),
        Figure("shipped reader: roboflow phone photos held out, black-and-gold deck (24 photos, 61 cards), read right",
               percent("shipped_reader.roboflow_phone_photos_held_out.black_and_gold_deck.read_right"), "%"),
        Figure("shipped reader: roboflow phone photos held out, black-and-gold deck, confident wrong reads",
               "shipped_reader.roboflow_phone_photos_held_out.black_and_gold_deck.confident_wrong", "", equals(0)),
        Figure("shipped reader: real 1280×720 frame, two zones, median",
               "shipped_reader.time_per_frame_ms.in_zones.median", "ms", at_most(15)),
        Figure("shipped reader: real 1280×720 frame, two zones, p90", "shipped_reader.time_per_frame_ms.in_zones.p90",
               "ms"),
        Figure("the same, a second camera reading whole frames on the other core, median",
               "shipped_reader.time_per_frame_ms.in_zones_beside_a_second_camera.median", "ms"),
        Figure("the same, a second camera reading whole frames on the other core, p90",
               "shipped_reader.time_per_frame_ms.in_zones_beside_a_second_camera.p90", "ms"),
        Figure("the same, two more cameras reading whole frames (both cores shared), median",
               "shipped_reader.time_per_frame_ms.in_zones_beside_two_more_cameras.median", "ms"),
        Figure("the same, two more cameras reading whole frames (both cores shared), p90",
               "shipped_reader.time_per_frame_ms.in_zones_beside_two_more_cameras.p90", "ms"),
        Figure("shipped reader: real 1280×720 frames of a still table (each scene a second, its own noise each frame),"
               " two zones, as the camera source reads a stream, median",
               "shipped_reader.time_per_frame_ms.in_zones_still_table.median", "ms"),
        Figure("the same, p90", "shipped_reader.time_per_frame_ms.in_zones_still_table.p90", "ms"),
        Figure("the same, mean (the frames read included)",
               "shipped_reader.time_per_frame_ms.in_zones_still_table.mean", "ms"),
        Figure("the same, frames read again (the rest given the last reading's cards)",
               "shipped_reader.time_per_frame_ms.in_zones_still_table.read_again", ""),
        Figure("the same, frames", "shipped_reader.time_per_frame_ms.in_zones_still_table.frames", ""),
        Figure("shipped reader: real 1280×720 frame, read anywhere, median",
               "shipped_reader.time_per_frame_ms.anywhere.median", "ms", at_most(30)),
        Figure("shipped reader: real 1280×720 frame, read anywhere, p90",
               "shipped_reader.time_per_frame_ms.anywhere.p90", "ms"),
        Figure("shipped reader: studio render 1280×720 (six cards, felt or pale cloth), read anywhere, median",
               "shipped_reader.studio_frames.1280x720.time_ms.median", "ms"),
        Figure("shipped reader: studio render 1280×720, read anywhere, p90",
               "shipped_reader.studio_frames.1280x720.time_ms.p90", "ms"),
        Figure("enrolled templates: 1280×720 synthetic frame, 6 cards, read anywhere, median",
               "time_per_frame_ms.studio_anywhere.median", "ms", at_most(10)),
        Figure("enrolled templates: 1280×720 synthetic frame, 6 cards, read anywhere, p90",
               "time_per_frame_ms.studio_anywhere.p90", "ms"),
        Figure("enrolled templates: 1280×720 synthetic frame, two zones, median",
               "time_per_frame_ms.studio_in_zones.median", "ms", at_most(10)),
        Figure("enrolled templates: synthetic frames, rank and suit right", percent("synthetic.rank_and_suit"), "%",
               at_least(99.5)),
        Figure("enrolled templates: held-out real photos, rank and suit right",
               percent("real_top_down.held_out.rank_and_suit"), "%", at_least(95)),
        Figure("real photos, 5-fold cross-validation, rank right", percent("real_top_down.cross_validated.rank"),
               "%", quick=False),
        Figure("real photos, 5-fold cross-validation, suit right", percent("real_top_down.cross_validated.suit"),
               "%", quick=False),
    )),
    # Confidence on cards no choice was made on: the printed decks' cards the network's training left out (issue 11,
    # point 6); needs those decks rendered (`scripts/train-camera --printed 8` renders them into the folder named).
    Benchmark("camera-unseen", "unseen_printed.py", requires_files=("artifacts/printed-decks",),
              quick_args=("--scenes", "3"), figures=(
        Figure("shipped reader on 300 scenes of the 619 printed cards its training left out: reads surely right",
               "sure_right", ""),
        Figure("the same: confident wrong reads (a sure read of another card)", "confident_wrong", "", equals(0)),
    )),
    # The same on whole deck designs no training used (two classic decks fetched once from the npm registry and
    # rendered by `rsvg-convert`: `.venv/bin/python bench/unseen_printed.py --designs new` fills the folder named).
    Benchmark("camera-designs", "unseen_printed.py", args=("--designs", "new"),
              requires_files=("artifacts/unseen-designs",), quick_args=("--designs", "new", "--scenes", "3"), figures=(
        Figure("shipped reader on 300 scenes of each of 2 deck designs no training used: reads surely right",
               "all.sure_right", ""),
        Figure("the same: confident wrong reads (a sure read of another card)", "all.confident_wrong", "", equals(0)),
        Figure("the same, reads of index squares of 32 px or more: confident wrong reads", large_indices_wrong, "",
               equals(0)),
    )),
    Benchmark("camera-proposals", "proposal_recall.py", quick_args=("--scenes", "2"), figures=(
        Figure("where indices are found (no network): labelled indices framed, validation webcam scenes",
               percent("webcam_scenes.recall"), "%"),
        Figure("the same, 60 studio scenes composed from the validation photos (indices 24–72 px, 0–50°)",
               percent("composed_scenes.recall"), "%"),
        Figure("the same, indices of 24–36 px", percent("composed_scenes.by_side_px.24-36.recall"), "%"),
    )),
    Benchmark("feed", "feed_bench.py", quick_args=("--subscribers", "20", "--cards", "10"), figures=(
        Figure("card read → each of 1,000 subscribers, p99", "card_to_subscriber_ms.p99", "ms", at_most(30)),
        Figure("card read → each of 1,000 subscribers, p50", "card_to_subscriber_ms.p50", "ms"),
        Figure("card read → first of 1,000 subscribers (before the fan-out), p50", "card_at_first_subscriber_ms.p50",
               "ms"),
        Figure("messages lost", "messages_lost", "", equals(0)),
        Figure("messages duplicated", "messages_duplicated", "", equals(0)),
        Figure("subscribers that got messages out of order", "subscribers_out_of_order", "", equals(0)),
        Figure("server CPU per delivered message", "server_cpu_us_per_delivery", "µs"),
    )),
    Benchmark("feed-5000", "feed_bench.py", args=("--subscribers", "5000"),
              quick_args=("--subscribers", "100", "--cards", "10"), figures=(
        Figure("card read → each of 5,000 subscribers on one server, p99", "card_to_subscriber_ms.p99", "ms",
               at_most(100)),
        Figure("card read → each of 5,000 subscribers, p50", "card_to_subscriber_ms.p50", "ms"),
        Figure("card read → last of 5,000 subscribers, p50", "card_at_last_subscriber_ms.p50", "ms"),
        Figure("messages lost", "messages_lost", "", equals(0)),
        Figure("messages duplicated", "messages_duplicated", "", equals(0)),
        Figure("subscribers that got messages out of order", "subscribers_out_of_order", "", equals(0)),
        Figure("server CPU per delivered message", "server_cpu_us_per_delivery", "µs"),
    )),
    Benchmark("store-postgresql", "store_bench.py", requires_env=(POSTGRES,), args=("--database", f"{{{POSTGRES}}}"),
              quick_args=("--database", f"{{{POSTGRES}}}", "--appends", "200", "--replay", "5000"), figures=(
        Figure("PostgreSQL: append one record, durable, p99", "append.p99_ms", "ms", at_most(5)),
        Figure("PostgreSQL: append one record, durable, p50", "append.p50_ms", "ms"),
        Figure("PostgreSQL: read + verify the hash chain of 100,000 records", "replay.events_per_s", "events/s",
               at_least(50_000)),
    )),
    Benchmark("settlement", "settlement_bench.py", quick_args=("--bets", "500", "--players", "100"), figures=(
        Figure("settle 10,000 bets from 2,000 players (SQLite)", "settle_seconds", "s", at_most(1)),
        Figure("place one bet (its own durable transaction)", "place_ms_per_bet", "ms"),
        Figure("every balance equals its ledger", "balances_equal_ledger", "", equals(True)),
    )),
    Benchmark("signin", "signin_bench.py", quick_args=("--sign-ins", "20", "--background-failures", "100"), figures=(
        Figure("sign-in, valid password, lockout bookkeeping and access log, p99", "valid.p99_ms", "ms",
               at_most(100)),
        Figure("sign-in, valid password, p50", "valid.p50_ms", "ms"),
        Figure("sign-in refused during a lockout, p50", "locked_out.p50_ms", "ms"),
    )),
    Benchmark("settlement-postgresql", "settlement_bench.py", requires_env=(POSTGRES,),
              args=("--database", f"{{{POSTGRES}}}"),
              quick_args=("--database", f"{{{POSTGRES}}}", "--bets", "500", "--players", "100"), figures=(
        Figure("PostgreSQL: settle 10,000 bets from 2,000 players", "settle_seconds", "s", at_most(1)),
        Figure("PostgreSQL: place one bet (its own durable transaction)", "place_ms_per_bet", "ms"),
        Figure("every balance equals its ledger", "balances_equal_ledger", "", equals(True)),
    )),
    Benchmark("bet-burst", "bet_burst_bench.py", timeout=600, args=("--game-servers", "4", "--batch-ms", "20"),
              quick_args=("--bets", "400", "--players", "200", "--betting-seconds", "6", "--game-servers", "2",
                          "--batch-ms", "20"), figures=(
        Figure("10,000 bets from 5,000 players in the last 2 s of the window, sent by 4 game servers in 20 ms "
               "batches (each sent 10 bets 1 s before), batch sent → durable answer, p99 (SQLite)", "answer_ms.p99",
               "ms", at_most(50)),
        Figure("the same, p50", "answer_ms.p50", "ms"),
        Figure("the same from the bet's arrival at its game server (the batching wait counted), p99",
               "answer_from_arrival_ms.p99", "ms"),
        Figure("bets accepted (of 10,000 sent)", "accepted", ""),
        Figure("every bet accepted, durable and stored before no more bets", "all_in_before_no_more_bets", "",
               equals(True)),
        Figure("accepted bets missing from the database", lambda raw: raw["accepted"] - raw["durable"], "",
               equals(0)),
        Figure("every balance equals its ledger", "balances_equal_ledger", "", equals(True)),
    )),
    Benchmark("bet-burst-cold", "bet_burst_bench.py", timeout=600,
              args=("--game-servers", "4", "--batch-ms", "20", "--warm-up", "0"),
              quick_args=("--bets", "400", "--players", "200", "--betting-seconds", "6", "--game-servers", "2",
                          "--batch-ms", "20", "--warm-up", "0"), figures=(
        Figure("the same burst as the first bets a freshly started server takes (no bet before it), p99 (SQLite)",
               "answer_ms.p99", "ms"),
        Figure("every bet accepted, durable and stored before no more bets", "all_in_before_no_more_bets", "",
               equals(True)),
    )),
    Benchmark("bet-burst-requests", "bet_burst_bench.py", timeout=600,
              quick_args=("--bets", "400", "--players", "200", "--betting-seconds", "6", "--connections", "20"),
              figures=(
        Figure("the same 10,000 bets, one HTTP request per bet (a game server per player), p99 (SQLite)",
               "answer_ms.p99", "ms"),
        Figure("the same, p50", "answer_ms.p50", "ms"),
        Figure("bets accepted (of 10,000 sent; the others refused as late)", "accepted", ""),
        Figure("accepted bets missing from the database", lambda raw: raw["accepted"] - raw["durable"], "",
               equals(0)),
        Figure("every balance equals its ledger", "balances_equal_ledger", "", equals(True)),
    )),
    Benchmark("bet-burst-postgresql", "bet_burst_bench.py", requires_env=(POSTGRES,), timeout=600,
              args=("--database", f"{{{POSTGRES}}}", "--game-servers", "4", "--batch-ms", "20"),
              quick_args=("--database", f"{{{POSTGRES}}}", "--bets", "400", "--players", "200", "--betting-seconds",
                          "6", "--game-servers", "2", "--batch-ms", "20"), figures=(
        Figure("PostgreSQL: 10,000 bets in the last 2 s of the window, 4 game servers' 20 ms batches, batch sent → "
               "durable answer, p99", "answer_ms.p99", "ms"),
        Figure("the same, p50", "answer_ms.p50", "ms"),
        Figure("the same from the bet's arrival at its game server, p99", "answer_from_arrival_ms.p99", "ms"),
        Figure("bets accepted (of 10,000 sent)", "accepted", ""),
        Figure("every bet accepted, durable and stored before no more bets", "all_in_before_no_more_bets", "",
               equals(True)),
        Figure("every balance equals its ledger", "balances_equal_ledger", "", equals(True)),
    )),
    Benchmark("load", "load_test.py", timeout=1_200, quick_args=("--tables", "3", "--subscribers", "60", "--minutes",
                                                                 "0.33"), figures=LOAD_FIGURES, loads_the_machine=True),
    Benchmark("load-redis", "load_test.py", args=("--feed-servers", "2"), timeout=1_200,
              quick_args=("--tables", "3", "--subscribers", "60", "--minutes", "0.33", "--feed-servers", "2"),
              figures=LOAD_FIGURES, loads_the_machine=True),
)  # fmt: skip


# ---------------------------------------------------------------------------------------------------------- figures


class FigureMissing(LookupError):
    """A figure's path leads nowhere in the script's JSON."""


def dig(raw: Any, path: str) -> Any:
    """The value at a dotted path ("append.p99_ms"; a number indexes a list) in a script's JSON."""
    value = raw
    for key in path.split("."):
        try:
            value = value[int(key)] if isinstance(value, list) else value[key]
        except (KeyError, IndexError, TypeError, ValueError):
            raise FigureMissing(f"no {path!r} in the output (stopped at {key!r})") from None
    return value


def extract(figure: Figure, raw: Mapping[str, Any]) -> Any:
    """The figure's value in a script's JSON; FigureMissing if it is not there or not a number (or a boolean)."""
    if isinstance(figure.pick, str):
        value = dig(raw, figure.pick)
    else:
        try:
            value = figure.pick(raw)
        except (LookupError, TypeError, ValueError) as error:
            raise FigureMissing(f"{figure.label}: {error}") from None
    if value is None and figure.target is None:
        return None  # an optional figure the script could not measure here
    if not isinstance(value, int | float):  # bool is an int
        raise FigureMissing(f"{figure.label}: expected a number, found {value!r}")
    return value


def judge(figure: Figure, value: Any, quick: bool) -> Status:
    """Compare a figure's value with its target; quick figures are never compared."""
    if quick:
        return "not compared"
    if figure.target is None:
        return "no target"
    return "met" if figure.target.met(value) else "missed"


@dataclass
class FigureResult:
    figure: Figure
    value: Any
    status: Status
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        target = self.figure.target
        return {
            "label": self.figure.label,
            "unit": self.figure.unit,
            "value": self.value,
            "target": None if target is None else {"op": target.op, "value": target.value},
            "status": self.status,
            "error": self.error,
        }


def evaluate(benchmark: Benchmark, raw: Mapping[str, Any], quick: bool) -> list[FigureResult]:
    """Every figure of a benchmark (only those a quick run reports, when quick), picked and judged."""
    results = []
    for figure in benchmark.figures:
        if quick and not figure.quick:
            continue
        try:
            value = extract(figure, raw)
        except FigureMissing as error:
            results.append(FigureResult(figure, None, "missing", str(error)))
            continue
        results.append(FigureResult(figure, value, judge(figure, value, quick)))
    return results


# ---------------------------------------------------------------------------------------------------------- running


@dataclass
class BenchmarkResult:
    benchmark: Benchmark
    status: Literal["ok", "failed", "skipped"]
    command: list[str] = field(default_factory=list)
    seconds: float = 0.0
    exit_code: int | None = None
    raw: dict[str, Any] | None = None
    figures: list[FigureResult] = field(default_factory=list)
    error: str | None = None
    stderr_tail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.benchmark.name,
            "script": f"bench/{self.benchmark.script}",
            "command": self.command,
            "status": self.status,
            "seconds": round(self.seconds, 2),
            "exit_code": self.exit_code,
            "error": self.error,
            "stderr_tail": self.stderr_tail,
            "figures": [figure.to_json() for figure in self.figures],
            "raw": self.raw,
        }


def tail(text: str, lines: int = STDERR_TAIL_LINES) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def run_process(command: Sequence[str], cwd: Path, timeout: float) -> tuple[int | None, str, str]:
    """Run a command in its own process group; (exit code, stdout, stderr), exit code None if it timed out. The whole
    group is killed on a timeout or an interrupt, so a server a benchmark started does not outlive it."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as process:  # fmt: skip
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(process.pid)
            stdout, stderr = process.communicate()
            return None, stdout, stderr
        except BaseException:
            kill_group(process.pid)
            raise
        return process.returncode, stdout, stderr


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def parse_output(stdout: str) -> dict[str, Any]:
    """The one JSON object a script prints; ValueError naming what came instead."""
    try:
        value = json.loads(stdout)
    except json.JSONDecodeError as error:
        shown = stdout.strip()[:200] or "nothing"
        raise ValueError(f"did not print one JSON object ({error.msg}): {shown!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"printed JSON that is not an object: {type(value).__name__}")
    return value


def run_benchmark(benchmark: Benchmark, quick: bool, bench_dir: Path | None = None) -> BenchmarkResult:
    """Run one benchmark's script (from `bench_dir`, default bench/, with its parent as the working directory) and
    judge its figures; a failing script is reported in the result, never raised."""
    bench_dir = bench_dir or BENCH
    missing_env = [name for name in benchmark.requires_env if not os.environ.get(name)]
    if missing_env:
        return BenchmarkResult(benchmark, "skipped", error=f"needs {', '.join(missing_env)} in the environment")
    missing_files = [path for path in benchmark.requires_files if not (bench_dir.parent / path).exists()]
    if missing_files:
        return BenchmarkResult(benchmark, "skipped", error=f"needs {', '.join(missing_files)} in the checkout")
    args = benchmark.quick_args if quick else benchmark.args
    if benchmark.requires_env:  # "{NAME}" in an argument is the value of that environment variable
        args = tuple(arg.format_map(os.environ) for arg in args)
    command = [sys.executable, str(bench_dir / benchmark.script), *args]
    started = time.perf_counter()
    exit_code, stdout, stderr = run_process(command, bench_dir.parent, benchmark.timeout)
    result = BenchmarkResult(benchmark, "ok", command, time.perf_counter() - started, exit_code,
                             stderr_tail=tail(stderr))  # fmt: skip
    if exit_code is None:
        result.status, result.error = "failed", f"timed out after {format_number(benchmark.timeout)} s"
        return result
    try:
        result.raw = parse_output(stdout)
    except ValueError as error:
        result.status, result.error = "failed", f"exit status {exit_code}, {error}"
        return result
    result.figures = evaluate(benchmark, result.raw, quick)  # even from a failed run: they show what went wrong
    if exit_code != 0:
        result.status, result.error = "failed", f"exit status {exit_code}"
    return result


# ---------------------------------------------------------------------------------------------------------- context


def read_proc(path: str) -> dict[str, str]:
    """The "key: value" lines of a /proc file (first occurrence of each key); empty where there is no /proc."""
    fields: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path(path).read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    return fields


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    memory_kb = read_proc("/proc/meminfo").get("MemTotal", "0 kB").split()[0]
    try:
        os_name = platform.freedesktop_os_release().get("PRETTY_NAME", platform.system())
    except OSError:
        os_name = platform.system()
    return {
        "cpu": read_proc("/proc/cpuinfo").get("model name") or platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "memory_gib": round(int(memory_kb) / 1024**2, 1),
        "python": platform.python_version(),
        "os": f"{os_name}, {platform.system()} {platform.release()}",
        "load_average": [round(load, 2) for load in os.getloadavg()],
    }


def git_commit(root: Path = ROOT) -> str:
    """The checkout's short commit, with "-dirty" when anything differs from it; "unknown" outside a git checkout."""

    def git(*args: str) -> str:
        return subprocess.run(["git", "--no-optional-locks", *args], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()  # fmt: skip

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = bool(git("status", "--porcelain"))
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit}-dirty" if dirty else commit


# ---------------------------------------------------------------------------------------------------------- output


def format_number(value: float | bool) -> str:
    """Three significant digits, whole numbers from 100 up with thousands separators; booleans as yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return str(value) if isinstance(value, int) else f"{value:.3g}"


def format_value(value: Any, unit: str) -> str:
    if value is None:
        return "—"
    number = format_number(value)
    if not unit or isinstance(value, bool):
        return number
    return f"{number}{unit}" if unit in ("%", "×") else f"{number} {unit}"


MET_CELLS: dict[Status, str] = {"met": "yes", "missed": "**no**", "no target": "—", "not compared": "not compared",
                                "missing": "**missing**"}  # fmt: skip


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def target_text(figure: Mapping[str, Any]) -> str:
    """A figure's target as the table shows it ("≤ 5 ms"), from its JSON form; "—" for none."""
    target = figure["target"]
    return "—" if target is None else Target(target["op"], target["value"]).describe(figure["unit"])


def problems(entry: Mapping[str, Any]) -> list[str]:
    """Why a benchmark (its JSON entry) fails the run: the script failed, a figure is missing, a target was missed."""
    name = entry["name"]
    found = [f"{name}: failed: {entry['error']}"] if entry["status"] == "failed" else []
    for figure in entry["figures"]:
        if figure["status"] == "missing":
            found.append(f"{name}: {figure['error']}")
        elif figure["status"] == "missed":
            measured = format_value(figure["value"], figure["unit"])
            found.append(f"{name}: {figure['label']}: {measured}, target {target_text(figure)}")
    return found


def table_rows(entry: Mapping[str, Any]) -> list[str]:
    """The table rows of one benchmark: a row saying why it failed or was skipped, then one row per figure."""
    name, status = entry["name"], entry["status"]
    rows = [f"| {name} | {cell(status + ': ' + (entry['error'] or ''))} | | | **{status}** |"] if status != "ok" else []
    for figure in entry["figures"]:
        measured = format_value(figure["value"], figure["unit"])
        met = MET_CELLS[figure["status"]]
        rows.append(f"| {name} | {cell(figure['label'])} | {target_text(figure)} | {measured} | {met} |")
    return rows


def verdict(report: Mapping[str, Any]) -> str:
    if report["quick"]:
        note = "Quick run (`--quick`): small sizes, a smoke test only; the figures are not compared with the targets."
        return note + (f" Problems: {'; '.join(report['problems'])}." if report["problems"] else "")
    targets = sum(1 for entry in report["benchmarks"] for figure in entry["figures"] if figure["target"] is not None)
    if not report["problems"]:
        return f"Every target met ({targets} figures with a target)."
    listed = "".join(f"\n- {cell(problem)}" for problem in report["problems"])
    return f"Not met ({len(report['problems'])}; the sections below explain what limits each):\n{listed}"


GENERATED_NOTE = "<!-- Generated by bench/run.py: change its registry, not this section; text outside it is kept. -->"


def rerun_line(rerun: Mapping[str, Any]) -> str:
    names = ", ".join(rerun["benchmarks"])
    return (f"Re-run alone afterwards, figures replaced: {names}, {rerun['time_utc']}, commit `{rerun['commit']}`, "
            f"load average {rerun['load_average'][0]}: `{rerun['command']}`.")  # fmt: skip


def load_lines(report: Mapping[str, Any]) -> list[str]:
    """One line: each benchmark's load average before and after its run (entries of older runs have none)."""
    shown = []
    for entry in report["benchmarks"]:
        load = entry.get("load_average")
        if load:
            again = " (run twice: the load moved by more than 1)" if "runs" in load else ""
            shown.append(f"{entry['name']} {load['before']} → {load['after']}{again}")
    return [f"Load average before → after each benchmark: {'; '.join(shown)}."] if shown else []


def markdown_section(report: Mapping[str, Any]) -> str:
    """The generated part of docs/benchmarks.md, without the markers, from the JSON report."""
    host = report["machine"]
    lines = [
        GENERATED_NOTE,
        "",
        f"Measured on {host['cpu']} ({host['cores']} cores, {host['memory_gib']} GiB), Python {host['python']}, "
        f"{host['os']}; load average {host['load_average'][0]} at the start.",
        f"Commit `{report['commit']}`, {report['time_utc']}. Command: `{report['command']}`; every raw figure is in "
        f"`{report['results_file']}` of that run.",
        *(rerun_line(rerun) for rerun in report.get("reruns", ())),
        *load_lines(report),
        "",
        "| benchmark | figure | target | measured | met |",
        "|---|---|---|---|---|",
        *(row for entry in report["benchmarks"] for row in table_rows(entry)),
        "",
        verdict(report),
    ]
    return "\n".join(lines)


class MergeError(ValueError):
    """The results of this run cannot be merged into the previous ones."""


def check_mergeable(previous: Mapping[str, Any], host: Mapping[str, Any]) -> None:
    """MergeError unless the previous results are a full run's on a machine like this one."""
    if previous.get("quick", True):
        raise MergeError("the previous results are a quick run's (or not a run's): merge into a full run only")
    before = previous["machine"]
    if (before["cpu"], before["cores"]) != (host["cpu"], host["cores"]):
        raise MergeError(f"the previous results are from another machine ({before['cpu']}, {before['cores']} cores)")


def merge(previous: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """The previous full run with the benchmarks of this run replacing (or joining) its entries, and this run noted
    in its `reruns`: how a benchmark spoiled by other work on the machine is re-run alone and kept."""
    check_mergeable(previous, report["machine"])
    names = [entry["name"] for entry in report["benchmarks"]]
    order = [benchmark.name for benchmark in BENCHMARKS]
    entries = [entry for entry in previous["benchmarks"] if entry["name"] not in names] + list(report["benchmarks"])
    entries.sort(key=lambda entry: order.index(entry["name"]) if entry["name"] in order else len(order))
    rerun = {"benchmarks": names, "time_utc": report["time_utc"], "commit": report["commit"],
             "command": report["command"], "load_average": report["machine"]["load_average"]}  # fmt: skip
    return {**previous, "benchmarks": entries, "reruns": [*previous.get("reruns", ()), rerun]}


class MarkersMissing(ValueError):
    """The Markdown file has no generated section to rewrite."""


def replace_section(text: str, section: str) -> str:
    """The text with everything between the begin and end markers replaced by the section; the rest untouched."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0 or end < start:
        raise MarkersMissing(f"expected {BEGIN} and then {END} around the generated section")
    return text[: start + len(BEGIN)] + "\n" + section.strip("\n") + "\n" + text[end:]


def check_markdown(path: Path) -> None:
    """Fail before any benchmark runs if an existing Markdown file cannot take the section."""
    if path.exists():
        try:
            replace_section(path.read_text(encoding="utf-8"), "")
        except MarkersMissing as error:
            raise MarkersMissing(f"{path}: {error}") from None


def write_markdown(path: Path, section: str) -> None:
    """Rewrite the section between the markers of `path`, or create `path` holding only the marked section."""
    if path.exists():
        text = replace_section(path.read_text(encoding="utf-8"), section)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"{BEGIN}\n{section.strip()}\n{END}\n"
    path.write_text(text, encoding="utf-8")


def shown_path(path: Path) -> str:
    """A path as the docs show it: relative to the repository root when it is inside it."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def write_json(path: Path, report: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------------------- command


def parse_args(argv: Sequence[str] | None, prog: str) -> argparse.Namespace:
    names = [benchmark.name for benchmark in BENCHMARKS]
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run the benchmarks of bench/, compare every figure with its target, write JSON and Markdown.",
        epilog=f"benchmarks: {', '.join(names)}. How to add one: the docstring of bench/run.py.",
    )
    parser.add_argument("--only", nargs="+", action="extend", metavar="NAME", help="run only these benchmarks")
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke test: no target is compared")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="replace these benchmarks' entries in the previous full results and rewrite the Markdown from them",
    )
    parser.add_argument(
        "--json",
        type=Path,
        metavar="PATH",
        help="results file (default: artifacts/bench/results.json; quick: ...-quick.json)",
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        metavar="PATH",
        help="write the section here (default: docs/benchmarks.md, full runs only)",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.only or ()) - set(names))
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}: choose from {', '.join(names)}")
    if args.merge and args.quick:
        parser.error("--merge: quick figures are never merged into a full run's")
    return args


def load_average() -> float:
    """The machine's 1-minute load average."""
    return round(os.getloadavg()[0], 2)


def run_measured(benchmark: Benchmark, quick: bool) -> dict[str, Any]:
    """Run one benchmark with the load average before and after it, printed on stderr and kept in its entry; run it
    once more when the load changed by more than `LOAD_CHANGE` meanwhile (other work started or stopped during it),
    keeping the run whose load changed least. Skipped and failed runs are not repeated, nor a benchmark that loads the
    machine itself (a 10-minute load test moves the load average by more than 1 on a quiet machine: it would always be
    run twice, and its second run would be judged by its own load)."""
    runs: list[dict[str, Any]] = []
    for attempt in range(2):
        before = load_average()
        result = run_benchmark(benchmark, quick)
        after = load_average()
        entry = result.to_json() | {"load_average": {"before": before, "after": after}}
        print(f"    {result.status} in {result.seconds:.1f} s, load average {before} before, {after} after"
              + (f": {result.error}" if result.error else ""), file=sys.stderr, flush=True)  # fmt: skip
        if result.status == "failed" and result.stderr_tail:
            print("    " + result.stderr_tail.replace("\n", "\n    "), file=sys.stderr)
        runs.append(entry)
        if result.status != "ok" or benchmark.loads_the_machine or abs(after - before) <= LOAD_CHANGE or attempt:
            break
        print(f"    the load changed by more than {LOAD_CHANGE} during the run: running it again", file=sys.stderr)
    chosen = min(runs, key=lambda run: abs(run["load_average"]["after"] - run["load_average"]["before"]))
    if len(runs) > 1:
        chosen["load_average"] = chosen["load_average"] | {"runs": [dict(run["load_average"]) for run in runs]}
    return chosen


def run_all(chosen: Sequence[Benchmark], quick: bool) -> list[dict[str, Any]]:
    """Run the benchmarks one after the other, reporting progress on stderr; their JSON entries."""
    if quick:
        print("quick run: small sizes, figures not compared with targets", file=sys.stderr)
    entries = []
    for number, benchmark in enumerate(chosen, 1):
        print(f"[{number}/{len(chosen)}] {benchmark.name} (bench/{benchmark.script}) ...", file=sys.stderr, flush=True)
        entries.append(run_measured(benchmark, quick))
    return entries


def read_previous(path: Path) -> dict[str, Any]:
    try:
        previous: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MergeError(f"no previous results to merge into ({path}: {error}); run the whole suite first") from None
    return previous


def main(argv: Sequence[str] | None = None, prog: str = "bench/run.py") -> int:
    """Run the chosen benchmarks; 0 when every one ran and met its targets, 1 otherwise, 2 for a usage problem found
    before running (a Markdown file without markers, nothing to merge into)."""
    args = parse_args(argv, prog)
    chosen = [benchmark for benchmark in BENCHMARKS if not args.only or benchmark.name in args.only]
    full = not args.quick and (not args.only or args.merge)
    markdown = args.markdown or (DOCS if full else None)
    json_path = args.json or (QUICK_RESULTS if args.quick else RESULTS)
    host = machine()
    try:
        previous = read_previous(json_path) if args.merge else None
        if previous is not None:
            check_mergeable(previous, host)
        if markdown is not None:
            check_markdown(markdown)
    except (MarkersMissing, MergeError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    runner = f"python {prog}" if prog.endswith(".py") else prog
    report: dict[str, Any] = {
        "machine": host,
        "commit": git_commit(),
        "command": " ".join([runner, *(argv if argv is not None else sys.argv[1:])]),
        "quick": args.quick,
        "time_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "results_file": shown_path(json_path),
        "benchmarks": run_all(chosen, args.quick),
    }
    if previous is not None:
        report = merge(previous, report)
    found = [problem for entry in report["benchmarks"] for problem in problems(entry)]
    report |= {"ok": not found, "problems": found}
    write_json(json_path, report)
    section = markdown_section(report)
    if markdown is not None:
        write_markdown(markdown, section)
    print(section.split("\n", 2)[2])  # the table and the verdict, without the generated-section comment
    print(f"\nresults: {json_path}" + (f"; Markdown: {markdown}" if markdown else ""))
    return 1 if found else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
