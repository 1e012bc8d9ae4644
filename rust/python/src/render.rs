//! The render entry points: [`render_corpus`] writes every clip of a [`Corpus`], [`render_clip`]
//! returns one, clean or in a scene (a corpus without a scene is the clean mixer's), and
//! [`encode_audio`] encodes samples the way `render_corpus` writes them.
//!
//! Rendering runs with the GIL released; Ctrl-C stops `render_corpus` between clips with
//! `KeyboardInterrupt`. Plan and scene problems raise `MixError` naming the clip or row, failed
//! writes `AudioWriteError`.
use std::path::PathBuf;

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use reasonaudio_core::cancel::Cancel;
use reasonaudio_core::scene::render::{self as core, CorpusOptions};
use reasonaudio_core::wav::{self, AudioFormat};

use crate::columns::column;
use crate::corpus::{Corpus, CorpusView, Mixer};
use crate::errors::{interruptible, mix_error, value_error, AudioWriteError, MixError};

/// Renders every clip of `corpus` and writes `paths[i]` for clip i.
///
/// Returns {"peak": float32 per clip (before limiting), "gain": the limiter's linear factor,
/// "bed_gain": the bed's gain (0 without a bed), "ev_snr_db": float32 per event (+inf without a
/// bed)}, and with `sha256=True` "sha256": the hex sha256 of every file's bytes (hashed in memory,
/// before the write). With `atomic=False` files are written straight to their names (for a staged
/// output directory that is renamed into place whole), else through a temporary and a rename.
#[pyfunction]
#[pyo3(signature = (corpus, paths, mixer, *, format = "wav16", threads = 0, sha256 = false, atomic = true))]
fn render_corpus<'py>(
    corpus: &Bound<'py, Corpus>,
    paths: Vec<PathBuf>,
    mixer: &Bound<'py, Mixer>,
    format: &str,
    threads: usize,
    sha256: bool,
    atomic: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let py = corpus.py();
    let format: AudioFormat = format.parse().map_err(value_error)?;
    let opts = mixer.get().options;
    let held = CorpusView::of(py, corpus.get())?;
    let corpus = held.corpus()?;
    let out = CorpusOptions { format, threads, sha256, atomic };
    let report = interruptible(py, |flag| core::render_corpus(&corpus, &paths, &opts, &out, Cancel::new(flag)))?
        .map_err(mix_error)?;
    let clips = &report.clips;
    let out = PyDict::new(py);
    out.set_item("peak", clips.iter().map(|s| s.peak).collect::<Vec<f32>>().into_pyarray(py))?;
    out.set_item("gain", clips.iter().map(|s| s.gain).collect::<Vec<f32>>().into_pyarray(py))?;
    out.set_item("bed_gain", clips.iter().map(|s| s.bed_gain).collect::<Vec<f32>>().into_pyarray(py))?;
    out.set_item("ev_snr_db", report.event_snr_db.into_pyarray(py))?;
    if sha256 {
        out.set_item("sha256", report.sha256.iter().map(hex).collect::<Vec<String>>())?;
    }
    Ok(out)
}

/// A sha256 digest in lowercase hex (sha256sum's spelling, as audio.sha256 holds it).
fn hex(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Renders clip `clip` of `corpus`: {"audio" (limited float32), "peak" (before the limiter),
/// "gain" (the limiter's), "bed_gain", "ev_snr_db" (per event of the clip)}, and with
/// `stems=True` "events" (n_events x clip length: every event's own wet signal before the
/// limiter) and "bed" (the bed at its gain before the limiter).
#[pyfunction]
#[pyo3(signature = (corpus, mixer, clip = 0, *, stems = false))]
fn render_clip<'py>(
    corpus: &Bound<'py, Corpus>,
    mixer: &Bound<'py, Mixer>,
    clip: usize,
    stems: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let py = corpus.py();
    let opts = mixer.get().options;
    let held = CorpusView::of(py, corpus.get())?;
    let corpus = held.corpus()?;
    let r = py.detach(|| core::render_clip(&corpus, clip, &opts, stems)).map_err(mix_error)?;
    let out = PyDict::new(py);
    if let Some(kept) = r.stems {
        let mut events = Array2::<f32>::zeros((kept.events.len(), r.audio.len()));
        for (mut row, stem) in events.rows_mut().into_iter().zip(&kept.events) {
            row.iter_mut().zip(stem).for_each(|(d, &s)| *d = s);
        }
        let events: Bound<'py, PyArray2<f32>> = events.into_pyarray(py);
        out.set_item("events", events)?;
        out.set_item("bed", kept.bed.into_pyarray(py))?;
    }
    out.set_item("audio", r.audio.into_pyarray(py))?;
    out.set_item("peak", r.stats.peak)?;
    out.set_item("gain", r.stats.gain)?;
    out.set_item("bed_gain", r.stats.bed_gain)?;
    out.set_item("ev_snr_db", r.event_snr_db.into_pyarray(py))?;
    Ok(out)
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
) -> PyResult<Bound<'py, PyBytes>> {
    let samples = column::<f32>(samples, "samples", "float32")?;
    let format: AudioFormat = format.parse().map_err(value_error)?;
    let rate = u32::try_from(sample_rate)
        .ok()
        .filter(|r| *r > 0)
        .ok_or_else(|| MixError::new_err(format!("sample_rate must be a positive number of Hz, got {sample_rate}")))?;
    let slice = samples.as_slice()?;
    let mut out = Vec::new();
    py.detach(|| wav::encode(format, slice, rate, &mut out)).map_err(|e| AudioWriteError::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, &out))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(render_corpus, m)?)?;
    m.add_function(wrap_pyfunction!(render_clip, m)?)?;
    m.add_function(wrap_pyfunction!(encode_audio, m)?)?;
    Ok(())
}
