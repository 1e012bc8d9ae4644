"""`import_folder` and `reasonaudio atoms import|list|show` on odd files made inside the test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from reasonaudio.atoms import AtomLibrary, import_folder
from reasonaudio.cli import main
from reasonaudio.errors import UserError


def tone(sr: int, seconds: float, freq: float = 440.0, channels: int = 1) -> np.ndarray:
    t = np.arange(int(sr * seconds)) / sr
    x = 0.5 * np.sin(2 * np.pi * freq * t)
    return np.stack([x, 0.5 * x], axis=1)[:, :channels] if channels > 1 else x


def make_good(src: Path) -> None:
    (src / "dog_bark").mkdir(parents=True)
    (src / "siren").mkdir()
    (src / "rain").mkdir()
    # 0.2 s of silence around the sound: trimmed away.
    stereo = np.concatenate([np.zeros((8820, 2)), tone(44100, 1.0, 500, channels=2), np.zeros((8820, 2))])
    sf.write(src / "dog_bark" / "bark.wav", stereo, 44100, subtype="PCM_24")
    sf.write(src / "siren" / "siren.wav", tone(22050, 0.8, 900), 22050, subtype="PCM_U8")
    sf.write(src / "rain" / "rain.flac", tone(48000, 1.5, 300), 48000, subtype="PCM_16")


def make_bad(src: Path) -> None:
    (src / "silence").mkdir()
    (src / "broken").mkdir()
    (src / "blip").mkdir()
    (src / "Dog Bark").mkdir()
    sf.write(src / "silence" / "quiet.wav", np.zeros(16000), 16000)
    (src / "broken" / "corrupt.wav").write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt garbage")
    sf.write(src / "blip" / "blip.wav", tone(16000, 0.03), 16000)  # shorter than the 0.05-s audibility window
    sf.write(src / "Dog Bark" / "bark2.wav", tone(16000, 1.0, 700), 16000)


def test_good_folder_imports_odd_formats(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_good(src)
    report = import_folder(src, tmp_path / "lib")
    assert report.rejected == []
    lib = AtomLibrary.load(tmp_path / "lib")
    assert lib.labels == ["dog_bark", "rain", "siren"]
    assert lib.phrases == ["dog bark", "rain", "siren"]
    assert lib.sources == ["dog_bark/bark.wav", "rain/rain.flac", "siren/siren.wav"]
    assert lib.sample_rate == 16000
    # Silence trimmed: 1.0 s of tone stays ~1.0 s (10 ms frame granularity).
    assert abs(lib.durations_s[0] - 1.0) < 0.02
    assert abs(lib.durations_s[1] - 1.5) < 0.02
    for i in range(3):
        x = lib.audio(i).astype(np.float64)
        assert abs(20 * np.log10(np.sqrt(np.mean(x**2))) + 20) < 0.5
        assert np.max(np.abs(x)) <= 0.9
    # The 500 Hz stereo tone survives mixdown + 44.1 -> 16 kHz resampling.
    spec = np.abs(np.fft.rfft(lib.audio(0)))
    assert abs(np.argmax(spec) * 16000 / len(lib.audio(0)) - 500) < 2
    frame = lib.to_frame()
    assert frame["license"].to_list() == ["unspecified"] * 3


def test_bad_files_are_listed_and_nothing_is_written(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_good(src)
    make_bad(src)
    (src / "loose.wav").write_bytes(b"")
    with pytest.raises(UserError) as err:
        import_folder(src, tmp_path / "lib")
    msg = str(err.value)
    assert not (tmp_path / "lib").exists()
    assert "6 file(s)" in msg and "--skip-bad" in msg
    assert "silence/quiet.wav: silent (peak below -80 dBFS)" in msg
    assert "broken/corrupt.wav: unreadable or corrupt audio" in msg
    assert "blip/blip.wav: too short after trimming silence: 0.030 s < 0.05 s" in msg
    assert "Dog Bark/bark2.wav: label 'Dog Bark' is nearly identical to 'dog_bark' (dog_bark/bark.wav)" in msg
    assert "dog_bark/bark.wav: label 'dog_bark' is nearly identical to 'Dog Bark' (Dog Bark/bark2.wav)" in msg
    assert "loose.wav: not inside a label folder" in msg


def test_skip_bad_imports_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The import says what it refused in its report, and prints nothing itself (the CLI prints the report)."""
    src = tmp_path / "src"
    make_good(src)
    make_bad(src)
    report = import_folder(src, tmp_path / "lib", skip_bad=True)
    assert sorted(label for _, label in report.imported) == ["rain", "siren"]
    assert len(report.rejected) == 5
    assert "rejected 5 file(s)" in str(report)
    assert capsys.readouterr() == ("", "")
    assert AtomLibrary.load(tmp_path / "lib").labels == ["rain", "siren"]


def test_csv_labels_exemplars_and_phrases(tmp_path: Path) -> None:
    """Several rows may share a label (exemplars, contract v2) and then share its phrase; a second,
    different phrase for one label is refused."""
    src = tmp_path / "flat"
    src.mkdir()
    for name, f in [("a.wav", 300), ("b.wav", 600), ("c.ogg", 900), ("d.wav", 1200), ("e.wav", 1500)]:
        sf.write(src / name, tone(16000, 0.6, f), 16000)
    csv_path = tmp_path / "labels.csv"
    csv_path.write_text(
        "file,label,phrase\na.wav,low_hum,a low hum\nb.wav,beep,\nc.ogg,beep,a beep\nd.wav,whine,a high whine\n"
        "e.wav,whine,a shrill whine\nmissing.wav,x,\n"
    )
    with pytest.raises(UserError) as err:
        import_folder(src, tmp_path / "lib", labels_csv=csv_path)
    msg = str(err.value)
    assert "e.wav: phrase 'a shrill whine' differs from 'a high whine' given for label 'whine' by d.wav" in msg
    assert "missing.wav: listed in labels.csv line 7 but not found" in msg
    assert "b.wav" not in msg and "c.ogg" not in msg
    report = import_folder(src, tmp_path / "lib", labels_csv=csv_path, skip_bad=True, sample_rate=8000)
    lib = AtomLibrary.load(tmp_path / "lib")
    assert lib.labels == ["beep", "beep", "low_hum", "whine"]
    assert lib.phrases == ["a beep", "a beep", "a low hum", "a high whine"]
    assert lib.sample_rate == 8000 and len(report.imported) == 4 and lib.n_labels == 3


def test_cli_import_list_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    make_good(src)
    out = tmp_path / "atoms"
    assert main(["atoms", "import", str(src), "--out", str(out)]) == 0
    assert main(["atoms", "import", str(src), "--out", str(out)]) == 2
    assert "earlier atom library; pass --force" in capsys.readouterr().err
    assert main(["atoms", "import", str(src), "--out", str(out), "--force", "--sample-rate", "22050"]) == 0
    assert AtomLibrary.load(out).sample_rate == 22050
    capsys.readouterr()
    assert main(["atoms", "list", str(out)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[0].split() == ["atom_id", "label", "phrase", "duration_s", "license"]
    assert listing[1].startswith("atom_000  dog_bark  dog bark")
    assert main(["atoms", "show", str(out), "--out", str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").stat().st_size > 1000
    make_bad(src)
    assert main(["atoms", "import", str(src), "--out", str(tmp_path / "x")]) == 2
    assert "cannot be imported" in capsys.readouterr().err


def test_non_finite_and_too_long(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "nan").mkdir(parents=True)
    (src / "long").mkdir()
    x = tone(16000, 1.0)
    x[100] = np.nan
    sf.write(src / "nan" / "n.wav", x, 16000, subtype="FLOAT")
    sf.write(src / "long" / "l.wav", tone(8000, 12.0), 8000)
    with pytest.raises(UserError) as err:
        import_folder(src, tmp_path / "lib")
    msg = str(err.value)
    assert "nan/n.wav: contains NaN or infinite samples" in msg
    assert "long/l.wav: too long after trimming silence: 12.00 s > 10 s" in msg
    with pytest.raises(UserError, match="no usable audio files"):
        import_folder(src, tmp_path / "lib", skip_bad=True)
    assert not (tmp_path / "lib").exists()
