"""`reasonaudio atoms pack debian`: a library of real recordings from Debian packages, offline.

The recordings and their labels are listed in a curated table shipped with reasonaudio
(``reasonaudio/data/debian_pack.csv``: package, file, label, phrase; openttd-opensfx, minetest-data,
sonic-pi-samples, sound-theme-freedesktop, scratch, lugaru-data). A second table
(``debian_extra.csv``, `atoms pack debian-extra`) labels recordings of five other packages (0ad-data,
supertuxkart-data, redeclipse-data, flare-game, endless-sky-data) with the same vocabulary, as a
training-only library. Each recording's license and
author come from the package itself: OpenSFX names both in every sound's title inside its ``.cat``
archive; the other packages say them in their machine-readable ``/usr/share/doc/<pkg>/copyright``
(read with python-debian). Only licenses that allow redistribution in a benchmark are taken
(``REDISTRIBUTABLE``; never a non-commercial one): a recording under any other is skipped and
reported. Atoms record license, source package (and version) and original file.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import os
import re
import shutil
import struct
import subprocess
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from reasonaudio.atoms.library import DEFAULT_SAMPLE_RATE
from reasonaudio.atoms.sources.common import Candidate, ImportReport, assemble, is_non_commercial
from reasonaudio.errors import UserError

PACK_TABLE = "debian_pack.csv"
#: Ambience loops for background beds (contract §5), from the same packages under the same license
#: rules; none of these files is an atom of PACK_TABLE, so a bed never replays an event's recording.
BEDS_TABLE = "debian_beds.csv"
#: Recordings of other packages (0ad-data, supertuxkart-data, redeclipse-data, ...) labelled with the
#: pack's vocabulary, for *training only*: `atoms pack debian-extra` marks every one `train`, so a
#: detector trained on the pack and on them is still tested on the pack's own held-out recordings,
#: now from packages it never heard a recording of.
EXTRA_TABLE = "debian_extra.csv"
#: Packages kept out of every pack and training set: an independent test of the detector on
#: recordings it never heard is drawn from them (fnmatch patterns).
RESERVED_PACKAGES = (
    "megaglest-data", "wesnoth-*-data", "warzone2100-data", "openarena-data", "lincity-ng-data", "tuxpaint-*",
    "freedroidrpg-data", "supertux-data", "hedgewars-data", "pingus-data", "frozen-bubble-data",
)
#: Beds are textures: the longest (lugaru's desert ambience) lasts 60 s.
BEDS_MAX_S = 120.0
#: Footsteps, drum hits and knocks of these packages last 0.15-0.3 s; the planner loops an atom
#: shorter than an event (events last >= 0.6 s), so they become a few steps or hits in a row.
PACK_MIN_S = 0.15
#: A single axe chop of 0ad-data lasts 0.13 s: a training-only recording is never planned into a
#: benchmark, so the extra library keeps such one-shots.
EXTRA_MIN_S = 0.1
#: Licenses under which a recording may be redistributed inside a benchmark (attribution kept).
REDISTRIBUTABLE = ("CC0-1.0", "CC-BY-3.0", "CC-BY-4.0", "CC-BY-SA-3.0", "CC-BY-SA-4.0", "MIT", "public-domain")
_SPDX = {
    "cc0": "CC0-1.0", "cc0-1.0": "CC0-1.0", "creative commons zero 1.0": "CC0-1.0",
    "cc-by-3.0": "CC-BY-3.0", "creative commons attribution 3.0 unported": "CC-BY-3.0", "creative commons attribution 3.0": "CC-BY-3.0",
    "cc-by-4.0": "CC-BY-4.0",
    "cc-by-sa-3.0": "CC-BY-SA-3.0", "creative commons attribution-sharealike 3.0 unported": "CC-BY-SA-3.0",
    # "or any later version": redistributed under 3.0 itself
    "cc-by-sa-3.0+": "CC-BY-SA-3.0",
    "cc-by-sa-4.0": "CC-BY-SA-4.0",
    "expat": "MIT", "mit": "MIT",
}


@dataclass(frozen=True)
class Package:
    name: str
    root: str  # where the package installs the recordings the table names
    copyright_prefix: str | None  # path of `root` inside the source tree, for copyright globs; None = OpenSFX titles


PACKAGES = {
    p.name: p
    for p in (
        Package("openttd-opensfx", "/usr/share/games/openttd/baseset/opensfx", None),
        Package("minetest-data", "/usr/share/games/minetest/games/minetest_game", "mtg/"),
        Package("sonic-pi-samples", "/usr/share/sonic-pi/samples", "etc/samples/"),
        Package("sound-theme-freedesktop", "/usr/share/sounds/freedesktop/stereo", "stereo/"),
        Package("scratch", "/usr/share/scratch", ""),
        Package("lugaru-data", "/usr/share/games/lugaru", "Data/"),
        # the recordings of the extra (training-only) table
        Package("0ad-data", "/usr/share/games/0ad/mods/public", "binaries/data/mods/public/"),
        Package("supertuxkart-data", "/usr/share/games/supertuxkart/data", "data/"),
        Package("redeclipse-data", "/usr/share/games/redeclipse/data", "data/"),
        Package("flare-game", "/usr/share/games/flare", ""),
        Package("endless-sky-data", "/usr/share/games/endless-sky", ""),
    )
}


def is_reserved(package: str) -> bool:
    return any(fnmatch.fnmatchcase(package, pattern) for pattern in RESERVED_PACKAGES)


def spdx(license_text: str) -> str:
    key = re.sub(r"\s+", " ", license_text.strip().rstrip(".")).lower()
    return _SPDX.get(key, license_text.strip())


def read_pack_table(table: str = PACK_TABLE) -> list[dict[str, str]]:
    text = resources.files("reasonaudio").joinpath("data", table).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    for i, row in enumerate(rows, start=2):
        if row["package"] not in PACKAGES or not row["file"] or not row["label"]:
            raise AssertionError(f"reasonaudio/data/{table} line {i}: bad row {row}")
        if is_reserved(row["package"]):
            raise AssertionError(f"reasonaudio/data/{table} line {i}: {row['package']} is reserved for an independent test (RESERVED_PACKAGES)")
    return rows


def apt_line(packages: list[str]) -> str:
    return "sudo apt-get install -y " + " ".join(sorted(packages))


def missing_packages(names: list[str] | None = None) -> list[str]:
    """Packages of the pack whose recordings or copyright file are not on this machine."""
    names = names or sorted(PACKAGES)
    return [n for n in names if not (Path(PACKAGES[n].root).is_dir() and Path(f"/usr/share/doc/{n}/copyright").is_file())]


def _version(package: str) -> str:
    if shutil.which("dpkg-query") is None:
        return ""
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def read_opensfx_cat(path: Path) -> dict[str, tuple[str, str, bytes]]:
    """title -> (license, credit, WAV bytes) for every sound of an OpenTTD ``.cat`` archive.

    The archive starts with a table of (offset, size) little-endian uint32 pairs (offsets with the
    top bit set in the named format); at each offset a length byte and a NUL-terminated description
    ("\"Title\". Original ... by .... License: ...") precede the sound's RIFF/WAVE bytes."""
    data = path.read_bytes()
    if len(data) < 8:
        raise UserError(f"{path}: too short for an OpenTTD sound archive")
    n = (struct.unpack_from("<I", data, 0)[0] & 0x7FFFFFFF) // 8
    out: dict[str, tuple[str, str, bytes]] = {}
    for i in range(n):
        offset, size = struct.unpack_from("<II", data, 8 * i)
        offset &= 0x7FFFFFFF
        name_len = data[offset]
        name = data[offset + 1 : offset + 1 + name_len].rstrip(b"\0").decode("utf-8", "replace")
        wav = data[offset + 1 + name_len : offset + size]
        m = re.match(r'^"(?P<title>[^"]+)"\.\s*(?P<credit>.*?)\s*License:\s*(?P<license>[^.]+(?:\.\d)?[^.]*)\.?\s*(?P<rest>.*)$', name)
        if not m:
            continue
        credit = m.group("credit").strip() or "OpenSFX authors"
        out[m.group("title")] = (spdx(m.group("license")), credit, wav)
    return out


#: Where Debian installs each package's copyright file (a module constant, so tests can point it elsewhere).
DOC_ROOT = Path("/usr/share/doc")


def _copyright(package: str):
    import logging
    import warnings

    from reasonaudio.errors import require

    copyright_module = require("debian.copyright", "atoms", "reading the packages' copyright files (python-debian)")
    Copyright = copyright_module.Copyright

    path = DOC_ROOT / package / "copyright"
    # scratch's file names an early DEP-5 URL; python-debian reads it fine but complains
    logging.getLogger("debian.copyright").setLevel(logging.ERROR)
    try:
        with open(path, encoding="utf-8") as fh, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Copyright(fh, strict=False)
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text (byte {err.start}); a machine-readable copyright file (DEP-5) is UTF-8") from None
    except (copyright_module.Error, ValueError, KeyError) as err:  # python-debian's parse errors
        raise UserError(f"{path}: cannot read as a DEP-5 copyright file ({err.__class__.__name__}: {err})") from None


def pack_debian(
    out: str | os.PathLike[str],
    *,
    sample_rate: int = DEFAULT_SAMPLE_RATE,
    min_duration_s: float = PACK_MIN_S,
    max_duration_s: float = 10.0,
    split_fraction: float | None = None,
    seed: int = 0,
    overwrite: bool = False,
    allow_missing: bool = False,
    table: str = PACK_TABLE,
) -> ImportReport:
    """Write the Debian real-sound library to ``out`` (see the module docstring); with
    ``table=BEDS_TABLE``, the library of ambience beds for ``build --background``; with
    ``table=EXTRA_TABLE``, the training-only library of other packages' recordings (all `train`)."""
    training_only = table == EXTRA_TABLE
    if training_only and split_fraction is not None:
        raise UserError("debian-extra is a training-only library (every recording `train`, tests stay the pack's own): drop --split-fraction")
    rows = read_pack_table(table)
    wanted = sorted({r["package"] for r in rows})
    missing = missing_packages(wanted)
    if missing and (not allow_missing or len(missing) == len(wanted)):
        raise UserError(
            f"the Debian sound pack needs package(s) {', '.join(missing)}, not installed here; install with: {apt_line(missing)}"
        )
    candidates: list[Candidate] = []
    with _RowReader(missing, {p: _version(p) for p in wanted if p not in missing}) as reader:
        for row in rows:
            candidate = reader.candidate(row)
            if candidate is not None:
                if training_only:
                    candidate.split = "train"
                candidates.append(candidate)
    skipped, rejected = reader.skipped, reader.rejected
    kept: list[Candidate] = []
    for c in candidates:
        if is_non_commercial(c.license) or c.license not in REDISTRIBUTABLE:
            skipped.append((c.file, f"license not redistributable here: {c.license}"))
        else:
            kept.append(c)
    report = assemble(
        kept, out, where="the Debian sound pack", sample_rate=sample_rate, skip_bad=True,
        min_duration_s=min_duration_s, max_duration_s=max_duration_s, lengths_are_errors=False,
        split_fraction=split_fraction, seed=seed, overwrite=overwrite, rejected=rejected, skipped=skipped,
        family="debian",
    )
    return report


class _RowReader:
    """Turns table rows into candidates for one run: opens each archive, zip and copyright file once,
    and keeps why a row was skipped (not installed, license unknown) or rejected (not found)."""

    def __init__(self, missing: list[str], versions: dict[str, str]):
        self.missing, self.versions = set(missing), versions
        self.skipped: list[tuple[str, str]] = []
        self.rejected: list[tuple[str, str]] = []
        self._cats: dict[str, dict[str, tuple[str, str, bytes]]] = {}
        self._zips: dict[str, zipfile.ZipFile] = {}
        self._copyrights: dict = {}

    def __enter__(self) -> "_RowReader":
        return self

    def __exit__(self, *exc) -> None:
        for z in self._zips.values():
            z.close()

    def candidate(self, row: dict[str, str]) -> Candidate | None:
        """The candidate of one table row, or None with the reason kept in skipped / rejected."""
        pkg = PACKAGES[row["package"]]
        shown = f"{pkg.name}:{row['file']}"
        if pkg.name in self.missing:
            self.skipped.append((shown, f"package not installed: {pkg.name} ({apt_line([pkg.name])})"))
            return None
        version = self.versions.get(pkg.name)
        source = f"debian:{pkg.name}" + (f"={version}" if version else "") + f":{row['file']}"
        if pkg.copyright_prefix is None:
            archive, _, title = row["file"].partition(":")
            if archive not in self._cats:
                self._cats[archive] = read_opensfx_cat(Path(pkg.root) / archive)
            if title not in self._cats[archive]:
                self.rejected.append((shown, f"no sound titled {title!r} in {pkg.root}/{archive}"))
                return None
            license_, credit, wav = self._cats[archive][title]
            return Candidate(shown, None, row["label"], row["phrase"], license_, f"{credit} (OpenSFX)", source=source, data=wav)
        archive, in_zip, member = row["file"].partition(".zip:")
        data = None
        if in_zip:
            # 0ad-data installs its sounds inside one 3 GB zip: read the one member, never unpack
            archive += ".zip"
            if archive not in self._zips:
                try:
                    self._zips[archive] = zipfile.ZipFile(Path(pkg.root) / archive)
                except (OSError, zipfile.BadZipFile) as err:
                    raise UserError(f"{pkg.root}/{archive}: cannot read as a zip archive ({err})") from None
            try:
                data = self._zips[archive].read(member)
            except KeyError:
                self.rejected.append((shown, f"no member {member!r} in {pkg.root}/{archive}"))
                return None
            path, inside = None, member
        else:
            path, inside = Path(pkg.root) / row["file"], row["file"]
            if not path.is_file():
                self.rejected.append((shown, f"not found: {path}"))
                return None
        if pkg.name not in self._copyrights:
            self._copyrights[pkg.name] = _copyright(pkg.name)
        para = self._copyrights[pkg.name].find_files_paragraph(pkg.copyright_prefix + inside)
        if para is None or para.license is None:
            self.skipped.append((shown, f"license unknown: no stanza of /usr/share/doc/{pkg.name}/copyright covers it"))
            return None
        license_ = spdx(para.license.synopsis)
        holders = "; ".join(re.sub(r"\s+", " ", x).strip() for x in (para.copyright or "").splitlines() if x.strip())
        origin = para.get("Source", "") if hasattr(para, "get") else ""
        credit = holders + (f" ({origin.strip()})" if origin and origin.strip() else "")
        cut_s = float(row["cut_s"]) if row.get("cut_s") else None
        return Candidate(shown, path, row["label"], row["phrase"], license_, credit, source=source, data=data, cut_s=cut_s)
