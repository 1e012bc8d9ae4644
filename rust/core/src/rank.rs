//! Canonical ranking of embeddings: exact, fixed-order float64 inner products of unit vectors.
//!
//! The score of a (query, clip) pair is the **canonical score** of `reasonaudio.retrieval.index`:
//! each row is made a float64 unit vector (x as f64 / norm, the norm being the square root of the
//! squares summed in dimension order; an all-zero row stays zero), and the score is the sum over
//! dimensions, in dimension order starting from 0.0, of the products — each product and each sum
//! one correctly rounded IEEE operation (Rust never fuses a multiply and an add). Every path here
//! (AVX-512, AVX2, scalar) performs exactly those operations in exactly that order for every pair,
//! so the scores are the same bits on every machine, whatever the tiling, batch or thread count.
//!
//! The unit vectors are never stored whole: the caller keeps its float32 rows and their norms
//! (`norms`), and each block of rows is normalised into float64 in a small packed buffer when it
//! is scored. Rankings order by score descending, then clip index ascending.
use rayon::prelude::*;

use crate::cancel::{Cancel, Cancelled};

/// Why a ranking call refused its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RankError {
    /// Shapes or values that do not fit together (row count, dimension, norms, targets, `k`).
    #[error("{0}")]
    Input(String),
    /// The call's [`Cancel`] flag was set.
    #[error("cancelled")]
    Cancelled,
}

impl From<Cancelled> for RankError {
    fn from(_: Cancelled) -> Self {
        RankError::Cancelled
    }
}

/// Row-major float32 vectors (`rows.len() == n * dim`) with their canonical norms.
#[derive(Clone, Copy, Debug)]
pub struct Vectors<'a> {
    /// The vectors, one row of `dim` values after another.
    pub rows: &'a [f32],
    /// Values per row.
    pub dim: usize,
    /// One norm per row, from [`norms`].
    pub norms: &'a [f64],
}

impl<'a> Vectors<'a> {
    /// Checks the shapes (`norms` must come from [`norms`] of the same rows).
    pub fn new(rows: &'a [f32], dim: usize, norms: &'a [f64]) -> Result<Self, RankError> {
        if rows.len() != norms.len() * dim {
            return Err(RankError::Input(format!(
                "{} values are not {} rows of dimension {dim}",
                rows.len(),
                norms.len()
            )));
        }
        Ok(Vectors { rows, dim, norms })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.norms.len()
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.norms.is_empty()
    }

    fn row(&self, i: usize) -> &'a [f32] {
        &self.rows[i * self.dim..(i + 1) * self.dim]
    }
}

/// The canonical norm of one row: sqrt of the squares summed in dimension order.
fn norm(row: &[f32]) -> f64 {
    let mut squares = 0.0f64;
    for &x in row {
        let x = x as f64;
        squares += x * x;
    }
    squares.sqrt()
}

/// One element of a canonical unit vector.
#[inline(always)]
fn unit(x: f32, norm: f64) -> f64 {
    if norm > 0.0 {
        x as f64 / norm
    } else {
        0.0
    }
}

/// Canonical norms of `rows` (n x dim, row-major). Refuses NaN or infinite values (naming the
/// first such row): a square of a float32 cannot overflow a float64 sum, so a norm is finite
/// exactly when its row is.
pub fn norms(rows: &[f32], dim: usize) -> Result<Vec<f64>, RankError> {
    if dim == 0 {
        return Err(RankError::Input("vectors of dimension 0".into()));
    }
    if !rows.len().is_multiple_of(dim) {
        return Err(RankError::Input(format!("{} values are not rows of dimension {dim}", rows.len())));
    }
    let out: Vec<f64> = rows.par_chunks(dim).with_min_len(256).map(norm).collect();
    if let Some(bad) = out.iter().position(|n| !n.is_finite()) {
        return Err(RankError::Input(format!("row {bad} contains NaN or infinite values")));
    }
    Ok(out)
}

/// The canonical unit rows rounded once to float32 (what FAISS or a user's own code would take).
pub fn unit_rows_f32(v: &Vectors) -> Vec<f32> {
    let mut out = vec![0f32; v.rows.len()];
    if v.dim == 0 {
        return out;
    }
    out.par_chunks_mut(v.dim).zip(v.rows.par_chunks(v.dim)).zip(v.norms.par_iter()).with_min_len(256).for_each(
        |((o, r), &n)| {
            for (o, &x) in o.iter_mut().zip(r) {
                *o = unit(x, n) as f32;
            }
        },
    );
    out
}

/// The canonical score of query row `q` against clip row `c`.
pub fn pair_score(queries: &Vectors, q: usize, clips: &Vectors, c: usize) -> f64 {
    let (qn, cn) = (queries.norms[q], clips.norms[c]);
    let mut acc = 0.0f64;
    for (&a, &b) in queries.row(q).iter().zip(clips.row(c)) {
        acc += unit(a, qn) * unit(b, cn);
    }
    acc
}

/// Canonical scores of the pairs (query_rows[i], clip_rows[i]).
pub fn pair_scores(
    queries: &Vectors,
    clips: &Vectors,
    query_rows: &[i64],
    clip_rows: &[i64],
) -> Result<Vec<f64>, RankError> {
    check_dims(queries, clips)?;
    if query_rows.len() != clip_rows.len() {
        return Err(RankError::Input(format!("{} query rows but {} clip rows", query_rows.len(), clip_rows.len())));
    }
    let check = |rows: &[i64], n: usize, what: &str| match rows.iter().position(|&r| r < 0 || r as usize >= n) {
        Some(i) => Err(RankError::Input(format!("pair {i}: {what} row {} is outside 0..{n}", rows[i]))),
        None => Ok(()),
    };
    check(query_rows, queries.len(), "query")?;
    check(clip_rows, clips.len(), "clip")?;
    Ok(query_rows
        .par_iter()
        .zip(clip_rows.par_iter())
        .with_min_len(64)
        .map(|(&q, &c)| pair_score(queries, q as usize, clips, c as usize))
        .collect())
}

fn check_dims(queries: &Vectors, clips: &Vectors) -> Result<(), RankError> {
    if queries.dim != clips.dim {
        return Err(RankError::Input(format!(
            "query vectors have dimension {} but clip vectors {}",
            queries.dim, clips.dim
        )));
    }
    Ok(())
}

// ---- the blocked kernel ----------------------------------------------------------------------

/// Queries per micro-tile.
const MR: usize = 8;
/// Clips per micro-tile (a panel).
const NR: usize = 16;
/// Clips normalised into the shared packed buffer at a time: a step between cancellation checks.
const CHUNK: usize = 1024;
/// Queries per parallel task (a multiple of MR): the packed chunk is read once per group.
const GROUP: usize = 4 * MR;

/// Rows `start..start+count` of `v` as float64 unit values, in tiles of `width` rows laid out
/// dimension-major ([tile][dim][width]); rows past the end are zero (their scores are dropped).
fn pack(v: &Vectors, start: usize, count: usize, width: usize, out: &mut [f64]) {
    let dim = v.dim;
    out.par_chunks_mut(dim * width).enumerate().for_each(|(t, tile)| {
        for w in 0..width {
            let i = t * width + w;
            if i < count {
                let (row, n) = (v.row(start + i), v.norms[start + i]);
                for (j, &x) in row.iter().enumerate() {
                    tile[j * width + w] = unit(x, n);
                }
            } else {
                for j in 0..dim {
                    tile[j * width + w] = 0.0;
                }
            }
        }
    });
}

/// acc[r][c] = sum_j q[j][r] * c[j][c], in j order from 0.0: the scalar reference of the tile.
#[inline(always)]
fn micro_generic(dim: usize, qp: &[f64], cp: &[f64], out: &mut [[f64; NR]; MR]) {
    let mut acc = [[0.0f64; NR]; MR];
    for j in 0..dim {
        let q: &[f64; MR] = qp[j * MR..j * MR + MR].try_into().unwrap();
        let c: &[f64; NR] = cp[j * NR..j * NR + NR].try_into().unwrap();
        for r in 0..MR {
            for k in 0..NR {
                acc[r][k] += q[r] * c[k];
            }
        }
    }
    *out = acc;
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn micro_avx2(dim: usize, qp: &[f64], cp: &[f64], out: &mut [[f64; NR]; MR]) {
    micro_generic(dim, qp, cp, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn micro_avx512(dim: usize, qp: &[f64], cp: &[f64], out: &mut [[f64; NR]; MR]) {
    use std::arch::x86_64::*;
    assert!(qp.len() >= dim * MR && cp.len() >= dim * NR);
    let (qp, cp) = (qp.as_ptr(), cp.as_ptr());
    let mut acc = [[_mm512_setzero_pd(); 2]; MR];
    for j in 0..dim {
        // SAFETY: j < dim, and the asserts above bound every read.
        let c0 = _mm512_loadu_pd(cp.add(j * NR));
        let c1 = _mm512_loadu_pd(cp.add(j * NR + 8));
        for (r, a) in acc.iter_mut().enumerate() {
            let q = _mm512_set1_pd(*qp.add(j * MR + r));
            // separate multiply and add (no FMA): the canonical rounding
            a[0] = _mm512_add_pd(a[0], _mm512_mul_pd(q, c0));
            a[1] = _mm512_add_pd(a[1], _mm512_mul_pd(q, c1));
        }
    }
    for (o, a) in out.iter_mut().zip(&acc) {
        _mm512_storeu_pd(o.as_mut_ptr(), a[0]);
        _mm512_storeu_pd(o.as_mut_ptr().add(8), a[1]);
    }
}

/// Which tile kernel this CPU runs; all give the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kernel {
    /// Portable Rust, any CPU.
    Scalar,
    /// x86-64 with AVX2.
    Avx2,
    /// x86-64 with AVX-512F.
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU supports.
    pub fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                return Kernel::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") {
                return Kernel::Avx2;
            }
        }
        Kernel::Scalar
    }

    /// The kernels this CPU can run (for tests comparing them).
    pub fn available() -> Vec<Kernel> {
        let mut out = vec![Kernel::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                out.push(Kernel::Avx2);
            }
            if std::is_x86_feature_detected!("avx512f") {
                out.push(Kernel::Avx512);
            }
        }
        out
    }

    #[inline(always)]
    fn run(self, dim: usize, qp: &[f64], cp: &[f64], out: &mut [[f64; NR]; MR]) {
        match self {
            Kernel::Scalar => micro_generic(dim, qp, cp, out),
            // SAFETY: `detect`/`available` only return a kernel whose features the CPU has.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { micro_avx2(dim, qp, cp, out) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { micro_avx512(dim, qp, cp, out) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => micro_generic(dim, qp, cp, out),
        }
    }
}

/// An order-preserving key of a ranking position: smaller is better (higher score, then smaller
/// clip index). -0.0 and 0.0 compare equal, as they do as floats.
#[inline(always)]
fn key(score: f64, clip: usize) -> u128 {
    let bits = (score + 0.0).to_bits(); // -0.0 + 0.0 == +0.0
    let ordered = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
    ((!ordered as u128) << 64) | clip as u128
}

#[inline(always)]
fn key_clip(key: u128) -> usize {
    key as u64 as usize
}

/// Per query: the best `k` positions so far, and the count of clips outranking a target.
struct QueryState {
    buf: Vec<(u128, f64)>,
    /// A position must beat this key to enter the head (u128::MAX until the buffer first fills).
    bar: u128,
    /// (score, clip) whose rank is counted, if any; and the count.
    target: Option<(f64, usize)>,
    above: u64,
}

impl QueryState {
    fn shrink(&mut self, k: usize) {
        if self.buf.len() > k {
            self.buf.select_nth_unstable_by_key(k - 1, |e| e.0);
            self.buf.truncate(k);
            self.bar = self.buf.iter().map(|e| e.0).max().unwrap_or(u128::MAX);
        }
    }
}

/// What to compute for each query.
#[derive(Clone, Copy, Debug)]
pub struct RankRequest<'a> {
    /// The head length (clamped to the corpus size; the corpus size gives complete rankings).
    pub k: usize,
    /// Optional (score, clip) per query: counts the clips that outrank it (higher score, or equal
    /// and a smaller index) — the 0-based rank of that clip, when the score is its own.
    pub targets: Option<(&'a [f64], &'a [i64])>,
}

/// Rankings of every query: `scores` and `clips` are row-major [n_queries, k].
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// Clips ranked per query (the request's `k`, clamped to the corpus size).
    pub k: usize,
    /// Per query, the `k` best cosine scores, best first.
    pub scores: Vec<f64>,
    /// Per query, the clips of those scores (ties: the smaller index first).
    pub clips: Vec<i64>,
    /// Per query, the clips outranking its target (0 where it has none).
    pub outranking: Vec<i64>,
}

/// The canonical ranking of every query against every clip (see the module docs).
pub fn rank(queries: &Vectors, clips: &Vectors, req: RankRequest, cancel: Cancel) -> Result<Ranking, RankError> {
    rank_with(queries, clips, req, Kernel::detect(), cancel)
}

/// [`rank`] with a chosen tile kernel (every kernel gives the same bits; tests compare them).
pub fn rank_with(
    queries: &Vectors,
    clips: &Vectors,
    req: RankRequest,
    kernel: Kernel,
    cancel: Cancel,
) -> Result<Ranking, RankError> {
    check_dims(queries, clips)?;
    let (nq, n, dim) = (queries.len(), clips.len(), queries.dim);
    let k = req.k.min(n);
    if let Some((s, c)) = req.targets {
        if s.len() != nq || c.len() != nq {
            return Err(RankError::Input(format!("{} targets for {nq} queries", s.len().min(c.len()))));
        }
        if let Some(i) = c.iter().position(|&c| c < 0 || c as usize >= n) {
            return Err(RankError::Input(format!("query {i}: target clip {} is outside 0..{n}", c[i])));
        }
    }
    let full = k == n;
    let mut out = Ranking { k, scores: vec![0.0; nq * k], clips: vec![0; nq * k], outranking: vec![0; nq] };
    if nq == 0 || (k == 0 && req.targets.is_none()) {
        return Ok(out);
    }

    let groups = nq.div_ceil(GROUP);
    let mut qpack = vec![0.0f64; groups * GROUP * dim];
    pack(queries, 0, nq, MR, &mut qpack);
    let mut states: Vec<QueryState> = (0..nq)
        .map(|q| QueryState {
            buf: Vec::with_capacity(if full { 0 } else { 2 * k + CHUNK }),
            bar: u128::MAX,
            target: req.targets.map(|(s, c)| (s[q], c[q] as usize)),
            above: 0,
        })
        .collect();
    // complete rankings: every score lands in its row, sorted at the end
    let mut full_scores = if full { vec![0.0f64; nq * n] } else { Vec::new() };
    let row_len = if full { n } else { 0 };

    let chunk_cap = CHUNK.min(n.max(1)).div_ceil(NR) * NR;
    let mut cpack = vec![0.0f64; chunk_cap * dim];
    for chunk_start in (0..n).step_by(CHUNK) {
        if cancel.is_set() {
            return Err(RankError::Cancelled);
        }
        let count = CHUNK.min(n - chunk_start);
        let panels = count.div_ceil(NR);
        let cpack = &mut cpack[..panels * NR * dim];
        pack(clips, chunk_start, count, NR, cpack);
        let cpack = &*cpack;
        let qpack = &qpack;
        let mut rows: Vec<&mut [f64]> = if full {
            full_scores.chunks_mut(GROUP * row_len).collect()
        } else {
            (0..groups).map(|_| <&mut [f64]>::default()).collect()
        };
        states.par_chunks_mut(GROUP).zip(rows.par_iter_mut()).enumerate().for_each(|(g, (group, rows))| {
            let mut tile = [[0.0f64; NR]; MR];
            let group_q = group.len();
            for p in 0..panels {
                let cp = &cpack[p * NR * dim..(p + 1) * NR * dim];
                let width = NR.min(count - p * NR);
                for m in 0..group_q.div_ceil(MR) {
                    let micro = g * GROUP / MR + m;
                    kernel.run(dim, &qpack[micro * MR * dim..(micro + 1) * MR * dim], cp, &mut tile);
                    for (r, scores) in tile.iter().enumerate().take(MR.min(group_q - m * MR)) {
                        let local = m * MR + r;
                        let state = &mut group[local];
                        let base = chunk_start + p * NR;
                        if let Some((ts, tc)) = state.target {
                            for (c, &s) in scores[..width].iter().enumerate() {
                                state.above += (s > ts || s == ts && base + c < tc) as u64;
                            }
                        }
                        if full {
                            rows[local * row_len + base..local * row_len + base + width]
                                .copy_from_slice(&scores[..width]);
                        } else if k > 0 {
                            for (c, &s) in scores[..width].iter().enumerate() {
                                let key = key(s, base + c);
                                if key < state.bar {
                                    state.buf.push((key, s));
                                }
                            }
                        }
                    }
                }
            }
            if !full && k > 0 {
                for state in group.iter_mut() {
                    if state.buf.len() >= 2 * k {
                        state.shrink(k);
                    }
                }
            }
        });
    }
    if cancel.is_set() {
        return Err(RankError::Cancelled);
    }

    let heads = out.scores.par_chunks_mut(k.max(1)).zip(out.clips.par_chunks_mut(k.max(1)));
    if full {
        heads.zip(full_scores.par_chunks(n)).for_each(|((s_out, c_out), row)| {
            let mut keys: Vec<u128> = row.iter().enumerate().map(|(c, &s)| key(s, c)).collect();
            keys.sort_unstable();
            for ((so, co), key) in s_out.iter_mut().zip(c_out.iter_mut()).zip(&keys) {
                let c = key_clip(*key);
                *co = c as i64;
                *so = row[c];
            }
        });
    } else if k > 0 {
        heads.zip(states.par_iter_mut()).for_each(|((s_out, c_out), state)| {
            state.shrink(k);
            state.buf.sort_unstable_by_key(|e| e.0);
            for ((so, co), &(key, s)) in s_out.iter_mut().zip(c_out.iter_mut()).zip(&state.buf) {
                *co = key_clip(key) as i64;
                *so = s;
            }
        });
    }
    for (o, s) in out.outranking.iter_mut().zip(&states) {
        *o = s.above as i64;
    }
    Ok(out)
}

#[cfg(test)]
// index loops spell out the reference computation
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random(n: usize, dim: usize, seed: u64) -> Vec<f32> {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        (0..n * dim).map(|_| rng.gen_range(-1.0f32..1.0)).collect()
    }

    /// The reference: unit vectors materialised, one scalar sum per pair, a comparison sort.
    fn reference(q: &[f32], c: &[f32], dim: usize) -> (Vec<Vec<f64>>, Vec<Vec<usize>>) {
        let unitv = |rows: &[f32]| -> Vec<Vec<f64>> {
            rows.chunks(dim)
                .map(|r| {
                    let n = norm(r);
                    r.iter().map(|&x| unit(x, n)).collect()
                })
                .collect()
        };
        let (qu, cu) = (unitv(q), unitv(c));
        let mut scores = vec![];
        let mut order = vec![];
        for a in &qu {
            let row: Vec<f64> = cu
                .iter()
                .map(|b| {
                    let mut acc = 0.0;
                    for j in 0..dim {
                        acc += a[j] * b[j];
                    }
                    acc
                })
                .collect();
            let mut idx: Vec<usize> = (0..row.len()).collect();
            idx.sort_by(|&i, &j| row[j].partial_cmp(&row[i]).unwrap().then(i.cmp(&j)));
            order.push(idx);
            scores.push(row);
        }
        (scores, order)
    }

    fn vectors<'a>(rows: &'a [f32], dim: usize, norms: &'a [f64]) -> Vectors<'a> {
        Vectors::new(rows, dim, norms).unwrap()
    }

    #[test]
    fn every_kernel_matches_the_reference_bitwise() {
        // shapes off every tile boundary, duplicates for exact ties, a zero row
        for &(nq, n, dim) in &[(1, 1, 1), (3, 17, 5), (9, 33, 64), (41, 1100, 19), (8, 16, 512)] {
            let q = random(nq, dim, 1);
            let mut c = random(n, dim, 2);
            for i in (0..n).step_by(3) {
                let src = (i * 7) % n;
                let row: Vec<f32> = c[src * dim..(src + 1) * dim].to_vec();
                c[i * dim..(i + 1) * dim].copy_from_slice(&row);
            }
            if n > 2 {
                c[2 * dim..3 * dim].fill(0.0);
            }
            let (qn, cn) = (norms(&q, dim).unwrap(), norms(&c, dim).unwrap());
            let (qv, cv) = (vectors(&q, dim, &qn), vectors(&c, dim, &cn));
            let (ref_scores, ref_order) = reference(&q, &c, dim);
            for kernel in Kernel::available() {
                for k in [1, 5, n] {
                    let r = rank_with(&qv, &cv, RankRequest { k, targets: None }, kernel, Cancel::NEVER).unwrap();
                    let kk = k.min(n);
                    for i in 0..nq {
                        for j in 0..kk {
                            let c = ref_order[i][j];
                            assert_eq!(r.clips[i * kk + j] as usize, c, "{kernel:?} {nq}x{n}x{dim} k={k}");
                            assert_eq!(r.scores[i * kk + j].to_bits(), ref_scores[i][c].to_bits());
                        }
                    }
                }
            }
            let (qi, ci): (Vec<i64>, Vec<i64>) = (0..50).map(|t| ((t % nq) as i64, ((t * 13) % n) as i64)).unzip();
            let pairs = pair_scores(&qv, &cv, &qi, &ci).unwrap();
            for t in 0..50 {
                assert_eq!(pairs[t].to_bits(), ref_scores[qi[t] as usize][ci[t] as usize].to_bits());
            }
        }
    }

    #[test]
    fn outranking_counts_are_ranks() {
        let (nq, n, dim) = (12, 300, 3);
        // coarse values: many exact ties
        let mut rng = rand_pcg::Pcg64::seed_from_u64(4);
        let q: Vec<f32> = (0..nq * dim).map(|_| rng.gen_range(-2i32..3) as f32).collect();
        let c: Vec<f32> = (0..n * dim).map(|_| rng.gen_range(-2i32..3) as f32).collect();
        let (qn, cn) = (norms(&q, dim).unwrap(), norms(&c, dim).unwrap());
        let (qv, cv) = (vectors(&q, dim, &qn), vectors(&c, dim, &cn));
        let full = rank(&qv, &cv, RankRequest { k: n, targets: None }, Cancel::NEVER).unwrap();
        let tc: Vec<i64> = (0..nq).map(|i| ((i * 37) % n) as i64).collect();
        let ts: Vec<f64> = (0..nq).map(|i| pair_score(&qv, i, &cv, tc[i] as usize)).collect();
        let head = rank(&qv, &cv, RankRequest { k: 10, targets: Some((&ts, &tc)) }, Cancel::NEVER).unwrap();
        for i in 0..nq {
            let pos = full.clips[i * n..(i + 1) * n].iter().position(|&c| c == tc[i]).unwrap();
            assert_eq!(head.outranking[i] as usize, pos);
            assert_eq!(head.clips[i * 10..(i + 1) * 10], full.clips[i * n..i * n + 10]);
        }
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(norms(&[1.0, f32::NAN], 1).unwrap_err().to_string().contains("row 1"));
        assert!(norms(&[1.0, 2.0, 3.0], 2).is_err());
        let (a, an) = ([1.0f32, 0.0], [1.0]);
        let (b, bn) = ([1.0f32], [1.0]);
        let e = rank(&vectors(&a, 2, &an), &vectors(&b, 1, &bn), RankRequest { k: 1, targets: None }, Cancel::NEVER);
        assert!(e.unwrap_err().to_string().contains("dimension"));
        let v = vectors(&a, 2, &an);
        assert!(pair_scores(&v, &v, &[0], &[1]).unwrap_err().to_string().contains("clip row 1"));
    }

    #[test]
    fn set_flag_stops_ranking() {
        let flag = std::sync::atomic::AtomicBool::new(true);
        let (q, c) = (random(4, 8, 1), random(3000, 8, 2));
        let (qn, cn) = (norms(&q, 8).unwrap(), norms(&c, 8).unwrap());
        let r =
            rank(&vectors(&q, 8, &qn), &vectors(&c, 8, &cn), RankRequest { k: 5, targets: None }, Cancel::new(&flag));
        assert_eq!(r, Err(RankError::Cancelled));
    }
}
