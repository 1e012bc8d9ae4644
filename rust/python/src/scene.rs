//! Bindings of `reasonaudio_core::scene`'s signal tools: noise textures, room responses
//! (preparation, `tail_s`, FFT convolution), varispeed and independent pitch shift / time stretch
//! (rendering in a scene is `render.rs`'s). Heavy work runs with the GIL released. Bad inputs
//! raise `MixError` (a `ValueError`) naming the option.
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use reasonaudio_core::scene::{bed, room, shift, stretch};

use crate::columns::column;
use crate::errors::{value_error, MixError};

/// `n` samples of "white" | "pink" | "brown" noise from (seed, key): zero mean, RMS TEXTURE_RMS.
#[pyfunction]
#[pyo3(signature = (kind, n, seed, key))]
fn scene_noise<'py>(py: Python<'py>, kind: &str, n: usize, seed: u64, key: u64) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let kind: bed::Texture = kind.parse().map_err(MixError::new_err)?;
    Ok(py.detach(|| bed::noise(kind, n, seed, key)).into_pyarray(py))
}

/// A raw mono response aligned at its direct path, cut after a 60 dB decay, unit energy.
#[pyfunction]
fn room_prepare<'py>(py: Python<'py>, ir: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let ir = column::<f32>(ir, "ir", "float32")?;
    let slice = ir.as_slice()?;
    let out = py.detach(|| room::prepare_ir(slice)).map_err(value_error)?;
    Ok(out.into_pyarray(py))
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
    let out = py.detach(|| {
        let mut out = vec![0f32; n];
        room::Convolver::default().convolve(xs, hs, 0, &mut out);
        out
    });
    Ok(out.into_pyarray(py))
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
    let out = py.detach(|| stretch::varispeed(xs, k)).map_err(value_error)?;
    Ok(out.into_pyarray(py))
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
    let out = py.detach(|| shift::shift_stretch(xs, cents, stretch, sample_rate)).map_err(value_error)?;
    Ok(out.into_pyarray(py))
}

/// Length of `n` samples stretched by `stretch / STRETCH_DEN`: round(n * stretch / STRETCH_DEN), ties to even.
#[pyfunction]
fn stretch_len(n: usize, stretch: u32) -> PyResult<usize> {
    shift::check(0, stretch).map_err(value_error)?;
    Ok(shift::stretch_len(n, stretch))
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
    Ok(())
}
