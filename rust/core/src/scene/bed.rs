//! Background beds: generated noise textures, fitting a bed to a clip, and the one bed gain per
//! clip that makes contract §5's per-event inequality hold.
//!
//! A bed *source* is a unit-level recording (or a generated texture) of any length. A clip uses
//! the infinite loop of its source (copies overlapping by an equal-power crossfade, as the mixer
//! loops atoms) from a start sample the caller draws from (seed, clip), for exactly the clip's
//! length, with the mixer's raised-cosine fades at the two clip edges (no click at the first or
//! last sample).
//!
//! Gain: for every event i with energy `E_i` (its own signal after gain and room, over its dry
//! extent) and bed energy `B_i` (the unit bed over the same samples), the bed at linear gain `b`
//! gives `10·log10(E_i / (b² B_i))`. The largest `b` with every event at or above `s` is
//! `min_i sqrt(E_i / (B_i 10^(s/10)))`. (The renderer passes min(E_i, the events' sum's energy
//! over the same extent), so sounds that cancel each other also stand s above the bed in the mix.) We aim at `s + SNR_HEADROOM_DB` and then re-measure on the
//! f32 samples actually mixed, shrinking `b` until every event is at or above that aim, so the
//! inequality holds exactly on the rendered stems and survives the limiter (one gain on the whole
//! mix: the ratio is unchanged up to f32 rounding, ~1e-6 dB) and 16-bit quantisation (an error of
//! at most half a step per sample, far below 0.01 dB for any audible event).

use rand::Rng;

use crate::mix::{render_event, Curves};
use crate::plan::rng_for;

/// How far above the requested SNR the bed gain aims, in dB, so that rounding after the gain
/// (limiter multiply, 16-bit quantisation) cannot push an event below the requested value.
pub const SNR_HEADROOM_DB: f64 = 0.01;

/// RMS level of a generated texture (-20 dBFS): loud enough for 16-bit storage, peaks far from 1.
pub const TEXTURE_RMS: f64 = 0.1;

/// Samples the texture filters run before output, so their state has settled (the slowest pole,
/// pink's 0.99886, has a time constant of ~880 samples).
const WARMUP: usize = 8192;

/// A generated texture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Texture {
    /// Flat spectrum (Gaussian samples).
    White,
    /// -3 dB per octave (Paul Kellet's refined pink filter on white noise).
    Pink,
    /// -6 dB per octave above ~13 Hz at 16 kHz (leaky integrator, pole 0.995, DC removed).
    Brown,
}

impl std::str::FromStr for Texture {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "white" => Ok(Texture::White),
            "pink" => Ok(Texture::Pink),
            "brown" => Ok(Texture::Brown),
            other => Err(format!("unknown noise texture {other:?}: expected white, pink or brown")),
        }
    }
}

/// One standard normal sample (Box-Muller on two uniforms; the cosine branch only, so every
/// output costs exactly two uniforms and the stream is easy to reason about).
fn gaussian(rng: &mut impl Rng) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]: ln is finite
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// `n` samples of `kind` noise from `(seed, key)`, zero mean, RMS [`TEXTURE_RMS`].
pub fn noise(kind: Texture, n: usize, seed: u64, key: u64) -> Vec<f32> {
    let mut rng = rng_for(seed, key);
    let mut out = Vec::with_capacity(n);
    let mut b = [0f64; 7];
    let mut brown = 0f64;
    for i in 0..WARMUP + n {
        let w = gaussian(&mut rng);
        let y = match kind {
            Texture::White => w,
            Texture::Pink => {
                b[0] = 0.99886 * b[0] + w * 0.055_517_9;
                b[1] = 0.99332 * b[1] + w * 0.075_075_9;
                b[2] = 0.969 * b[2] + w * 0.153_852;
                b[3] = 0.8665 * b[3] + w * 0.310_485_6;
                b[4] = 0.55 * b[4] + w * 0.532_952_2;
                b[5] = -0.7616 * b[5] - w * 0.016_898;
                let y = b.iter().sum::<f64>() + w * 0.5362;
                b[6] = w * 0.115_926;
                y
            }
            Texture::Brown => {
                brown = 0.995 * brown + w;
                brown
            }
        };
        if i >= WARMUP {
            out.push(y);
        }
    }
    if n == 0 {
        return Vec::new();
    }
    let mean = out.iter().sum::<f64>() / n as f64;
    let rms = (out.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64).sqrt();
    let scale = if rms > 0.0 { TEXTURE_RMS / rms } else { 0.0 };
    out.into_iter().map(|x| ((x - mean) * scale) as f32).collect()
}

/// Fills `out` with the bed of a clip (the reference the renderer's [`fill_bed_periodic`] equals): samples `[start, start + out.len())` of the crossfaded loop
/// of `source`, then the clip-edge fades of `edge_curves` (its `fade`). `loop_curves` gives the
/// loop crossfade (its `fade` must be 0). `tmp` is scratch. `source` must be non-empty and
/// `start < source.len()`.
pub fn fill_bed(
    source: &[f32],
    start: usize,
    loop_curves: &Curves,
    edge_curves: &Curves,
    tmp: &mut Vec<f32>,
    out: &mut [f32],
) {
    debug_assert!(loop_curves.options().fade == 0);
    assert!(!source.is_empty() && start < source.len(), "bed start {start} outside a source of {}", source.len());
    let length = out.len();
    // Render past the source's end so the second copy's crossfade is always there: the bed is the
    // loop, whether or not the clip reaches the end of the first copy.
    tmp.clear();
    tmp.resize((start + length).max(source.len() + 1), 0.0);
    render_event(source, loop_curves, tmp);
    out.copy_from_slice(&tmp[start..start + length]);
    edge_curves.apply_edge_fades(out);
}

/// One period of `source`'s crossfaded loop from sample `P = n - c` on (c the loop crossfade,
/// shrunk to half the source): the loop repeats with period `P` from `P` on, so a bed of any length
/// at any start is a copy of the source's head and of this segment, without rendering the loop
/// up to the start sample (the cost that made a bed from a 60 s source cost ~3x the clean mix).
pub fn loop_period(source: &[f32], loop_curves: &Curves) -> Vec<f32> {
    let n = source.len();
    let c = loop_curves.options().crossfade.min(n / 2);
    let p = n - c;
    let mut tmp = vec![0f32; (2 * p).max(n + 1)];
    render_event(source, loop_curves, &mut tmp);
    tmp[p..2 * p].to_vec()
}

/// [`fill_bed`] from a precomputed [`loop_period`] `period` of `source`; the same samples.
pub fn fill_bed_periodic(source: &[f32], period: &[f32], start: usize, edge_curves: &Curves, out: &mut [f32]) {
    let p = period.len();
    assert!(p > 0 && start < source.len(), "bed start {start} outside a source of {}", source.len());
    let mut j = 0;
    let length = out.len();
    if start < p {
        let k = (p - start).min(length);
        out[..k].copy_from_slice(&source[start..start + k]);
        j = k;
    }
    while j < length {
        let phase = (start + j - p) % p;
        let k = (p - phase).min(length - j);
        out[j..j + k].copy_from_slice(&period[phase..phase + k]);
        j += k;
    }
    edge_curves.apply_edge_fades(out);
}

/// Lanes of the energy sums: independent f64 accumulators in a fixed order, so the sum vectorises
/// (a single running sum is bound by the add latency, ~4x slower) and stays the same on every
/// machine and thread count.
const LANES: usize = 8;

/// Energy of `x` in f64 (lane sums in a fixed order, see [`LANES`]).
pub fn energy(x: &[f32]) -> f64 {
    scaled_energy(x, 1.0)
}

/// Energy of `g · x` as the mix holds it: each product rounded to f32 (the sample actually
/// mixed), squared and summed in f64 lanes.
pub fn scaled_energy(x: &[f32], g: f32) -> f64 {
    let mut acc = [0f64; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            let y = f64::from(g * v);
            *a += y * y;
        }
    }
    for (a, &v) in acc.iter_mut().zip(rest) {
        let y = f64::from(g * v);
        *a += y * y;
    }
    acc.iter().sum()
}

/// The bed's linear gain for one clip: the largest gain at which every event's SNR
/// `10·log10(E_i / (gain² B_i))` is at least `snr_db + SNR_HEADROOM_DB`, given `E_i`
/// (`event_energy`) and `B_i` (`bed_energy`, the unit bed over event i's dry extent). Events whose
/// extent holds no bed energy do not constrain it; when none does, the gain is 1.
pub fn bed_gain(event_energy: &[f64], bed_energy: &[f64], snr_db: f64) -> f64 {
    let aim = 10f64.powf((snr_db + SNR_HEADROOM_DB) / 10.0);
    let g = event_energy
        .iter()
        .zip(bed_energy)
        .filter(|(_, &b)| b > 0.0)
        .map(|(&e, &b)| (e / (b * aim)).sqrt())
        .fold(f64::INFINITY, f64::min);
    if g.is_finite() {
        g
    } else {
        1.0
    }
}

/// SNR in dB of an event of energy `e` over a bed of energy `b` (+inf with no bed energy).
pub fn snr_db(e: f64, b: f64) -> f64 {
    if b > 0.0 {
        10.0 * (e / b).log10()
    } else {
        f64::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::MixOptions;

    /// Power spectrum slope in dB per octave between two bands, averaged over frames (a crude
    /// periodogram by direct DFT, enough to tell the three colours apart).
    fn band_power(x: &[f32], sr: f64, f: f64) -> f64 {
        let frame = 1024;
        let mut total = 0.0;
        for chunk in x.chunks_exact(frame) {
            let (mut re, mut im) = (0.0, 0.0);
            for (i, &v) in chunk.iter().enumerate() {
                let w = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / frame as f64).cos();
                let ph = 2.0 * std::f64::consts::PI * f * i as f64 / sr;
                re += w * f64::from(v) * ph.cos();
                im += w * f64::from(v) * ph.sin();
            }
            total += re * re + im * im;
        }
        total
    }

    #[test]
    fn textures_are_seeded_levelled_and_coloured() {
        let n = 64 * 1024;
        for kind in [Texture::White, Texture::Pink, Texture::Brown] {
            let a = noise(kind, n, 5, 9);
            assert_eq!(a, noise(kind, n, 5, 9));
            assert_ne!(a, noise(kind, n, 5, 10));
            let rms = (energy(&a) / n as f64).sqrt();
            assert!((rms - TEXTURE_RMS).abs() < 1e-4, "{kind:?} rms {rms}");
            assert!(a.iter().all(|x| x.is_finite() && x.abs() < 1.0));
            // slope between 500 Hz and 4 kHz (3 octaves), averaging a few bins around each.
            let p = |f: f64| (0..8).map(|k| band_power(&a, 16000.0, f * (1.0 + 0.01 * k as f64))).sum::<f64>();
            let slope = 10.0 * (p(4000.0) / p(500.0)).log10() / 3.0;
            let want = match kind {
                Texture::White => 0.0,
                Texture::Pink => -3.0,
                Texture::Brown => -6.0,
            };
            assert!((slope - want).abs() < 1.5, "{kind:?}: {slope:.2} dB/octave, want {want}");
        }
        assert!("grey".parse::<Texture>().is_err());
    }

    #[test]
    fn bed_fill_crops_and_loops_from_the_start_sample() {
        let source: Vec<f32> = (0..1000).map(|i| ((i as f32) * 0.01).sin()).collect();
        let loop_curves =
            Curves::new(MixOptions { sample_rate: 16_000, fade: 0, crossfade: 100, ceiling: 1.0 }).unwrap();
        let edge = Curves::new(MixOptions { sample_rate: 16_000, fade: 0, crossfade: 0, ceiling: 1.0 }).unwrap();
        let mut tmp = Vec::new();
        let mut out = vec![0.0; 300];
        fill_bed(&source, 200, &loop_curves, &edge, &mut tmp, &mut out);
        assert_eq!(&out[..], &source[200..500]);
        // the first copy's last 100 samples are crossfaded into the second copy, even in a short bed
        let mut end = vec![0.0; 50];
        fill_bed(&source, 920, &loop_curves, &edge, &mut tmp, &mut end);
        assert!(end[0] != source[920] && (end[0] - source[920]).abs() < 0.5);
        let mut long = vec![0.0; 5000];
        fill_bed(&source, 700, &loop_curves, &edge, &mut tmp, &mut long);
        assert_eq!(&long[..200], &source[700..900]);
        // the second copy starts at loop sample 900 (period 1000 - 100); its body is the source's
        assert!(long[900 - 700 + 100..900 - 700 + 900] == source[100..900]);
        assert!(long[900 - 700 + 100 + 900..900 - 700 + 900 + 900] == source[100..900]);
        let faded = Curves::new(MixOptions { sample_rate: 16_000, fade: 10, crossfade: 0, ceiling: 1.0 }).unwrap();
        fill_bed(&source, 200, &loop_curves, &faded, &mut tmp, &mut out);
        assert!(out[0].abs() < source[200].abs() && out[150] == source[350]);
    }

    #[test]
    fn the_periodic_fill_equals_the_rendered_loop() {
        let loop_curves =
            Curves::new(MixOptions { sample_rate: 16_000, fade: 0, crossfade: 100, ceiling: 1.0 }).unwrap();
        let edge = Curves::new(MixOptions { sample_rate: 16_000, fade: 7, crossfade: 0, ceiling: 1.0 }).unwrap();
        for n in [1usize, 3, 150, 1000, 1001] {
            let source: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.37).sin() + 0.1).collect();
            let period = loop_period(&source, &loop_curves);
            let mut tmp = Vec::new();
            for start in [0, n / 3, n - 1] {
                for length in [1usize, 50, 899, 900, 901, 2500, 7777] {
                    let (mut a, mut b) = (vec![0.0; length], vec![0.0; length]);
                    fill_bed(&source, start, &loop_curves, &edge, &mut tmp, &mut a);
                    fill_bed_periodic(&source, &period, start, &edge, &mut b);
                    assert!(a == b, "n {n} start {start} length {length}");
                }
            }
        }
    }

    #[test]
    fn bed_gain_meets_the_tightest_event() {
        let e = [4.0, 1.0, 9.0];
        let b = [1.0, 1.0, 0.0];
        let g = bed_gain(&e, &b, 10.0);
        let snrs: Vec<f64> = e.iter().zip(&b).map(|(&e, &b)| snr_db(e, g * g * b)).collect();
        assert!((snrs[1] - 10.01).abs() < 1e-9, "{snrs:?}");
        assert!(snrs[0] > 10.01 && snrs[2].is_infinite());
        assert_eq!(bed_gain(&[1.0], &[0.0], 0.0), 1.0);
    }
}
