//! Family `whistles`: whistles.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "whistles", "whistle_high", "a steady high whistle", 2.0, |s: &mut Synth| whistle(s, |_| 2600.0, 0.05));
    atom!(v, "whistles", "whistle_vibrato", "a high whistle with vibrato", 2.0, |s: &mut Synth| whistle(
        s,
        vibrato(2000.0, 0.045, 6.0),
        0.05
    ));
    atom!(v, "whistles", "slide_whistle_up", "a slide whistle rising in pitch", 1.8, |s: &mut Synth| whistle(
        s,
        Synth::expo(600.0, 2400.0, 1.8),
        0.08
    ));
    atom!(v, "whistles", "slide_whistle_down", "a slide whistle falling in pitch", 1.8, |s: &mut Synth| whistle(
        s,
        Synth::expo(2400.0, 600.0, 1.8),
        0.08
    ));
    atom!(v, "whistles", "referee_whistle", "a trilling referee whistle", 1.5, |s: &mut Synth| {
        let x = whistle(s, |t| 3000.0 + 150.0 * (2.0 * PI * 30.0 * t).sin().signum(), 0.15);
        s.shape(x, |t| 0.6 + 0.4 * (2.0 * PI * 30.0 * t).sin())
    });
    atom!(v, "whistles", "kettle_whistle", "a shrill boiling-kettle whistle", 2.5, |s: &mut Synth| {
        let x = whistle(s, vibrato(3400.0, 0.01, 3.0), 0.4);
        s.shape(x, |t| 0.8 + 0.2 * (2.0 * PI * 0.8 * t).sin())
    });
    atom!(v, "whistles", "whistle_low", "a low breathy whistle", 2.0, |s: &mut Synth| whistle(
        s,
        vibrato(750.0, 0.01, 4.0),
        0.5
    ));
    atom!(v, "whistles", "wolf_whistle", "a two-note wolf whistle", 2.4, |s: &mut Synth| {
        let f = |t: f64| {
            let p = t.rem_euclid(1.2);
            if p < 0.4 {
                800.0 * (2600.0f64 / 800.0).powf(p / 0.4)
            } else if p < 0.5 {
                2600.0
            } else {
                2200.0 * (700.0f64 / 2200.0).powf(((p - 0.5) / 0.7).min(1.0))
            }
        };
        let x = whistle(s, f, 0.1);
        gated(s, x, 1.2, 0.95, 0.03, 0.05)
    });
    atom!(v, "whistles", "whistled_tune", "a whistled tune", 2.0, |s: &mut Synth| {
        let notes: Vec<f64> = [79.0, 81.0, 83.0, 86.0, 84.0, 81.0, 79.0, 76.0].iter().map(|m| midi(*m)).collect();
        let m = melody(notes, 0.25, 0.03);
        whistle(s, move |t| m(t) * (1.0 + 0.01 * (2.0 * PI * 5.0 * t).sin()), 0.05)
    });
    atom!(v, "whistles", "train_whistle", "a steam-train whistle chord", 2.5, |s: &mut Synth| {
        let a = whistle(s, |_| 900.0, 0.3);
        let b = whistle(s, |_| 1130.0, 0.3);
        let c = whistle(s, |_| 1350.0, 0.3);
        sum(&[(&a, 1.0), (&b, 0.8), (&c, 0.7)])
    });
}
