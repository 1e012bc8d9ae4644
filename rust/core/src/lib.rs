//! reasonaudio-core: the pure-Rust engine of reasonaudio.
//!
//! Everything here is usable without Python: procedural atoms, clip planning,
//! sample-accurate mixing, band-limited resampling, audio writing and the
//! relevance engine that evaluates query logic against event tables.

pub mod annotate;
pub mod atoms;
pub mod cancel;
pub mod logic;
pub mod mix;
pub mod plan;
pub mod rank;
pub mod resample;
pub mod scene;
pub mod wav;

/// Version of the core crate (also reported by the Python package).
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
