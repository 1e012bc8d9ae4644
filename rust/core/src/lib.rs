//! reasonaudio-core: the pure-Rust engine of reasonaudio.
//!
//! Everything here is usable without Python. The crate has two layers:
//!
//! - **The relevance engine**, always built: [`logic`] parses and validates the query logic of
//!   the benchmark contract (`{"all": [{"has": ...}, {"before": [...]}, ...]}`), [`annotate`]
//!   evaluates many queries against an events table and returns the relevant (query, clip)
//!   pairs, [`rank`] ranks clips by cosine similarity of embeddings, and [`cancel`] lets a caller
//!   stop a long call. It needs only `rayon`, `serde_json` and `thiserror`, and no C++ compiler.
//! - **Synthesis** (default features): procedural atoms ([`atoms`]), clip planning ([`plan`]),
//!   sample-accurate mixing ([`mix`]), band-limited resampling ([`resample`]), WAV/FLAC writing
//!   ([`wav`]) and acoustic scenes ([`scene`]).
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `synth` | yes | `atoms`, `plan`, `mix`, `resample`, `wav` (pure Rust) |
//! | `scene` | yes | `scene` (beds, rooms, pitch and tempo); compiles Signalsmith Stretch's C++ through `cxx`, so it needs a C++ compiler |
//! | `serde` | no | `Serialize`/`Deserialize` for [`logic::Logic`] and [`logic::Constraint`] |
//! | `schema` | no | `schemars::JsonSchema` for the same types (the committed `docs/logic.schema.json`) |
//!
//! A program that only annotates depends on the relevance engine alone:
//!
//! ```toml
//! [dependencies]
//! reasonaudio-core = { version = "0.1", default-features = false }
//! ```
//!
//! ```
//! use reasonaudio_core::annotate::{relevance, Events};
//!
//! // One clip: a dog barks in [0, 2 s), then a siren sounds in [3 s, 5 s) (10 ticks per second).
//! let events = Events { clip: &[0, 0], label: &[0, 1], onset: &[0, 30], offset: &[20, 50] };
//! let logic = [r#"{"all": [{"before": ["dog_bark", "siren"]}]}"#];
//! let rel = relevance(&events, 1, 10.0, &["dog_bark", "siren"], &["q1"], &logic, 0).unwrap();
//! assert_eq!(rel.clips_of(0), &[0]);
//! ```
#![warn(missing_docs)]

pub mod annotate;
pub mod cancel;
pub mod logic;
pub mod rank;

#[cfg(feature = "synth")]
pub mod atoms;
#[cfg(feature = "synth")]
pub mod mix;
#[cfg(feature = "synth")]
pub mod plan;
#[cfg(feature = "synth")]
pub mod resample;
#[cfg(feature = "scene")]
pub mod scene;
#[cfg(feature = "synth")]
pub mod wav;

/// Version of the core crate (also reported by the Python package).
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
