//! Independent pitch shift and time stretch through Signalsmith Stretch (the `ssstretch` crate).
//!
//! An event's exemplar may be transposed by `cents` (pitch kept apart from tempo) and stretched
//! to `stretch_len(n, s)` samples, `s / STRETCH_DEN` being the factor on its length (tempo kept
//! apart from pitch). Lengths are integers decided before any audio, so the planner and the
//! relevance engine never depend on the DSP; the event's placed extent is planned as for any
//! exemplar (looped or trimmed), so durations and relevance stay exact.
//!
//! Signalsmith Stretch randomises phases only for stretches beyond 2x, which the bounds below
//! exclude; a fresh instance per call with a fixed seed makes the output a function of the
//! input alone (threads, shards and call order cannot change a byte).
//!
//! The library is offline-driven as its own command-line tool does it: the first block of input
//! is given as pre-roll (`seek`), the rest processed in one call, the output latency flushed and
//! folded back, so the result is exactly `stretch_len` samples aligned with the input.

use ssstretch::Stretch;

/// Denominator of the length factor: `s / STRETCH_DEN` is the event's `stretch`.
pub const STRETCH_DEN: u32 = 1000;
/// Stretches allowed: half to twice the exemplar's length (no phase randomisation).
pub const STRETCH_MIN: u32 = STRETCH_DEN / 2;
/// Largest stretch numerator: twice the exemplar's length.
pub const STRETCH_MAX: u32 = STRETCH_DEN * 2;
/// Pitch shifts allowed, in cents: one octave either way.
pub const PITCH_MAX_CENTS: i32 = 1200;
/// The seed of every instance (unused within the bounds above; fixed all the same).
const SEED: i64 = 0x5CE7E;

/// Why a shift/stretch was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShiftError {
    /// The pitch shift (cents) is beyond [`PITCH_MAX_CENTS`] either way.
    #[error("pitch shift {0} cents is outside [-{PITCH_MAX_CENTS}, {PITCH_MAX_CENTS}]")]
    Pitch(i32),
    /// The stretch numerator is outside [`STRETCH_MIN`]..=[`STRETCH_MAX`].
    #[error("stretch {0}/{STRETCH_DEN} is outside [{STRETCH_MIN}, {STRETCH_MAX}]/{STRETCH_DEN}")]
    Stretch(u32),
    /// The sample rate is 0.
    #[error("sample rate must be > 0")]
    SampleRate,
    /// The stretcher's output has a NaN or infinite sample.
    #[error("the stretcher produced a non-finite sample (non-finite input?)")]
    NonFinite,
    /// The input has more samples than the stretcher takes.
    #[error("{0} samples is too long for the stretcher (at most i32::MAX)")]
    TooLong(usize),
}

/// Length of `n` samples stretched by `s / STRETCH_DEN`: `round(n · s / STRETCH_DEN)`, ties to even.
pub fn stretch_len(n: usize, s: u32) -> usize {
    crate::resample::resampled_len(n, STRETCH_DEN, s)
}

/// How much of an `n`-sample input an event of `out_len` samples plays when stretched by
/// `s / STRETCH_DEN`: the input behind its first `out_len` output samples plus a quarter second,
/// so those samples are computed with the library's full look-ahead (its blocks are 0.12 s);
/// all of it when the event loops the stretched input or nearly does.
pub fn input_needed(out_len: usize, s: u32, n: usize, sample_rate: u32) -> usize {
    let behind = (out_len as u128 * u128::from(STRETCH_DEN)).div_ceil(u128::from(s.max(1)));
    let guard = u128::from(sample_rate).div_ceil(4);
    (behind + guard).min(n as u128) as usize
}

/// Checks a (cents, stretch) pair against the bounds.
pub fn check(cents: i32, s: u32) -> Result<(), ShiftError> {
    if cents.abs() > PITCH_MAX_CENTS {
        return Err(ShiftError::Pitch(cents));
    }
    if !(STRETCH_MIN..=STRETCH_MAX).contains(&s) {
        return Err(ShiftError::Stretch(s));
    }
    Ok(())
}

/// `x` transposed by `cents` and stretched by `s / STRETCH_DEN`: exactly `stretch_len(x.len(), s)`
/// samples. The identity (0 cents, `STRETCH_DEN`) returns `x` unchanged, bit for bit.
pub fn shift_stretch(x: &[f32], cents: i32, s: u32, sample_rate: u32) -> Result<Vec<f32>, ShiftError> {
    check(cents, s)?;
    if sample_rate == 0 {
        return Err(ShiftError::SampleRate);
    }
    if cents == 0 && s == STRETCH_DEN {
        return Ok(x.to_vec());
    }
    let out_len = stretch_len(x.len(), s);
    if x.is_empty() || out_len == 0 {
        return Ok(vec![0.0; out_len]);
    }
    let mut st = Stretch::with_seed(SEED);
    st.preset_default(1, sample_rate as f32);
    st.set_transpose_semitones(cents as f32 / 100.0, None);
    let in_lat = st.input_latency().max(0) as usize;
    let out_lat = st.output_latency().max(0) as usize;
    let too_long = |n: usize| i32::try_from(n).map_err(|_| ShiftError::TooLong(n));
    // Reading runs `in_lat` samples ahead of the input; past its end it reads silence.
    let mut input = Vec::with_capacity(x.len() + 2 * in_lat);
    input.extend_from_slice(x);
    input.resize(x.len() + 2 * in_lat, 0.0);
    let mut out = vec![0.0f32; out_len + out_lat];
    let n_in = too_long(x.len())?;
    let (n_out, n_tail, n_pre) = (too_long(out_len)?, too_long(out_lat)?, too_long(in_lat)?);
    let rate = x.len() as f64 / out_len as f64;
    // SAFETY: one channel; every pointer addresses at least the count of samples it is given:
    // `input` holds x.len() + 2·in_lat samples (pre-roll in_lat, then x.len() from in_lat), `out`
    // holds out_len + out_lat (process writes out_len from 0, flush out_lat from out_len).
    unsafe {
        st.seek(&[input.as_ptr()], n_pre, rate);
        st.process(&[input.as_ptr().add(in_lat)], n_in, &mut [out.as_mut_ptr()], n_out);
        st.flush(&mut [out.as_mut_ptr().add(out_len)], n_tail);
    }
    // The first out_lat samples come before the input's start: fold them back (reversed, negated)
    // rather than drop them, as the library's own offline tool does.
    let lat = out_lat.min(out_len);
    for i in 0..lat {
        let early = out[out_lat - 1 - i];
        out[out_lat + i] -= early;
    }
    out.drain(..out_lat);
    out.truncate(out_len);
    out.resize(out_len, 0.0);
    if out.iter().any(|v| !v.is_finite()) {
        return Err(ShiftError::NonFinite);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SR: u32 = 16_000;

    fn sine(freq: f64, n: usize) -> Vec<f32> {
        (0..n).map(|i| (2.0 * std::f64::consts::PI * freq * i as f64 / f64::from(SR)).sin() as f32 * 0.5).collect()
    }

    /// Dominant frequency by counting zero crossings over the steady middle of the signal.
    fn frequency(x: &[f32]) -> f64 {
        let mid = &x[x.len() / 4..3 * x.len() / 4];
        let crossings = mid.windows(2).filter(|w| (w[0] < 0.0) != (w[1] < 0.0)).count();
        crossings as f64 / 2.0 / (mid.len() as f64 / f64::from(SR))
    }

    fn rms(x: &[f32]) -> f64 {
        (x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() / x.len() as f64).sqrt()
    }

    #[test]
    fn pitch_moves_alone() {
        let x = sine(440.0, SR as usize);
        for cents in [-700, -100, 300, 1200] {
            let y = shift_stretch(&x, cents, STRETCH_DEN, SR).unwrap();
            assert_eq!(y.len(), x.len(), "the length is kept");
            let want = 440.0 * 2f64.powf(f64::from(cents) / 1200.0);
            let got = frequency(&y);
            assert!((got - want).abs() / want < 0.02, "{cents} cents: {got:.1} Hz, want {want:.1}");
            let r = rms(&y[y.len() / 4..3 * y.len() / 4]) / rms(&x);
            assert!((0.6..1.5).contains(&r), "{cents} cents: level ratio {r:.2}");
        }
    }

    #[test]
    fn tempo_moves_alone() {
        let x = sine(440.0, SR as usize);
        for s in [STRETCH_MIN, 800, 1250, STRETCH_MAX] {
            let y = shift_stretch(&x, 0, s, SR).unwrap();
            assert_eq!(y.len(), stretch_len(x.len(), s));
            let got = frequency(&y);
            assert!((got - 440.0).abs() < 9.0, "stretch {s}: {got:.1} Hz");
        }
    }

    #[test]
    fn lengths_are_exact_and_rounding_is_even() {
        assert_eq!(stretch_len(1001, 1500), 1502); // 1501.5 -> even
        assert_eq!(stretch_len(1003, 1500), 1504); // 1504.5 -> even
        assert_eq!(stretch_len(0, 700), 0);
        let x = sine(300.0, 3_333);
        for (c, s) in [(50, 617), (-1200, 1999), (1, 1000)] {
            assert_eq!(shift_stretch(&x, c, s, SR).unwrap().len(), stretch_len(3_333, s));
        }
        // shorter than the library's block, and empty
        assert_eq!(shift_stretch(&x[..100], 200, 1500, SR).unwrap().len(), 150);
        assert!(shift_stretch(&[], 200, 1500, SR).unwrap().is_empty());
    }

    #[test]
    fn deterministic_and_identity_is_exact() {
        let x: Vec<f32> = sine(220.0, 9_000).iter().enumerate().map(|(i, v)| v * ((i % 97) as f32 / 97.0)).collect();
        let a = shift_stretch(&x, -350, 1370, SR).unwrap();
        let b = std::thread::spawn({
            let x = x.clone();
            move || shift_stretch(&x, -350, 1370, SR).unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(shift_stretch(&x, 0, STRETCH_DEN, SR).unwrap(), x);
    }

    #[test]
    fn a_short_event_stretches_only_the_start_it_plays() {
        let x: Vec<f32> =
            sine(330.0, 48_000).iter().enumerate().map(|(i, v)| v * (1.0 + (i as f32 / 4000.0).sin()) / 2.0).collect();
        let (length, s) = (8_000usize, 1_250u32);
        let m = input_needed(length, s, x.len(), SR);
        assert_eq!(m, 6_400 + 4_000);
        assert_eq!(input_needed(100_000, s, x.len(), SR), x.len(), "a looping event takes it all");
        let whole = shift_stretch(&x, 200, s, SR).unwrap();
        let part = shift_stretch(&x[..m], 200, s, SR).unwrap();
        assert!(part.len() > length);
        // The played samples agree with the whole exemplar's stretch far below audibility.
        let err: f64 = whole[..length].iter().zip(&part[..length]).map(|(a, b)| f64::from(a - b).powi(2)).sum();
        let sig: f64 = whole[..length].iter().map(|&a| f64::from(a).powi(2)).sum();
        assert!(10.0 * (err / sig).log10() < -60.0, "prefix differs: {:.1} dB", 10.0 * (err / sig).log10());
    }

    #[test]
    fn bounds_are_refused() {
        let x = sine(440.0, 1000);
        assert_eq!(shift_stretch(&x, 1201, 1000, SR), Err(ShiftError::Pitch(1201)));
        assert_eq!(shift_stretch(&x, 0, 499, SR), Err(ShiftError::Stretch(499)));
        assert_eq!(shift_stretch(&x, 0, 2001, SR), Err(ShiftError::Stretch(2001)));
        assert_eq!(shift_stretch(&x, 10, 1000, 0), Err(ShiftError::SampleRate));
    }
}
