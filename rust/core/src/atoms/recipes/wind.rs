//! Family `wind`: wind-like noise textures.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "wind", "wind_howl_low", "a low howling wind", 3.5, |s: &mut Synth| {
        let mut x = s.white();
        filter_sweep(&mut x, Kind::Band, s.sr, 6.0, |t| {
            350.0 + 150.0 * (2.0 * PI * 0.4 * t).sin() + 60.0 * (2.0 * PI * 1.1 * t).sin()
        });
        s.shape(x, |t| 0.6 + 0.4 * (2.0 * PI * 0.3 * t).sin())
    });
    atom!(v, "wind", "wind_whistle_high", "a high whistling wind", 3.5, |s: &mut Synth| {
        let mut x = s.white();
        filter_sweep(&mut x, Kind::Band, s.sr, 12.0, |t| {
            1800.0 + 500.0 * (2.0 * PI * 0.35 * t).sin() + 150.0 * (2.0 * PI * 1.3 * t).sin()
        });
        s.shape(x, |t| 0.6 + 0.4 * (2.0 * PI * 0.4 * t).sin())
    });
    atom!(v, "wind", "breeze_rustle", "a soft rustling breeze", 3.0, |s: &mut Synth| {
        let air = s.noise_band(2000.0, 7000.0);
        let air = s.shape(air, |t| 0.6 + 0.4 * (2.0 * PI * 0.5 * t).sin());
        let t = s.times_poisson(40.0);
        let leaves = bp(s.bursts(&t, 0.005, None), 4000.0, 1.0, s.sr);
        sum(&[(&normalised(air), 1.0), (&normalised(leaves), 0.5)])
    });
    atom!(v, "wind", "gale", "a roaring gale", 3.5, |s: &mut Synth| {
        let mut x = s.white();
        filter_sweep(&mut x, Kind::Low, s.sr, 1.0, |t| 900.0 + 600.0 * (2.0 * PI * 0.45 * t).sin());
        s.shape(x, |t| 0.5 + 0.5 * (0.5 + 0.5 * (2.0 * PI * 0.45 * t).sin()).powi(2))
    });
    atom!(v, "wind", "white_noise", "steady white-noise hiss", 2.0, |s: &mut Synth| s.white());
    atom!(v, "wind", "brown_noise", "a deep rumbling noise", 2.0, |s: &mut Synth| lp(s.brown(), 300.0, s.sr));
}
