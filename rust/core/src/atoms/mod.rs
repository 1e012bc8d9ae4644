//! The embedded default library: 200 procedural atomic sounds.
//!
//! Each atom is rendered from a small recipe (oscillators, struck modes,
//! filtered noise, plucked strings, gates) with a fixed seed derived from its
//! label, so the library is identical on every machine and thread count.
//! Recipes are grouped in families (bells, sirens, engines, ...) and variants
//! within a family differ in something a listener hears at once: register,
//! rate, direction or texture. Percussive recipes are dense trains of hits
//! with ringing tails (or a faint bed underneath), because the benchmark needs
//! every atom audible over its whole length (no inner gap longer than ~50 ms)
//! and loopable; every atom starts and ends on the sound itself.
//!
//! After rendering, each atom loses its DC offset, gets 5 ms edge fades, is
//! normalised to `TARGET_RMS_DBFS` and peak-limited to `PEAK_LIMIT` by a
//! smooth gain-reduction limiter (renormalising after each pass).

use rayon::prelude::*;

use crate::cancel::{Cancel, Cancelled};

mod dsp;
mod synth;
mod voices;

use dsp::{finish, normalise_and_limit};
use synth::Synth;

/// One rendered atom of the default library.
#[derive(Debug, Clone, PartialEq)]
pub struct ProceduralAtom {
    /// Unique snake_case class name, e.g. `bell_low`.
    pub label: String,
    /// English phrase used in query text, e.g. `a low ringing bell`.
    pub phrase: String,
    /// Recipe family, e.g. `bells`.
    pub family: String,
    /// Mono audio at the requested sample rate.
    pub samples: Vec<f32>,
}

/// Number of atoms in the default library.
pub const LIBRARY_SIZE: usize = 200;
/// Loudness every atom is normalised to (RMS, dB re full scale).
pub const TARGET_RMS_DBFS: f64 = -20.0;
/// Largest absolute sample value of any atom.
pub const PEAK_LIMIT: f32 = 0.9;
/// Recipes put content up to ~7 kHz; below this rate we render here and resample down.
const MIN_RENDER_RATE: u32 = 16000;
const EDGE_FADE_S: f64 = 0.005;

/// The default library at `sample_rate` Hz (seed 0).
pub fn procedural_library(sample_rate: u32) -> Vec<ProceduralAtom> {
    procedural_library_seeded(sample_rate, 0)
}

/// The library with a different noise seed: same recipes, other random
/// details (hit timings, noise). Seed 0 is the default library; other seeds
/// let tests measure how much an atom varies under re-rendering.
pub fn procedural_library_seeded(sample_rate: u32, seed: u64) -> Vec<ProceduralAtom> {
    procedural_library_cancellable(sample_rate, seed, Cancel::NEVER).expect("never cancelled")
}

/// [`procedural_library_seeded`] that stops soon after `cancel` is set (checked per atom).
pub fn procedural_library_cancellable(
    sample_rate: u32,
    seed: u64,
    cancel: Cancel<'_>,
) -> Result<Vec<ProceduralAtom>, Cancelled> {
    assert!(sample_rate >= 4000, "sample_rate must be at least 4000 Hz");
    let render_rate = sample_rate.max(MIN_RENDER_RATE);
    let specs = specs();
    debug_assert_eq!(specs.len(), LIBRARY_SIZE);
    specs
        .par_iter()
        .map(|spec| {
            if cancel.is_set() {
                return Err(Cancelled);
            }
            let mut synth = Synth::new(render_rate as f64, spec.duration_s, seed ^ fnv1a(spec.label));
            let raw = (spec.render)(&mut synth);
            let mut audio = finish(raw, render_rate as f64);
            if render_rate != sample_rate {
                audio = crate::resample::resample(&audio, render_rate, sample_rate).expect("valid rates");
                audio = normalise_and_limit(audio.iter().map(|v| *v as f64).collect());
            }
            Ok(ProceduralAtom {
                label: spec.label.to_string(),
                phrase: spec.phrase.to_string(),
                family: spec.family.to_string(),
                samples: audio,
            })
        })
        .collect()
}

/// The finishing every atom gets, for imported sounds too: DC removed (20 Hz
/// high-pass), 5 ms raised-cosine edge fades, RMS normalised to
/// `TARGET_RMS_DBFS` and peaks limited to `PEAK_LIMIT` (smooth limiter).
/// An all-zero input stays all-zero.
pub fn finish_atom(x: &[f32], sample_rate: u32) -> Vec<f32> {
    if x.is_empty() {
        return Vec::new();
    }
    finish(x.iter().map(|v| *v as f64).collect(), sample_rate as f64)
}

fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

// ---------------------------------------------------------------- the library

type Recipe = Box<dyn Fn(&mut Synth) -> Vec<f64> + Send + Sync>;

struct Spec {
    label: &'static str,
    phrase: &'static str,
    family: &'static str,
    duration_s: f64,
    render: Recipe,
}

macro_rules! atom {
    ($v:ident, $family:expr, $label:expr, $phrase:expr, $dur:expr, $body:expr) => {
        $v.push(Spec { label: $label, phrase: $phrase, family: $family, duration_s: $dur, render: Box::new($body) })
    };
}

/// Labels, phrases and families of the default library, in library order.
pub fn library_index() -> Vec<(&'static str, &'static str, &'static str)> {
    specs().iter().map(|s| (s.label, s.phrase, s.family)).collect()
}

// Declared after `atom!` so the family files see the macro.
mod recipes;

fn specs() -> Vec<Spec> {
    recipes::all()
}

#[cfg(test)]
mod tests {
    use super::dsp::rms;
    use super::*;

    const SR: u32 = 16000;

    /// Longest run (seconds) of 10 ms frames whose RMS is more than `rel_db`
    /// below the atom's own RMS, counting runs that touch either edge too.
    pub(crate) fn longest_quiet_run_s(x: &[f32], sr: u32, rel_db: f64) -> f64 {
        let frame = (sr / 100) as usize;
        let overall = (x.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / x.len() as f64).sqrt();
        let floor = overall * 10f64.powf(-rel_db / 20.0);
        let (mut run, mut best) = (0usize, 0usize);
        for chunk in x.chunks(frame) {
            let r = (chunk.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / chunk.len() as f64).sqrt();
            if r < floor {
                run += 1;
                best = best.max(run);
            } else {
                run = 0;
            }
        }
        best as f64 * 0.01
    }

    #[test]
    fn library_shape_and_loudness() {
        let lib = procedural_library(SR);
        assert_eq!(lib.len(), LIBRARY_SIZE);
        let mut labels = std::collections::HashSet::new();
        let mut phrases = std::collections::HashSet::new();
        let target = 10f64.powf(TARGET_RMS_DBFS / 20.0);
        let mut problems = Vec::new();
        for a in &lib {
            assert!(labels.insert(a.label.clone()), "duplicate label {}", a.label);
            assert!(phrases.insert(a.phrase.clone()), "duplicate phrase {}", a.phrase);
            assert!(
                a.label.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    && !a.label.starts_with('_')
                    && !a.label.ends_with('_'),
                "label not snake_case: {}",
                a.label
            );
            let dur = a.samples.len() as f64 / SR as f64;
            assert!((0.5..=4.0).contains(&dur), "{}: duration {dur}", a.label);
            assert!(a.samples.iter().all(|v| v.is_finite()), "{}: non-finite", a.label);
            let peak = a.samples.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            assert!(peak <= PEAK_LIMIT, "{}: peak {peak}", a.label);
            let r = rms(&a.samples.iter().map(|v| *v as f64).collect::<Vec<_>>());
            let db = 20.0 * (r / target).log10();
            if db.abs() > 0.5 {
                problems.push(format!("{}: rms {db:+.2} dB off target", a.label));
            }
        }
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn every_atom_is_audible_throughout() {
        let lib = procedural_library(SR);
        let bad: Vec<String> = lib
            .iter()
            .filter_map(|a| {
                let run = longest_quiet_run_s(&a.samples, SR, 40.0);
                (run > 0.05).then(|| format!("{} ({}): quiet for {run:.2} s", a.label, a.family))
            })
            .collect();
        assert!(bad.is_empty(), "atoms with gaps > 50 ms at -40 dB re their RMS: {bad:#?}");
    }

    #[test]
    fn deterministic_across_thread_counts_and_calls() {
        let a = procedural_library(SR);
        let single = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let b = single.install(|| procedural_library(SR));
        assert_eq!(a, b);
        let c = procedural_library_seeded(SR, 7);
        assert_ne!(a, c, "the seed must change random details");
        assert_eq!(library_index().len(), LIBRARY_SIZE);
    }

    #[test]
    #[ignore]
    fn timing() {
        for sr in [16000u32, 44100] {
            let t0 = std::time::Instant::now();
            let lib = procedural_library(sr);
            println!("{sr} Hz: {} atoms in {:.3} s", lib.len(), t0.elapsed().as_secs_f64());
        }
        let t0 = std::time::Instant::now();
        for spec in specs() {
            let t1 = std::time::Instant::now();
            let mut synth = Synth::new(16000.0, spec.duration_s, 0);
            let _ = finish((spec.render)(&mut synth), 16000.0);
            let el = t1.elapsed().as_secs_f64();
            if el > 0.02 {
                println!("slow: {} {:.3} s", spec.label, el);
            }
        }
        println!("serial total {:.3}", t0.elapsed().as_secs_f64());
    }

    #[test]
    fn other_sample_rates() {
        for sr in [8000u32, 22050, 44100] {
            let lib = procedural_library(sr);
            for a in &lib {
                let peak = a.samples.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                assert!(peak <= PEAK_LIMIT && a.samples.iter().all(|v| v.is_finite()), "{} at {sr}", a.label);
                let dur = a.samples.len() as f64 / sr as f64;
                assert!((0.5..=4.0).contains(&dur), "{} at {sr}: {dur}", a.label);
            }
        }
    }
}
