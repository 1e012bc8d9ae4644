//! Family `music`: chords and music.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "music", "organ_major_chord", "a sustained major organ chord", 3.0, |s: &mut Synth| {
        let drawbars = harmonics(&[1.0, 0.6, 0.3, 0.4, 0.0, 0.2, 0.0, 0.25]);
        let mut out = s.zeros();
        for m in [60.0, 64.0, 67.0, 72.0] {
            add(&mut out, &s.osc(move |_| midi(m), &drawbars), 1.0);
        }
        out
    });
    atom!(v, "music", "strings_minor_chord", "a sustained minor string-like chord", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for m in [57.0, 60.0, 64.0] {
            for d in [-0.003, 0.0, 0.003] {
                add(&mut out, &s.osc(vibrato(midi(m) * (1.0 + d), 0.004, 5.0), &saw(30)), 1.0);
            }
        }
        lp(out, 2500.0, s.sr)
    });
    for &(label, phrase, up) in &[
        ("pluck_arpeggio_up", "a rising plucked arpeggio", true),
        ("pluck_arpeggio_down", "a falling plucked arpeggio", false),
    ] {
        atom!(v, "music", label, phrase, 1.92, move |s: &mut Synth| {
            let mut notes = [60.0, 64.0, 67.0, 72.0, 76.0, 79.0, 84.0, 88.0];
            if !up {
                notes.reverse();
            }
            let mut out = s.zeros();
            for (k, t) in s.times_regular(0.12).into_iter().enumerate() {
                s.pluck(&mut out, t, midi(notes[k % 8]), 0.4, 1.0, 0.7);
            }
            out
        });
    }
    atom!(v, "music", "music_box", "a tinkling music-box melody", 2.16, |s: &mut Synth| {
        let notes = [84.0, 88.0, 91.0, 96.0, 91.0, 88.0, 86.0, 91.0, 89.0, 86.0, 83.0, 79.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.18).into_iter().enumerate() {
            let f = midi(notes[k % notes.len()]);
            s.strike(&mut out, t, &[(f, 0.6, 1.0), (f * 4.1, 0.1, 0.15)], 1.0);
        }
        out
    });
    atom!(v, "music", "bass_pluck_line", "a plucked bass line", 2.4, |s: &mut Synth| {
        let notes = [33.0, 40.0, 36.0, 43.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.3).into_iter().enumerate() {
            s.pluck(&mut out, t, midi(notes[k % 4]), 0.8, 1.0, 0.2);
        }
        lp(out, 1200.0, s.sr)
    });
    atom!(v, "music", "harp_glissando", "a harp glissando sweeping upward", 2.2, |s: &mut Synth| {
        let scale = [0.0, 2.0, 4.0, 5.0, 7.0, 9.0, 11.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.05).into_iter().enumerate() {
            let i = k % 22;
            let m = 48.0 + 12.0 * (i / 7) as f64 + scale[i % 7];
            s.pluck(&mut out, t, midi(m), 0.8, 0.8, 0.5);
        }
        out
    });
    atom!(v, "music", "choir_aah", "a choir singing 'aah'", 3.0, |s: &mut Synth| {
        let mut src = s.zeros();
        for (k, m) in [57.0, 61.0, 64.0, 69.0].iter().enumerate() {
            add(&mut src, &s.osc(vibrato(midi(*m), 0.006, 5.0 + 0.3 * k as f64), &saw(40)), 1.0);
        }
        formants(s, &src, &[(700.0, 5.0, 1.0), (1200.0, 6.0, 0.5), (2600.0, 8.0, 0.25)])
    });
    atom!(v, "music", "synth_pad_swell", "a warm swelling synth pad", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for m in [53.0, 57.0, 60.0, 64.0] {
            for d in [-0.004, 0.004] {
                add(&mut out, &s.osc(move |_| midi(m) * (1.0 + d), &saw(40)), 1.0);
            }
        }
        filter_sweep(&mut out, Kind::Low, s.sr, 1.5, |t| 300.0 + 2200.0 * (PI * t / 3.0).sin().powi(2));
        out
    });
    atom!(v, "music", "guitar_strum", "a strummed guitar chord", 2.4, |s: &mut Synth| {
        let strings = [40.0, 47.0, 52.0, 56.0, 59.0, 64.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.6).into_iter().enumerate() {
            for j in 0..6 {
                let idx = if k % 2 == 0 { j } else { 5 - j };
                s.pluck(&mut out, t + 0.015 * j as f64, midi(strings[idx]), 1.0, 0.5, 0.6);
            }
        }
        out
    });
    atom!(v, "music", "steel_drum", "a steel-drum melody", 2.64, |s: &mut Synth| {
        let notes = [67.0, 71.0, 74.0, 72.0, 69.0, 71.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.22).into_iter().enumerate() {
            let f = midi(notes[k % 6]);
            s.strike(&mut out, t, &[(f, 0.4, 1.0), (2.0 * f, 0.3, 0.5), (3.0 * f, 0.2, 0.2)], 1.0);
        }
        out
    });
    atom!(v, "music", "xylophone_run", "a quick xylophone run", 1.6, |s: &mut Synth| {
        let notes = [72.0, 74.0, 76.0, 79.0, 81.0, 84.0, 86.0, 88.0, 86.0, 84.0, 81.0, 79.0, 76.0, 74.0];
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.08).into_iter().enumerate() {
            s.strike(&mut out, t, &modes_at(&XYLO_BAR, midi(notes[k % notes.len()]), 0.12), 1.0);
        }
        out
    });
    atom!(v, "music", "piano_chords", "repeated piano chords", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.5) {
            for m in [48.0, 55.0, 60.0, 63.0, 67.0] {
                let f = midi(m);
                let modes: Vec<(f64, f64, f64)> = (1..10)
                    .map(|k| {
                        let k = k as f64;
                        (f * k * (1.0 + 0.0004 * k * k).sqrt(), 0.8 / k.sqrt(), 1.0 / k)
                    })
                    .collect();
                s.strike(&mut out, t, &modes, 1.0);
            }
        }
        out
    });
}
