"""Few-shot enrolment: a new label from five recordings, without retraining.

A tagger trained on eight procedural sounds enrols a ninth it never heard from five recordings
of it (the same recipe re-synthesised with noise seeds 1-5), and then finds the ninth sound's
seed-0 recording — a recording not among the five — in a clip, at the right time, while clips
without it get no such event; the trained weights and the other labels' outputs do not change.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("torch")
pytest.importorskip("scipy")

from reasonaudio import _core  # noqa: E402
from reasonaudio.atoms import AtomLibrary  # noqa: E402
from reasonaudio.detect.enrol import enrol  # noqa: E402
from reasonaudio.detect.infer import detect  # noqa: E402
from reasonaudio.detect.model import Detector  # noqa: E402
from reasonaudio.detect.rank import parse_queries  # noqa: E402
from reasonaudio.detect.train import TrainConfig, train  # noqa: E402
from reasonaudio.errors import UserError  # noqa: E402

FAMILIES = ("bells", "sirens", "rain", "drums", "whistles", "engines", "chirps", "alarms")
NEW = "music_box"  # family "music": not among the trained ones
SR = 16000


def _atom(seed: int, label: str) -> np.ndarray:
    labels, _, _, audio, offsets = _core.procedural_atoms(SR, seed)
    i = list(labels).index(label)
    return np.asarray(audio[int(offsets[i]) : int(offsets[i + 1])], np.float32)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("enrol")
    lib = AtomLibrary.procedural()
    first: dict[str, int] = {}
    for i, fam in enumerate(lib.families):
        first.setdefault(fam, i)
    lib.subset([first[f] for f in FAMILIES]).save(root / "lib")
    cfg = TrainConfig(steps=60, batch=8, channels=32, crop_s=6.0, valid_clips=8, lr=1e-2, checks=2)
    detector = train(str(root / "lib"), cfg, progress=False)
    return root, detector, lib


def _clip(root, name, parts):
    x = np.zeros(8 * SR, np.float32)
    for start_s, audio in parts:
        a = int(start_s * SR)
        x[a : a + len(audio)] += audio[: len(x) - a]
    sf.write(root / f"{name}.wav", x, SR, subtype="FLOAT")
    return root / f"{name}.wav"


def test_a_new_sound_enrolled_from_five_recordings_is_found_and_nothing_is_retrained(trained, tmp_path):
    root, detector, lib = trained
    shots = [_atom(seed, NEW) for seed in range(1, 6)]
    assert detector.background is not None and detector.background.shape[0] > 100
    out = enrol(detector, NEW, "a music box", shots)
    assert out.labels == [*detector.labels, NEW] and out.enrolled.shots[0]["n"] == 5
    assert all(np.array_equal(out.state_dict[k].numpy(), v.numpy()) for k, v in detector.state_dict.items())
    path = out.save(tmp_path / "enrolled.pt")
    loaded = Detector.load(path)
    assert loaded.enrolled.labels == [NEW]

    unheard = _atom(0, NEW)  # not one of the five shots
    bell = lib.audio(lib.labels.index(detector.labels[0]))
    with_new = _clip(tmp_path, "with", [(2.0, unheard), (5.0, bell[: 2 * SR])])
    without = _clip(tmp_path, "without", [(1.0, bell)])
    index = detect(loaded, [with_new, without], ["with", "without"], progress=False)
    table = index.table()
    mine = table.filter(table["label"] == NEW)
    assert mine.height >= 1 and set(mine["clip_id"]) == {"with"}
    best = mine.sort("confidence", descending=True).row(0, named=True)
    assert abs(best["onset_s"] - 2.0) < 0.5 and best["atom_id"] == f"enrolled:{NEW}"
    # the base labels score exactly as without enrolment
    base = detect(detector, [with_new, without], ["with", "without"], progress=False)
    assert np.array_equal(base.presence, index.presence[:, : len(detector.labels)])
    logics, bad = parse_queries(["A music box without a low ringing bell"], loaded.labels, loaded.phrases)
    assert not bad and logics[0]["all"][0] == {"has": NEW}


def test_enrolment_refuses_bad_input(trained, tmp_path):
    _, detector, _ = trained
    shot = _atom(1, NEW)
    with pytest.raises(UserError, match="at least 2"):
        enrol(detector, NEW, "a music box", [shot])
    with pytest.raises(UserError, match="already has"):
        enrol(detector, detector.labels[0], "x", [shot, shot])
    with pytest.raises(UserError, match="snake_case"):
        enrol(detector, "Music Box", "x", [shot, shot])


def test_cli_enrol_writes_a_model_with_the_new_label(trained, tmp_path):
    _, detector, _ = trained
    model = detector.save(tmp_path / "m.pt")
    files = []
    for seed in range(1, 4):
        files.append(tmp_path / f"s{seed}.wav")
        sf.write(files[-1], _atom(seed, NEW), SR, subtype="FLOAT")
    out = tmp_path / "m2.pt"
    r = subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "enrol", str(model), *map(str, files), "--label", NEW,
                        "--phrase", "a music box", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "enrolled 'music_box' from 3 recordings" in r.stdout and Detector.load(out).labels[-1] == NEW
    again = subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "enrol", str(model), str(files[0]), "--label", NEW,
                            "--phrase", "a music box", "--out", str(out)], capture_output=True, text=True)
    assert again.returncode == 2 and "holds an earlier" in again.stderr and "--force" in again.stderr and "Traceback" not in again.stderr
