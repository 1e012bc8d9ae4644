"""What reasonaudio says about itself: its version and where its bugs are reported."""

from __future__ import annotations



def issues_url() -> str | None:
    """Where bugs are reported: the `Issues` entry of the installed distribution's project URLs
    (pyproject.toml's [project.urls], their one home: docs/releasing.md), or None where there is
    none (a source tree on PYTHONPATH, or a build whose pyproject names no tracker)."""
    from importlib import metadata

    try:
        entries = metadata.metadata("reasonaudio").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "issues" and url.strip():
            return url.strip()
    return None


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
