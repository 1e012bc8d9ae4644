"""What reasonaudio says about itself: its version and where its bugs are reported."""

from __future__ import annotations

#: where bugs are reported (pyproject.toml's [project.urls] `Issues`, checked by tests/test_packaging.py)
ISSUES_URL = "https://github.com/reasonaudio/reasonaudio/issues"


def version() -> str:
    """The installed distribution's version (cheap metadata, no extension loaded), else the
    extension's (a source tree on PYTHONPATH has no metadata); both come from the workspace's
    Cargo.toml."""
    from importlib import metadata

    try:
        return metadata.version("reasonaudio")
    except metadata.PackageNotFoundError:
        from reasonaudio._core import __version__

        return __version__
