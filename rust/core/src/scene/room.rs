//! Rooms: impulse responses prepared once, their `tail_s` (contract §5) and FFT convolution.
//!
//! Preparation ([`prepare_ir`]) fixes three choices, the same for measured and simulated rooms:
//!
//! * **Direct-path alignment.** The response starts at its first sample within 20 dB of its
//!   largest absolute sample (the direct path; for a measured response, its first strong arrival).
//!   What precedes (propagation delay, the measurement's noise floor, filter pre-ringing) is
//!   dropped, so a room never moves an event's onset: the wet sound starts at the dry onset.
//! * **Length.** The response ends where its Schroeder energy decay curve has fallen 60 dB (what
//!   follows carries a millionth of the energy), which bounds the convolution's cost.
//! * **Level.** It is scaled to unit energy (Σh² = 1), so a stationary sound keeps its level in
//!   any room; transients lose some peak level to the reverberation, as they do in a real room.
//!
//! Multi-channel responses are the caller's choice (the Python side keeps the first channel).
//!
//! `tail_s` is the time, from the (aligned) response's start, at which the Schroeder backward
//! integral `EDC(t) = Σ_{k ≥ t} h[k]²` first falls 20 dB below `EDC(0)`. For an exponential decay
//! with reverberation time RT60 that is RT60 / 3.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use rayon::prelude::*;
use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

/// The threshold (relative to the peak) that marks the direct path, in dB.
pub const DIRECT_PATH_DB: f64 = -20.0;
/// The decay after which a response is cut, in dB.
pub const CUT_DECAY_DB: f64 = -60.0;
/// The decay that defines `tail_s` (contract §5), in dB.
pub const TAIL_DECAY_DB: f64 = -20.0;

/// Why a response was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum RoomError {
    /// The response has no sample.
    #[error("the impulse response is empty")]
    Empty,
    /// The response has a NaN or infinite sample at this index.
    #[error("the impulse response holds a non-finite sample (NaN or infinity) at index {0}")]
    NonFinite(usize),
    /// Every sample of the response is 0.
    #[error("the impulse response is silent (every sample is 0)")]
    Silent,
}

/// Schroeder backward integral, in f64: `edc[k] = Σ_{j ≥ k} h[j]²`.
pub fn schroeder(h: &[f32]) -> Vec<f64> {
    let mut edc = vec![0f64; h.len()];
    let mut acc = 0f64;
    for (k, &v) in h.iter().enumerate().rev() {
        acc += f64::from(v) * f64::from(v);
        edc[k] = acc;
    }
    edc
}

/// First index at which the decay curve is `db` (negative) below its start, or `len` when it never is.
fn decay_index(edc: &[f64], db: f64) -> usize {
    let Some(&e0) = edc.first() else { return 0 };
    let limit = e0 * 10f64.powf(db / 10.0);
    edc.iter().position(|&e| e <= limit).unwrap_or(edc.len())
}

/// `tail_s` of a response: seconds until its Schroeder decay falls 20 dB.
pub fn tail_s(h: &[f32], sample_rate: u32) -> f64 {
    decay_index(&schroeder(h), TAIL_DECAY_DB) as f64 / f64::from(sample_rate)
}

/// Aligns, cuts and normalises a raw mono response (module docs).
pub fn prepare_ir(raw: &[f32]) -> Result<Vec<f32>, RoomError> {
    if raw.is_empty() {
        return Err(RoomError::Empty);
    }
    if let Some(i) = raw.iter().position(|v| !v.is_finite()) {
        return Err(RoomError::NonFinite(i));
    }
    let peak = raw.iter().fold(0f32, |m, v| m.max(v.abs()));
    if peak == 0.0 {
        return Err(RoomError::Silent);
    }
    let threshold = f64::from(peak) * 10f64.powf(DIRECT_PATH_DB / 20.0);
    let start = raw.iter().position(|v| f64::from(v.abs()) >= threshold).unwrap_or(0);
    let h = &raw[start..];
    let edc = schroeder(h);
    // Keep the sample at which the decay crosses, so a one-sample response survives.
    let end = (decay_index(&edc, CUT_DECAY_DB) + 1).min(h.len());
    let h = &h[..end];
    let scale = 1.0 / edc[0].sqrt();
    Ok(h.iter().map(|&v| (f64::from(v) * scale) as f32).collect())
}

/// Smallest `2^a · 3^b >= n` (rustfft is fastest on such sizes; up to 1.5× tighter than a power of two).
pub fn fft_size(n: usize) -> usize {
    let mut best = n.next_power_of_two();
    let mut p3 = 1usize;
    while p3 < best {
        let mut m = p3;
        while m < n {
            m *= 2;
        }
        best = best.min(m);
        p3 *= 3;
    }
    best
}

/// An FFT size's forward and inverse plans (thread-safe, shared).
type Plans = (Arc<dyn RealToComplex<f32>>, Arc<dyn ComplexToReal<f32>>);

/// The spectra of prepared responses at the FFT sizes a corpus needs, and the FFT plans of those
/// sizes, computed once before rendering and shared read-only by every thread: with per-thread
/// caches, events of many lengths (many FFT sizes) kept evicting each other's spectra, and every
/// rayon split planned every size again.
#[derive(Default)]
pub struct SpectrumTable {
    spectra: HashMap<(usize, usize), Vec<Complex<f32>>>,
    plans: HashMap<usize, Plans>,
}

impl std::fmt::Debug for SpectrumTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpectrumTable").field("spectra", &self.spectra.len()).field("sizes", &self.plans.len()).finish()
    }
}

impl SpectrumTable {
    /// Spectra of `responses[room]` at every `(room, fft size)` of `needed` (rayon, in the
    /// current pool).
    pub fn build(responses: &[&[f32]], needed: &BTreeSet<(usize, usize)>) -> Self {
        let mut planner = RealFftPlanner::<f32>::new();
        let plans: HashMap<usize, Plans> =
            needed.iter().map(|&(_, n)| (n, (planner.plan_fft_forward(n), planner.plan_fft_inverse(n)))).collect();
        let spectra = needed
            .par_iter()
            .map_init(
                || (Vec::new(), Vec::new()),
                |(time, scratch), &(room, n)| ((room, n), spectrum(&*plans[&n].0, responses[room], time, scratch)),
            )
            .collect();
        Self { spectra, plans }
    }

    /// The FFT size [`Convolver::convolve`] uses for a signal of `x_len` samples and a response
    /// of `h_len`.
    pub fn size_for(x_len: usize, h_len: usize) -> usize {
        fft_size(x_len + h_len - 1)
    }

    fn get(&self, room: usize, n: usize) -> Option<&[Complex<f32>]> {
        self.spectra.get(&(room, n)).map(Vec::as_slice)
    }
}

/// The real FFT of `h` zero-padded to the plan's size.
fn spectrum(
    fwd: &dyn RealToComplex<f32>,
    h: &[f32],
    time: &mut Vec<f32>,
    scratch: &mut Vec<Complex<f32>>,
) -> Vec<Complex<f32>> {
    let n = fwd.len();
    time.clear();
    time.resize(n, 0.0);
    time[..h.len()].copy_from_slice(h);
    let mut spec = vec![Complex::default(); n / 2 + 1];
    scratch.resize(scratch.len().max(fwd.get_scratch_len()), Complex::default());
    fwd.process_with_scratch(time, &mut spec, &mut scratch[..fwd.get_scratch_len()])
        .expect("buffer sizes match the plan");
    spec
}

/// Per-thread FFT convolution state: plans (cached by size in the planner) and buffers; and,
/// for spectra not in a shared [`SpectrumTable`], the spectrum of the current response at the
/// sizes used recently.
#[derive(Default)]
pub struct Convolver {
    planner: RealFftPlanner<f32>,
    ir_spectra: Vec<(usize, usize, Vec<Complex<f32>>)>,
    time: Vec<f32>,
    freq: Vec<Complex<f32>>,
    scratch: Vec<Complex<f32>>,
}

impl std::fmt::Debug for Convolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Convolver").field("cached_spectra", &self.ir_spectra.len()).finish()
    }
}

impl Convolver {
    /// Forgets the cached response spectra.
    pub fn clear(&mut self) {
        self.ir_spectra.clear();
    }

    /// Most response spectra kept per thread outside a [`SpectrumTable`] (by room and FFT size,
    /// oldest dropped first).
    pub const CACHE: usize = 48;

    /// Writes `x * h` (full linear convolution, cut to `out.len()` samples) into `out`;
    /// `room` identifies `h` for the spectrum cache.
    pub fn convolve(&mut self, x: &[f32], h: &[f32], room: usize, out: &mut [f32]) {
        self.convolve_with(x, h, room, None, out);
    }

    /// [`Self::convolve`], taking `h`'s spectrum from `table` where it holds `(room, size)`.
    pub fn convolve_with(&mut self, x: &[f32], h: &[f32], room: usize, table: Option<&SpectrumTable>, out: &mut [f32]) {
        let want = out.len();
        if x.is_empty() || h.is_empty() || want == 0 {
            out.fill(0.0);
            return;
        }
        let full = x.len() + h.len() - 1;
        // Circular convolution of size n equals the linear one on [0, n) when n >= full.
        let n = SpectrumTable::size_for(x.len(), h.len());
        let (fwd, inv) = match table.and_then(|t| t.plans.get(&n)) {
            Some((f, i)) => (Arc::clone(f), Arc::clone(i)),
            None => (self.planner.plan_fft_forward(n), self.planner.plan_fft_inverse(n)),
        };
        let bins = n / 2 + 1;
        let scratch_len = fwd.get_scratch_len().max(inv.get_scratch_len());
        if self.scratch.len() < scratch_len {
            self.scratch.resize(scratch_len, Complex::default());
        }
        let shared = table.and_then(|t| t.get(room, n));
        let local = match shared {
            Some(_) => None,
            None => Some(match self.ir_spectra.iter().position(|(r, size, _)| *r == room && *size == n) {
                Some(i) => i,
                None => {
                    let spec = spectrum(&*fwd, h, &mut self.time, &mut self.scratch);
                    if self.ir_spectra.len() >= Self::CACHE {
                        self.ir_spectra.remove(0);
                    }
                    self.ir_spectra.push((room, n, spec));
                    self.ir_spectra.len() - 1
                }
            }),
        };
        self.time.clear();
        self.time.resize(n, 0.0);
        self.time[..x.len()].copy_from_slice(x);
        self.freq.clear();
        self.freq.resize(bins, Complex::default());
        fwd.process_with_scratch(&mut self.time, &mut self.freq, &mut self.scratch[..scratch_len])
            .expect("buffer sizes match the plan");
        let hs = match (shared, local) {
            (Some(s), _) => s,
            (None, Some(i)) => &self.ir_spectra[i].2,
            (None, None) => unreachable!("one of the two is set"),
        };
        let scale = 1.0 / n as f32;
        for (y, h) in self.freq.iter_mut().zip(hs) {
            *y = *y * *h * scale;
        }
        // The DC and Nyquist bins of a real signal's spectrum are real; rounding can leave a tiny
        // imaginary part that realfft refuses, so drop it.
        self.freq[0].im = 0.0;
        if n.is_multiple_of(2) {
            self.freq[bins - 1].im = 0.0;
        }
        inv.process_with_scratch(&mut self.freq, &mut self.time, &mut self.scratch[..scratch_len])
            .expect("buffer sizes match the plan");
        let k = want.min(full);
        out[..k].copy_from_slice(&self.time[..k]);
        out[k..].fill(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn direct(x: &[f32], h: &[f32]) -> Vec<f64> {
        let mut y = vec![0f64; x.len() + h.len() - 1];
        for (i, &a) in x.iter().enumerate() {
            for (j, &b) in h.iter().enumerate() {
                y[i + j] += f64::from(a) * f64::from(b);
            }
        }
        y
    }

    #[test]
    fn fft_convolution_matches_the_direct_sum() {
        let mut rng = crate::plan::rng_for(1, 2);
        let mut conv = Convolver::default();
        for (nx, nh, want) in
            [(1usize, 1usize, 1usize), (100, 37, 136), (1000, 300, 1299), (1000, 300, 700), (5, 64, 200)]
        {
            let x: Vec<f32> = (0..nx).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let h: Vec<f32> = (0..nh).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let mut out = vec![f32::NAN; want];
            conv.clear();
            conv.convolve(&x, &h, 0, &mut out);
            let d = direct(&x, &h);
            for (k, &v) in out.iter().enumerate() {
                let r = d.get(k).copied().unwrap_or(0.0);
                assert!((f64::from(v) - r).abs() < 1e-4 * (1.0 + nh as f64).sqrt(), "{nx} {nh} at {k}: {v} vs {r}");
            }
            // cached spectrum gives the same bytes, and so does a shared table
            let mut again = vec![0.0; want];
            conv.convolve(&x, &h, 0, &mut again);
            assert_eq!(out, again);
            let table = SpectrumTable::build(&[&h], &[(0, SpectrumTable::size_for(nx, nh))].into_iter().collect());
            let mut shared = vec![0.0; want];
            Convolver::default().convolve_with(&x, &h, 0, Some(&table), &mut shared);
            assert_eq!(out, shared);
        }
    }

    #[test]
    fn tail_of_an_exponential_decay_is_a_third_of_rt60() {
        let sr = 16_000u32;
        for rt60 in [0.2f64, 0.5, 1.2] {
            // amplitude falls 60 dB in rt60: energy exp(-2 a k) with a = ln(1000) / (rt60 sr).
            let a = 1000f64.ln() / (rt60 * f64::from(sr));
            let n = (3.0 * rt60 * f64::from(sr)) as usize; // long enough that truncation is < 1e-9 of the energy
            let h: Vec<f32> = (0..n).map(|k| (-a * k as f64).exp() as f32).collect();
            let t = tail_s(&h, sr);
            assert!((t - rt60 / 3.0).abs() <= 1.5 / f64::from(sr), "rt60 {rt60}: tail {t} vs {}", rt60 / 3.0);
            // a noise carrier with the same envelope (a realistic response) is within a few ms
            let mut rng = crate::plan::rng_for(3, 4);
            let hn: Vec<f32> = h.iter().map(|&e| e * rng.gen_range(-1.0f32..1.0)).collect();
            let prepared = prepare_ir(&hn).unwrap();
            let tn = tail_s(&prepared, sr);
            assert!((tn - rt60 / 3.0).abs() < 0.01 + 0.03 * rt60, "noisy rt60 {rt60}: tail {tn}");
        }
    }

    #[test]
    fn preparation_aligns_cuts_and_normalises() {
        let mut raw = vec![0.0001f32; 50]; // propagation delay under a noise floor
        raw.push(0.05); // pre-echo well below the direct path: dropped
        raw.push(-1.0); // direct path
        raw.extend((1..4000).map(|k| 0.5 * (-(k as f32) / 300.0).exp() * if k % 2 == 0 { 1.0 } else { -1.0 }));
        let h = prepare_ir(&raw).unwrap();
        assert!(h[0] < 0.0 && h[0].abs() == h.iter().fold(0f32, |m, v| m.max(v.abs())), "starts at the direct path");
        let e: f64 = h.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
        assert!((e - 1.0).abs() < 1e-5, "unit energy, got {e}");
        assert!(h.len() < raw.len() - 51, "cut after a 60 dB decay");
        assert_eq!(prepare_ir(&[]), Err(RoomError::Empty));
        assert_eq!(prepare_ir(&[0.0; 8]), Err(RoomError::Silent));
        assert_eq!(prepare_ir(&[0.0, f32::NAN]), Err(RoomError::NonFinite(1)));
        assert_eq!(prepare_ir(&[0.0, 0.0, 2.0]).unwrap(), vec![1.0]);
    }

    #[test]
    fn fft_sizes_are_smooth_and_large_enough() {
        for n in [1usize, 2, 3, 5, 7, 100, 1000, 12_345, 99_999] {
            let m = fft_size(n);
            assert!(m >= n && m < 2 * n.max(1));
            let mut r = m;
            while r.is_multiple_of(2) {
                r /= 2;
            }
            while r.is_multiple_of(3) {
                r /= 3;
            }
            assert_eq!(r, 1, "{m}");
        }
    }
}
