//! The Deepgram simulator's audio: what `/v1/listen` learns from an upload ([`inspect`]) and the
//! bytes `/v1/speak` answers with ([`speak`]).
//!
//! Containers (WAV, FLAC, MP3, OGG/Vorbis) are read by `symphonia`, never by hand; headerless raw
//! audio (`linear16`, `mulaw`, `alaw`) is read by the encoding, rate and channel count the listen
//! query gives, as Deepgram requires.
//!
//! Speech is not speech: [`speak`] writes the UTF-8 text as tone bursts (16-FSK, one tone per
//! 4-bit nibble, tones 500–3200 Hz so 8 kHz mu-law and A-law keep them, in one continuous phase so
//! there are no clicks), after a two-tone chime and a header, and ends with a CRC. [`inspect`]
//! reads them back from the decoded samples with Goertzel filters at the exact positions the
//! writer used, so `inspect(speak(text))` returns the text in every format `speak` produces, and
//! any other audio (no chime, or a CRC that does not match) returns none. The layout, from the
//! first sample of channel 0:
//!
//! | part | length | content |
//! |---|---|---|
//! | chime | 2 × 120 ms | [`MARK_A`] then [`MARK_B`] Hz |
//! | header | 10 symbols of 40 ms | samples per data symbol (4 nibbles), text bytes (6 nibbles) |
//! | data | 2 symbols per byte, each `40 ms / speed` | the text's bytes, then a CRC-16 of header and text |
//! | tail | 30 ms | fade to silence |
//!
//! So a character of ASCII text lasts 80 ms at speed 1 (speech pace), plus 0.67 s of chime,
//! header and tail whatever the speed.
//!
//! Input is hostile: every symphonia call runs under `catch_unwind` (a library panic on crafted
//! bytes becomes [`Undecodable`]), and decoding stops at [`MAX_DURATION_S`] of audio or
//! [`MAX_DECODED_SAMPLES`] samples, refusing the file as too long.

use std::f64::consts::PI;
use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};

use symphonia::core::codecs::audio::AudioDecoderOptions;
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, TrackType};
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;

/// Audio longer than this (two hours) is refused as undecodable.
pub const MAX_DURATION_S: f64 = 2.0 * 3600.0;
/// Decoded samples (all channels) past this are refused: 2 hours of 48 kHz stereo.
pub const MAX_DECODED_SAMPLES: u64 = 2 * 3600 * 48_000 * 2;
/// Channels past this are refused (Deepgram's multichannel is for a handful of speakers).
pub const MAX_CHANNELS: u16 = 32;

/// What the simulator learned from the audio itself.
#[derive(Debug, Clone, PartialEq)]
pub struct AudioInfo {
    /// From the decoded frames (or, for a codec the simulator cannot decode, the container's
    /// header): the file's own.
    pub duration_s: f64,
    pub channels: u16,
    pub sample_rate: u32,
    /// "wav", "flac", "mp3", "ogg" or "raw".
    pub container: &'static str,
    /// The codec inside the container: "linear16", "mulaw", "alaw", "flac", "mp3", "vorbis",
    /// "pcm" (other PCM formats: float, 8, 24 or 32-bit), or "other" (known to the container but
    /// not decodable here: duration then comes from its header).
    pub codec: &'static str,
    /// The text the simulator's own [`speak`] put into this audio, read back from the samples
    /// (None for any other audio).
    pub spoken_text: Option<String>,
}

/// Deepgram's refusal of undecodable audio (400 "failed to process audio: corrupt or unsupported
/// data"); the string says why, for logs and the console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecodable(pub String);

impl std::fmt::Display for Undecodable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Speech as `/v1/speak` answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct Spoken {
    pub bytes: Vec<u8>,
    /// Per api/deepgram.md §3.2: `audio/wav`, `audio/l16;rate=24000`, `audio/mulaw;rate=8000`...
    pub content_type: String,
    pub duration_s: f64,
    pub sample_rate: u32,
    /// "linear16", "mulaw" or "alaw".
    pub encoding: &'static str,
    /// "wav" or "none".
    pub container: &'static str,
}

/// A format the simulator does not produce, or an invalid combination: the string is the
/// user-facing message of the 400 `INVALID_QUERY_PARAMETER`, starting "Unsupported audio format: ".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedFormat(pub String);

impl std::fmt::Display for UnsupportedFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The encoding `speak` uses when the request names none. Deepgram's spec says `mp3`, one docs box
/// says linear16/wav (api/deepgram.md §3.2 and §8); the simulator cannot produce MP3 (no encoder
/// among its crates, and none worth adding for a simulator), so its default is linear16 in a WAV
/// container at 24000 Hz, which the docs box also gives.
pub const DEFAULT_ENCODING: &str = "linear16";

/// Speed is clamped to this range before the audio is made (Deepgram documents a narrower one;
/// the simulator's route checks the real bounds). Beyond it symbols would be too short to read
/// back or the audio needlessly long.
pub const SPEED_RANGE: (f64, f64) = (0.5, 2.0);

// ---------------------------------------------------------------------------------------------
// inspect

/// Reads an upload: a container symphonia knows (WAV, FLAC, MP3, OGG/Vorbis), or, when `encoding`
/// is `linear16`, `mulaw` or `alaw` and the bytes are not a known container, headerless raw audio
/// at `sample_rate` (required then) and `channels` (default 1). Never panics.
pub fn inspect(
    bytes: &[u8],
    encoding: Option<&str>,
    sample_rate: Option<u32>,
    channels: Option<u16>,
) -> Result<AudioInfo, Undecodable> {
    if bytes.is_empty() {
        return Err(Undecodable("empty audio".into()));
    }
    let raw: Option<&'static str> = match encoding {
        Some("linear16") => Some("linear16"),
        Some("mulaw") => Some("mulaw"),
        Some("alaw") => Some("alaw"),
        _ => None,
    };
    match raw {
        Some(enc) if !looks_like_container(bytes) => inspect_raw(bytes, enc, sample_rate, channels),
        _ => match catch_unwind(AssertUnwindSafe(|| inspect_container(bytes))) {
            // symphonia maps a plain PCM WAV's channels to speaker positions and refuses more
            // than it has names for; Deepgram takes up to 32 channels, so such a file is read
            // here as the PCM it plainly is.
            Ok(Err(refused)) => plain_pcm_wav(bytes).map_or(Err(refused), |(data, rate, channels)| {
                inspect_raw(data, "linear16", Some(rate), Some(channels))
                    .map(|info| AudioInfo { container: "wav", ..info })
            }),
            Ok(result) => result,
            Err(_) => Err(Undecodable("the decoder failed on this data".into())),
        },
    }
}

/// A WAV of 16-bit integer PCM (format 1, or WAVE_FORMAT_EXTENSIBLE of PCM): its data chunk,
/// rate and channels; `None` for anything else.
fn plain_pcm_wav(bytes: &[u8]) -> Option<(&[u8], u32, u16)> {
    if !(bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WAVE")) {
        return None;
    }
    let u16_at = |at: usize| bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let mut format = None;
    let mut at = 12;
    while let (Some(id), Some(len)) = (bytes.get(at..at + 4), u32_at(at + 4)) {
        let body = at + 8;
        let len = usize::try_from(len).ok()?;
        match id {
            b"fmt " => {
                let tag = u16_at(body)?;
                let pcm = tag == 1 || (tag == 0xFFFE && u16_at(body + 24) == Some(1));
                let (channels, rate, bits) = (u16_at(body + 2)?, u32_at(body + 4)?, u16_at(body + 14)?);
                format = (pcm && bits == 16).then_some((rate, channels));
            }
            b"data" => {
                let (rate, channels) = format?;
                let data = bytes.get(body..body.checked_add(len)?.min(bytes.len()))?;
                return Some((data, rate, channels));
            }
            _ => {}
        }
        // Chunks are padded to an even length.
        at = body.checked_add(len)?.checked_add(len % 2)?;
    }
    None
}

/// The magic numbers of the containers read by symphonia, so raw audio that merely claims an
/// encoding is still read by its header when it has one.
pub fn looks_like_container(bytes: &[u8]) -> bool {
    let starts = |m: &[u8]| bytes.starts_with(m);
    (starts(b"RIFF") && bytes.get(8..12) == Some(b"WAVE")) || starts(b"fLaC") || starts(b"OggS") || starts(b"ID3")
}

fn inspect_raw(
    bytes: &[u8],
    encoding: &'static str,
    sample_rate: Option<u32>,
    channels: Option<u16>,
) -> Result<AudioInfo, Undecodable> {
    let rate = sample_rate.ok_or_else(|| Undecodable(format!("raw {encoding} audio needs a sample_rate")))?;
    if !(1000..=192_000).contains(&rate) {
        return Err(Undecodable(format!("sample_rate {rate} is out of range")));
    }
    let channels = channels.unwrap_or(1);
    if channels == 0 || channels > MAX_CHANNELS {
        return Err(Undecodable(format!("{channels} channels is out of range")));
    }
    let width = if encoding == "linear16" { 2 } else { 1 };
    let frame = width * usize::from(channels);
    let frames = bytes.len() / frame;
    if frames == 0 {
        return Err(Undecodable("too short to hold one sample".into()));
    }
    let duration_s = frames as f64 / f64::from(rate);
    check_length(duration_s, frames as u64 * u64::from(channels))?;
    let mut demod = Demodulator::new(rate);
    for f in bytes.chunks_exact(frame) {
        if demod.is_finished() {
            break;
        }
        let s = match encoding {
            "linear16" => f32::from(i16::from_le_bytes([f[0], f[1]])) / 32768.0,
            "mulaw" => f32::from(mulaw_decode(f[0])) / 32768.0,
            _ => f32::from(alaw_decode(f[0])) / 32768.0,
        };
        demod.push(s);
    }
    Ok(AudioInfo {
        duration_s,
        channels,
        sample_rate: rate,
        container: "raw",
        codec: encoding,
        spoken_text: demod.text(),
    })
}

fn check_length(duration_s: f64, samples: u64) -> Result<(), Undecodable> {
    if duration_s > MAX_DURATION_S || samples > MAX_DECODED_SAMPLES {
        Err(Undecodable(format!(
            "audio too long: the simulator reads at most {} hours ({} decoded samples)",
            MAX_DURATION_S / 3600.0,
            MAX_DECODED_SAMPLES
        )))
    } else {
        Ok(())
    }
}

fn container_name(format: &str) -> Option<&'static str> {
    let f = format.to_ascii_lowercase();
    if f.contains("wav") || f.contains("riff") {
        Some("wav")
    } else if f.contains("flac") {
        Some("flac")
    } else if f.contains("ogg") {
        Some("ogg")
    } else if f.contains("mp") || f.contains("mpeg") {
        Some("mp3")
    } else {
        None
    }
}

fn codec_name(codec: symphonia::core::codecs::audio::AudioCodecId) -> &'static str {
    use symphonia::core::codecs::audio::well_known::*;
    match codec {
        CODEC_ID_PCM_S16LE => "linear16",
        CODEC_ID_PCM_MULAW => "mulaw",
        CODEC_ID_PCM_ALAW => "alaw",
        CODEC_ID_FLAC => "flac",
        CODEC_ID_MP3 | CODEC_ID_MP2 | CODEC_ID_MP1 => "mp3",
        CODEC_ID_VORBIS => "vorbis",
        c if symphonia::default::get_codecs().get_audio_decoder(c).is_some() => "pcm",
        _ => "other",
    }
}

fn inspect_container(bytes: &[u8]) -> Result<AudioInfo, Undecodable> {
    let bad = |e: SymphoniaError| Undecodable(format!("not audio the simulator can read: {e}"));
    let mss = MediaSourceStream::new(Box::new(Cursor::new(bytes)), Default::default());
    let mut format = symphonia::default::get_probe()
        .probe(&Hint::new(), mss, FormatOptions::default(), MetadataOptions::default())
        .map_err(bad)?;
    let container =
        container_name(format.format_info().short_name).ok_or_else(|| Undecodable("unsupported container".into()))?;
    let track = format.default_track(TrackType::Audio).ok_or_else(|| Undecodable("no audio track".into()))?;
    let params = track
        .codec_params
        .as_ref()
        .and_then(|p| p.audio())
        .ok_or_else(|| Undecodable("no audio codec parameters".into()))?
        .clone();
    let track_id = track.id;
    let header_frames = track.num_frames;
    let header_rate = params.sample_rate;
    let header_channels = params.channels.as_ref().map(|c| c.count());
    let codec = codec_name(params.codec);

    let mut decoder =
        match symphonia::default::get_codecs().make_audio_decoder(&params, &AudioDecoderOptions::default()) {
            Ok(d) => d,
            // A codec the container names but the simulator cannot decode (Opus in Ogg...): the
            // header's frame count, rate and channels when it has them, as Deepgram would read them.
            Err(e) => {
                return match (header_frames, header_rate, header_channels) {
                    (Some(n), Some(rate), Some(ch)) if rate > 0 && n > 0 && ch > 0 => {
                        let channels = u16::try_from(ch).unwrap_or(u16::MAX);
                        if channels > MAX_CHANNELS {
                            return Err(Undecodable(format!("{channels} channels is out of range")));
                        }
                        let duration_s = n as f64 / f64::from(rate);
                        check_length(duration_s, n.saturating_mul(u64::from(channels)))?;
                        Ok(AudioInfo {
                            duration_s,
                            channels,
                            sample_rate: rate,
                            container,
                            codec: "other",
                            spoken_text: None,
                        })
                    }
                    _ => Err(bad(e)),
                };
            }
        };
    if let (Some(n), Some(rate)) = (header_frames, header_rate) {
        if rate > 0 {
            // A header claiming more than the cap is refused before any decoding.
            check_length(n as f64 / f64::from(rate), 0)?;
        }
    }

    let mut frames: u64 = 0;
    let mut rate = header_rate.unwrap_or(0);
    let mut channels = header_channels.unwrap_or(0);
    let mut good_packets: u64 = 0;
    let mut bad_packets: u64 = 0;
    let mut demod: Option<Demodulator> = None;
    let mut plane: Vec<Vec<f32>> = Vec::new();
    loop {
        let packet = match format.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            // A truncated file ends where its data ends; chained streams end at the first.
            Err(SymphoniaError::IoError(_)) | Err(SymphoniaError::ResetRequired) => break,
            // Past good audio, a damaged stretch ends the stream after a few tries.
            Err(_) if good_packets > 0 => {
                bad_packets += 1;
                if bad_packets > 16 {
                    break;
                }
                continue;
            }
            Err(e) => return Err(bad(e)),
        };
        if packet.track_id != track_id {
            continue;
        }
        let buf = match decoder.decode(&packet) {
            Ok(buf) => buf,
            Err(SymphoniaError::DecodeError(_)) | Err(SymphoniaError::IoError(_)) => {
                bad_packets += 1;
                if bad_packets > 64 && bad_packets > good_packets {
                    return Err(Undecodable("corrupt audio data".into()));
                }
                continue;
            }
            Err(e) => return Err(bad(e)),
        };
        good_packets += 1;
        let spec = buf.spec();
        rate = spec.rate();
        channels = spec.channels().count();
        if rate == 0 || channels == 0 {
            return Err(Undecodable("audio without a sample rate or channels".into()));
        }
        if channels > usize::from(MAX_CHANNELS) {
            return Err(Undecodable(format!("{channels} channels is out of range")));
        }
        frames += buf.frames() as u64;
        check_length(frames as f64 / f64::from(rate), frames.saturating_mul(channels as u64))?;
        let d = demod.get_or_insert_with(|| Demodulator::new(rate));
        if !d.is_finished() && buf.frames() > 0 {
            buf.copy_to_vecs_planar::<f32>(&mut plane);
            if let Some(first) = plane.first() {
                for &s in first {
                    d.push(s);
                }
            }
        }
    }
    if good_packets == 0 || frames == 0 || rate == 0 {
        return Err(Undecodable("no decodable audio frames".into()));
    }
    if bad_packets > good_packets {
        return Err(Undecodable("corrupt audio data".into()));
    }
    Ok(AudioInfo {
        duration_s: frames as f64 / f64::from(rate),
        channels: u16::try_from(channels).unwrap_or(u16::MAX),
        sample_rate: rate,
        container,
        codec,
        spoken_text: demod.and_then(|d| d.text()),
    })
}

// ---------------------------------------------------------------------------------------------
// speak

/// Makes `/v1/speak`'s audio: `encoding` `linear16`, `mulaw` or `alaw` (the route maps a missing
/// one to [`DEFAULT_ENCODING`]), `container` `wav` (the default) or `none`, `sample_rate` per
/// api/deepgram.md §3.2 (linear16 8000/16000/24000/32000/48000, default 24000; mu-law and A-law
/// 8000 (default) or 16000); `speed` a multiplier of the pace, clamped to [`SPEED_RANGE`].
/// Any other encoding (mp3, opus, flac, aac) or combination is [`UnsupportedFormat`].
pub fn speak(
    text: &str,
    encoding: &str,
    container: Option<&str>,
    sample_rate: Option<u32>,
    speed: f64,
) -> Result<Spoken, UnsupportedFormat> {
    let unsupported = |m: String| UnsupportedFormat(format!("Unsupported audio format: {m}"));
    let (encoding, rates, default_rate): (&'static str, &[u32], u32) = match encoding {
        "linear16" => ("linear16", &[8000, 16000, 24000, 32000, 48000], 24000),
        "mulaw" => ("mulaw", &[8000, 16000], 8000),
        "alaw" => ("alaw", &[8000, 16000], 8000),
        "mp3" | "opus" | "flac" | "aac" => {
            return Err(unsupported(format!(
                "encoding={encoding} is not produced by the simulator (it produces linear16, \
                 mulaw and alaw)"
            )))
        }
        other => {
            return Err(unsupported(format!(
                "encoding={other} (expected one of linear16, mulaw, alaw, mp3, opus, flac, aac)"
            )))
        }
    };
    let container: &'static str = match container {
        None | Some("wav") => "wav",
        Some("none") => "none",
        Some(other) => {
            return Err(unsupported(format!("container={other} is not valid for encoding={encoding} (wav or none)")))
        }
    };
    let rate = sample_rate.unwrap_or(default_rate);
    if !rates.contains(&rate) {
        let list: Vec<String> = rates.iter().map(u32::to_string).collect();
        return Err(unsupported(format!(
            "sample_rate={rate} is not valid for encoding={encoding} ({})",
            list.join(", ")
        )));
    }
    let speed = if speed.is_finite() { speed.clamp(SPEED_RANGE.0, SPEED_RANGE.1) } else { 1.0 };

    let tones = modulate(text.as_bytes(), rate, speed);
    let frames = tones.len();
    let duration_s = frames as f64 / f64::from(rate);
    let to_i16 = |s: f32| (s * 32767.0).round().clamp(-32768.0, 32767.0) as i16;
    let (tag, bits) = match encoding {
        "linear16" => (1, 16),
        "mulaw" => (7, 8),
        _ => (6, 8),
    };
    // The answer is written once, into a buffer of its final size (its header first when it is
    // a WAV): a long text at 48 kHz is tens of megabytes, and copies of it were hundreds.
    let data_len = frames * usize::from(bits / 8);
    let mut data = if container == "wav" { wav_header(tag, bits, rate, frames, data_len) } else { Vec::new() };
    data.reserve_exact(data_len + 1);
    match encoding {
        "linear16" => tones.write(|s| data.extend_from_slice(&to_i16(s).to_le_bytes())),
        "mulaw" => tones.write(|s| data.push(mulaw_encode(to_i16(s)))),
        _ => tones.write(|s| data.push(alaw_encode(to_i16(s)))),
    }
    let (bytes, content_type) = if container == "wav" {
        // RIFF chunks have an even length.
        if data_len % 2 == 1 {
            data.push(0);
        }
        (data, "audio/wav".to_string())
    } else {
        let mime = match encoding {
            "linear16" => "l16",
            e => e,
        };
        (data, format!("audio/{mime};rate={rate}"))
    };
    Ok(Spoken { bytes, content_type, duration_s, sample_rate: rate, encoding, container })
}

/// The header of a mono WAV file of `data_len` bytes of samples: `fmt ` of 16 bytes for PCM, 18
/// (cbSize 0) plus a `fact` chunk for the companded formats, as the RIFF spec asks of non-PCM
/// data. The samples (and a pad byte when their length is odd) follow it.
fn wav_header(tag: u16, bits: u16, rate: u32, frames: usize, data_len: usize) -> Vec<u8> {
    let pcm = tag == 1;
    let block_align = bits / 8;
    let fmt_len: u32 = if pcm { 16 } else { 18 };
    let fact_len: u32 = if pcm { 0 } else { 12 };
    let pad = u32::from(data_len % 2 == 1);
    let data_len = u32::try_from(data_len).unwrap_or(u32::MAX);
    let riff_len = (4 + (8 + fmt_len) + fact_len + 8).saturating_add(data_len).saturating_add(pad);
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&riff_len.to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&fmt_len.to_le_bytes());
    out.extend_from_slice(&tag.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * u32::from(block_align)).to_le_bytes());
    out.extend_from_slice(&block_align.to_le_bytes());
    out.extend_from_slice(&bits.to_le_bytes());
    if !pcm {
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(b"fact");
        out.extend_from_slice(&4u32.to_le_bytes());
        out.extend_from_slice(&u32::try_from(frames).unwrap_or(u32::MAX).to_le_bytes());
    }
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    out
}

// ---------------------------------------------------------------------------------------------
// The tone code: writer and reader

/// The chime's first tone (Hz).
pub const MARK_A: f64 = 660.0;
/// The chime's second tone (Hz).
pub const MARK_B: f64 = 990.0;
const MARK_S: f64 = 0.120;
/// A symbol at speed 1 (and every header symbol).
const SYMBOL_S: f64 = 0.040;
const HEADER_SYMBOLS: usize = 10;
const TAIL_S: f64 = 0.030;
const FADE_S: f64 = 0.008;
const AMPLITUDE: f64 = 0.35;
/// Texts past this many bytes are not read back (the route caps text far below).
const MAX_TEXT_BYTES: usize = 1 << 20;

/// Tone of nibble `k`: 500 Hz + 180 Hz × k, up to 3200 Hz.
fn tone(k: usize) -> f64 {
    500.0 + 180.0 * k as f64
}

fn samples_for(seconds: f64, rate: u32) -> usize {
    (seconds * f64::from(rate)).round() as usize
}

fn crc16(bytes: impl IntoIterator<Item = u8>) -> u16 {
    // CRC-16/CCITT-FALSE.
    let mut crc: u16 = 0xFFFF;
    for b in bytes {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

fn nibbles(value: u32, count: usize) -> impl Iterator<Item = usize> {
    (0..count).rev().map(move |i| ((value >> (4 * i)) & 0xF) as usize)
}

/// The tones carrying `text`, planned: each tone's frequency and length in samples. Its samples
/// are made as they are written ([`Tones::write`]), so a long text's answer is the only copy
/// of its audio in memory (one made as floats first was six times its size).
struct Tones {
    plan: Vec<(f64, usize)>,
    rate: u32,
    /// The tail's length: the last tone fading out.
    tail: usize,
    /// The fade-in's length, at the start.
    fade: usize,
}

fn modulate(text: &[u8], rate: u32, speed: f64) -> Tones {
    let mark = samples_for(MARK_S, rate);
    let header_sym = samples_for(SYMBOL_S, rate);
    let data_sym = samples_for(SYMBOL_S / speed, rate);
    let len = u32::try_from(text.len().min(MAX_TEXT_BYTES)).unwrap_or(0);
    let text = &text[..len as usize];
    let sps = u32::try_from(data_sym).unwrap_or(0) & 0xFFFF;
    let crc = crc16(sps.to_be_bytes().into_iter().chain(len.to_be_bytes()).chain(text.iter().copied()));
    let mut plan: Vec<(f64, usize)> = vec![(MARK_A, mark), (MARK_B, mark)];
    plan.extend(nibbles(sps, 4).map(|n| (tone(n), header_sym)));
    plan.extend(nibbles(len, 6).map(|n| (tone(n), header_sym)));
    for &b in text.iter().chain(crc.to_be_bytes().iter()) {
        plan.extend(nibbles(u32::from(b), 2).map(|n| (tone(n), data_sym)));
    }
    Tones { plan, rate, tail: samples_for(TAIL_S, rate), fade: samples_for(FADE_S, rate).max(1) }
}

impl Tones {
    /// How many samples `write` gives.
    fn len(&self) -> usize {
        self.plan.iter().map(|p| p.1).sum::<usize>() + self.tail
    }

    /// Gives each sample (mono, -1..1), in order.
    fn write(&self, mut sample: impl FnMut(f32)) {
        let step = 1.0 / f64::from(self.rate);
        let mut phase = 0.0f64;
        let mut at = 0usize;
        let mut emit = |s: f64| {
            let g = if at < self.fade { at as f64 / self.fade as f64 } else { 1.0 };
            sample((s * g * AMPLITUDE) as f32);
            at += 1;
        };
        for &(freq, n) in &self.plan {
            for _ in 0..n {
                emit(phase.sin());
                phase = (phase + 2.0 * PI * freq * step) % (2.0 * PI);
            }
        }
        for i in 0..self.tail {
            let g = 1.0 - (i as f64 + 1.0) / self.tail as f64;
            emit(phase.sin() * g);
            phase = (phase + 2.0 * PI * tone(0) * step) % (2.0 * PI);
        }
    }
}

/// Goertzel amplitude of `freq` in `x` (1.0 for a full-scale sine at that frequency).
fn goertzel(x: &[f32], freq: f64, rate: u32) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    let w = 2.0 * PI * freq / f64::from(rate);
    let coeff = 2.0 * w.cos();
    let (mut s1, mut s2) = (0.0f64, 0.0f64);
    for &v in x {
        let s0 = f64::from(v) + coeff * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    let power = (s1 * s1 + s2 * s2 - coeff * s1 * s2).max(0.0);
    2.0 * power.sqrt() / x.len() as f64
}

/// The middle 80% of a symbol: the analysis window, away from the neighbours' tones.
fn middle(x: &[f32]) -> &[f32] {
    let edge = x.len() / 10;
    &x[edge..x.len() - edge]
}

/// The nibble whose tone is strongest in the symbol.
fn strongest(x: &[f32], rate: u32) -> usize {
    let x = middle(x);
    let mut best = (0, -1.0);
    for k in 0..16 {
        let a = goertzel(x, tone(k), rate);
        if a > best.1 {
            best = (k, a);
        }
    }
    best.0
}

/// Whether the window is dominated by `freq`: most of its energy at that one tone.
fn dominated_by(x: &[f32], freq: f64, rate: u32) -> bool {
    let x = middle(x);
    if x.is_empty() {
        return false;
    }
    let rms = (x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() / x.len() as f64).sqrt();
    let a = goertzel(x, freq, rate);
    rms > 0.01 && a > 0.8 * rms * std::f64::consts::SQRT_2
}

/// Reads the tone code from channel 0 as samples arrive: only the current symbol is buffered.
/// A live stream reads each text byte as it completes ([`Demodulator::push`]) and places it in
/// time by [`Demodulator::layout`]; a file reads the checked text at the end.
pub struct Demodulator {
    rate: u32,
    buf: Vec<f32>,
    state: DemodState,
}

enum DemodState {
    /// Waiting for the chime and header, whose lengths are fixed by the sample rate.
    Header,
    Data {
        sps: usize,
        len: usize,
        crc_head: [u8; 8],
        nibbles: Vec<u8>,
    },
    Done(String),
    Failed,
}

/// Where a spoken text lies in its audio, in samples from the first: byte `k` of the text is
/// the two symbols from `data_start + 2k·symbol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub data_start: usize,
    pub symbol: usize,
    /// The text's length in bytes.
    pub len: usize,
}

impl Demodulator {
    pub fn new(rate: u32) -> Self {
        Demodulator { rate, buf: Vec::new(), state: DemodState::Header }
    }

    pub fn is_finished(&self) -> bool {
        matches!(self.state, DemodState::Done(_) | DemodState::Failed)
    }

    /// Whether the audio has shown it is not the simulator's speech (no chime, a header out of
    /// range, or a CRC that does not match).
    pub fn failed(&self) -> bool {
        matches!(self.state, DemodState::Failed)
    }

    /// The text's place, once its header is read.
    pub fn layout(&self) -> Option<Layout> {
        match &self.state {
            DemodState::Data { sps, len, .. } => {
                Some(Layout { data_start: self.header_len(), symbol: *sps, len: *len })
            }
            _ => None,
        }
    }

    fn header_len(&self) -> usize {
        2 * samples_for(MARK_S, self.rate) + HEADER_SYMBOLS * samples_for(SYMBOL_S, self.rate)
    }

    /// Reads one sample; gives the text's byte it completes, if it completes one (its CRC is
    /// checked only at the end, so a live reader may see the bytes of audio that fails it).
    pub fn push(&mut self, s: f32) -> Option<u8> {
        let mut completed = None;
        match &mut self.state {
            DemodState::Header => {
                self.buf.push(s);
                if self.buf.len() >= self.header_len() {
                    self.state = self.read_header();
                    self.buf.clear();
                }
            }
            DemodState::Data { sps, len, crc_head, nibbles } => {
                self.buf.push(s);
                if self.buf.len() >= *sps {
                    nibbles.push(strongest(&self.buf, self.rate) as u8);
                    self.buf.clear();
                    if nibbles.len() % 2 == 0 && nibbles.len() / 2 <= *len {
                        let pair = &nibbles[nibbles.len() - 2..];
                        completed = Some(pair[0] << 4 | pair[1]);
                    }
                    if nibbles.len() == 2 * (*len + 2) {
                        let bytes: Vec<u8> = nibbles.chunks(2).map(|p| p[0] << 4 | p[1]).collect();
                        let (text, crc) = bytes.split_at(*len);
                        let want = crc16(crc_head.iter().copied().chain(text.iter().copied()));
                        self.state = match (crc == want.to_be_bytes(), String::from_utf8(text.to_vec())) {
                            (true, Ok(t)) => DemodState::Done(t),
                            _ => DemodState::Failed,
                        };
                    }
                }
            }
            DemodState::Done(_) | DemodState::Failed => {}
        }
        completed
    }

    fn read_header(&self) -> DemodState {
        let rate = self.rate;
        let mark = samples_for(MARK_S, rate);
        let sym = samples_for(SYMBOL_S, rate);
        let x = &self.buf;
        if mark == 0 || sym == 0 {
            return DemodState::Failed;
        }
        if !dominated_by(&x[..mark], MARK_A, rate) || !dominated_by(&x[mark..2 * mark], MARK_B, rate) {
            return DemodState::Failed;
        }
        let mut fields = [0u32; 2];
        for i in 0..HEADER_SYMBOLS {
            let at = 2 * mark + i * sym;
            let n = strongest(&x[at..at + sym], rate) as u32;
            let f = usize::from(i >= 4);
            fields[f] = fields[f] << 4 | n;
        }
        let (sps, len) = (fields[0], fields[1]);
        let expected = |speed: f64| samples_for(SYMBOL_S / speed, rate);
        let sps_ok =
            (expected(SPEED_RANGE.1).saturating_sub(1)..=expected(SPEED_RANGE.0) + 1).contains(&(sps as usize));
        if !sps_ok || len as usize > MAX_TEXT_BYTES || sps < 10 {
            return DemodState::Failed;
        }
        let mut crc_head = [0u8; 8];
        crc_head[..4].copy_from_slice(&sps.to_be_bytes());
        crc_head[4..].copy_from_slice(&len.to_be_bytes());
        DemodState::Data {
            sps: sps as usize,
            len: len as usize,
            crc_head,
            nibbles: Vec::with_capacity(2 * (len as usize + 2)),
        }
    }

    fn text(&self) -> Option<String> {
        match &self.state {
            DemodState::Done(t) => Some(t.clone()),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// G.711 (after the public-domain Sun g711.c)

fn mulaw_encode(pcm: i16) -> u8 {
    const SEG_END: [i32; 8] = [0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF];
    let mut v = i32::from(pcm) >> 2;
    let mask: u8 = if v < 0 {
        v = -v;
        0x7F
    } else {
        0xFF
    };
    v = v.min(8159) + 0x21;
    match SEG_END.iter().position(|&e| v <= e) {
        None => 0x7F ^ mask,
        Some(seg) => (((seg as i32) << 4 | ((v >> (seg + 1)) & 0xF)) as u8) ^ mask,
    }
}

pub fn mulaw_decode(u: u8) -> i16 {
    let u = !u;
    let t = ((i32::from(u & 0x0F) << 3) + 0x84) << ((u & 0x70) >> 4);
    (if u & 0x80 != 0 { 0x84 - t } else { t - 0x84 }) as i16
}

fn alaw_encode(pcm: i16) -> u8 {
    const SEG_END: [i32; 8] = [0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF];
    let mut v = i32::from(pcm) >> 3;
    let mask: u8 = if v >= 0 {
        0xD5
    } else {
        v = -v - 1;
        0x55
    };
    match SEG_END.iter().position(|&e| v <= e) {
        None => 0x7F ^ mask,
        Some(seg) => {
            let m = if seg < 2 { (v >> 1) & 0xF } else { (v >> seg) & 0xF };
            (((seg as i32) << 4 | m) as u8) ^ mask
        }
    }
}

pub fn alaw_decode(a: u8) -> i16 {
    let a = a ^ 0x55;
    let mut t = i32::from(a & 0x0F) << 4;
    let seg = (a & 0x70) >> 4;
    match seg {
        0 => t += 8,
        1 => t += 0x108,
        _ => {
            t += 0x108;
            t <<= seg - 1;
        }
    }
    (if a & 0x80 != 0 { t } else { -t }) as i16
}

#[cfg(test)]
#[path = "audio_tests.rs"]
mod tests;
