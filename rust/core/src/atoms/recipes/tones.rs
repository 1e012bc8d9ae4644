//! Family `tones`: plain tones.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "tones", "tone_low", "a low pure tone", 2.0, |s: &mut Synth| s.osc(|_| 150.0, &sine()));
    atom!(v, "tones", "tone_mid", "a steady mid-pitched pure tone", 2.0, |s: &mut Synth| s.osc(|_| 1000.0, &sine()));
    atom!(v, "tones", "tone_high", "a very high pure tone", 2.0, |s: &mut Synth| s.osc(|_| 6000.0, &sine()));
    atom!(v, "tones", "square_tone_low", "a low buzzy square-wave tone", 2.0, |s: &mut Synth| s
        .osc(|_| 110.0, &square(40)));
    atom!(v, "tones", "tremolo_tone", "a pulsing tremolo tone", 2.0, |s: &mut Synth| {
        let x = s.osc(|_| 600.0, &sine());
        s.shape(x, |t| 0.55 + 0.45 * (2.0 * PI * 8.0 * t).sin())
    });
    atom!(v, "tones", "vibrato_tone", "a mellow tone with slow wide vibrato", 2.0, |s: &mut Synth| s
        .osc(vibrato(440.0, 0.09, 4.0), &triangle(9)));
    atom!(v, "tones", "beating_tones", "two close tones beating slowly", 2.5, |s: &mut Synth| {
        let a = s.osc(|_| 500.0, &sine());
        let b = s.osc(|_| 503.0, &sine());
        sum(&[(&a, 1.0), (&b, 0.7)])
    });
}
