//! Bindings of `reasonaudio_core::mix`: `render_corpus` and `render_clip`.
//!
//! numpy columns are borrowed read-only (no copies); rendering and writing run with the GIL
//! released. Every plan problem surfaces as a `MixError` (a `ValueError`) naming the column,
//! clip or row, a failed write as an `AudioWriteError` (an `OSError`); Ctrl-C stops a render
//! between clips with `KeyboardInterrupt`.
use std::path::PathBuf;

use numpy::{Element, IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use reasonaudio_core::cancel::Cancel;
use reasonaudio_core::mix::{self, AtomBank, EventColumns, MixOptions};
use reasonaudio_core::scene::render::{self, Corpus, CorpusOptions, Rendered};
use reasonaudio_core::wav::AudioFormat;

use crate::errors::{interruptible, AudioWriteError, ColumnTypeError, MixError};

/// Borrows `obj` as a contiguous 1-D numpy array of `T`, or explains what was expected.
pub(crate) fn column<'py, T: Element>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    dtype: &str,
) -> PyResult<PyReadonlyArray1<'py, T>> {
    match obj.downcast::<PyArray1<T>>() {
        Ok(a) => {
            let ro = a.readonly();
            if !ro.is_contiguous() {
                return Err(MixError::new_err(format!("{name} must be a contiguous array (use np.ascontiguousarray)")));
            }
            Ok(ro)
        }
        Err(_) => {
            let got = match (obj.getattr("dtype"), obj.getattr("ndim")) {
                (Ok(dt), Ok(nd)) => format!("a {nd}-D array of {dt}"),
                _ => format!("a {}", obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())),
            };
            Err(ColumnTypeError::new_err(format!("{name} must be a 1-D numpy array of {dtype}, got {got}")))
        }
    }
}

pub(crate) fn value_error(e: impl std::fmt::Display) -> PyErr {
    MixError::new_err(e.to_string())
}

pub(crate) fn options(sample_rate: i64, fade_ms: f64, crossfade_ms: f64, ceiling: f32) -> PyResult<(u32, MixOptions)> {
    let sr = u32::try_from(sample_rate)
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| MixError::new_err(format!("sample_rate must be a positive integer, got {sample_rate}")))?;
    Ok((sr, MixOptions::from_ms(sr, fade_ms, crossfade_ms, ceiling).map_err(value_error)?))
}

/// Renders every clip of a plan and writes `paths[i]` for clip i.
///
/// Events are sorted by clip (then onset). Returns {"peak": float32[n_clips] (before
/// limiting), "gain": float32[n_clips] (the limiter's linear factor)}, and with `sha256=True`
/// "sha256": the hex sha256 of every file's bytes (hashed in memory, before the write). With
/// `atomic=False` files are written straight to their names (for a staged output directory that
/// is renamed into place whole), else through a temporary and a rename.
#[pyfunction]
#[pyo3(signature = (atom_audio, atom_offsets, ev_clip, ev_atom, ev_onset, ev_length, ev_gain_db, clip_lengths,
    paths, sample_rate, format = "wav16", fade_ms = 5.0, crossfade_ms = 50.0, ceiling = 0.98, threads = 0,
    sha256 = false, atomic = true))]
#[allow(clippy::too_many_arguments)]
fn render_corpus<'py>(
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
    format: &str,
    fade_ms: f64,
    crossfade_ms: f64,
    ceiling: f32,
    threads: usize,
    sha256: bool,
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
    let format: AudioFormat = format.parse().map_err(value_error)?;
    let (_, opts) = options(sample_rate, fade_ms, crossfade_ms, ceiling)?;

    let bank = AtomBank::new(audio.as_slice()?, offsets.as_slice()?).map_err(value_error)?;
    let cols = EventColumns {
        clip: clip.as_slice()?,
        atom: atom.as_slice()?,
        onset: onset.as_slice()?,
        length: length.as_slice()?,
        gain_db: gain_db.as_slice()?,
    };
    let lens = lens.as_slice()?;
    let out = CorpusOptions { format, threads, sha256, atomic };
    let corpus = Corpus::clean(bank, cols, lens);
    let report = interruptible(py, |flag| render::render_corpus(&corpus, &paths, &opts, &out, Cancel::new(flag)))?
        .map_err(|e| match e {
            mix::MixError::Write { .. } => AudioWriteError::new_err(e.to_string()),
            other => value_error(other),
        })?;
    let stats = &report.clips;
    let out = PyDict::new_bound(py);
    out.set_item("peak", stats.iter().map(|s| s.peak).collect::<Vec<f32>>().into_pyarray_bound(py))?;
    out.set_item("gain", stats.iter().map(|s| s.gain).collect::<Vec<f32>>().into_pyarray_bound(py))?;
    if sha256 {
        out.set_item("sha256", report.sha256.iter().map(hex).collect::<Vec<String>>())?;
    }
    Ok(out)
}

/// A sha256 digest in lowercase hex (sha256sum's spelling, as audio.sha256 holds it).
pub(crate) fn hex(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Renders one clip: the mixed, limited float32 audio and the limiter's figures.
#[allow(clippy::too_many_arguments)]
fn render_one<'py>(
    py: Python<'py>,
    atom_audio: &Bound<'py, PyAny>,
    atom_offsets: &Bound<'py, PyAny>,
    ev_atom: &Bound<'py, PyAny>,
    ev_onset: &Bound<'py, PyAny>,
    ev_length: &Bound<'py, PyAny>,
    ev_gain_db: &Bound<'py, PyAny>,
    clip_length: i64,
    sample_rate: i64,
    fade_ms: f64,
    crossfade_ms: f64,
    ceiling: f32,
) -> PyResult<Rendered> {
    let audio = column::<f32>(atom_audio, "atom_audio", "float32")?;
    let offsets = column::<u64>(atom_offsets, "atom_offsets", "uint64")?;
    let atom = column::<u32>(ev_atom, "ev_atom", "uint32")?;
    let onset = column::<i64>(ev_onset, "ev_onset", "int64")?;
    let length = column::<i64>(ev_length, "ev_length", "int64")?;
    let gain_db = column::<f32>(ev_gain_db, "ev_gain_db", "float32")?;
    let (_, opts) = options(sample_rate, fade_ms, crossfade_ms, ceiling)?;
    let bank = AtomBank::new(audio.as_slice()?, offsets.as_slice()?).map_err(value_error)?;
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
    let lens = [clip_length];
    let corpus = Corpus::clean(bank, cols, &lens);
    let rendered = py.allow_threads(|| render::render_clip(&corpus, 0, &opts, false)).map_err(value_error)?;
    Ok(rendered)
}

/// Renders one clip and returns its limited float32 audio (clip_length samples).
#[pyfunction]
#[pyo3(signature = (atom_audio, atom_offsets, ev_atom, ev_onset, ev_length, ev_gain_db, clip_length,
    sample_rate, fade_ms = 5.0, crossfade_ms = 50.0, ceiling = 0.98))]
#[allow(clippy::too_many_arguments)]
fn render_clip<'py>(
    py: Python<'py>,
    atom_audio: &Bound<'py, PyAny>,
    atom_offsets: &Bound<'py, PyAny>,
    ev_atom: &Bound<'py, PyAny>,
    ev_onset: &Bound<'py, PyAny>,
    ev_length: &Bound<'py, PyAny>,
    ev_gain_db: &Bound<'py, PyAny>,
    clip_length: i64,
    sample_rate: i64,
    fade_ms: f64,
    crossfade_ms: f64,
    ceiling: f32,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let rendered = render_one(
        py,
        atom_audio,
        atom_offsets,
        ev_atom,
        ev_onset,
        ev_length,
        ev_gain_db,
        clip_length,
        sample_rate,
        fade_ms,
        crossfade_ms,
        ceiling,
    )?;
    Ok(rendered.audio.into_pyarray_bound(py))
}

/// Renders one clip and returns (limited float32 audio, peak before the limiter, limiter gain):
/// what a caller that records the limiter's work (the compositional diagnostic) needs.
#[pyfunction]
#[pyo3(signature = (atom_audio, atom_offsets, ev_atom, ev_onset, ev_length, ev_gain_db, clip_length,
    sample_rate, fade_ms = 5.0, crossfade_ms = 50.0, ceiling = 0.98))]
#[allow(clippy::too_many_arguments)]
fn mix_clip<'py>(
    py: Python<'py>,
    atom_audio: &Bound<'py, PyAny>,
    atom_offsets: &Bound<'py, PyAny>,
    ev_atom: &Bound<'py, PyAny>,
    ev_onset: &Bound<'py, PyAny>,
    ev_length: &Bound<'py, PyAny>,
    ev_gain_db: &Bound<'py, PyAny>,
    clip_length: i64,
    sample_rate: i64,
    fade_ms: f64,
    crossfade_ms: f64,
    ceiling: f32,
) -> PyResult<(Bound<'py, PyArray1<f32>>, f32, f32)> {
    let rendered = render_one(
        py,
        atom_audio,
        atom_offsets,
        ev_atom,
        ev_onset,
        ev_length,
        ev_gain_db,
        clip_length,
        sample_rate,
        fade_ms,
        crossfade_ms,
        ceiling,
    )?;
    Ok((rendered.audio.into_pyarray_bound(py), rendered.stats.peak, rendered.stats.gain))
}

/// Encodes float32 samples as a complete audio file in memory ("wav16", "wav_f32" or "flac16"),
/// the same bytes `render_corpus` writes.
#[pyfunction]
#[pyo3(signature = (samples, sample_rate, format = "wav16"))]
fn encode_audio<'py>(
    py: Python<'py>,
    samples: &Bound<'py, PyAny>,
    sample_rate: i64,
    format: &str,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let samples = column::<f32>(samples, "samples", "float32")?;
    let format: AudioFormat =
        format.parse().map_err(|e: reasonaudio_core::wav::WavError| MixError::new_err(e.to_string()))?;
    let rate = u32::try_from(sample_rate)
        .ok()
        .filter(|r| *r > 0)
        .ok_or_else(|| MixError::new_err(format!("sample_rate must be a positive number of Hz, got {sample_rate}")))?;
    let slice = samples.as_slice()?;
    let mut out = Vec::new();
    py.allow_threads(|| reasonaudio_core::wav::encode(format, slice, rate, &mut out))
        .map_err(|e| AudioWriteError::new_err(e.to_string()))?;
    Ok(pyo3::types::PyBytes::new_bound(py, &out))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(render_corpus, m)?)?;
    m.add_function(wrap_pyfunction!(render_clip, m)?)?;
    m.add_function(wrap_pyfunction!(mix_clip, m)?)?;
    m.add_function(wrap_pyfunction!(encode_audio, m)?)?;
    Ok(())
}
