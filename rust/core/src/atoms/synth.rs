//! The synthesis voice every recipe draws on: a seeded noise source, oscillators,
//! struck modes, plucked strings, hit timings and melodies.
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::f64::consts::PI;

use super::dsp::{hp, lp};

pub(super) struct Synth {
    pub(super) sr: f64,
    pub(super) n: usize,
    pub(super) rng: Pcg64,
}

impl Synth {
    pub(super) fn new(sr: f64, duration_s: f64, seed: u64) -> Self {
        Synth { sr, n: (duration_s * sr).round() as usize, rng: Pcg64::seed_from_u64(seed) }
    }
    pub(super) fn dur(&self) -> f64 {
        self.n as f64 / self.sr
    }
    pub(super) fn t(&self, i: usize) -> f64 {
        i as f64 / self.sr
    }
    pub(super) fn zeros(&self) -> Vec<f64> {
        vec![0.0; self.n]
    }
    pub(super) fn u(&mut self) -> f64 {
        self.rng.gen::<f64>()
    }
    pub(super) fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.u()
    }
    pub(super) fn white(&mut self) -> Vec<f64> {
        (0..self.n).map(|_| self.rng.gen::<f64>() * 2.0 - 1.0).collect()
    }
    /// Band of noise between `lo` and `hi` Hz (second-order edges).
    pub(super) fn noise_band(&mut self, lo: f64, hi: f64) -> Vec<f64> {
        let w = self.white();
        lp(hp(w, lo, self.sr), hi, self.sr)
    }
    /// Integrated (red) noise, a deep rumble.
    pub(super) fn brown(&mut self) -> Vec<f64> {
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
    pub(super) fn osc(&self, f: impl Fn(f64) -> f64, partials: &[(f64, f64)]) -> Vec<f64> {
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
    pub(super) fn strike(&self, out: &mut [f64], at: f64, modes: &[(f64, f64, f64)], gain: f64) {
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
    pub(super) fn bursts(&mut self, times: &[f64], tau: f64, gains: Option<&[f64]>) -> Vec<f64> {
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
    pub(super) fn pluck(&mut self, out: &mut [f64], at: f64, freq: f64, decay_s: f64, gain: f64, bright: f64) {
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
    pub(super) fn times_regular(&self, period: f64) -> Vec<f64> {
        let k = (self.dur() / period).ceil() as usize;
        (0..k).map(|i| i as f64 * period).collect()
    }
    pub(super) fn times_jittered(&mut self, period: f64, jitter: f64) -> Vec<f64> {
        let mut t = 0.0;
        let mut out = Vec::new();
        while t < self.dur() {
            out.push(t);
            t += period * (1.0 + jitter * (2.0 * self.u() - 1.0));
        }
        out
    }
    pub(super) fn times_poisson(&mut self, rate: f64) -> Vec<f64> {
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
    pub(super) fn shape(&self, mut x: Vec<f64>, f: impl Fn(f64) -> f64) -> Vec<f64> {
        for (i, v) in x.iter_mut().enumerate() {
            *v *= f(i as f64 / self.sr);
        }
        x
    }
    /// Exponential sweep from `a` to `b` Hz over `period`, repeating.
    pub(super) fn expo(a: f64, b: f64, period: f64) -> impl Fn(f64) -> f64 + Copy {
        move |t: f64| a * (b / a).powf(t.rem_euclid(period) / period)
    }
}

pub(super) fn midi(m: f64) -> f64 {
    440.0 * 2f64.powf((m - 69.0) / 12.0)
}

/// Piecewise-constant melody: note `i` lasts `step` seconds, glides over `glide` s.
pub(super) fn melody(notes: Vec<f64>, step: f64, glide: f64) -> impl Fn(f64) -> f64 + Clone {
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
