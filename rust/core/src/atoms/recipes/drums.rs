//! Family `drums`: drums and percussive rolls.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "drums", "snare_roll", "a snare drum roll", 2.0, |s: &mut Synth| {
        let t = s.times_jittered(1.0 / 24.0, 0.1);
        let rattle = hp(s.bursts(&t, 0.03, None), 1000.0, s.sr);
        let body = struck(s, &t, &[(190.0, 0.05, 1.0), (330.0, 0.03, 0.5)], 0.3);
        sum(&[(&rattle, 1.0), (&body, 0.5)])
    });
    atom!(v, "drums", "kick_drum_beat", "a steady bass-drum beat", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.25) {
            drum_hit(s, &mut out, t, 50.0, 150.0, 0.15, 1.0);
        }
        out
    });
    for &(label, phrase, lo, hi) in &[
        ("toms_descending", "tom drums descending in pitch", 320.0f64, 110.0f64),
        ("toms_ascending", "tom drums ascending in pitch", 110.0, 320.0),
    ] {
        atom!(v, "drums", label, phrase, 2.0, move |s: &mut Synth| {
            let mut out = s.zeros();
            // One run of eight hits over the whole atom, so the direction is unambiguous.
            for (k, t) in s.times_regular(0.25).into_iter().enumerate() {
                let f = lo * (hi / lo).powf((k % 8) as f64 / 7.0);
                drum_hit(s, &mut out, t, f, f * 1.5, 0.12, 1.0);
            }
            out
        });
    }
    atom!(v, "drums", "hand_claps", "rapid hand clapping", 2.0, |s: &mut Synth| {
        let mut t = Vec::new();
        for c in s.times_jittered(0.12, 0.3) {
            t.extend([c, c + 0.008, c + 0.016]);
        }
        let claps = bp(s.bursts(&t, 0.012, None), 1100.0, 1.5, s.sr);
        let room = bp(s.bursts(&t, 0.06, None), 1500.0, 0.7, s.sr);
        sum(&[(&claps, 1.0), (&room, 0.15)])
    });
    atom!(v, "drums", "bongos", "bongos playing a quick pattern", 1.6, |s: &mut Synth| {
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.1).into_iter().enumerate() {
            let high = [true, true, false, true, false, false, true, false][k % 8];
            let f = if high { 420.0 } else { 300.0 };
            s.strike(&mut out, t, &[(f, 0.09, 1.0), (f * 1.6, 0.04, 0.3)], 1.0);
        }
        out
    });
    atom!(v, "drums", "timpani_roll", "a rumbling timpani roll", 2.5, |s: &mut Synth| {
        let t = s.times_jittered(1.0 / 18.0, 0.15);
        let x = struck(
            s,
            &t,
            &modes_at(&[(1.0, 1.0, 1.0), (1.5, 0.7, 0.5), (1.99, 0.5, 0.3), (2.44, 0.3, 0.2)], 95.0, 0.6),
            0.3,
        );
        s.shape(x, |t| 0.6 + 0.4 * (PI * t / 2.5).sin())
    });
    atom!(v, "drums", "shaker", "a rhythmic shaker", 2.0, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 8.0);
        let gains: Vec<f64> = (0..t.len()).map(|k| if k % 2 == 0 { 1.0 } else { 0.6 }).collect();
        let x = hp(s.bursts(&t, 0.04, Some(&gains)), 5000.0, s.sr);
        let bed = s.noise_band(5000.0, 8000.0);
        with_bed(x, &bed, -18.0)
    });
    atom!(v, "drums", "tambourine", "a jingling tambourine", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(1.0 / 6.0) {
            for _ in 0..10 {
                let f = s.range(4000.0, 7500.0);
                let dt = s.range(0.0, 0.02);
                let g = s.range(0.3, 1.0);
                s.strike(&mut out, t + dt, &[(f, 0.08, 1.0)], g);
            }
        }
        out
    });
    atom!(v, "drums", "hihat_fast", "fast closed hi-hat ticks", 1.5, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 14.0);
        let x = hp(s.bursts(&t, 0.012, None), 7000.0, s.sr);
        let bed = s.noise_band(6000.0, 9000.0);
        with_bed(x, &bed, -20.0)
    });
    atom!(v, "drums", "cymbal_crash", "a washy cymbal crash", 3.0, |s: &mut Synth| {
        let t = s.times_regular(1.5);
        let wash = hp(s.bursts(&t, 0.6, None), 3000.0, s.sr);
        let modes: Vec<(f64, f64, f64)> =
            (0..30).map(|_| (s.range(3000.0, 7000.0), s.range(0.2, 0.8), s.range(0.02, 0.08))).collect();
        let ring = struck(s, &t, &modes, 0.0);
        sum(&[(&wash, 1.0), (&ring, 1.0)])
    });
    atom!(v, "drums", "conga_groove", "a low conga drum groove", 2.4, |s: &mut Synth| {
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.15).into_iter().enumerate() {
            let (f, g) = [(200.0, 1.0), (200.0, 0.5), (150.0, 0.9), (260.0, 0.7)][k % 4];
            drum_hit(s, &mut out, t, f, f * 1.2, 0.12, g);
        }
        out
    });
}
