//! Thin PyO3 bindings: numpy in, numpy out, the GIL released around heavy work.
//! One file per core module; each exposes `register`.
use pyo3::prelude::*;

mod annotate;
mod atoms;
mod mix;
mod plan;
mod resample;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", reasonaudio_core::version())?;
    atoms::register(m)?;
    mix::register(m)?;
    plan::register(m)?;
    resample::register(m)?;
    annotate::register(m)?;
    Ok(())
}
