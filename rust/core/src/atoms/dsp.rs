//! DSP kit of the recipes and the finishing every atom gets: biquads, harmonic sets,
//! gates, RMS normalisation and the smooth peak limiter.
use std::f64::consts::PI;

use super::{EDGE_FADE_S, PEAK_LIMIT, TARGET_RMS_DBFS};

// ---------------------------------------------------------------- finishing

pub(super) fn finish(mut x: Vec<f64>, sr: f64) -> Vec<f32> {
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

pub(super) fn rms(x: &[f64]) -> f64 {
    (x.iter().map(|v| v * v).sum::<f64>() / x.len().max(1) as f64).sqrt()
}

pub(super) fn normalise_and_limit(mut x: Vec<f64>) -> Vec<f32> {
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
pub(super) fn limiter_gain(x: &[f64], ceiling: f64, w: usize) -> Vec<f64> {
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
pub(super) struct Biquad {
    b0: f64,
    b1: f64,
    b2: f64,
    a1: f64,
    a2: f64,
}

impl Biquad {
    pub(super) fn coeffs(kind: Kind, f: f64, q: f64, sr: f64) -> Self {
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
    pub(super) fn lowpass(f: f64, q: f64, sr: f64) -> Self {
        Self::coeffs(Kind::Low, f, q, sr)
    }
    pub(super) fn highpass(f: f64, q: f64, sr: f64) -> Self {
        Self::coeffs(Kind::High, f, q, sr)
    }
    pub(super) fn bandpass(f: f64, q: f64, sr: f64) -> Self {
        Self::coeffs(Kind::Band, f, q, sr)
    }
}

#[derive(Clone, Copy)]
pub(super) enum Kind {
    Low,
    High,
    Band,
}

pub(super) fn filter(x: &mut [f64], c: Biquad) {
    let (mut z1, mut z2) = (0.0, 0.0);
    for v in x.iter_mut() {
        let y = c.b0 * *v + z1;
        z1 = c.b1 * *v - c.a1 * y + z2;
        z2 = c.b2 * *v - c.a2 * y;
        *v = y;
    }
}

/// Time-varying filter: coefficients follow `f(t)` (updated every 32 samples).
pub(super) fn filter_sweep(x: &mut [f64], kind: Kind, sr: f64, q: f64, f: impl Fn(f64) -> f64) {
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

pub(super) fn lp(mut x: Vec<f64>, f: f64, sr: f64) -> Vec<f64> {
    filter(&mut x, Biquad::lowpass(f, 0.707, sr));
    x
}
pub(super) fn hp(mut x: Vec<f64>, f: f64, sr: f64) -> Vec<f64> {
    filter(&mut x, Biquad::highpass(f, 0.707, sr));
    x
}
pub(super) fn bp(mut x: Vec<f64>, f: f64, q: f64, sr: f64) -> Vec<f64> {
    filter(&mut x, Biquad::bandpass(f, q, sr));
    x
}

/// Harmonic amplitude sets: (ratio to fundamental, amplitude).
pub(super) fn saw(n: usize) -> Vec<(f64, f64)> {
    (1..=n).map(|k| (k as f64, 1.0 / k as f64)).collect()
}
pub(super) fn square(n: usize) -> Vec<(f64, f64)> {
    (1..=n).step_by(2).map(|k| (k as f64, 1.0 / k as f64)).collect()
}
pub(super) fn triangle(n: usize) -> Vec<(f64, f64)> {
    (1..=n).step_by(2).map(|k| (k as f64, 1.0 / (k * k) as f64)).collect()
}
pub(super) fn sine() -> Vec<(f64, f64)> {
    vec![(1.0, 1.0)]
}
pub(super) fn harmonics(amps: &[f64]) -> Vec<(f64, f64)> {
    amps.iter().enumerate().map(|(k, a)| ((k + 1) as f64, *a)).collect()
}

pub(super) fn add(a: &mut [f64], b: &[f64], gain: f64) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += gain * y);
}
pub(super) fn sum(layers: &[(&[f64], f64)]) -> Vec<f64> {
    let n = layers.iter().map(|l| l.0.len()).max().unwrap_or(0);
    let mut out = vec![0.0; n];
    for (l, g) in layers {
        add(&mut out, l, *g);
    }
    out
}

/// Raised-cosine on/off gate: on for `duty` of each `period`, edges of `edge` s.
pub(super) fn gate_value(t: f64, period: f64, duty: f64, edge: f64, floor: f64) -> f64 {
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
