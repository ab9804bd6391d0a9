//! What the console reads of an audio file by itself, without decoding it: whether it is audio
//! Deepgram takes (its first bytes), and a WAV's or raw audio's rate, channels, sample size and
//! duration. Shared by the transcription forms' checks, the view of saved speech and the pace of
//! a live stream.

use std::path::Path;

/// Why the file at `path` is no audio Deepgram would take, if it is not: empty, or none of the
/// containers it reads (raw audio is fine once its `encoding` is given). A file that cannot be
/// read is left to the form's own check.
pub fn audio_problem(path: &Path, raw_encoding: bool) -> Option<String> {
    use std::io::Read as _;
    let mut head = [0u8; 16];
    let mut file = std::fs::File::open(path).ok()?;
    let read = file.read(&mut head).ok()?;
    if read == 0 {
        return Some("the file is empty: there is no audio to transcribe".to_owned());
    }
    if raw_encoding || looks_like_audio(&head[..read]) {
        return None;
    }
    Some("no audio Deepgram reads (WAV, FLAC, MP3, OGG, M4A, WebM…); raw audio: set encoding".to_owned())
}

/// Whether these first bytes start an audio container Deepgram reads.
pub fn looks_like_audio(head: &[u8]) -> bool {
    let starts = |magic: &[u8]| head.starts_with(magic);
    starts(b"RIFF")
        || starts(b"fLaC")
        || starts(b"OggS")
        || starts(b"ID3")
        || starts(b"FORM")
        || starts(b".snd")
        || starts(b"#!AMR")
        || starts(&[0x1a, 0x45, 0xdf, 0xa3])
        || (head.len() >= 2 && head[0] == 0xff && head[1] & 0xe0 == 0xe0)
        || head.get(4..8) == Some(b"ftyp")
}

/// What is known of audio bytes: its format, and where it says so, its rate, channels, sample
/// size and duration.
#[derive(Clone, Debug, PartialEq)]
pub struct AudioFacts {
    pub format: String,
    pub sample_rate: Option<u32>,
    pub channels: Option<u16>,
    pub bits: Option<u16>,
    pub duration: Option<f64>,
}

/// Reads a WAV header (`fmt ` and `data` chunks), or for bare audio the `rate` its content type
/// names; compressed formats are named by their content type only.
pub fn audio_facts(content_type: Option<&str>, bytes: &[u8]) -> AudioFacts {
    if let Some(facts) = wav_facts(bytes) {
        return facts;
    }
    let content_type = content_type.unwrap_or("").to_ascii_lowercase();
    let (kind, params) = content_type.split_once(';').unwrap_or((&content_type, ""));
    let rate = params.split(';').find_map(|p| p.trim().strip_prefix("rate=")?.parse::<u32>().ok());
    let (format, bytes_per_sample) = match kind.trim() {
        "audio/l16" => ("linear16 (raw PCM, 16-bit)", Some(2)),
        "audio/mulaw" | "audio/basic" => ("mulaw (raw, 8-bit)", Some(1)),
        "audio/alaw" => ("alaw (raw, 8-bit)", Some(1)),
        "audio/mpeg" => ("MP3", None),
        "audio/ogg" => ("Ogg Opus", None),
        "audio/flac" => ("FLAC", None),
        "audio/aac" => ("AAC", None),
        "" => ("unknown", None),
        other => {
            return AudioFacts {
                format: other.to_owned(),
                sample_rate: rate,
                channels: None,
                bits: None,
                duration: None,
            }
        }
    };
    let duration = match (rate, bytes_per_sample) {
        (Some(rate), Some(size)) if rate > 0 => Some(bytes.len() as f64 / (f64::from(rate) * f64::from(size))),
        _ => None,
    };
    AudioFacts {
        format: format.to_owned(),
        sample_rate: rate,
        channels: bytes_per_sample.map(|_| 1),
        bits: bytes_per_sample.map(|s| s * 8),
        duration,
    }
}

fn wav_facts(bytes: &[u8]) -> Option<AudioFacts> {
    if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        return None;
    }
    let u16_at = |at: usize| bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let mut at = 12;
    let (mut format, mut channels, mut rate, mut bits, mut data) = (None, None, None, None, None);
    while at + 8 <= bytes.len() {
        let id = &bytes[at..at + 4];
        let size = u32_at(at + 4)? as usize;
        let body = at + 8;
        if id == b"fmt " {
            format = u16_at(body);
            channels = u16_at(body + 2);
            rate = u32_at(body + 4);
            bits = u16_at(body + 14);
        } else if id == b"data" {
            // A streamed WAV may say 0 or u32::MAX: the bytes that follow are the data.
            let rest = bytes.len() - body;
            data = Some(if size == 0 || size > rest { rest } else { size });
            break;
        }
        at = body + size + (size & 1);
    }
    let name = match format {
        Some(1) => "WAV, linear16 PCM",
        Some(3) => "WAV, 32-bit float",
        Some(6) => "WAV, alaw",
        Some(7) => "WAV, mulaw",
        Some(0xfffe) => "WAV (extensible)",
        _ => "WAV",
    };
    let bytes_per_second = match (rate, channels, bits) {
        (Some(r), Some(c), Some(b)) if r > 0 && c > 0 && b > 0 => {
            Some(f64::from(r) * f64::from(c) * f64::from(b) / 8.0)
        }
        _ => None,
    };
    Some(AudioFacts {
        format: name.to_owned(),
        sample_rate: rate,
        channels,
        bits,
        duration: data.zip(bytes_per_second).map(|(d, per)| d as f64 / per),
    })
}
