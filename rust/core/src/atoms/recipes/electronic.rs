//! Family `electronic`: electronic and sci-fi.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "electronic", "ufo_warble", "a wobbling sci-fi warble", 2.5, |s: &mut Synth| {
        s.osc(
            |t| 600.0 + 250.0 * (2.0 * PI * 7.0 * t).sin() + 100.0 * (2.0 * PI * 0.5 * t).sin(),
            &[(1.0, 1.0), (2.0, 0.2)],
        )
    });
    atom!(v, "electronic", "robot_bleeps", "random robotic bleeps and bloops", 2.1, |s: &mut Synth| {
        let notes: Vec<f64> = (0..30).map(|_| 300.0 * (2000.0f64 / 300.0).powf(s.u())).collect();
        let x = s.osc(move |t| notes[((t / 0.07) as usize).min(29)], &square(7));
        gated(s, x, 0.07, 0.8, 0.003, 0.05)
    });
    atom!(v, "electronic", "theremin", "an eerie theremin melody", 2.4, |s: &mut Synth| {
        let notes: Vec<f64> = [69.0, 72.0, 76.0, 74.0, 72.0, 67.0].iter().map(|m| midi(*m)).collect();
        let m = melody(notes, 0.4, 0.25);
        s.osc(move |t| m(t) * (1.0 + 0.012 * (2.0 * PI * 6.0 * t).sin()), &[(1.0, 1.0), (2.0, 0.05)])
    });
    atom!(v, "electronic", "power_up", "a rising power-up whine", 1.8, |s: &mut Synth| {
        let x = lp(s.osc(Synth::expo(150.0, 2500.0, 1.8), &saw(5)), 4000.0, s.sr);
        s.shape(x, |t| 0.7 + 0.3 * (2.0 * PI * 30.0 * t).sin())
    });
    atom!(v, "electronic", "power_down", "a falling power-down whine", 1.8, |s: &mut Synth| {
        let x = lp(s.osc(Synth::expo(2500.0, 150.0, 1.8), &saw(5)), 4000.0, s.sr);
        s.shape(x, |t| 0.7 + 0.3 * (2.0 * PI * 30.0 * t).sin())
    });
    atom!(v, "electronic", "sci_fi_hum", "a pulsing sci-fi engine hum", 3.0, |s: &mut Synth| {
        let mut x = s.osc(|_| 55.0, &saw(60));
        filter_sweep(&mut x, Kind::Low, s.sr, 4.0, |t| 200.0 + 600.0 * (0.5 + 0.5 * (2.0 * PI * 3.0 * t).sin()));
        x
    });
    atom!(v, "electronic", "glitch_stutter", "a glitchy digital stutter", 1.8, |s: &mut Synth| {
        let grains: Vec<(f64, bool)> = (0..60).map(|_| (200.0 * 20f64.powf(s.u()), s.u() < 0.4)).collect();
        let g2 = grains.clone();
        let tone = s.osc(move |t| grains[((t / 0.03) as usize).min(59)].0, &square(9));
        let nz = s.white();
        let x: Vec<f64> = tone
            .iter()
            .zip(&nz)
            .enumerate()
            .map(|(i, (a, b))| if g2[((i as f64 / s.sr / 0.03) as usize).min(59)].1 { *b } else { *a })
            .collect();
        // Bit-crush to 4 bits for the digital grit.
        x.into_iter().map(|v| (v * 4.0).round() / 4.0).collect()
    });
    atom!(v, "electronic", "record_scratch", "a DJ record scratch", 2.0, |s: &mut Synth| {
        let src_f = |t: f64| 500.0 * (1.0 + 0.8 * (2.0 * PI * 2.5 * t).sin());
        let tone = s.osc(src_f, &saw(20));
        let mut nz = s.white();
        filter_sweep(&mut nz, Kind::Band, s.sr, 2.0, move |t| 4.0 * src_f(t));
        let x = sum(&[(&normalised(tone), 1.0), (&normalised(nz), 0.6)]);
        s.shape(lp(x, 6000.0, s.sr), |t| 0.2 + 0.8 * (2.0 * PI * 2.5 * t).cos().abs())
    });
}
