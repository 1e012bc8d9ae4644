//! The renderer: clips of a [`Corpus`] mixed, each event optionally played at another speed and
//! convolved with its clip's room, plus a background bed at the gain that makes every event's SNR
//! at least the clip's `background_snr_db` (contract §5), then the mixer's linear limiter. A clean
//! clip is a clip in the empty scene ([`SceneColumns::EMPTY`]): no bed, no room, no speed change.
//!
//! Per event, in order: its atom (varispeed when its speed is not `SPEED_DEN`, then the independent
//! pitch shift and stretch), looped/trimmed and faded exactly as [`crate::mix::render_event`] does,
//! scaled by its gain; with a room, convolved with the room's prepared response (its wet signal
//! starts at the dry onset and rings on after the dry offset, cut at the clip end); its energy `E_i`
//! over its dry extent is measured on that signal; it is added into the clip. Each event is
//! convolved on its own, not the events' sum, because §5's inequality is about each event's own
//! signal. Then the bed (see [`crate::scene::bed`]) at its gain is added, and the whole clip
//! limited. An event that needs neither its own signal (no bed, no room, no stems) is added in one
//! pass ([`crate::mix`]'s `add_event`), the same float32 operations in the same order.
//!
//! [`render_corpus`] is the one corpus orchestrator: it validates the whole corpus before anything
//! is written, renders on a local rayon pool with per-thread [`Scratch`] buffers, encodes with the
//! limiter's gain applied in the encoder, hashes the bytes when asked and writes one file per clip;
//! each clip depends only on its own events and scene, so the files are byte-identical for any
//! thread count. [`render_clip`] renders one clip of a corpus, with its stems when asked.

use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::cancel::Cancel;
use crate::mix::{
    add_event, check_event, db_to_gain, limiter_gain, peak_and_finite, render_event, AtomBank, Curves, EventColumns,
    MixError, MixOptions, Where,
};
use crate::scene::bed::{self, SNR_HEADROOM_DB};
use crate::scene::room::{Convolver, SpectrumTable};
use crate::scene::shift::{self, STRETCH_DEN};
use crate::scene::stretch::{self, SPEED_DEN, SPEED_MAX, SPEED_MIN};
use crate::wav::{self, AudioFormat, WavError};

/// The scene inputs of a corpus: the bed and room banks, per-clip draws and per-event changes.
/// Every column may be empty, which means "none" for every clip or event.
#[derive(Clone, Copy, Debug)]
pub struct SceneColumns<'a> {
    /// Unit-level bed sources.
    pub beds: AtomBank<'a>,
    /// Prepared room responses ([`crate::scene::room::prepare_ir`]).
    pub rooms: AtomBank<'a>,
    /// Per clip: index into `beds`, or -1 for no bed (empty: no clip has a bed).
    pub clip_bed: &'a [i32],
    /// Per clip: the sample of the bed's loop at which the clip starts (`< len(bed source)`); as
    /// long as `clip_bed`.
    pub clip_bed_start: &'a [i64],
    /// Per clip: the target SNR s in dB (finite where the clip has a bed; ignored otherwise); as
    /// long as `clip_bed`.
    pub clip_snr_db: &'a [f32],
    /// Per clip: index into `rooms`, or -1 for a dry clip (empty: every clip is dry).
    pub clip_room: &'a [i32],
    /// Per event: playback speed numerator over [`SPEED_DEN`] (empty: every event unchanged).
    pub ev_speed: &'a [u32],
    /// Per event: pitch shift in cents with the length kept ([`shift`]; empty: none).
    pub ev_pitch_cents: &'a [i32],
    /// Per event: the length factor over [`STRETCH_DEN`] with the pitch kept (empty: none).
    pub ev_stretch: &'a [u32],
}

impl SceneColumns<'static> {
    /// The empty scene: what a clean corpus renders in.
    pub const EMPTY: Self = SceneColumns {
        beds: AtomBank::EMPTY,
        rooms: AtomBank::EMPTY,
        clip_bed: &[],
        clip_bed_start: &[],
        clip_snr_db: &[],
        clip_room: &[],
        ev_speed: &[],
        ev_pitch_cents: &[],
        ev_stretch: &[],
    };
}

impl SceneColumns<'_> {
    /// Clip `clip`'s bed index, -1 for none.
    fn bed(&self, clip: usize) -> i32 {
        self.clip_bed.get(clip).copied().unwrap_or(-1)
    }

    /// Clip `clip`'s room index, -1 for none.
    fn room(&self, clip: usize) -> i32 {
        self.clip_room.get(clip).copied().unwrap_or(-1)
    }

    /// Event `row`'s speed numerator; `SPEED_DEN` where the column is empty.
    fn speed(&self, row: usize) -> u32 {
        self.ev_speed.get(row).copied().unwrap_or(SPEED_DEN)
    }

    /// Event `row`'s (cents, stretch numerator); (0, STRETCH_DEN) where the columns are empty.
    fn shift(&self, row: usize) -> (i32, u32) {
        (self.ev_pitch_cents.get(row).copied().unwrap_or(0), self.ev_stretch.get(row).copied().unwrap_or(STRETCH_DEN))
    }
}

/// Everything a render reads: the atoms, the events sorted by clip, every clip's length and the
/// scene ([`SceneColumns::EMPTY`] for a clean corpus).
#[derive(Clone, Copy, Debug)]
pub struct Corpus<'a> {
    /// The sounds the events place.
    pub atoms: AtomBank<'a>,
    /// The events, sorted by clip (then onset).
    pub events: EventColumns<'a>,
    /// Every clip's length in samples.
    pub clip_lengths: &'a [i64],
    /// The scene the clips are rendered in.
    pub scene: SceneColumns<'a>,
}

impl<'a> Corpus<'a> {
    /// A corpus in the empty scene.
    pub fn clean(atoms: AtomBank<'a>, events: EventColumns<'a>, clip_lengths: &'a [i64]) -> Self {
        Corpus { atoms, events, clip_lengths, scene: SceneColumns::EMPTY }
    }

    /// The same corpus in `scene`.
    pub fn in_scene(self, scene: SceneColumns<'a>) -> Self {
        Corpus { scene, ..self }
    }

    /// Number of clips.
    pub fn n_clips(&self) -> usize {
        self.clip_lengths.len()
    }

    /// Checks what the columns say about each other (equal lengths, events sorted by clip and
    /// within range, the scene's per-clip and per-event columns as long as the clips and events),
    /// without reading any audio: what a corpus assembled once and rendered later can be told at
    /// once. Every render checks it again, with the events and every clip's scene.
    pub fn check_columns(&self) -> Result<(), MixError> {
        self.events.clip_bounds(self.n_clips())?;
        check_scene_columns(&self.scene, self.n_clips(), self.events.len())
    }
}

/// What the renderer reports for one clip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipStats {
    /// Largest absolute sample before the limiter.
    pub peak: f32,
    /// The limiter's linear factor (1.0 when the peak was within the ceiling).
    pub gain: f32,
    /// The bed's linear gain before the limiter (0 with no bed).
    pub bed_gain: f32,
}

/// Every event's own (wet) signal and the bed, before the limiter: what a clip is the sum of.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stems {
    /// One clip-length stem per event, in the clip's event order.
    pub events: Vec<Vec<f32>>,
    /// The bed at its gain (all zeros with no bed).
    pub bed: Vec<f32>,
}

/// One rendered clip (what tests, the listening page, augmentation and the compose diagnostic use).
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// The limited mix.
    pub audio: Vec<f32>,
    /// The limiter's and the bed's figures.
    pub stats: ClipStats,
    /// Every event's SNR in dB (+inf with no bed or a bed silent over the event).
    pub event_snr_db: Vec<f32>,
    /// The stems, where they were asked for.
    pub stems: Option<Stems>,
}

/// How [`render_corpus`] writes a corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorpusOptions {
    /// The files' encoding.
    pub format: AudioFormat,
    /// Threads of the local pool (0 = all cores).
    pub threads: usize,
    /// Also return the sha256 of every file's bytes (hashed while they are in memory).
    pub sha256: bool,
    /// Write each file through a temporary and a rename (false: straight to its name, for a
    /// staged output directory renamed into place as a whole; see [`wav::write_file`]).
    pub atomic: bool,
}

impl Default for CorpusOptions {
    /// 16-bit WAV on all cores, no hashes, atomic writes.
    fn default() -> Self {
        CorpusOptions { format: AudioFormat::Wav16, threads: 0, sha256: false, atomic: true }
    }
}

/// The renderer's report on a corpus: every clip's figures, every event's SNR (dB, before
/// quantisation; +inf where the clip has no bed or the bed is silent over the event), and with
/// [`CorpusOptions::sha256`] every file's sha256, hashed while its bytes were in memory (else empty).
#[derive(Clone, Debug, PartialEq)]
pub struct CorpusReport {
    /// Per clip, in clip order.
    pub clips: Vec<ClipStats>,
    /// Per event, in row order.
    pub event_snr_db: Vec<f32>,
    /// Per clip, in clip order (empty unless asked for).
    pub sha256: Vec<[u8; 32]>,
}

/// One thread's reusable buffers, so rendering many clips does not allocate per clip or event.
#[derive(Default, Debug)]
pub struct Scratch {
    event: Vec<f32>,
    wet: Vec<f32>,
    material: Vec<f32>,
    bed: Vec<f32>,
    clip: Vec<f32>,
    energies: Vec<f64>,
    extents: Vec<(usize, usize)>,
    snr: Vec<f32>,
    bytes: Vec<u8>,
    conv: Convolver,
}

impl Scratch {
    /// The last mixed clip, before the limiter's gain.
    pub fn mix(&self) -> &[f32] {
        &self.clip
    }

    /// The last clip's per-event SNRs (dB).
    pub fn event_snr_db(&self) -> &[f32] {
        &self.snr
    }
}

fn scene_err(clip: usize, what: String) -> MixError {
    MixError::Scene(format!("clip {clip}: {what}"))
}

/// Checks the scene columns' lengths against the plan and every event's speed and shift.
fn check_scene_columns(scene: &SceneColumns, n_clips: usize, n_events: usize) -> Result<(), MixError> {
    let per_clip = [
        ("clip_bed", scene.clip_bed.len()),
        ("clip_bed_start", scene.clip_bed_start.len()),
        ("clip_snr_db", scene.clip_snr_db.len()),
        ("clip_room", scene.clip_room.len()),
    ];
    for (name, len) in per_clip {
        if len != 0 && len != n_clips {
            return Err(MixError::Scene(format!("{name} has {len} values for {n_clips} clips")));
        }
    }
    let beds = scene.clip_bed.len();
    if scene.clip_bed_start.len() != beds || scene.clip_snr_db.len() != beds {
        return Err(MixError::Scene(format!(
            "clip_bed, clip_bed_start and clip_snr_db go together: {} / {} / {} values",
            beds,
            scene.clip_bed_start.len(),
            scene.clip_snr_db.len()
        )));
    }
    let per_event = [
        ("ev_speed", scene.ev_speed.len()),
        ("ev_pitch_cents", scene.ev_pitch_cents.len()),
        ("ev_stretch", scene.ev_stretch.len()),
    ];
    for (name, len) in per_event {
        if len != 0 && len != n_events {
            return Err(MixError::Scene(format!(
                "{name} has {len} values for {n_events} events (pass an empty array for none)"
            )));
        }
    }
    if let Some((row, &k)) = scene.ev_speed.iter().enumerate().find(|(_, &k)| !(SPEED_MIN..=SPEED_MAX).contains(&k)) {
        return Err(MixError::Scene(format!(
            "event row {row}: speed {k}/{SPEED_DEN} is outside [{SPEED_MIN}, {SPEED_MAX}]/{SPEED_DEN}"
        )));
    }
    for row in 0..n_events.min(scene.ev_pitch_cents.len().max(scene.ev_stretch.len())) {
        let (cents, s) = scene.shift(row);
        shift::check(cents, s).map_err(|e| MixError::Scene(format!("event row {row}: {e}")))?;
    }
    Ok(())
}

/// Checks clip `clip`'s bed and room against the banks.
fn check_clip_scene(scene: &SceneColumns, clip: usize) -> Result<(), MixError> {
    let b = scene.bed(clip);
    if b >= 0 {
        let source =
            scene.beds.atom(b as usize).filter(|s| !s.is_empty()).ok_or_else(|| {
                scene_err(clip, format!("bed {b} is not a non-empty source of the {}", scene.beds.len()))
            })?;
        let start = scene.clip_bed_start[clip];
        if start < 0 || start as usize >= source.len() {
            return Err(scene_err(clip, format!("bed start {start} outside [0, {})", source.len())));
        }
        let s = scene.clip_snr_db[clip];
        if !s.is_finite() {
            return Err(scene_err(clip, format!("background_snr_db must be finite, got {s}")));
        }
    } else if b != -1 {
        return Err(scene_err(clip, format!("bed index {b} (use -1 for none)")));
    }
    let r = scene.room(clip);
    if r >= 0 {
        if scene.rooms.atom(r as usize).is_none_or(|h| h.is_empty()) {
            return Err(scene_err(clip, format!("room {r} is not a non-empty response of the {}", scene.rooms.len())));
        }
    } else if r != -1 {
        return Err(scene_err(clip, format!("room index {r} (use -1 for none)")));
    }
    Ok(())
}

/// A corpus checked and prepared for rendering the clips of one range: the clips' row bounds, the
/// fade tables, one loop period of every bed source the range uses (computed once, read by every
/// thread) and, for a whole corpus, the spectra of every (room, FFT size) its events need.
#[derive(Debug)]
pub struct Renderer<'a> {
    corpus: Corpus<'a>,
    bounds: Vec<usize>,
    curves: Curves,
    sample_rate: u32,
    periods: Vec<Vec<f32>>,
    spectra: Option<SpectrumTable>,
}

impl<'a> Renderer<'a> {
    /// Checks the whole corpus (columns, order, scene, every clip's scene and every event) before
    /// anything is rendered, and prepares it on the current rayon pool.
    pub fn new(corpus: Corpus<'a>, opts: &MixOptions) -> Result<Self, MixError> {
        let mut r = Self::for_clips(corpus, opts, 0..corpus.n_clips())?;
        for clip in 0..corpus.n_clips() {
            let length = corpus.clip_lengths[clip];
            for row in r.bounds[clip]..r.bounds[clip + 1] {
                let at = Where { clip, event: row - r.bounds[clip], row };
                check_event(&corpus.atoms, &corpus.events.row(row), length, at)?;
            }
        }
        r.spectra = Some(r.room_spectra());
        Ok(r)
    }

    /// Checks the corpus's columns and the scene of `clips` (events are checked as they are
    /// rendered) and prepares the beds those clips use.
    fn for_clips(corpus: Corpus<'a>, opts: &MixOptions, clips: Range<usize>) -> Result<Self, MixError> {
        let n_clips = corpus.n_clips();
        let bounds = corpus.events.clip_bounds(n_clips)?;
        let curves = Curves::new(*opts)?;
        let scene = &corpus.scene;
        check_scene_columns(scene, n_clips, corpus.events.len())?;
        let shifted = !scene.ev_pitch_cents.is_empty() || !scene.ev_stretch.is_empty();
        if shifted && opts.sample_rate == 0 {
            return Err(MixError::Scene("a pitch shift or stretch needs the sample rate (got 0)".into()));
        }
        for clip in clips.clone() {
            let length = corpus.clip_lengths[clip];
            if length < 0 {
                return Err(MixError::BadClipLength { clip, length });
            }
            check_clip_scene(scene, clip)?;
        }
        // The bed's loop: the mix's crossfade, no boundary fade (the bed is faded at the clip
        // edges instead).
        let loop_curves = Curves::new(MixOptions { fade: 0, ..*opts })?;
        let mut used = vec![false; scene.beds.len()];
        for clip in clips {
            if let Ok(b) = usize::try_from(scene.bed(clip)) {
                used[b] = true;
            }
        }
        let periods = (0..scene.beds.len())
            .into_par_iter()
            .map(|b| match scene.beds.atom(b) {
                Some(s) if used[b] && !s.is_empty() => bed::loop_period(s, &loop_curves),
                _ => Vec::new(),
            })
            .collect();
        Ok(Renderer { corpus, bounds, curves, sample_rate: opts.sample_rate, periods, spectra: None })
    }

    /// The spectra of every (room, FFT size) that some event of the corpus is convolved at.
    fn room_spectra(&self) -> SpectrumTable {
        let scene = &self.corpus.scene;
        let mut needed = std::collections::BTreeSet::new();
        for (clip, &room) in scene.clip_room.iter().enumerate() {
            let Some(h) = usize::try_from(room).ok().and_then(|r| scene.rooms.atom(r)) else { continue };
            for row in self.bounds[clip]..self.bounds[clip + 1] {
                let length = self.corpus.events.row(row).length as usize;
                if length > 0 && !h.is_empty() {
                    needed.insert((room as usize, SpectrumTable::size_for(length, h.len())));
                }
            }
        }
        let responses: Vec<&[f32]> = (0..scene.rooms.len()).map(|r| scene.rooms.atom(r).unwrap_or(&[])).collect();
        SpectrumTable::build(&responses, &needed)
    }

    /// The corpus being rendered.
    pub fn corpus(&self) -> &Corpus<'a> {
        &self.corpus
    }

    /// Mixes clip `clip` into `scratch` (see [`Scratch::mix`], [`Scratch::event_snr_db`]) and finds
    /// its limiter gain, not applied: [`Renderer::encode`] applies it while encoding.
    pub fn mix(&self, clip: usize, scratch: &mut Scratch) -> Result<ClipStats, MixError> {
        self.mix_into(clip, scratch, None)
    }

    /// The last clip mixed into `scratch`, limited by `gain` and encoded in `format`: the file's bytes.
    pub fn encode<'s>(&self, scratch: &'s mut Scratch, format: AudioFormat, gain: f32) -> Result<&'s [u8], WavError> {
        wav::encode_scaled(format, &scratch.clip, gain, self.sample_rate, &mut scratch.bytes)?;
        Ok(&scratch.bytes)
    }

    /// The atom event `i` (row `row`) of clip `clip` plays: the atom itself, or its varispeed,
    /// pitch-shifted and stretched material (left in `material`).
    fn event_source<'s>(
        &self,
        atom: &'s [f32],
        length: usize,
        at: Where,
        material: &'s mut Vec<f32>,
    ) -> Result<&'s [f32], MixError> {
        let scene = &self.corpus.scene;
        let Where { clip, event: i, row } = at;
        let k = scene.speed(row);
        let (cents, s) = scene.shift(row);
        if k == SPEED_DEN && cents == 0 && s == STRETCH_DEN {
            return Ok(atom);
        }
        let sped: std::borrow::Cow<[f32]> = if k == SPEED_DEN {
            atom.into()
        } else {
            stretch::varispeed(atom, k).map_err(|e| scene_err(clip, format!("event {i}: {e}")))?.into()
        };
        *material = if cents == 0 && s == STRETCH_DEN {
            sped.into_owned()
        } else {
            // An event shorter than its stretched exemplar plays only its start: stretch that.
            let m = shift::input_needed(length, s, sped.len(), self.sample_rate);
            shift::shift_stretch(&sped[..m], cents, s, self.sample_rate)
                .map_err(|e| scene_err(clip, format!("event {i}: {e}")))?
        };
        if material.is_empty() {
            return Err(scene_err(
                clip,
                format!("event {i}: the atom is empty at speed {k}/{SPEED_DEN}, stretch {s}/{STRETCH_DEN}"),
            ));
        }
        Ok(material)
    }

    /// Renders clip `clip` into `scratch.clip` (before the limiter's gain) and its SNRs into
    /// `scratch.snr`. With `stems`, fills them: every event's wet signal and the scaled bed.
    fn mix_into(
        &self,
        clip: usize,
        scratch: &mut Scratch,
        mut stems: Option<&mut Stems>,
    ) -> Result<ClipStats, MixError> {
        let Corpus { atoms, events, clip_lengths, scene } = &self.corpus;
        let clip_length = clip_lengths[clip];
        if clip_length < 0 {
            return Err(MixError::BadClipLength { clip, length: clip_length });
        }
        let n = clip_length as usize;
        let Scratch { event, wet, material, bed, clip: out, energies, extents, snr, conv, .. } = scratch;
        out.clear();
        out.resize(n, 0.0);
        energies.clear();
        extents.clear();
        snr.clear();
        let b = scene.bed(clip);
        let room = scene.room(clip);
        let response = usize::try_from(room).ok().map(|r| scene.rooms.atom(r).expect("checked"));
        // Without a bed, a room or stems nothing needs an event's own signal.
        let own_signal = b >= 0 || response.is_some() || stems.is_some();
        let first_row = self.bounds[clip];
        for (i, row) in (first_row..self.bounds[clip + 1]).enumerate() {
            let ev = events.row(row);
            let at = Where { clip, event: i, row };
            let atom = check_event(atoms, &ev, clip_length, at)?;
            let (onset, length) = (ev.onset as usize, ev.length as usize);
            let source = self.event_source(atom, length, at, material)?;
            let g = db_to_gain(ev.gain_db);
            if !own_signal {
                add_event(source, &self.curves, g, &mut out[onset..onset + length]);
                continue;
            }
            event.resize(length, 0.0);
            let buf = &mut event[..length];
            render_event(source, &self.curves, buf);
            // Scaling first and adding afterwards is `add_event`'s `y += g * x`, operation for operation.
            buf.iter_mut().for_each(|x| *x *= g);
            let signal: &[f32] = match response {
                Some(h) => {
                    let wet_len = (length + h.len() - 1).min(n - onset);
                    wet.resize(wet_len, 0.0);
                    conv.convolve_with(buf, h, room as usize, self.spectra.as_ref(), &mut wet[..wet_len]);
                    &wet[..wet_len]
                }
                None => buf,
            };
            energies.push(bed::energy(&signal[..length]));
            extents.push((onset, onset + length));
            for (y, &x) in out[onset..onset + signal.len()].iter_mut().zip(signal) {
                *y += x;
            }
            if let Some(stems) = stems.as_deref_mut() {
                let mut stem = vec![0f32; n];
                stem[onset..onset + signal.len()].copy_from_slice(signal);
                stems.events.push(stem);
            }
        }
        let n_events = self.bounds[clip + 1] - first_row;
        let mut bed_gain = 0f32;
        bed.clear();
        if b >= 0 {
            let source = scene.beds.atom(b as usize).expect("checked");
            bed.resize(n, 0.0);
            bed::fill_bed_periodic(
                source,
                &self.periods[b as usize],
                scene.clip_bed_start[clip] as usize,
                &self.curves,
                bed,
            );
            let s = f64::from(scene.clip_snr_db[clip]);
            let bed_e: Vec<f64> = extents.iter().map(|&(a, z)| bed::energy(&bed[a..z])).collect();
            // Overlapping sounds can cancel (two tones in opposite phase): over an event's extent the
            // events' sum may hold less energy than the event alone. The bed is set so that both hold
            // the SNR, the event's own signal (§5) and what a listener, or a checker without the stems,
            // finds there (the mix minus the bed).
            let limits: Vec<f64> =
                energies.iter().zip(extents.iter()).map(|(&e, &(a, z))| e.min(bed::energy(&out[a..z]))).collect();
            let mut g = bed::bed_gain(&limits, &bed_e, s) as f32;
            // Re-measure on the f32 samples actually mixed; the f32 rounding of the gain or of the
            // products can cost a few 1e-7 dB, so shrink until every event is at or above the aim.
            let aim = s + SNR_HEADROOM_DB;
            let mut snrs: Vec<f64> = Vec::with_capacity(extents.len());
            for _ in 0..64 {
                // Each figure is the energy of the bed samples as mixed (g · x rounded to f32), so the
                // values reported (each event's own SNR) are those of the final audio, not a model of it.
                snrs.clear();
                let mut held = true;
                for ((&(a, z), &e), &limit) in extents.iter().zip(energies.iter()).zip(limits.iter()) {
                    let b = bed::scaled_energy(&bed[a..z], g);
                    held &= bed::snr_db(limit, b) >= aim;
                    snrs.push(bed::snr_db(e, b));
                }
                if held {
                    break;
                }
                g *= 1.0 - 1e-5;
            }
            snr.extend(snrs.iter().map(|&v| v as f32));
            bed.iter_mut().for_each(|x| *x *= g);
            bed_gain = g;
            for (y, &x) in out.iter_mut().zip(bed.iter()) {
                *y += x;
            }
        } else {
            snr.extend(std::iter::repeat_n(f32::INFINITY, n_events));
        }
        if let Some(stems) = stems {
            stems.bed = if b >= 0 { bed.clone() } else { vec![0.0; n] };
        }
        let (peak, finite) = peak_and_finite(out);
        if !finite {
            return Err(MixError::NonFinite { clip });
        }
        Ok(ClipStats { peak, gain: limiter_gain(peak, self.curves.options().ceiling), bed_gain })
    }
}

/// Renders clip `clip` of `corpus`, limited, with its stems when `stems` is set (errors name the
/// clip by its index in the corpus). Only that clip's scene and events are checked.
pub fn render_clip(corpus: &Corpus, clip: usize, opts: &MixOptions, stems: bool) -> Result<Rendered, MixError> {
    if clip >= corpus.n_clips() {
        return Err(MixError::NoSuchClip { clip, n_clips: corpus.n_clips() });
    }
    let renderer = Renderer::for_clips(*corpus, opts, clip..clip + 1)?;
    let mut scratch = Scratch::default();
    let mut kept = stems.then(Stems::default);
    let stats = renderer.mix_into(clip, &mut scratch, kept.as_mut())?;
    let mut audio = std::mem::take(&mut scratch.clip);
    if stats.gain != 1.0 {
        audio.iter_mut().for_each(|x| *x *= stats.gain);
    }
    Ok(Rendered { audio, stats, event_snr_db: std::mem::take(&mut scratch.snr), stems: kept })
}

/// Renders and writes every clip of `corpus`: `paths[c]` for clip `c`, in `out.format`.
///
/// Everything is validated before any file is written; work runs on a local pool of `out.threads`
/// threads (0 = all cores) and output bytes do not depend on it; `cancel` is checked before each
/// clip (a cancelled render returns [`MixError::Cancelled`]; every file already written is whole).
pub fn render_corpus<P: AsRef<Path> + Sync>(
    corpus: &Corpus,
    paths: &[P],
    opts: &MixOptions,
    out: &CorpusOptions,
    cancel: Cancel<'_>,
) -> Result<CorpusReport, MixError> {
    let n_clips = corpus.n_clips();
    if paths.len() != n_clips {
        return Err(MixError::PathCount(n_clips, paths.len()));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(out.threads)
        .build()
        .map_err(|e| MixError::ThreadPool(e.to_string()))?;
    let renderer = pool.install(|| Renderer::new(*corpus, opts))?;
    let CorpusOptions { format, sha256, atomic, .. } = *out;
    let per_clip: Vec<(ClipStats, Vec<f32>, [u8; 32])> = pool.install(|| {
        (0..n_clips)
            .into_par_iter()
            .map_init(Scratch::default, |scratch, clip| {
                if cancel.is_set() {
                    return Err(MixError::Cancelled);
                }
                let stats = renderer.mix(clip, scratch)?;
                // A clip without a bed has every SNR +inf: filled in below, no copy per clip.
                let snr = if corpus.scene.bed(clip) >= 0 { scratch.snr.clone() } else { Vec::new() };
                let write_err = |source| MixError::Write { clip, source };
                let bytes = renderer.encode(scratch, format, stats.gain).map_err(write_err)?;
                let digest = if sha256 { Sha256::digest(bytes).into() } else { [0u8; 32] };
                wav::write_file(paths[clip].as_ref(), bytes, atomic).map_err(write_err)?;
                Ok((stats, snr, digest))
            })
            .collect::<Result<_, MixError>>()
    })?;
    let n_events = corpus.events.len();
    let mut report = CorpusReport {
        clips: Vec::with_capacity(n_clips),
        event_snr_db: Vec::with_capacity(n_events),
        sha256: Vec::with_capacity(if sha256 { n_clips } else { 0 }),
    };
    for (clip, (stats, snr, digest)) in per_clip.into_iter().enumerate() {
        report.clips.push(stats);
        if corpus.scene.bed(clip) >= 0 {
            report.event_snr_db.extend(snr);
        } else {
            report
                .event_snr_db
                .extend(std::iter::repeat_n(f32::INFINITY, renderer.bounds[clip + 1] - renderer.bounds[clip]));
        }
        if sha256 {
            report.sha256.push(digest);
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::{numbered_paths, EventSpan, OneClip};
    use crate::scene::bed::{noise, Texture};
    use crate::scene::room::{prepare_ir, tail_s};
    use rand::Rng;
    use std::fs;

    /// One clip's events and speeds in `scene` (whose clip columns hold one value), with stems.
    fn render_clip_scene(
        bank: &AtomBank,
        events: &[EventSpan],
        speeds: &[u32],
        clip_length: i64,
        scene: &SceneColumns,
        opts: &MixOptions,
    ) -> Result<(Rendered, Stems), MixError> {
        let one = OneClip::new(events);
        let lens = [clip_length];
        let corpus = Corpus::clean(*bank, one.columns(), &lens).in_scene(SceneColumns { ev_speed: speeds, ..*scene });
        let mut r = render_clip(&corpus, 0, opts, true)?;
        let stems = r.stems.take().unwrap();
        Ok((r, stems))
    }

    fn tmpdir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("reasonaudio-scene-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// Three atoms (a tone, a noise burst, a decaying click train), 16 clips.
    #[allow(clippy::type_complexity)]
    fn corpus() -> (Vec<f32>, Vec<u64>, Vec<u32>, Vec<u32>, Vec<i64>, Vec<i64>, Vec<f32>, Vec<i64>) {
        let mut rng = crate::plan::rng_for(9, 9);
        let mut audio: Vec<f32> = (0..4000).map(|i| 0.5 * (i as f32 * 0.07).sin()).collect();
        audio.extend((0..6000).map(|_| rng.gen_range(-0.3f32..0.3)));
        audio.extend((0..3000).map(|i| if i % 400 == 0 { 0.9 } else { 0.0 }));
        let offsets = vec![0u64, 4000, 10_000, 13_000];
        let (mut c, mut a, mut o, mut l, mut g) = (vec![], vec![], vec![], vec![], vec![]);
        for clip in 0..16u32 {
            for e in 0..(2 + clip % 3) {
                c.push(clip);
                a.push((clip + e) % 3);
                o.push(1000 + i64::from(e) * 9000 + i64::from(clip % 2) * 3000 * i64::from(e));
                l.push(3000 + i64::from((clip * 7 + e * 311) % 5000));
                g.push(-2.0 * e as f32);
            }
        }
        let lens = vec![60_000i64; 16];
        (audio, offsets, c, a, o, l, g, lens)
    }

    fn room_bank(sr: u32) -> (Vec<f32>, Vec<u64>) {
        let mut rng = crate::plan::rng_for(4, 4);
        let mut audio = Vec::new();
        let mut offsets = vec![0u64];
        for rt60 in [0.3f64, 0.6] {
            let a = 1000f64.ln() / (rt60 * f64::from(sr));
            let mut raw = vec![0.0f32; 40];
            raw.push(1.0);
            raw.extend(
                (1..(rt60 * f64::from(sr)) as usize)
                    .map(|k| ((-a * k as f64).exp() as f32) * rng.gen_range(-0.6f32..0.6)),
            );
            audio.extend(prepare_ir(&raw).unwrap());
            offsets.push(audio.len() as u64);
        }
        (audio, offsets)
    }

    fn bed_bank() -> (Vec<f32>, Vec<u64>) {
        let mut audio = noise(Texture::Pink, 25_000, 1, 0);
        audio.extend(noise(Texture::Brown, 50_000, 1, 1));
        (audio, vec![0, 25_000, 75_000])
    }

    #[test]
    fn every_event_meets_its_snr_on_the_rendered_stems() {
        let (audio, offsets, c, a, o, l, g, lens) = corpus();
        let bank = AtomBank::new(&audio, &offsets).unwrap();
        let (rooms_audio, rooms_off) = room_bank(16_000);
        let (beds_audio, beds_off) = bed_bank();
        let cols = EventColumns { clip: &c, atom: &a, onset: &o, length: &l, gain_db: &g };
        let bounds = cols.clip_bounds(lens.len()).unwrap();
        let opts = MixOptions::default();
        for clip in 0..lens.len() {
            let evs: Vec<EventSpan> = (bounds[clip]..bounds[clip + 1]).map(|r| cols.row(r)).collect();
            let speeds: Vec<u32> = (0..evs.len()).map(|i| [200u32, 150, 260][(clip + i) % 3]).collect();
            // Every other clip also shifts and stretches its events (on top of the varispeed).
            let shifted = clip % 2 == 1;
            let cents: Vec<i32> = (0..evs.len()).map(|i| [0, 350, -700][(clip + i) % 3]).collect();
            let stretches: Vec<u32> = (0..evs.len()).map(|i| [1000u32, 640, 1800][(clip + 2 * i) % 3]).collect();
            for (room, snr) in [(-1i32, 10.0f32), (0, 0.0), (1, 20.0), (clip as i32 % 2, -5.0)] {
                let scene = SceneColumns {
                    beds: AtomBank::new(&beds_audio, &beds_off).unwrap(),
                    rooms: AtomBank::new(&rooms_audio, &rooms_off).unwrap(),
                    clip_bed: &[(clip % 2) as i32],
                    clip_bed_start: &[(clip as i64 * 1237) % 25_000],
                    clip_snr_db: &[snr],
                    clip_room: &[room],
                    ev_speed: &[],
                    ev_pitch_cents: if shifted { &cents } else { &[] },
                    ev_stretch: if shifted { &stretches } else { &[] },
                };
                let (r, stems) = render_clip_scene(&bank, &evs, &speeds, lens[clip], &scene, &opts).unwrap();
                let mut worst = f64::INFINITY;
                for (i, ev) in evs.iter().enumerate() {
                    let (s, z) = (ev.onset as usize, (ev.onset + ev.length) as usize);
                    // Recomputed from the stems, independently of the renderer's figures; the
                    // event stem is its own wet signal, the bed stem the bed at its gain.
                    let e = bed::energy(&stems.events[i][s..z]);
                    let b = bed::energy(&stems.bed[s..z]);
                    let got = 10.0 * (e / b).log10();
                    assert!(got >= f64::from(snr), "clip {clip} room {room} event {i}: {got} < {snr}");
                    assert!((got - f64::from(r.event_snr_db[i])).abs() < 1e-3);
                    // Through the limiter (one gain) and 16-bit quantisation, as written.
                    let q = |x: &[f32]| -> f64 {
                        x.iter().map(|&v| f64::from(wav::quantize_i16(v * r.stats.gain)).powi(2)).sum()
                    };
                    let after = 10.0 * (q(&stems.events[i][s..z]) / q(&stems.bed[s..z])).log10();
                    assert!(after >= f64::from(snr), "quantised: {after} < {snr}");
                    worst = worst.min(got);
                }
                // The bed is as loud as allowed: the tightest event sits at s + headroom (to 0.1 dB).
                assert!((worst - f64::from(snr)).abs() < 0.1, "clip {clip}: worst {worst} vs {snr}");
                assert!(worst >= f64::from(snr) + SNR_HEADROOM_DB - 1e-6);
                // The mix is the sum of its stems, limited.
                for j in (0..r.audio.len()).step_by(97) {
                    let sum: f32 = stems.events.iter().map(|s| s[j]).sum::<f32>() + stems.bed[j];
                    assert!((sum * r.stats.gain - r.audio[j]).abs() < 1e-5);
                }
                assert!(r.audio.iter().all(|x| x.is_finite() && x.abs() <= opts.ceiling), "clip {clip} room {room}");
                // Outside every event and tail the audio is the bed alone.
                let tail = if room >= 0 { scene.rooms.atom(room as usize).unwrap().len() } else { 0 };
                let end = evs.iter().map(|e| (e.onset + e.length) as usize + tail).max().unwrap();
                let start = evs.iter().map(|e| e.onset as usize).min().unwrap();
                for j in (0..start).chain(end.min(r.audio.len())..r.audio.len()) {
                    assert_eq!(r.audio[j], stems.bed[j] * r.stats.gain);
                }
            }
        }
    }

    #[test]
    fn sounds_that_cancel_still_stand_above_the_bed_in_the_mix() {
        // Two overlapping events of a tone and its negation: over the second one's extent the mix
        // holds far less energy than either sound alone; the SNR must hold there too (the mix minus
        // the bed), not only on each event's own stem.
        let mut audio: Vec<f32> = (0..8000).map(|i| 0.5 * (i as f32 * 0.05).sin()).collect();
        audio.extend((0..8000).map(|i| -0.45 * (i as f32 * 0.05).sin()));
        let bank = AtomBank::new(&audio, &[0, 8000, 16_000]).unwrap();
        let evs = [
            EventSpan { atom: 0, onset: 2000, length: 8000, gain_db: 0.0 },
            EventSpan { atom: 1, onset: 4000, length: 4000, gain_db: 0.0 },
        ];
        let (beds_audio, beds_off) = bed_bank();
        let scene = SceneColumns {
            beds: AtomBank::new(&beds_audio, &beds_off).unwrap(),
            rooms: AtomBank::new(&[], &[0]).unwrap(),
            clip_bed: &[0],
            clip_bed_start: &[123],
            clip_snr_db: &[10.0],
            clip_room: &[-1],
            ev_speed: &[],
            ev_pitch_cents: &[],
            ev_stretch: &[],
        };
        let (_, stems) = render_clip_scene(&bank, &evs, &[], 14_000, &scene, &MixOptions::default()).unwrap();
        for ev in &evs {
            let (a, z) = (ev.onset as usize, (ev.onset + ev.length) as usize);
            let mix: Vec<f32> = (a..z).map(|j| stems.events.iter().map(|s| s[j]).sum()).collect();
            let got = 10.0 * (bed::energy(&mix) / bed::energy(&stems.bed[a..z])).log10();
            assert!(got >= 10.0, "the mix over [{a}, {z}) is {got} dB above the bed");
        }
    }

    #[test]
    fn an_empty_scene_renders_the_clean_bytes_and_threads_do_not_matter() {
        let (audio, offsets, c, a, o, l, g, lens) = corpus();
        let bank = AtomBank::new(&audio, &offsets).unwrap();
        let cols = EventColumns { clip: &c, atom: &a, onset: &o, length: &l, gain_db: &g };
        let (rooms_audio, rooms_off) = room_bank(16_000);
        let (beds_audio, beds_off) = bed_bank();
        let n = lens.len();
        let opts = MixOptions::default();
        let none = vec![-1i32; n];
        let zeros = vec![0i64; n];
        let snr = vec![f32::NAN; n];
        let clean_scene = SceneColumns {
            beds: AtomBank::new(&beds_audio, &beds_off).unwrap(),
            rooms: AtomBank::new(&rooms_audio, &rooms_off).unwrap(),
            clip_bed: &none,
            clip_bed_start: &zeros,
            clip_snr_db: &snr,
            clip_room: &none,
            ev_speed: &[],
            ev_pitch_cents: &[],
            ev_stretch: &[],
        };
        let d = tmpdir("clean");
        let p1 = numbered_paths(&d, "a", n, AudioFormat::Wav16);
        let p2 = numbered_paths(&d, "b", n, AudioFormat::Wav16);
        render_corpus(
            &Corpus::clean(bank, cols, &lens),
            &p1,
            &opts,
            &CorpusOptions { threads: 2, ..CorpusOptions::default() },
            Cancel::NEVER,
        )
        .unwrap();
        render_corpus(
            &Corpus::clean(bank, cols, &lens).in_scene(clean_scene),
            &p2,
            &opts,
            &CorpusOptions { format: AudioFormat::Wav16, threads: 2, sha256: false, atomic: true },
            Cancel::NEVER,
        )
        .unwrap();
        for (x, y) in p1.iter().zip(&p2) {
            assert_eq!(fs::read(x).unwrap(), fs::read(y).unwrap());
        }
        // A full scene: byte-identical across thread counts.
        let beds: Vec<i32> = (0..n as i32).map(|c| c % 3 - 1).collect();
        let rooms: Vec<i32> = (0..n as i32).map(|c| (c + 1) % 3 - 1).collect();
        let starts: Vec<i64> = (0..n as i64).map(|c| c * 1111 % 25_000).collect();
        let snrs: Vec<f32> = (0..n).map(|c| c as f32 - 5.0).collect();
        let speeds: Vec<u32> = (0..c.len()).map(|i| [200u32, 180, 230][i % 3]).collect();
        let cents: Vec<i32> = (0..c.len()).map(|i| [0, -250, 90, 1200][i % 4]).collect();
        let stretches: Vec<u32> = (0..c.len()).map(|i| [1000u32, 1333, 777][i % 3]).collect();
        let scene = SceneColumns {
            clip_bed: &beds,
            clip_bed_start: &starts,
            clip_snr_db: &snrs,
            clip_room: &rooms,
            ev_speed: &speeds,
            ev_pitch_cents: &cents,
            ev_stretch: &stretches,
            ..clean_scene
        };
        let mut outs = Vec::new();
        for threads in [1usize, 2, 3] {
            let p = numbered_paths(&d, &format!("t{threads}-"), n, AudioFormat::Flac16);
            let rep = render_corpus(
                &Corpus::clean(bank, cols, &lens).in_scene(scene),
                &p,
                &opts,
                &CorpusOptions { format: AudioFormat::Flac16, threads, sha256: true, atomic: true },
                Cancel::NEVER,
            )
            .unwrap();
            for (x, digest) in p.iter().zip(&rep.sha256) {
                assert_eq!(<[u8; 32]>::from(Sha256::digest(fs::read(x).unwrap())), *digest, "hashed as written");
            }
            outs.push((rep, p.iter().map(|x| fs::read(x).unwrap()).collect::<Vec<_>>()));
        }
        assert_eq!(outs[0], outs[1]);
        assert_eq!(outs[0], outs[2]);
        let rep = &outs[0].0;
        assert_eq!(rep.event_snr_db.len(), c.len());
        for (row, &clip) in c.iter().enumerate() {
            if beds[clip as usize] >= 0 {
                assert!(rep.event_snr_db[row] >= snrs[clip as usize], "row {row}");
            } else {
                assert!(rep.event_snr_db[row].is_infinite());
            }
        }
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn bad_scene_columns_are_refused_before_writing() {
        let (audio, offsets, c, a, o, l, g, lens) = corpus();
        let bank = AtomBank::new(&audio, &offsets).unwrap();
        let cols = EventColumns { clip: &c, atom: &a, onset: &o, length: &l, gain_db: &g };
        let (beds_audio, beds_off) = bed_bank();
        let n = lens.len();
        let d = tmpdir("bad");
        let paths = numbered_paths(&d, "x", n, AudioFormat::Wav16);
        let none = vec![-1i32; n];
        let zeros = vec![0i64; n];
        let snr = vec![10f32; n];
        let base = SceneColumns {
            beds: AtomBank::new(&beds_audio, &beds_off).unwrap(),
            rooms: AtomBank::new(&[], &[0]).unwrap(),
            clip_bed: &none,
            clip_bed_start: &zeros,
            clip_snr_db: &snr,
            clip_room: &none,
            ev_speed: &[],
            ev_pitch_cents: &[],
            ev_stretch: &[],
        };
        let mut bad_bed = none.clone();
        bad_bed[3] = 2;
        let mut bad_room = none.clone();
        bad_room[4] = 0;
        let mut nan = snr.clone();
        nan[5] = f32::NAN;
        let mut one_bed = none.clone();
        one_bed[5] = 0;
        let mut far = zeros.clone();
        far[6] = 25_000;
        let mut bed6 = none.clone();
        bed6[6] = 0;
        let speeds = vec![500u32; c.len()];
        let mut cents = vec![0i32; c.len()];
        cents[7] = 1300;
        let mut stretches = vec![1000u32; c.len()];
        stretches[2] = 2500;
        let cases: Vec<(SceneColumns, &str)> = vec![
            (SceneColumns { ev_pitch_cents: &cents, ..base }, "event row 7: pitch shift 1300 cents"),
            (SceneColumns { ev_stretch: &stretches, ..base }, "event row 2: stretch 2500/1000"),
            (SceneColumns { ev_stretch: &stretches[1..], ..base }, "ev_stretch has"),
            (SceneColumns { clip_bed: &bad_bed, ..base }, "clip 3: bed 2"),
            (SceneColumns { clip_room: &bad_room, ..base }, "clip 4: room 0"),
            (
                SceneColumns { clip_bed: &one_bed, clip_snr_db: &nan, ..base },
                "clip 5: background_snr_db must be finite",
            ),
            (SceneColumns { clip_bed: &bed6, clip_bed_start: &far, ..base }, "clip 6: bed start 25000"),
            (SceneColumns { ev_speed: &speeds, ..base }, "speed 500/200"),
            (SceneColumns { clip_room: &none[1..], ..base }, "clip_room has 15 values for 16 clips"),
        ];
        for (scene, want) in cases {
            let e = render_corpus(
                &Corpus::clean(bank, cols, &lens).in_scene(scene),
                &paths,
                &MixOptions::default(),
                &CorpusOptions { format: AudioFormat::Wav16, threads: 1, sha256: false, atomic: true },
                Cancel::NEVER,
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains(want), "{e} (want {want})");
        }
        assert_eq!(fs::read_dir(&d).unwrap().count(), 0);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn room_tails_ring_after_the_dry_offset_and_not_before_the_onset() {
        let sr = 16_000;
        let (rooms_audio, rooms_off) = room_bank(sr);
        let rooms = AtomBank::new(&rooms_audio, &rooms_off).unwrap();
        for r in 0..2 {
            let t = tail_s(rooms.atom(r).unwrap(), sr);
            let rt60 = [0.3, 0.6][r];
            assert!((t - rt60 / 3.0).abs() < 0.03, "room {r}: tail {t}");
        }
        let audio = vec![0.5f32; 4000];
        let bank = AtomBank::new(&audio, &[0, 4000]).unwrap();
        let evs = [EventSpan { atom: 0, onset: 5000, length: 4000, gain_db: 0.0 }];
        let scene = SceneColumns {
            beds: AtomBank::new(&[], &[0]).unwrap(),
            rooms,
            clip_bed: &[-1],
            clip_bed_start: &[0],
            clip_snr_db: &[0.0],
            clip_room: &[1],
            ev_speed: &[],
            ev_pitch_cents: &[],
            ev_stretch: &[],
        };
        let (r, _) = render_clip_scene(&bank, &evs, &[], 30_000, &scene, &MixOptions::default()).unwrap();
        assert!(r.audio[..5000].iter().all(|&x| x == 0.0), "nothing before the dry onset");
        assert!(r.audio[5000] != 0.0, "the wet sound starts at the dry onset");
        let ring: f64 = bed::energy(&r.audio[9000..9000 + 1600]);
        assert!(ring > 1e-3, "the room rings on after the dry offset ({ring})");
    }
}
