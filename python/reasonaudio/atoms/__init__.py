"""Atom libraries: `library` (AtomLibrary: the procedural default, library directories),
`exemplars` (labels vs exemplars, splits, attribution), `sheet` (the contact sheet), and `sources`
(one module per dataset layout behind one registry, and the Debian real-sound pack)."""

from reasonaudio.atoms.exemplars import SPLITS, LabelView, attribution_markdown, recordings_used, select_split, write_attribution
from reasonaudio.atoms.library import (
    CONTRACT_COLUMNS,
    DEFAULT_SAMPLE_RATE,
    PROCEDURAL,
    PROCEDURAL_LICENSE,
    SILENCE_PEAK_DBFS,
    TRIM_THRESHOLD_DB,
    AtomLibrary,
)
from reasonaudio.atoms.sheet import contact_sheet, log_mel, mel_filterbank
from reasonaudio.atoms.sources import import_atoms, import_folder

__all__ = [
    "CONTRACT_COLUMNS", "DEFAULT_SAMPLE_RATE", "PROCEDURAL", "PROCEDURAL_LICENSE", "SILENCE_PEAK_DBFS", "SPLITS",
    "TRIM_THRESHOLD_DB", "AtomLibrary", "LabelView", "attribution_markdown", "contact_sheet", "import_atoms",
    "import_folder", "log_mel", "mel_filterbank", "recordings_used", "select_split", "write_attribution",
]
