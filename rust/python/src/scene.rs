//! Bindings of `reasonaudio_core::scene`: noise textures, room responses (preparation, `tail_s`,
//! FFT convolution), varispeed, independent pitch shift / time stretch, and rendering in a scene (`render_corpus_scene`,
//! `render_clip_scene`). Heavy work runs with the GIL released; `render_corpus_scene` stops on
//! Ctrl-C between clips. Bad inputs raise `MixError` (a `ValueError`) naming clip, row or option.
use std::path::PathBuf;

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use reasonaudio_core::cancel::Cancel;
use reasonaudio_core::mix::{AtomBank, EventColumns};
use reasonaudio_core::scene::render::{self, Corpus, CorpusOptions, SceneColumns};
use reasonaudio_core::scene::{bed, room, shift, stretch};
use reasonaudio_core::wav::AudioFormat;

use crate::errors::{interruptible, AudioWriteError, MixError};
use crate::mix::{column, options, value_error};

/// `n` samples of "white" | "pink" | "brown" noise from (seed, key): zero mean, RMS TEXTURE_RMS.
#[pyfunction]
#[pyo3(signature = (kind, n, seed, key))]
fn scene_noise<'py>(py: Python<'py>, kind: &str, n: usize, seed: u64, key: u64) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let kind: bed::Texture = kind.parse().map_err(MixError::new_err)?;
    Ok(py.allow_threads(|| bed::noise(kind, n, seed, key)).into_pyarray_bound(py))
}

/// A raw mono response aligned at its direct path, cut after a 60 dB decay, unit energy.
#[pyfunction]
fn room_prepare<'py>(py: Python<'py>, ir: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let ir = column::<f32>(ir, "ir", "float32")?;
    let slice = ir.as_slice()?;
    let out = py.allow_threads(|| room::prepare_ir(slice)).map_err(value_error)?;
    Ok(out.into_pyarray_bound(py))
}

/// Seconds until the response's Schroeder energy decay falls 20 dB (contract §5's tail_s).
#[pyfunction]
fn room_tail_s(ir: &Bound<'_, PyAny>, sample_rate: u32) -> PyResult<f64> {
    let ir = column::<f32>(ir, "ir", "float32")?;
    if sample_rate == 0 {
        return Err(MixError::new_err("sample_rate must be positive"));
    }
    Ok(room::tail_s(ir.as_slice()?, sample_rate))
}

/// Full linear convolution of `x` with `ir` by FFT (len(x) + len(ir) - 1 samples).
#[pyfunction]
fn convolve<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    ir: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let x = column::<f32>(x, "x", "float32")?;
    let ir = column::<f32>(ir, "ir", "float32")?;
    let (xs, hs) = (x.as_slice()?, ir.as_slice()?);
    let n = if xs.is_empty() || hs.is_empty() { 0 } else { xs.len() + hs.len() - 1 };
    let out = py.allow_threads(|| {
        let mut out = vec![0f32; n];
        room::Convolver::default().convolve(xs, hs, 0, &mut out);
        out
    });
    Ok(out.into_pyarray_bound(py))
}

/// The speed numerator (over SPEED_DEN) nearest to a shift of `semitones`; None when not finite
/// or beyond an octave.
#[pyfunction]
fn speed_for_semitones(semitones: f64) -> Option<u32> {
    stretch::speed_for_semitones(semitones)
}

/// (pitch_semitones, stretch) that speed `k` renders.
#[pyfunction]
fn speed_info(k: u32) -> PyResult<(f64, f64)> {
    if !(stretch::SPEED_MIN..=stretch::SPEED_MAX).contains(&k) {
        return Err(MixError::new_err(format!(
            "speed {k} is outside [{}, {}] (over {})",
            stretch::SPEED_MIN,
            stretch::SPEED_MAX,
            stretch::SPEED_DEN
        )));
    }
    Ok((stretch::speed_semitones(k), stretch::speed_stretch(k)))
}

/// Length of `n` samples played at speed `k`: round(n * SPEED_DEN / k), ties to even.
#[pyfunction]
fn speed_len(n: usize, k: u32) -> PyResult<usize> {
    speed_info(k)?;
    Ok(stretch::speed_len(n, k))
}

/// `x` played at speed k / SPEED_DEN (pitch and tempo together): exactly speed_len(len(x), k) samples.
#[pyfunction]
fn varispeed<'py>(py: Python<'py>, x: &Bound<'py, PyAny>, k: u32) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let x = column::<f32>(x, "x", "float32")?;
    let xs = x.as_slice()?;
    let out = py.allow_threads(|| stretch::varispeed(xs, k)).map_err(value_error)?;
    Ok(out.into_pyarray_bound(py))
}

/// `x` transposed by `cents` (its length kept) and stretched by `stretch / STRETCH_DEN` (its pitch
/// kept) through Signalsmith Stretch: exactly stretch_len(len(x), stretch) samples.
#[pyfunction]
#[pyo3(signature = (x, cents, stretch, sample_rate))]
fn shift_stretch<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    cents: i32,
    stretch: u32,
    sample_rate: u32,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let x = column::<f32>(x, "x", "float32")?;
    let xs = x.as_slice()?;
    let out = py.allow_threads(|| shift::shift_stretch(xs, cents, stretch, sample_rate)).map_err(value_error)?;
    Ok(out.into_pyarray_bound(py))
}

/// Length of `n` samples stretched by `stretch / STRETCH_DEN`: round(n * stretch / STRETCH_DEN), ties to even.
#[pyfunction]
fn stretch_len(n: usize, stretch: u32) -> PyResult<usize> {
    shift::check(0, stretch).map_err(value_error)?;
    Ok(shift::stretch_len(n, stretch))
}

fn optional<'py, T: numpy::Element>(
    x: Option<&Bound<'py, PyAny>>,
    name: &str,
    dtype: &str,
) -> PyResult<Option<numpy::PyReadonlyArray1<'py, T>>> {
    x.map(|v| column::<T>(v, name, dtype)).transpose()
}

/// An optional column's values; empty where it was not given (the core's "unchanged").
fn slice_or_empty<'a, T: numpy::Element>(x: &'a Option<numpy::PyReadonlyArray1<'_, T>>) -> PyResult<&'a [T]> {
    Ok(match x {
        Some(c) => c.as_slice()?,
        None => &[],
    })
}

fn bank<'a>(audio: &'a [f32], offsets: &'a [u64]) -> PyResult<AtomBank<'a>> {
    AtomBank::new(audio, offsets).map_err(value_error)
}

/// Renders every clip of a plan in its scene and writes paths[i]: render_corpus's columns plus the
/// bed bank (unit-level sources), the room bank (prepared responses) and per-clip bed index (-1:
/// none), bed start sample, target SNR (dB) and room index (-1: dry), and per-event speed
/// (uint32 over SPEED_DEN; empty: unchanged). Returns {"peak", "gain", "bed_gain"} per clip and
/// {"ev_snr_db"} per event (+inf without a bed), and with `sha256=True` "sha256": the hex sha256
/// of every file's bytes.
#[pyfunction]
#[pyo3(signature = (atom_audio, atom_offsets, ev_clip, ev_atom, ev_onset, ev_length, ev_gain_db, clip_lengths,
    paths, sample_rate, bed_audio, bed_offsets, clip_bed, clip_bed_start, clip_snr_db, room_audio, room_offsets,
    clip_room, ev_speed, format = "wav16", fade_ms = 5.0, crossfade_ms = 50.0, ceiling = 0.98, threads = 0,
    sha256 = false, ev_pitch_cents = None, ev_stretch = None, atomic = true))]
#[allow(clippy::too_many_arguments)]
fn render_corpus_scene<'py>(
    py: Python<'py>,
    atom_audio: &Bound<'py, PyAny>,
    atom_offsets: &Bound<'py, PyAny>,
    ev_clip: &Bound<'py, PyAny>,
    ev_atom: &Bound<'py, PyAny>,
    ev_onset: &Bound<'py, PyAny>,
    ev_length: &Bound<'py, PyAny>,
    ev_gain_db: &Bound<'py, PyAny>,
    clip_lengths: &Bound<'py, PyAny>,
    paths: Vec<PathBuf>,
    sample_rate: i64,
    bed_audio: &Bound<'py, PyAny>,
    bed_offsets: &Bound<'py, PyAny>,
    clip_bed: &Bound<'py, PyAny>,
    clip_bed_start: &Bound<'py, PyAny>,
    clip_snr_db: &Bound<'py, PyAny>,
    room_audio: &Bound<'py, PyAny>,
    room_offsets: &Bound<'py, PyAny>,
    clip_room: &Bound<'py, PyAny>,
    ev_speed: &Bound<'py, PyAny>,
    format: &str,
    fade_ms: f64,
    crossfade_ms: f64,
    ceiling: f32,
    threads: usize,
    sha256: bool,
    ev_pitch_cents: Option<&Bound<'py, PyAny>>,
    ev_stretch: Option<&Bound<'py, PyAny>>,
    atomic: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let audio = column::<f32>(atom_audio, "atom_audio", "float32")?;
    let offsets = column::<u64>(atom_offsets, "atom_offsets", "uint64")?;
    let clip = column::<u32>(ev_clip, "ev_clip", "uint32")?;
    let atom = column::<u32>(ev_atom, "ev_atom", "uint32")?;
    let onset = column::<i64>(ev_onset, "ev_onset", "int64")?;
    let length = column::<i64>(ev_length, "ev_length", "int64")?;
    let gain_db = column::<f32>(ev_gain_db, "ev_gain_db", "float32")?;
    let lens = column::<i64>(clip_lengths, "clip_lengths", "int64")?;
    let bed_audio = column::<f32>(bed_audio, "bed_audio", "float32")?;
    let bed_offsets = column::<u64>(bed_offsets, "bed_offsets", "uint64")?;
    let clip_bed = column::<i32>(clip_bed, "clip_bed", "int32")?;
    let clip_bed_start = column::<i64>(clip_bed_start, "clip_bed_start", "int64")?;
    let clip_snr_db = column::<f32>(clip_snr_db, "clip_snr_db", "float32")?;
    let room_audio = column::<f32>(room_audio, "room_audio", "float32")?;
    let room_offsets = column::<u64>(room_offsets, "room_offsets", "uint64")?;
    let clip_room = column::<i32>(clip_room, "clip_room", "int32")?;
    let ev_speed = column::<u32>(ev_speed, "ev_speed", "uint32")?;
    let ev_cents = optional::<i32>(ev_pitch_cents, "ev_pitch_cents", "int32")?;
    let ev_stretch = optional::<u32>(ev_stretch, "ev_stretch", "uint32")?;
    let format: AudioFormat = format.parse().map_err(value_error)?;
    let (_, opts) = options(sample_rate, fade_ms, crossfade_ms, ceiling)?;

    let atoms = bank(audio.as_slice()?, offsets.as_slice()?)?;
    let cols = EventColumns {
        clip: clip.as_slice()?,
        atom: atom.as_slice()?,
        onset: onset.as_slice()?,
        length: length.as_slice()?,
        gain_db: gain_db.as_slice()?,
    };
    let scene = SceneColumns {
        beds: bank(bed_audio.as_slice()?, bed_offsets.as_slice()?)?,
        rooms: bank(room_audio.as_slice()?, room_offsets.as_slice()?)?,
        clip_bed: clip_bed.as_slice()?,
        clip_bed_start: clip_bed_start.as_slice()?,
        clip_snr_db: clip_snr_db.as_slice()?,
        clip_room: clip_room.as_slice()?,
        ev_speed: ev_speed.as_slice()?,
        ev_pitch_cents: slice_or_empty(&ev_cents)?,
        ev_stretch: slice_or_empty(&ev_stretch)?,
    };
    let corpus = Corpus::clean(atoms, cols, lens.as_slice()?).in_scene(scene);
    let out = CorpusOptions { format, threads, sha256, atomic };
    let report = interruptible(py, |flag| render::render_corpus(&corpus, &paths, &opts, &out, Cancel::new(flag)))?
        .map_err(|e| match e {
            reasonaudio_core::mix::MixError::Write { .. } => AudioWriteError::new_err(e.to_string()),
            other => value_error(other),
        })?;
    let out = PyDict::new_bound(py);
    out.set_item("peak", report.clips.iter().map(|s| s.peak).collect::<Vec<f32>>().into_pyarray_bound(py))?;
    out.set_item("gain", report.clips.iter().map(|s| s.gain).collect::<Vec<f32>>().into_pyarray_bound(py))?;
    out.set_item("bed_gain", report.clips.iter().map(|s| s.bed_gain).collect::<Vec<f32>>().into_pyarray_bound(py))?;
    out.set_item("ev_snr_db", report.event_snr_db.into_pyarray_bound(py))?;
    if sha256 {
        out.set_item("sha256", report.sha256.iter().map(crate::mix::hex).collect::<Vec<String>>())?;
    }
    Ok(out)
}

/// Renders one clip in a scene and returns its stems: {"audio" (limited), "events" (n_events x
/// clip_length: every event's own wet signal before the limiter), "bed" (the bed at its gain before
/// the limiter), "peak", "gain", "bed_gain", "ev_snr_db"}. `bed` is a unit-level source (None: no
/// bed), `room` a prepared response (None: dry), `ev_speed` uint32 over SPEED_DEN (None: unchanged).
#[pyfunction]
#[pyo3(signature = (atom_audio, atom_offsets, ev_atom, ev_onset, ev_length, ev_gain_db, clip_length, sample_rate,
    bed = None, bed_start = 0, snr_db = 0.0, room = None, ev_speed = None, fade_ms = 5.0, crossfade_ms = 50.0,
    ceiling = 0.98, ev_pitch_cents = None, ev_stretch = None))]
#[allow(clippy::too_many_arguments)]
fn render_clip_scene<'py>(
    py: Python<'py>,
    atom_audio: &Bound<'py, PyAny>,
    atom_offsets: &Bound<'py, PyAny>,
    ev_atom: &Bound<'py, PyAny>,
    ev_onset: &Bound<'py, PyAny>,
    ev_length: &Bound<'py, PyAny>,
    ev_gain_db: &Bound<'py, PyAny>,
    clip_length: i64,
    sample_rate: i64,
    bed: Option<&Bound<'py, PyAny>>,
    bed_start: i64,
    snr_db: f32,
    room: Option<&Bound<'py, PyAny>>,
    ev_speed: Option<&Bound<'py, PyAny>>,
    fade_ms: f64,
    crossfade_ms: f64,
    ceiling: f32,
    ev_pitch_cents: Option<&Bound<'py, PyAny>>,
    ev_stretch: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let audio = column::<f32>(atom_audio, "atom_audio", "float32")?;
    let offsets = column::<u64>(atom_offsets, "atom_offsets", "uint64")?;
    let atom = column::<u32>(ev_atom, "ev_atom", "uint32")?;
    let onset = column::<i64>(ev_onset, "ev_onset", "int64")?;
    let length = column::<i64>(ev_length, "ev_length", "int64")?;
    let gain_db = column::<f32>(ev_gain_db, "ev_gain_db", "float32")?;
    let bed = bed.map(|b| column::<f32>(b, "bed", "float32")).transpose()?;
    let room = room.map(|r| column::<f32>(r, "room", "float32")).transpose()?;
    let speeds = ev_speed.map(|s| column::<u32>(s, "ev_speed", "uint32")).transpose()?;
    let ev_cents = optional::<i32>(ev_pitch_cents, "ev_pitch_cents", "int32")?;
    let ev_stretch = optional::<u32>(ev_stretch, "ev_stretch", "uint32")?;
    let (_, opts) = options(sample_rate, fade_ms, crossfade_ms, ceiling)?;
    let atoms = bank(audio.as_slice()?, offsets.as_slice()?)?;
    let (atom, onset, length, gain_db) = (atom.as_slice()?, onset.as_slice()?, length.as_slice()?, gain_db.as_slice()?);
    let n = atom.len();
    if onset.len() != n || length.len() != n || gain_db.len() != n {
        return Err(MixError::new_err(format!(
            "event columns have different lengths: ev_atom {n}, ev_onset {}, ev_length {}, ev_gain_db {}",
            onset.len(),
            length.len(),
            gain_db.len()
        )));
    }
    let clip = vec![0u32; n];
    let cols = EventColumns { clip: &clip, atom, onset, length, gain_db };
    let bed_slice = slice_or_empty(&bed)?;
    let room_slice = slice_or_empty(&room)?;
    let speed_slice = slice_or_empty(&speeds)?;
    let bed_off = [0u64, bed_slice.len() as u64];
    let room_off = [0u64, room_slice.len() as u64];
    let clip_bed = [if bed.is_some() { 0 } else { -1 }];
    let clip_room = [if room.is_some() { 0 } else { -1 }];
    let scene = SceneColumns {
        beds: bank(bed_slice, &bed_off)?,
        rooms: bank(room_slice, &room_off)?,
        clip_bed: &clip_bed,
        clip_bed_start: &[bed_start],
        clip_snr_db: &[snr_db],
        clip_room: &clip_room,
        ev_speed: speed_slice,
        ev_pitch_cents: slice_or_empty(&ev_cents)?,
        ev_stretch: slice_or_empty(&ev_stretch)?,
    };
    let lens = [clip_length];
    let corpus = Corpus::clean(atoms, cols, &lens).in_scene(scene);
    let r = py.allow_threads(|| render::render_clip(&corpus, 0, &opts, true)).map_err(value_error)?;
    let kept = r.stems.expect("asked for");
    let len = r.audio.len();
    let mut stems = Array2::<f32>::zeros((kept.events.len(), len));
    for (mut row, stem) in stems.rows_mut().into_iter().zip(&kept.events) {
        row.iter_mut().zip(stem).for_each(|(d, &s)| *d = s);
    }
    let out = PyDict::new_bound(py);
    out.set_item("audio", r.audio.into_pyarray_bound(py))?;
    let stems: Bound<'py, PyArray2<f32>> = stems.into_pyarray_bound(py);
    out.set_item("events", stems)?;
    out.set_item("bed", kept.bed.into_pyarray_bound(py))?;
    out.set_item("peak", r.stats.peak)?;
    out.set_item("gain", r.stats.gain)?;
    out.set_item("bed_gain", r.stats.bed_gain)?;
    out.set_item("ev_snr_db", r.event_snr_db.into_pyarray_bound(py))?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SPEED_DEN", stretch::SPEED_DEN)?;
    m.add("STRETCH_DEN", shift::STRETCH_DEN)?;
    m.add("STRETCH_MIN", shift::STRETCH_MIN)?;
    m.add("STRETCH_MAX", shift::STRETCH_MAX)?;
    m.add("PITCH_MAX_CENTS", shift::PITCH_MAX_CENTS)?;
    m.add("SNR_HEADROOM_DB", bed::SNR_HEADROOM_DB)?;
    m.add("TEXTURE_RMS", bed::TEXTURE_RMS)?;
    m.add_function(wrap_pyfunction!(scene_noise, m)?)?;
    m.add_function(wrap_pyfunction!(room_prepare, m)?)?;
    m.add_function(wrap_pyfunction!(room_tail_s, m)?)?;
    m.add_function(wrap_pyfunction!(convolve, m)?)?;
    m.add_function(wrap_pyfunction!(speed_for_semitones, m)?)?;
    m.add_function(wrap_pyfunction!(speed_info, m)?)?;
    m.add_function(wrap_pyfunction!(speed_len, m)?)?;
    m.add_function(wrap_pyfunction!(varispeed, m)?)?;
    m.add_function(wrap_pyfunction!(shift_stretch, m)?)?;
    m.add_function(wrap_pyfunction!(stretch_len, m)?)?;
    m.add_function(wrap_pyfunction!(render_corpus_scene, m)?)?;
    m.add_function(wrap_pyfunction!(render_clip_scene, m)?)?;
    Ok(())
}
