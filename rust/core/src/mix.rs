//! Sample-accurate mixing primitives: the atom bank, event columns, loop/trim/fade, the limiter.
//!
//! A clip plan is a list of events; each event places one atom of the [`AtomBank`] at an
//! integer `onset` sample for exactly `length` samples, at `gain_db`:
//!
//! * `length == atom length`: the atom as is;
//! * `length <  atom length`: the atom's head, trimmed (the boundary fade-out smooths the cut);
//! * `length >  atom length`: the atom looped; consecutive copies overlap by a crossfade of
//!   `crossfade` samples (shrunk to half the atom for short atoms) with equal-power
//!   (sine/cosine) weights. The head and tail of an environmental sound are, in general,
//!   uncorrelated, and for uncorrelated signals an equal-power crossfade keeps the loudness
//!   constant through the seam, where a linear one dips by 3 dB.
//!
//! Every event then gets raised-cosine boundary fades of `fade` samples (at most half the
//! event; `fade == 0` disables them, so a native event is then a bit-exact scaled copy), is
//! scaled by its gain and added into the clip starting exactly at `onset`.
//!
//! Finally a whole-clip normaliser keeps every sample finite and within
//! `[-ceiling, ceiling]`: when the peak exceeds the ceiling the whole clip is scaled by
//! `ceiling / peak`. It is linear (no clipping, no distortion) and leaves silence exactly 0.
//!
//! The renderer that puts these together, clip by clip and corpus by corpus (a clean clip being a
//! clip in the empty scene), is [`crate::scene::render`].

use std::f64::consts::PI;
use std::path::{Path, PathBuf};

use crate::wav::{AudioFormat, WavError};

/// Default boundary fade, in milliseconds.
pub const DEFAULT_FADE_MS: f64 = 5.0;
/// Default loop crossfade, in milliseconds.
pub const DEFAULT_CROSSFADE_MS: f64 = 50.0;
/// Default limiter ceiling (linear full scale), leaving about 0.18 dB of headroom.
pub const DEFAULT_CEILING: f32 = 0.98;

/// Why a plan could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum MixError {
    /// The bank's offsets do not bound its samples.
    #[error("atom_offsets must hold n_atoms + 1 non-decreasing values starting at 0 and ending at len(atom_audio) = {audio_len}; {what}")]
    BadOffsets {
        /// Length of the bank's samples.
        audio_len: usize,
        /// What is wrong.
        what: String,
    },
    /// The event columns differ in length.
    #[error("event columns have different lengths: {0}")]
    ColumnLengths(String),
    /// Not one output path per clip.
    #[error("{0} clip lengths but {1} output paths")]
    PathCount(usize, usize),
    /// The events are not sorted by clip.
    #[error("events must be sorted by clip: row {row} has clip {clip} after clip {previous}")]
    Unsorted {
        /// Row of the event columns.
        row: usize,
        /// Clip index.
        clip: u32,
        /// The clip of the row before.
        previous: u32,
    },
    /// An event names a clip past the last.
    #[error("row {row}: clip index {clip} is out of range (there are {n_clips} clips)")]
    ClipOutOfRange {
        /// Row of the event columns.
        row: usize,
        /// Clip index.
        clip: u32,
        /// Number of clips.
        n_clips: usize,
    },
    /// An event names an atom past the bank's last.
    #[error(
        "clip {clip}, event {event} (row {row}): atom index {atom} is out of range (the bank has {n_atoms} atoms)"
    )]
    AtomOutOfRange {
        /// Clip index.
        clip: usize,
        /// Index of the event within its clip.
        event: usize,
        /// Row of the event columns.
        row: usize,
        /// Atom index.
        atom: u32,
        /// Number of atoms in the bank.
        n_atoms: usize,
    },
    /// An event names an empty atom.
    #[error("clip {clip}, event {event} (row {row}): atom {atom} is empty")]
    EmptyAtom {
        /// Clip index.
        clip: usize,
        /// Index of the event within its clip.
        event: usize,
        /// Row of the event columns.
        row: usize,
        /// Atom index.
        atom: u32,
    },
    /// An event does not lie inside its clip.
    #[error("clip {clip}, event {event} (row {row}): samples [{onset}, {onset} + {length}) lie outside the clip of {clip_length} samples (need onset >= 0, length > 0, onset + length <= clip length)")]
    OutsideClip {
        /// Clip index.
        clip: usize,
        /// Index of the event within its clip.
        event: usize,
        /// Row of the event columns.
        row: usize,
        /// The event's onset, in samples.
        onset: i64,
        /// The event's or clip's length, in samples.
        length: i64,
        /// The clip's length, in samples.
        clip_length: i64,
    },
    /// An event's gain is not finite.
    #[error("clip {clip}, event {event} (row {row}): gain_db {gain_db} does not give a finite gain")]
    BadGain {
        /// Clip index.
        clip: usize,
        /// Index of the event within its clip.
        event: usize,
        /// Row of the event columns.
        row: usize,
        /// The event's gain in dB.
        gain_db: f32,
    },
    /// A clip's length is negative.
    #[error("clip {clip}: length {length} is negative")]
    BadClipLength {
        /// Clip index.
        clip: usize,
        /// The event's or clip's length, in samples.
        length: i64,
    },
    /// A mix holds NaN or infinity.
    #[error("clip {clip}: the mix contains non-finite samples (NaN or infinity in an atom?)")]
    NonFinite {
        /// Clip index.
        clip: usize,
    },
    /// A rendering option is out of range.
    #[error("bad mix option: {0}")]
    BadOption(String),
    /// The local thread pool could not be built.
    #[error("cannot build a thread pool: {0}")]
    ThreadPool(String),
    /// A clip could not be encoded or written.
    #[error("clip {clip}: {source}")]
    Write {
        /// Clip index.
        clip: usize,
        /// The encoder's or the file system's error.
        #[source]
        source: WavError,
    },
    /// The cancellation flag was set.
    #[error("rendering cancelled")]
    Cancelled,
    /// A single clip was asked for past the corpus's last.
    #[error("clip {clip} is out of range (there are {n_clips} clips)")]
    NoSuchClip {
        /// Clip index.
        clip: usize,
        /// Number of clips.
        n_clips: usize,
    },
    /// A scene column, bed, room or speed change is invalid.
    #[error("{0}")]
    Scene(String),
}

/// A read-only view of the atom bank: one flat sample array plus `n_atoms + 1` offsets.
#[derive(Clone, Copy, Debug)]
pub struct AtomBank<'a> {
    audio: &'a [f32],
    offsets: &'a [u64],
}

impl AtomBank<'static> {
    /// The bank of no atom (what a scene without beds or rooms holds).
    pub const EMPTY: Self = AtomBank { audio: &[], offsets: &[0] };
}

impl<'a> AtomBank<'a> {
    /// Checks that `offsets` are `n_atoms + 1` non-decreasing bounds from 0 to `audio.len()`.
    pub fn new(audio: &'a [f32], offsets: &'a [u64]) -> Result<Self, MixError> {
        let bad = |what: String| MixError::BadOffsets { audio_len: audio.len(), what };
        match (offsets.first(), offsets.last()) {
            (Some(&0), Some(&last)) if last == audio.len() as u64 => {}
            (None, _) => return Err(bad("got an empty array".into())),
            (Some(&first), Some(&last)) => {
                return Err(bad(format!("got first {first}, last {last}")));
            }
            _ => unreachable!(),
        }
        if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
            return Err(bad(format!("offsets[{}] = {} > offsets[{}] = {}", i, offsets[i], i + 1, offsets[i + 1])));
        }
        Ok(Self { audio, offsets })
    }

    /// Number of atoms.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether the bank holds no atom.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The samples of atom `i`, if it exists.
    pub fn atom(&self, i: usize) -> Option<&'a [f32]> {
        if i < self.len() {
            Some(&self.audio[self.offsets[i] as usize..self.offsets[i + 1] as usize])
        } else {
            None
        }
    }
}

/// One event of a clip: `length` samples of atom `atom` starting at sample `onset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventSpan {
    /// Index of the atom in the bank.
    pub atom: u32,
    /// First sample of the event in its clip.
    pub onset: i64,
    /// Number of samples the event lasts (looped or trimmed to it).
    pub length: i64,
    /// The event's gain in dB.
    pub gain_db: f32,
}

/// Rendering options, in samples at `sample_rate`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MixOptions {
    /// The clips' sample rate (the pitch shifter's block sizes follow it).
    pub sample_rate: u32,
    /// Raised-cosine fade-in and fade-out at each event boundary (0 disables).
    pub fade: usize,
    /// Equal-power crossfade between loop copies (shrunk to half the atom for short atoms).
    pub crossfade: usize,
    /// Limiter ceiling in (0, 1]: the clip is scaled down when its peak exceeds it.
    pub ceiling: f32,
}

impl MixOptions {
    /// Options from durations in milliseconds at `sample_rate` (rounded to whole samples).
    pub fn from_ms(sample_rate: u32, fade_ms: f64, crossfade_ms: f64, ceiling: f32) -> Result<Self, MixError> {
        let samples = |name: &str, ms: f64| {
            if !(ms.is_finite() && ms >= 0.0) {
                return Err(MixError::BadOption(format!("{name} must be a finite number >= 0, got {ms}")));
            }
            Ok((ms * f64::from(sample_rate) / 1000.0).round() as usize)
        };
        let opts = Self {
            sample_rate,
            fade: samples("fade_ms", fade_ms)?,
            crossfade: samples("crossfade_ms", crossfade_ms)?,
            ceiling,
        };
        opts.validate()?;
        Ok(opts)
    }

    fn validate(&self) -> Result<(), MixError> {
        if !(self.ceiling > 0.0 && self.ceiling <= 1.0) {
            return Err(MixError::BadOption(format!("ceiling must be in (0, 1], got {}", self.ceiling)));
        }
        Ok(())
    }
}

impl Default for MixOptions {
    /// 5 ms fades and 50 ms crossfades at 16 kHz, ceiling 0.98.
    fn default() -> Self {
        Self { sample_rate: 16_000, fade: 80, crossfade: 800, ceiling: DEFAULT_CEILING }
    }
}

/// Fade weights, precomputed once per render for the configured lengths; shorter (shrunk)
/// fades are computed on the fly, which only happens for short events and atoms.
#[derive(Clone, Debug)]
pub struct Curves {
    opts: MixOptions,
    fade_in: Vec<f32>,
    xfade_in: Vec<f32>,
    xfade_out: Vec<f32>,
}

/// Raised-cosine fade-in weight of sample `i` of an `n`-sample fade; strictly inside (0, 1), so
/// the event's first sample is not silenced and the fade reaches full level right after it.
#[inline]
fn raised_cosine(i: usize, n: usize) -> f32 {
    (0.5 - 0.5 * (PI * (i + 1) as f64 / (n + 1) as f64).cos()) as f32
}

/// Equal-power crossfade weights (fade-in, fade-out) of sample `i` of an `n`-sample crossfade.
#[inline]
fn equal_power(i: usize, n: usize) -> (f32, f32) {
    let theta = 0.5 * PI * (i as f64 + 0.5) / n as f64;
    (theta.sin() as f32, theta.cos() as f32)
}

impl Curves {
    /// Precomputes the fade tables of `opts`.
    pub fn new(opts: MixOptions) -> Result<Self, MixError> {
        opts.validate()?;
        let fade_in = (0..opts.fade).map(|i| raised_cosine(i, opts.fade)).collect();
        let (xfade_in, xfade_out) = (0..opts.crossfade).map(|i| equal_power(i, opts.crossfade)).unzip();
        Ok(Self { opts, fade_in, xfade_in, xfade_out })
    }

    /// The options the tables were built for.
    pub fn options(&self) -> &MixOptions {
        &self.opts
    }

    /// Applies the raised-cosine fade-in and fade-out of `fade` samples (at most half of `out`)
    /// at the two ends of `out`: the boundary fades of [`render_event`], for a whole bed.
    pub fn apply_edge_fades(&self, out: &mut [f32]) {
        let length = out.len();
        let f = self.opts.fade.min(length / 2);
        for i in 0..f {
            let w = self.fade_in(i, f);
            out[i] *= w;
            out[length - 1 - i] *= w;
        }
    }

    fn fade_in(&self, i: usize, n: usize) -> f32 {
        if n == self.fade_in.len() {
            self.fade_in[i]
        } else {
            raised_cosine(i, n)
        }
    }

    fn xfade(&self, i: usize, n: usize) -> (f32, f32) {
        if n == self.xfade_in.len() {
            (self.xfade_in[i], self.xfade_out[i])
        } else {
            equal_power(i, n)
        }
    }
}

/// Writes exactly `out.len()` samples of `atom` into `out` (overwriting it): the atom itself,
/// its trimmed head, or loop copies joined by equal-power crossfades; then applies the
/// boundary fades. Gain is not applied here. `atom` must not be empty.
pub fn render_event(atom: &[f32], curves: &Curves, out: &mut [f32]) {
    assert!(!atom.is_empty(), "render_event needs a non-empty atom");
    let length = out.len();
    let n = atom.len();
    let first = n.min(length);
    out[..first].copy_from_slice(&atom[..first]);
    if length > n {
        let c = curves.opts.crossfade.min(n / 2);
        let period = n - c;
        let mut start = period;
        while start < length {
            // The previous copy's tail occupies [start, start + c): fade it out under our head.
            let xend = (start + c).min(length);
            for (j, y) in out[start..xend].iter_mut().enumerate() {
                let (fi, fo) = curves.xfade(j, c);
                *y = *y * fo + atom[j] * fi;
            }
            let body_end = (start + n).min(length);
            if start + c < body_end {
                out[start + c..body_end].copy_from_slice(&atom[c..body_end - start]);
            }
            start += period;
        }
    }
    let f = curves.opts.fade.min(length / 2);
    for i in 0..f {
        let w = curves.fade_in(i, f);
        out[i] *= w;
        out[length - 1 - i] *= w;
    }
}

/// Adds `gain` times the event [`render_event`] would write for `atom` into `out` (whose length is
/// the event's), without writing the event anywhere first: the same f32 operations in the same
/// order on every sample, so the sum is bit-identical to rendering the event into a buffer, scaling
/// and adding it. Only the samples under a crossfade or a boundary fade take the per-sample path;
/// the copies of the atom between them are one scaled add each (a loop the compiler vectorises).
pub(crate) fn add_event(atom: &[f32], curves: &Curves, gain: f32, out: &mut [f32]) {
    let length = out.len();
    let n = atom.len();
    let f = curves.opts.fade.min(length / 2);
    let (c, period) = if length > n {
        let c = curves.opts.crossfade.min(n / 2);
        (c, n - c)
    } else {
        (0, n)
    };
    // The unfaded event is a sequence of pieces: copy 0 of the atom up to where copy 1 starts,
    // then for every further copy k (starting at k * period) its crossfade with the tail of the
    // copy before (c samples) and its body up to the next copy (or the event's end).
    let mut emit = |a: usize, b: usize, piece: Piece| {
        // split [a, b) at the two fade zones [0, f) and [length - f, length)
        let mut i = a;
        while i < b {
            let (end, w_zone) = if i < f {
                (b.min(f), true)
            } else if i < length - f {
                (b.min(length - f), false)
            } else {
                (b, true)
            };
            if w_zone {
                for (k, y) in out[i..end].iter_mut().enumerate() {
                    let at = i + k;
                    let w = if at < f { curves.fade_in(at, f) } else { curves.fade_in(length - 1 - at, f) };
                    *y += gain * (piece.sample(atom, curves, at) * w);
                }
            } else {
                match piece {
                    Piece::Copy { shift } => add_scaled(&mut out[i..end], &atom[i - shift..end - shift], gain),
                    Piece::Crossfade { .. } => {
                        for (k, y) in out[i..end].iter_mut().enumerate() {
                            *y += gain * piece.sample(atom, curves, i + k);
                        }
                    }
                }
            }
            i = end;
        }
    };
    if length <= n {
        emit(0, length, Piece::Copy { shift: 0 });
        return;
    }
    emit(0, period, Piece::Copy { shift: 0 });
    let mut start = period;
    while start < length {
        let xend = (start + c).min(length);
        emit(start, xend, Piece::Crossfade { start, c });
        let end = (start + period).min(length);
        if xend < end {
            emit(xend, end, Piece::Copy { shift: start });
        }
        start += period;
    }
}

/// `out[i] += gain * x[i]` (float32, no FMA: Rust never contracts a multiply and an add), on
/// AVX-512 or AVX2 where the CPU has them: lane by lane the same operations, so the same sums.
fn add_scaled(out: &mut [f32], x: &[f32], gain: f32) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512 F (checked just above).
            return unsafe { add_scaled_avx512(out, x, gain) };
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { add_scaled_avx2(out, x, gain) };
        }
    }
    add_scaled_portable(out, x, gain);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn add_scaled_avx512(out: &mut [f32], x: &[f32], gain: f32) {
    add_scaled_portable(out, x, gain);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn add_scaled_avx2(out: &mut [f32], x: &[f32], gain: f32) {
    add_scaled_portable(out, x, gain);
}

#[inline(always)]
fn add_scaled_portable(out: &mut [f32], x: &[f32], gain: f32) {
    for (y, &x) in out.iter_mut().zip(x) {
        *y += gain * x;
    }
}

/// A piece of an unfaded event (see [`add_event`]).
#[derive(Clone, Copy)]
enum Piece {
    /// `atom[i - shift]` at event sample i.
    Copy { shift: usize },
    /// The equal-power crossfade of copy `start / period` with the tail of the copy before it.
    Crossfade { start: usize, c: usize },
}

impl Piece {
    /// Event sample `i` before the boundary fades, as [`render_event`] computes it.
    #[inline]
    fn sample(self, atom: &[f32], curves: &Curves, i: usize) -> f32 {
        match self {
            Piece::Copy { shift } => atom[i - shift],
            Piece::Crossfade { start, c } => {
                // the previous copy's sample here is its body's atom[n - c + j] (c <= n / 2)
                let j = i - start;
                let (fi, fo) = curves.xfade(j, c);
                atom[atom.len() - c + j] * fo + atom[j] * fi
            }
        }
    }
}

pub(crate) fn db_to_gain(db: f32) -> f32 {
    10f64.powf(f64::from(db) / 20.0) as f32
}

/// Location of one event in error messages: clip index, index within the clip, row of the
/// event columns.
#[derive(Clone, Copy)]
pub(crate) struct Where {
    pub(crate) clip: usize,
    pub(crate) event: usize,
    pub(crate) row: usize,
}

pub(crate) fn check_event<'a>(
    bank: &AtomBank<'a>,
    ev: &EventSpan,
    clip_length: i64,
    at: Where,
) -> Result<&'a [f32], MixError> {
    let Where { clip, event, row } = at;
    let atom = bank.atom(ev.atom as usize).ok_or(MixError::AtomOutOfRange {
        clip,
        event,
        row,
        atom: ev.atom,
        n_atoms: bank.len(),
    })?;
    if atom.is_empty() {
        return Err(MixError::EmptyAtom { clip, event, row, atom: ev.atom });
    }
    let inside =
        ev.onset >= 0 && ev.length > 0 && ev.onset.checked_add(ev.length).is_some_and(|end| end <= clip_length);
    if !inside {
        return Err(MixError::OutsideClip { clip, event, row, onset: ev.onset, length: ev.length, clip_length });
    }
    if !db_to_gain(ev.gain_db).is_finite() {
        return Err(MixError::BadGain { clip, event, row, gain_db: ev.gain_db });
    }
    Ok(atom)
}

/// Largest absolute sample and whether every sample is finite. Independent lanes let the
/// compiler vectorise (a single `f32::max` chain does not, because of its NaN rules).
pub(crate) fn peak_and_finite(x: &[f32]) -> (f32, bool) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { peak_and_finite_avx2(x) };
    }
    peak_and_finite_portable(x)
}

/// [`peak_and_finite`] compiled for AVX2: a maximum does not depend on the order it is taken in,
/// so the same result.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn peak_and_finite_avx2(x: &[f32]) -> (f32, bool) {
    peak_and_finite_portable(x)
}

#[inline(always)]
fn peak_and_finite_portable(x: &[f32]) -> (f32, bool) {
    const LANES: usize = 16;
    let mut peak = [0f32; LANES];
    let mut finite = [true; LANES];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for i in 0..LANES {
            let a = chunk[i].abs();
            finite[i] &= a < f32::INFINITY;
            peak[i] = if a > peak[i] { a } else { peak[i] };
        }
    }
    let mut p = peak.iter().fold(0f32, |m, &a| if a > m { a } else { m });
    let mut f = finite.iter().all(|&b| b);
    for &v in tail {
        let a = v.abs();
        f &= a < f32::INFINITY;
        p = if a > p { a } else { p };
    }
    (p, f)
}

/// The limiter's linear factor for a mix whose peak is `peak`: 1 within the ceiling, else the
/// largest f32 at or below `ceiling / peak` whose product with the peak stays within the ceiling
/// (the rounded quotient can put the scaled peak one step above it).
pub(crate) fn limiter_gain(peak: f32, ceiling: f32) -> f32 {
    if peak <= ceiling {
        return 1.0;
    }
    let mut gain = ceiling / peak;
    while peak * gain > ceiling {
        gain = f32::from_bits(gain.to_bits() - 1);
    }
    gain
}

/// The events of a whole corpus as columns, sorted by clip (then onset).
#[derive(Clone, Copy, Debug)]
pub struct EventColumns<'a> {
    /// Per event: the clip it belongs to (non-decreasing).
    pub clip: &'a [u32],
    /// Per event: [`EventSpan::atom`].
    pub atom: &'a [u32],
    /// Per event: [`EventSpan::onset`].
    pub onset: &'a [i64],
    /// Per event: [`EventSpan::length`].
    pub length: &'a [i64],
    /// Per event: [`EventSpan::gain_db`].
    pub gain_db: &'a [f32],
}

impl EventColumns<'_> {
    /// Number of events (rows).
    pub fn len(&self) -> usize {
        self.clip.len()
    }

    /// Whether there is no event.
    pub fn is_empty(&self) -> bool {
        self.clip.is_empty()
    }

    pub(crate) fn row(&self, i: usize) -> EventSpan {
        EventSpan { atom: self.atom[i], onset: self.onset[i], length: self.length[i], gain_db: self.gain_db[i] }
    }

    /// Checks column lengths and clip order, and returns the row range of every clip
    /// (`bounds[c]..bounds[c + 1]`).
    pub fn clip_bounds(&self, n_clips: usize) -> Result<Vec<usize>, MixError> {
        let n = self.len();
        let lens = [self.atom.len(), self.onset.len(), self.length.len(), self.gain_db.len()];
        if lens.iter().any(|&l| l != n) {
            return Err(MixError::ColumnLengths(format!(
                "ev_clip {n}, ev_atom {}, ev_onset {}, ev_length {}, ev_gain_db {}",
                lens[0], lens[1], lens[2], lens[3]
            )));
        }
        let mut bounds = vec![0usize; n_clips + 1];
        let mut previous = 0u32;
        for (row, &clip) in self.clip.iter().enumerate() {
            if clip as usize >= n_clips {
                return Err(MixError::ClipOutOfRange { row, clip, n_clips });
            }
            if clip < previous {
                return Err(MixError::Unsorted { row, clip, previous });
            }
            previous = clip;
            bounds[clip as usize + 1] += 1;
        }
        for c in 0..n_clips {
            bounds[c + 1] += bounds[c];
        }
        Ok(bounds)
    }
}

/// One clip's events as owned columns, made from spans (what tests render a single clip from).
#[cfg(test)]
pub(crate) struct OneClip {
    clip: Vec<u32>,
    atom: Vec<u32>,
    onset: Vec<i64>,
    length: Vec<i64>,
    gain_db: Vec<f32>,
}

#[cfg(test)]
impl OneClip {
    pub(crate) fn new(events: &[EventSpan]) -> Self {
        OneClip {
            clip: vec![0; events.len()],
            atom: events.iter().map(|e| e.atom).collect(),
            onset: events.iter().map(|e| e.onset).collect(),
            length: events.iter().map(|e| e.length).collect(),
            gain_db: events.iter().map(|e| e.gain_db).collect(),
        }
    }

    pub(crate) fn columns(&self) -> EventColumns<'_> {
        EventColumns {
            clip: &self.clip,
            atom: &self.atom,
            onset: &self.onset,
            length: &self.length,
            gain_db: &self.gain_db,
        }
    }
}

/// Convenience: paths `dir/<stem><index>.<ext>` for `n` clips (used by tests and benches).
pub fn numbered_paths(dir: &Path, stem: &str, n: usize, format: AudioFormat) -> Vec<PathBuf> {
    (0..n).map(|i| dir.join(format!("{stem}{i:06}.{}", format.extension()))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cancel::Cancel;
    use crate::scene::render::{self, ClipStats, Corpus, CorpusOptions};
    use crate::wav;
    use sha2::{Digest, Sha256};

    /// A clean clip through the renderer: (limited audio, peak, limiter gain).
    #[derive(Debug)]
    struct Rendered {
        audio: Vec<f32>,
        peak: f32,
        gain: f32,
    }

    fn render_clip(
        bank: &AtomBank,
        events: &[EventSpan],
        clip_length: i64,
        opts: &MixOptions,
    ) -> Result<Rendered, MixError> {
        let one = OneClip::new(events);
        let lens = [clip_length];
        let r = render::render_clip(&Corpus::clean(*bank, one.columns(), &lens), 0, opts, false)?;
        Ok(Rendered { audio: r.audio, peak: r.stats.peak, gain: r.stats.gain })
    }

    /// A clean corpus at 16 kHz with the default options: every clip's figures.
    fn render_corpus(
        bank: &AtomBank,
        cols: &EventColumns,
        lens: &[i64],
        paths: &[PathBuf],
        format: AudioFormat,
        threads: usize,
    ) -> Result<Vec<ClipStats>, MixError> {
        let opts = MixOptions::default();
        let out = CorpusOptions { format, threads, ..CorpusOptions::default() };
        Ok(render::render_corpus(&Corpus::clean(*bank, *cols, lens), paths, &opts, &out, Cancel::NEVER)?.clips)
    }

    #[test]
    fn the_limited_peak_never_exceeds_the_ceiling() {
        use rand::Rng;
        let mut rng = crate::plan::rng_for(3, 3);
        for _ in 0..100_000 {
            let ceiling: f32 = [0.98f32, 0.5, 1.0][rng.gen_range(0..3)];
            let peak: f32 = rng.gen_range(ceiling..40.0);
            let g = limiter_gain(peak, ceiling);
            assert!(peak * g <= ceiling, "{peak} * {g} > {ceiling}");
            // at most a few steps below the rounded quotient
            assert!((ceiling / peak).to_bits() - g.to_bits() <= 2, "{peak}: {g} vs {}", ceiling / peak);
        }
        assert_eq!(limiter_gain(0.5, 0.98), 1.0);
    }
    use std::fs;

    fn no_fades(ceiling: f32) -> MixOptions {
        MixOptions { sample_rate: 16_000, fade: 0, crossfade: 0, ceiling }
    }

    fn ev(atom: u32, onset: i64, length: i64, gain_db: f32) -> EventSpan {
        EventSpan { atom, onset, length, gain_db }
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("reasonaudio-mix-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn impulse_lands_exactly_at_onset() {
        let audio = [1.0f32, 0.0, 0.0, 0.0];
        let offsets = [0u64, 4];
        let bank = AtomBank::new(&audio, &offsets).unwrap();
        let events = [ev(0, 0, 4, 0.0), ev(0, 37, 4, -6.0), ev(0, 96, 4, 0.0)];
        let r = render_clip(&bank, &events, 100, &no_fades(1.0)).unwrap();
        assert_eq!(r.audio.len(), 100);
        let nonzero: Vec<usize> = (0..100).filter(|&i| r.audio[i] != 0.0).collect();
        assert_eq!(nonzero, vec![0, 37, 96]);
        assert_eq!(r.audio[0], 1.0);
        assert!((r.audio[37] - 0.501_187_2).abs() < 1e-6);
        assert_eq!((r.peak, r.gain), (1.0, 1.0));
    }

    #[test]
    fn loop_and_trim_give_exact_lengths_and_content() {
        let atom: Vec<f32> = (0..1000).map(|i| ((i as f32) * 0.05).sin() * 0.5).collect();
        let curves = Curves::new(MixOptions { sample_rate: 16_000, fade: 0, crossfade: 100, ceiling: 0.98 }).unwrap();
        for length in [1usize, 10, 999, 1000, 1001, 1899, 1900, 1901, 5000, 12345] {
            let mut out = vec![f32::NAN; length];
            render_event(&atom, &curves, &mut out);
            assert!(out.iter().all(|x| x.is_finite()), "length {length}");
            let head = length.min(900);
            assert_eq!(&out[..head], &atom[..head], "length {length}: head must be the atom itself");
        }
        // Native length with fades disabled: bit-exact copy.
        let mut out = vec![0.0; 1000];
        render_event(&atom, &curves, &mut out);
        assert_eq!(out, atom);
        // Loop period is n - crossfade: the body of the second copy is the atom's body.
        let mut out = vec![0.0; 3000];
        render_event(&atom, &curves, &mut out);
        assert_eq!(&out[1000..1800], &atom[100..900]);
    }

    /// `add_event` against what it replaces: render the event into a buffer, scale, add.
    #[test]
    fn add_event_is_bit_identical_to_render_scale_add() {
        let atoms: Vec<Vec<f32>> = [1usize, 2, 3, 7, 160, 161, 999, 1000, 1601, 4000]
            .iter()
            .map(|&n| (0..n).map(|i| ((i * 7919 % 1013) as f32 / 1013.0 - 0.5) * 1.7).collect())
            .collect();
        let option_sets = [(0usize, 0usize), (80, 800), (80, 0), (0, 800), (3, 5), (500, 100)];
        for (fade, crossfade) in option_sets {
            let curves = Curves::new(MixOptions { sample_rate: 16_000, fade, crossfade, ceiling: 0.98 }).unwrap();
            for atom in &atoms {
                for length in [1usize, 2, 5, 159, 160, 161, 321, 999, 1000, 1001, 1600, 2401, 5003, 12_000] {
                    let gain = db_to_gain(-3.7);
                    let base: Vec<f32> = (0..length).map(|i| (i % 17) as f32 * 0.01 - 0.08).collect();
                    let mut want = base.clone();
                    let mut buf = vec![0.0; length];
                    render_event(atom, &curves, &mut buf);
                    for (y, &x) in want.iter_mut().zip(&buf) {
                        *y += gain * x;
                    }
                    let mut got = base;
                    add_event(atom, &curves, gain, &mut got);
                    let same = got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "atom {} length {length} fade {fade} crossfade {crossfade}", atom.len());
                }
            }
        }
    }

    #[test]
    fn crossfade_hides_the_loop_seam() {
        // A sine that ends at an arbitrary phase: naive looping would jump at the seam.
        let n = 1003;
        let atom: Vec<f32> = (0..n).map(|i| (i as f32 * 0.0873).sin()).collect();
        let max_step_in_atom = atom.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0f32, f32::max);
        let naive_jump = (atom[0] - atom[n - 1]).abs();
        assert!(naive_jump > 5.0 * max_step_in_atom, "test atom must have a real seam");
        let curves = Curves::new(MixOptions { sample_rate: 16_000, fade: 0, crossfade: 200, ceiling: 0.98 }).unwrap();
        let mut out = vec![0.0; 4 * n];
        render_event(&atom, &curves, &mut out);
        let max_step = out.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0f32, f32::max);
        assert!(max_step < 2.0 * max_step_in_atom, "max step {max_step} vs atom {max_step_in_atom}");
        // Equal power: never louder than sqrt(2) times the atom.
        assert!(out.iter().all(|x| x.abs() <= std::f32::consts::SQRT_2 + 1e-4));
    }

    #[test]
    fn crossfade_shrinks_for_short_atoms() {
        let atom = [0.5f32, -0.5, 0.25];
        let curves = Curves::new(MixOptions { sample_rate: 16_000, fade: 0, crossfade: 800, ceiling: 0.98 }).unwrap();
        let mut out = vec![0.0; 50];
        render_event(&atom, &curves, &mut out);
        assert!(out.iter().all(|x| x.is_finite() && x.abs() <= 1.0));
        assert_eq!(&out[..2], &atom[..2]);
    }

    #[test]
    fn fades_are_raised_cosine_and_symmetric() {
        let atom = vec![1.0f32; 100];
        let curves = Curves::new(MixOptions { sample_rate: 16_000, fade: 10, crossfade: 0, ceiling: 0.98 }).unwrap();
        let mut out = vec![0.0; 100];
        render_event(&atom, &curves, &mut out);
        assert!(out[0] > 0.0 && out[0] < 0.05);
        for i in 0..10 {
            assert_eq!(out[i], out[99 - i]);
            assert!(out[i] < out[i + 1] || i == 9);
        }
        assert!(out[10..90].iter().all(|&x| x == 1.0));
        // A 6-sample event gets 3-sample fades, never overlapping ones.
        let mut out = vec![0.0; 6];
        render_event(&atom, &curves, &mut out);
        assert_eq!(out[2], out[3]);
        assert!(out[2] < 1.0);
    }

    #[test]
    fn limiter_keeps_loud_overlaps_in_bounds_and_silence_at_zero() {
        let atom: Vec<f32> = (0..4000).map(|i| if i % 2 == 0 { 1.0 } else { -0.9 }).collect();
        let offsets = [0u64, 4000];
        let bank = AtomBank::new(&atom, &offsets).unwrap();
        let events: Vec<EventSpan> = (0..20).map(|k| ev(0, 1000 + k * 10, 6000, 12.0)).collect();
        let r = render_clip(&bank, &events, 10_000, &MixOptions::default()).unwrap();
        assert!(r.peak > 50.0, "peak {}", r.peak);
        assert!((r.gain - 0.98 / r.peak).abs() < 1e-9);
        let max = r.audio.iter().fold(0f32, |m, x| m.max(x.abs()));
        assert!(r.audio.iter().all(|x| x.is_finite()));
        assert!(max <= 0.98 + 1e-6 && max > 0.97, "max {max}");
        assert!(r.audio[..1000].iter().all(|&x| x == 0.0));
        assert!(r.audio[1000 + 190 + 6000..].iter().all(|&x| x == 0.0));
        // Quiet clips are left alone.
        let quiet = render_clip(&bank, &[ev(0, 0, 4000, -20.0)], 4000, &no_fades(0.98)).unwrap();
        assert_eq!(quiet.gain, 1.0);
        assert!((quiet.audio[0] - 0.1).abs() < 1e-6);
    }

    #[test]
    fn events_outside_the_clip_are_errors_naming_clip_and_event() {
        let audio = [0.5f32; 10];
        let offsets = [0u64, 10];
        let bank = AtomBank::new(&audio, &offsets).unwrap();
        let opts = MixOptions::default();
        for bad in [ev(0, 95, 10, 0.0), ev(0, -1, 5, 0.0), ev(0, 0, 0, 0.0), ev(0, i64::MAX, 2, 0.0)] {
            let e = render_clip(&bank, &[ev(0, 0, 10, 0.0), bad], 100, &opts).unwrap_err().to_string();
            assert!(e.contains("clip 0, event 1") && e.contains("outside"), "{e}");
        }
        let e = render_clip(&bank, &[ev(3, 0, 10, 0.0)], 100, &opts).unwrap_err().to_string();
        assert!(e.contains("atom index 3 is out of range"), "{e}");
        let e = render_clip(&bank, &[ev(0, 0, 10, f32::NAN)], 100, &opts).unwrap_err().to_string();
        assert!(e.contains("gain_db"), "{e}");
        assert!(render_clip(&bank, &[ev(0, 90, 10, 0.0)], 100, &opts).is_ok());
    }

    #[test]
    fn peak_scan_finds_the_peak_and_non_finite_samples() {
        let mut x = vec![0.25f32; 37];
        x[35] = -3.0;
        assert_eq!(peak_and_finite(&x), (3.0, true));
        x[3] = -7.5;
        assert_eq!(peak_and_finite(&x), (7.5, true));
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            for at in [0, 20, 36] {
                let mut y = x.clone();
                y[at] = bad;
                assert!(!peak_and_finite(&y).1, "{bad} at {at}");
            }
        }
        assert_eq!(peak_and_finite(&[]), (0.0, true));
    }

    #[test]
    fn bad_offsets_are_rejected() {
        let audio = [0.0f32; 10];
        assert!(AtomBank::new(&audio, &[]).is_err());
        assert!(AtomBank::new(&audio, &[0, 11]).is_err());
        assert!(AtomBank::new(&audio, &[1, 10]).is_err());
        assert!(AtomBank::new(&audio, &[0, 6, 4, 10]).is_err());
        let bank = AtomBank::new(&audio, &[0, 4, 4, 10]).unwrap();
        assert_eq!(bank.len(), 3);
        assert_eq!(bank.atom(2).unwrap().len(), 6);
        let e = render_clip(&bank, &[ev(1, 0, 5, 0.0)], 10, &MixOptions::default()).unwrap_err();
        assert!(matches!(e, MixError::EmptyAtom { atom: 1, .. }));
    }

    /// A small synthetic corpus: 3 atoms, 12 clips with overlapping, looped and trimmed events.
    #[allow(clippy::type_complexity)]
    fn corpus() -> (Vec<f32>, Vec<u64>, Vec<u32>, Vec<u32>, Vec<i64>, Vec<i64>, Vec<f32>, Vec<i64>) {
        let mut audio = Vec::new();
        let mut offsets = vec![0u64];
        for (k, n) in [700usize, 1500, 333].into_iter().enumerate() {
            audio.extend((0..n).map(|i| ((i * (k + 3)) as f32 * 0.013).sin() * 0.8));
            offsets.push(audio.len() as u64);
        }
        let (mut c, mut a, mut o, mut l, mut g) = (vec![], vec![], vec![], vec![], vec![]);
        for clip in 0..12u32 {
            for e in 0..(2 + clip % 4) {
                c.push(clip);
                a.push((clip + e) % 3);
                o.push(i64::from(e) * 900);
                l.push(400 + i64::from((clip * 7 + e * 311) % 2000));
                g.push(-3.0 * e as f32 + 6.0);
            }
        }
        (audio, offsets, c, a, o, l, g, vec![6000; 12])
    }

    #[test]
    fn corpus_is_byte_identical_for_any_thread_count() {
        let (audio, offsets, c, a, o, l, g, lens) = corpus();
        let bank = AtomBank::new(&audio, &offsets).unwrap();
        let cols = EventColumns { clip: &c, atom: &a, onset: &o, length: &l, gain_db: &g };
        for format in [AudioFormat::Wav16, AudioFormat::WavF32, AudioFormat::Flac16] {
            let mut outputs = Vec::new();
            for threads in [1usize, 2, 3] {
                let d = tmpdir(&format!("{format}-{threads}"));
                let paths = numbered_paths(&d, "clip", lens.len(), format);
                let stats = render_corpus(&bank, &cols, &lens, &paths, format, threads).unwrap();
                let bytes: Vec<Vec<u8>> = paths.iter().map(|p| fs::read(p).unwrap()).collect();
                assert!(fs::read_dir(&d).unwrap().all(|e| !e.unwrap().path().to_string_lossy().ends_with(".tmp")));
                fs::remove_dir_all(&d).unwrap();
                outputs.push((stats, bytes));
            }
            assert_eq!(outputs[0], outputs[1], "{format}");
            assert_eq!(outputs[0], outputs[2], "{format}");
        }
    }

    #[test]
    fn corpus_files_match_render_clip_and_read_back_with_hound() {
        let (audio, offsets, c, a, o, l, g, lens) = corpus();
        let bank = AtomBank::new(&audio, &offsets).unwrap();
        let cols = EventColumns { clip: &c, atom: &a, onset: &o, length: &l, gain_db: &g };
        let d = tmpdir("hound");
        let paths = numbered_paths(&d, "clip", lens.len(), AudioFormat::Wav16);
        let opts = MixOptions::default();
        let stats = render_corpus(&bank, &cols, &lens, &paths, AudioFormat::Wav16, 2).unwrap();
        let bounds = cols.clip_bounds(lens.len()).unwrap();
        for clip in 0..lens.len() {
            let events: Vec<EventSpan> = (bounds[clip]..bounds[clip + 1]).map(|r| cols.row(r)).collect();
            let r = render_clip(&bank, &events, lens[clip], &opts).unwrap();
            assert_eq!((r.peak, r.gain), (stats[clip].peak, stats[clip].gain));
            let mut reader = hound::WavReader::open(&paths[clip]).unwrap();
            assert_eq!(reader.spec().sample_rate, 16000);
            assert_eq!(reader.len() as i64, lens[clip]);
            let got: Vec<i16> = reader.samples::<i16>().map(|s| s.unwrap()).collect();
            let want: Vec<i16> = r.audio.iter().map(|&x| wav::quantize_i16(x)).collect();
            assert_eq!(got, want);
            // Silence after the last event stays exactly zero in the file.
            let end = events.iter().map(|e| e.onset + e.length).max().unwrap() as usize;
            assert!(got[end..].iter().all(|&s| s == 0));
        }
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn corpus_report_hashes_the_bytes_it_writes_and_writes_the_same_files() {
        let (audio, offsets, c, a, o, l, g, lens) = corpus();
        let bank = AtomBank::new(&audio, &offsets).unwrap();
        let cols = EventColumns { clip: &c, atom: &a, onset: &o, length: &l, gain_db: &g };
        let opts = MixOptions::default();
        for format in [AudioFormat::Wav16, AudioFormat::WavF32, AudioFormat::Flac16] {
            let d = tmpdir(&format!("report-{format}"));
            let paths = numbered_paths(&d, "clip", lens.len(), format);
            let out = CorpusOptions { format, threads: 2, sha256: true, atomic: format == AudioFormat::Wav16 };
            let corpus = Corpus::clean(bank, cols, &lens);
            let report = render::render_corpus(&corpus, &paths, &opts, &out, Cancel::NEVER).unwrap();
            assert_eq!(report.sha256.len(), lens.len());
            let bounds = cols.clip_bounds(lens.len()).unwrap();
            for clip in 0..lens.len() {
                let bytes = fs::read(&paths[clip]).unwrap();
                assert_eq!(<[u8; 32]>::from(Sha256::digest(&bytes)), report.sha256[clip]);
                // the file is the limited mix of render_clip, encoded
                let events: Vec<EventSpan> = (bounds[clip]..bounds[clip + 1]).map(|r| cols.row(r)).collect();
                let r = render_clip(&bank, &events, lens[clip], &opts).unwrap();
                let mut want = Vec::new();
                wav::encode(format, &r.audio, 16000, &mut want).unwrap();
                assert!(bytes == want, "{format} clip {clip}");
                assert_eq!((r.peak, r.gain), (report.clips[clip].peak, report.clips[clip].gain));
            }
            let plain = render_corpus(&bank, &cols, &lens, &paths, format, 1).unwrap();
            assert_eq!(plain, report.clips);
            fs::remove_dir_all(&d).unwrap();
        }
    }

    #[test]
    fn corpus_validates_everything_before_writing() {
        let (audio, offsets, c, a, o, mut l, g, lens) = corpus();
        let bank = AtomBank::new(&audio, &offsets).unwrap();
        let last = l.len() - 1;
        l[last] = 100_000;
        let cols = EventColumns { clip: &c, atom: &a, onset: &o, length: &l, gain_db: &g };
        let d = tmpdir("invalid");
        let paths = numbered_paths(&d, "clip", lens.len(), AudioFormat::Wav16);
        let e = render_corpus(&bank, &cols, &lens, &paths, AudioFormat::Wav16, 2).unwrap_err().to_string();
        assert!(e.contains("clip 11") && e.contains(&format!("row {last}")), "{e}");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 0, "no file may be written for an invalid plan");
        let mut unsorted = c.clone();
        unsorted.swap(0, last);
        let cols = EventColumns { clip: &unsorted, atom: &a, onset: &o, length: &l, gain_db: &g };
        let e = render_corpus(&bank, &cols, &lens, &paths, AudioFormat::Wav16, 2);
        assert!(matches!(e, Err(MixError::Unsorted { .. })));
        fs::remove_dir_all(&d).unwrap();
    }
}
