"""The load test, short: bench/load_test.py with 3 tables dealing simulated shoes at 10× real speed for 20 s and 60
WebSocket subscribers, 6 of whose connections are cut on the way (each resumes from its last seq); every
subscriber's stream must equal the REST feed. The full run (20 tables, 2,000 subscribers, 10 minutes) is
`.venv/bin/python bench/load_test.py`, documented in docs/benchmarks.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "load_test.py"
TABLES = 3
TIMEOUT = 90  # seconds; the run takes about 30 (start-up, 20 s of dealing, wind-down, checks)


def run_load_test(*args: str) -> tuple[int, str, str]:
    """Run the script; on a timeout end it with SIGTERM so it stops its server, then give up."""
    process = subprocess.Popen([sys.executable, str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)  # fmt: skip
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.terminate()
        stdout, stderr = process.communicate(timeout=20)
        pytest.fail(f"the load test ran over {TIMEOUT} s:\n{stdout[-2000:]}\n{stderr[-2000:]}")
    return process.returncode, stdout, stderr


@pytest.mark.slow
def test_short_load_run_loses_nothing(tmp_path: Path) -> None:
    code, stdout, stderr = run_load_test(
        "--tables", str(TABLES), "--subscribers", "60", "--minutes", "0.33", "--cut-connections", "6",
        "--dir", str(tmp_path),
    )  # fmt: skip
    result = json.loads(stdout)
    assert "error" not in result, f"{result['error']}\n{stderr[-2000:]}"
    assert (result["lost"], result["duplicated"], result["out_of_order"]) == (0, 0, 0)
    assert (result["unexpected"], result["content_mismatch"]) == (0, 0)
    assert result["messages_delivered"] > 0
    assert result["messages_delivered"] == result["messages_expected"]
    assert len(result["rounds_per_table"]) == TABLES
    assert all(rounds > 0 for rounds in result["rounds_per_table"].values()), result["rounds_per_table"]
    connections = result["connections"]
    assert connections["subscribers"] == 60
    assert connections["reconnects"] > 0 and connections["reconnects"] == sum(connections["dropped"].values())
    assert result["latency_ms"]["measured"] == result["messages_delivered"]
    assert result["ok"] and code == 0
    assert list(tmp_path.iterdir()) == [], "the load test left files behind"
