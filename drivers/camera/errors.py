"""The camera driver's errors: each names the file or frame at fault and says what is wrong, on one line."""

from __future__ import annotations

from studio.domain.errors import StudioError


class CameraError(StudioError):
    """Base of every error the camera driver raises on purpose."""


class ImageError(CameraError, ValueError):
    """An image or a frame cannot be used: missing, unreadable, not an image, empty, too large, wrong pixel type."""


class TemplatesError(CameraError, ValueError):
    """A templates file is missing, corrupt, of another version, or holds no rank or suit templates."""


class EnrollmentError(CameraError, ValueError):
    """The enrollment photos cannot teach a deck: none usable, a file name that is no card code, no card found."""
