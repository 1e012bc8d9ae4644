//! Family `ticks`: ticks, knocks and clicks.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "ticks", "clock_tick_slow", "a slow ticking clock", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for (k, t) in s.times_regular(0.5).into_iter().enumerate() {
            let f = if k % 2 == 0 { 2000.0 } else { 1600.0 };
            s.strike(&mut out, t, &[(f, 0.02, 1.0), (400.0, 0.12, 0.3)], 1.0);
        }
        let whirr = s.noise_band(2000.0, 4000.0);
        let whirr = s.shape(whirr, |t| 0.5 + 0.5 * (2.0 * PI * 8.0 * t).sin());
        with_bed(out, &whirr, -24.0)
    });
    atom!(v, "ticks", "clock_tick_fast", "rapid clock ticks", 1.5, |s: &mut Synth| {
        let t = s.times_regular(0.1);
        struck(s, &t, &[(2500.0, 0.012, 1.0), (900.0, 0.03, 0.4)], 0.1)
    });
    atom!(v, "ticks", "door_knock", "knocking on a wooden door", 2.16, |s: &mut Synth| {
        let t: Vec<f64> = s.times_regular(0.72).into_iter().flat_map(|c| [c, c + 0.14, c + 0.28]).collect();
        let body =
            struck(s, &t, &[(110.0, 0.06, 1.0), (220.0, 0.04, 0.7), (410.0, 0.03, 0.5), (650.0, 0.02, 0.3)], 0.1);
        let tap = lp(s.bursts(&t, 0.01, None), 1500.0, s.sr);
        let room = lp(s.bursts(&t, 0.15, None), 600.0, s.sr);
        let x = sum(&[(&body, 1.0), (&tap, 0.5), (&room, 0.06)]);
        let bed = s.noise_band(100.0, 600.0);
        with_bed(x, &bed, -24.0)
    });
    atom!(v, "ticks", "woodpecker", "a woodpecker drumming", 1.5, |s: &mut Synth| {
        let t: Vec<f64> = s.times_regular(0.05).into_iter().filter(|t| t.rem_euclid(0.75) < 0.6).collect();
        let gains: Vec<f64> = t.iter().map(|t| 1.0 - 0.6 * t.rem_euclid(0.75) / 0.6).collect();
        let mut out = s.zeros();
        for (t, g) in t.iter().zip(&gains) {
            s.strike(&mut out, *t, &[(1200.0, 0.02, 1.0), (2500.0, 0.01, 0.5)], *g);
        }
        let bed = s.noise_band(500.0, 2000.0);
        with_bed(out, &bed, -26.0)
    });
    atom!(v, "ticks", "typewriter", "clattering typewriter keys", 2.4, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(11.0) {
            let f = s.range(2000.0, 4000.0);
            s.strike(&mut out, t, &[(f, 0.01, 1.0), (200.0, 0.03, 0.6), (f * 1.7, 0.006, 0.5)], 1.0);
        }
        s.strike(&mut out, 1.8, &[(2200.0, 0.4, 0.6)], 1.0);
        let bed = s.noise_band(200.0, 2000.0);
        with_bed(out, &bed, -24.0)
    });
    atom!(v, "ticks", "keyboard_typing", "typing on a computer keyboard", 2.0, |s: &mut Synth| {
        let t = s.times_poisson(9.0);
        let clicks = bp(s.bursts(&t, 0.008, None), 2500.0, 1.0, s.sr);
        let thud = struck(s, &t, &[(300.0, 0.02, 1.0)], 0.5);
        let x = sum(&[(&clicks, 1.0), (&thud, 0.3)]);
        let bed = s.noise_band(200.0, 1000.0);
        with_bed(x, &bed, -24.0)
    });
    atom!(v, "ticks", "geiger_counter", "crackling Geiger-counter clicks", 2.0, |s: &mut Synth| {
        let t = s.times_poisson(35.0);
        let clicks = s.bursts(&t, 0.002, None);
        let hiss = s.noise_band(1000.0, 6000.0);
        with_bed(clicks, &hiss, -18.0)
    });
    atom!(v, "ticks", "ratchet", "a clicking ratchet", 1.5, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 28.0);
        struck(s, &t, &[(3000.0, 0.006, 1.0), (700.0, 0.015, 0.5)], 0.2)
    });
    atom!(v, "ticks", "hammering_nail", "hammering a nail", 2.0, |s: &mut Synth| {
        let t = s.times_regular(0.33);
        let ring =
            struck(s, &t, &[(2100.0, 0.15, 1.0), (3300.0, 0.1, 0.6), (5200.0, 0.06, 0.3), (150.0, 0.03, 0.8)], 0.1);
        let bed = s.noise_band(1500.0, 4000.0);
        with_bed(ring, &bed, -28.0)
    });
    atom!(v, "ticks", "footsteps", "footsteps on a hard floor", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        let steps = s.times_regular(0.5);
        for t in &steps {
            drum_hit(s, &mut out, *t, 90.0, 120.0, 0.03, 1.0);
        }
        let heel: Vec<f64> = steps.iter().flat_map(|t| [*t, t + 0.06]).collect();
        let click = lp(s.bursts(&heel, 0.008, None), 3000.0, s.sr);
        let x = sum(&[(&out, 1.0), (&click, 0.6)]);
        let room = lp(s.bursts(&steps, 0.3, None), 800.0, s.sr);
        with_bed(x, &room, -14.0)
    });
    atom!(v, "ticks", "woodblock_beat", "a wooden block struck in a steady beat", 2.0, |s: &mut Synth| {
        let t = s.times_regular(0.25);
        let x = struck(s, &t, &[(800.0, 0.05, 1.0), (2200.0, 0.02, 0.4)], 0.0);
        let bed = s.noise_band(500.0, 1500.0);
        with_bed(x, &bed, -26.0)
    });
    atom!(v, "ticks", "ping_pong_bounce", "a ping-pong ball bouncing faster and faster", 2.0, |s: &mut Synth| {
        let mut t = Vec::new();
        let (mut at, mut gap) = (0.0, 0.3);
        while at < s.dur() {
            t.push(at);
            at += gap;
            gap *= 0.85;
            if gap < 0.03 {
                gap = 0.3;
            }
        }
        let x = struck(s, &t, &[(4200.0, 0.004, 1.0), (1100.0, 0.008, 0.6)], 0.1);
        let bed = s.noise_band(800.0, 3000.0);
        with_bed(x, &bed, -22.0)
    });
    atom!(v, "ticks", "camera_shutter", "a camera shutter firing in bursts", 1.6, |s: &mut Synth| {
        let c: Vec<f64> = s.times_regular(0.2).into_iter().flat_map(|t| [t, t + 0.04]).collect();
        let clicks = hp(s.bursts(&c, 0.004, None), 1500.0, s.sr);
        let whirr = s.noise_band(500.0, 3000.0);
        let whirr = s.shape(whirr, |t| if t.rem_euclid(0.2) < 0.1 { 1.0 } else { 0.3 });
        with_bed(clicks, &whirr, -12.0)
    });
    atom!(v, "ticks", "bamboo_knocks", "hollow bamboo knocking", 2.0, |s: &mut Synth| {
        let t = s.times_jittered(0.16, 0.3);
        let x = struck(s, &t, &[(480.0, 0.05, 1.0), (1350.0, 0.03, 0.5)], 0.5);
        let bed = s.noise_band(300.0, 1200.0);
        with_bed(x, &bed, -24.0)
    });
}
