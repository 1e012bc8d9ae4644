//! Family `chirps`: chirps and calls.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "chirps", "bird_chirps", "high bird-like chirps", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_jittered(0.09, 0.2) {
            let f = s.range(4800.0, 5600.0);
            chirp(s, &mut out, t, (f, f * 0.6), 0.06, 1.0, &sine());
        }
        out
    });
    atom!(v, "chirps", "bird_trill", "a warbling bird trill", 1.8, |s: &mut Synth| {
        let x = s.osc(|t| 3400.0 + 600.0 * (2.0 * PI * 22.0 * t).sin(), &sine());
        s.shape(x, |t| 0.5 + 0.5 * (2.0 * PI * 11.0 * t).sin().abs())
    });
    atom!(v, "chirps", "crickets", "chirping crickets", 2.4, |s: &mut Synth| {
        let x = s.osc(|_| 4600.0, &[(1.0, 1.0), (2.0, 0.2)]);
        let x = s.shape(x, |t| (0.5 + 0.5 * (2.0 * PI * 30.0 * t).sin()).powi(4));
        gated(s, x, 0.3, 0.85, 0.01, 0.05)
    });
    atom!(v, "chirps", "cicada_drone", "a loud buzzing cicada", 3.0, |s: &mut Synth| {
        let x = bp(s.white(), 5500.0, 4.0, s.sr);
        s.shape(x, |t| (0.3 + 0.7 * (2.0 * PI * 120.0 * t).sin().abs()) * (0.6 + 0.4 * (PI * t / 3.0).sin()))
    });
    atom!(v, "chirps", "frog_croaks", "croaking frogs", 2.4, |s: &mut Synth| {
        let x = s.osc(|t| 180.0 - 20.0 * t.rem_euclid(0.4), &saw(30));
        let x = s.shape(x, |t| 0.3 + 0.7 * (0.5 + 0.5 * (2.0 * PI * 18.0 * t).sin()).powi(2));
        let x = formants(s, &x, &[(600.0, 2.0, 1.0), (1400.0, 3.0, 0.3)]);
        gated(s, x, 0.4, 0.75, 0.02, 0.04)
    });
    atom!(v, "chirps", "owl_hoots", "an owl-like hooting", 2.7, |s: &mut Synth| {
        let x = s.osc(|t| 380.0 - 40.0 * (t.rem_euclid(0.45) / 0.35).min(1.0), &[(1.0, 1.0), (2.0, 0.1)]);
        let breath = s.noise_band(300.0, 1500.0);
        let x = with_bed(x, &breath, -20.0);
        gated(s, x, 0.45, 0.8, 0.06, 0.05)
    });
    atom!(v, "chirps", "cuckoo_call", "a cuckoo call", 1.4, |s: &mut Synth| {
        let f = |t: f64| if t.rem_euclid(0.7) < 0.3 { 700.0 } else { 560.0 };
        let x = s.osc(f, &[(1.0, 1.0), (2.0, 0.15), (3.0, 0.05)]);
        s.shape(x, |t| {
            let p = t.rem_euclid(0.7);
            let q = if p < 0.3 { p } else { p - 0.3 };
            0.05 + 0.95 * (-q / 0.15).exp() * (q / 0.01).min(1.0)
        })
    });
    atom!(v, "chirps", "laser_zaps", "sci-fi laser zaps", 1.5, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.15) {
            chirp(s, &mut out, t, (3500.0, 250.0), 0.16, 1.0, &saw(8));
        }
        out
    });
    atom!(v, "chirps", "sonar_ping", "a sonar ping with echoes", 2.4, |s: &mut Synth| {
        let mut t = Vec::new();
        let mut g = Vec::new();
        for c in s.times_regular(1.2) {
            for (k, d) in [0.0, 0.3, 0.6, 0.9].iter().enumerate() {
                t.push(c + d);
                g.push(0.45f64.powi(k as i32));
            }
        }
        let mut out = s.zeros();
        for (t, g) in t.iter().zip(&g) {
            s.strike(&mut out, *t, &[(1500.0, 0.35, 1.0)], *g);
        }
        out
    });
    atom!(v, "chirps", "upward_chirps", "rapid upward electronic chirps", 1.2, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.08) {
            chirp(s, &mut out, t, (300.0, 2500.0), 0.08, 1.0, &[(1.0, 1.0), (2.0, 0.3)]);
        }
        out
    });
    atom!(v, "chirps", "cartoon_boing", "a cartoon spring boing", 2.4, |s: &mut Synth| {
        let x = s.osc(
            |t| {
                let p = t.rem_euclid(0.8);
                220.0 * (1.0 + 0.35 * (2.0 * PI * 13.0 * p).sin() * (-p / 0.4).exp())
            },
            &saw(10),
        );
        s.shape(lp(x, 2500.0, s.sr), |t| 0.1 + 0.9 * (-t.rem_euclid(0.8) / 0.35).exp())
    });
    atom!(v, "chirps", "duck_quacks", "quacking duck-like honks", 2.24, |s: &mut Synth| {
        let x = s.osc(|t| 260.0 - 60.0 * (t.rem_euclid(0.28) / 0.18).min(1.0), &saw(30));
        let x = formants(s, &x, &[(1100.0, 3.0, 1.0), (2400.0, 4.0, 0.6)]);
        gated(s, x, 0.28, 0.65, 0.01, 0.04)
    });
}
