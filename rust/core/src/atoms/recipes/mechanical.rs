//! Family `mechanical`: mechanical friction and impacts.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "mechanical", "creaking_door", "a creaking door", 2.5, |s: &mut Synth| {
        let mut pulses = s.zeros();
        let mut ph = 0.0;
        for (i, p) in pulses.iter_mut().enumerate() {
            let t = i as f64 / s.sr;
            let rate = 40.0 + 80.0 * (PI * t / 2.5).sin() + 10.0 * (2.0 * PI * 3.0 * t).sin();
            ph += rate / s.sr;
            if ph >= 1.0 {
                ph -= 1.0;
                *p = 1.0;
            }
        }
        formants(s, &pulses, &[(600.0, 5.0, 1.0), (1400.0, 6.0, 0.8), (2900.0, 8.0, 0.4)])
    });
    atom!(v, "mechanical", "hand_saw", "a hand saw cutting wood", 2.0, |s: &mut Synth| {
        let x = bp(s.white(), 2500.0, 1.5, s.sr);
        s.shape(x, |t| 0.15 + 0.85 * (PI * t / 0.5).sin().abs() * (0.6 + 0.4 * (2.0 * PI * 200.0 * t).sin().abs()))
    });
    atom!(v, "mechanical", "zipper", "a zipper being pulled", 1.8, |s: &mut Synth| {
        let mut t = Vec::new();
        let mut at = 0.0;
        while at < s.dur() {
            t.push(at);
            // Each 0.45 s pull speeds up: the tooth rate rises from 40 to 140 per second.
            at += 1.0 / (40.0 + 100.0 * at.rem_euclid(0.45) / 0.45);
        }
        let teeth = bp(s.bursts(&t, 0.003, None), 1100.0, 2.0, s.sr);
        s.shape(teeth, |t| if t.rem_euclid(0.45) < 0.38 { 1.0 } else { 0.1 })
    });
    atom!(v, "mechanical", "sandpaper", "sandpaper scraping back and forth", 2.0, |s: &mut Synth| {
        let x = s.noise_band(1500.0, 8000.0);
        s.shape(x, |t| 0.15 + 0.85 * (2.0 * PI * 1.5 * t).sin().abs().sqrt())
    });
    atom!(v, "mechanical", "metal_clanks", "clanking metal", 2.5, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_jittered(0.16, 0.4) {
            let modes: Vec<(f64, f64, f64)> =
                (0..8).map(|_| (s.range(300.0, 4000.0), s.range(0.1, 0.3), s.range(0.2, 1.0))).collect();
            s.strike(&mut out, t, &modes, 1.0);
        }
        out
    });
    atom!(v, "mechanical", "spinning_coin", "a coin spinning and wobbling to rest", 2.0, |s: &mut Synth| {
        let ring = s.osc(|_| 5200.0, &[(1.0, 1.0), (1.48, 0.4)]);
        let mut ph = 0.0;
        let mut out = ring;
        for (i, v) in out.iter_mut().enumerate() {
            // Wobble rate accelerates from 8 to 40 Hz as the coin settles.
            let t = i as f64 / s.sr;
            ph += 2.0 * PI * (8.0 + 32.0 * (t / 2.0).powi(2)) / s.sr;
            *v *= 0.2 + 0.8 * ph.sin().abs();
        }
        let rattle = lp(s.noise_band(300.0, 2000.0), 2000.0, s.sr);
        with_bed(out, &rattle, -18.0)
    });
    atom!(v, "mechanical", "glass_clinks", "clinking glasses", 2.1, |s: &mut Synth| {
        let t = s.times_regular(0.3);
        struck(s, &t, &[(2800.0, 0.25, 1.0), (3900.0, 0.2, 0.5), (5600.0, 0.12, 0.3)], 0.3)
    });
    atom!(v, "mechanical", "coins_jingle", "jingling coins", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(50.0) {
            let (f, g) = (s.range(4000.0, 8000.0), s.range(0.2, 1.0));
            s.strike(&mut out, t, &[(f, 0.03, 1.0), (f * 1.37, 0.02, 0.5)], g);
        }
        let bed = s.noise_band(3000.0, 7000.0);
        with_bed(out, &bed, -22.0)
    });
    atom!(v, "mechanical", "chain_rattle", "a rattling chain", 2.0, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_poisson(70.0) {
            let (f, g) = (s.range(1500.0, 3500.0), (0.3 + 0.7 * (2.0 * PI * 3.0 * t).sin().abs()) * s.range(0.5, 1.0));
            s.strike(&mut out, t, &[(f, 0.015, 1.0), (f * 0.3, 0.02, 0.4)], g);
        }
        out
    });
    atom!(v, "mechanical", "heartbeat", "a thumping heartbeat", 2.55, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(0.85) {
            drum_hit(s, &mut out, t, 55.0, 70.0, 0.06, 1.0);
            drum_hit(s, &mut out, t + 0.18, 60.0, 80.0, 0.05, 0.7);
        }
        let body = lp(s.brown(), 120.0, s.sr);
        with_bed(out, &body, -14.0)
    });
    atom!(v, "mechanical", "cash_register", "a cash register ringing open", 2.4, |s: &mut Synth| {
        let mut out = s.zeros();
        for t in s.times_regular(1.2) {
            drum_hit(s, &mut out, t, 100.0, 140.0, 0.05, 0.8);
            s.strike(&mut out, t + 0.1, &[(2200.0, 0.5, 1.0), (3300.0, 0.3, 0.4)], 1.0);
        }
        let t = s.times_poisson(25.0);
        let coins = hp(s.bursts(&t, 0.01, None), 4000.0, s.sr);
        with_bed(out, &coins, -14.0)
    });
    atom!(v, "mechanical", "squeaky_wheel", "a squeaking wheel turning", 2.0, |s: &mut Synth| {
        let x = s.osc(|t| 1700.0 + 400.0 * (t.rem_euclid(0.66) / 0.4).min(1.0), &saw(6));
        let x = bp(x, 2000.0, 2.0, s.sr);
        gated(s, x, 0.66, 0.6, 0.04, 0.04)
    });
    atom!(v, "mechanical", "squeaky_toy", "a squeaky rubber toy", 1.5, |s: &mut Synth| {
        let x = s.osc(|t| 1800.0 + 800.0 * (t.rem_euclid(0.25) / 0.15).min(1.0), &[(1.0, 1.0), (2.0, 0.5), (3.0, 0.3)]);
        gated(s, x, 0.25, 0.6, 0.02, 0.04)
    });
}
