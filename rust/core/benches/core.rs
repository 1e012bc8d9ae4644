//! Criterion benchmarks of the mixer: one 10-s clip at 16 kHz with 2-8 events (render only,
//! render + WAV encode), and a small corpus rendered and written to a temporary directory.
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use reasonaudio_core::cancel::Cancel;
use reasonaudio_core::mix::{self, AtomBank, EventColumns, MixOptions};
use reasonaudio_core::scene::render::{self, Corpus, CorpusOptions};
use reasonaudio_core::wav::{self, AudioFormat};

const SR: u32 = 16_000;
const CLIP: i64 = 10 * SR as i64;

/// 200 synthetic atoms of 0.5-4 s and `n_clips` clip plans of 2-8 events each.
struct Job {
    audio: Vec<f32>,
    offsets: Vec<u64>,
    clip: Vec<u32>,
    atom: Vec<u32>,
    onset: Vec<i64>,
    length: Vec<i64>,
    gain_db: Vec<f32>,
    clip_lengths: Vec<i64>,
}

fn job(n_clips: usize) -> Job {
    let mut rng = Pcg64::seed_from_u64(1);
    let mut audio = Vec::new();
    let mut offsets = vec![0u64];
    for _ in 0..200 {
        let n = rng.gen_range(SR as usize / 2..4 * SR as usize);
        let f = rng.gen_range(0.01f32..0.3);
        audio.extend((0..n).map(|i| (i as f32 * f).sin() * 0.7));
        offsets.push(audio.len() as u64);
    }
    let n_atoms = offsets.len() - 1;
    let mut j = Job {
        audio,
        offsets,
        clip: vec![],
        atom: vec![],
        onset: vec![],
        length: vec![],
        gain_db: vec![],
        clip_lengths: vec![CLIP; n_clips],
    };
    for c in 0..n_clips {
        let k = rng.gen_range(2..=8);
        let mut onsets: Vec<i64> = (0..k).map(|_| rng.gen_range(0..CLIP - SR as i64 / 2)).collect();
        onsets.sort_unstable();
        for &onset in &onsets {
            j.clip.push(c as u32);
            j.atom.push(rng.gen_range(0..n_atoms as u32));
            j.onset.push(onset);
            j.length.push(rng.gen_range(SR as i64 / 2..=(CLIP - onset).min(6 * SR as i64)).min(CLIP - onset));
            j.gain_db.push(rng.gen_range(-12.0..0.0));
        }
    }
    j
}

fn bench_mix(c: &mut Criterion) {
    let j = job(64);
    let bank = AtomBank::new(&j.audio, &j.offsets).unwrap();
    let opts = MixOptions::default();
    let cols = EventColumns { clip: &j.clip, atom: &j.atom, onset: &j.onset, length: &j.length, gain_db: &j.gain_db };
    let corpus = Corpus::clean(bank, cols, &j.clip_lengths);

    let mut g = c.benchmark_group("mix");
    g.measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_millis(500)).sample_size(20);
    g.throughput(Throughput::Elements(CLIP as u64));
    g.bench_function("render_clip_10s", |b| {
        b.iter(|| black_box(render::render_clip(&corpus, 0, &opts, false).unwrap()))
    });
    let mut bytes = Vec::new();
    g.bench_function("render_clip_10s+encode_wav16", |b| {
        b.iter(|| {
            let r = render::render_clip(&corpus, 0, &opts, false).unwrap();
            wav::encode_wav16(&r.audio, SR, &mut bytes).unwrap();
            black_box(bytes.len())
        })
    });

    let dir = std::env::temp_dir().join(format!("reasonaudio-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths = mix::numbered_paths(&dir, "clip", j.clip_lengths.len(), AudioFormat::Wav16);
    let one = CorpusOptions { threads: 1, ..CorpusOptions::default() };
    g.throughput(Throughput::Elements(j.clip_lengths.len() as u64));
    g.bench_function("render_corpus_64x10s_wav16_1thread", |b| {
        b.iter(|| render::render_corpus(&corpus, &paths, &opts, &one, Cancel::NEVER).unwrap())
    });
    g.finish();
    std::fs::remove_dir_all(&dir).unwrap();
}

criterion_group!(benches, bench_mix);
criterion_main!(benches);
