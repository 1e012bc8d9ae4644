use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use reasonaudio_core::cancel::Cancel;

use crate::errors::{interruptible, AtomError};

type AtomColumns<'py> = (Vec<String>, Vec<String>, Vec<String>, Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<u64>>);

/// The embedded default library of 200 procedural atoms at `sample_rate` Hz.
/// Returns (labels, phrases, families, flat float32 audio, uint64 offsets[n+1]).
/// `seed` 0 is the default library; other seeds re-render the random details.
#[pyfunction]
#[pyo3(signature = (sample_rate, seed = 0))]
fn procedural_atoms(py: Python<'_>, sample_rate: u32, seed: u64) -> PyResult<AtomColumns<'_>> {
    if sample_rate < 4000 {
        return Err(AtomError::new_err(format!("sample_rate must be at least 4000 Hz, got {sample_rate}")));
    }
    let Ok(lib) = interruptible(py, |flag| {
        reasonaudio_core::atoms::procedural_library_cancellable(sample_rate, seed, Cancel::new(flag))
    })?
    else {
        unreachable!("cancelled only on an interrupt, which `interruptible` raises");
    };
    let total: usize = lib.iter().map(|a| a.samples.len()).sum();
    let mut audio = Vec::with_capacity(total);
    let mut offsets = Vec::with_capacity(lib.len() + 1);
    offsets.push(0u64);
    let (mut labels, mut phrases, mut families) = (Vec::new(), Vec::new(), Vec::new());
    for atom in lib {
        audio.extend_from_slice(&atom.samples);
        offsets.push(audio.len() as u64);
        labels.push(atom.label);
        phrases.push(atom.phrase);
        families.push(atom.family);
    }
    Ok((labels, phrases, families, audio.into_pyarray(py), offsets.into_pyarray(py)))
}

/// DC removal, 5 ms edge fades, RMS normalisation to -20 dBFS and a smooth
/// peak limiter to 0.9: the finishing every library atom gets.
#[pyfunction]
#[pyo3(signature = (x, sample_rate))]
fn finish_atom<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f32>,
    sample_rate: u32,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let samples = x.as_array().to_vec();
    if samples.iter().any(|v| !v.is_finite()) {
        return Err(AtomError::new_err("finish_atom: input contains NaN or infinite samples"));
    }
    let out = py.detach(|| reasonaudio_core::atoms::finish_atom(&samples, sample_rate));
    Ok(out.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(procedural_atoms, m)?)?;
    m.add_function(wrap_pyfunction!(finish_atom, m)?)?;
    Ok(())
}
