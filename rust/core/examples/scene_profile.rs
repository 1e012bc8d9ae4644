//! Where a scene's rendering time goes, one thread: the clean corpus renderer next to the scene
//! renderer with a bed alone, a room alone, and both, over the same clips, interleaved round by
//! round (min and median per clip), plus the rooms' FFT convolutions alone.
//!
//!     cargo run --release -p reasonaudio-core --example scene_profile [CLIPS] [ROUNDS]
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use reasonaudio_core::cancel::Cancel;
use reasonaudio_core::mix::{self, AtomBank, EventColumns, MixOptions};
use reasonaudio_core::scene::bed::{noise, Texture};
use reasonaudio_core::scene::render::{render_corpus, Corpus, CorpusOptions, SceneColumns};
use reasonaudio_core::scene::room::{prepare_ir, Convolver};
use reasonaudio_core::wav::AudioFormat;

const SR: u32 = 16_000;
const CLIP: i64 = 10 * SR as i64;

fn main() {
    let mut args = std::env::args().skip(1);
    let n_clips: usize = args.next().map_or(300, |a| a.parse().expect("CLIPS"));
    let rounds: usize = args.next().map_or(3, |a| a.parse().expect("ROUNDS"));
    let mut rng = Pcg64::seed_from_u64(1);
    let (mut audio, mut offsets) = (Vec::new(), vec![0u64]);
    for _ in 0..200 {
        let n = rng.gen_range(SR as usize * 6 / 5..4 * SR as usize);
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
    // Six exponentially decaying noise responses, RT60 0.3..0.6 s, prepared as the build prepares them.
    let (mut rooms_audio, mut rooms_off) = (Vec::new(), vec![0u64]);
    for r in 0..6 {
        let rt60 = 0.3 + 0.06 * r as f64;
        let a = 1000f64.ln() / (rt60 * f64::from(SR));
        let raw: Vec<f32> = (0..(rt60 * f64::from(SR)) as usize)
            .map(|k| ((-a * k as f64).exp() as f32) * if k == 0 { 1.0 } else { rng.gen_range(-0.5f32..0.5) })
            .collect();
        rooms_audio.extend(prepare_ir(&raw).unwrap());
        rooms_off.push(rooms_audio.len() as u64);
    }
    let bed_audio = noise(Texture::Pink, 30 * SR as usize, 1, 0);
    let bank = AtomBank::new(&audio, &offsets).unwrap();
    let cols = EventColumns { clip: &clip, atom: &atom, onset: &onset, length: &length, gain_db: &gain_db };
    let opts = MixOptions::default();
    let lengths = vec![CLIP; n_clips];
    let none = vec![-1i32; n_clips];
    let beds = vec![0i32; n_clips];
    let rooms: Vec<i32> = (0..n_clips as i32).map(|c| c % 6).collect();
    let starts: Vec<i64> = (0..n_clips as i64).map(|c| c * 7919 % (30 * i64::from(SR))).collect();
    let snr = vec![10f32; n_clips];
    let bed_offsets = [0, bed_audio.len() as u64];
    let base = SceneColumns {
        beds: AtomBank::new(&bed_audio, &bed_offsets).unwrap(),
        rooms: AtomBank::new(&rooms_audio, &rooms_off).unwrap(),
        clip_bed: &none,
        clip_bed_start: &starts,
        clip_snr_db: &snr,
        clip_room: &none,
        ev_speed: &[],
        ev_pitch_cents: &[],
        ev_stretch: &[],
    };
    let variants = [
        ("clean (the empty scene)", None),
        ("bed", Some(SceneColumns { clip_bed: &beds, ..base })),
        ("room", Some(SceneColumns { clip_room: &rooms, ..base })),
        ("bed + room", Some(SceneColumns { clip_bed: &beds, clip_room: &rooms, ..base })),
    ];
    let dir = std::env::temp_dir().join(format!("reasonaudio-scene-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths = mix::numbered_paths(&dir, "c", n_clips, AudioFormat::Wav16);
    let mut times = vec![vec![]; variants.len() + 1];
    let mut conv = Convolver::default();
    let mut out = Vec::new();
    for _ in 0..rounds {
        for (i, (_, scene)) in variants.iter().enumerate() {
            let t = Instant::now();
            let corpus = Corpus::clean(bank, cols, &lengths).in_scene(scene.unwrap_or(SceneColumns::EMPTY));
            let one = CorpusOptions { threads: 1, ..CorpusOptions::default() };
            render_corpus(&corpus, &paths, &opts, &one, Cancel::NEVER).unwrap();
            times[i].push(t.elapsed().as_secs_f64());
        }
        let t = Instant::now();
        for row in 0..clip.len() {
            let h = base.rooms.atom(rooms[clip[row] as usize] as usize).unwrap();
            let x = bank.atom(atom[row] as usize).unwrap();
            let len = (length[row] as usize).min(x.len());
            out.resize(len + h.len() - 1, 0.0);
            conv.convolve(&x[..len], h, rooms[clip[row] as usize] as usize, &mut out);
            std::hint::black_box(&out);
        }
        times[variants.len()].push(t.elapsed().as_secs_f64());
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!("{n_clips} clips of 10 s at {SR} Hz, {} events; {rounds} rounds; ms per clip, one thread:", clip.len());
    let names: Vec<&str> = variants.iter().map(|v| v.0).chain(["room convolutions alone"]).collect();
    let clean_min = times[0].iter().copied().fold(f64::INFINITY, f64::min);
    for (name, t) in names.iter().zip(&mut times) {
        t.sort_by(f64::total_cmp);
        let (min, median) = (t[0], t[t.len() / 2]);
        println!(
            "  {name:<26} min {:7.3}  median {:7.3}  ({:.2}x clean, min)",
            1e3 * min / n_clips as f64,
            1e3 * median / n_clips as f64,
            min / clean_min
        );
    }
}
