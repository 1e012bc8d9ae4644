//! Acoustic scenes (contract §5): background beds, rooms, and pitch/tempo.
//!
//! A scene changes how a clip sounds, never what it means: events keep their dry extents and the
//! renderer ([`render::render_corpus`], the one renderer: a clean corpus is one in the empty scene)
//! records what it did (bed gain, every event's SNR).
//! - [`bed`]: generated noise textures, fitting a bed to a clip, the per-clip bed gain;
//! - [`room`]: impulse-response preparation, `tail_s`, FFT convolution;
//! - [`render`]: rendering clips and corpora, clean or in a scene (stems, per-event SNR report);
//! - [`stretch`]: varispeed (pitch and tempo together) in integer-sample lengths;
//! - [`shift`]: independent pitch shift and time stretch (Signalsmith Stretch).

pub mod bed;
pub mod render;
pub mod room;
pub mod shift;
pub mod stretch;
