"""Frame-sized buffers are reused from frame to frame, not asked of the kernel again (drivers/camera/memory.py)."""

from __future__ import annotations

import platform
import resource

import numpy as np
import pytest

from drivers.camera.memory import keep_frame_buffers

# the sizes (MB) of the arrays one frame holds at once, much as reading a 720p or 1080p frame does
FRAME_ARRAYS_MB = (4, 8, 16, 8, 4)


def _faults_of_one_frame() -> int:
    """Minor page faults while a frame's arrays are allocated, written whole and freed together."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    arrays = [np.ones(size << 20, dtype=np.uint8) for size in FRAME_ARRAYS_MB]
    del arrays
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's; elsewhere nothing is changed")
def test_a_freed_frame_buffer_is_reused_without_new_pages() -> None:
    assert keep_frame_buffers()
    _faults_of_one_frame()  # the heap grows once
    faults = [_faults_of_one_frame() for _ in range(5)]
    # without the setting every frame faults its pages in again: about 2,500 faults a frame here, frame after frame
    assert max(faults) < 100, faults


def test_asking_twice_is_harmless() -> None:
    assert keep_frame_buffers() == keep_frame_buffers()
