"""Where the shipped reader's time goes, stage by stage (issue 11's zones target): a profile, not a benchmark.

    .venv/bin/python bench/camera_stages.py [--anywhere] [--repeats 3] [--model PATH]

Reads the frames `bench/camera_bench.py` times (the held-out roboflow webcam scenes resized to 1280 x 720, in its
two zones unless `--anywhere`; one thread) and prints one JSON object: the median time a frame, and each stage's
mean milliseconds a frame *without* the stages it calls (each network's forward passes are counted apart from the
step that asks for them), with how many calls a frame. Each stage is timed by wrapping its function for the run, so
the stages add a few microseconds each; the total is timed around `read_frame` as the benchmark times it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drivers.camera import reader as reader_module
from drivers.camera import squares as squares_module
from drivers.camera.detect import Zone
from drivers.camera.image_io import load_image
from drivers.camera.reader import DEFAULT_MODEL, IndexReader
from drivers.camera.training import split

ZONES = [Zone("player", (60, 160, 540, 400)), Zone("banker", (680, 160, 540, 400))]  # as camera_bench.py's


class Stages:
    """Exclusive time by stage: a stage's time less that of the stages it calls."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._open: list[str] = []

    def wrap(self, owner: Any, name: str, stage: str | Callable[..., str]) -> None:
        """Time `owner.name` from now on as `stage` (or as the stage `stage(*args)` names)."""
        inner: Callable[..., Any] = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            self._open.append(stage if isinstance(stage, str) else stage(*args))
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spent = time.perf_counter() - start
                done = self._open.pop()
                self.seconds[done] += spent
                self.calls[done] += 1
                if self._open:
                    self.seconds[self._open[-1]] -= spent

        setattr(owner, name, timed)


def profile(model: Path, anywhere: bool, repeats: int) -> dict[str, Any]:
    held_out = sorted(path for path in split.read()["test"] if path.name.startswith("WIN_"))
    frames = [cv2.resize(load_image(path), (1280, 720), interpolation=cv2.INTER_CUBIC) for path in held_out]
    reader = IndexReader(model)
    zones = [] if anywhere else ZONES
    reader.read_frame(frames[0], zones)  # warm up
    stages = Stages()
    stages.wrap(squares_module, "propose", "squares: glyph pairs (indices.propose)")
    stages.wrap(squares_module, "outline_squares", "squares: card outlines")
    stages.wrap(reader, "_crops", "crops (warpAffine)")
    stages.wrap(reader, "_gated", "gate: its input and choice")
    stages.wrap(reader_module, "_vote", "vote")
    stages.wrap(reader, "_confirm", "confirming views")
    stages.wrap(reader, "_checked", "checks: club against spade, rank")
    stages.wrap(reader_module, "_cards", "cards")
    networks = {id(reader._net): "reader", id(reader._gate): "gate"}
    for check, name in ((reader._club_spade, "club-against-spade check"), (reader._rank_check, "rank check")):
        if check is not None:
            networks[id(check.net)] = name
    stages.wrap(reader_module, "_forward", lambda net, crops: f"network forward passes: {networks[id(net)]}")
    totals = []
    for _ in range(repeats):
        for frame in frames:
            start = time.perf_counter()
            reader.read_frame(frame, zones)
            totals.append(time.perf_counter() - start)
    count = len(totals)
    accounted = sum(stages.seconds.values())
    by_stage = {stage: {"ms": round(1000 * spent / count, 2), "calls": round(stages.calls[stage] / count, 1)}
                for stage, spent in sorted(stages.seconds.items(), key=lambda item: -item[1])}  # fmt: skip
    return {
        "frames": "held-out roboflow webcam scenes resized to 1280x720, " + ("anywhere" if anywhere else "two zones"),
        "timed": count,
        "median_ms": round(1000 * statistics.median(totals), 2),
        "mean_ms": round(1000 * sum(totals) / count, 2),
        "stages_mean_ms": by_stage,
        "rest_mean_ms": round(1000 * (sum(totals) - accounted) / count, 2),
        "command": "python bench/camera_stages.py" + (" --anywhere" if anywhere else "") + f" --repeats {repeats}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anywhere", action="store_true", help="read whole frames, not the two zones")
    parser.add_argument("--repeats", type=int, default=3, help="times each frame is read (default: 3)")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="the reader's ONNX file (and its .json)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    print(json.dumps(profile(args.model, args.anywhere, args.repeats), indent=2))


if __name__ == "__main__":
    main()
