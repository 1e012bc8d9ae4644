//! Thin PyO3 bindings: numpy in, numpy out, the GIL released around heavy work.
//! Rendering takes value objects built once (`corpus.rs`) through one entry point for a corpus
//! and one for a clip (`render.rs`); the other files bind one core module each. Each exposes
//! `register`. Errors are raised as the classes of
//! `reasonaudio.errors` by kind, and long calls stop on Ctrl-C (see `errors.rs`).
// A false positive on the wrappers pyo3 0.22 generates for `PyResult` returns.
#![allow(clippy::useless_conversion)]
use pyo3::prelude::*;

mod annotate;
mod atoms;
mod columns;
mod corpus;
mod errors;
mod plan;
mod rank;
mod render;
mod resample;
mod scene;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::init(m.py())?;
    m.add("__version__", reasonaudio_core::version())?;
    atoms::register(m)?;
    corpus::register(m)?;
    render::register(m)?;
    plan::register(m)?;
    resample::register(m)?;
    annotate::register(m)?;
    rank::register(m)?;
    scene::register(m)?;
    Ok(())
}
