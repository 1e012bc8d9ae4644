//! Thin PyO3 bindings: numpy in, numpy out, the GIL released around heavy work.
//! Rendering takes value objects built once (`corpus.rs`) through one entry point for a corpus
//! and one for a clip (`render.rs`); the other files bind one core module each. Each exposes
//! `register`. Errors are raised as the classes of
//! `reasonaudio.errors` by kind, and long calls stop on Ctrl-C (see `errors.rs`).
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

// Declared as needing the GIL: the module is built and tested for GIL-enabled CPython only (an abi3
// wheel), so a free-threaded interpreter keeps its GIL on while the module is loaded.
#[pymodule(gil_used = true)]
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
