//! Family `horns`: horn-like tones.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
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
}
