//! Seeded clip plans: which atoms go in a clip, where, how loud and how long.
//!
//! A plan is data (event rows), rendered later by [`crate::mix`]; the same rows are the
//! benchmark's events table, so audio and labels cannot disagree. Every random draw of clip `i`
//! derives from `(seed, i)` alone, so plans do not depend on thread count or on other clips.
//!
//! Timing obeys the contract's margin rule (§3.1): any two events of a clip either overlap by more
//! than `2 * margin` or are apart by more than `2 * margin` (plus a guard band for rounding), and
//! every event duration lies in one of the `duration_bins`, which are separated by gaps of more than
//! `4 * margin` so that a duration threshold placed in the middle of a gap is robust.

use rand::seq::index::sample as sample_indices;
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::cancel::Cancel;

/// Every generation parameter of the planner (recorded verbatim in the manifest).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct PlanParams {
    /// Sample rate of onsets and lengths, Hz.
    pub sample_rate: u32,
    /// Fewest events in a clip (at least 1).
    pub min_events: u32,
    /// Most events in a clip.
    pub max_events: u32,
    /// Longest clip, seconds.
    pub max_clip_s: f64,
    /// Robustness margin m of contract §3.1.
    pub margin_s: f64,
    /// Extra separation beyond 2m, so sample rounding never lands on the boundary.
    pub guard_s: f64,
    /// Allowed event durations as closed [lo, hi] seconds, ascending and disjoint.
    pub duration_bins: Vec<(f64, f64)>,
    /// Relative probability of each duration bin.
    pub duration_weights: Vec<f64>,
    /// Chance of keeping an atom's native length when it falls inside the drawn bin.
    pub native_probability: f64,
    /// Silence between consecutive sequential events, seconds.
    pub gap_s: (f64, f64),
    /// Silence before the first and after the last event, seconds.
    pub edge_silence_s: (f64, f64),
    /// Range of event gains, dB (at or below 0), drawn uniformly.
    pub gain_db: (f64, f64),
    /// In `overlap` clips: chance that an event is laid over the previous one.
    pub overlap_probability: f64,
    /// Longest room tail in use (contract §5), seconds: gaps between events must exceed
    /// `2m + guard + tail_s` and duration thresholds sit more than `2m + guard + tail_s` above the
    /// bin below (an event's duration moves by 2m either way, plus the tail longer). Omitted from the JSON when 0, so a dry plan's parameters read as before.
    #[serde(skip_serializing_if = "is_zero")]
    pub tail_s: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Default for PlanParams {
    fn default() -> Self {
        PlanParams {
            sample_rate: 16_000,
            min_events: 2,
            max_events: 8,
            max_clip_s: 30.0,
            margin_s: 0.25,
            guard_s: 0.05,
            duration_bins: vec![(0.6, 1.4), (2.6, 3.4), (4.6, 6.0)],
            duration_weights: vec![0.45, 0.35, 0.20],
            native_probability: 0.5,
            gap_s: (0.6, 1.2),
            edge_silence_s: (0.2, 0.6),
            gain_db: (-6.0, 0.0),
            overlap_probability: 0.5,
            tail_s: 0.0,
        }
    }
}

/// Why planning refused its input, failed or stopped.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum PlanError {
    /// The [`PlanParams`] are inconsistent (see [`PlanParams::validate`]).
    #[error("invalid plan parameters: {0}")]
    InvalidParams(String),
    /// A [`ClipRequest`] asks for something the parameters or the library cannot give.
    #[error("invalid clip request: {0}")]
    InvalidRequest(String),
    /// No layout of the clip obeyed the timing rules within the attempts allowed.
    #[error("could not plan clip (key {key}) under the timing rules after {attempts} attempts: {reason}")]
    Unsatisfiable {
        /// The clip's random key.
        key: u64,
        /// Layouts tried.
        attempts: u32,
        /// The rule the last attempt broke.
        reason: String,
    },
    /// The call's [`Cancel`] flag was set.
    #[error("planning cancelled")]
    Cancelled,
}

/// How a clip's events are laid out in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Pattern {
    /// One after another, with silence between consecutive events.
    Sequential,
    /// Events may be laid over the previous one (see [`PlanParams::overlap_probability`]).
    Overlap,
}

/// How an event's length relates to its atom's native length. The discriminants are the codes
/// of the events table's `mode` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LengthMode {
    /// The event plays the whole atom once.
    Native = 0,
    /// The event is longer than the atom, which loops.
    Loop = 1,
    /// The event is shorter than the atom, which is cut.
    Trim = 2,
}

/// One event of a clip plan (a row of the events table).
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedEvent {
    /// Index of the atom the event plays.
    pub atom: u32,
    /// Start, samples from the clip's start.
    pub onset: i64,
    /// Length in samples.
    pub length: i64,
    /// Gain applied to the atom, dB.
    pub gain_db: f32,
    /// How `length` relates to the atom's own length.
    pub mode: LengthMode,
}

impl PlannedEvent {
    /// End of the event (exclusive), samples from the clip's start.
    pub fn offset(&self) -> i64 {
        self.onset + self.length
    }
}

/// The plan of one clip: its layout, length and events.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipPlan {
    /// How the events are laid out.
    pub pattern: Pattern,
    /// Length of the clip in samples.
    pub length: i64,
    /// Sorted by onset (ties by atom index).
    pub events: Vec<PlannedEvent>,
}

/// Constraints on one clip, used to plan clips on purpose (e.g. hard negatives).
#[derive(Clone, Debug, Default)]
pub struct ClipRequest {
    /// Atoms that must appear, in this temporal order when `ordered`.
    pub required: Vec<u32>,
    /// Whether the required atoms must appear in the order given.
    pub ordered: bool,
    /// Atoms that must not appear.
    pub excluded: Vec<u32>,
    /// Forced duration bin per required atom (index into `duration_bins`), same length as `required` or empty.
    pub required_bins: Vec<Option<usize>>,
    /// In overlap clips: the first two required atoms must overlap each other.
    pub overlap_first_pair: bool,
    /// Number of events; drawn when `None`.
    pub n_events: Option<u32>,
}

impl ClipRequest {
    /// Checks what the request says about itself (no atom twice, nothing both required and
    /// excluded, bins matching `required`); [`plan_clip`] checks the rest against the parameters
    /// and the library.
    pub fn check(&self) -> Result<(), PlanError> {
        let bad = |m: String| Err(PlanError::InvalidRequest(m));
        let mut seen = self.required.clone();
        seen.sort_unstable();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            return bad("an atom is required twice (a label occurs at most once per clip)".into());
        }
        if self.required.iter().any(|a| self.excluded.contains(a)) {
            return bad("an atom is both required and excluded".into());
        }
        if !self.required_bins.is_empty() && self.required_bins.len() != self.required.len() {
            return bad("required_bins must be empty or match required".into());
        }
        if self.overlap_first_pair && self.required.len() < 2 {
            return bad("overlap_first_pair needs two required atoms".into());
        }
        Ok(())
    }
}

impl PlanParams {
    /// Checks the parameters against each other, the contract's margin rule and a library of
    /// `n_atoms` atoms.
    pub fn validate(&self, n_atoms: usize) -> Result<(), PlanError> {
        let bad = |m: String| Err(PlanError::InvalidParams(m));
        if self.sample_rate < 1000 {
            return bad(format!("sample_rate {} is below 1000 Hz", self.sample_rate));
        }
        if self.min_events < 1 || self.min_events > self.max_events {
            return bad(format!("events per clip {}..{} is not a valid range", self.min_events, self.max_events));
        }
        if self.max_events as usize > n_atoms {
            return bad(format!(
                "max_events {} exceeds the {} atoms available (a label occurs at most once per clip)",
                self.max_events, n_atoms
            ));
        }
        if self.margin_s < 0.0 || self.guard_s < 0.0 {
            return bad("margin_s and guard_s must be >= 0".into());
        }
        if !(self.tail_s.is_finite() && self.tail_s >= 0.0) {
            return bad(format!("tail_s {} must be a finite number of seconds >= 0", self.tail_s));
        }
        if self.duration_bins.is_empty() || self.duration_bins.len() != self.duration_weights.len() {
            return bad("duration_bins and duration_weights must be non-empty and of equal length".into());
        }
        let sep = 2.0 * self.margin_s + self.guard_s;
        for (i, &(lo, hi)) in self.duration_bins.iter().enumerate() {
            if !(lo > 0.0 && hi >= lo) {
                return bad(format!("duration bin {i} [{lo}, {hi}] is empty or not positive"));
            }
            if i > 0 {
                let prev_hi = self.duration_bins[i - 1].1;
                if lo - prev_hi <= 2.0 * sep {
                    return bad(format!(
                        "duration bins {} and {i} are {:.3} s apart; they must be more than {:.3} s apart so a threshold between them is robust",
                        i - 1,
                        lo - prev_hi,
                        2.0 * sep
                    ));
                }
                // With a room, onsets may move m earlier and offsets m + tail later, so a duration
                // may grow by 2m + tail: the threshold between the bins (the gap's midpoint) must
                // stay more than that above the lower bin.
                let half = 0.5 * (lo - prev_hi);
                let need = sep + self.tail_s;
                if self.tail_s > 0.0 && half <= need {
                    return bad(format!(
                        "a room tail of {:.3} s breaks the duration threshold between bins {} and {i}: it sits {half:.3} s above bin {}, which must be more than 2*margin + guard + tail = {need:.3} s (use a room with a shorter tail, or wider duration_bins)",
                        self.tail_s,
                        i - 1,
                        i - 1
                    ));
                }
            }
        }
        if self.duration_weights.iter().any(|w| w.is_nan() || *w < 0.0)
            || self.duration_weights.iter().sum::<f64>() <= 0.0
        {
            return bad("duration_weights must be non-negative with a positive sum".into());
        }
        if self.gap_s.0 <= sep + self.tail_s || self.gap_s.1 < self.gap_s.0 {
            return bad(format!(
                "gap_s {:?} must start above 2*margin+guard+tail_s = {:.3} s",
                self.gap_s,
                sep + self.tail_s
            ));
        }
        if self.edge_silence_s.0 < 0.0 || self.edge_silence_s.1 < self.edge_silence_s.0 {
            return bad(format!("edge_silence_s {:?} is not a valid range", self.edge_silence_s));
        }
        if self.gain_db.1 < self.gain_db.0 || self.gain_db.1 > 0.0 {
            return bad(format!("gain_db {:?} must be a range at or below 0 dB", self.gain_db));
        }
        let shortest_clip = self.min_events as f64 * self.duration_bins[0].0
            + (self.min_events as f64 - 1.0) * self.gap_s.0
            + 2.0 * self.edge_silence_s.0;
        let longest_needed = self.max_events as f64 * self.duration_bins[0].1
            + (self.max_events as f64 - 1.0) * self.gap_s.1
            + 2.0 * self.edge_silence_s.1;
        if longest_needed > self.max_clip_s {
            return bad(format!(
                "max_clip_s {} cannot hold {} short events with gaps (needs {:.2} s); raise it or lower max_events",
                self.max_clip_s, self.max_events, longest_needed
            ));
        }
        debug_assert!(shortest_clip > 0.0);
        Ok(())
    }

    fn samples(&self, seconds: f64) -> i64 {
        (seconds * self.sample_rate as f64).round() as i64
    }

    /// Smallest separation (in samples) that any two events must keep, as overlap or as gap.
    pub fn separation_samples(&self) -> i64 {
        self.samples(2.0 * self.margin_s + self.guard_s)
    }

    /// Smallest gap (in samples) between two events that do not overlap: the separation plus the
    /// longest room tail (the tail rings on after the dry offset).
    pub fn gap_samples(&self) -> i64 {
        self.samples(2.0 * self.margin_s + self.guard_s + self.tail_s)
    }

    /// Duration thresholds (seconds) that sit robustly between bins: the midpoints of the gaps.
    pub fn duration_thresholds(&self) -> Vec<f64> {
        self.duration_bins.windows(2).map(|w| 0.5 * (w[0].1 + w[1].0)).collect()
    }
}

/// A stream of random numbers that depends only on (seed, key).
pub fn rng_for(seed: u64, key: u64) -> Pcg64Mcg {
    fn splitmix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    let hi = splitmix(seed ^ 0x005E_ED0F_A0D1_0000);
    let lo = splitmix(hi ^ key.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    Pcg64Mcg::new(((hi as u128) << 64) | (lo as u128 | 1))
}

/// Pattern of clip `index` in a corpus of which `overlap_fraction` are overlap clips:
/// spread evenly (Bresenham) so any prefix keeps the ratio and the total count is exact.
pub fn pattern_of(index: u64, n_clips: u64, n_overlap: u64) -> Pattern {
    if n_clips == 0 {
        return Pattern::Sequential;
    }
    let before = (index as u128 * n_overlap as u128) / n_clips as u128;
    let after = ((index as u128 + 1) * n_overlap as u128) / n_clips as u128;
    if after > before {
        Pattern::Overlap
    } else {
        Pattern::Sequential
    }
}

const MAX_ATTEMPTS: u32 = 64;

/// Plan one clip from `(seed, key)`; `native_lengths[a]` is atom `a`'s length in samples.
pub fn plan_clip(
    params: &PlanParams,
    native_lengths: &[i64],
    seed: u64,
    key: u64,
    pattern: Pattern,
    request: &ClipRequest,
) -> Result<ClipPlan, PlanError> {
    let n_atoms = native_lengths.len();
    check_request(params, n_atoms, request)?;
    let mut rng = rng_for(seed, key);
    let mut last_reason = String::new();
    for _ in 0..MAX_ATTEMPTS {
        match try_plan(params, native_lengths, &mut rng, pattern, request) {
            Ok(plan) => return Ok(plan),
            Err(reason) => last_reason = reason,
        }
    }
    Err(PlanError::Unsatisfiable { key, attempts: MAX_ATTEMPTS, reason: last_reason })
}

/// Plan a whole corpus in parallel; clip `i` is planned from `(seed, i)`.
pub fn plan_corpus(
    params: &PlanParams,
    native_lengths: &[i64],
    seed: u64,
    n_clips: u64,
    overlap_fraction: f64,
) -> Result<Vec<ClipPlan>, PlanError> {
    plan_corpus_cancellable(params, native_lengths, seed, n_clips, overlap_fraction, Cancel::NEVER)
}

/// [`plan_corpus`] that stops with [`PlanError::Cancelled`] soon after `cancel` is set (checked per clip).
pub fn plan_corpus_cancellable(
    params: &PlanParams,
    native_lengths: &[i64],
    seed: u64,
    n_clips: u64,
    overlap_fraction: f64,
    cancel: Cancel<'_>,
) -> Result<Vec<ClipPlan>, PlanError> {
    plan_corpus_range(params, native_lengths, seed, n_clips, overlap_fraction, 0..n_clips, cancel)
}

/// Clips `range` of an `n_clips` corpus, in parallel: the same plans [`plan_corpus`] gives them,
/// so a corpus can be planned a block at a time with memory for one block's plans.
pub fn plan_corpus_range(
    params: &PlanParams,
    native_lengths: &[i64],
    seed: u64,
    n_clips: u64,
    overlap_fraction: f64,
    range: std::ops::Range<u64>,
    cancel: Cancel<'_>,
) -> Result<Vec<ClipPlan>, PlanError> {
    params.validate(native_lengths.len())?;
    if !(0.0..=1.0).contains(&overlap_fraction) {
        return Err(PlanError::InvalidParams(format!("overlap_fraction {overlap_fraction} is not within [0, 1]")));
    }
    if range.end > n_clips {
        return Err(PlanError::InvalidParams(format!("clips {range:?} are not within a corpus of {n_clips}")));
    }
    let n_overlap = (n_clips as f64 * overlap_fraction).round() as u64;
    let request = ClipRequest::default();
    range
        .into_par_iter()
        .map(|i| {
            if cancel.is_set() {
                return Err(PlanError::Cancelled);
            }
            plan_clip(params, native_lengths, seed, i, pattern_of(i, n_clips, n_overlap), &request)
        })
        .collect()
}

fn check_request(params: &PlanParams, n_atoms: usize, request: &ClipRequest) -> Result<(), PlanError> {
    params.validate(n_atoms)?;
    request.check()?;
    let bad = |m: String| Err(PlanError::InvalidRequest(m));
    for &a in request.required.iter().chain(request.excluded.iter()) {
        if a as usize >= n_atoms {
            return bad(format!("atom index {a} out of range (library has {n_atoms})"));
        }
    }
    if request.required.len() > params.max_events as usize {
        return bad(format!(
            "{} atoms required but at most {} events per clip",
            request.required.len(),
            params.max_events
        ));
    }
    if request.required_bins.iter().flatten().any(|&b| b >= params.duration_bins.len()) {
        return bad("required_bins names a duration bin that does not exist".into());
    }
    if let Some(n) = request.n_events {
        if n < params.min_events.max(request.required.len() as u32) || n > params.max_events {
            return bad(format!("n_events {n} outside the allowed range"));
        }
    }
    if n_atoms - request.excluded.len() < params.min_events as usize {
        return bad("too many atoms excluded to fill a clip".into());
    }
    Ok(())
}

fn draw_bin(params: &PlanParams, rng: &mut Pcg64Mcg, below: usize) -> usize {
    let total: f64 = params.duration_weights[..below].iter().sum();
    if total <= 0.0 {
        return 0;
    }
    let mut x = rng.gen_range(0.0..total);
    for (i, w) in params.duration_weights[..below].iter().enumerate() {
        if x < *w {
            return i;
        }
        x -= w;
    }
    below - 1
}

fn draw_length(params: &PlanParams, rng: &mut Pcg64Mcg, native: i64, bin: usize) -> (i64, LengthMode) {
    let (lo, hi) = params.duration_bins[bin];
    let (lo_s, hi_s) = (params.samples(lo), params.samples(hi));
    let keep_native = native >= lo_s && native <= hi_s && rng.gen_bool(params.native_probability.clamp(0.0, 1.0));
    let length = if keep_native { native } else { rng.gen_range(lo_s..=hi_s) };
    let mode = match length.cmp(&native) {
        std::cmp::Ordering::Equal => LengthMode::Native,
        std::cmp::Ordering::Greater => LengthMode::Loop,
        std::cmp::Ordering::Less => LengthMode::Trim,
    };
    (length, mode)
}

fn choose_atoms(params: &PlanParams, n_atoms: usize, rng: &mut Pcg64Mcg, request: &ClipRequest) -> Vec<u32> {
    let n_events = match request.n_events {
        Some(n) => n as usize,
        None => {
            let lo = params.min_events.max(request.required.len() as u32);
            rng.gen_range(lo..=params.max_events) as usize
        }
    };
    let mut atoms = request.required.clone();
    let mut allowed: Vec<u32> =
        (0..n_atoms as u32).filter(|a| !request.required.contains(a) && !request.excluded.contains(a)).collect();
    let extra = n_events.saturating_sub(atoms.len()).min(allowed.len());
    let picks = sample_indices(rng, allowed.len(), extra);
    let mut chosen: Vec<u32> = picks.iter().map(|i| allowed[i]).collect();
    allowed.clear();
    atoms.append(&mut chosen);
    atoms
}

/// Separation check of contract §3.1 between one candidate span and already placed events.
fn separated(onset: i64, offset: i64, placed: &[PlannedEvent], sep: i64, gap: i64) -> bool {
    placed.iter().all(|e| {
        let overlap = offset.min(e.offset()) - onset.max(e.onset);
        overlap > sep || overlap < -gap
    })
}

fn try_plan(
    params: &PlanParams,
    native_lengths: &[i64],
    rng: &mut Pcg64Mcg,
    pattern: Pattern,
    request: &ClipRequest,
) -> Result<ClipPlan, String> {
    let mut atoms = choose_atoms(params, native_lengths.len(), rng, request);
    // Random order, but required atoms keep their relative order when asked to.
    let n_req = request.required.len();
    let mut order: Vec<usize> = (0..atoms.len()).collect();
    for i in (1..order.len()).rev() {
        let j = rng.gen_range(0..=i);
        order.swap(i, j);
    }
    if request.ordered || request.overlap_first_pair {
        let mut req_slots: Vec<usize> = order.iter().enumerate().filter(|(_, &k)| k < n_req).map(|(p, _)| p).collect();
        req_slots.sort_unstable();
        for (r, p) in req_slots.into_iter().enumerate() {
            order[p] = r;
        }
        if request.overlap_first_pair {
            // Lay the pair next to each other so the second can be placed over the first.
            let p0 = order.iter().position(|&k| k == 0).unwrap();
            let p1 = order.iter().position(|&k| k == 1).unwrap();
            let item = order.remove(p1);
            let at = if p1 > p0 { p0 + 1 } else { p0 };
            order.insert(at, item);
        }
    }
    atoms = order.iter().map(|&k| atoms[k]).collect();
    let is_required = |slot: usize| order[slot] < n_req;
    let forced_bin = |slot: usize| -> Option<usize> {
        if is_required(slot) {
            request.required_bins.get(order[slot]).copied().flatten()
        } else {
            None
        }
    };

    let n_bins = params.duration_bins.len();
    let mut bins: Vec<usize> =
        (0..atoms.len()).map(|s| forced_bin(s).unwrap_or_else(|| draw_bin(params, rng, n_bins))).collect();
    let sep = params.separation_samples();
    let gap = params.gap_samples();
    let max_len = params.samples(params.max_clip_s);
    let lead = params.samples(rng.gen_range(params.edge_silence_s.0..=params.edge_silence_s.1));
    let tail = params.samples(rng.gen_range(params.edge_silence_s.0..=params.edge_silence_s.1));
    let gaps: Vec<i64> =
        (0..atoms.len()).map(|_| params.samples(rng.gen_range(params.gap_s.0..=params.gap_s.1))).collect();

    // A sequential layout must fit; shorten the longest free event until it does.
    loop {
        let worst: i64 = bins.iter().map(|&b| params.samples(params.duration_bins[b].1)).sum::<i64>()
            + gaps.iter().skip(1).sum::<i64>()
            + lead
            + tail;
        if worst <= max_len {
            break;
        }
        let candidate =
            (0..atoms.len()).filter(|&s| forced_bin(s).is_none() && bins[s] > 0).max_by_key(|&s| (bins[s], s));
        match candidate {
            Some(s) => bins[s] -= 1,
            None => return Err("required durations do not fit in max_clip_s".into()),
        }
    }
    let lengths: Vec<(i64, LengthMode)> =
        atoms.iter().zip(&bins).map(|(&a, &b)| draw_length(params, rng, native_lengths[a as usize], b)).collect();
    let gains: Vec<f32> = (0..atoms.len())
        .map(|_| {
            let g = rng.gen_range(params.gain_db.0..=params.gain_db.1);
            ((g * 10.0).round() / 10.0) as f32
        })
        .collect();

    let mut placed: Vec<PlannedEvent> = Vec::with_capacity(atoms.len());
    let mut any_overlap = false;
    for slot in 0..atoms.len() {
        let (length, mode) = lengths[slot];
        let end_so_far = placed.iter().map(|e| e.offset()).max().unwrap_or(0);
        let mut onset = None;
        if pattern == Pattern::Overlap && slot > 0 {
            let pair_slot = request.overlap_first_pair && is_required(slot) && order[slot] == 1;
            let last_chance = !any_overlap && slot + 1 == atoms.len();
            if pair_slot || last_chance || rng.gen_bool(params.overlap_probability) {
                let prev = placed.last().unwrap();
                // onset window in which the new event overlaps `prev` by more than `sep`
                let lo = (prev.onset - length + sep + 1).max(0);
                let hi = prev.offset() - sep - 1;
                for _ in 0..16 {
                    if lo > hi {
                        break;
                    }
                    let cand = rng.gen_range(lo..=hi);
                    let overlap_prev = (cand + length).min(prev.offset()) - cand.max(prev.onset);
                    if cand >= 0 && overlap_prev > sep && separated(cand, cand + length, &placed, sep, gap) {
                        onset = Some(cand);
                        any_overlap = true;
                        break;
                    }
                }
                if onset.is_none() && pair_slot {
                    return Err("could not overlap the required pair".into());
                }
            }
        }
        let onset = onset.unwrap_or(if slot == 0 { lead } else { end_so_far + gaps[slot] });
        placed.push(PlannedEvent { atom: atoms[slot], onset, length, gain_db: gains[slot], mode });
    }
    if pattern == Pattern::Overlap && !any_overlap {
        return Err("no overlapping pair could be placed".into());
    }
    let first = placed.iter().map(|e| e.onset).min().unwrap_or(0);
    if first < 0 {
        return Err("event before clip start".into());
    }
    let length = placed.iter().map(|e| e.offset()).max().unwrap_or(0) + tail;
    if length > max_len {
        return Err(format!("clip of {length} samples exceeds max_clip_s"));
    }
    placed.sort_by_key(|e| (e.onset, e.atom));
    Ok(ClipPlan { pattern, length, events: placed })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn natives(n: usize, sr: i64) -> Vec<i64> {
        (0..n).map(|i| sr / 2 + (i as i64 * 977) % (7 * sr / 2)).collect()
    }

    fn check_clip(params: &PlanParams, plan: &ClipPlan) {
        let sep = params.separation_samples();
        let n = plan.events.len();
        assert!(n >= params.min_events as usize && n <= params.max_events as usize);
        let mut atoms: Vec<u32> = plan.events.iter().map(|e| e.atom).collect();
        atoms.sort_unstable();
        atoms.dedup();
        assert_eq!(atoms.len(), n, "a label repeats");
        let mut overlapping = 0;
        for i in 0..n {
            let a = &plan.events[i];
            assert!(a.onset >= 0 && a.offset() <= plan.length);
            let d = a.length as f64 / params.sample_rate as f64;
            assert!(params.duration_bins.iter().any(|&(lo, hi)| d >= lo - 1e-9 && d <= hi + 1e-9), "duration {d}");
            for b in &plan.events[i + 1..] {
                let ov = a.offset().min(b.offset()) - a.onset.max(b.onset);
                assert!(ov > sep || ov < -sep, "pair within the margin: {ov}");
                if ov > 0 {
                    overlapping += 1;
                }
            }
        }
        match plan.pattern {
            Pattern::Sequential => assert_eq!(overlapping, 0),
            Pattern::Overlap => assert!(overlapping > 0),
        }
        assert!(plan.length <= params.samples(params.max_clip_s));
    }

    #[test]
    fn corpus_plans_keep_every_rule() {
        let params = PlanParams::default();
        let nat = natives(200, 16_000);
        let plans = plan_corpus(&params, &nat, 7, 2000, 0.4).unwrap();
        assert_eq!(plans.iter().filter(|p| p.pattern == Pattern::Overlap).count(), 800);
        for p in &plans {
            check_clip(&params, p);
        }
        let modes: Vec<LengthMode> = plans.iter().flat_map(|p| p.events.iter().map(|e| e.mode)).collect();
        for m in [LengthMode::Native, LengthMode::Loop, LengthMode::Trim] {
            assert!(modes.contains(&m), "{m:?} never drawn");
        }
    }

    #[test]
    fn plans_depend_only_on_seed_and_index() {
        let params = PlanParams::default();
        let nat = natives(200, 16_000);
        let a = plan_corpus(&params, &nat, 11, 300, 0.4).unwrap();
        let b = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| plan_corpus(&params, &nat, 11, 300, 0.4).unwrap());
        assert_eq!(a, b);
        let c = plan_corpus(&params, &nat, 12, 300, 0.4).unwrap();
        assert_ne!(a, c);
    }

    #[test]
    fn ranges_plan_what_the_whole_corpus_plans() {
        let params = PlanParams::default();
        let natives = natives(12, params.sample_rate as i64);
        let whole = plan_corpus(&params, &natives, 11, 50, 0.3).unwrap();
        let mut blocks = Vec::new();
        for lo in (0..50).step_by(16) {
            blocks.extend(
                plan_corpus_range(&params, &natives, 11, 50, 0.3, lo..(lo + 16).min(50), Cancel::NEVER).unwrap(),
            );
        }
        assert_eq!(whole, blocks);
        assert!(plan_corpus_range(&params, &natives, 11, 50, 0.3, 40..51, Cancel::NEVER).is_err());
    }

    #[test]
    fn pattern_split_is_exact() {
        for (n, k) in [(10_000u64, 4_000u64), (7, 3), (1, 1), (5, 0)] {
            let count = (0..n).filter(|&i| pattern_of(i, n, k) == Pattern::Overlap).count() as u64;
            assert_eq!(count, k);
        }
    }

    #[test]
    fn requests_are_honoured() {
        let params = PlanParams::default();
        let nat = natives(50, 16_000);
        for key in 0..200 {
            let req = ClipRequest {
                required: vec![3, 9, 4],
                ordered: true,
                excluded: vec![5],
                required_bins: vec![Some(2), None, Some(0)],
                overlap_first_pair: false,
                n_events: None,
            };
            let plan = plan_clip(&params, &nat, 1, key, Pattern::Sequential, &req).unwrap();
            check_clip(&params, &plan);
            let pos = |a: u32| plan.events.iter().position(|e| e.atom == a).unwrap();
            assert!(pos(3) < pos(9) && pos(9) < pos(4));
            assert!(plan.events.iter().all(|e| e.atom != 5));
            let long = &plan.events[pos(3)];
            assert!(long.length >= params.samples(4.6));
            assert!(plan.events[pos(4)].length <= params.samples(1.4));

            let pair = ClipRequest { required: vec![7, 8], overlap_first_pair: true, ..Default::default() };
            let plan = plan_clip(&params, &nat, 1, key, Pattern::Overlap, &pair).unwrap();
            check_clip(&params, &plan);
            let (x, y) =
                (plan.events.iter().find(|e| e.atom == 7).unwrap(), plan.events.iter().find(|e| e.atom == 8).unwrap());
            assert!(x.offset().min(y.offset()) - x.onset.max(y.onset) > params.separation_samples());
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        let params = PlanParams {
            duration_bins: vec![(0.6, 1.4), (1.8, 3.0)],
            duration_weights: vec![1.0, 1.0],
            ..PlanParams::default()
        };
        let err = plan_corpus(&params, &natives(20, 16_000), 1, 10, 0.4).unwrap_err();
        assert!(err.to_string().contains("duration bins 0 and 1"), "{err}");
        let err = plan_corpus(&PlanParams::default(), &natives(5, 16_000), 1, 10, 0.4).unwrap_err();
        assert!(err.to_string().contains("exceeds the 5 atoms"), "{err}");
    }

    #[test]
    fn a_room_tail_widens_gaps_and_is_refused_when_it_breaks_a_threshold() {
        let mut params = PlanParams { tail_s: 0.04, gap_s: (0.8, 1.4), ..PlanParams::default() };
        let nat = natives(200, 16_000);
        let plans = plan_corpus(&params, &nat, 3, 400, 0.4).unwrap();
        let gap = params.gap_samples();
        for p in &plans {
            check_clip(&params, p);
            for (i, a) in p.events.iter().enumerate() {
                for b in &p.events[i + 1..] {
                    let ov = a.offset().min(b.offset()) - a.onset.max(b.onset);
                    assert!(ov > 0 || ov < -gap, "gap {ov} within 2m + guard + tail");
                }
            }
        }
        let json = serde_json::to_string(&params).unwrap();
        assert!(json.contains("\"tail_s\":0.04"));
        assert!(!serde_json::to_string(&PlanParams::default()).unwrap().contains("tail_s"));
        // the default bins' thresholds sit 0.6 s above the bin below: 2m + guard + tail must stay under it
        params.tail_s = 0.1;
        let err = plan_corpus(&params, &nat, 3, 10, 0.4).unwrap_err().to_string();
        assert!(err.contains("room tail of 0.100 s breaks the duration threshold"), "{err}");
        params.tail_s = 0.04;
        params.gap_s = (0.58, 1.2);
        let err = plan_corpus(&params, &nat, 3, 10, 0.4).unwrap_err().to_string();
        assert!(err.contains("2*margin+guard+tail_s"), "{err}");
    }

    #[test]
    fn thresholds_sit_between_bins() {
        let params = PlanParams::default();
        assert_eq!(params.duration_thresholds(), vec![2.0, 4.0]);
    }
}
