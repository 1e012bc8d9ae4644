//! Family `phone`: telephone tones.
use super::*;

pub(super) fn push(v: &mut Vec<Spec>) {
    atom!(v, "phone", "dial_tone", "a telephone dial tone", 2.0, |s: &mut Synth| {
        let a = s.osc(|_| 350.0, &sine());
        let b = s.osc(|_| 440.0, &sine());
        sum(&[(&a, 1.0), (&b, 1.0)])
    });
    atom!(v, "phone", "busy_signal", "a telephone busy signal", 2.0, |s: &mut Synth| {
        let a = s.osc(|_| 480.0, &sine());
        let b = s.osc(|_| 620.0, &sine());
        let x = gated(s, sum(&[(&a, 1.0), (&b, 1.0)]), 0.5, 0.5, 0.005, 0.0);
        let hiss = s.noise_band(300.0, 3400.0);
        with_bed(x, &hiss, -16.0)
    });
    atom!(v, "phone", "ringback_tone", "a telephone ringback tone", 2.5, |s: &mut Synth| {
        let a = s.osc(|_| 440.0, &sine());
        let b = s.osc(|_| 480.0, &sine());
        let x = gated(s, sum(&[(&a, 1.0), (&b, 1.0)]), 2.5, 0.8, 0.01, 0.0);
        let hiss = s.noise_band(300.0, 3400.0);
        with_bed(x, &hiss, -16.0)
    });
    atom!(v, "phone", "old_phone_ring", "an old telephone bell ringing", 2.8, |s: &mut Synth| {
        let t: Vec<f64> = s.times_regular(1.0 / 20.0).into_iter().filter(|t| t.rem_euclid(1.4) < 1.0).collect();
        let a = struck(s, &t, &modes_at(&CHURCH_BELL, 1250.0, 0.3), 0.2);
        let t2: Vec<f64> = t.iter().map(|t| t + 0.025).collect();
        let b = struck(s, &t2, &modes_at(&CHURCH_BELL, 1000.0, 0.3), 0.2);
        sum(&[(&a, 1.0), (&b, 1.0)])
    });
    atom!(v, "phone", "dtmf_dialing", "touch-tone keypad dialing", 1.56, |s: &mut Synth| {
        let rows = [697.0, 770.0, 852.0, 941.0];
        let cols = [1209.0, 1336.0, 1477.0];
        let digits: Vec<(f64, f64)> =
            (0..12).map(|_| (rows[(s.u() * 4.0) as usize % 4], cols[(s.u() * 3.0) as usize % 3])).collect();
        let d2 = digits.clone();
        let a = s.osc(move |t| digits[((t / 0.13) as usize).min(11)].0, &sine());
        let b = s.osc(move |t| d2[((t / 0.13) as usize).min(11)].1, &sine());
        gated(s, sum(&[(&a, 1.0), (&b, 1.0)]), 0.13, 0.7, 0.004, 0.03)
    });
    atom!(v, "phone", "modem_screech", "a dial-up modem screech", 3.0, |s: &mut Synth| {
        let syms: Vec<f64> = (0..1000).map(|_| if s.u() < 0.5 { 1200.0 } else { 2200.0 }).collect();
        let fsk = s.osc(
            move |t| {
                if t < 0.6 {
                    2100.0
                } else if t < 1.2 {
                    900.0 + 1500.0 * ((t - 0.6) / 0.6)
                } else {
                    syms[((t * 300.0) as usize) % 1000]
                }
            },
            &sine(),
        );
        let nz = s.noise_band(500.0, 4000.0);
        let nz = s.shape(nz, |t| if t < 1.2 { 0.05 } else { 0.5 });
        sum(&[(&fsk, 1.0), (&nz, 0.6)])
    });
    atom!(v, "phone", "fax_tone", "fax machine calling beeps", 1.8, |s: &mut Synth| {
        let x = gated(s, s.osc(|_| 1100.0, &sine()), 0.6, 0.5, 0.005, 0.0);
        let hiss = s.noise_band(300.0, 3400.0);
        with_bed(x, &hiss, -30.0)
    });
    atom!(v, "phone", "ringtone_melody", "a melodic electronic ringtone", 1.92, |s: &mut Synth| {
        let notes: Vec<f64> = [76.0, 79.0, 84.0, 79.0, 76.0, 72.0, 74.0, 79.0].iter().map(|m| midi(*m)).collect();
        note_train(s, &notes, 0.12, 0.1, &square(9))
    });
    atom!(v, "phone", "morse_code", "beeping Morse code over radio hiss", 2.4, |s: &mut Synth| {
        // "SOS": dit = 1 unit, dah = 3, gaps 1 (symbol) / 3 (letter); unit 60 ms.
        let pattern = "1010100011101110111000101010000000";
        let bits: Vec<bool> = pattern.chars().map(|c| c == '1').collect();
        let tone = s.osc(|_| 700.0, &sine());
        let n = bits.len();
        let keyed = s.shape(tone, move |t| if bits[((t / 0.06) as usize) % n] { 1.0 } else { 0.0 });
        let keyed = lp(keyed, 2000.0, s.sr);
        let hiss = s.noise_band(300.0, 3000.0);
        with_bed(keyed, &hiss, -14.0)
    });
    atom!(v, "phone", "phone_vibrate", "a phone vibrating on a table", 2.25, |s: &mut Synth| {
        let x = clip(normalised(s.osc(|t| 150.0 + 5.0 * (2.0 * PI * 3.0 * t).sin(), &square(30))), 1.5);
        let x = lp(x, 2500.0, s.sr);
        let x = gated(s, x, 0.75, 0.65, 0.02, 0.0);
        let hum = s.noise_band(100.0, 600.0);
        with_bed(x, &hum, -20.0)
    });
}
