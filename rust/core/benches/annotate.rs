//! Criterion benchmark of the relevance engine on a corpus shaped like the default benchmark:
//! 10k clips of 2-8 events from 200 labels (a label at most once per clip), 1k queries of the
//! five task shapes. `cargo bench -p reasonaudio-core --bench annotate`
use criterion::{criterion_group, criterion_main, Criterion};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use reasonaudio_core::annotate::{compile_queries, EventIndex, Events};
use reasonaudio_core::logic::Vocabulary;

const RATE: i64 = 16_000;
const N_LABELS: u32 = 200;

struct Corpus {
    clip: Vec<u32>,
    label: Vec<u32>,
    onset: Vec<i64>,
    offset: Vec<i64>,
}

fn corpus(n_clips: u32, rng: &mut Pcg64) -> Corpus {
    let all: Vec<u32> = (0..N_LABELS).collect();
    let mut c = Corpus { clip: vec![], label: vec![], onset: vec![], offset: vec![] };
    for clip in 0..n_clips {
        let k = rng.gen_range(2..=8);
        let sequential = rng.gen_bool(0.6);
        let mut t = 0i64;
        for &l in all.choose_multiple(rng, k) {
            let len = rng.gen_range(RATE / 2..4 * RATE);
            let on = if sequential { t } else { rng.gen_range(0..4 * RATE) };
            t = on + len + rng.gen_range(RATE / 2..3 * RATE / 2);
            c.clip.push(clip);
            c.label.push(l);
            c.onset.push(on);
            c.offset.push(on + len);
        }
    }
    c
}

fn queries(c: &Corpus, n: usize, rng: &mut Pcg64) -> Vec<String> {
    (0..n)
        .map(|i| {
            let e = rng.gen_range(0..c.clip.len() - 1);
            let (a, b) = (format!("l{}", c.label[e]), format!("l{}", c.label[e + 1]));
            let other = format!("l{}", rng.gen_range(0..N_LABELS));
            let dur = (c.offset[e] - c.onset[e]) as f64 / RATE as f64;
            match i % 5 {
                0 => format!(r#"{{"all": [{{"has": "{a}"}}, {{"not": "{other}"}}]}}"#),
                1 => format!(r#"{{"all": [{{"before": ["{a}", "{b}"]}}]}}"#),
                2 => format!(r#"{{"all": [{{"overlap": ["{a}", "{b}"]}}]}}"#),
                3 => format!(r#"{{"all": [{{"duration": {{"label": "{a}", "min_s": {}}}}}]}}"#, dur - 0.5),
                _ => format!(r#"{{"all": [{{"before": ["{a}", "{b}"]}}, {{"not": "{other}"}}]}}"#),
            }
        })
        .collect()
}

fn bench_annotate(cr: &mut Criterion) {
    let mut rng = Pcg64::seed_from_u64(0);
    let c = corpus(10_000, &mut rng);
    let logic = queries(&c, 1_000, &mut rng);
    let ids: Vec<String> = (0..logic.len()).map(|i| format!("q{i}")).collect();
    let labels: Vec<String> = (0..N_LABELS).map(|l| format!("l{l}")).collect();
    let vocab = Vocabulary::new(&labels).unwrap();
    let events = Events { clip: &c.clip, label: &c.label, onset: &c.onset, offset: &c.offset };

    cr.bench_function("index_10k_clips", |b| {
        b.iter(|| EventIndex::build(&events, 10_000, labels.len(), RATE as f64).unwrap())
    });
    cr.bench_function("compile_1k_queries", |b| b.iter(|| compile_queries(&vocab, &ids, &logic).unwrap()));
    let index = EventIndex::build(&events, 10_000, labels.len(), RATE as f64).unwrap();
    let compiled = compile_queries(&vocab, &ids, &logic).unwrap();
    for threads in [1usize, 2] {
        cr.bench_function(&format!("annotate_10k_x_1k_{threads}_threads"), |b| {
            b.iter(|| index.annotate(&compiled, threads).unwrap())
        });
    }
}

criterion_group!(benches, bench_annotate);
criterion_main!(benches);
