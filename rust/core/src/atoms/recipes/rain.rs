//! Family `rain`: rain and water-like noise textures.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "rain", "rain_light", "light rain pattering", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(80.0) {
            let f = s.range(2500.0, 6000.0);
            let g = s.range(0.2, 1.0);
            bubble(s, &mut out, t, f, 0.004, g);
        }
        let hiss = s.noise_band(4000.0, 8000.0);
        with_bed(out, &hiss, -10.0)
    });
    atom!(v, "rain", "rain_heavy", "heavy rain pouring down", 3.0, |s: &mut Synth| {
        let roar = s.noise_band(200.0, 8000.0);
        let roar = lp(roar, 3000.0, s.sr);
        let t = s.times_poisson(400.0);
        let drops = hp(s.bursts(&t, 0.002, None), 1000.0, s.sr);
        sum(&[(&normalised(roar), 1.0), (&normalised(drops), 0.6)])
    });
    atom!(v, "rain", "rain_tin_roof", "rain drumming on a tin roof", 3.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(60.0) {
            let f = s.range(1200.0, 3000.0);
            let g = s.range(0.3, 1.0);
            s.strike(&mut out, t, &[(f, 0.05, 1.0), (f * 1.41, 0.03, 0.5)], g);
        }
        let nz = s.noise_band(500.0, 5000.0);
        with_bed(out, &nz, -8.0)
    });
    atom!(v, "rain", "waterfall", "a roaring waterfall", 3.0, |s: &mut Synth| {
        let a = lp(s.brown(), 800.0, s.sr);
        let b = s.noise_band(100.0, 2000.0);
        let x = sum(&[(&normalised(a), 1.0), (&normalised(b), 0.7)]);
        s.shape(x, |t| 1.0 + 0.15 * (2.0 * PI * 0.6 * t).sin())
    });
    atom!(v, "rain", "ocean_waves", "ocean waves washing in and out", 4.0, |s: &mut Synth| {
        let mut x = s.noise_band(150.0, 7000.0);
        // Start a quarter-cycle into the swell with a raised floor: a trimmed event (as short as
        // 0.6 s) must still be clearly audible, not the quiet trough between two waves.
        let swell = |t: f64| 0.5 - 0.5 * (2.0 * PI * (t + 1.0) / 4.0).cos();
        filter_sweep(&mut x, Kind::Low, s.sr, 0.707, |t| 900.0 + 2600.0 * swell(t));
        s.shape(x, |t| 0.35 + 0.65 * swell(t).powi(2))
    });
    atom!(v, "rain", "shower_hiss", "a running shower hiss", 3.0, |s: &mut Synth| {
        let hiss = bp(s.white(), 4500.0, 0.7, s.sr);
        let t = s.times_poisson(150.0);
        let spatter = bp(s.bursts(&t, 0.003, None), 2500.0, 1.0, s.sr);
        sum(&[(&normalised(hiss), 1.0), (&normalised(spatter), 0.4)])
    });
    atom!(v, "rain", "hail", "hail clattering down", 2.5, |s: &mut Synth| {
        let t = s.times_poisson(70.0);
        let hits = hp(s.bursts(&t, 0.003, None), 1500.0, s.sr);
        let knock = struck(s, &t, &[(900.0, 0.02, 1.0)], 0.6);
        let x = sum(&[(&hits, 1.0), (&knock, 0.5)]);
        let ground = s.noise_band(300.0, 3000.0);
        with_bed(x, &ground, -14.0)
    });
    atom!(v, "rain", "thunder_rumble", "a distant thunder rumble", 4.0, |s: &mut Synth| {
        let x = lp(s.brown(), 150.0, s.sr);
        let crack = lp(s.bursts(&[0.0, 0.3, 1.1], 0.4, Some(&[1.0, 0.6, 0.5])), 400.0, s.sr);
        let x = sum(&[(&normalised(x), 1.0), (&normalised(crack), 0.8)]);
        s.shape(x, |t| 0.3 + 0.7 * (-((t - 1.2) / 1.2).powi(2)).exp())
    });
}
