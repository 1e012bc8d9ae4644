//! Audio file writers: 16-bit PCM WAV, 32-bit float WAV and 16-bit FLAC.
//!
//! Every writer encodes the whole file into a byte buffer first and then writes it to
//! `<path>.tmp` and renames it into place, so a reader never sees a half-written file and a
//! crash leaves at most a stray `.tmp` sibling.
//!
//! Quantisation to 16 bits is deterministic rounding of `x * 32767` (no dither): the same
//! samples always give the same bytes, and digital silence stays exactly 0.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use flacenc::component::BitRepr;
use flacenc::error::Verify;

/// Output encodings the writers support.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AudioFormat {
    /// 16-bit signed PCM WAV (RIFF, format tag 1).
    Wav16,
    /// 32-bit IEEE float WAV (RIFF, format tag 3, with a `fact` chunk).
    WavF32,
    /// 16-bit FLAC, encoded by the pure-Rust `flacenc` crate.
    Flac16,
}

impl AudioFormat {
    /// The conventional file extension (without the dot).
    pub fn extension(self) -> &'static str {
        match self {
            AudioFormat::Wav16 | AudioFormat::WavF32 => "wav",
            AudioFormat::Flac16 => "flac",
        }
    }

    /// The name accepted by [`FromStr`] (`wav16`, `wav_f32`, `flac16`).
    pub fn name(self) -> &'static str {
        match self {
            AudioFormat::Wav16 => "wav16",
            AudioFormat::WavF32 => "wav_f32",
            AudioFormat::Flac16 => "flac16",
        }
    }
}

impl fmt::Display for AudioFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AudioFormat {
    type Err = WavError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "wav16" => Ok(AudioFormat::Wav16),
            "wav_f32" => Ok(AudioFormat::WavF32),
            "flac16" => Ok(AudioFormat::Flac16),
            other => Err(WavError::UnknownFormat(other.to_string())),
        }
    }
}

/// Why a file could not be encoded or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WavError {
    /// A format name that [`AudioFormat`]'s `FromStr` does not know.
    #[error("unknown audio format {0:?}; expected one of \"wav16\", \"wav_f32\", \"flac16\"")]
    UnknownFormat(String),
    /// More samples than one file of the format can hold.
    #[error("{samples} samples do not fit in one {format} file")]
    TooLong {
        /// Samples to write.
        samples: usize,
        /// The format asked for.
        format: AudioFormat,
    },
    /// A sample rate the format cannot record.
    #[error("sample rate {0} Hz is not supported (expected 1..=655350 Hz)")]
    BadSampleRate(u32),
    /// The FLAC encoder refused the input.
    #[error("FLAC encoding failed: {0}")]
    Flac(String),
    /// Writing or renaming the file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file being written.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// Converts one float sample to 16-bit PCM by deterministic rounding.
///
/// Values outside [-1, 1] are clamped as a last line of defence; the mixer's limiter keeps them
/// inside, so in practice the clamp never engages. NaN gives 0 (the mixer refuses non-finite mixes).
#[inline]
pub fn quantize_i16(x: f32) -> i16 {
    // Rounds half away from zero, exactly like `f32::round`, in float32 and int32 lanes only
    // (it vectorises on baseline x86-64, where `round` is a libm call): truncate, then step away
    // from zero when the fraction (exact: y minus its integer part) is at least one half.
    let x = if x.is_nan() { 0.0 } else { x };
    let y = x.clamp(-1.0, 1.0) * 32767.0;
    // SAFETY: y is finite and |y| <= 32767, well inside i32.
    let t = unsafe { y.to_int_unchecked::<i32>() };
    let frac = y - t as f32;
    (t + i32::from(frac >= 0.5) - i32::from(frac <= -0.5)) as i16
}

fn riff_header(out: &mut Vec<u8>, fmt_tag: u16, bits: u16, sample_rate: u32, data_bytes: u32, extra: &[u8]) {
    let block_align = bits / 8;
    let fmt_len: u32 = if fmt_tag == 1 { 16 } else { 18 };
    let riff_len = 4 + (8 + fmt_len) + extra.len() as u32 + 8 + data_bytes;
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&riff_len.to_le_bytes());
    out.extend_from_slice(b"WAVE");
    out.extend_from_slice(b"fmt ");
    out.extend_from_slice(&fmt_len.to_le_bytes());
    out.extend_from_slice(&fmt_tag.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&sample_rate.to_le_bytes());
    out.extend_from_slice(&(sample_rate * block_align as u32).to_le_bytes());
    out.extend_from_slice(&block_align.to_le_bytes());
    out.extend_from_slice(&bits.to_le_bytes());
    if fmt_len == 18 {
        // Non-PCM formats carry a cbSize field (0: no extension).
        out.extend_from_slice(&0u16.to_le_bytes());
    }
    out.extend_from_slice(extra);
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_bytes.to_le_bytes());
}

fn data_bytes(samples: usize, bytes_per_sample: usize, format: AudioFormat) -> Result<u32, WavError> {
    // Leave room for the header inside the 4 GiB RIFF limit.
    samples
        .checked_mul(bytes_per_sample)
        .filter(|&n| n <= (u32::MAX - 64) as usize)
        .map(|n| n as u32)
        .ok_or(WavError::TooLong { samples, format })
}

/// Encodes mono samples as a 16-bit PCM WAV file into `out` (cleared first).
pub fn encode_wav16(samples: &[f32], sample_rate: u32, out: &mut Vec<u8>) -> Result<(), WavError> {
    encode_wav16_scaled(samples, 1.0, sample_rate, out)
}

/// [`encode_wav16`] of `samples` each multiplied by `gain` (in float32, as the limiter does), without
/// a scaled copy: `x * 1.0 == x` for every float, so a gain of 1 gives `encode_wav16`'s bytes.
fn encode_wav16_scaled(samples: &[f32], gain: f32, sample_rate: u32, out: &mut Vec<u8>) -> Result<(), WavError> {
    check_rate(sample_rate)?;
    let n = data_bytes(samples.len(), 2, AudioFormat::Wav16)?;
    out.clear();
    out.reserve(44 + n as usize);
    riff_header(out, 1, 16, sample_rate, n, &[]);
    quantize_onto(samples, gain, out);
    Ok(())
}

/// Appends `samples` times `gain` to `out` as little-endian 16-bit PCM. Blocks of samples are
/// quantised into an i16 array (a loop the compiler vectorises) and appended with one copy per
/// block — no per-sample 2-byte copies, and no zero-filling of the buffer before it is overwritten.
fn quantize_onto(samples: &[f32], gain: f32, out: &mut Vec<u8>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU has AVX-512 F and BW (checked just above).
            return unsafe { quantize_onto_avx512(samples, gain, out) };
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { quantize_onto_avx2(samples, gain, out) };
        }
    }
    quantize_onto_portable(samples, gain, out);
}

/// [`quantize_onto`]'s loop compiled for AVX2 (8 lanes where baseline x86-64 has SSE2's 4): lane
/// by lane the same float32 and int32 operations (no FMA), so the same bytes (tested).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn quantize_onto_avx2(samples: &[f32], gain: f32, out: &mut Vec<u8>) {
    quantize_onto_portable(samples, gain, out);
}

/// The same loop for AVX-512 (16 lanes; about twice the AVX2 speed on this machine).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn quantize_onto_avx512(samples: &[f32], gain: f32, out: &mut Vec<u8>) {
    quantize_onto_portable(samples, gain, out);
}

#[inline(always)]
fn quantize_onto_portable(samples: &[f32], gain: f32, out: &mut Vec<u8>) {
    const BLOCK: usize = 256;
    let mut q = [0i16; BLOCK];
    for src in samples.chunks(BLOCK) {
        let q = &mut q[..src.len()];
        for (q, &x) in q.iter_mut().zip(src) {
            *q = quantize_i16(x * gain);
        }
        if cfg!(target_endian = "little") {
            // SAFETY: an i16 slice viewed as its bytes (u8 has alignment 1, the length is in
            // bytes); little-endian memory order is the WAV byte order.
            let bytes = unsafe { std::slice::from_raw_parts(q.as_ptr().cast::<u8>(), 2 * q.len()) };
            out.extend_from_slice(bytes);
        } else {
            out.extend(q.iter().flat_map(|v| v.to_le_bytes()));
        }
    }
}

/// Encodes mono samples as a 32-bit float WAV file into `out` (cleared first).
pub fn encode_wav_f32(samples: &[f32], sample_rate: u32, out: &mut Vec<u8>) -> Result<(), WavError> {
    encode_wav_f32_scaled(samples, 1.0, sample_rate, out)
}

fn encode_wav_f32_scaled(samples: &[f32], gain: f32, sample_rate: u32, out: &mut Vec<u8>) -> Result<(), WavError> {
    check_rate(sample_rate)?;
    let n = data_bytes(samples.len(), 4, AudioFormat::WavF32)?;
    out.clear();
    out.reserve(64 + n as usize);
    // A `fact` chunk (frame count) is required by the RIFF spec for non-PCM data.
    let mut fact = Vec::with_capacity(12);
    fact.extend_from_slice(b"fact");
    fact.extend_from_slice(&4u32.to_le_bytes());
    fact.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    riff_header(out, 3, 32, sample_rate, n, &fact);
    let start = out.len();
    out.resize(start + n as usize, 0);
    for (dst, &x) in out[start..].chunks_exact_mut(4).zip(samples) {
        dst.copy_from_slice(&(x * gain).to_le_bytes());
    }
    Ok(())
}

/// Encodes mono samples as 16-bit FLAC into `out` (cleared first), with the same quantisation
/// as [`encode_wav16`], so both decode to identical integers.
pub fn encode_flac16(samples: &[f32], sample_rate: u32, out: &mut Vec<u8>) -> Result<(), WavError> {
    encode_flac16_scaled(samples, 1.0, sample_rate, out)
}

fn encode_flac16_scaled(samples: &[f32], gain: f32, sample_rate: u32, out: &mut Vec<u8>) -> Result<(), WavError> {
    check_rate(sample_rate)?;
    // FLAC stores the total sample count in 36 bits.
    if samples.len() as u64 >= (1u64 << 36) {
        return Err(WavError::TooLong { samples: samples.len(), format: AudioFormat::Flac16 });
    }
    let ints: Vec<i32> = samples.iter().map(|&x| i32::from(quantize_i16(x * gain))).collect();
    let config =
        flacenc::config::Encoder::default().into_verified().map_err(|(_, e)| WavError::Flac(format!("{e:?}")))?;
    let source = flacenc::source::MemSource::from_samples(&ints, 1, 16, sample_rate as usize);
    let stream = flacenc::encode_with_fixed_block_size(&config, source, config.block_size)
        .map_err(|e| WavError::Flac(e.to_string()))?;
    let mut sink = flacenc::bitsink::ByteSink::new();
    stream.write(&mut sink).map_err(|e| WavError::Flac(format!("{e:?}")))?;
    out.clear();
    out.extend_from_slice(sink.as_slice());
    Ok(())
}

/// Encodes `samples` in `format` into `out` (cleared first).
pub fn encode(format: AudioFormat, samples: &[f32], sample_rate: u32, out: &mut Vec<u8>) -> Result<(), WavError> {
    encode_scaled(format, samples, 1.0, sample_rate, out)
}

/// Encodes `samples` each multiplied by `gain` (a float32 product, exactly what scaling the samples
/// first gives) in `format` into `out`: a limiter's gain applied inside the encoder, with no
/// separate pass over the samples. A gain of 1 gives [`encode`]'s bytes.
pub fn encode_scaled(
    format: AudioFormat,
    samples: &[f32],
    gain: f32,
    sample_rate: u32,
    out: &mut Vec<u8>,
) -> Result<(), WavError> {
    match format {
        AudioFormat::Wav16 => encode_wav16_scaled(samples, gain, sample_rate, out),
        AudioFormat::WavF32 => encode_wav_f32_scaled(samples, gain, sample_rate, out),
        AudioFormat::Flac16 => encode_flac16_scaled(samples, gain, sample_rate, out),
    }
}

fn check_rate(sample_rate: u32) -> Result<(), WavError> {
    // FLAC's STREAMINFO holds 20 bits of rate; WAV's byte rate (4 * rate) must fit in u32.
    if sample_rate == 0 || sample_rate > 655_350 {
        return Err(WavError::BadSampleRate(sample_rate));
    }
    Ok(())
}

/// The temporary sibling a file is written to before it is renamed into place.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Writes `bytes` to `<path>.tmp`, then renames it to `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WavError> {
    let tmp = tmp_path(path);
    let io_err = |p: &Path| {
        let p = p.to_path_buf();
        move |source| WavError::Io { path: p, source }
    };
    fs::write(&tmp, bytes).map_err(io_err(&tmp))?;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_err(path)(e)
    })
}

/// Writes `bytes` to `path` atomically (via a temporary and a rename) or straight to its name,
/// for files inside a staged output directory that is itself renamed into place when whole (a
/// second layer of atomicity there costs a directory operation per file and nothing else).
pub fn write_file(path: &Path, bytes: &[u8], atomic: bool) -> Result<(), WavError> {
    if atomic {
        return write_atomic(path, bytes);
    }
    fs::write(path, bytes).map_err(|source| WavError::Io { path: path.to_path_buf(), source })
}

/// Encodes and writes one file (via `<path>.tmp` and a rename).
pub fn write_audio(path: &Path, samples: &[f32], sample_rate: u32, format: AudioFormat) -> Result<(), WavError> {
    let mut buf = Vec::new();
    encode(format, samples, sample_rate, &mut buf)?;
    write_atomic(path, &buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("reasonaudio-wav-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn ramp() -> Vec<f32> {
        vec![0.0, 0.5, -0.5, 1.0, -1.0, 0.25, 1.5, -2.0, 0.0]
    }

    #[test]
    fn wav16_reads_back_with_hound() {
        let d = tmpdir("w16");
        let p = d.join("a.wav");
        write_audio(&p, &ramp(), 16000, AudioFormat::Wav16).unwrap();
        assert!(!tmp_path(&p).exists());
        let mut r = hound::WavReader::open(&p).unwrap();
        let spec = r.spec();
        assert_eq!(spec.channels, 1);
        assert_eq!(spec.sample_rate, 16000);
        assert_eq!(spec.bits_per_sample, 16);
        assert_eq!(spec.sample_format, hound::SampleFormat::Int);
        let got: Vec<i16> = r.samples::<i16>().map(|s| s.unwrap()).collect();
        assert_eq!(got, vec![0, 16384, -16384, 32767, -32767, 8192, 32767, -32767, 0]);
        assert_eq!(fs::metadata(&p).unwrap().len(), 44 + 2 * 9);
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn blocked_wav16_encode_is_the_per_sample_encode() {
        // lengths around the block size, values across the whole range (clamped ones included)
        for n in [0usize, 1, 255, 256, 257, 1000, 160_000] {
            let x: Vec<f32> =
                (0..n).map(|i| ((i as f32 * 0.37).sin() * 1.3) * if i % 7 == 0 { -1.0 } else { 1.0 }).collect();
            let mut buf = Vec::new();
            encode_wav16(&x, 16000, &mut buf).unwrap();
            assert_eq!(buf.len(), 44 + 2 * n);
            let expected: Vec<u8> = x.iter().flat_map(|&v| quantize_i16(v).to_le_bytes()).collect();
            assert_eq!(&buf[44..], &expected[..], "n = {n}");
        }
    }

    #[test]
    fn scaled_encode_is_the_encode_of_the_scaled_samples() {
        let x: Vec<f32> = (0..5000).map(|i| (i as f32 * 0.37).sin() * 1.9).collect();
        for gain in [1.0f32, 0.98 / 1.9, 0.5, 0.123_456_7] {
            let scaled: Vec<f32> = x.iter().map(|&v| v * gain).collect();
            for format in [AudioFormat::Wav16, AudioFormat::WavF32, AudioFormat::Flac16] {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                encode_scaled(format, &x, gain, 16000, &mut a).unwrap();
                encode(format, &scaled, 16000, &mut b).unwrap();
                assert!(a == b, "{format} gain {gain}");
            }
        }
    }

    #[test]
    fn dispatched_quantiser_is_the_portable_one() {
        let x: Vec<f32> = (0..70_001).map(|i| ((i as f32 * 0.0137).sin() * 1.2) + (i % 3) as f32 * 1e-5).collect();
        for gain in [1.0f32, 0.61, 0.98 / 1.2] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            quantize_onto(&x, gain, &mut a);
            quantize_onto_portable(&x, gain, &mut b);
            assert!(a == b, "gain {gain}");
        }
    }

    #[test]
    fn wav_f32_reads_back_with_hound() {
        let d = tmpdir("wf32");
        let p = d.join("a.wav");
        let x = ramp();
        write_audio(&p, &x, 22050, AudioFormat::WavF32).unwrap();
        let mut r = hound::WavReader::open(&p).unwrap();
        assert_eq!(r.spec().sample_format, hound::SampleFormat::Float);
        assert_eq!(r.spec().bits_per_sample, 32);
        assert_eq!(r.spec().sample_rate, 22050);
        let got: Vec<f32> = r.samples::<f32>().map(|s| s.unwrap()).collect();
        assert_eq!(got, x);
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn flac16_has_a_valid_stream_header() {
        let x: Vec<f32> = (0..10000).map(|i| (i as f32 * 0.01).sin() * 0.5).collect();
        let mut buf = Vec::new();
        encode_flac16(&x, 16000, &mut buf).unwrap();
        assert_eq!(&buf[..4], b"fLaC");
        // STREAMINFO: sample rate (20 bits) starts at byte 18 of the file.
        let rate = (u32::from(buf[18]) << 12) | (u32::from(buf[19]) << 4) | (u32::from(buf[20]) >> 4);
        assert_eq!(rate, 16000);
        assert!(buf.len() < 2 * x.len(), "FLAC should compress a smooth sine");
    }

    #[test]
    fn quantize_rounds_halves_away_from_zero_like_f32_round() {
        let mut x = -1.0f32;
        while x <= 1.0 {
            assert_eq!(quantize_i16(x), (x * 32767.0).round() as i16, "{x}");
            x += 1.0 / 65536.0 / 3.0;
        }
        // Exact halves: 0.5 / 32767 and its neighbours.
        for k in [-3i32, -1, 1, 3, 65533] {
            let x = (k as f32 * 0.5) / 32767.0;
            assert_eq!(quantize_i16(x), (x * 32767.0).round() as i16, "{x}");
        }
        // every float32 in [-1, 1] whose scaled value is within 2 of a half, and some beyond
        for k in -65536i32..=65536 {
            let half = k as f32 * 0.5;
            for y in [half, f32::from_bits(half.to_bits() + 1), f32::from_bits(half.to_bits().wrapping_sub(1))] {
                let x = y / 32767.0;
                for x in [x, f32::from_bits(x.to_bits() + 1), f32::from_bits(x.to_bits().wrapping_sub(1))] {
                    if x.is_finite() {
                        assert_eq!(quantize_i16(x), (x.clamp(-1.0, 1.0) * 32767.0).round() as i16, "{x}");
                    }
                }
            }
        }
        assert_eq!(quantize_i16(f32::NAN), 0);
        assert_eq!(quantize_i16(3.0), 32767);
        assert_eq!(quantize_i16(-3.0), -32767);
        assert_eq!(quantize_i16(0.0), 0);
        assert_eq!(quantize_i16(-0.0), 0);
        assert_eq!(quantize_i16(f32::INFINITY), 32767);
    }

    #[test]
    fn format_names_round_trip_and_unknown_is_rejected() {
        for f in [AudioFormat::Wav16, AudioFormat::WavF32, AudioFormat::Flac16] {
            assert_eq!(f.name().parse::<AudioFormat>().unwrap(), f);
        }
        let e = "mp3".parse::<AudioFormat>().unwrap_err().to_string();
        assert!(e.contains("mp3") && e.contains("wav16"), "{e}");
    }

    #[test]
    fn missing_directory_is_an_error_naming_the_path() {
        let p = std::env::temp_dir().join("reasonaudio-no-such-dir-xyz").join("a.wav");
        let e = write_audio(&p, &ramp(), 16000, AudioFormat::Wav16).unwrap_err().to_string();
        assert!(e.contains("reasonaudio-no-such-dir-xyz"), "{e}");
    }
}
