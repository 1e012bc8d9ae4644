//! Family `bubbling`: bubbling and water.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "bubbling", "bubbles_popping", "small bubbles popping", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(25.0) {
            let (f, g) = (s.range(700.0, 1800.0), s.range(0.4, 1.0));
            bubble(s, &mut out, t, f, 0.015, g);
        }
        let bed = s.noise_band(500.0, 2000.0);
        with_bed(out, &bed, -22.0)
    });
    atom!(v, "bubbling", "boiling_pot", "a pot of boiling water", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(120.0) {
            let (f, g) = (s.range(200.0, 900.0), s.range(0.3, 1.0));
            bubble(s, &mut out, t, f, 0.01, g);
        }
        let rumble = lp(s.brown(), 300.0, s.sr);
        with_bed(out, &rumble, -8.0)
    });
    atom!(v, "bubbling", "pouring_water", "water pouring into a glass", 2.5, |s: &mut Synth| {
        let mut x = s.noise_band(200.0, 6000.0);
        filter_sweep(&mut x, Kind::Band, s.sr, 5.0, |t| 300.0 * (1600.0f64 / 300.0).powf(t / 2.5));
        let mut gl = s.zeros();
        for t in s.times_poisson(30.0) {
            let f = 300.0 * (1600.0f64 / 300.0).powf(t / 2.5);
            bubble(s, &mut gl, t, f, 0.02, 0.5);
        }
        sum(&[(&normalised(x), 1.0), (&normalised(gl), 0.5)])
    });
    atom!(v, "bubbling", "dripping_tap", "a dripping tap", 2.1, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.35) {
            bubble(s, &mut out, t, 900.0, 0.04, 1.0);
            bubble(s, &mut out, t + 0.12, 1300.0, 0.03, 0.25);
        }
        let room = s.noise_band(400.0, 2000.0);
        with_bed(out, &room, -24.0)
    });
    atom!(v, "bubbling", "gurgling_drain", "a gurgling drain", 2.5, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(40.0) {
            let (f, g) = (s.range(120.0, 400.0), s.range(0.4, 1.0));
            bubble(s, &mut out, t, f, 0.03, g);
        }
        let slosh = lp(s.brown(), 500.0, s.sr);
        let slosh = s.shape(slosh, |t| 0.5 + 0.5 * (2.0 * PI * 3.0 * t).sin().abs());
        with_bed(out, &slosh, -6.0)
    });
    atom!(v, "bubbling", "underwater_rumble", "a muffled underwater rumble", 3.0, |s: &mut Synth| {
        let x = lp(lp(s.brown(), 250.0, s.sr), 250.0, s.sr);
        let x = s.shape(normalised(x), |t| 0.7 + 0.3 * (2.0 * PI * 0.4 * t).sin());
        let mut b = s.zeros();
        for t in s.times_poisson(3.0) {
            bubble(s, &mut b, t, 150.0, 0.05, 1.0);
        }
        sum(&[(&x, 1.0), (&b, 0.5)])
    });
    atom!(v, "bubbling", "straw_bubbling", "blowing bubbles through a straw", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_jittered(1.0 / 14.0, 0.15) {
            let f = s.range(250.0, 350.0);
            bubble(s, &mut out, t, f, 0.03, 1.0);
        }
        let air = s.noise_band(100.0, 800.0);
        with_bed(out, &air, -12.0)
    });
}
