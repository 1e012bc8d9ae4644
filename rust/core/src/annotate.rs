//! Relevance engine: an events table × compiled queries → relevant (query, clip) pairs (spec §2).
//!
//! Events are columns (`clip`, `label` ids, integer `onset` / `offset` in ticks, `rate` ticks per
//! second). The index keeps each clip's events sorted by (label, onset, offset) and, per label,
//! the sorted list of clips that contain it. A query's candidates are the intersection of its
//! required labels' clip lists (rarest first, so work is bounded by the rarest label), minus the
//! clip lists of its `not` labels; only the survivors are checked event by event. A query with
//! no positive label starts from every clip. Results come back as CSR (one sorted clip list per
//! query), never as a dense clips × queries matrix, so memory grows with the relevant pairs.
//!
//! ```
//! use reasonaudio_core::annotate::{relevance, Events};
//!
//! // Clip 0: dog_bark [0, 2 s) then siren [3 s, 5 s). Clip 1: siren [0, 4 s) overlapping dog_bark [1 s, 2 s).
//! let rate = 10.0; // ticks per second
//! let events = Events {
//!     clip: &[0, 0, 1, 1],
//!     label: &[0, 1, 1, 0],
//!     onset: &[0, 30, 0, 10],
//!     offset: &[20, 50, 40, 20],
//! };
//! let labels = ["dog_bark", "siren"];
//! let ids = ["order", "overlap", "negation", "long_siren"];
//! let logic = [
//!     r#"{"all": [{"before": ["dog_bark", "siren"]}]}"#,
//!     r#"{"all": [{"overlap": ["siren", "dog_bark"]}]}"#,
//!     r#"{"all": [{"has": "dog_bark"}, {"not": "rain"}]}"#,
//!     r#"{"all": [{"duration": {"label": "siren", "min_s": 4.0}}]}"#,
//! ];
//! let rel = relevance(&events, 2, rate, &labels, &ids, &logic, 0).unwrap();
//! assert_eq!(rel.indptr, vec![0, 1, 2, 4, 5]);
//! assert_eq!(rel.clips_of(0), &[0]); // dog_bark ends before the siren starts only in clip 0
//! assert_eq!(rel.clips_of(1), &[1]);
//! assert_eq!(rel.clips_of(2), &[0, 1]); // "rain" has no events: `not rain` always holds
//! assert_eq!(rel.clips_of(3), &[1]); // 4.0 s >= 4.0: bounds are inclusive
//! ```
use rayon::prelude::*;

use crate::cancel::Cancel;
use crate::logic::{CompiledQuery, Constraint, Logic, LogicError, Vocabulary};

/// Borrowed event columns, one entry per event. `offset` is exclusive, in the same ticks as
/// `onset`.
#[derive(Debug, Clone, Copy)]
pub struct Events<'a> {
    /// The clip (0-based index) each event belongs to.
    pub clip: &'a [u32],
    /// Each event's label id (its index in the vocabulary).
    pub label: &'a [u32],
    /// Each event's start, in ticks.
    pub onset: &'a [i64],
    /// Each event's end (exclusive), in ticks; never before its onset.
    pub offset: &'a [i64],
}

/// Why the relevance engine refused its input or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnnotateError {
    /// A query's logic is malformed.
    #[error("{0}")]
    Logic(#[from] LogicError),
    /// The events table is malformed (columns of different lengths, an id out of range, an
    /// offset before its onset).
    #[error("events: {0}")]
    Events(String),
    /// Another argument is invalid (rate, sizes, vocabulary, query ids, thread count).
    #[error("{0}")]
    Input(String),
    /// The call's [`Cancel`] flag was set.
    #[error("annotation cancelled")]
    Cancelled,
}

/// Relevant pairs as CSR: query `q`'s relevant clips are
/// `clip_indices[indptr[q] as usize..indptr[q + 1] as usize]`, ascending.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Relevance {
    /// Row pointers: `n_queries + 1` offsets into `clip_indices`, starting at 0.
    pub indptr: Vec<u64>,
    /// Every query's relevant clips, query after query.
    pub clip_indices: Vec<u32>,
}

impl Relevance {
    /// Number of queries.
    pub fn n_queries(&self) -> usize {
        self.indptr.len().saturating_sub(1)
    }

    /// Number of relevant (query, clip) pairs.
    pub fn n_pairs(&self) -> usize {
        self.clip_indices.len()
    }

    /// Query `query`'s relevant clips, ascending. Panics when `query >= n_queries()`.
    pub fn clips_of(&self, query: usize) -> &[u32] {
        &self.clip_indices[self.indptr[query] as usize..self.indptr[query + 1] as usize]
    }
}

/// The events, indexed for evaluation.
#[derive(Debug, Clone)]
pub struct EventIndex {
    n_clips: usize,
    n_labels: usize,
    rate: f64,
    /// Clip `c`'s events are positions `clip_ptr[c]..clip_ptr[c + 1]` of the sorted columns.
    clip_ptr: Vec<usize>,
    label: Vec<u32>,
    onset: Vec<i64>,
    offset: Vec<i64>,
    /// Label `l`'s clips (each once, ascending) are `label_clips[label_ptr[l]..label_ptr[l + 1]]`.
    label_ptr: Vec<usize>,
    label_clips: Vec<u32>,
    /// Label `l`'s events as (clip, length in ticks), ordered by clip, at
    /// `label_ev_ptr[l]..label_ev_ptr[l + 1]`: duration filters scan these sequentially instead
    /// of visiting every candidate clip's events.
    label_ev_ptr: Vec<usize>,
    label_ev_clip: Vec<u32>,
    label_ev_len: Vec<i64>,
}

impl EventIndex {
    /// Validates and indexes the events. `n_labels` is the vocabulary size (label ids must be
    /// below it); `rate` is ticks per second (the sample rate for sample positions).
    pub fn build(events: &Events<'_>, n_clips: usize, n_labels: usize, rate: f64) -> Result<EventIndex, AnnotateError> {
        let n = events.clip.len();
        if events.label.len() != n || events.onset.len() != n || events.offset.len() != n {
            return Err(AnnotateError::Events(format!(
                "columns differ in length: clip {}, label {}, onset {}, offset {}",
                n,
                events.label.len(),
                events.onset.len(),
                events.offset.len()
            )));
        }
        if !(rate.is_finite() && rate > 0.0) {
            return Err(AnnotateError::Input(format!(
                "rate must be a positive number of ticks per second, got {rate}"
            )));
        }
        if n_clips > u32::MAX as usize || n_labels >= Vocabulary::ABSENT as usize {
            return Err(AnnotateError::Input(format!(
                "too many clips ({n_clips}) or labels ({n_labels}) for 32-bit ids"
            )));
        }
        let mut clip_ptr = vec![0usize; n_clips + 1];
        for i in 0..n {
            let (c, l) = (events.clip[i] as usize, events.label[i] as usize);
            if c >= n_clips {
                return Err(AnnotateError::Events(format!(
                    "event {i}: clip index {c} is out of range (n_clips = {n_clips})"
                )));
            }
            if l >= n_labels {
                return Err(AnnotateError::Events(format!(
                    "event {i}: label id {l} is out of range ({n_labels} labels)"
                )));
            }
            if events.offset[i] < events.onset[i] {
                return Err(AnnotateError::Events(format!(
                    "event {i}: offset {} is before onset {}",
                    events.offset[i], events.onset[i]
                )));
            }
            clip_ptr[c + 1] += 1;
        }
        for c in 0..n_clips {
            clip_ptr[c + 1] += clip_ptr[c];
        }

        // Counting sort by clip (stable), then order each clip's few events by (label, onset, offset).
        let mut order = vec![0u32; n];
        let mut next = clip_ptr.clone();
        for i in 0..n {
            let c = events.clip[i] as usize;
            order[next[c]] = i as u32;
            next[c] += 1;
        }
        drop(next);
        let key = |i: &u32| {
            let i = *i as usize;
            (events.label[i], events.onset[i], events.offset[i])
        };
        for c in 0..n_clips {
            let slice = &mut order[clip_ptr[c]..clip_ptr[c + 1]];
            if slice.len() > 1 {
                slice.sort_unstable_by_key(key);
            }
        }
        let label: Vec<u32> = order.iter().map(|&i| events.label[i as usize]).collect();
        let onset: Vec<i64> = order.iter().map(|&i| events.onset[i as usize]).collect();
        let offset: Vec<i64> = order.iter().map(|&i| events.offset[i as usize]).collect();
        drop(order);

        // Clips per label; a label repeated within a clip counts that clip once.
        let distinct = |c: usize| {
            let ls = &label[clip_ptr[c]..clip_ptr[c + 1]];
            (0..ls.len()).filter(move |&k| k == 0 || ls[k] != ls[k - 1]).map(move |k| ls[k])
        };
        let mut label_ptr = vec![0usize; n_labels + 1];
        for c in 0..n_clips {
            for l in distinct(c) {
                label_ptr[l as usize + 1] += 1;
            }
        }
        for l in 0..n_labels {
            label_ptr[l + 1] += label_ptr[l];
        }
        let mut label_clips = vec![0u32; label_ptr[n_labels]];
        let mut next = label_ptr.clone();
        for c in 0..n_clips {
            for l in distinct(c) {
                label_clips[next[l as usize]] = c as u32;
                next[l as usize] += 1;
            }
        }

        let mut label_ev_ptr = vec![0usize; n_labels + 1];
        for &l in &label {
            label_ev_ptr[l as usize + 1] += 1;
        }
        for l in 0..n_labels {
            label_ev_ptr[l + 1] += label_ev_ptr[l];
        }
        let mut label_ev_clip = vec![0u32; n];
        let mut label_ev_len = vec![0i64; n];
        let mut next = label_ev_ptr.clone();
        for c in 0..n_clips {
            for k in clip_ptr[c]..clip_ptr[c + 1] {
                let slot = &mut next[label[k] as usize];
                label_ev_clip[*slot] = c as u32;
                label_ev_len[*slot] = offset[k] - onset[k];
                *slot += 1;
            }
        }

        Ok(EventIndex {
            n_clips,
            n_labels,
            rate,
            clip_ptr,
            label,
            onset,
            offset,
            label_ptr,
            label_clips,
            label_ev_ptr,
            label_ev_clip,
            label_ev_len,
        })
    }

    /// Number of clips (including clips without events).
    pub fn n_clips(&self) -> usize {
        self.n_clips
    }

    /// Number of events.
    pub fn n_events(&self) -> usize {
        self.label.len()
    }

    /// Clips that contain `label` at least once, ascending (empty for absent labels).
    pub fn clips_with(&self, label: u32) -> &[u32] {
        let l = label as usize;
        if l >= self.n_labels {
            return &[];
        }
        &self.label_clips[self.label_ptr[l]..self.label_ptr[l + 1]]
    }

    /// Positions (in the sorted columns) of clip `clip`'s events with `label`, sorted by onset.
    fn span(&self, clip: usize, label: u32) -> std::ops::Range<usize> {
        let (lo, hi) = (self.clip_ptr[clip], self.clip_ptr[clip + 1]);
        let ls = &self.label[lo..hi];
        let start = ls.partition_point(|&x| x < label);
        let end = start + ls[start..].partition_point(|&x| x == label);
        lo + start..lo + end
    }

    fn check(&self, clip: usize, c: &Constraint<u32>) -> bool {
        match *c {
            Constraint::Has(l) => !self.span(clip, l).is_empty(),
            Constraint::Not(l) => self.span(clip, l).is_empty(),
            Constraint::Before(a, b) => {
                // Some x.offset <= some y.onset  <=>  min x.offset <= max y.onset.
                let first_end = self.offset[self.span(clip, a)].iter().min();
                let last_start = self.onset[self.span(clip, b)].iter().max();
                matches!((first_end, last_start), (Some(e), Some(s)) if e <= s)
            }
            Constraint::Overlap(a, b) => {
                let (ra, rb) = (self.span(clip, a), self.span(clip, b));
                self.any_overlap(ra, rb)
            }
            Constraint::Duration { label, min_s, max_s } => self.span(clip, label).any(|k| {
                let dur = (self.offset[k] - self.onset[k]) as f64 / self.rate;
                within(dur, min_s, max_s)
            }),
        }
    }

    /// Two lists sorted by onset: advance past whichever current interval ends first. An
    /// interval that ends first and misses the other's current one ends before every later
    /// interval of the other list starts, so it can overlap nothing still unseen (this holds
    /// even when intervals within one list overlap each other).
    fn any_overlap(&self, a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> bool {
        let (mut i, mut j) = (a.start, b.start);
        while i < a.end && j < b.end {
            let start = self.onset[i].max(self.onset[j]);
            let end = self.offset[i].min(self.offset[j]);
            if end - start > 0 {
                return true;
            }
            if self.offset[i] <= self.offset[j] {
                i += 1;
            } else {
                j += 1;
            }
        }
        false
    }

    /// Whether one clip satisfies one compiled query (the engine's semantics for one pair).
    pub fn holds(&self, clip: usize, q: &CompiledQuery) -> bool {
        q.required.iter().all(|&l| !self.span(clip, l).is_empty())
            && q.forbidden.iter().all(|&l| self.span(clip, l).is_empty())
            && q.event_checks.iter().all(|c| self.check(clip, c))
    }

    /// All clips relevant to `q`, ascending.
    pub fn relevant_clips(&self, q: &CompiledQuery) -> Vec<u32> {
        let mut lists: Vec<&[u32]> = q.required.iter().map(|&l| self.clips_with(l)).collect();
        lists.sort_by_key(|l| l.len());
        let mut candidates: Vec<u32> = match lists.split_first() {
            Some((rarest, rest)) => {
                let mut cand = rarest.to_vec();
                for other in rest {
                    if cand.is_empty() {
                        break;
                    }
                    cand = merge_filter(&cand, other, true);
                }
                cand
            }
            None => (0..self.n_clips as u32).collect(),
        };
        for &l in &q.forbidden {
            if candidates.is_empty() {
                break;
            }
            let with = self.clips_with(l);
            if !with.is_empty() {
                candidates = merge_filter(&candidates, with, false);
            }
        }
        let mut per_clip: Vec<&Constraint<u32>> = Vec::new();
        for check in &q.event_checks {
            match *check {
                Constraint::Duration { label, min_s, max_s }
                    if !candidates.is_empty() && (label as usize) < self.n_labels =>
                {
                    let l = label as usize;
                    let (lo, hi) = (self.label_ev_ptr[l], self.label_ev_ptr[l + 1]);
                    // Scanning the label's events costs about (hi - lo); checking each candidate's
                    // events costs a cache miss per candidate.
                    if candidates.len() * 4 < hi - lo {
                        per_clip.push(check);
                        continue;
                    }
                    let mut passing: Vec<u32> = Vec::new();
                    for k in lo..hi {
                        let dur = self.label_ev_len[k] as f64 / self.rate;
                        let ok = within(dur, min_s, max_s);
                        let c = self.label_ev_clip[k];
                        if ok && passing.last() != Some(&c) {
                            passing.push(c);
                        }
                    }
                    candidates = merge_filter(&candidates, &passing, true);
                }
                _ => per_clip.push(check),
            }
        }
        if !per_clip.is_empty() {
            candidates.retain(|&c| per_clip.iter().all(|k| self.check(c as usize, k)));
        }
        candidates
    }

    /// Evaluates every query (in parallel across queries; `threads == 0` uses rayon's global
    /// pool). The output does not depend on the thread count.
    pub fn annotate(&self, queries: &[CompiledQuery], threads: usize) -> Result<Relevance, AnnotateError> {
        self.annotate_cancellable(queries, threads, Cancel::NEVER)
    }

    /// [`EventIndex::annotate`] that stops with [`AnnotateError::Cancelled`] soon after `cancel`
    /// is set (checked before each query).
    pub fn annotate_cancellable(
        &self,
        queries: &[CompiledQuery],
        threads: usize,
        cancel: Cancel<'_>,
    ) -> Result<Relevance, AnnotateError> {
        let one = |q: &CompiledQuery| {
            if cancel.is_set() {
                return Err(AnnotateError::Cancelled);
            }
            Ok(self.relevant_clips(q))
        };
        let run = |parallel: bool| {
            let per_query: Vec<Vec<u32>> = if parallel {
                queries.par_iter().map(one).collect::<Result<_, _>>()?
            } else {
                queries.iter().map(one).collect::<Result<_, _>>()?
            };
            let mut indptr = Vec::with_capacity(queries.len() + 1);
            indptr.push(0u64);
            let mut total = 0u64;
            for v in &per_query {
                total += v.len() as u64;
                indptr.push(total);
            }
            let mut clip_indices = Vec::with_capacity(total as usize);
            for v in per_query {
                clip_indices.extend_from_slice(&v);
            }
            Ok(Relevance { indptr, clip_indices })
        };
        // One thread, or a single query, needs no pool: a build checks thousands of one-clip plans,
        // and starting a pool for each cost more than the evaluation.
        if threads == 1 || queries.len() <= 1 {
            run(false)
        } else if threads == 0 {
            run(true)
        } else {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| AnnotateError::Input(format!("cannot start {threads} threads: {e}")))?;
            pool.install(|| run(true))
        }
    }
}

/// The contract's duration test: `dur >= min_s` (if given) and `dur <= max_s` (if given).
fn within(dur: f64, min_s: Option<f64>, max_s: Option<f64>) -> bool {
    min_s.is_none_or(|m| dur >= m) && max_s.is_none_or(|m| dur <= m)
}

/// Keeps the elements of sorted `small` that are (`keep_common`) or are not (`!keep_common`)
/// in sorted `large`. Gallops through `large` when it is much longer, so intersecting a rare
/// label with a common one costs about |small| · log(|large| / |small|).
fn merge_filter(small: &[u32], large: &[u32], keep_common: bool) -> Vec<u32> {
    if large.len() > 16 * small.len() {
        let mut out = Vec::with_capacity(small.len());
        let mut j = 0usize;
        for &x in small {
            let mut step = 1usize;
            let mut hi = j;
            while hi < large.len() && large[hi] < x {
                j = hi + 1;
                hi += step;
                step *= 2;
            }
            let hi = hi.min(large.len());
            j += large[j..hi].partition_point(|&y| y < x);
            let found = j < large.len() && large[j] == x;
            if found == keep_common {
                out.push(x);
            }
        }
        return out;
    }
    // Comparable lengths: a merge whose steps and stores do not branch on the data, since
    // clip lists interleave unpredictably and mispredictions would dominate.
    let mut out = vec![0u32; small.len()];
    let (mut i, mut j, mut k) = (0usize, 0usize, 0usize);
    while i < small.len() && j < large.len() {
        let (x, y) = (small[i], large[j]);
        out[k] = x;
        k += if keep_common { (x == y) as usize } else { (x < y) as usize };
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    if !keep_common {
        let rest = small.len() - i;
        out[k..k + rest].copy_from_slice(&small[i..]);
        k += rest;
    }
    out.truncate(k);
    out
}

/// Parses, validates and compiles queries. `query_ids[i]` names `logic[i]` in error messages.
pub fn compile_queries<S: AsRef<str> + Sync, T: AsRef<str> + Sync>(
    vocab: &Vocabulary,
    query_ids: &[S],
    logic: &[T],
) -> Result<Vec<CompiledQuery>, AnnotateError> {
    if query_ids.len() != logic.len() {
        return Err(AnnotateError::Input(format!("{} query ids for {} logic strings", query_ids.len(), logic.len())));
    }
    query_ids
        .par_iter()
        .zip(logic.par_iter())
        .map(|(id, json)| Ok(Logic::parse(id.as_ref(), json.as_ref())?.compile(vocab)))
        .collect()
}

/// One call from columns and JSON strings to relevant pairs: `labels[i]` is label id `i` in
/// `events.label`; `rate` is ticks per second.
pub fn relevance<L: AsRef<str>, S: AsRef<str> + Sync, T: AsRef<str> + Sync>(
    events: &Events<'_>,
    n_clips: usize,
    rate: f64,
    labels: &[L],
    query_ids: &[S],
    logic: &[T],
    threads: usize,
) -> Result<Relevance, AnnotateError> {
    relevance_cancellable(events, n_clips, rate, labels, Queries { ids: query_ids, logic }, threads, Cancel::NEVER)
}

/// The queries of an annotation: ids (for error messages) and logic JSON, one each per query.
#[derive(Clone, Copy, Debug)]
pub struct Queries<'a, S, T> {
    /// Per query: its id.
    pub ids: &'a [S],
    /// Per query: its logic as JSON.
    pub logic: &'a [T],
}

/// [`relevance`] that stops with [`AnnotateError::Cancelled`] soon after `cancel` is set.
pub fn relevance_cancellable<L: AsRef<str>, S: AsRef<str> + Sync, T: AsRef<str> + Sync>(
    events: &Events<'_>,
    n_clips: usize,
    rate: f64,
    labels: &[L],
    queries: Queries<'_, S, T>,
    threads: usize,
    cancel: Cancel<'_>,
) -> Result<Relevance, AnnotateError> {
    let Queries { ids: query_ids, logic } = queries;
    let vocab = Vocabulary::new(labels).map_err(AnnotateError::Input)?;
    let queries = compile_queries(&vocab, query_ids, logic)?;
    let index = EventIndex::build(events, n_clips, vocab.len(), rate)?;
    if cancel.is_set() {
        return Err(AnnotateError::Cancelled);
    }
    index.annotate_cancellable(&queries, threads, cancel)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events as (clip, label, onset, offset) with rate 10 ticks/s; labels "a".."e".
    fn run(rows: &[(u32, u32, i64, i64)], n_clips: usize, logic: &str) -> Vec<u32> {
        let clip: Vec<u32> = rows.iter().map(|r| r.0).collect();
        let label: Vec<u32> = rows.iter().map(|r| r.1).collect();
        let onset: Vec<i64> = rows.iter().map(|r| r.2).collect();
        let offset: Vec<i64> = rows.iter().map(|r| r.3).collect();
        let ev = Events { clip: &clip, label: &label, onset: &onset, offset: &offset };
        let labels = ["a", "b", "c", "d", "e"];
        let rel = relevance(&ev, n_clips, 10.0, &labels, &["q"], &[logic], 1).unwrap();
        rel.clips_of(0).to_vec()
    }

    const A: u32 = 0;
    const B: u32 = 1;
    const C: u32 = 2;

    #[test]
    fn has_and_not() {
        let rows = [(0, A, 0, 10), (1, B, 0, 10), (2, A, 0, 5), (2, B, 5, 10)];
        assert_eq!(run(&rows, 4, r#"{"all": [{"has": "a"}]}"#), vec![0, 2]);
        assert_eq!(run(&rows, 4, r#"{"all": [{"has": "a"}, {"not": "b"}]}"#), vec![0]);
        // Only `not`: every clip is a candidate, including clip 3 with no events at all.
        assert_eq!(run(&rows, 4, r#"{"all": [{"not": "a"}]}"#), vec![1, 3]);
        assert_eq!(run(&rows, 4, r#"{"all": [{"has": "a"}, {"not": "a"}]}"#), Vec::<u32>::new());
    }

    #[test]
    fn missing_labels() {
        let rows = [(0, A, 0, 10), (1, B, 0, 10)];
        // "zzz" is not in the vocabulary; "c" is, but has no events.
        for missing in ["zzz", "c"] {
            assert_eq!(run(&rows, 2, &format!(r#"{{"all": [{{"has": "{missing}"}}]}}"#)), Vec::<u32>::new());
            assert_eq!(run(&rows, 2, &format!(r#"{{"all": [{{"not": "{missing}"}}]}}"#)), vec![0, 1]);
            assert_eq!(run(&rows, 2, &format!(r#"{{"all": [{{"before": ["a", "{missing}"]}}]}}"#)), Vec::<u32>::new());
        }
    }

    #[test]
    fn before_touching_and_equal_onsets() {
        let rows = [
            (0, A, 0, 10),
            (0, B, 10, 20), // touching: a.offset == b.onset -> before holds
            (1, A, 0, 11),
            (1, B, 10, 20), // one tick of overlap -> not before
            (2, A, 5, 10),
            (2, B, 5, 20), // equal onsets
            (3, B, 0, 5),
            (3, A, 6, 9), // reversed
        ];
        assert_eq!(run(&rows, 4, r#"{"all": [{"before": ["a", "b"]}]}"#), vec![0]);
        assert_eq!(run(&rows, 4, r#"{"all": [{"before": ["b", "a"]}]}"#), vec![3]);
    }

    #[test]
    fn overlap_zero_and_touching() {
        let rows = [
            (0, A, 0, 10),
            (0, B, 10, 20), // touching: zero overlap -> false
            (1, A, 0, 11),
            (1, B, 10, 20), // one tick -> true
            (2, A, 5, 10),
            (2, B, 5, 5), // zero-length b inside a -> false
            (3, A, 5, 10),
            (3, B, 5, 6), // equal onsets -> true
            (4, A, 0, 100),
            (4, B, 20, 30), // containment -> true
        ];
        assert_eq!(run(&rows, 5, r#"{"all": [{"overlap": ["a", "b"]}]}"#), vec![1, 3, 4]);
        assert_eq!(run(&rows, 5, r#"{"all": [{"overlap": ["b", "a"]}]}"#), vec![1, 3, 4]);
    }

    #[test]
    fn zero_length_events_follow_the_contract() {
        // Spec §2: a point annotation (onset = offset) is in E_L, `before` orders it by its onset
        // and offset, it overlaps nothing, and its duration is 0.
        let rows = [
            (0, A, 5, 5),
            (0, B, 5, 5), // two points at the same instant
            (0, C, 9, 12),
            (1, A, 0, 10),
            (1, B, 4, 4), // a point inside an event
            (2, A, 10, 10),
            (2, B, 10, 20), // a point where an event starts
        ];
        assert_eq!(run(&rows, 3, r#"{"all": [{"has": "b"}]}"#), vec![0, 1, 2]);
        assert_eq!(run(&rows, 3, r#"{"all": [{"not": "b"}]}"#), Vec::<u32>::new());
        assert_eq!(run(&rows, 3, r#"{"all": [{"before": ["a", "b"]}]}"#), vec![0, 2]);
        assert_eq!(run(&rows, 3, r#"{"all": [{"before": ["b", "a"]}]}"#), vec![0]);
        assert_eq!(run(&rows, 3, r#"{"all": [{"before": ["a", "c"]}]}"#), vec![0]);
        assert_eq!(run(&rows, 3, r#"{"all": [{"overlap": ["a", "b"]}]}"#), Vec::<u32>::new());
        assert_eq!(run(&rows, 3, r#"{"all": [{"overlap": ["b", "a"]}]}"#), Vec::<u32>::new());
        assert_eq!(run(&rows, 3, r#"{"all": [{"duration": {"label": "b", "max_s": 0.0}}]}"#), vec![0, 1]);
        assert_eq!(run(&rows, 3, r#"{"all": [{"duration": {"label": "b", "min_s": 0.1}}]}"#), vec![2]);
        // Both duration paths (the label scan and the per-clip check) read a point as 0 s.
        assert_eq!(run(&rows, 3, r#"{"all": [{"has": "c"}, {"duration": {"label": "a", "max_s": 0.0}}]}"#), vec![0]);
    }

    #[test]
    fn repeated_labels() {
        let rows = [
            // Clip 0: a twice; the second a starts after b ends; the first ends before b starts.
            (0, A, 0, 5),
            (0, B, 10, 20),
            (0, A, 30, 40),
            // Clip 1: overlap only with the later, shorter a; an early long a precedes b.
            (1, A, 0, 8),
            (1, A, 9, 12),
            (1, A, 2, 3),
            (1, B, 11, 15),
            // Clip 2: a twice, the second overlapping the first (natural recordings).
            (2, A, 0, 10),
            (2, A, 5, 30),
            (2, C, 20, 25),
        ];
        assert_eq!(run(&rows, 3, r#"{"all": [{"before": ["a", "b"]}]}"#), vec![0, 1]);
        assert_eq!(run(&rows, 3, r#"{"all": [{"before": ["b", "a"]}]}"#), vec![0]);
        assert_eq!(run(&rows, 3, r#"{"all": [{"overlap": ["a", "b"]}]}"#), vec![1]);
        assert_eq!(run(&rows, 3, r#"{"all": [{"overlap": ["c", "a"]}]}"#), vec![2]);
        assert_eq!(run(&rows, 3, r#"{"all": [{"before": ["a", "a"]}]}"#), vec![0, 1]);
        assert_eq!(run(&rows, 3, r#"{"all": [{"overlap": ["a", "a"]}]}"#), vec![0, 1, 2]);
        // Duration: some a lasts >= 2.5 s (clip 2's second a: 25 ticks).
        assert_eq!(run(&rows, 3, r#"{"all": [{"duration": {"label": "a", "min_s": 2.5}}]}"#), vec![2]);
        // Some a lasts <= 0.3 s: only clip 1's [9, 12) and [2, 3).
        assert_eq!(run(&rows, 3, r#"{"all": [{"duration": {"label": "a", "max_s": 0.3}}]}"#), vec![1]);
    }

    #[test]
    fn duration_bounds_are_inclusive() {
        let rows = [(0, A, 0, 40), (1, A, 3, 43), (2, A, 0, 41), (3, A, 0, 39)];
        assert_eq!(run(&rows, 4, r#"{"all": [{"duration": {"label": "a", "min_s": 4.0}}]}"#), vec![0, 1, 2]);
        assert_eq!(run(&rows, 4, r#"{"all": [{"duration": {"label": "a", "max_s": 4.0}}]}"#), vec![0, 1, 3]);
        assert_eq!(run(&rows, 4, r#"{"all": [{"duration": {"label": "a", "min_s": 4.0, "max_s": 4.0}}]}"#), vec![0, 1]);
        // 0.1 s is not exact in binary: 1 tick / 10.0 must compare equal to the literal 0.1.
        let rows = [(0, A, 7, 8)];
        assert_eq!(run(&rows, 1, r#"{"all": [{"duration": {"label": "a", "min_s": 0.1, "max_s": 0.1}}]}"#), vec![0]);
    }

    #[test]
    fn duration_by_scan_and_by_clip_agree() {
        // Label a is everywhere (the scan path); b is rare, so with `has b` the few candidates
        // are checked clip by clip.
        let mut rows = Vec::new();
        for c in 0..40u32 {
            rows.push((c, A, 0, 10 + c as i64));
            rows.push((c, A, 50, 55));
            if c % 10 == 0 {
                rows.push((c, B, 60, 70));
            }
        }
        let scan = run(&rows, 40, r#"{"all": [{"duration": {"label": "a", "min_s": 2.0, "max_s": 3.0}}]}"#);
        assert_eq!(scan, (10..=20).collect::<Vec<u32>>());
        let by_clip =
            run(&rows, 40, r#"{"all": [{"has": "b"}, {"duration": {"label": "a", "min_s": 2.0, "max_s": 3.0}}]}"#);
        assert_eq!(by_clip, vec![10, 20]);
    }

    #[test]
    fn mixed_conjunction() {
        let rows = [
            (0, A, 0, 10),
            (0, B, 20, 30),
            (1, A, 0, 10),
            (1, B, 20, 30),
            (1, C, 40, 50),
            (2, B, 0, 10),
            (2, A, 20, 30),
        ];
        let q = r#"{"all": [{"before": ["a", "b"]}, {"not": "c"}]}"#;
        assert_eq!(run(&rows, 3, q), vec![0]);
    }

    #[test]
    fn thread_count_does_not_change_output() {
        let mut rows = Vec::new();
        for c in 0..500u32 {
            for k in 0..4i64 {
                let l = (c as i64 * 7 + k * 3) % 5;
                rows.push((c, l as u32, k * 10 + (c as i64 % 3), k * 10 + 12));
            }
        }
        let clip: Vec<u32> = rows.iter().map(|r| r.0).collect();
        let label: Vec<u32> = rows.iter().map(|r| r.1).collect();
        let onset: Vec<i64> = rows.iter().map(|r| r.2).collect();
        let offset: Vec<i64> = rows.iter().map(|r| r.3).collect();
        let ev = Events { clip: &clip, label: &label, onset: &onset, offset: &offset };
        let labels = ["a", "b", "c", "d", "e"];
        let logic: Vec<String> = (0..50)
            .map(|i| {
                let (x, y) = (labels[i % 5], labels[(i / 5) % 5]);
                match i % 4 {
                    0 => format!(r#"{{"all": [{{"before": ["{x}", "{y}"]}}]}}"#),
                    1 => format!(r#"{{"all": [{{"overlap": ["{x}", "{y}"]}}]}}"#),
                    2 => format!(r#"{{"all": [{{"has": "{x}"}}, {{"not": "{y}"}}]}}"#),
                    _ => {
                        format!(r#"{{"all": [{{"duration": {{"label": "{x}", "min_s": 1.1}}}}]}}"#)
                    }
                }
            })
            .collect();
        let ids: Vec<String> = (0..50).map(|i| format!("q{i}")).collect();
        let one = relevance(&ev, 500, 10.0, &labels, &ids, &logic, 1).unwrap();
        let two = relevance(&ev, 500, 10.0, &labels, &ids, &logic, 2).unwrap();
        assert_eq!(one, two);
        assert!(one.n_pairs() > 0);
        // The set-based path agrees with the literal per-clip check.
        let vocab = Vocabulary::new(&labels).unwrap();
        let compiled = compile_queries(&vocab, &ids, &logic).unwrap();
        let index = EventIndex::build(&ev, 500, 5, 10.0).unwrap();
        for (qi, q) in compiled.iter().enumerate() {
            let slow: Vec<u32> = (0..500u32).filter(|&c| index.holds(c as usize, q)).collect();
            assert_eq!(one.clips_of(qi), slow.as_slice());
        }
    }

    #[test]
    fn merge_filter_gallops_correctly() {
        let large: Vec<u32> = (0..10_000).filter(|x| x % 3 != 0).collect();
        let small = vec![0, 1, 2, 3, 299, 300, 301, 9_998, 9_999, 10_005];
        assert_eq!(merge_filter(&small, &large, true), vec![1, 2, 299, 301, 9_998]);
        assert_eq!(merge_filter(&small, &large, false), vec![0, 3, 300, 9_999, 10_005]);
        let a: Vec<u32> = (0..300).filter(|x| x % 2 == 0).collect();
        let b: Vec<u32> = (0..400).filter(|x| x % 3 == 0).collect();
        let common: Vec<u32> = (0..300).filter(|x| x % 6 == 0).collect();
        let only_a: Vec<u32> = (0..300).filter(|x| x % 2 == 0 && x % 3 != 0).collect();
        assert_eq!(merge_filter(&a, &b, true), common);
        assert_eq!(merge_filter(&a, &b, false), only_a);
        assert_eq!(
            merge_filter(&b, &a, false),
            (0..400).filter(|x| x % 3 == 0 && (x % 2 != 0 || *x >= 300)).collect::<Vec<u32>>()
        );
    }

    #[test]
    fn bad_events_are_rejected() {
        let ev = Events { clip: &[0, 3], label: &[0, 0], onset: &[0, 0], offset: &[1, 1] };
        let err = EventIndex::build(&ev, 2, 1, 10.0).unwrap_err().to_string();
        assert_eq!(err, "events: event 1: clip index 3 is out of range (n_clips = 2)");
        let ev = Events { clip: &[0], label: &[0], onset: &[5], offset: &[4] };
        let err = EventIndex::build(&ev, 1, 1, 10.0).unwrap_err().to_string();
        assert_eq!(err, "events: event 0: offset 4 is before onset 5");
        let ev = Events { clip: &[0], label: &[1], onset: &[0], offset: &[4] };
        assert!(EventIndex::build(&ev, 1, 1, 10.0).unwrap_err().to_string().contains("label id 1"));
        let ev = Events { clip: &[0], label: &[0], onset: &[0], offset: &[4] };
        assert!(EventIndex::build(&ev, 1, 1, 0.0).is_err());
        assert!(EventIndex::build(&ev, 1, 1, f64::NAN).is_err());
    }
}
