"""A detector's library and training records are typed parts of its model file: they survive the
file field for field and in order, an earlier (format 1) file's records load through
`migrate`, and a missing or wrong-typed field is refused in one line naming the file and the field."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("scipy")

from reasonaudio.cli import main  # noqa: E402
from reasonaudio.detect.ensemble import combine  # noqa: E402
from reasonaudio.detect.model import FORMAT, Detector, migrate  # noqa: E402
from reasonaudio.detect.records import LibraryRecord, TrainingRecord  # noqa: E402
from reasonaudio.detect.train import TrainConfig, train  # noqa: E402
from reasonaudio.errors import UserError  # noqa: E402

LIBRARY = {"spec": ["a", "b"], "hash": "ab" * 32, "n_atoms": 3, "n_train_atoms": 2, "sample_rate": 16000,
           "atom_ids": ["x", "y", "z"], "label_atom_ids": ["x", "z"], "valid_atom_ids": ["y"], "exemplar_split": None}
TRAINING = {"config": {"seed": 0}, "steps_done": 4, "selected_step": 2, "clips_seen": 16, "audio_hours_seen": 0.01,
            "final_loss": 0.5, "valid_train_recordings": {"frame_f1": 0.5}, "valid_held_out_recordings": None,
            "held_out_recordings": "none", "checks": [{"step": 2}, {"step": 4}], "seeds": "train 0", "device": "cpu",
            "deterministic": True}


def test_a_record_reads_and_writes_its_dict_in_the_file_order():
    lib = LibraryRecord.from_dict(LIBRARY)
    assert lib.spec == ("a", "b") and lib.given == ["a", "b"] and lib.atom_ids == ("x", "y", "z") and lib.exemplar_split is None
    assert list(lib.to_dict().items()) == list(LIBRARY.items())
    assert LibraryRecord.from_dict({**LIBRARY, "spec": "procedural"}).given == "procedural"
    t = TrainingRecord.from_dict(TRAINING)
    assert t.selected_step == 2 and t.checks == ({"step": 2}, {"step": 4}) and t.recipe is None and not t.ensemble_member
    assert list(t.to_dict().items()) == list(TRAINING.items())  # the later stages' fields are absent until set
    staged = replace(t, ensemble={"taggers": 2, "seeds": [0, 1]}, recipe="recordings")
    assert list(staged.to_dict())[-2:] == ["ensemble", "recipe"]
    assert TrainingRecord.from_dict(staged.to_dict()) == staged
    assert replace(t, ensemble_member=True).to_dict()["ensemble_member"] is True


BAD = [
    # (case, the library dict, the training dict, what the one line says)
    ("training field missing", LIBRARY, {k: v for k, v in TRAINING.items() if k != "seeds"}, "training.seeds is missing"),
    ("count as text", LIBRARY, {**TRAINING, "steps_done": "4"}, "training.steps_done: expected an integer, found str '4'"),
    ("flag as a number", LIBRARY, {**TRAINING, "deterministic": 1}, "training.deterministic: expected true or false, found int 1"),
    ("count as a flag", {**LIBRARY, "n_atoms": True}, TRAINING, "library.n_atoms: expected an integer, found bool True"),
    ("ids not texts", {**LIBRARY, "atom_ids": ["x", 2]}, TRAINING, "library.atom_ids: expected a list of strings"),
    ("hash missing", {k: v for k, v in LIBRARY.items() if k != "hash"}, TRAINING, "library.hash is missing"),
    ("record not a table", ["x"], TRAINING, "field library: expected a table, found list"),
    ("record missing", None, TRAINING, "field library: expected a table, found NoneType"),
    ("unknown field", LIBRARY, {**TRAINING, "train_seconds": 3.0}, "training.train_seconds: not a field of this format"),
]


@pytest.mark.parametrize("case, library, training, says", BAD, ids=[c[0] for c in BAD])
def test_a_bad_record_field_is_named(case, library, training, says):
    with pytest.raises(UserError, match="^m.pt: model file field ") as err:
        LibraryRecord.from_dict(library, "m.pt")
        TrainingRecord.from_dict(training, "m.pt")
    assert says in str(err.value) and "\n" not in str(err.value)



@pytest.fixture(scope="module")
def ensemble(tmp_path_factory) -> Path:
    """A two-tagger model of a recipe: every field of both records set, members nested."""
    root = tmp_path_factory.mktemp("records")
    cfg = TrainConfig(steps=1, batch=2, labels=4, channels=8, valid_clips=2, checks=1)
    model = combine([train("procedural", replace(cfg, seed=s), progress=False) for s in (0, 1)])
    model = model.replaced(training=replace(model.training, recipe="tiny"))
    return model.save(root / "e.pt")


def test_the_records_survive_the_file(ensemble, tmp_path):
    payload = torch.load(ensemble, weights_only=True)
    model = Detector.load(ensemble)
    assert model.training.to_dict() == payload["training"] and model.library.to_dict() == payload["library"]
    assert model.training.recipe == "tiny" and model.training.ensemble == {"taggers": 2, "seeds": [0, 1]}
    assert model.members[0].training.ensemble_member and model.members[0].training.recipe is None
    assert model.library.spec == "procedural" and model.library.hash == model.members[0].library.hash
    assert model.atom_of_label() == list(model.library.label_atom_ids)
    again = torch.load(model.save(tmp_path / "again.pt"), weights_only=True)
    assert again["training"] == payload["training"] and list(again["training"]) == list(payload["training"])
    assert again["library"] == payload["library"] and list(again["library"]) == list(payload["library"])
    assert [m["training"] for m in again["members"]] == [m["training"] for m in payload["members"]]


def test_an_early_format_1_file_loads_through_migrate(ensemble, tmp_path):
    payload = torch.load(ensemble, weights_only=True)
    old = {k: v for k, v in payload.items() if k != "members"} | {"format": "reasonaudio-detector/1"}
    old["net"] = {**old["net"], "gru": 0, "front_end": "logmel"}
    # the records of the first /1 files: fewer library fields, wall-clock figures in the training record
    old["library"] = {k: old["library"][k] for k in ("spec", "hash", "n_atoms", "sample_rate", "atom_ids")}
    old["training"] = {k: old["training"][k] for k in ("config", "steps_done", "clips_seen", "audio_hours_seen", "final_loss",
                                                       "seeds", "device")} | {"train_seconds": 9.0, "train_cpu_seconds": 8.0,
                                                                              "torch_threads": 1}
    torch.save(old, tmp_path / "old.pt")
    model = Detector.load(tmp_path / "old.pt")
    assert model.library.n_train_atoms is None and model.library.valid_atom_ids == () and model.library.exemplar_split is None
    t = model.training
    assert t.selected_step == t.steps_done and t.checks == () and t.held_out_recordings is None and t.deterministic is False
    assert "train_seconds" not in t.to_dict() and migrate(migrate(old)) == migrate(old)
    assert len(model.atom_of_label()) == len(model.labels)
    assert np.isfinite(model.frame_probabilities([np.zeros(16000, np.float32)])[0]).all()
    saved = model.save(tmp_path / "now.pt")
    assert torch.load(saved, weights_only=True)["format"] == FORMAT
    assert Detector.load(saved).training == t and Detector.load(saved).library == model.library


def _broken(ensemble: Path, out: Path, change) -> Path:
    payload = torch.load(ensemble, weights_only=True)
    change(payload)
    torch.save(payload, out)
    return out


BROKEN = [
    # (case, the change to the file's dict, the field the one line names)
    ("training count as text", lambda p: p["training"].update(clips_seen="many"), "field training.clips_seen: expected an integer"),
    ("library field missing", lambda p: p["library"].pop("sample_rate"), "field library.sample_rate is missing"),
    ("member's record", lambda p: p["members"][0]["training"].update(recipe=3), "field members[0].training.recipe: expected a string or none"),
    ("no training record", lambda p: p.pop("training"), "field training: expected a table, found NoneType"),
]


@pytest.mark.parametrize("case, change, says", BROKEN, ids=[c[0] for c in BROKEN])
def test_a_model_file_with_a_bad_record_is_refused_in_one_line(ensemble, tmp_path, capsys, case, change, says):
    model = _broken(ensemble, tmp_path / "bad.pt", change)
    audio = tmp_path / "audio"
    audio.mkdir()
    import soundfile as sf

    sf.write(audio / "a.wav", np.zeros(16000, np.float32), 16000)
    out = tmp_path / "events.parquet"
    code = main(["detect", "run", str(model), str(audio), "--out", str(out), "--device", "cpu", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"{model}: model file {says}" in err, err
    assert not out.exists()
