//! Family `sirens`: sirens and sweeps.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
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
    atom!(v, "sirens", "sweep_up", "a pure tone sweeping upward", 2.0, |s: &mut Synth| s
        .osc(Synth::expo(150.0, 5000.0, 2.0), &sine()));
    atom!(v, "sirens", "sweep_down", "a pure tone sweeping downward", 2.0, |s: &mut Synth| s
        .osc(Synth::expo(5000.0, 150.0, 2.0), &sine()));
    atom!(v, "sirens", "warble_tone", "a rapidly warbling electronic tone", 1.5, |s: &mut Synth| {
        s.osc(|t| 1000.0 + 250.0 * (2.0 * PI * 12.0 * t).sin(), &triangle(7))
    });
    atom!(v, "sirens", "whooping_siren", "a repeated upward whooping siren", 2.1, |s: &mut Synth| {
        let x = s.osc(Synth::expo(400.0, 1400.0, 0.7), &saw(10));
        lp(x, 3000.0, s.sr)
    });
}
