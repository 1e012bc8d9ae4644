//! Family `alarms`: alarms and beeps.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "alarms", "alarm_clock_beeps", "a fast beeping alarm clock", 1.76, |s: &mut Synth| {
        let x = s.osc(|_| 2000.0, &[(1.0, 1.0), (3.0, 0.3)]);
        gated(s, x, 0.11, 0.6, 0.005, 0.02)
    });
    atom!(v, "alarms", "smoke_alarm", "a piercing smoke-alarm beep", 2.0, |s: &mut Synth| {
        let x = s.osc(|_| 3150.0, &[(1.0, 1.0), (2.0, 0.1)]);
        gated(s, x, 0.5, 0.9, 0.005, 0.02)
    });
    atom!(v, "alarms", "reversing_beeper", "a truck reversing beeper over engine noise", 2.0, |s: &mut Synth| {
        let beep = gated(s, s.osc(|_| 1100.0, &sine()), 1.0, 0.5, 0.005, 0.0);
        let motor = engine(s, |_| 22.0, 400.0, 0.4);
        with_bed(beep, &motor, -10.0)
    });
    atom!(v, "alarms", "microwave_beeps", "long microwave-oven beeps", 2.4, |s: &mut Synth| {
        let x = s.osc(|_| 2000.0, &square(5));
        gated(s, x, 0.8, 0.8, 0.005, 0.02)
    });
    atom!(v, "alarms", "heart_monitor", "a hospital heart-monitor beep", 2.4, |s: &mut Synth| {
        let beep = gated(s, s.osc(|_| 960.0, &sine()), 0.8, 0.12, 0.005, 0.0);
        let hiss = s.noise_band(300.0, 3000.0);
        with_bed(beep, &hiss, -16.0)
    });
    atom!(v, "alarms", "buzzer_alarm", "a harsh buzzer alarm", 1.8, |s: &mut Synth| {
        let x = clip(normalised(s.osc(|_| 140.0, &square(41))), 2.0);
        gated(s, x, 0.6, 0.75, 0.01, 0.03)
    });
    atom!(v, "alarms", "klaxon", "an awooga klaxon horn", 2.4, |s: &mut Synth| {
        let x = s.osc(|t| 180.0 + 240.0 * (t.rem_euclid(0.8) / 0.5).min(1.0), &square(20));
        let x = formants(s, &x, &[(800.0, 1.5, 1.0), (1800.0, 3.0, 0.4)]);
        gated(s, x, 0.8, 0.9, 0.02, 0.03)
    });
    atom!(v, "alarms", "countdown_beeps", "short beeps rising in pitch", 1.8, |s: &mut Synth| {
        let notes: Vec<f64> = (0..12).map(|k| midi(72.0 + k as f64)).collect();
        let x = s.osc(melody(notes, 0.15, 0.0), &[(1.0, 1.0), (2.0, 0.2)]);
        gated(s, x, 0.15, 0.7, 0.005, 0.02)
    });
    atom!(v, "alarms", "pager_beeps", "rapid high pager beeps", 1.5, |s: &mut Synth| {
        let x = s.osc(|_| 3600.0, &sine());
        gated(s, x, 0.06, 0.5, 0.004, 0.03)
    });
    atom!(v, "alarms", "game_coin", "a video-game coin chime", 2.0, |s: &mut Synth| {
        let f = |t: f64| if t.rem_euclid(0.5) < 0.08 { 988.0 } else { 1319.0 };
        let x = s.osc(f, &square(7));
        s.shape(x, |t| {
            let p = t.rem_euclid(0.5);
            if p < 0.08 {
                1.0
            } else {
                (-(p - 0.08) / 0.15).exp().max(0.03)
            }
        })
    });
    atom!(v, "alarms", "electronic_bloops", "bubbly electronic bloops", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.1) {
            let f = s.range(300.0, 900.0);
            chirp(s, &mut out, t, (f, f * 0.5), 0.1, 1.0, &sine());
        }
        out
    });
    atom!(v, "alarms", "error_chime", "a descending two-note error chime", 1.2, |s: &mut Synth| {
        note_train(s, &[880.0, 587.0], 0.3, 0.2, &[(1.0, 1.0), (2.0, 0.3)])
    });
}
