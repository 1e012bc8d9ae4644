//! Where one thread's rendering time goes: mix + limit, 16-bit WAV encode and the file write,
//! each timed alone over the same clips, next to `render_corpus` on one thread, interleaved
//! round by round (min and median per clip).
//!
//!     cargo run --release -p reasonaudio-core --example render_profile [CLIPS] [ROUNDS]
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use reasonaudio_core::mix::{self, AtomBank, EventColumns, EventSpan, MixOptions};
use reasonaudio_core::wav::{self, AudioFormat};

const SR: u32 = 16_000;
const CLIP: i64 = 10 * SR as i64;

fn main() {
    let mut args = std::env::args().skip(1);
    let n_clips: usize = args.next().map_or(300, |a| a.parse().expect("CLIPS"));
    let rounds: usize = args.next().map_or(5, |a| a.parse().expect("ROUNDS"));
    let mut rng = Pcg64::seed_from_u64(1);
    let (mut audio, mut offsets) = (Vec::new(), vec![0u64]);
    for _ in 0..200 {
        let n = rng.gen_range(SR as usize / 2..4 * SR as usize);
        let f = rng.gen_range(0.01f32..0.3);
        audio.extend((0..n).map(|i| (i as f32 * f).sin() * 0.7));
        offsets.push(audio.len() as u64);
    }
    let (mut clip, mut atom, mut onset, mut length, mut gain_db) = (vec![], vec![], vec![], vec![], vec![]);
    for c in 0..n_clips {
        let k = rng.gen_range(2..=8);
        let mut ons: Vec<i64> = (0..k).map(|_| rng.gen_range(0..CLIP - SR as i64 / 2)).collect();
        ons.sort_unstable();
        for o in ons {
            clip.push(c as u32);
            atom.push(rng.gen_range(0..200u32));
            onset.push(o);
            length.push(rng.gen_range(SR as i64 / 2..=(CLIP - o).min(6 * SR as i64)).min(CLIP - o));
            gain_db.push(rng.gen_range(-12.0..6.0));
        }
    }
    let bank = AtomBank::new(&audio, &offsets).unwrap();
    let cols = EventColumns { clip: &clip, atom: &atom, onset: &onset, length: &length, gain_db: &gain_db };
    let opts = MixOptions::default();
    let lengths = vec![CLIP; n_clips];
    let bounds = cols.clip_bounds(n_clips).unwrap();
    let per_clip: Vec<Vec<EventSpan>> = (0..n_clips)
        .map(|c| {
            (bounds[c]..bounds[c + 1])
                .map(|r| EventSpan { atom: atom[r], onset: onset[r], length: length[r], gain_db: gain_db[r] })
                .collect()
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("reasonaudio-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths = mix::numbered_paths(&dir, "c", n_clips, AudioFormat::Wav16);
    let rendered: Vec<Vec<f32>> =
        per_clip.iter().map(|ev| mix::render_clip(&bank, ev, CLIP, &opts).unwrap().audio).collect();
    let mut bytes = Vec::new();
    wav::encode_wav16(&rendered[0], SR, &mut bytes).unwrap();
    let file = bytes.clone();

    let names = ["mix + limit (render_clip)", "16-bit WAV encode", "write (tmp + rename)", "render_corpus, 1 thread"];
    let mut times = vec![vec![]; names.len()];
    for _ in 0..rounds {
        let t = Instant::now();
        for ev in &per_clip {
            std::hint::black_box(mix::render_clip(&bank, ev, CLIP, &opts).unwrap());
        }
        times[0].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for x in &rendered {
            wav::encode_wav16(x, SR, &mut bytes).unwrap();
            std::hint::black_box(&bytes);
        }
        times[1].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for p in &paths {
            wav::write_atomic(p, &file).unwrap();
        }
        times[2].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        mix::render_corpus(&bank, &cols, &lengths, &paths, SR, AudioFormat::Wav16, &opts, 1).unwrap();
        times[3].push(t.elapsed().as_secs_f64());
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!("{n_clips} clips of 10 s at {SR} Hz, {} events; {rounds} rounds; ms per clip:", clip.len());
    for (name, t) in names.iter().zip(&mut times) {
        t.sort_by(f64::total_cmp);
        let (min, median) = (t[0], t[t.len() / 2]);
        println!("  {name:<28} min {:7.3}  median {:7.3}", 1e3 * min / n_clips as f64, 1e3 * median / n_clips as f64);
    }
}
