//! Where one thread's rendering time goes: mix, limit + 16-bit WAV encode, sha256 and the file
//! write, each timed over the same clips with the clip's buffers in cache (as `render_corpus` has
//! them), next to `render_corpus` on one thread and the mix as it was before the event buffer and
//! the limiter pass went, interleaved round by round (min and median per clip).
//!
//!     cargo run --release -p reasonaudio-core --example render_profile [CLIPS] [ROUNDS]
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use reasonaudio_core::cancel::Cancel;
use reasonaudio_core::mix::{self, AtomBank, Curves, EventColumns, EventSpan, MixOptions};
use reasonaudio_core::scene::render::{self, Corpus, CorpusOptions, Renderer, Scratch};
use reasonaudio_core::wav::{self, AudioFormat};
use sha2::{Digest, Sha256};

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
    let corpus = Corpus::clean(bank, cols, &lengths);
    let renderer = Renderer::new(corpus, &opts).unwrap();
    let mut scratch = Scratch::default();
    let stats: Vec<_> = (0..n_clips).map(|c| renderer.mix(c, &mut scratch).unwrap()).collect();
    let file = renderer.encode(&mut scratch, AudioFormat::Wav16, stats[n_clips - 1].gain).unwrap().to_vec();
    let curves = Curves::new(opts).unwrap();
    let (mut event, mut clip_buf, mut bytes) = (Vec::new(), Vec::new(), Vec::new());

    // Every stage on one clip at a time, as render_corpus runs them (the clip's buffers stay in
    // cache), each stage timed alone over all clips: mix (zero, events, peak scan), encode with
    // the limiter's gain, sha256 of the bytes, the write; then the whole render_corpus on one
    // thread, and a two-pass pipeline (event buffer, then a separate limiter pass) built from the
    // public pieces for a same-run comparison.
    let names = [
        "mix + peak (Renderer::mix)",
        "mix + limit + encode",
        "  + sha256 of the bytes",
        "write (tmp + rename)",
        "render_corpus, 1 thread",
        "render_corpus + sha256, 1 thr",
        "before: mix, limit, encode",
        "mix, encode, write in a loop",
    ];
    let mut times = vec![vec![]; names.len()];
    for _ in 0..rounds {
        let t = Instant::now();
        for c in 0..n_clips {
            std::hint::black_box(renderer.mix(c, &mut scratch).unwrap());
        }
        times[0].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for c in 0..n_clips {
            let s = renderer.mix(c, &mut scratch).unwrap();
            std::hint::black_box(renderer.encode(&mut scratch, AudioFormat::Wav16, s.gain).unwrap());
        }
        times[1].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for c in 0..n_clips {
            let s = renderer.mix(c, &mut scratch).unwrap();
            let b = renderer.encode(&mut scratch, AudioFormat::Wav16, s.gain).unwrap();
            std::hint::black_box(Sha256::digest(b));
        }
        times[2].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for p in &paths {
            wav::write_atomic(p, &file).unwrap();
        }
        times[3].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let one = CorpusOptions { threads: 1, ..CorpusOptions::default() };
        render::render_corpus(&corpus, &paths, &opts, &one, Cancel::NEVER).unwrap();
        times[4].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let hashed = CorpusOptions { threads: 1, sha256: true, ..CorpusOptions::default() };
        render::render_corpus(&corpus, &paths, &opts, &hashed, Cancel::NEVER).unwrap();
        times[5].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for ev in &per_clip {
            before(&bank, ev, &curves, &mut event, &mut clip_buf);
            wav::encode_wav16(&clip_buf, SR, &mut bytes).unwrap();
            std::hint::black_box(&bytes);
        }
        times[6].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for (c, p) in paths.iter().enumerate() {
            let s = renderer.mix(c, &mut scratch).unwrap();
            wav::write_atomic(p, renderer.encode(&mut scratch, AudioFormat::Wav16, s.gain).unwrap()).unwrap();
        }
        times[7].push(t.elapsed().as_secs_f64());
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!("{n_clips} clips of 10 s at {SR} Hz, {} events; {rounds} rounds; ms per clip:", clip.len());
    let mut summary = Vec::new();
    for (name, t) in names.iter().zip(&mut times) {
        t.sort_by(f64::total_cmp);
        let (min, median) = (1e3 * t[0] / n_clips as f64, 1e3 * t[t.len() / 2] / n_clips as f64);
        summary.push((min, median));
        println!("  {name:<32} min {min:7.3}  median {median:7.3}");
    }
    let ratio = |a: usize, b: usize| (summary[a].0 / summary[b].0, summary[a].1 / summary[b].1);
    let (lo, mid) = ratio(4, 3);
    println!("render_corpus / write: min {lo:.2}x, median {mid:.2}x");
    let (lo, mid) = ratio(1, 6);
    println!("mix + limit + encode now / before: min {lo:.2}x, median {mid:.2}x");
}

/// The mix as it was before `add_event` and the limiter inside the encoder: every event rendered
/// into a buffer, scaled and added; the peak scanned; the limiter's gain applied in its own pass.
fn before(bank: &AtomBank, events: &[EventSpan], curves: &Curves, event: &mut Vec<f32>, out: &mut Vec<f32>) {
    out.clear();
    out.resize(CLIP as usize, 0.0);
    for ev in events {
        let atom = bank.atom(ev.atom as usize).unwrap();
        let (onset, length) = (ev.onset as usize, ev.length as usize);
        event.resize(length, 0.0);
        mix::render_event(atom, curves, &mut event[..length]);
        let g = 10f64.powf(f64::from(ev.gain_db) / 20.0) as f32;
        for (y, &x) in out[onset..onset + length].iter_mut().zip(event.iter()) {
            *y += g * x;
        }
    }
    let peak = out.iter().fold(0f32, |m, &x| m.max(x.abs()));
    let gain = if peak > 0.98 { 0.98 / peak } else { 1.0 };
    if gain != 1.0 {
        out.iter_mut().for_each(|x| *x *= gain);
    }
}
