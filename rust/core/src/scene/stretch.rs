//! Pitch and tempo: varispeed through the band-limited resampler.
//!
//! An event's exemplar may be played at speed `k / SPEED_DEN` (k an integer): resampling from
//! the rate `k` to the rate `SPEED_DEN` shifts every frequency by `12·log2(k / SPEED_DEN)`
//! semitones and scales its length by `SPEED_DEN / k` (the event's `stretch`), to exactly
//! [`speed_len`] samples, so the planner can plan with integer lengths. Pitch and tempo move
//! together (a tape played faster): an independent pitch-shift/time-stretch library
//! (`signalsmith-stretch` on crates.io) wraps C++ through bindgen and needs libclang at
//! build time, which the project's build machines lack and every source install would then need;
//! varispeed through the resampler we already ship (rubato) needs nothing new.
//!
//! `SPEED_DEN = 200` rounds a requested pitch to within 0.09 semitone (0.05 near unison) (the recorded
//! `pitch_semitones` is the rendered one, [`speed_semitones`]) while keeping the rational ratio's
//! terms small, so rubato's synchronous block (and its edge transient) stays a few hundred samples.

use crate::resample::{resample, resampled_len, ResampleError};

/// Denominator of the playback speed.
pub const SPEED_DEN: u32 = 200;
/// Speeds allowed: one octave either way.
pub const SPEED_MIN: u32 = SPEED_DEN / 2;
/// Largest speed numerator: twice the normal speed.
pub const SPEED_MAX: u32 = SPEED_DEN * 2;

/// The speed numerator nearest to a pitch shift of `semitones` (None when not finite or beyond an octave).
pub fn speed_for_semitones(semitones: f64) -> Option<u32> {
    if !semitones.is_finite() {
        return None;
    }
    let k = (f64::from(SPEED_DEN) * 2f64.powf(semitones / 12.0)).round();
    (f64::from(SPEED_MIN)..=f64::from(SPEED_MAX)).contains(&k).then_some(k as u32)
}

/// The pitch shift, in semitones, that speed `k` renders.
pub fn speed_semitones(k: u32) -> f64 {
    12.0 * (f64::from(k) / f64::from(SPEED_DEN)).log2()
}

/// The length factor (`stretch`) of speed `k`.
pub fn speed_stretch(k: u32) -> f64 {
    f64::from(SPEED_DEN) / f64::from(k)
}

/// Length of `n` samples played at speed `k`: `round(n · SPEED_DEN / k)`, ties to even.
pub fn speed_len(n: usize, k: u32) -> usize {
    resampled_len(n, k, SPEED_DEN)
}

/// `x` played at speed `k / SPEED_DEN`: exactly `speed_len(x.len(), k)` samples.
pub fn varispeed(x: &[f32], k: u32) -> Result<Vec<f32>, ResampleError> {
    if !(SPEED_MIN..=SPEED_MAX).contains(&k) {
        return Err(ResampleError::Backend(format!(
            "speed {k}/{SPEED_DEN} is outside [{SPEED_MIN}, {SPEED_MAX}]/{SPEED_DEN} (one octave either way)"
        )));
    }
    resample(x, k, SPEED_DEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zero_crossings(x: &[f32]) -> usize {
        x.windows(2).filter(|w| (w[0] < 0.0) != (w[1] < 0.0)).count()
    }

    #[test]
    fn lengths_are_exact_and_pitch_follows() {
        let n = 16_000;
        let x: Vec<f32> = (0..n).map(|i| (2.0 * std::f32::consts::PI * 440.0 * i as f32 / 16_000.0).sin()).collect();
        for semitones in [-12.0, -7.0, -1.0, 0.0, 0.5, 3.0, 12.0] {
            let k = speed_for_semitones(semitones).unwrap();
            assert!((speed_semitones(k) - semitones).abs() < 0.09, "{semitones}");
            let y = varispeed(&x, k).unwrap();
            assert_eq!(y.len(), speed_len(n, k));
            assert_eq!(y.len(), (n as f64 * speed_stretch(k)).round() as usize);
            // the sine's frequency scales by k / 200: count zero crossings per second of output.
            let got = zero_crossings(&y) as f64 / 2.0 / (y.len() as f64 / 16_000.0);
            let want = 440.0 * f64::from(k) / f64::from(SPEED_DEN);
            assert!((got - want).abs() < 3.0, "{semitones}: {got} Hz vs {want}");
        }
        assert_eq!(varispeed(&x, SPEED_DEN).unwrap(), x);
        assert!(speed_for_semitones(13.0).is_none() && speed_for_semitones(f64::NAN).is_none());
        assert!(varispeed(&x, 99).is_err());
    }
}
