//! Instruments built on the synth and shared by several families: struck trains,
//! drum hits, bubbles, chirps, engines, whistles, formant banks, note trains.
use std::f64::consts::PI;

use super::dsp::*;
use super::synth::*;

// ---------------------------------------------------------------- recipe helpers

/// Add `layer` underneath `x` at `rel_db` relative to `x`'s RMS: the faint bed
/// (room tail, hiss, hum) that keeps sparse recipes audible between hits.
pub(super) fn with_bed(mut x: Vec<f64>, layer: &[f64], rel_db: f64) -> Vec<f64> {
    let (rx, rl) = (rms(&x), rms(layer));
    if rl > 0.0 {
        add(&mut x, layer, rx / rl * 10f64.powf(rel_db / 20.0));
    }
    x
}

pub(super) fn gated(s: &Synth, x: Vec<f64>, period: f64, duty: f64, edge: f64, floor: f64) -> Vec<f64> {
    s.shape(x, move |t| gate_value(t, period, duty, edge, floor))
}

pub(super) fn struck(s: &mut Synth, times: &[f64], modes: &[(f64, f64, f64)], gain_jitter: f64) -> Vec<f64> {
    let mut out = s.zeros();
    for &t in times {
        let g = 1.0 - gain_jitter * s.u();
        s.strike(&mut out, t, modes, g);
    }
    out
}

pub(super) fn modes_at(ratios: &[(f64, f64, f64)], f0: f64, tau: f64) -> Vec<(f64, f64, f64)> {
    ratios.iter().map(|(r, t, a)| (f0 * r, tau * t, *a)).collect()
}

/// Partial ratios, relative decay and amplitude of a tuned church bell (hum, prime, tierce, quint, nominal...).
pub(super) const CHURCH_BELL: [(f64, f64, f64); 9] = [
    (0.5, 1.6, 0.5),
    (1.0, 1.0, 1.0),
    (1.2, 0.8, 0.6),
    (1.5, 0.6, 0.35),
    (2.0, 0.5, 0.5),
    (2.5, 0.35, 0.25),
    (2.67, 0.3, 0.2),
    (3.0, 0.25, 0.15),
    (4.16, 0.18, 0.1),
];
/// Free-free bar / chime tube partials.
pub(super) const CHIME_TUBE: [(f64, f64, f64); 3] = [(1.0, 1.0, 1.0), (2.76, 0.5, 0.4), (5.40, 0.25, 0.2)];
pub(super) const XYLO_BAR: [(f64, f64, f64); 3] = [(1.0, 1.0, 1.0), (3.93, 0.35, 0.3), (9.2, 0.15, 0.1)];

/// Pitch-dropping drum hit (kick, tom, heartbeat thump).
pub(super) fn drum_hit(s: &Synth, out: &mut [f64], at: f64, f_lo: f64, f_hi: f64, tau: f64, gain: f64) {
    let start = ((at * s.sr) as usize).min(out.len());
    let len = ((7.0 * tau * s.sr) as usize).min(out.len().saturating_sub(start));
    let mut ph = 0.0f64;
    for (k, o) in out[start..start + len].iter_mut().enumerate() {
        let dt = k as f64 / s.sr;
        let f = f_lo + (f_hi - f_lo) * (-dt / 0.035).exp();
        *o += gain * (-dt / tau).exp() * ph.sin();
        ph += 2.0 * PI * f / s.sr;
    }
}

/// A bubble: a sine whose pitch rises as it decays (Minnaert resonance of a shrinking bubble).
pub(super) fn bubble(s: &Synth, out: &mut [f64], at: f64, f0: f64, tau: f64, gain: f64) {
    let start = ((at * s.sr) as usize).min(out.len());
    let len = ((6.0 * tau * s.sr) as usize).min(out.len().saturating_sub(start));
    let mut ph = 0.0f64;
    for (k, o) in out[start..start + len].iter_mut().enumerate() {
        let dt = k as f64 / s.sr;
        let f = f0 * (1.0 + 2.5 * dt / (6.0 * tau));
        *o += gain * (-dt / tau).exp() * ph.sin();
        ph += 2.0 * PI * f.min(0.45 * s.sr) / s.sr;
    }
}

/// A gliding tone burst from `glide.0` to `glide.1` Hz (exponential) lasting `len_s`, Hann-windowed.
pub(super) fn chirp(
    s: &Synth,
    out: &mut [f64],
    at: f64,
    glide: (f64, f64),
    len_s: f64,
    gain: f64,
    partials: &[(f64, f64)],
) {
    let (f_a, f_b) = glide;
    let start = ((at * s.sr) as usize).min(out.len());
    let len = ((len_s * s.sr) as usize).min(out.len().saturating_sub(start));
    let mut ph = 0.0f64;
    for (k, o) in out[start..start + len].iter_mut().enumerate() {
        let u = k as f64 / (len_s * s.sr);
        let f = f_a * (f_b / f_a).powf(u);
        let w = (PI * u).sin().powi(2).sqrt();
        let mut acc = 0.0;
        for (r, a) in partials {
            if f * r < 0.45 * s.sr {
                acc += a * (r * ph).sin();
            }
        }
        *o += gain * w * acc;
        ph += 2.0 * PI * f / s.sr;
    }
}

/// Engine-like pulse train: harmonics of the firing rate with a fixed random
/// spectrum, low-passed, plus noise chopped by the firing cycle.
pub(super) fn engine(s: &mut Synth, rate: impl Fn(f64) -> f64 + Copy, cutoff: f64, noise: f64) -> Vec<f64> {
    let amps: Vec<(f64, f64)> = (1..=60).map(|k| (k as f64, (0.4 + 0.6 * s.u()) / (k as f64).powf(0.7))).collect();
    let body = s.osc(rate, &amps);
    let cyc = s.osc(rate, &sine());
    let nz = s.noise_band(60.0, cutoff * 2.0);
    let chopped: Vec<f64> = nz.iter().zip(&cyc).map(|(n, c)| n * (0.5 + 0.5 * c).powi(3)).collect();
    let mut x = sum(&[(&body, 1.0), (&chopped, noise * 3.0)]);
    filter(&mut x, Biquad::lowpass(cutoff, 0.9, s.sr));
    filter(&mut x, Biquad::lowpass(cutoff * 1.5, 0.707, s.sr));
    x
}

pub(super) fn whistle(s: &mut Synth, f: impl Fn(f64) -> f64 + Clone, breath: f64) -> Vec<f64> {
    let tone = s.osc(f.clone(), &[(1.0, 1.0), (2.0, 0.04)]);
    let mut air = s.white();
    filter_sweep(&mut air, Kind::Band, s.sr, 6.0, f);
    let hiss = s.noise_band(1500.0, 7000.0);
    let air_rms = rms(&air).max(1e-9);
    let hiss_rms = rms(&hiss).max(1e-9);
    sum(&[(&tone, 1.0), (&air, breath * 0.7 / air_rms), (&hiss, breath * 0.15 / hiss_rms)])
}

/// Formant filter bank over a source (vowel-like and brassy timbres).
pub(super) fn formants(s: &Synth, src: &[f64], bands: &[(f64, f64, f64)]) -> Vec<f64> {
    let mut out = vec![0.0; src.len()];
    for &(f, q, g) in bands {
        let y = bp(src.to_vec(), f, q, s.sr);
        add(&mut out, &y, g);
    }
    out
}

pub(super) fn vibrato(f0: f64, depth: f64, rate: f64) -> impl Fn(f64) -> f64 + Copy {
    move |t: f64| f0 * (1.0 + depth * (2.0 * PI * rate * t).sin())
}

pub(super) fn clip(x: Vec<f64>, drive: f64) -> Vec<f64> {
    x.into_iter().map(|v| (drive * v).tanh()).collect()
}

pub(super) fn normalised(x: Vec<f64>) -> Vec<f64> {
    let r = rms(&x).max(1e-12);
    x.into_iter().map(|v| v / r).collect()
}

/// Per-note melody with its own decay per note (plucked/struck synths).
pub(super) fn note_train(s: &Synth, notes: &[f64], step: f64, tau: f64, partials: &[(f64, f64)]) -> Vec<f64> {
    let mut out = s.zeros();
    let k = (s.dur() / step).ceil() as usize;
    for i in 0..k {
        let f = notes[i % notes.len()];
        let start = (i as f64 * step * s.sr) as usize;
        let len = ((step + 4.0 * tau) * s.sr) as usize;
        let mut ph = 0.0f64;
        for (j, o) in out.iter_mut().skip(start).take(len).enumerate() {
            let dt = j as f64 / s.sr;
            let env = (-dt / tau).exp() * (dt / 0.003).min(1.0);
            let mut acc = 0.0;
            for (r, a) in partials {
                if f * r < 0.45 * s.sr {
                    acc += a * (r * ph).sin();
                }
            }
            *o += env * acc;
            ph += 2.0 * PI * f / s.sr;
        }
    }
    out
}
