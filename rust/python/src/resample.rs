use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::errors::ResampleError;

/// Band-limited, delay-compensated resampling of a mono float32 signal.
/// Returns exactly round(n * sr_out / sr_in) samples (ties to even).
#[pyfunction]
#[pyo3(signature = (x, sr_in, sr_out))]
fn resample<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f32>,
    sr_in: u32,
    sr_out: u32,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let view = x.as_array();
    // Strided views (e.g. one channel of an interleaved array) are copied once.
    let owned;
    let samples: &[f32] = match view.as_slice() {
        Some(s) => s,
        None => {
            owned = view.to_vec();
            &owned
        }
    };
    let out = py
        .detach(|| reasonaudio_core::resample::resample(samples, sr_in, sr_out))
        .map_err(|e| ResampleError::new_err(e.to_string()))?;
    Ok(out.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resample, m)?)?;
    Ok(())
}
