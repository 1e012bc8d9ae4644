//! Family `buzzes`: buzzes.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "buzzes", "bee_buzz", "a buzzing bee", 2.5, |s: &mut Synth| {
        let x = s.osc(|t| 220.0 + 10.0 * (2.0 * PI * 8.0 * t).sin(), &saw(40));
        s.shape(lp(x, 3000.0, s.sr), |t| 0.8 + 0.2 * (2.0 * PI * 1.3 * t).sin())
    });
    atom!(v, "buzzes", "mosquito_whine", "a high whining mosquito", 2.5, |s: &mut Synth| {
        let x = s.osc(|t| 620.0 * (1.0 + 0.05 * (2.0 * PI * 0.7 * t).sin()), &saw(10));
        s.shape(hp(x, 400.0, s.sr), |t| 0.6 + 0.4 * (2.0 * PI * 0.7 * t).cos())
    });
    atom!(v, "buzzes", "fly_buzz", "a fly buzzing around", 3.0, |s: &mut Synth| {
        let (a, b) = (s.range(0.0, 6.0), s.range(0.0, 6.0));
        let x = s.osc(
            move |t| 150.0 + 25.0 * (2.0 * PI * 0.9 * t + a).sin() + 10.0 * (2.0 * PI * 2.3 * t + b).sin(),
            &saw(30),
        );
        s.shape(lp(x, 2500.0, s.sr), move |t| 0.25 + 0.75 * (0.5 + 0.5 * (2.0 * PI * 0.9 * t + a).sin()))
    });
    atom!(v, "buzzes", "electric_zaps", "crackling electric zaps", 2.0, |s: &mut Synth| {
        let t = s.times_poisson(12.0);
        let zaps = hp(s.bursts(&t, 0.03, None), 1000.0, s.sr);
        let buzz = s.osc(|_| 60.0, &saw(40));
        with_bed(zaps, &buzz, -12.0)
    });
    atom!(v, "buzzes", "electric_razor", "an electric razor buzz", 2.0, |s: &mut Synth| {
        let x = s.osc(|_| 120.0, &square(25));
        let nz = s.noise_band(4000.0, 8000.0);
        let nz = s.shape(nz, |t| (2.0 * PI * 120.0 * t).sin().abs());
        sum(&[(&normalised(x), 1.0), (&normalised(nz), 0.5)])
    });
    atom!(v, "buzzes", "neon_flicker", "a flickering neon-light buzz", 2.5, |s: &mut Synth| {
        let whine = s.osc(|_| 7800.0, &sine());
        let hum = s.osc(|_| 120.0, &[(1.0, 1.0), (3.0, 0.5), (5.0, 0.3)]);
        let flick: Vec<f64> = (0..40).map(|_| if s.u() < 0.3 { 0.3 } else { 1.0 }).collect();
        let x = sum(&[(&whine, 0.5), (&hum, 1.0)]);
        s.shape(x, move |t| flick[((t / 0.0625) as usize).min(39)])
    });
    atom!(v, "buzzes", "insect_swarm", "a swarm of buzzing insects", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for _ in 0..12 {
            let (f, r, p) = (s.range(180.0, 320.0), s.range(0.5, 3.0), s.range(0.0, 6.0));
            let x = s.osc(move |t| f * (1.0 + 0.04 * (2.0 * PI * r * t + p).sin()), &saw(20));
            add(&mut out, &x, 1.0);
        }
        lp(out, 3000.0, s.sr)
    });
    atom!(v, "buzzes", "dental_drill", "a high-pitched dental drill whine", 2.0, |s: &mut Synth| {
        let x = s.osc(vibrato(3100.0, 0.01, 7.0), &[(1.0, 1.0), (2.0, 0.3)]);
        let hiss = s.noise_band(5000.0, 8000.0);
        with_bed(x, &hiss, -12.0)
    });
}
