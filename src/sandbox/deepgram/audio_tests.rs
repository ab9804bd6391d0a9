//! Tests of the simulator's audio: containers read by symphonia, raw audio, the speak round trip,
//! and hostile bytes.

use super::*;
use crate::sandbox::deepgram::test_wav::tone_wav;

#[test]
fn a_hand_written_wav_reports_its_own_duration_channels_and_rate() {
    let wav = tone_wav(3.5, 16000, 2);
    let info = inspect(&wav, None, None, None).expect("a valid WAV");
    assert!((info.duration_s - 3.5).abs() < 1e-9, "{}", info.duration_s);
    assert_eq!(info.channels, 2);
    assert_eq!(info.sample_rate, 16000);
    assert_eq!(info.container, "wav");
    assert_eq!(info.codec, "linear16");
    assert_eq!(info.spoken_text, None);
    // The query's raw parameters do not override a real header.
    let info = inspect(&wav, Some("linear16"), Some(8000), Some(1)).expect("a valid WAV");
    assert_eq!((info.channels, info.sample_rate), (2, 16000));
}

#[test]
fn speak_round_trips_through_every_format_it_produces() {
    let texts = ["Hello, welcome to Deepgram!", "x", "", "Ünïcödé — 日本語 🎧 and digits 0123456789"];
    let formats: &[(&str, &[u32])] =
        &[("linear16", &[8000, 16000, 24000, 32000, 48000]), ("mulaw", &[8000, 16000]), ("alaw", &[8000, 16000])];
    for text in texts {
        for &(encoding, rates) in formats {
            for &rate in rates {
                for container in ["wav", "none"] {
                    for speed in [1.0, 0.7, 1.5] {
                        let spoken = speak(text, encoding, Some(container), Some(rate), speed)
                            .expect("a format the simulator produces");
                        let info = if container == "wav" {
                            inspect(&spoken.bytes, None, None, None)
                        } else {
                            inspect(&spoken.bytes, Some(encoding), Some(rate), Some(1))
                        }
                        .expect("its own audio decodes");
                        let what = format!("{encoding}/{container}/{rate}/{speed}: {text}");
                        assert_eq!(info.spoken_text.as_deref(), Some(text), "{what}");
                        assert_eq!(info.sample_rate, rate, "{what}");
                        assert_eq!(info.channels, 1, "{what}");
                        assert!((info.duration_s - spoken.duration_s).abs() < 1e-6, "{what}");
                        if container == "wav" {
                            assert_eq!(info.codec, encoding, "{what}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn speak_writes_correct_riff_sizes_and_content_types() {
    let s = speak("hi", "linear16", None, None, 1.0).expect("linear16");
    assert_eq!(s.content_type, "audio/wav");
    assert_eq!((s.sample_rate, s.container, s.encoding), (24000, "wav", "linear16"));
    let b = &s.bytes;
    assert_eq!(&b[..4], b"RIFF");
    assert_eq!(u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize, b.len() - 8);
    assert_eq!(u32::from_le_bytes([b[40], b[41], b[42], b[43]]) as usize, b.len() - 44);
    let m = speak("hi", "mulaw", Some("wav"), None, 1.0).expect("mulaw");
    assert_eq!(u16::from_le_bytes([m.bytes[20], m.bytes[21]]), 7);
    assert_eq!(m.sample_rate, 8000);
    let a = speak("hi", "alaw", Some("wav"), Some(16000), 1.0).expect("alaw");
    assert_eq!(u16::from_le_bytes([a.bytes[20], a.bytes[21]]), 6);
    let raw = speak("hi", "linear16", Some("none"), Some(16000), 1.0).expect("raw");
    assert_eq!(raw.content_type, "audio/l16;rate=16000");
    assert_eq!(raw.bytes.len() % 2, 0);
    assert_eq!(speak("hi", "mulaw", Some("none"), None, 1.0).expect("raw").content_type, "audio/mulaw;rate=8000");
    assert_eq!(speak("hi", "alaw", Some("none"), None, 1.0).expect("raw").content_type, "audio/alaw;rate=8000");
}

#[test]
fn speech_length_follows_the_text_and_the_speed() {
    let d = |text: &str, speed: f64| speak(text, "linear16", None, Some(16000), speed).expect("linear16").duration_s;
    let short = d(&"a".repeat(10), 1.0);
    let long = d(&"a".repeat(110), 1.0);
    // 100 more characters at 80 ms each.
    assert!(((long - short) - 8.0).abs() < 0.01, "{short} {long}");
    let fast = d(&"a".repeat(110), 2.0) - d(&"a".repeat(10), 2.0);
    assert!((fast - 4.0).abs() < 0.01, "{fast}");
    let slow = d(&"a".repeat(110), 0.5) - d(&"a".repeat(10), 0.5);
    assert!((slow - 16.0).abs() < 0.01, "{slow}");
    // Speech pace: a 27-character sentence is about 2.8 s.
    let hello = d("Hello, welcome to Deepgram!", 1.0);
    assert!((2.0..3.5).contains(&hello), "{hello}");
}

#[test]
fn speak_refuses_what_it_does_not_produce_with_the_user_facing_message() {
    for (enc, container, rate) in [
        ("mp3", None, None),
        ("opus", Some("ogg"), None),
        ("flac", None, None),
        ("aac", None, None),
        ("pcm", None, None),
        ("linear16", Some("ogg"), None),
        ("linear16", None, Some(22050)),
        ("mulaw", None, Some(24000)),
        ("alaw", Some("mp4"), None),
    ] {
        let err = speak("hi", enc, container, rate, 1.0).expect_err("unsupported");
        assert!(err.0.starts_with("Unsupported audio format: "), "{}", err.0);
    }
}

#[test]
fn raw_audio_is_read_by_the_query_parameters() {
    // 2 s of 8 kHz stereo mu-law silence.
    let info = inspect(&vec![0xFF; 32000], Some("mulaw"), Some(8000), Some(2)).expect("raw");
    assert_eq!((info.container, info.channels, info.sample_rate), ("raw", 2, 8000));
    assert!((info.duration_s - 2.0).abs() < 1e-9);
    assert_eq!(info.spoken_text, None);
    // 1.5 s of 16 kHz mono linear16.
    let info = inspect(&vec![0; 48000], Some("linear16"), Some(16000), None).expect("raw");
    assert!((info.duration_s - 1.5).abs() < 1e-9);
    // Raw without a rate, or with none of the raw encodings, is refused.
    assert!(inspect(&[0; 100], Some("alaw"), None, None).is_err());
    assert!(inspect(&[0x55; 100], None, None, None).is_err());
}

#[test]
fn g711_tables_round_trip_within_their_step() {
    for v in (-32768i32..=32767).step_by(7) {
        let v = v as i16;
        let m = i32::from(mulaw_decode(mulaw_encode(v)));
        let a = i32::from(alaw_decode(alaw_encode(v)));
        let tol = (i32::from(v).abs() / 16).max(8) + 8;
        assert!((m - i32::from(v)).abs() <= tol.max(140) || v.abs() > 32000, "mulaw {v} {m}");
        assert!((a - i32::from(v)).abs() <= tol.max(16) || v.abs() > 32000, "alaw {v} {a}");
    }
    // Code words decode to values that encode back to themselves.
    for b in 0..=255u8 {
        assert_eq!(mulaw_encode(mulaw_decode(b)), b | if b == 0x7F { 0x80 } else { 0 }, "{b}");
        assert_eq!(alaw_encode(alaw_decode(b)), b, "{b}");
    }
}

/// A small seeded generator (xorshift) for hostile inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn garbage_empty_and_truncated_audio_is_undecodable_never_a_panic() {
    assert!(inspect(&[], None, None, None).is_err());
    assert!(inspect(&[], Some("linear16"), Some(16000), None).is_err());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..300 {
        let n = (rng.next() % 4096) as usize;
        let mut b = rng.bytes(n);
        // Some of them start like a real container.
        let magic: &[u8] = match i % 6 {
            0 => b"RIFF\x24\x00\x00\x00WAVEfmt ",
            1 => b"fLaC",
            2 => b"OggS\x00\x02",
            3 => b"ID3\x03\x00",
            4 => b"\xFF\xFB\x90\x64",
            _ => b"",
        };
        b.splice(0..0, magic.iter().copied());
        let _ = inspect(&b, None, None, None);
        let _ = inspect(&b, Some("linear16"), Some(16000), Some(1));
    }
    // Pure random bytes (no magic) are refused.
    for _ in 0..50 {
        let n = 64 + (rng.next() % 2048) as usize;
        let b = rng.bytes(n);
        assert!(inspect(&b, None, None, None).is_err());
    }
    // Every truncation of a real WAV and of speak's output: an answer or a refusal.
    let wav = tone_wav(0.05, 8000, 1);
    for cut in 0..wav.len() {
        if let Ok(info) = inspect(&wav[..cut], None, None, None) {
            assert!(info.duration_s <= 0.05 + 1e-9);
        }
    }
    let spoken = speak("truncate me", "mulaw", Some("wav"), None, 1.0).expect("mulaw");
    // The last 30 ms (240 samples at 8 kHz) are the fade after the code.
    let code_end = spoken.bytes.len() - 240;
    for cut in (0..code_end).step_by(97) {
        if let Ok(info) = inspect(&spoken.bytes[..cut], None, None, None) {
            assert_eq!(info.spoken_text, None, "a cut file carries no whole text");
        }
    }
    // Corrupted bytes inside a valid file never yield a wrong text.
    let spoken = speak("corrupt", "linear16", Some("wav"), Some(8000), 1.0).expect("linear16");
    for _ in 0..40 {
        let mut b = spoken.bytes.clone();
        for _ in 0..200 {
            let at = 44 + (rng.next() as usize) % (b.len() - 44);
            b[at] = rng.next() as u8;
        }
        if let Ok(info) = inspect(&b, None, None, None) {
            assert!(matches!(info.spoken_text.as_deref(), None | Some("corrupt")));
        }
    }
}

#[test]
fn mp3_and_ogg_garbage_is_undecodable() {
    let mut rng = Rng(42);
    for _ in 0..30 {
        let mut ogg = b"OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
        ogg.extend(rng.bytes(500));
        assert!(inspect(&ogg, None, None, None).is_err());
        let mut mp3 = b"ID3\x03\x00\x00\x00\x00\x00\x0a".to_vec();
        mp3.extend(rng.bytes(500));
        assert!(inspect(&mp3, None, None, None).is_err());
    }
}

#[test]
fn audio_past_two_hours_is_refused_and_headers_do_not_lie_about_length() {
    // A WAV whose header claims 3 hours of 8 kHz mono (its data is 1 s): the decoded frames
    // count, so it is 1 s long.
    let mut wav = tone_wav(1.0, 8000, 1);
    let claimed = (3 * 3600 * 8000 * 2u32).to_le_bytes();
    wav[40..44].copy_from_slice(&claimed);
    if let Ok(info) = inspect(&wav, None, None, None) {
        assert!(info.duration_s <= 1.0 + 1e-9, "{}", info.duration_s);
    }
    // Raw audio past the cap: 2 h 1 s at 1 kHz mulaw is 7.2 MB.
    let long = vec![0xFFu8; 1000 * (7200 + 1)];
    let err = inspect(&long, Some("mulaw"), Some(1000), None).expect_err("too long");
    assert!(err.0.contains("too long"), "{}", err.0);
}

/// A FLAC file written by hand with VERBATIM subframes (16-bit, fixed 4096-sample blocks), per
/// the FLAC format spec: STREAMINFO, then frames with their CRC-8 header and CRC-16 footer.
fn flac_file(samples: &[Vec<i16>], rate: u32) -> Vec<u8> {
    fn crc8(b: &[u8]) -> u8 {
        b.iter().fold(0u8, |mut c, &x| {
            c ^= x;
            for _ in 0..8 {
                c = if c & 0x80 != 0 { (c << 1) ^ 0x07 } else { c << 1 };
            }
            c
        })
    }
    fn crc16(b: &[u8]) -> u16 {
        b.iter().fold(0u16, |mut c, &x| {
            c ^= u16::from(x) << 8;
            for _ in 0..8 {
                c = if c & 0x8000 != 0 { (c << 1) ^ 0x8005 } else { c << 1 };
            }
            c
        })
    }
    const BLOCK: usize = 4096;
    let channels = samples.len();
    let total = samples[0].len();
    let mut out = b"fLaC".to_vec();
    out.extend_from_slice(&[0x80, 0, 0, 34]);
    out.extend_from_slice(&(BLOCK as u16).to_be_bytes());
    out.extend_from_slice(&(BLOCK as u16).to_be_bytes());
    out.extend_from_slice(&[0; 6]);
    // rate (20 bits) | channels-1 (3) | bps-1 (5) | total samples (36).
    let packed: u64 = (u64::from(rate) << 44) | (((channels - 1) as u64) << 41) | (15u64 << 36) | total as u64;
    out.extend_from_slice(&packed.to_be_bytes());
    out.extend_from_slice(&[0; 16]);
    for (n, start) in (0..total).step_by(BLOCK).enumerate() {
        assert!(n < 128, "one-byte frame numbers only");
        let len = BLOCK.min(total - start);
        let mut f = vec![0xFF, 0xF8];
        // Block size from the end of the header (16 bits), rate from STREAMINFO.
        f.push(0x70);
        // Channels independent, 16 bits.
        f.push((((channels - 1) as u8) << 4) | 0x08);
        f.push(n as u8);
        f.extend_from_slice(&((len - 1) as u16).to_be_bytes());
        let c = crc8(&f);
        f.push(c);
        for ch in samples {
            f.push(0x02);
            for &s in &ch[start..start + len] {
                f.extend_from_slice(&s.to_be_bytes());
            }
        }
        let c = crc16(&f);
        f.extend_from_slice(&c.to_be_bytes());
        out.extend_from_slice(&f);
    }
    out
}

#[test]
fn a_hand_written_flac_reports_its_own_duration_and_carries_spoken_text() {
    let rate = 16000;
    let n = (1.25 * f64::from(rate)) as usize;
    let left: Vec<i16> = (0..n).map(|i| ((i as f64 * 0.1).sin() * 9000.0) as i16).collect();
    let right: Vec<i16> = (0..n).map(|i| ((i as f64 * 0.05).sin() * 9000.0) as i16).collect();
    let info = inspect(&flac_file(&[left, right], rate), None, None, None).expect("a valid FLAC");
    assert_eq!((info.container, info.codec), ("flac", "flac"));
    assert!((info.duration_s - 1.25).abs() < 1e-9, "{}", info.duration_s);
    assert_eq!((info.channels, info.sample_rate), (2, 16000));
    assert_eq!(info.spoken_text, None);

    // speak's samples re-packed into FLAC still read back as their text.
    let raw = speak("flac too", "linear16", Some("none"), Some(rate), 1.0).expect("raw");
    let samples: Vec<i16> = raw.bytes.chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect();
    let info = inspect(&flac_file(&[samples], rate), None, None, None).expect("FLAC");
    assert_eq!(info.spoken_text.as_deref(), Some("flac too"));
    assert!((info.duration_s - raw.duration_s).abs() < 1e-9);
}

/// Deepgram documents up to 32 channels: a plain PCM WAV (no channel mask) of 32 is read, of 33
/// refused as out of range.
#[test]
fn a_plain_pcm_wav_of_up_to_32_channels_is_read() {
    for channels in [3, 8, 32] {
        let info = inspect(&tone_wav(0.5, 8000, channels), None, None, None)
            .unwrap_or_else(|e| panic!("{channels} channels: {}", e.0));
        assert_eq!((info.channels, info.sample_rate), (channels, 8000));
        assert!((info.duration_s - 0.5).abs() < 1e-9, "{}", info.duration_s);
    }
    let refused = inspect(&tone_wav(0.5, 8000, 33), None, None, None).expect_err("33 channels");
    assert!(refused.0.contains("33 channels is out of range"), "{}", refused.0);
}
