//! Band-limited, delay-compensated resampling of mono audio.
//!
//! Wraps rubato's synchronous FFT resampler (`FftFixedInOut`): it applies a
//! Blackman-Harris² windowed sinc low-pass in the frequency domain and works on
//! the exact rational ratio `sr_out / sr_in`, so every output sample lands
//! exactly on the grid `k / sr_out` with no drift. Its group delay is half the
//! filter length; we pick chunk sizes that make that delay a whole number of
//! output samples and drop it, so output sample `k` corresponds to input time
//! `k / sr_out` (no shift). Computation is in f64 so the f32 result is limited
//! by f32 precision, not by rounding inside the filter.

use rubato::{FftFixedInOut, Resampler};

/// Why a resampling request was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResampleError {
    /// A sample rate is zero.
    #[error("sample rates must be positive, got sr_in={sr_in} and sr_out={sr_out}")]
    InvalidRate {
        /// The input's sample rate, Hz.
        sr_in: u32,
        /// The requested output rate, Hz.
        sr_out: u32,
    },
    /// The resampling library (rubato) refused the request.
    #[error("resampler failed: {0}")]
    Backend(String),
}

/// Length of the low-pass filter we aim for, in samples at the lower of the two
/// rates (the filter is as long as rubato's FFT block). 256 taps keep the
/// passband flat (< 0.01 dB) up to ~85-90 % of the lower Nyquist frequency,
/// while the ringing where a signal starts or stops abruptly dies out within
/// ~16 ms at 8 kHz, ~8 ms at 16 kHz (measured by `sweep_filter_length`).
const TARGET_FILTER_TAPS: usize = 256;

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Output length for `n` input samples: `round(n * sr_out / sr_in)`, with
/// exact integer arithmetic and ties to even (as Python's `round` and
/// `numpy.round`), so callers in Python can predict it exactly.
pub fn resampled_len(n: usize, sr_in: u32, sr_out: u32) -> usize {
    let num = n as u128 * sr_out as u128;
    let den = sr_in as u128;
    let q = num / den;
    let r = num % den;
    let twice = 2 * r;
    let rounded = if twice > den || (twice == den && q % 2 == 1) { q + 1 } else { q };
    rounded as usize
}

/// Resample `x` from `sr_in` Hz to `sr_out` Hz.
///
/// Returns exactly `resampled_len(x.len(), sr_in, sr_out)` samples. Equal rates
/// return a copy. Outside the input the signal is taken as silence, so the
/// first and last few milliseconds carry the filter's edge transient (for
/// common rates; when the rates share only a tiny common factor, e.g. 44100 and
/// 44101, the synchronous block and so the transient grow to about a second).
pub fn resample(x: &[f32], sr_in: u32, sr_out: u32) -> Result<Vec<f32>, ResampleError> {
    resample_with_taps(x, sr_in, sr_out, TARGET_FILTER_TAPS)
}

fn resample_with_taps(
    x: &[f32],
    sr_in: u32,
    sr_out: u32,
    taps_at_lower_rate: usize,
) -> Result<Vec<f32>, ResampleError> {
    if sr_in == 0 || sr_out == 0 {
        return Err(ResampleError::InvalidRate { sr_in, sr_out });
    }
    if sr_in == sr_out {
        return Ok(x.to_vec());
    }
    let out_len = resampled_len(x.len(), sr_in, sr_out);
    if out_len == 0 {
        return Ok(Vec::new());
    }

    let g = gcd(sr_in as u64, sr_out as u64) as usize;
    let unit_in = sr_in as usize / g;
    // An even number of units makes both block sizes even, hence the delay
    // (half the output block) a whole number of output samples.
    let lower = sr_in.min(sr_out) as usize;
    let target_in = (taps_at_lower_rate * sr_in as usize).div_ceil(lower);
    let units = 2 * target_in.div_ceil(2 * unit_in).max(1);
    let block_in = units * unit_in;

    let mut resampler = FftFixedInOut::<f64>::new(sr_in as usize, sr_out as usize, block_in, 1)
        .map_err(|e| ResampleError::Backend(e.to_string()))?;
    let chunk_in = resampler.input_frames_next();
    let chunk_out = resampler.output_frames_next();
    debug_assert_eq!(chunk_in, block_in);
    debug_assert_eq!(chunk_out % 2, 0);
    let delay = resampler.output_delay();

    let needed_out = delay + out_len;
    let n_chunks = needed_out.div_ceil(chunk_out);
    let mut produced: Vec<f64> = Vec::with_capacity(n_chunks * chunk_out);
    let mut input_block = vec![0.0f64; chunk_in];
    let mut output_block = vec![vec![0.0f64; chunk_out]];
    for c in 0..n_chunks {
        let start = (c * chunk_in).min(x.len());
        let end = ((c + 1) * chunk_in).min(x.len());
        input_block.iter_mut().for_each(|v| *v = 0.0);
        for (dst, src) in input_block.iter_mut().zip(&x[start..end]) {
            *dst = *src as f64;
        }
        resampler
            .process_into_buffer(&[&input_block[..]], &mut output_block, None)
            .map_err(|e| ResampleError::Backend(e.to_string()))?;
        produced.extend_from_slice(&output_block[0]);
    }
    Ok(produced[delay..delay + out_len].iter().map(|v| *v as f32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn sine(freq: f64, sr: u32, n: usize) -> Vec<f32> {
        (0..n).map(|i| (0.5 * (2.0 * PI * freq * i as f64 / sr as f64).sin()) as f32).collect()
    }

    /// SNR (dB) of `y` against the ideal sine at `sr`, skipping `skip` samples at each edge.
    fn snr_against_ideal(y: &[f32], freq: f64, sr: u32, skip: usize) -> f64 {
        let (mut sig, mut err) = (0.0f64, 0.0f64);
        for (i, v) in y.iter().enumerate().take(y.len() - skip).skip(skip) {
            let ideal = 0.5 * (2.0 * PI * freq * i as f64 / sr as f64).sin();
            sig += ideal * ideal;
            err += (*v as f64 - ideal).powi(2);
        }
        10.0 * (sig / err.max(1e-300)).log10()
    }

    #[test]
    fn sine_keeps_100_db_snr_and_exact_length() {
        for &(sr_in, sr_out) in &[(44100u32, 16000u32), (48000, 16000), (22050, 24000), (8000, 16000)] {
            let n = sr_in as usize; // one second
            let x = sine(1000.0, sr_in, n);
            let y = resample(&x, sr_in, sr_out).unwrap();
            assert_eq!(y.len(), resampled_len(n, sr_in, sr_out));
            assert_eq!(y.len(), sr_out as usize);
            let skip = (sr_out as usize) / 100; // 10 ms
            let snr = snr_against_ideal(&y, 1000.0, sr_out, skip);
            assert!(snr >= 100.0, "{sr_in}->{sr_out}: SNR {snr:.1} dB < 100 dB");
        }
    }

    #[test]
    #[ignore]
    fn sweep_filter_length() {
        for b in [128, 256, 512] {
            for &(sr_in, sr_out) in
                &[(44100u32, 16000u32), (48000, 16000), (22050, 24000), (8000, 16000), (16000, 8000)]
            {
                let x = sine(1000.0, sr_in, sr_in as usize);
                let y = resample_with_taps(&x, sr_in, sr_out, b).unwrap();
                let s5 = snr_against_ideal(&y, 1000.0, sr_out, sr_out as usize / 200);
                let s10 = snr_against_ideal(&y, 1000.0, sr_out, sr_out as usize / 100);
                let s20 = snr_against_ideal(&y, 1000.0, sr_out, sr_out as usize / 50);
                let mut gains = String::new();
                let nyq = sr_in.min(sr_out) as f64 / 2.0;
                for frac in [0.5, 0.75, 0.85, 0.9, 0.95] {
                    let f = frac * nyq;
                    let x = sine(f, sr_in, sr_in as usize);
                    let y = resample_with_taps(&x, sr_in, sr_out, b).unwrap();
                    let m = y.len();
                    let rms =
                        (y[m / 4..3 * m / 4].iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / (m / 2) as f64).sqrt();
                    gains += &format!(" {frac}:{:.2}dB", 20.0 * (rms / (0.5 / 2f64.sqrt())).log10());
                }
                println!("taps {b} {sr_in}->{sr_out}: skip5 {s5:.1} skip10 {s10:.1} skip20 {s20:.1} {gains}");
            }
        }
    }

    #[test]
    fn odd_lengths_and_coprime_rates() {
        // 44100 and 44101 share no factor: the FFT block (hence the filter)
        // spans two seconds, so the edge transient reaches one second inward.
        let n = 4 * 44100 + 12345;
        let x = sine(440.0, 44100, n);
        let y = resample(&x, 44100, 44101).unwrap();
        assert_eq!(y.len(), resampled_len(n, 44100, 44101));
        let snr = snr_against_ideal(&y, 440.0, 44101, 44101 + 4410);
        assert!(snr >= 90.0, "coprime SNR {snr:.1}");
    }

    #[test]
    fn no_time_shift_for_an_impulse() {
        // An impulse at input time t must peak at output index t * sr_out / sr_in.
        let mut x = vec![0.0f32; 4410];
        x[2205] = 1.0; // 50 ms at 44.1 kHz
        let y = resample(&x, 44100, 16000).unwrap();
        let peak = y.iter().enumerate().max_by(|a, b| a.1.abs().total_cmp(&b.1.abs())).unwrap().0;
        assert_eq!(peak, 800);
        // Symmetric around the peak: a shifted filter would tilt the neighbours.
        assert!((y[799] - y[801]).abs() < 1e-4, "{} vs {}", y[799], y[801]);
    }

    #[test]
    fn removes_content_above_the_new_nyquist() {
        let x = sine(12000.0, 48000, 48000);
        let y = resample(&x, 48000, 16000).unwrap();
        let rms =
            (y[160..y.len() - 160].iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / (y.len() - 320) as f64).sqrt();
        assert!(rms < 1e-5, "aliased energy rms {rms}");
    }

    #[test]
    fn identity_and_errors() {
        let x = sine(1000.0, 16000, 1000);
        assert_eq!(resample(&x, 16000, 16000).unwrap(), x);
        assert!(resample(&x, 0, 16000).is_err());
        assert!(resample(&[], 44100, 16000).unwrap().is_empty());
        assert_eq!(resampled_len(1, 3, 2), 1); // 0.667 -> 1
        assert_eq!(resampled_len(1, 2, 1), 0); // 0.5 -> 0 (ties to even)
        assert_eq!(resampled_len(3, 2, 1), 2); // 1.5 -> 2
    }
}
