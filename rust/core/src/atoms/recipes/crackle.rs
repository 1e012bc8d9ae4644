//! Family `crackle`: crackle.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "crackle", "fire_crackle", "a crackling fire", 3.0, |s: &mut Synth| {
        let roar =
            sum(&[(&normalised(lp(s.brown(), 500.0, s.sr)), 1.0), (&normalised(s.noise_band(200.0, 1500.0)), 0.4)]);
        let t = s.times_poisson(15.0);
        let g: Vec<f64> = t.iter().map(|_| s.range(0.3, 1.0)).collect();
        let pops = hp(s.bursts(&t, 0.002, Some(&g)), 800.0, s.sr);
        with_bed(pops, &roar, -6.0)
    });
    atom!(v, "crackle", "vinyl_crackle", "vinyl record crackle", 3.6, |s: &mut Synth| {
        let t = s.times_poisson(30.0);
        let g: Vec<f64> = t.iter().map(|_| s.range(0.1, 1.0).powi(2)).collect();
        let clicks = s.bursts(&t, 0.0006, Some(&g));
        let mut hiss = s.noise_band(1000.0, 8000.0);
        let mut thump = s.zeros();
        for t in s.times_regular(1.8) {
            drum_hit(s, &mut thump, t, 40.0, 60.0, 0.08, 1.0);
        }
        add(&mut hiss, &normalised(thump), 0.5);
        with_bed(clicks, &hiss, -10.0)
    });
    atom!(v, "crackle", "frying_sizzle", "sizzling in a frying pan", 2.5, |s: &mut Synth| {
        let t = s.times_poisson(900.0);
        let g: Vec<f64> = t.iter().map(|_| s.range(0.0, 1.0).powi(3)).collect();
        let sizzle = hp(s.bursts(&t, 0.0015, Some(&g)), 2500.0, s.sr);
        let hiss = s.noise_band(3000.0, 8000.0);
        with_bed(sizzle, &hiss, -6.0)
    });
    atom!(v, "crackle", "radio_static", "crackling radio static", 2.5, |s: &mut Synth| {
        let x = bp(s.white(), 1800.0, 0.6, s.sr);
        let levels: Vec<f64> = (0..200).map(|_| s.range(0.2, 1.0)).collect();
        s.shape(x, move |t| levels[((t / 0.02) as usize).min(199)])
    });
    atom!(v, "crackle", "popcorn_popping", "popcorn popping", 2.5, |s: &mut Synth| {
        let t = s.times_poisson(10.0);
        let pops = lp(hp(s.bursts(&t, 0.004, None), 400.0, s.sr), 3000.0, s.sr);
        let res = struck(s, &t, &[(700.0, 0.02, 1.0)], 0.5);
        let x = sum(&[(&pops, 1.0), (&res, 0.5)]);
        let sizzle = s.noise_band(2000.0, 6000.0);
        with_bed(x, &sizzle, -18.0)
    });
    atom!(v, "crackle", "crumpling_paper", "crumpling paper", 2.0, |s: &mut Synth| {
        let t = s.times_poisson(200.0);
        let g: Vec<f64> =
            t.iter().map(|t| (0.3 + 0.7 * (2.0 * PI * 1.7 * t).sin().abs()) * s.range(0.2, 1.0)).collect();
        let x = bp(s.bursts(&t, 0.003, Some(&g)), 3000.0, 0.8, s.sr);
        let bed = s.noise_band(1500.0, 5000.0);
        with_bed(x, &bed, -18.0)
    });
    atom!(v, "crackle", "electric_arc", "a buzzing electric arc", 2.0, |s: &mut Synth| {
        let buzz = clip(normalised(s.osc(|_| 50.0, &square(80))), 2.0);
        let sizzle = s.noise_band(2000.0, 8000.0);
        let flick: Vec<f64> = (0..200).map(|_| s.range(0.3, 1.0)).collect();
        let sizzle = s.shape(sizzle, move |t| flick[((t / 0.01) as usize).min(199)]);
        sum(&[(&buzz, 1.0), (&normalised(sizzle), 0.8)])
    });
    atom!(v, "crackle", "ice_cracking", "cracking ice", 2.5, |s: &mut Synth| {
        let t = s.times_poisson(5.0);
        let mut creak = s.zeros();
        for at in &t {
            let f = s.range(100.0, 300.0);
            s.strike(&mut creak, *at, &[(f, 0.1, 1.0), (f * 2.3, 0.05, 0.5)], 1.0);
        }
        let cracks = hp(s.bursts(&t, 0.004, None), 1500.0, s.sr);
        let x = sum(&[(&creak, 1.0), (&cracks, 0.7)]);
        let bed = lp(s.brown(), 400.0, s.sr);
        with_bed(x, &bed, -16.0)
    });
}
