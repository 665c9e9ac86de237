"""Frame-sized buffers stay with the process instead of going back to the system after every frame.

Reading one 1280 x 720 frame allocates some 30 MB of frame-sized arrays (the grey image, the ink masks, integral
images, component labels) and frees them at the end. glibc serves blocks that large with `mmap` and gives them back
when freed, or trims its heap top, so every frame asks the kernel for fresh zeroed pages again: on the 2-core AMD
build machine that was 9 ms of the 23 ms it took to propose the squares of a frame read anywhere (issue 11,
2026-12-02: `docs/camera.md`, "What made it faster"). Raising both thresholds keeps those blocks in the heap, where
the next frame reuses them; the heap then holds about what one frame needs, at most a few tens of MB.

Only glibc has `mallopt`; elsewhere nothing is changed.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # blocks below this come from the heap: a 1080p frame's float64 integral image is 16.6 MB
TRIM_THRESHOLD = 256 << 20  # free memory at the heap's top kept up to this much

_done = False


def keep_frame_buffers() -> bool:
    """Tell glibc's malloc to keep frame-sized blocks (once per process); False where there is no glibc."""
    global _done  # noqa: PLW0603 - a process-wide setting, made once
    if _done:
        return True
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    _done = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _done
