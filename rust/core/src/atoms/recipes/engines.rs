//! Family `engines`: engines, motors and hums.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "engines", "engine_idle", "a low engine idling rumble", 3.0, |s: &mut Synth| engine(
        s,
        |t| 26.0 + 0.8 * (2.0 * PI * 0.7 * t).sin(),
        500.0,
        0.3
    ));
    atom!(v, "engines", "engine_revving", "an engine revving up and down", 2.5, |s: &mut Synth| {
        engine(s, |t| 30.0 + 65.0 * (0.5 - 0.5 * (2.0 * PI * t / 2.5).cos()), 1500.0, 0.3)
    });
    atom!(v, "engines", "moped_engine", "a high-pitched buzzing moped engine", 2.5, |s: &mut Synth| engine(
        s,
        |t| 110.0 + 3.0 * (2.0 * PI * 0.5 * t).sin(),
        3500.0,
        0.2
    ));
    atom!(v, "engines", "diesel_truck", "a heavy diesel truck rumble", 3.0, |s: &mut Synth| engine(
        s,
        |_| 16.0,
        350.0,
        0.8
    ));
    atom!(v, "engines", "mains_hum", "a low electrical mains hum", 2.0, |s: &mut Synth| {
        // Mains hum: 50 Hz plus the buzzy odd harmonics of magnetised iron.
        let mut h = vec![(1.0, 1.0), (2.0, 0.6)];
        h.extend((3..=21).step_by(2).map(|k| (k as f64, 0.35 / (k as f64).sqrt())));
        s.osc(|_| 50.0, &h)
    });
    atom!(v, "engines", "transformer_buzz", "a harsh buzzing electrical transformer", 2.0, |s: &mut Synth| {
        let x = s.osc(|_| 100.0, &saw(40));
        hp(clip(x, 3.0), 150.0, s.sr)
    });
    atom!(v, "engines", "fan_whir", "a whirring electric fan", 3.0, |s: &mut Synth| {
        let nz = s.noise_band(100.0, 3000.0);
        let air = s.shape(nz, |t| 1.0 + 0.4 * (2.0 * PI * 24.0 * t).sin());
        let motor = s.osc(|_| 380.0, &sine());
        sum(&[(&air, 1.0), (&motor, 0.05)])
    });
    atom!(v, "engines", "jet_whine", "a high jet-turbine whine", 3.0, |s: &mut Synth| {
        let roar = s.noise_band(200.0, 1500.0);
        let whine = s.osc(vibrato(3600.0, 0.003, 0.3), &[(1.0, 1.0), (1.5, 0.5)]);
        sum(&[(&normalised(roar), 1.0), (&normalised(whine), 0.8)])
    });
    atom!(v, "engines", "helicopter", "a helicopter rotor thumping", 2.0, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 7.0);
        let thumps = lp(s.bursts(&t, 0.03, None), 600.0, s.sr);
        let turbine = s.noise_band(800.0, 4000.0);
        with_bed(thumps, &turbine, -12.0)
    });
    atom!(v, "engines", "steam_train", "a steam train chugging", 2.7, |s: &mut Synth| {
        let t = s.times_regular(1.0 / 4.5);
        let gains: Vec<f64> = (0..t.len()).map(|k| [1.0, 0.6, 0.8, 0.6][k % 4]).collect();
        let chuffs = bp(s.bursts(&t, 0.07, Some(&gains)), 1500.0, 0.8, s.sr);
        let rumble = lp(s.brown(), 200.0, s.sr);
        with_bed(chuffs, &rumble, -10.0)
    });
    atom!(v, "engines", "vacuum_cleaner", "a droning vacuum cleaner", 3.0, |s: &mut Synth| {
        let air = s.noise_band(600.0, 6000.0);
        let res = bp(air.clone(), 1200.0, 3.0, s.sr);
        let motor = lp(s.osc(|_| 420.0, &saw(8)), 2000.0, s.sr);
        sum(&[(&air, 1.0), (&res, 1.5), (&motor, 0.1)])
    });
    atom!(v, "engines", "chainsaw", "a revving chainsaw", 2.0, |s: &mut Synth| {
        let x = engine(s, |t| 130.0 + 50.0 * (0.5 - 0.5 * (2.0 * PI * t / 1.0).cos()), 4000.0, 0.6);
        clip(normalised(x), 1.5)
    });
    atom!(v, "engines", "electric_drill", "a whirring electric drill", 2.0, |s: &mut Synth| {
        let x = s.osc(vibrato(380.0, 0.004, 4.0), &square(15));
        let hiss = s.noise_band(2000.0, 7000.0);
        with_bed(lp(x, 3000.0, s.sr), &hiss, -15.0)
    });
    atom!(v, "engines", "washing_machine", "a spinning washing-machine drum", 3.3, |s: &mut Synth| {
        let rumble = lp(s.brown(), 400.0, s.sr);
        let rumble = s.shape(rumble, |t| 1.0 + 0.6 * (2.0 * PI * 1.2 * t).sin());
        let hum = s.osc(|_| 60.0, &[(1.0, 1.0), (2.0, 0.3)]);
        sum(&[(&normalised(rumble), 1.0), (&hum, 0.3)])
    });
}
