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

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use rayon::prelude::*;
use std::f64::consts::PI;

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
    assert!(sample_rate >= 4000, "sample_rate must be at least 4000 Hz");
    let render_rate = sample_rate.max(MIN_RENDER_RATE);
    let specs = specs();
    debug_assert_eq!(specs.len(), LIBRARY_SIZE);
    specs
        .par_iter()
        .map(|spec| {
            let mut synth = Synth::new(render_rate as f64, spec.duration_s, seed ^ fnv1a(spec.label));
            let raw = (spec.render)(&mut synth);
            let mut audio = finish(raw, render_rate as f64);
            if render_rate != sample_rate {
                audio = crate::resample::resample(&audio, render_rate, sample_rate)
                    .expect("valid rates");
                audio = normalise_and_limit(audio.iter().map(|v| *v as f64).collect());
            }
            ProceduralAtom {
                label: spec.label.to_string(),
                phrase: spec.phrase.to_string(),
                family: spec.family.to_string(),
                samples: audio,
            }
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

// ---------------------------------------------------------------- finishing

fn finish(mut x: Vec<f64>, sr: f64) -> Vec<f32> {
    filter(&mut x, Biquad::highpass(20.0, 0.707, sr));
    let fade = ((EDGE_FADE_S * sr) as usize).min(x.len() / 4).max(1);
    let n = x.len();
    for i in 0..fade {
        let g = 0.5 - 0.5 * (PI * i as f64 / fade as f64).cos();
        x[i] *= g;
        x[n - 1 - i] *= g;
    }
    normalise_and_limit(x)
}

fn rms(x: &[f64]) -> f64 {
    (x.iter().map(|v| v * v).sum::<f64>() / x.len().max(1) as f64).sqrt()
}

fn normalise_and_limit(mut x: Vec<f64>) -> Vec<f32> {
    let target = 10f64.powf(TARGET_RMS_DBFS / 20.0);
    let ceiling = PEAK_LIMIT as f64 * 0.98;
    let window = 48; // samples of look-around for the gain curve (3 ms at 16 kHz)
    for _ in 0..8 {
        let r = rms(&x);
        if r <= 0.0 {
            break;
        }
        let g = target / r;
        x.iter_mut().for_each(|v| *v *= g);
        if x.iter().all(|v| v.abs() <= ceiling) {
            break;
        }
        let gain = limiter_gain(&x, ceiling, window);
        x.iter_mut().zip(&gain).for_each(|(v, g)| *v *= g);
    }
    let peak = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if peak > ceiling {
        let g = ceiling / peak;
        x.iter_mut().for_each(|v| *v *= g);
    }
    x.into_iter().map(|v| v as f32).collect()
}

/// Smooth gain curve that brings every sample under `ceiling`: the needed
/// per-sample gain, min-filtered over +-w then averaged over w, so the gain at
/// each peak is never above what that peak needs and changes without clicks.
fn limiter_gain(x: &[f64], ceiling: f64, w: usize) -> Vec<f64> {
    let n = x.len();
    let need: Vec<f64> = x.iter().map(|v| (ceiling / v.abs().max(1e-12)).min(1.0)).collect();
    let mut minf = vec![1.0; n];
    let mut dq: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    // Sliding minimum over [i - w, i + w].
    let mut next = 0;
    for (i, m) in minf.iter_mut().enumerate() {
        while next < n && next <= i + w {
            while let Some(&b) = dq.back() {
                if need[b] >= need[next] {
                    dq.pop_back();
                } else {
                    break;
                }
            }
            dq.push_back(next);
            next += 1;
        }
        while let Some(&f) = dq.front() {
            if f + w < i {
                dq.pop_front();
            } else {
                break;
            }
        }
        *m = need[*dq.front().unwrap()];
    }
    let half = w / 2;
    let mut prefix = vec![0.0; n + 1];
    for i in 0..n {
        prefix[i + 1] = prefix[i] + minf[i];
    }
    (0..n)
        .map(|i| {
            let a = i.saturating_sub(half);
            let b = (i + half + 1).min(n);
            (prefix[b] - prefix[a]) / (b - a) as f64
        })
        .collect()
}

// ---------------------------------------------------------------- DSP kit

#[derive(Clone, Copy, Debug)]
struct Biquad {
    b0: f64,
    b1: f64,
    b2: f64,
    a1: f64,
    a2: f64,
}

impl Biquad {
    fn coeffs(kind: Kind, f: f64, q: f64, sr: f64) -> Self {
        let f = f.clamp(10.0, 0.45 * sr);
        let w = 2.0 * PI * f / sr;
        let (sw, cw) = w.sin_cos();
        let alpha = sw / (2.0 * q);
        let (b0, b1, b2) = match kind {
            Kind::Low => ((1.0 - cw) / 2.0, 1.0 - cw, (1.0 - cw) / 2.0),
            Kind::High => ((1.0 + cw) / 2.0, -(1.0 + cw), (1.0 + cw) / 2.0),
            Kind::Band => (alpha, 0.0, -alpha),
        };
        let a0 = 1.0 + alpha;
        Biquad { b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: -2.0 * cw / a0, a2: (1.0 - alpha) / a0 }
    }
    fn lowpass(f: f64, q: f64, sr: f64) -> Self {
        Self::coeffs(Kind::Low, f, q, sr)
    }
    fn highpass(f: f64, q: f64, sr: f64) -> Self {
        Self::coeffs(Kind::High, f, q, sr)
    }
    fn bandpass(f: f64, q: f64, sr: f64) -> Self {
        Self::coeffs(Kind::Band, f, q, sr)
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Low,
    High,
    Band,
}

fn filter(x: &mut [f64], c: Biquad) {
    let (mut z1, mut z2) = (0.0, 0.0);
    for v in x.iter_mut() {
        let y = c.b0 * *v + z1;
        z1 = c.b1 * *v - c.a1 * y + z2;
        z2 = c.b2 * *v - c.a2 * y;
        *v = y;
    }
}

/// Time-varying filter: coefficients follow `f(t)` (updated every 32 samples).
fn filter_sweep(x: &mut [f64], kind: Kind, sr: f64, q: f64, f: impl Fn(f64) -> f64) {
    let (mut z1, mut z2) = (0.0, 0.0);
    let mut c = Biquad::coeffs(kind, f(0.0), q, sr);
    for (i, v) in x.iter_mut().enumerate() {
        if i % 32 == 0 {
            c = Biquad::coeffs(kind, f(i as f64 / sr), q, sr);
        }
        let y = c.b0 * *v + z1;
        z1 = c.b1 * *v - c.a1 * y + z2;
        z2 = c.b2 * *v - c.a2 * y;
        *v = y;
    }
}

fn lp(mut x: Vec<f64>, f: f64, sr: f64) -> Vec<f64> {
    filter(&mut x, Biquad::lowpass(f, 0.707, sr));
    x
}
fn hp(mut x: Vec<f64>, f: f64, sr: f64) -> Vec<f64> {
    filter(&mut x, Biquad::highpass(f, 0.707, sr));
    x
}
fn bp(mut x: Vec<f64>, f: f64, q: f64, sr: f64) -> Vec<f64> {
    filter(&mut x, Biquad::bandpass(f, q, sr));
    x
}

/// Harmonic amplitude sets: (ratio to fundamental, amplitude).
fn saw(n: usize) -> Vec<(f64, f64)> {
    (1..=n).map(|k| (k as f64, 1.0 / k as f64)).collect()
}
fn square(n: usize) -> Vec<(f64, f64)> {
    (1..=n).step_by(2).map(|k| (k as f64, 1.0 / k as f64)).collect()
}
fn triangle(n: usize) -> Vec<(f64, f64)> {
    (1..=n).step_by(2).map(|k| (k as f64, 1.0 / (k * k) as f64)).collect()
}
fn sine() -> Vec<(f64, f64)> {
    vec![(1.0, 1.0)]
}
fn harmonics(amps: &[f64]) -> Vec<(f64, f64)> {
    amps.iter().enumerate().map(|(k, a)| ((k + 1) as f64, *a)).collect()
}

fn add(a: &mut [f64], b: &[f64], gain: f64) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += gain * y);
}
fn sum(layers: &[(&[f64], f64)]) -> Vec<f64> {
    let n = layers.iter().map(|l| l.0.len()).max().unwrap_or(0);
    let mut out = vec![0.0; n];
    for (l, g) in layers {
        add(&mut out, l, *g);
    }
    out
}

/// Raised-cosine on/off gate: on for `duty` of each `period`, edges of `edge` s.
fn gate_value(t: f64, period: f64, duty: f64, edge: f64, floor: f64) -> f64 {
    let ph = t.rem_euclid(period);
    let on = duty * period;
    let e = edge.min(on / 2.0).max(1e-4);
    let g = if ph < e {
        0.5 - 0.5 * (PI * ph / e).cos()
    } else if ph < on - e {
        1.0
    } else if ph < on {
        0.5 - 0.5 * (PI * (on - ph) / e).cos()
    } else {
        0.0
    };
    floor + (1.0 - floor) * g
}

struct Synth {
    sr: f64,
    n: usize,
    rng: Pcg64,
}

impl Synth {
    fn new(sr: f64, duration_s: f64, seed: u64) -> Self {
        Synth { sr, n: (duration_s * sr).round() as usize, rng: Pcg64::seed_from_u64(seed) }
    }
    fn dur(&self) -> f64 {
        self.n as f64 / self.sr
    }
    fn t(&self, i: usize) -> f64 {
        i as f64 / self.sr
    }
    fn zeros(&self) -> Vec<f64> {
        vec![0.0; self.n]
    }
    fn u(&mut self) -> f64 {
        self.rng.gen::<f64>()
    }
    fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.u()
    }
    fn white(&mut self) -> Vec<f64> {
        (0..self.n).map(|_| self.rng.gen::<f64>() * 2.0 - 1.0).collect()
    }
    /// Band of noise between `lo` and `hi` Hz (second-order edges).
    fn noise_band(&mut self, lo: f64, hi: f64) -> Vec<f64> {
        let w = self.white();
        lp(hp(w, lo, self.sr), hi, self.sr)
    }
    /// Integrated (red) noise, a deep rumble.
    fn brown(&mut self) -> Vec<f64> {
        let mut acc = 0.0;
        let w = self.white();
        w.iter()
            .map(|v| {
                acc = 0.995 * acc + v;
                acc
            })
            .collect()
    }
    /// Additive oscillator with time-varying fundamental `f(t)`; partials
    /// approaching Nyquist fade out so nothing aliases.
    fn osc(&self, f: impl Fn(f64) -> f64, partials: &[(f64, f64)]) -> Vec<f64> {
        let nyq = 0.45 * self.sr;
        let fade = 0.05 * self.sr;
        let harmonic = partials.iter().all(|(r, _)| *r >= 1.0 && r.fract() == 0.0);
        let mut out = self.zeros();
        if harmonic {
            // Integer partials: one phase, sin(k*theta) by the Chebyshev
            // recurrence instead of one sin() per partial and sample.
            let kmax = partials.iter().map(|(r, _)| *r as usize).max().unwrap_or(1);
            let mut amp = vec![0.0f64; kmax + 1];
            for (r, a) in partials {
                amp[*r as usize] += a;
            }
            let mut theta = 0.0f64;
            for (i, o) in out.iter_mut().enumerate() {
                let f0 = f(self.t(i));
                let (s1, c1) = theta.sin_cos();
                let (mut prev, mut cur) = (0.0f64, s1);
                let mut acc = 0.0;
                for (k, a) in amp.iter().enumerate().skip(1) {
                    let fk = f0 * k as f64;
                    if fk >= nyq {
                        break;
                    }
                    if *a != 0.0 {
                        acc += a * ((nyq - fk) / fade).min(1.0) * cur;
                    }
                    let next = 2.0 * c1 * cur - prev;
                    prev = cur;
                    cur = next;
                }
                *o = acc;
                theta = (theta + 2.0 * PI * f0 / self.sr).rem_euclid(2.0 * PI);
            }
            return out;
        }
        let mut phases = vec![0.0f64; partials.len()];
        for (i, o) in out.iter_mut().enumerate() {
            let f0 = f(self.t(i));
            let mut acc = 0.0;
            for ((r, a), ph) in partials.iter().zip(phases.iter_mut()) {
                let fk = f0 * r;
                if fk < nyq {
                    acc += a * ((nyq - fk) / fade).min(1.0) * ph.sin();
                }
                *ph = (*ph + 2.0 * PI * fk / self.sr).rem_euclid(2.0 * PI);
            }
            *o = acc;
        }
        out
    }
    /// Decaying sinusoidal modes (freq Hz, decay time constant s, amplitude) struck at `at`.
    fn strike(&self, out: &mut [f64], at: f64, modes: &[(f64, f64, f64)], gain: f64) {
        let start = ((at * self.sr) as usize).min(out.len());
        for &(f, tau, a) in modes {
            if f >= 0.45 * self.sr {
                continue;
            }
            let len = ((7.0 * tau * self.sr) as usize).min(out.len().saturating_sub(start));
            // Damped phasor: one complex multiply per sample instead of sin() and exp().
            let dd = (-1.0 / (tau * self.sr)).exp();
            let (sw, cw) = (2.0 * PI * f / self.sr).sin_cos();
            let (rr, ri) = (dd * cw, dd * sw);
            let (mut re, mut im) = (gain * a, 0.0f64);
            for o in out[start..start + len].iter_mut() {
                *o += im;
                let nre = re * rr - im * ri;
                im = re * ri + im * rr;
                re = nre;
            }
        }
    }
    /// Noise bursts with exponential decay `tau` at each time (for snares, claps, clicks...).
    fn bursts(&mut self, times: &[f64], tau: f64, gains: Option<&[f64]>) -> Vec<f64> {
        let mut out = self.zeros();
        for (k, &at) in times.iter().enumerate() {
            let g = gains.map(|g| g[k]).unwrap_or(1.0);
            let start = ((at * self.sr) as usize).min(out.len());
            let len = ((6.0 * tau * self.sr) as usize).min(self.n.saturating_sub(start));
            let dd = (-1.0 / (tau * self.sr)).exp();
            let mut env = g;
            for o in out[start..start + len].iter_mut() {
                *o += env * (self.rng.gen::<f64>() * 2.0 - 1.0);
                env *= dd;
            }
        }
        out
    }
    /// Karplus-Strong plucked string at `at`, decaying over roughly `decay_s`.
    fn pluck(&mut self, out: &mut [f64], at: f64, freq: f64, decay_s: f64, gain: f64, bright: f64) {
        let period = (self.sr / freq).round().max(2.0) as usize;
        let mut line: Vec<f64> = (0..period).map(|_| self.rng.gen::<f64>() * 2.0 - 1.0).collect();
        // Soften the excitation for darker tones.
        for _ in 0..((1.0 - bright) * 4.0) as usize {
            let c = line.clone();
            for i in 0..period {
                line[i] = 0.5 * (c[i] + c[(i + 1) % period]);
            }
        }
        let loss = (-(period as f64) / (decay_s * self.sr)).exp();
        let start = ((at * self.sr) as usize).min(out.len());
        let len = ((decay_s * 6.0 * self.sr) as usize).min(out.len().saturating_sub(start));
        let mut idx = 0;
        for o in out[start..start + len].iter_mut() {
            let next = (idx + 1) % period;
            let y = line[idx];
            *o += gain * y;
            line[idx] = loss * 0.5 * (y + line[next]);
            idx = next;
        }
    }
    fn times_regular(&self, period: f64) -> Vec<f64> {
        let k = (self.dur() / period).ceil() as usize;
        (0..k).map(|i| i as f64 * period).collect()
    }
    fn times_jittered(&mut self, period: f64, jitter: f64) -> Vec<f64> {
        let mut t = 0.0;
        let mut out = Vec::new();
        while t < self.dur() {
            out.push(t);
            t += period * (1.0 + jitter * (2.0 * self.u() - 1.0));
        }
        out
    }
    fn times_poisson(&mut self, rate: f64) -> Vec<f64> {
        let mut t = 0.0;
        let mut out = vec![0.0];
        loop {
            t += -(1.0 - self.u()).ln() / rate;
            if t >= self.dur() {
                break out;
            }
            out.push(t);
        }
    }
    /// Multiply by `f(t)`.
    fn shape(&self, mut x: Vec<f64>, f: impl Fn(f64) -> f64) -> Vec<f64> {
        for (i, v) in x.iter_mut().enumerate() {
            *v *= f(i as f64 / self.sr);
        }
        x
    }
    /// Exponential sweep from `a` to `b` Hz over `period`, repeating.
    fn expo(a: f64, b: f64, period: f64) -> impl Fn(f64) -> f64 + Copy {
        move |t: f64| a * (b / a).powf(t.rem_euclid(period) / period)
    }
}

fn midi(m: f64) -> f64 {
    440.0 * 2f64.powf((m - 69.0) / 12.0)
}

/// Piecewise-constant melody: note `i` lasts `step` seconds, glides over `glide` s.
fn melody(notes: Vec<f64>, step: f64, glide: f64) -> impl Fn(f64) -> f64 + Clone {
    move |t: f64| {
        let k = (t / step) as usize;
        let cur = notes[k % notes.len()];
        let prev = notes[(k + notes.len() - 1) % notes.len()];
        let ph = t - k as f64 * step;
        if ph < glide && k > 0 {
            prev + (cur - prev) * ph / glide
        } else {
            cur
        }
    }
}

// ---------------------------------------------------------------- recipe helpers

/// Add `layer` underneath `x` at `rel_db` relative to `x`'s RMS: the faint bed
/// (room tail, hiss, hum) that keeps sparse recipes audible between hits.
fn with_bed(mut x: Vec<f64>, layer: &[f64], rel_db: f64) -> Vec<f64> {
    let (rx, rl) = (rms(&x), rms(layer));
    if rl > 0.0 {
        add(&mut x, layer, rx / rl * 10f64.powf(rel_db / 20.0));
    }
    x
}

fn gated(s: &Synth, x: Vec<f64>, period: f64, duty: f64, edge: f64, floor: f64) -> Vec<f64> {
    s.shape(x, move |t| gate_value(t, period, duty, edge, floor))
}

fn struck(s: &mut Synth, times: &[f64], modes: &[(f64, f64, f64)], gain_jitter: f64) -> Vec<f64> {
    let mut out = s.zeros();
    for &t in times {
        let g = 1.0 - gain_jitter * s.u();
        s.strike(&mut out, t, modes, g);
    }
    out
}

fn modes_at(ratios: &[(f64, f64, f64)], f0: f64, tau: f64) -> Vec<(f64, f64, f64)> {
    ratios.iter().map(|(r, t, a)| (f0 * r, tau * t, *a)).collect()
}

/// Partial ratios, relative decay and amplitude of a tuned church bell (hum, prime, tierce, quint, nominal...).
const CHURCH_BELL: [(f64, f64, f64); 9] = [
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
const CHIME_TUBE: [(f64, f64, f64); 3] = [(1.0, 1.0, 1.0), (2.76, 0.5, 0.4), (5.40, 0.25, 0.2)];
const XYLO_BAR: [(f64, f64, f64); 3] = [(1.0, 1.0, 1.0), (3.93, 0.35, 0.3), (9.2, 0.15, 0.1)];

/// Pitch-dropping drum hit (kick, tom, heartbeat thump).
fn drum_hit(s: &Synth, out: &mut [f64], at: f64, f_lo: f64, f_hi: f64, tau: f64, gain: f64) {
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
fn bubble(s: &Synth, out: &mut [f64], at: f64, f0: f64, tau: f64, gain: f64) {
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

#[allow(clippy::too_many_arguments)]
/// A gliding tone burst from `f_a` to `f_b` (exponential) lasting `len_s`, Hann-windowed.
fn chirp(s: &Synth, out: &mut [f64], at: f64, f_a: f64, f_b: f64, len_s: f64, gain: f64, partials: &[(f64, f64)]) {
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
fn engine(s: &mut Synth, rate: impl Fn(f64) -> f64 + Copy, cutoff: f64, noise: f64) -> Vec<f64> {
    let amps: Vec<(f64, f64)> = (1..=60)
        .map(|k| (k as f64, (0.4 + 0.6 * s.u()) / (k as f64).powf(0.7)))
        .collect();
    let body = s.osc(rate, &amps);
    let cyc = s.osc(rate, &sine());
    let nz = s.noise_band(60.0, cutoff * 2.0);
    let chopped: Vec<f64> = nz.iter().zip(&cyc).map(|(n, c)| n * (0.5 + 0.5 * c).powi(3)).collect();
    let mut x = sum(&[(&body, 1.0), (&chopped, noise * 3.0)]);
    filter(&mut x, Biquad::lowpass(cutoff, 0.9, s.sr));
    filter(&mut x, Biquad::lowpass(cutoff * 1.5, 0.707, s.sr));
    x
}

fn whistle(s: &mut Synth, f: impl Fn(f64) -> f64 + Clone, breath: f64) -> Vec<f64> {
    let tone = s.osc(f.clone(), &[(1.0, 1.0), (2.0, 0.04)]);
    let mut air = s.white();
    filter_sweep(&mut air, Kind::Band, s.sr, 6.0, f);
    let hiss = s.noise_band(1500.0, 7000.0);
    let air_rms = rms(&air).max(1e-9);
    let hiss_rms = rms(&hiss).max(1e-9);
    sum(&[(&tone, 1.0), (&air, breath * 0.7 / air_rms), (&hiss, breath * 0.15 / hiss_rms)])
}

/// Formant filter bank over a source (vowel-like and brassy timbres).
fn formants(s: &Synth, src: &[f64], bands: &[(f64, f64, f64)]) -> Vec<f64> {
    let mut out = vec![0.0; src.len()];
    for &(f, q, g) in bands {
        let y = bp(src.to_vec(), f, q, s.sr);
        add(&mut out, &y, g);
    }
    out
}

fn vibrato(f0: f64, depth: f64, rate: f64) -> impl Fn(f64) -> f64 + Copy {
    move |t: f64| f0 * (1.0 + depth * (2.0 * PI * rate * t).sin())
}

fn clip(x: Vec<f64>, drive: f64) -> Vec<f64> {
    x.into_iter().map(|v| (drive * v).tanh()).collect()
}

fn normalised(x: Vec<f64>) -> Vec<f64> {
    let r = rms(&x).max(1e-12);
    x.into_iter().map(|v| v / r).collect()
}

/// Per-note melody with its own decay per note (plucked/struck synths).
fn note_train(s: &Synth, notes: &[f64], step: f64, tau: f64, partials: &[(f64, f64)]) -> Vec<f64> {
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

#[allow(clippy::vec_init_then_push)]
fn specs() -> Vec<Spec> {
    let mut v: Vec<Spec> = Vec::with_capacity(LIBRARY_SIZE);

    // ---- bells: struck inharmonic modes, repeated before the ring dies away
    for &(label, phrase, f0, period, tau, dur) in &[
        ("bell_low", "a low ringing bell", 196.0, 1.2, 1.5, 3.6),
        ("bell_mid", "a mid-pitched ringing bell", 523.0, 0.8, 1.0, 2.4),
        ("bell_high", "a high ringing bell", 1400.0, 0.5, 0.6, 2.0),
    ] {
        atom!(v, "bells", label, phrase, dur, move |s: &mut Synth| {
            let t = s.times_regular(period);
            struck(s, &t, &modes_at(&CHURCH_BELL, f0, tau), 0.1)
        });
    }
    atom!(v, "bells", "handbell_rapid", "a small handbell rung rapidly", 1.5, |s: &mut Synth| {
        let t = s.times_jittered(0.09, 0.2);
        struck(s, &t, &modes_at(&CHURCH_BELL, 1100.0, 0.25), 0.4)
    });
    atom!(v, "bells", "gong", "a deep shimmering gong", 3.0, |s: &mut Synth| {
        let modes: Vec<(f64, f64, f64)> =
            (0..40).map(|k| (80.0 * (1.0 + k as f64 * 0.37 + 0.2 * s.u()), s.range(0.8, 2.5), 1.0 / (1.0 + 0.1 * k as f64))).collect();
        let mut out = struck(s, &[0.0], &modes, 0.0);
        let roar = s.noise_band(200.0, 2500.0);
        add(&mut out, &s.shape(roar, |t| 0.05 * (-t / 1.0).exp()), 1.0);
        out
    });
    atom!(v, "bells", "doorbell_chime", "a two-tone doorbell chime (ding-dong)", 2.8, |s: &mut Synth| {
        let mut out = s.zeros();
        for base in [0.0, 1.4] {
            s.strike(&mut out, base, &modes_at(&CHIME_TUBE, 659.3, 1.0), 1.0);
            s.strike(&mut out, base + 0.55, &modes_at(&CHIME_TUBE, 523.3, 1.0), 1.0);
        }
        out
    });
    atom!(v, "bells", "wind_chimes", "tinkling wind chimes", 3.0, |s: &mut Synth| {
        let scale = [1047.0, 1175.0, 1319.0, 1568.0, 1760.0, 2093.0];
        let mut out = s.zeros();
        for t in s.times_poisson(9.0) {
            let f = scale[(s.u() * 6.0) as usize % 6];
            let g = s.range(0.4, 1.0);
            s.strike(&mut out, t, &modes_at(&CHIME_TUBE, f, 0.8), g);
        }
        out
    });
    atom!(v, "bells", "triangle_ting", "a bright triangle ting", 2.1, |s: &mut Synth| {
        let ratios: Vec<(f64, f64, f64)> = (1..12).map(|k| (k as f64 * 1.003f64.powi(k), 1.0 / (1.0 + 0.1 * k as f64), 1.0 / k as f64)).collect();
        let t = s.times_regular(0.35);
        struck(s, &t, &modes_at(&ratios, 1760.0, 0.8), 0.1)
    });
    atom!(v, "bells", "fire_alarm_bell", "a ringing electric fire-alarm bell", 2.0, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 20.0);
        struck(s, &t, &modes_at(&CHURCH_BELL, 900.0, 0.15), 0.15)
    });
    atom!(v, "bells", "bicycle_bell", "a bicycle bell trill", 2.1, |s: &mut Synth| {
        let t: Vec<f64> = s.times_regular(1.0 / 22.0).into_iter().filter(|t| t.rem_euclid(0.7) < 0.35).collect();
        struck(s, &t, &[(2300.0, 0.3, 1.0), (3350.0, 0.2, 0.6), (5100.0, 0.1, 0.3)], 0.3)
    });
    atom!(v, "bells", "cowbell_beat", "a cowbell struck in a steady beat", 1.6, |s: &mut Synth| {
        let t = s.times_regular(0.2);
        struck(s, &t, &[(562.0, 0.09, 1.0), (845.0, 0.08, 0.8), (1420.0, 0.05, 0.3)], 0.2)
    });
    atom!(v, "bells", "singing_bowl", "a humming singing bowl", 3.5, |s: &mut Synth| {
        let a = s.osc(|_| 220.0, &[(1.0, 1.0), (2.71, 0.4), (5.1, 0.15)]);
        let b = s.osc(|_| 221.3, &[(1.0, 1.0), (2.71, 0.4)]);
        s.shape(sum(&[(&a, 1.0), (&b, 0.8)]), |t| 0.7 + 0.3 * (2.0 * PI * 0.5 * t).sin())
    });
    atom!(v, "bells", "clock_chime_melody", "a grandfather-clock chime melody", 3.2, |s: &mut Synth| {
        let mut out = s.zeros();
        for (k, m) in [64.0, 60.0, 62.0, 55.0].iter().enumerate() {
            s.strike(&mut out, k as f64 * 0.8, &modes_at(&CHURCH_BELL, midi(*m), 0.9), 1.0);
        }
        out
    });
    atom!(v, "bells", "tuning_fork", "a pure ringing tuning fork", 3.0, |s: &mut Synth| {
        let t = s.times_regular(1.5);
        struck(s, &t, &[(440.0, 2.0, 1.0), (2640.0, 0.05, 0.2)], 0.0)
    });

    // ---- sirens and sweeps
    atom!(v, "sirens", "siren_wail", "a slow wailing siren", 3.5, |s: &mut Synth| {
        let x = s.osc(|t| 650.0 + 650.0 * (0.5 - 0.5 * (2.0 * PI * t / 3.5).cos()), &square(9));
        lp(x, 3000.0, s.sr)
    });
    atom!(v, "sirens", "siren_yelp", "a fast yelping siren", 1.76, |s: &mut Synth| {
        let x = s.osc(|t| 650.0 + 650.0 * (0.5 - 0.5 * (2.0 * PI * t / 0.22).cos()), &square(9));
        lp(x, 3000.0, s.sr)
    });
    atom!(v, "sirens", "siren_hi_lo", "a two-tone hi-lo siren", 2.2, |s: &mut Synth| {
        let x = s.osc(melody(vec![440.0, 587.0], 0.55, 0.02), &square(7));
        lp(x, 3000.0, s.sr)
    });
    atom!(v, "sirens", "air_raid_siren", "a low air-raid siren rising and falling", 4.0, |s: &mut Synth| {
        let x = s.osc(|t| 220.0 + 300.0 * (0.5 - 0.5 * (2.0 * PI * t / 4.0).cos()), &saw(20));
        lp(x, 2000.0, s.sr)
    });
    atom!(v, "sirens", "siren_rising", "a siren rising in pitch", 2.5, |s: &mut Synth| {
        let x = s.osc(|t| 450.0 * 3f64.powf(t / 2.5), &square(7));
        lp(x, 3500.0, s.sr)
    });
    atom!(v, "sirens", "siren_falling", "a siren winding down in pitch", 2.5, |s: &mut Synth| {
        let x = s.osc(|t| 1350.0 / 3f64.powf(t / 2.5), &square(7));
        lp(x, 3500.0, s.sr)
    });
    atom!(v, "sirens", "sweep_up", "a pure tone sweeping upward", 2.0, |s: &mut Synth| s.osc(Synth::expo(150.0, 5000.0, 2.0), &sine()));
    atom!(v, "sirens", "sweep_down", "a pure tone sweeping downward", 2.0, |s: &mut Synth| s.osc(Synth::expo(5000.0, 150.0, 2.0), &sine()));
    atom!(v, "sirens", "warble_tone", "a rapidly warbling electronic tone", 1.5, |s: &mut Synth| {
        s.osc(|t| 1000.0 + 250.0 * (2.0 * PI * 12.0 * t).sin(), &triangle(7))
    });
    atom!(v, "sirens", "whooping_siren", "a repeated upward whooping siren", 2.1, |s: &mut Synth| {
        let x = s.osc(Synth::expo(400.0, 1400.0, 0.7), &saw(10));
        lp(x, 3000.0, s.sr)
    });

    // ---- engines, motors and hums
    atom!(v, "engines", "engine_idle", "a low engine idling rumble", 3.0, |s: &mut Synth| engine(s, |t| 26.0 + 0.8 * (2.0 * PI * 0.7 * t).sin(), 500.0, 0.3));
    atom!(v, "engines", "engine_revving", "an engine revving up and down", 2.5, |s: &mut Synth| {
        engine(s, |t| 30.0 + 65.0 * (0.5 - 0.5 * (2.0 * PI * t / 2.5).cos()), 1500.0, 0.3)
    });
    atom!(v, "engines", "moped_engine", "a high-pitched buzzing moped engine", 2.5, |s: &mut Synth| engine(s, |t| 110.0 + 3.0 * (2.0 * PI * 0.5 * t).sin(), 3500.0, 0.2));
    atom!(v, "engines", "diesel_truck", "a heavy diesel truck rumble", 3.0, |s: &mut Synth| engine(s, |_| 16.0, 350.0, 0.8));
    atom!(v, "engines", "mains_hum", "a low electrical mains hum", 2.0, |s: &mut Synth| {
        // Mains hum: 50 Hz plus the buzzy odd harmonics of magnetised iron.
        let mut h = vec![(1.0, 1.0), (2.0, 0.6)];
        h.extend((3..=21).step_by(2).map(|k| (k as f64, 0.35 / (k as f64).sqrt())));
        s.osc(|_| 50.0, &h)
    });
    atom!(v, "engines", "transformer_buzz", "a harsh buzzing electrical transformer", 2.0, |s: &mut Synth| {
        let x = s.osc(|_| 100.0, &saw(40));
        hp(clip(x, 3.0), 150.0, s.sr)
    });
    atom!(v, "engines", "fan_whir", "a whirring electric fan", 3.0, |s: &mut Synth| {
        let nz = s.noise_band(100.0, 3000.0);
        let air = s.shape(nz, |t| 1.0 + 0.4 * (2.0 * PI * 24.0 * t).sin());
        let motor = s.osc(|_| 380.0, &sine());
        sum(&[(&air, 1.0), (&motor, 0.05)])
    });
    atom!(v, "engines", "jet_whine", "a high jet-turbine whine", 3.0, |s: &mut Synth| {
        let roar = s.noise_band(200.0, 1500.0);
        let whine = s.osc(vibrato(3600.0, 0.003, 0.3), &[(1.0, 1.0), (1.5, 0.5)]);
        sum(&[(&normalised(roar), 1.0), (&normalised(whine), 0.8)])
    });
    atom!(v, "engines", "helicopter", "a helicopter rotor thumping", 2.0, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 7.0);
        let thumps = lp(s.bursts(&t, 0.03, None), 600.0, s.sr);
        let turbine = s.noise_band(800.0, 4000.0);
        with_bed(thumps, &turbine, -12.0)
    });
    atom!(v, "engines", "steam_train", "a steam train chugging", 2.7, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 4.5);
        let gains: Vec<f64> = (0..t.len()).map(|k| [1.0, 0.6, 0.8, 0.6][k % 4]).collect();
        let chuffs = bp(s.bursts(&t, 0.07, Some(&gains)), 1500.0, 0.8, s.sr);
        let rumble = lp(s.brown(), 200.0, s.sr);
        with_bed(chuffs, &rumble, -10.0)
    });
    atom!(v, "engines", "vacuum_cleaner", "a droning vacuum cleaner", 3.0, |s: &mut Synth| {
        let air = s.noise_band(600.0, 6000.0);
        let res = bp(air.clone(), 1200.0, 3.0, s.sr);
        let motor = lp(s.osc(|_| 420.0, &saw(8)), 2000.0, s.sr);
        sum(&[(&air, 1.0), (&res, 1.5), (&motor, 0.1)])
    });
    atom!(v, "engines", "chainsaw", "a revving chainsaw", 2.0, |s: &mut Synth| {
        let x = engine(s, |t| 130.0 + 50.0 * (0.5 - 0.5 * (2.0 * PI * t / 1.0).cos()), 4000.0, 0.6);
        clip(normalised(x), 1.5)
    });
    atom!(v, "engines", "electric_drill", "a whirring electric drill", 2.0, |s: &mut Synth| {
        let x = s.osc(vibrato(380.0, 0.004, 4.0), &square(15));
        let hiss = s.noise_band(2000.0, 7000.0);
        with_bed(lp(x, 3000.0, s.sr), &hiss, -15.0)
    });
    atom!(v, "engines", "washing_machine", "a spinning washing-machine drum", 3.3, |s: &mut Synth| {
        let rumble = lp(s.brown(), 400.0, s.sr);
        let rumble = s.shape(rumble, |t| 1.0 + 0.6 * (2.0 * PI * 1.2 * t).sin());
        let hum = s.osc(|_| 60.0, &[(1.0, 1.0), (2.0, 0.3)]);
        sum(&[(&normalised(rumble), 1.0), (&hum, 0.3)])
    });

    // ---- drums and percussive rolls
    atom!(v, "drums", "snare_roll", "a snare drum roll", 2.0, |s: &mut Synth| {
        let t = s.times_jittered(1.0 / 24.0, 0.1);
        let rattle = hp(s.bursts(&t, 0.03, None), 1000.0, s.sr);
        let body = struck(s, &t, &[(190.0, 0.05, 1.0), (330.0, 0.03, 0.5)], 0.3);
        sum(&[(&rattle, 1.0), (&body, 0.5)])
    });
    atom!(v, "drums", "kick_drum_beat", "a steady bass-drum beat", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.25) {
            drum_hit(s, &mut out, t, 50.0, 150.0, 0.15, 1.0);
        }
        out
    });
    for &(label, phrase, lo, hi) in &[
        ("toms_descending", "tom drums descending in pitch", 320.0f64, 110.0f64),
        ("toms_ascending", "tom drums ascending in pitch", 110.0, 320.0),
    ] {
        atom!(v, "drums", label, phrase, 2.0, move |s: &mut Synth| {
            let mut out = s.zeros();
            // One run of eight hits over the whole atom, so the direction is unambiguous.
            for (k, t) in s.times_regular(0.25).into_iter().enumerate() {
                let f = lo * (hi / lo).powf((k % 8) as f64 / 7.0);
                drum_hit(s, &mut out, t, f, f * 1.5, 0.12, 1.0);
            }
            out
        });
    }
    atom!(v, "drums", "hand_claps", "rapid hand clapping", 2.0, |s: &mut Synth| {
        let mut t = Vec::new();
        for c in s.times_jittered(0.12, 0.3) {
            t.extend([c, c + 0.008, c + 0.016]);
        }
        let claps = bp(s.bursts(&t, 0.012, None), 1100.0, 1.5, s.sr);
        let room = bp(s.bursts(&t, 0.06, None), 1500.0, 0.7, s.sr);
        sum(&[(&claps, 1.0), (&room, 0.15)])
    });
    atom!(v, "drums", "bongos", "bongos playing a quick pattern", 1.6, |s: &mut Synth| {
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.1).into_iter().enumerate() {
            let high = [true, true, false, true, false, false, true, false][k % 8];
            let f = if high { 420.0 } else { 300.0 };
            s.strike(&mut out, t, &[(f, 0.09, 1.0), (f * 1.6, 0.04, 0.3)], 1.0);
        }
        out
    });
    atom!(v, "drums", "timpani_roll", "a rumbling timpani roll", 2.5, |s: &mut Synth| {
        let t = s.times_jittered(1.0 / 18.0, 0.15);
        let x = struck(s, &t, &modes_at(&[(1.0, 1.0, 1.0), (1.5, 0.7, 0.5), (1.99, 0.5, 0.3), (2.44, 0.3, 0.2)], 95.0, 0.6), 0.3);
        s.shape(x, |t| 0.6 + 0.4 * (PI * t / 2.5).sin())
    });
    atom!(v, "drums", "shaker", "a rhythmic shaker", 2.0, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 8.0);
        let gains: Vec<f64> = (0..t.len()).map(|k| if k % 2 == 0 { 1.0 } else { 0.6 }).collect();
        let x = hp(s.bursts(&t, 0.04, Some(&gains)), 5000.0, s.sr);
        let bed = s.noise_band(5000.0, 8000.0);
        with_bed(x, &bed, -18.0)
    });
    atom!(v, "drums", "tambourine", "a jingling tambourine", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(1.0 / 6.0) {
            for _ in 0..10 {
                let f = s.range(4000.0, 7500.0);
                let dt = s.range(0.0, 0.02);
                let g = s.range(0.3, 1.0);
                s.strike(&mut out, t + dt, &[(f, 0.08, 1.0)], g);
            }
        }
        out
    });
    atom!(v, "drums", "hihat_fast", "fast closed hi-hat ticks", 1.5, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 14.0);
        let x = hp(s.bursts(&t, 0.012, None), 7000.0, s.sr);
        let bed = s.noise_band(6000.0, 9000.0);
        with_bed(x, &bed, -20.0)
    });
    atom!(v, "drums", "cymbal_crash", "a washy cymbal crash", 3.0, |s: &mut Synth| {
        let t = s.times_regular(1.5);
        let wash = hp(s.bursts(&t, 0.6, None), 3000.0, s.sr);
        let modes: Vec<(f64, f64, f64)> = (0..30).map(|_| (s.range(3000.0, 7000.0), s.range(0.2, 0.8), s.range(0.02, 0.08))).collect();
        let ring = struck(s, &t, &modes, 0.0);
        sum(&[(&wash, 1.0), (&ring, 1.0)])
    });
    atom!(v, "drums", "conga_groove", "a low conga drum groove", 2.4, |s: &mut Synth| {
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.15).into_iter().enumerate() {
            let (f, g) = [(200.0, 1.0), (200.0, 0.5), (150.0, 0.9), (260.0, 0.7)][k % 4];
            drum_hit(s, &mut out, t, f, f * 1.2, 0.12, g);
        }
        out
    });

    // ---- whistles
    atom!(v, "whistles", "whistle_high", "a steady high whistle", 2.0, |s: &mut Synth| whistle(s, |_| 2600.0, 0.05));
    atom!(v, "whistles", "whistle_vibrato", "a high whistle with vibrato", 2.0, |s: &mut Synth| whistle(s, vibrato(2000.0, 0.045, 6.0), 0.05));
    atom!(v, "whistles", "slide_whistle_up", "a slide whistle rising in pitch", 1.8, |s: &mut Synth| whistle(s, Synth::expo(600.0, 2400.0, 1.8), 0.08));
    atom!(v, "whistles", "slide_whistle_down", "a slide whistle falling in pitch", 1.8, |s: &mut Synth| whistle(s, Synth::expo(2400.0, 600.0, 1.8), 0.08));
    atom!(v, "whistles", "referee_whistle", "a trilling referee whistle", 1.5, |s: &mut Synth| {
        let x = whistle(s, |t| 3000.0 + 150.0 * (2.0 * PI * 30.0 * t).sin().signum(), 0.15);
        s.shape(x, |t| 0.6 + 0.4 * (2.0 * PI * 30.0 * t).sin())
    });
    atom!(v, "whistles", "kettle_whistle", "a shrill boiling-kettle whistle", 2.5, |s: &mut Synth| {
        let x = whistle(s, vibrato(3400.0, 0.01, 3.0), 0.4);
        s.shape(x, |t| 0.8 + 0.2 * (2.0 * PI * 0.8 * t).sin())
    });
    atom!(v, "whistles", "whistle_low", "a low breathy whistle", 2.0, |s: &mut Synth| whistle(s, vibrato(750.0, 0.01, 4.0), 0.5));
    atom!(v, "whistles", "wolf_whistle", "a two-note wolf whistle", 2.4, |s: &mut Synth| {
        let f = |t: f64| {
            let p = t.rem_euclid(1.2);
            if p < 0.4 {
                800.0 * (2600.0f64 / 800.0).powf(p / 0.4)
            } else if p < 0.5 {
                2600.0
            } else {
                2200.0 * (700.0f64 / 2200.0).powf(((p - 0.5) / 0.7).min(1.0))
            }
        };
        let x = whistle(s, f, 0.1);
        gated(s, x, 1.2, 0.95, 0.03, 0.05)
    });
    atom!(v, "whistles", "whistled_tune", "a whistled tune", 2.0, |s: &mut Synth| {
        let notes: Vec<f64> = [79.0, 81.0, 83.0, 86.0, 84.0, 81.0, 79.0, 76.0].iter().map(|m| midi(*m)).collect();
        let m = melody(notes, 0.25, 0.03);
        whistle(s, move |t| m(t) * (1.0 + 0.01 * (2.0 * PI * 5.0 * t).sin()), 0.05)
    });
    atom!(v, "whistles", "train_whistle", "a steam-train whistle chord", 2.5, |s: &mut Synth| {
        let a = whistle(s, |_| 900.0, 0.3);
        let b = whistle(s, |_| 1130.0, 0.3);
        let c = whistle(s, |_| 1350.0, 0.3);
        sum(&[(&a, 1.0), (&b, 0.8), (&c, 0.7)])
    });

    // ---- horn-like tones
    atom!(v, "horns", "car_horn", "a honking car horn", 1.8, |s: &mut Synth| {
        let a = s.osc(|_| 415.0, &square(15));
        let b = s.osc(|_| 520.0, &square(15));
        let x = formants(s, &sum(&[(&a, 1.0), (&b, 1.0)]), &[(900.0, 2.0, 1.0), (2500.0, 3.0, 0.5)]);
        gated(s, x, 0.45, 0.85, 0.01, 0.03)
    });
    atom!(v, "horns", "air_horn", "a blaring high air-horn blast", 2.1, |s: &mut Synth| {
        let x = clip(normalised(s.osc(|_| 700.0, &saw(12))), 2.0);
        gated(s, x, 0.7, 0.9, 0.01, 0.05)
    });
    atom!(v, "horns", "foghorn", "a deep foghorn", 2.5, |s: &mut Synth| {
        let x = lp(s.osc(|_| 82.0, &saw(30)), 1200.0, s.sr);
        s.shape(x, |t| 0.5 + 0.5 * (t / 0.4).min(1.0))
    });
    atom!(v, "horns", "clown_horn", "a squeaky rubber bulb horn honking", 1.8, |s: &mut Synth| {
        let x = hp(s.osc(|t| 480.0 + 200.0 * (t.rem_euclid(0.3) / 0.25).min(1.0), &square(9)), 600.0, s.sr);
        gated(s, x, 0.3, 0.85, 0.01, 0.03)
    });
    atom!(v, "horns", "brass_fanfare", "a brassy horn fanfare", 2.4, |s: &mut Synth| {
        let notes: Vec<f64> = [60.0, 64.0, 67.0, 72.0].iter().map(|m| midi(*m)).collect();
        let x = lp(s.osc(melody(notes, 0.6, 0.02), &saw(30)), 2500.0, s.sr);
        gated(s, x, 0.6, 0.93, 0.02, 0.05)
    });
    atom!(v, "horns", "train_horn", "a chord of blaring train horns", 2.5, |s: &mut Synth| {
        let a = s.osc(|_| 311.0, &saw(20));
        let b = s.osc(|_| 370.0, &saw(20));
        let c = s.osc(|_| 494.0, &saw(20));
        lp(sum(&[(&a, 1.0), (&b, 1.0), (&c, 1.0)]), 3000.0, s.sr)
    });
    atom!(v, "horns", "didgeridoo", "a droning didgeridoo", 3.0, |s: &mut Synth| {
        let mut x = s.osc(|_| 65.0, &saw(60));
        filter_sweep(&mut x, Kind::Band, s.sr, 3.0, |t| 600.0 + 300.0 * (2.0 * PI * 2.0 * t).sin());
        x
    });
    atom!(v, "horns", "kazoo", "a buzzing kazoo melody", 1.5, |s: &mut Synth| {
        let notes: Vec<f64> = [67.0, 69.0, 71.0, 67.0, 64.0].iter().map(|m| midi(*m)).collect();
        let src = s.osc(melody(notes, 0.3, 0.02), &square(30));
        formants(s, &src, &[(1500.0, 2.0, 1.0), (3000.0, 3.0, 0.5)])
    });
    atom!(v, "horns", "tuba_oompah", "a low tuba oom-pah", 2.8, |s: &mut Synth| {
        let x = lp(s.osc(melody(vec![midi(36.0), midi(43.0)], 0.35, 0.01), &saw(20)), 600.0, s.sr);
        gated(s, x, 0.35, 0.9, 0.02, 0.05)
    });

    // ---- alarms and beeps
    atom!(v, "alarms", "alarm_clock_beeps", "a fast beeping alarm clock", 1.76, |s: &mut Synth| {
        let x = s.osc(|_| 2000.0, &[(1.0, 1.0), (3.0, 0.3)]);
        gated(s, x, 0.11, 0.6, 0.005, 0.02)
    });
    atom!(v, "alarms", "smoke_alarm", "a piercing smoke-alarm beep", 2.0, |s: &mut Synth| {
        let x = s.osc(|_| 3150.0, &[(1.0, 1.0), (2.0, 0.1)]);
        gated(s, x, 0.5, 0.9, 0.005, 0.02)
    });
    atom!(v, "alarms", "reversing_beeper", "a truck reversing beeper over engine noise", 2.0, |s: &mut Synth| {
        let beep = gated(s, s.osc(|_| 1100.0, &sine()), 1.0, 0.5, 0.005, 0.0);
        let motor = engine(s, |_| 22.0, 400.0, 0.4);
        with_bed(beep, &motor, -10.0)
    });
    atom!(v, "alarms", "microwave_beeps", "long microwave-oven beeps", 2.4, |s: &mut Synth| {
        let x = s.osc(|_| 2000.0, &square(5));
        gated(s, x, 0.8, 0.8, 0.005, 0.02)
    });
    atom!(v, "alarms", "heart_monitor", "a hospital heart-monitor beep", 2.4, |s: &mut Synth| {
        let beep = gated(s, s.osc(|_| 960.0, &sine()), 0.8, 0.12, 0.005, 0.0);
        let hiss = s.noise_band(300.0, 3000.0);
        with_bed(beep, &hiss, -16.0)
    });
    atom!(v, "alarms", "buzzer_alarm", "a harsh buzzer alarm", 1.8, |s: &mut Synth| {
        let x = clip(normalised(s.osc(|_| 140.0, &square(41))), 2.0);
        gated(s, x, 0.6, 0.75, 0.01, 0.03)
    });
    atom!(v, "alarms", "klaxon", "an awooga klaxon horn", 2.4, |s: &mut Synth| {
        let x = s.osc(|t| 180.0 + 240.0 * (t.rem_euclid(0.8) / 0.5).min(1.0), &square(20));
        let x = formants(s, &x, &[(800.0, 1.5, 1.0), (1800.0, 3.0, 0.4)]);
        gated(s, x, 0.8, 0.9, 0.02, 0.03)
    });
    atom!(v, "alarms", "countdown_beeps", "short beeps rising in pitch", 1.8, |s: &mut Synth| {
        let notes: Vec<f64> = (0..12).map(|k| midi(72.0 + k as f64)).collect();
        let x = s.osc(melody(notes, 0.15, 0.0), &[(1.0, 1.0), (2.0, 0.2)]);
        gated(s, x, 0.15, 0.7, 0.005, 0.02)
    });
    atom!(v, "alarms", "pager_beeps", "rapid high pager beeps", 1.5, |s: &mut Synth| {
        let x = s.osc(|_| 3600.0, &sine());
        gated(s, x, 0.06, 0.5, 0.004, 0.03)
    });
    atom!(v, "alarms", "game_coin", "a video-game coin chime", 2.0, |s: &mut Synth| {
        let f = |t: f64| if t.rem_euclid(0.5) < 0.08 { 988.0 } else { 1319.0 };
        let x = s.osc(f, &square(7));
        s.shape(x, |t| {
            let p = t.rem_euclid(0.5);
            if p < 0.08 { 1.0 } else { (-(p - 0.08) / 0.15).exp().max(0.03) }
        })
    });
    atom!(v, "alarms", "electronic_bloops", "bubbly electronic bloops", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.1) {
            let f = s.range(300.0, 900.0);
            chirp(s, &mut out, t, f, f * 0.5, 0.1, 1.0, &sine());
        }
        out
    });
    atom!(v, "alarms", "error_chime", "a descending two-note error chime", 1.2, |s: &mut Synth| {
        note_train(s, &[880.0, 587.0], 0.3, 0.2, &[(1.0, 1.0), (2.0, 0.3)])
    });

    // ---- ticks, knocks and clicks
    atom!(v, "ticks", "clock_tick_slow", "a slow ticking clock", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.5).into_iter().enumerate() {
            let f = if k % 2 == 0 { 2000.0 } else { 1600.0 };
            s.strike(&mut out, t, &[(f, 0.02, 1.0), (400.0, 0.12, 0.3)], 1.0);
        }
        let whirr = s.noise_band(2000.0, 4000.0);
        let whirr = s.shape(whirr, |t| 0.5 + 0.5 * (2.0 * PI * 8.0 * t).sin());
        with_bed(out, &whirr, -24.0)
    });
    atom!(v, "ticks", "clock_tick_fast", "rapid clock ticks", 1.5, |s: &mut Synth| {
        let t = s.times_regular(0.1);
        struck(s, &t, &[(2500.0, 0.012, 1.0), (900.0, 0.03, 0.4)], 0.1)
    });
    atom!(v, "ticks", "door_knock", "knocking on a wooden door", 2.16, |s: &mut Synth| {
        let t: Vec<f64> = s.times_regular(0.72).into_iter().flat_map(|c| [c, c + 0.14, c + 0.28]).collect();
        let body = struck(s, &t, &[(110.0, 0.06, 1.0), (220.0, 0.04, 0.7), (410.0, 0.03, 0.5), (650.0, 0.02, 0.3)], 0.1);
        let tap = lp(s.bursts(&t, 0.01, None), 1500.0, s.sr);
        let room = lp(s.bursts(&t, 0.15, None), 600.0, s.sr);
        let x = sum(&[(&body, 1.0), (&tap, 0.5), (&room, 0.06)]);
        let bed = s.noise_band(100.0, 600.0);
        with_bed(x, &bed, -24.0)
    });
    atom!(v, "ticks", "woodpecker", "a woodpecker drumming", 1.5, |s: &mut Synth| {
        let t: Vec<f64> = s.times_regular(0.05).into_iter().filter(|t| t.rem_euclid(0.75) < 0.6).collect();
        let gains: Vec<f64> = t.iter().map(|t| 1.0 - 0.6 * t.rem_euclid(0.75) / 0.6).collect();
        let mut out = s.zeros();
        for (t, g) in t.iter().zip(&gains) {
            s.strike(&mut out, *t, &[(1200.0, 0.02, 1.0), (2500.0, 0.01, 0.5)], *g);
        }
        let bed = s.noise_band(500.0, 2000.0);
        with_bed(out, &bed, -26.0)
    });
    atom!(v, "ticks", "typewriter", "clattering typewriter keys", 2.4, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(11.0) {
            let f = s.range(2000.0, 4000.0);
            s.strike(&mut out, t, &[(f, 0.01, 1.0), (200.0, 0.03, 0.6), (f * 1.7, 0.006, 0.5)], 1.0);
        }
        s.strike(&mut out, 1.8, &[(2200.0, 0.4, 0.6)], 1.0);
        let bed = s.noise_band(200.0, 2000.0);
        with_bed(out, &bed, -24.0)
    });
    atom!(v, "ticks", "keyboard_typing", "typing on a computer keyboard", 2.0, |s: &mut Synth| {
        let t = s.times_poisson(9.0);
        let clicks = bp(s.bursts(&t, 0.008, None), 2500.0, 1.0, s.sr);
        let thud = struck(s, &t, &[(300.0, 0.02, 1.0)], 0.5);
        let x = sum(&[(&clicks, 1.0), (&thud, 0.3)]);
        let bed = s.noise_band(200.0, 1000.0);
        with_bed(x, &bed, -24.0)
    });
    atom!(v, "ticks", "geiger_counter", "crackling Geiger-counter clicks", 2.0, |s: &mut Synth| {
        let t = s.times_poisson(35.0);
        let clicks = s.bursts(&t, 0.002, None);
        let hiss = s.noise_band(1000.0, 6000.0);
        with_bed(clicks, &hiss, -18.0)
    });
    atom!(v, "ticks", "ratchet", "a clicking ratchet", 1.5, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 28.0);
        struck(s, &t, &[(3000.0, 0.006, 1.0), (700.0, 0.015, 0.5)], 0.2)
    });
    atom!(v, "ticks", "hammering_nail", "hammering a nail", 2.0, |s: &mut Synth| {
        let t = s.times_regular(0.33);
        let ring = struck(s, &t, &[(2100.0, 0.15, 1.0), (3300.0, 0.1, 0.6), (5200.0, 0.06, 0.3), (150.0, 0.03, 0.8)], 0.1);
        let bed = s.noise_band(1500.0, 4000.0);
        with_bed(ring, &bed, -28.0)
    });
    atom!(v, "ticks", "footsteps", "footsteps on a hard floor", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        let steps = s.times_regular(0.5);
        for t in &steps {
            drum_hit(s, &mut out, *t, 90.0, 120.0, 0.03, 1.0);
        }
        let heel: Vec<f64> = steps.iter().flat_map(|t| [*t, t + 0.06]).collect();
        let click = lp(s.bursts(&heel, 0.008, None), 3000.0, s.sr);
        let x = sum(&[(&out, 1.0), (&click, 0.6)]);
        let room = lp(s.bursts(&steps, 0.3, None), 800.0, s.sr);
        with_bed(x, &room, -14.0)
    });
    atom!(v, "ticks", "woodblock_beat", "a wooden block struck in a steady beat", 2.0, |s: &mut Synth| {
        let t = s.times_regular(0.25);
        let x = struck(s, &t, &[(800.0, 0.05, 1.0), (2200.0, 0.02, 0.4)], 0.0);
        let bed = s.noise_band(500.0, 1500.0);
        with_bed(x, &bed, -26.0)
    });
    atom!(v, "ticks", "ping_pong_bounce", "a ping-pong ball bouncing faster and faster", 2.0, |s: &mut Synth| {
        let mut t = Vec::new();
        let (mut at, mut gap) = (0.0, 0.3);
        while at < s.dur() {
            t.push(at);
            at += gap;
            gap *= 0.85;
            if gap < 0.03 {
                gap = 0.3;
            }
        }
        let x = struck(s, &t, &[(4200.0, 0.004, 1.0), (1100.0, 0.008, 0.6)], 0.1);
        let bed = s.noise_band(800.0, 3000.0);
        with_bed(x, &bed, -22.0)
    });
    atom!(v, "ticks", "camera_shutter", "a camera shutter firing in bursts", 1.6, |s: &mut Synth| {
        let c: Vec<f64> = s.times_regular(0.2).into_iter().flat_map(|t| [t, t + 0.04]).collect();
        let clicks = hp(s.bursts(&c, 0.004, None), 1500.0, s.sr);
        let whirr = s.noise_band(500.0, 3000.0);
        let whirr = s.shape(whirr, |t| if t.rem_euclid(0.2) < 0.1 { 1.0 } else { 0.3 });
        with_bed(clicks, &whirr, -12.0)
    });
    atom!(v, "ticks", "bamboo_knocks", "hollow bamboo knocking", 2.0, |s: &mut Synth| {
        let t = s.times_jittered(0.16, 0.3);
        let x = struck(s, &t, &[(480.0, 0.05, 1.0), (1350.0, 0.03, 0.5)], 0.5);
        let bed = s.noise_band(300.0, 1200.0);
        with_bed(x, &bed, -24.0)
    });

    // ---- rain and water-like noise textures
    atom!(v, "rain", "rain_light", "light rain pattering", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(80.0) {
            let f = s.range(2500.0, 6000.0);
            let g = s.range(0.2, 1.0);
            bubble(s, &mut out, t, f, 0.004, g);
        }
        let hiss = s.noise_band(4000.0, 8000.0);
        with_bed(out, &hiss, -10.0)
    });
    atom!(v, "rain", "rain_heavy", "heavy rain pouring down", 3.0, |s: &mut Synth| {
        let roar = s.noise_band(200.0, 8000.0);
        let roar = lp(roar, 3000.0, s.sr);
        let t = s.times_poisson(400.0);
        let drops = hp(s.bursts(&t, 0.002, None), 1000.0, s.sr);
        sum(&[(&normalised(roar), 1.0), (&normalised(drops), 0.6)])
    });
    atom!(v, "rain", "rain_tin_roof", "rain drumming on a tin roof", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(60.0) {
            let f = s.range(1200.0, 3000.0);
            let g = s.range(0.3, 1.0);
            s.strike(&mut out, t, &[(f, 0.05, 1.0), (f * 1.41, 0.03, 0.5)], g);
        }
        let nz = s.noise_band(500.0, 5000.0);
        with_bed(out, &nz, -8.0)
    });
    atom!(v, "rain", "waterfall", "a roaring waterfall", 3.0, |s: &mut Synth| {
        let a = lp(s.brown(), 800.0, s.sr);
        let b = s.noise_band(100.0, 2000.0);
        let x = sum(&[(&normalised(a), 1.0), (&normalised(b), 0.7)]);
        s.shape(x, |t| 1.0 + 0.15 * (2.0 * PI * 0.6 * t).sin())
    });
    atom!(v, "rain", "ocean_waves", "ocean waves washing in and out", 4.0, |s: &mut Synth| {
        let mut x = s.noise_band(150.0, 7000.0);
        // Start a quarter-cycle into the swell with a raised floor: a trimmed event (as short as
        // 0.6 s) must still be clearly audible, not the quiet trough between two waves.
        let swell = |t: f64| 0.5 - 0.5 * (2.0 * PI * (t + 1.0) / 4.0).cos();
        filter_sweep(&mut x, Kind::Low, s.sr, 0.707, |t| 900.0 + 2600.0 * swell(t));
        s.shape(x, |t| 0.35 + 0.65 * swell(t).powi(2))
    });
    atom!(v, "rain", "shower_hiss", "a running shower hiss", 3.0, |s: &mut Synth| {
        let hiss = bp(s.white(), 4500.0, 0.7, s.sr);
        let t = s.times_poisson(150.0);
        let spatter = bp(s.bursts(&t, 0.003, None), 2500.0, 1.0, s.sr);
        sum(&[(&normalised(hiss), 1.0), (&normalised(spatter), 0.4)])
    });
    atom!(v, "rain", "hail", "hail clattering down", 2.5, |s: &mut Synth| {
        let t = s.times_poisson(70.0);
        let hits = hp(s.bursts(&t, 0.003, None), 1500.0, s.sr);
        let knock = struck(s, &t, &[(900.0, 0.02, 1.0)], 0.6);
        let x = sum(&[(&hits, 1.0), (&knock, 0.5)]);
        let ground = s.noise_band(300.0, 3000.0);
        with_bed(x, &ground, -14.0)
    });
    atom!(v, "rain", "thunder_rumble", "a distant thunder rumble", 4.0, |s: &mut Synth| {
        let x = lp(s.brown(), 150.0, s.sr);
        let crack = lp(s.bursts(&[0.0, 0.3, 1.1], 0.4, Some(&[1.0, 0.6, 0.5])), 400.0, s.sr);
        let x = sum(&[(&normalised(x), 1.0), (&normalised(crack), 0.8)]);
        s.shape(x, |t| 0.3 + 0.7 * (-((t - 1.2) / 1.2).powi(2)).exp())
    });

    // ---- wind-like noise textures
    atom!(v, "wind", "wind_howl_low", "a low howling wind", 3.5, |s: &mut Synth| {
        let mut x = s.white();
        filter_sweep(&mut x, Kind::Band, s.sr, 6.0, |t| 350.0 + 150.0 * (2.0 * PI * 0.4 * t).sin() + 60.0 * (2.0 * PI * 1.1 * t).sin());
        s.shape(x, |t| 0.6 + 0.4 * (2.0 * PI * 0.3 * t).sin())
    });
    atom!(v, "wind", "wind_whistle_high", "a high whistling wind", 3.5, |s: &mut Synth| {
        let mut x = s.white();
        filter_sweep(&mut x, Kind::Band, s.sr, 12.0, |t| 1800.0 + 500.0 * (2.0 * PI * 0.35 * t).sin() + 150.0 * (2.0 * PI * 1.3 * t).sin());
        s.shape(x, |t| 0.6 + 0.4 * (2.0 * PI * 0.4 * t).sin())
    });
    atom!(v, "wind", "breeze_rustle", "a soft rustling breeze", 3.0, |s: &mut Synth| {
        let air = s.noise_band(2000.0, 7000.0);
        let air = s.shape(air, |t| 0.6 + 0.4 * (2.0 * PI * 0.5 * t).sin());
        let t = s.times_poisson(40.0);
        let leaves = bp(s.bursts(&t, 0.005, None), 4000.0, 1.0, s.sr);
        sum(&[(&normalised(air), 1.0), (&normalised(leaves), 0.5)])
    });
    atom!(v, "wind", "gale", "a roaring gale", 3.5, |s: &mut Synth| {
        let mut x = s.white();
        filter_sweep(&mut x, Kind::Low, s.sr, 1.0, |t| 900.0 + 600.0 * (2.0 * PI * 0.45 * t).sin());
        s.shape(x, |t| 0.5 + 0.5 * (0.5 + 0.5 * (2.0 * PI * 0.45 * t).sin()).powi(2))
    });
    atom!(v, "wind", "white_noise", "steady white-noise hiss", 2.0, |s: &mut Synth| s.white());
    atom!(v, "wind", "brown_noise", "a deep rumbling noise", 2.0, |s: &mut Synth| lp(s.brown(), 300.0, s.sr));

    // ---- chirps and calls
    atom!(v, "chirps", "bird_chirps", "high bird-like chirps", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_jittered(0.09, 0.2) {
            let f = s.range(4800.0, 5600.0);
            chirp(s, &mut out, t, f, f * 0.6, 0.06, 1.0, &sine());
        }
        out
    });
    atom!(v, "chirps", "bird_trill", "a warbling bird trill", 1.8, |s: &mut Synth| {
        let x = s.osc(|t| 3400.0 + 600.0 * (2.0 * PI * 22.0 * t).sin(), &sine());
        s.shape(x, |t| 0.5 + 0.5 * (2.0 * PI * 11.0 * t).sin().abs())
    });
    atom!(v, "chirps", "crickets", "chirping crickets", 2.4, |s: &mut Synth| {
        let x = s.osc(|_| 4600.0, &[(1.0, 1.0), (2.0, 0.2)]);
        let x = s.shape(x, |t| (0.5 + 0.5 * (2.0 * PI * 30.0 * t).sin()).powi(4));
        gated(s, x, 0.3, 0.85, 0.01, 0.05)
    });
    atom!(v, "chirps", "cicada_drone", "a loud buzzing cicada", 3.0, |s: &mut Synth| {
        let x = bp(s.white(), 5500.0, 4.0, s.sr);
        s.shape(x, |t| (0.3 + 0.7 * (2.0 * PI * 120.0 * t).sin().abs()) * (0.6 + 0.4 * (PI * t / 3.0).sin()))
    });
    atom!(v, "chirps", "frog_croaks", "croaking frogs", 2.4, |s: &mut Synth| {
        let x = s.osc(|t| 180.0 - 20.0 * t.rem_euclid(0.4), &saw(30));
        let x = s.shape(x, |t| 0.3 + 0.7 * (0.5 + 0.5 * (2.0 * PI * 18.0 * t).sin()).powi(2));
        let x = formants(s, &x, &[(600.0, 2.0, 1.0), (1400.0, 3.0, 0.3)]);
        gated(s, x, 0.4, 0.75, 0.02, 0.04)
    });
    atom!(v, "chirps", "owl_hoots", "an owl-like hooting", 2.7, |s: &mut Synth| {
        let x = s.osc(|t| 380.0 - 40.0 * (t.rem_euclid(0.45) / 0.35).min(1.0), &[(1.0, 1.0), (2.0, 0.1)]);
        let breath = s.noise_band(300.0, 1500.0);
        let x = with_bed(x, &breath, -20.0);
        gated(s, x, 0.45, 0.8, 0.06, 0.05)
    });
    atom!(v, "chirps", "cuckoo_call", "a cuckoo call", 1.4, |s: &mut Synth| {
        let f = |t: f64| if t.rem_euclid(0.7) < 0.3 { 700.0 } else { 560.0 };
        let x = s.osc(f, &[(1.0, 1.0), (2.0, 0.15), (3.0, 0.05)]);
        s.shape(x, |t| {
            let p = t.rem_euclid(0.7);
            let q = if p < 0.3 { p } else { p - 0.3 };
            0.05 + 0.95 * (-q / 0.15).exp() * (q / 0.01).min(1.0)
        })
    });
    atom!(v, "chirps", "laser_zaps", "sci-fi laser zaps", 1.5, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.15) {
            chirp(s, &mut out, t, 3500.0, 250.0, 0.16, 1.0, &saw(8));
        }
        out
    });
    atom!(v, "chirps", "sonar_ping", "a sonar ping with echoes", 2.4, |s: &mut Synth| {
        let mut t = Vec::new();
        let mut g = Vec::new();
        for c in s.times_regular(1.2) {
            for (k, d) in [0.0, 0.3, 0.6, 0.9].iter().enumerate() {
                t.push(c + d);
                g.push(0.45f64.powi(k as i32));
            }
        }
        let mut out = s.zeros();
        for (t, g) in t.iter().zip(&g) {
            s.strike(&mut out, *t, &[(1500.0, 0.35, 1.0)], *g);
        }
        out
    });
    atom!(v, "chirps", "upward_chirps", "rapid upward electronic chirps", 1.2, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.08) {
            chirp(s, &mut out, t, 300.0, 2500.0, 0.08, 1.0, &[(1.0, 1.0), (2.0, 0.3)]);
        }
        out
    });
    atom!(v, "chirps", "cartoon_boing", "a cartoon spring boing", 2.4, |s: &mut Synth| {
        let x = s.osc(|t| {
            let p = t.rem_euclid(0.8);
            220.0 * (1.0 + 0.35 * (2.0 * PI * 13.0 * p).sin() * (-p / 0.4).exp())
        }, &saw(10));
        s.shape(lp(x, 2500.0, s.sr), |t| 0.1 + 0.9 * (-t.rem_euclid(0.8) / 0.35).exp())
    });
    atom!(v, "chirps", "duck_quacks", "quacking duck-like honks", 2.24, |s: &mut Synth| {
        let x = s.osc(|t| 260.0 - 60.0 * (t.rem_euclid(0.28) / 0.18).min(1.0), &saw(30));
        let x = formants(s, &x, &[(1100.0, 3.0, 1.0), (2400.0, 4.0, 0.6)]);
        gated(s, x, 0.28, 0.65, 0.01, 0.04)
    });

    // ---- buzzes
    atom!(v, "buzzes", "bee_buzz", "a buzzing bee", 2.5, |s: &mut Synth| {
        let x = s.osc(|t| 220.0 + 10.0 * (2.0 * PI * 8.0 * t).sin(), &saw(40));
        s.shape(lp(x, 3000.0, s.sr), |t| 0.8 + 0.2 * (2.0 * PI * 1.3 * t).sin())
    });
    atom!(v, "buzzes", "mosquito_whine", "a high whining mosquito", 2.5, |s: &mut Synth| {
        let x = s.osc(|t| 620.0 * (1.0 + 0.05 * (2.0 * PI * 0.7 * t).sin()), &saw(10));
        s.shape(hp(x, 400.0, s.sr), |t| 0.6 + 0.4 * (2.0 * PI * 0.7 * t).cos())
    });
    atom!(v, "buzzes", "fly_buzz", "a fly buzzing around", 3.0, |s: &mut Synth| {
        let (a, b) = (s.range(0.0, 6.0), s.range(0.0, 6.0));
        let x = s.osc(move |t| 150.0 + 25.0 * (2.0 * PI * 0.9 * t + a).sin() + 10.0 * (2.0 * PI * 2.3 * t + b).sin(), &saw(30));
        s.shape(lp(x, 2500.0, s.sr), move |t| 0.25 + 0.75 * (0.5 + 0.5 * (2.0 * PI * 0.9 * t + a).sin()))
    });
    atom!(v, "buzzes", "electric_zaps", "crackling electric zaps", 2.0, |s: &mut Synth| {
        let t = s.times_poisson(12.0);
        let zaps = hp(s.bursts(&t, 0.03, None), 1000.0, s.sr);
        let buzz = s.osc(|_| 60.0, &saw(40));
        with_bed(zaps, &buzz, -12.0)
    });
    atom!(v, "buzzes", "electric_razor", "an electric razor buzz", 2.0, |s: &mut Synth| {
        let x = s.osc(|_| 120.0, &square(25));
        let nz = s.noise_band(4000.0, 8000.0);
        let nz = s.shape(nz, |t| (2.0 * PI * 120.0 * t).sin().abs());
        sum(&[(&normalised(x), 1.0), (&normalised(nz), 0.5)])
    });
    atom!(v, "buzzes", "neon_flicker", "a flickering neon-light buzz", 2.5, |s: &mut Synth| {
        let whine = s.osc(|_| 7800.0, &sine());
        let hum = s.osc(|_| 120.0, &[(1.0, 1.0), (3.0, 0.5), (5.0, 0.3)]);
        let flick: Vec<f64> = (0..40).map(|_| if s.u() < 0.3 { 0.3 } else { 1.0 }).collect();
        let x = sum(&[(&whine, 0.5), (&hum, 1.0)]);
        s.shape(x, move |t| flick[((t / 0.0625) as usize).min(39)])
    });
    atom!(v, "buzzes", "insect_swarm", "a swarm of buzzing insects", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for _ in 0..12 {
            let (f, r, p) = (s.range(180.0, 320.0), s.range(0.5, 3.0), s.range(0.0, 6.0));
            let x = s.osc(move |t| f * (1.0 + 0.04 * (2.0 * PI * r * t + p).sin()), &saw(20));
            add(&mut out, &x, 1.0);
        }
        lp(out, 3000.0, s.sr)
    });
    atom!(v, "buzzes", "dental_drill", "a high-pitched dental drill whine", 2.0, |s: &mut Synth| {
        let x = s.osc(vibrato(3100.0, 0.01, 7.0), &[(1.0, 1.0), (2.0, 0.3)]);
        let hiss = s.noise_band(5000.0, 8000.0);
        with_bed(x, &hiss, -12.0)
    });

    // ---- telephone tones
    atom!(v, "phone", "dial_tone", "a telephone dial tone", 2.0, |s: &mut Synth| {
        let a = s.osc(|_| 350.0, &sine());
        let b = s.osc(|_| 440.0, &sine());
        sum(&[(&a, 1.0), (&b, 1.0)])
    });
    atom!(v, "phone", "busy_signal", "a telephone busy signal", 2.0, |s: &mut Synth| {
        let a = s.osc(|_| 480.0, &sine());
        let b = s.osc(|_| 620.0, &sine());
        let x = gated(s, sum(&[(&a, 1.0), (&b, 1.0)]), 0.5, 0.5, 0.005, 0.0);
        let hiss = s.noise_band(300.0, 3400.0);
        with_bed(x, &hiss, -16.0)
    });
    atom!(v, "phone", "ringback_tone", "a telephone ringback tone", 2.5, |s: &mut Synth| {
        let a = s.osc(|_| 440.0, &sine());
        let b = s.osc(|_| 480.0, &sine());
        let x = gated(s, sum(&[(&a, 1.0), (&b, 1.0)]), 2.5, 0.8, 0.01, 0.0);
        let hiss = s.noise_band(300.0, 3400.0);
        with_bed(x, &hiss, -16.0)
    });
    atom!(v, "phone", "old_phone_ring", "an old telephone bell ringing", 2.8, |s: &mut Synth| {
        let t: Vec<f64> = s.times_regular(1.0 / 20.0).into_iter().filter(|t| t.rem_euclid(1.4) < 1.0).collect();
        let a = struck(s, &t, &modes_at(&CHURCH_BELL, 1250.0, 0.3), 0.2);
        let t2: Vec<f64> = t.iter().map(|t| t + 0.025).collect();
        let b = struck(s, &t2, &modes_at(&CHURCH_BELL, 1000.0, 0.3), 0.2);
        sum(&[(&a, 1.0), (&b, 1.0)])
    });
    atom!(v, "phone", "dtmf_dialing", "touch-tone keypad dialing", 1.56, |s: &mut Synth| {
        let rows = [697.0, 770.0, 852.0, 941.0];
        let cols = [1209.0, 1336.0, 1477.0];
        let digits: Vec<(f64, f64)> = (0..12).map(|_| (rows[(s.u() * 4.0) as usize % 4], cols[(s.u() * 3.0) as usize % 3])).collect();
        let d2 = digits.clone();
        let a = s.osc(move |t| digits[((t / 0.13) as usize).min(11)].0, &sine());
        let b = s.osc(move |t| d2[((t / 0.13) as usize).min(11)].1, &sine());
        gated(s, sum(&[(&a, 1.0), (&b, 1.0)]), 0.13, 0.7, 0.004, 0.03)
    });
    atom!(v, "phone", "modem_screech", "a dial-up modem screech", 3.0, |s: &mut Synth| {
        let syms: Vec<f64> = (0..1000).map(|_| if s.u() < 0.5 { 1200.0 } else { 2200.0 }).collect();
        let fsk = s.osc(move |t| if t < 0.6 { 2100.0 } else if t < 1.2 { 900.0 + 1500.0 * ((t - 0.6) / 0.6) } else { syms[((t * 300.0) as usize) % 1000] }, &sine());
        let nz = s.noise_band(500.0, 4000.0);
        let nz = s.shape(nz, |t| if t < 1.2 { 0.05 } else { 0.5 });
        sum(&[(&fsk, 1.0), (&nz, 0.6)])
    });
    atom!(v, "phone", "fax_tone", "fax machine calling beeps", 1.8, |s: &mut Synth| {
        let x = gated(s, s.osc(|_| 1100.0, &sine()), 0.6, 0.5, 0.005, 0.0);
        let hiss = s.noise_band(300.0, 3400.0);
        with_bed(x, &hiss, -30.0)
    });
    atom!(v, "phone", "ringtone_melody", "a melodic electronic ringtone", 1.92, |s: &mut Synth| {
        let notes: Vec<f64> = [76.0, 79.0, 84.0, 79.0, 76.0, 72.0, 74.0, 79.0].iter().map(|m| midi(*m)).collect();
        note_train(s, &notes, 0.12, 0.1, &square(9))
    });
    atom!(v, "phone", "morse_code", "beeping Morse code over radio hiss", 2.4, |s: &mut Synth| {
        // "SOS": dit = 1 unit, dah = 3, gaps 1 (symbol) / 3 (letter); unit 60 ms.
        let pattern = "1010100011101110111000101010000000";
        let bits: Vec<bool> = pattern.chars().map(|c| c == '1').collect();
        let tone = s.osc(|_| 700.0, &sine());
        let n = bits.len();
        let keyed = s.shape(tone, move |t| if bits[((t / 0.06) as usize) % n] { 1.0 } else { 0.0 });
        let keyed = lp(keyed, 2000.0, s.sr);
        let hiss = s.noise_band(300.0, 3000.0);
        with_bed(keyed, &hiss, -14.0)
    });
    atom!(v, "phone", "phone_vibrate", "a phone vibrating on a table", 2.25, |s: &mut Synth| {
        let x = clip(normalised(s.osc(|t| 150.0 + 5.0 * (2.0 * PI * 3.0 * t).sin(), &square(30))), 1.5);
        let x = lp(x, 2500.0, s.sr);
        let x = gated(s, x, 0.75, 0.65, 0.02, 0.0);
        let hum = s.noise_band(100.0, 600.0);
        with_bed(x, &hum, -20.0)
    });

    // ---- chords and music
    atom!(v, "music", "organ_major_chord", "a sustained major organ chord", 3.0, |s: &mut Synth| {
        let drawbars = harmonics(&[1.0, 0.6, 0.3, 0.4, 0.0, 0.2, 0.0, 0.25]);
        let mut out = s.zeros();
        for m in [60.0, 64.0, 67.0, 72.0] {
            add(&mut out, &s.osc(move |_| midi(m), &drawbars), 1.0);
        }
        out
    });
    atom!(v, "music", "strings_minor_chord", "a sustained minor string-like chord", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for m in [57.0, 60.0, 64.0] {
            for d in [-0.003, 0.0, 0.003] {
                add(&mut out, &s.osc(vibrato(midi(m) * (1.0 + d), 0.004, 5.0), &saw(30)), 1.0);
            }
        }
        lp(out, 2500.0, s.sr)
    });
    for &(label, phrase, up) in &[
        ("pluck_arpeggio_up", "a rising plucked arpeggio", true),
        ("pluck_arpeggio_down", "a falling plucked arpeggio", false),
    ] {
        atom!(v, "music", label, phrase, 1.92, move |s: &mut Synth| {
            let mut notes = [60.0, 64.0, 67.0, 72.0, 76.0, 79.0, 84.0, 88.0];
            if !up {
                notes.reverse();
            }
            let mut out = s.zeros();
            for (k, t) in s.times_regular(0.12).into_iter().enumerate() {
                s.pluck(&mut out, t, midi(notes[k % 8]), 0.4, 1.0, 0.7);
            }
            out
        });
    }
    atom!(v, "music", "music_box", "a tinkling music-box melody", 2.16, |s: &mut Synth| {
        let notes = [84.0, 88.0, 91.0, 96.0, 91.0, 88.0, 86.0, 91.0, 89.0, 86.0, 83.0, 79.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.18).into_iter().enumerate() {
            let f = midi(notes[k % notes.len()]);
            s.strike(&mut out, t, &[(f, 0.6, 1.0), (f * 4.1, 0.1, 0.15)], 1.0);
        }
        out
    });
    atom!(v, "music", "bass_pluck_line", "a plucked bass line", 2.4, |s: &mut Synth| {
        let notes = [33.0, 40.0, 36.0, 43.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.3).into_iter().enumerate() {
            s.pluck(&mut out, t, midi(notes[k % 4]), 0.8, 1.0, 0.2);
        }
        lp(out, 1200.0, s.sr)
    });
    atom!(v, "music", "harp_glissando", "a harp glissando sweeping upward", 2.2, |s: &mut Synth| {
        let scale = [0.0, 2.0, 4.0, 5.0, 7.0, 9.0, 11.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.05).into_iter().enumerate() {
            let i = k % 22;
            let m = 48.0 + 12.0 * (i / 7) as f64 + scale[i % 7];
            s.pluck(&mut out, t, midi(m), 0.8, 0.8, 0.5);
        }
        out
    });
    atom!(v, "music", "choir_aah", "a choir singing 'aah'", 3.0, |s: &mut Synth| {
        let mut src = s.zeros();
        for (k, m) in [57.0, 61.0, 64.0, 69.0].iter().enumerate() {
            add(&mut src, &s.osc(vibrato(midi(*m), 0.006, 5.0 + 0.3 * k as f64), &saw(40)), 1.0);
        }
        formants(s, &src, &[(700.0, 5.0, 1.0), (1200.0, 6.0, 0.5), (2600.0, 8.0, 0.25)])
    });
    atom!(v, "music", "synth_pad_swell", "a warm swelling synth pad", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for m in [53.0, 57.0, 60.0, 64.0] {
            for d in [-0.004, 0.004] {
                add(&mut out, &s.osc(move |_| midi(m) * (1.0 + d), &saw(40)), 1.0);
            }
        }
        filter_sweep(&mut out, Kind::Low, s.sr, 1.5, |t| 300.0 + 2200.0 * (PI * t / 3.0).sin().powi(2));
        out
    });
    atom!(v, "music", "guitar_strum", "a strummed guitar chord", 2.4, |s: &mut Synth| {
        let strings = [40.0, 47.0, 52.0, 56.0, 59.0, 64.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.6).into_iter().enumerate() {
            for j in 0..6 {
                let idx = if k % 2 == 0 { j } else { 5 - j };
                s.pluck(&mut out, t + 0.015 * j as f64, midi(strings[idx]), 1.0, 0.5, 0.6);
            }
        }
        out
    });
    atom!(v, "music", "steel_drum", "a steel-drum melody", 2.64, |s: &mut Synth| {
        let notes = [67.0, 71.0, 74.0, 72.0, 69.0, 71.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.22).into_iter().enumerate() {
            let f = midi(notes[k % 6]);
            s.strike(&mut out, t, &[(f, 0.4, 1.0), (2.0 * f, 0.3, 0.5), (3.0 * f, 0.2, 0.2)], 1.0);
        }
        out
    });
    atom!(v, "music", "xylophone_run", "a quick xylophone run", 1.6, |s: &mut Synth| {
        let notes = [72.0, 74.0, 76.0, 79.0, 81.0, 84.0, 86.0, 88.0, 86.0, 84.0, 81.0, 79.0, 76.0, 74.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.08).into_iter().enumerate() {
            s.strike(&mut out, t, &modes_at(&XYLO_BAR, midi(notes[k % notes.len()]), 0.12), 1.0);
        }
        out
    });
    atom!(v, "music", "piano_chords", "repeated piano chords", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.5) {
            for m in [48.0, 55.0, 60.0, 63.0, 67.0] {
                let f = midi(m);
                let modes: Vec<(f64, f64, f64)> = (1..10).map(|k| {
                    let k = k as f64;
                    (f * k * (1.0 + 0.0004 * k * k).sqrt(), 0.8 / k.sqrt(), 1.0 / k)
                }).collect();
                s.strike(&mut out, t, &modes, 1.0);
            }
        }
        out
    });

    // ---- bubbling and water
    atom!(v, "bubbling", "bubbles_popping", "small bubbles popping", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(25.0) {
            let (f, g) = (s.range(700.0, 1800.0), s.range(0.4, 1.0));
            bubble(s, &mut out, t, f, 0.015, g);
        }
        let bed = s.noise_band(500.0, 2000.0);
        with_bed(out, &bed, -22.0)
    });
    atom!(v, "bubbling", "boiling_pot", "a pot of boiling water", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(120.0) {
            let (f, g) = (s.range(200.0, 900.0), s.range(0.3, 1.0));
            bubble(s, &mut out, t, f, 0.01, g);
        }
        let rumble = lp(s.brown(), 300.0, s.sr);
        with_bed(out, &rumble, -8.0)
    });
    atom!(v, "bubbling", "pouring_water", "water pouring into a glass", 2.5, |s: &mut Synth| {
        let mut x = s.noise_band(200.0, 6000.0);
        filter_sweep(&mut x, Kind::Band, s.sr, 5.0, |t| 300.0 * (1600.0f64 / 300.0).powf(t / 2.5));
        let mut gl = s.zeros();
        for t in s.times_poisson(30.0) {
            let f = 300.0 * (1600.0f64 / 300.0).powf(t / 2.5);
            bubble(s, &mut gl, t, f, 0.02, 0.5);
        }
        sum(&[(&normalised(x), 1.0), (&normalised(gl), 0.5)])
    });
    atom!(v, "bubbling", "dripping_tap", "a dripping tap", 2.1, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.35) {
            bubble(s, &mut out, t, 900.0, 0.04, 1.0);
            bubble(s, &mut out, t + 0.12, 1300.0, 0.03, 0.25);
        }
        let room = s.noise_band(400.0, 2000.0);
        with_bed(out, &room, -24.0)
    });
    atom!(v, "bubbling", "gurgling_drain", "a gurgling drain", 2.5, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(40.0) {
            let (f, g) = (s.range(120.0, 400.0), s.range(0.4, 1.0));
            bubble(s, &mut out, t, f, 0.03, g);
        }
        let slosh = lp(s.brown(), 500.0, s.sr);
        let slosh = s.shape(slosh, |t| 0.5 + 0.5 * (2.0 * PI * 3.0 * t).sin().abs());
        with_bed(out, &slosh, -6.0)
    });
    atom!(v, "bubbling", "underwater_rumble", "a muffled underwater rumble", 3.0, |s: &mut Synth| {
        let x = lp(lp(s.brown(), 250.0, s.sr), 250.0, s.sr);
        let x = s.shape(normalised(x), |t| 0.7 + 0.3 * (2.0 * PI * 0.4 * t).sin());
        let mut b = s.zeros();
        for t in s.times_poisson(3.0) {
            bubble(s, &mut b, t, 150.0, 0.05, 1.0);
        }
        sum(&[(&x, 1.0), (&b, 0.5)])
    });
    atom!(v, "bubbling", "straw_bubbling", "blowing bubbles through a straw", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_jittered(1.0 / 14.0, 0.15) {
            let f = s.range(250.0, 350.0);
            bubble(s, &mut out, t, f, 0.03, 1.0);
        }
        let air = s.noise_band(100.0, 800.0);
        with_bed(out, &air, -12.0)
    });

    // ---- crackle
    atom!(v, "crackle", "fire_crackle", "a crackling fire", 3.0, |s: &mut Synth| {
        let roar = sum(&[(&normalised(lp(s.brown(), 500.0, s.sr)), 1.0), (&normalised(s.noise_band(200.0, 1500.0)), 0.4)]);
        let t = s.times_poisson(15.0);
        let g: Vec<f64> = t.iter().map(|_| s.range(0.3, 1.0)).collect();
        let pops = hp(s.bursts(&t, 0.002, Some(&g)), 800.0, s.sr);
        with_bed(pops, &roar, -6.0)
    });
    atom!(v, "crackle", "vinyl_crackle", "vinyl record crackle", 3.6, |s: &mut Synth| {
        let t = s.times_poisson(30.0);
        let g: Vec<f64> = t.iter().map(|_| s.range(0.1, 1.0).powi(2)).collect();
        let clicks = s.bursts(&t, 0.0006, Some(&g));
        let mut hiss = s.noise_band(1000.0, 8000.0);
        let mut thump = s.zeros();
        for t in s.times_regular(1.8) {
            drum_hit(s, &mut thump, t, 40.0, 60.0, 0.08, 1.0);
        }
        add(&mut hiss, &normalised(thump), 0.5);
        with_bed(clicks, &hiss, -10.0)
    });
    atom!(v, "crackle", "frying_sizzle", "sizzling in a frying pan", 2.5, |s: &mut Synth| {
        let t = s.times_poisson(900.0);
        let g: Vec<f64> = t.iter().map(|_| s.range(0.0, 1.0).powi(3)).collect();
        let sizzle = hp(s.bursts(&t, 0.0015, Some(&g)), 2500.0, s.sr);
        let hiss = s.noise_band(3000.0, 8000.0);
        with_bed(sizzle, &hiss, -6.0)
    });
    atom!(v, "crackle", "radio_static", "crackling radio static", 2.5, |s: &mut Synth| {
        let x = bp(s.white(), 1800.0, 0.6, s.sr);
        let levels: Vec<f64> = (0..200).map(|_| s.range(0.2, 1.0)).collect();
        s.shape(x, move |t| levels[((t / 0.02) as usize).min(199)])
    });
    atom!(v, "crackle", "popcorn_popping", "popcorn popping", 2.5, |s: &mut Synth| {
        let t = s.times_poisson(10.0);
        let pops = lp(hp(s.bursts(&t, 0.004, None), 400.0, s.sr), 3000.0, s.sr);
        let res = struck(s, &t, &[(700.0, 0.02, 1.0)], 0.5);
        let x = sum(&[(&pops, 1.0), (&res, 0.5)]);
        let sizzle = s.noise_band(2000.0, 6000.0);
        with_bed(x, &sizzle, -18.0)
    });
    atom!(v, "crackle", "crumpling_paper", "crumpling paper", 2.0, |s: &mut Synth| {
        let t = s.times_poisson(200.0);
        let g: Vec<f64> = t.iter().map(|t| (0.3 + 0.7 * (2.0 * PI * 1.7 * t).sin().abs()) * s.range(0.2, 1.0)).collect();
        let x = bp(s.bursts(&t, 0.003, Some(&g)), 3000.0, 0.8, s.sr);
        let bed = s.noise_band(1500.0, 5000.0);
        with_bed(x, &bed, -18.0)
    });
    atom!(v, "crackle", "electric_arc", "a buzzing electric arc", 2.0, |s: &mut Synth| {
        let buzz = clip(normalised(s.osc(|_| 50.0, &square(80))), 2.0);
        let sizzle = s.noise_band(2000.0, 8000.0);
        let flick: Vec<f64> = (0..200).map(|_| s.range(0.3, 1.0)).collect();
        let sizzle = s.shape(sizzle, move |t| flick[((t / 0.01) as usize).min(199)]);
        sum(&[(&buzz, 1.0), (&normalised(sizzle), 0.8)])
    });
    atom!(v, "crackle", "ice_cracking", "cracking ice", 2.5, |s: &mut Synth| {
        let t = s.times_poisson(5.0);
        let mut creak = s.zeros();
        for at in &t {
            let f = s.range(100.0, 300.0);
            s.strike(&mut creak, *at, &[(f, 0.1, 1.0), (f * 2.3, 0.05, 0.5)], 1.0);
        }
        let cracks = hp(s.bursts(&t, 0.004, None), 1500.0, s.sr);
        let x = sum(&[(&creak, 1.0), (&cracks, 0.7)]);
        let bed = lp(s.brown(), 400.0, s.sr);
        with_bed(x, &bed, -16.0)
    });

    // ---- mechanical friction and impacts
    atom!(v, "mechanical", "creaking_door", "a creaking door", 2.5, |s: &mut Synth| {
        let mut pulses = s.zeros();
        let mut ph = 0.0;
        for (i, p) in pulses.iter_mut().enumerate() {
            let t = i as f64 / s.sr;
            let rate = 40.0 + 80.0 * (PI * t / 2.5).sin() + 10.0 * (2.0 * PI * 3.0 * t).sin();
            ph += rate / s.sr;
            if ph >= 1.0 {
                ph -= 1.0;
                *p = 1.0;
            }
        }
        formants(s, &pulses, &[(600.0, 5.0, 1.0), (1400.0, 6.0, 0.8), (2900.0, 8.0, 0.4)])
    });
    atom!(v, "mechanical", "hand_saw", "a hand saw cutting wood", 2.0, |s: &mut Synth| {
        let x = bp(s.white(), 2500.0, 1.5, s.sr);
        s.shape(x, |t| 0.15 + 0.85 * (PI * t / 0.5).sin().abs() * (0.6 + 0.4 * (2.0 * PI * 200.0 * t).sin().abs()))
    });
    atom!(v, "mechanical", "zipper", "a zipper being pulled", 1.8, |s: &mut Synth| {
        let mut t = Vec::new();
        let mut at = 0.0;
        while at < s.dur() {
            t.push(at);
            // Each 0.45 s pull speeds up: the tooth rate rises from 40 to 140 per second.
            at += 1.0 / (40.0 + 100.0 * at.rem_euclid(0.45) / 0.45);
        }
        let teeth = bp(s.bursts(&t, 0.003, None), 1100.0, 2.0, s.sr);
        s.shape(teeth, |t| if t.rem_euclid(0.45) < 0.38 { 1.0 } else { 0.1 })
    });
    atom!(v, "mechanical", "sandpaper", "sandpaper scraping back and forth", 2.0, |s: &mut Synth| {
        let x = s.noise_band(1500.0, 8000.0);
        s.shape(x, |t| 0.15 + 0.85 * (2.0 * PI * 1.5 * t).sin().abs().sqrt())
    });
    atom!(v, "mechanical", "metal_clanks", "clanking metal", 2.5, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_jittered(0.16, 0.4) {
            let modes: Vec<(f64, f64, f64)> = (0..8).map(|_| (s.range(300.0, 4000.0), s.range(0.1, 0.3), s.range(0.2, 1.0))).collect();
            s.strike(&mut out, t, &modes, 1.0);
        }
        out
    });
    atom!(v, "mechanical", "spinning_coin", "a coin spinning and wobbling to rest", 2.0, |s: &mut Synth| {
        let ring = s.osc(|_| 5200.0, &[(1.0, 1.0), (1.48, 0.4)]);
        let mut ph = 0.0;
        let mut out = ring;
        for (i, v) in out.iter_mut().enumerate() {
            // Wobble rate accelerates from 8 to 40 Hz as the coin settles.
            let t = i as f64 / s.sr;
            ph += 2.0 * PI * (8.0 + 32.0 * (t / 2.0).powi(2)) / s.sr;
            *v *= 0.2 + 0.8 * ph.sin().abs();
        }
        let rattle = lp(s.noise_band(300.0, 2000.0), 2000.0, s.sr);
        with_bed(out, &rattle, -18.0)
    });
    atom!(v, "mechanical", "glass_clinks", "clinking glasses", 2.1, |s: &mut Synth| {
        let t = s.times_regular(0.3);
        struck(s, &t, &[(2800.0, 0.25, 1.0), (3900.0, 0.2, 0.5), (5600.0, 0.12, 0.3)], 0.3)
    });
    atom!(v, "mechanical", "coins_jingle", "jingling coins", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(50.0) {
            let (f, g) = (s.range(4000.0, 8000.0), s.range(0.2, 1.0));
            s.strike(&mut out, t, &[(f, 0.03, 1.0), (f * 1.37, 0.02, 0.5)], g);
        }
        let bed = s.noise_band(3000.0, 7000.0);
        with_bed(out, &bed, -22.0)
    });
    atom!(v, "mechanical", "chain_rattle", "a rattling chain", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(70.0) {
            let (f, g) = (s.range(1500.0, 3500.0), (0.3 + 0.7 * (2.0 * PI * 3.0 * t).sin().abs()) * s.range(0.5, 1.0));
            s.strike(&mut out, t, &[(f, 0.015, 1.0), (f * 0.3, 0.02, 0.4)], g);
        }
        out
    });
    atom!(v, "mechanical", "heartbeat", "a thumping heartbeat", 2.55, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.85) {
            drum_hit(s, &mut out, t, 55.0, 70.0, 0.06, 1.0);
            drum_hit(s, &mut out, t + 0.18, 60.0, 80.0, 0.05, 0.7);
        }
        let body = lp(s.brown(), 120.0, s.sr);
        with_bed(out, &body, -14.0)
    });
    atom!(v, "mechanical", "cash_register", "a cash register ringing open", 2.4, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(1.2) {
            drum_hit(s, &mut out, t, 100.0, 140.0, 0.05, 0.8);
            s.strike(&mut out, t + 0.1, &[(2200.0, 0.5, 1.0), (3300.0, 0.3, 0.4)], 1.0);
        }
        let t = s.times_poisson(25.0);
        let coins = hp(s.bursts(&t, 0.01, None), 4000.0, s.sr);
        with_bed(out, &coins, -14.0)
    });
    atom!(v, "mechanical", "squeaky_wheel", "a squeaking wheel turning", 2.0, |s: &mut Synth| {
        let x = s.osc(|t| 1700.0 + 400.0 * (t.rem_euclid(0.66) / 0.4).min(1.0), &saw(6));
        let x = bp(x, 2000.0, 2.0, s.sr);
        gated(s, x, 0.66, 0.6, 0.04, 0.04)
    });
    atom!(v, "mechanical", "squeaky_toy", "a squeaky rubber toy", 1.5, |s: &mut Synth| {
        let x = s.osc(|t| 1800.0 + 800.0 * (t.rem_euclid(0.25) / 0.15).min(1.0), &[(1.0, 1.0), (2.0, 0.5), (3.0, 0.3)]);
        gated(s, x, 0.25, 0.6, 0.02, 0.04)
    });

    // ---- electronic and sci-fi
    atom!(v, "electronic", "ufo_warble", "a wobbling sci-fi warble", 2.5, |s: &mut Synth| {
        s.osc(|t| 600.0 + 250.0 * (2.0 * PI * 7.0 * t).sin() + 100.0 * (2.0 * PI * 0.5 * t).sin(), &[(1.0, 1.0), (2.0, 0.2)])
    });
    atom!(v, "electronic", "robot_bleeps", "random robotic bleeps and bloops", 2.1, |s: &mut Synth| {
        let notes: Vec<f64> = (0..30).map(|_| 300.0 * (2000.0f64 / 300.0).powf(s.u())).collect();
        let x = s.osc(move |t| notes[((t / 0.07) as usize).min(29)], &square(7));
        gated(s, x, 0.07, 0.8, 0.003, 0.05)
    });
    atom!(v, "electronic", "theremin", "an eerie theremin melody", 2.4, |s: &mut Synth| {
        let notes: Vec<f64> = [69.0, 72.0, 76.0, 74.0, 72.0, 67.0].iter().map(|m| midi(*m)).collect();
        let m = melody(notes, 0.4, 0.25);
        s.osc(move |t| m(t) * (1.0 + 0.012 * (2.0 * PI * 6.0 * t).sin()), &[(1.0, 1.0), (2.0, 0.05)])
    });
    atom!(v, "electronic", "power_up", "a rising power-up whine", 1.8, |s: &mut Synth| {
        let x = lp(s.osc(Synth::expo(150.0, 2500.0, 1.8), &saw(5)), 4000.0, s.sr);
        s.shape(x, |t| 0.7 + 0.3 * (2.0 * PI * 30.0 * t).sin())
    });
    atom!(v, "electronic", "power_down", "a falling power-down whine", 1.8, |s: &mut Synth| {
        let x = lp(s.osc(Synth::expo(2500.0, 150.0, 1.8), &saw(5)), 4000.0, s.sr);
        s.shape(x, |t| 0.7 + 0.3 * (2.0 * PI * 30.0 * t).sin())
    });
    atom!(v, "electronic", "sci_fi_hum", "a pulsing sci-fi engine hum", 3.0, |s: &mut Synth| {
        let mut x = s.osc(|_| 55.0, &saw(60));
        filter_sweep(&mut x, Kind::Low, s.sr, 4.0, |t| 200.0 + 600.0 * (0.5 + 0.5 * (2.0 * PI * 3.0 * t).sin()));
        x
    });
    atom!(v, "electronic", "glitch_stutter", "a glitchy digital stutter", 1.8, |s: &mut Synth| {
        let grains: Vec<(f64, bool)> = (0..60).map(|_| (200.0 * 20f64.powf(s.u()), s.u() < 0.4)).collect();
        let g2 = grains.clone();
        let tone = s.osc(move |t| grains[((t / 0.03) as usize).min(59)].0, &square(9));
        let nz = s.white();
        let x: Vec<f64> = tone
            .iter()
            .zip(&nz)
            .enumerate()
            .map(|(i, (a, b))| if g2[((i as f64 / s.sr / 0.03) as usize).min(59)].1 { *b } else { *a })
            .collect();
        // Bit-crush to 4 bits for the digital grit.
        x.into_iter().map(|v| (v * 4.0).round() / 4.0).collect()
    });
    atom!(v, "electronic", "record_scratch", "a DJ record scratch", 2.0, |s: &mut Synth| {
        let src_f = |t: f64| 500.0 * (1.0 + 0.8 * (2.0 * PI * 2.5 * t).sin());
        let tone = s.osc(src_f, &saw(20));
        let mut nz = s.white();
        filter_sweep(&mut nz, Kind::Band, s.sr, 2.0, move |t| 4.0 * src_f(t));
        let x = sum(&[(&normalised(tone), 1.0), (&normalised(nz), 0.6)]);
        s.shape(lp(x, 6000.0, s.sr), |t| 0.2 + 0.8 * (2.0 * PI * 2.5 * t).cos().abs())
    });

    // ---- plain tones
    atom!(v, "tones", "tone_low", "a low pure tone", 2.0, |s: &mut Synth| s.osc(|_| 150.0, &sine()));
    atom!(v, "tones", "tone_mid", "a steady mid-pitched pure tone", 2.0, |s: &mut Synth| s.osc(|_| 1000.0, &sine()));
    atom!(v, "tones", "tone_high", "a very high pure tone", 2.0, |s: &mut Synth| s.osc(|_| 6000.0, &sine()));
    atom!(v, "tones", "square_tone_low", "a low buzzy square-wave tone", 2.0, |s: &mut Synth| s.osc(|_| 110.0, &square(40)));
    atom!(v, "tones", "tremolo_tone", "a pulsing tremolo tone", 2.0, |s: &mut Synth| {
        let x = s.osc(|_| 600.0, &sine());
        s.shape(x, |t| 0.55 + 0.45 * (2.0 * PI * 8.0 * t).sin())
    });
    atom!(v, "tones", "vibrato_tone", "a mellow tone with slow wide vibrato", 2.0, |s: &mut Synth| s.osc(vibrato(440.0, 0.09, 4.0), &triangle(9)));
    atom!(v, "tones", "beating_tones", "two close tones beating slowly", 2.5, |s: &mut Synth| {
        let a = s.osc(|_| 500.0, &sine());
        let b = s.osc(|_| 503.0, &sine());
        sum(&[(&a, 1.0), (&b, 0.7)])
    });

    // ---- voice-like drones
    atom!(v, "vocal", "hum_mmm", "a humming 'mmm' voice-like drone", 2.5, |s: &mut Synth| {
        let src = s.osc(vibrato(140.0, 0.01, 5.0), &saw(40));
        lp(formants(s, &src, &[(250.0, 3.0, 1.0), (2200.0, 6.0, 0.05)]), 1500.0, s.sr)
    });
    atom!(v, "vocal", "vowel_ooh", "a low 'ooh' vowel drone", 2.5, |s: &mut Synth| {
        let src = s.osc(vibrato(110.0, 0.01, 5.0), &saw(60));
        formants(s, &src, &[(300.0, 5.0, 1.0), (870.0, 6.0, 0.4), (2240.0, 8.0, 0.1)])
    });
    atom!(v, "vocal", "vowel_eee", "a high 'eee' vowel drone", 2.5, |s: &mut Synth| {
        let src = s.osc(vibrato(260.0, 0.01, 5.5), &saw(30));
        formants(s, &src, &[(270.0, 4.0, 1.0), (2290.0, 8.0, 0.6), (3010.0, 10.0, 0.4)])
    });
    atom!(v, "vocal", "throat_drone", "a raspy throat-singing drone", 3.0, |s: &mut Synth| {
        let src = s.osc(|_| 90.0, &saw(80));
        let mut whistle = src.clone();
        filter_sweep(&mut whistle, Kind::Band, s.sr, 20.0, |t| 1200.0 + 600.0 * (0.5 - 0.5 * (2.0 * PI * t / 3.0).cos()));
        let body = formants(s, &src, &[(500.0, 3.0, 1.0), (1500.0, 5.0, 0.3)]);
        sum(&[(&normalised(body), 1.0), (&normalised(whistle), 0.8)])
    });
    atom!(v, "vocal", "babbling_syllables", "babbling voice-like syllables", 2.4, |s: &mut Synth| {
        let vowels = [(730.0, 1090.0), (270.0, 2290.0), (300.0, 870.0), (530.0, 1840.0), (570.0, 840.0)];
        let seq: Vec<(f64, f64)> = (0..16).map(|_| vowels[(s.u() * 5.0) as usize % 5]).collect();
        let src = s.osc(|t| 180.0 * (1.0 + 0.08 * (2.0 * PI * 1.5 * t).sin()), &saw(40));
        let mut a = src.clone();
        let mut b = src;
        let s1 = seq.clone();
        filter_sweep(&mut a, Kind::Band, s.sr, 5.0, move |t| s1[((t / 0.15) as usize).min(15)].0);
        filter_sweep(&mut b, Kind::Band, s.sr, 8.0, move |t| seq[((t / 0.15) as usize).min(15)].1);
        let x = sum(&[(&a, 1.0), (&b, 0.5)]);
        s.shape(x, |t| 0.3 + 0.7 * (PI * t / 0.15).sin().abs())
    });

    v
}

#[cfg(test)]
mod tests {
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
