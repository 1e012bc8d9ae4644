//! Family `vocal`: voice-like drones.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
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
        filter_sweep(&mut whistle, Kind::Band, s.sr, 20.0, |t| {
            1200.0 + 600.0 * (0.5 - 0.5 * (2.0 * PI * t / 3.0).cos())
        });
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
}
