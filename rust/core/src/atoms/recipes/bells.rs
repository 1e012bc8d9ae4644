//! Family `bells`: bells: struck inharmonic modes, repeated before the ring dies away.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    for &(label, phrase, f0, period, tau, dur) in &[
        ("bell_low", "a low ringing bell", 196.0, 1.2, 1.5, 3.6),
        ("bell_mid", "a mid-pitched ringing bell", 523.0, 0.8, 1.0, 2.4),
        ("bell_high", "a high ringing bell", 1400.0, 0.5, 0.6, 2.0),
    ] {
        atom!(v, "bells", label, phrase, dur, move |s: &mut Synth| {
            let t = s.times_regular(period);
            struck(s, &t, &modes_at(&CHURCH_BELL, f0, tau), 0.1)
        });
    }
    atom!(v, "bells", "handbell_rapid", "a small handbell rung rapidly", 1.5, |s: &mut Synth| {
        let t = s.times_jittered(0.09, 0.2);
        struck(s, &t, &modes_at(&CHURCH_BELL, 1100.0, 0.25), 0.4)
    });
    atom!(v, "bells", "gong", "a deep shimmering gong", 3.0, |s: &mut Synth| {
        let modes: Vec<(f64, f64, f64)> = (0..40)
            .map(|k| (80.0 * (1.0 + k as f64 * 0.37 + 0.2 * s.u()), s.range(0.8, 2.5), 1.0 / (1.0 + 0.1 * k as f64)))
            .collect();
        let mut out = struck(s, &[0.0], &modes, 0.0);
        let roar = s.noise_band(200.0, 2500.0);
        add(&mut out, &s.shape(roar, |t| 0.05 * (-t / 1.0).exp()), 1.0);
        out
    });
    atom!(v, "bells", "doorbell_chime", "a two-tone doorbell chime (ding-dong)", 2.8, |s: &mut Synth| {
        let mut out = s.zeros();
        for base in [0.0, 1.4] {
            s.strike(&mut out, base, &modes_at(&CHIME_TUBE, 659.3, 1.0), 1.0);
            s.strike(&mut out, base + 0.55, &modes_at(&CHIME_TUBE, 523.3, 1.0), 1.0);
        }
        out
    });
    atom!(v, "bells", "wind_chimes", "tinkling wind chimes", 3.0, |s: &mut Synth| {
        let scale = [1047.0, 1175.0, 1319.0, 1568.0, 1760.0, 2093.0];
        let mut out = s.zeros();
        for t in s.times_poisson(9.0) {
            let f = scale[(s.u() * 6.0) as usize % 6];
            let g = s.range(0.4, 1.0);
            s.strike(&mut out, t, &modes_at(&CHIME_TUBE, f, 0.8), g);
        }
        out
    });
    atom!(v, "bells", "triangle_ting", "a bright triangle ting", 2.1, |s: &mut Synth| {
        let ratios: Vec<(f64, f64, f64)> =
            (1..12).map(|k| (k as f64 * 1.003f64.powi(k), 1.0 / (1.0 + 0.1 * k as f64), 1.0 / k as f64)).collect();
        let t = s.times_regular(0.35);
        struck(s, &t, &modes_at(&ratios, 1760.0, 0.8), 0.1)
    });
    atom!(v, "bells", "fire_alarm_bell", "a ringing electric fire-alarm bell", 2.0, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 20.0);
        struck(s, &t, &modes_at(&CHURCH_BELL, 900.0, 0.15), 0.15)
    });
    atom!(v, "bells", "bicycle_bell", "a bicycle bell trill", 2.1, |s: &mut Synth| {
        let t: Vec<f64> = s.times_regular(1.0 / 22.0).into_iter().filter(|t| t.rem_euclid(0.7) < 0.35).collect();
        struck(s, &t, &[(2300.0, 0.3, 1.0), (3350.0, 0.2, 0.6), (5100.0, 0.1, 0.3)], 0.3)
    });
    atom!(v, "bells", "cowbell_beat", "a cowbell struck in a steady beat", 1.6, |s: &mut Synth| {
        let t = s.times_regular(0.2);
        struck(s, &t, &[(562.0, 0.09, 1.0), (845.0, 0.08, 0.8), (1420.0, 0.05, 0.3)], 0.2)
    });
    atom!(v, "bells", "singing_bowl", "a humming singing bowl", 3.5, |s: &mut Synth| {
        let a = s.osc(|_| 220.0, &[(1.0, 1.0), (2.71, 0.4), (5.1, 0.15)]);
        let b = s.osc(|_| 221.3, &[(1.0, 1.0), (2.71, 0.4)]);
        s.shape(sum(&[(&a, 1.0), (&b, 0.8)]), |t| 0.7 + 0.3 * (2.0 * PI * 0.5 * t).sin())
    });
    atom!(v, "bells", "clock_chime_melody", "a grandfather-clock chime melody", 3.2, |s: &mut Synth| {
        let mut out = s.zeros();
        for (k, m) in [64.0, 60.0, 62.0, 55.0].iter().enumerate() {
            s.strike(&mut out, k as f64 * 0.8, &modes_at(&CHURCH_BELL, midi(*m), 0.9), 1.0);
        }
        out
    });
    atom!(v, "bells", "tuning_fork", "a pure ringing tuning fork", 3.0, |s: &mut Synth| {
        let t = s.times_regular(1.5);
        struck(s, &t, &[(440.0, 2.0, 1.0), (2640.0, 0.05, 0.2)], 0.0)
    });
}
