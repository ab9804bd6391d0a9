//! Tests of the live listener: audio read however it is cut into frames, the simulator's speech
//! read back word by word in time, sound events and endpoints, and hostile streams bounded.

use super::*;
use crate::sandbox::deepgram::test_wav::tone_wav;

fn settings(interim: bool) -> Settings {
    Settings { interim_results: interim, endpointing_ms: Some(10), utterance_end_ms: None, vad_events: false }
}

fn container() -> Format {
    Format { encoding: None, sample_rate: None, channels: 1 }
}

/// Feeds `audio` in frames of `chunk` bytes, then ends the stream; everything said, and the
/// audio time (s) each message was said at.
fn stream(audio: &[u8], chunk: usize, format: Format, settings: Settings) -> (Listener, Vec<(f64, Said)>) {
    let mut listener = Listener::new(format, settings);
    let mut said = Vec::new();
    for frame in audio.chunks(chunk) {
        listener.audio(frame).expect("readable audio");
        let at = listener.duration();
        said.extend(listener.take().into_iter().map(|s| (at, s)));
    }
    listener.close().expect("a readable end");
    let at = listener.duration();
    said.extend(listener.take().into_iter().map(|s| (at, s)));
    (listener, said)
}

fn final_words(said: &[(f64, Said)]) -> Vec<Word> {
    said.iter()
        .filter_map(|(_, s)| match s {
            Said::Results { is_final: true, words, .. } => Some(words.iter().map(|h| h.word.clone())),
            _ => None,
        })
        .flatten()
        .collect()
}

fn spoken(text: &str, rate: u32) -> Vec<u8> {
    audio::speak(text, "linear16", Some("wav"), Some(rate), 1.0).expect("speech").bytes
}

#[test]
fn speech_reads_back_the_same_whatever_the_frames() {
    let text = "testing one two three, over and out.";
    let wav = spoken(text, 24000);
    let (_, whole) = stream(&wav, wav.len(), container(), settings(false));
    let words: Vec<String> = final_words(&whole).into_iter().map(|w| w.text).collect();
    assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
    // A byte at a time (the header split everywhere) and odd frames reading the same.
    for chunk in [1, 7, 333, 4801] {
        let (listener, said) = stream(&wav, chunk, container(), settings(false));
        assert_eq!(final_words(&said), final_words(&whole), "in frames of {chunk} bytes");
        assert!((listener.duration() - (wav.len() - 44) as f64 / 48000.0).abs() < 1e-9);
        assert!(!listener.synthetic());
    }
}

#[test]
fn each_word_is_said_once_its_audio_has_arrived_and_not_a_second_later() {
    let text = "alpha bravo charlie delta echo foxtrot golf hotel india juliet";
    let wav = spoken(text, 16000);
    // Ten milliseconds a frame.
    let (_, said) = stream(&wav, 320, container(), settings(true));
    let mut first_seen: Vec<(String, f64, f64)> = Vec::new();
    for (at, s) in &said {
        if let Said::Results { words, .. } = s {
            for h in words {
                if !first_seen.iter().any(|(t, start, _)| *t == h.word.text && (*start - h.word.start).abs() < 1e-9) {
                    first_seen.push((h.word.text.clone(), h.word.start, *at - h.word.end));
                }
            }
        }
    }
    assert_eq!(first_seen.iter().map(|(t, ..)| t.as_str()).collect::<Vec<_>>().join(" "), text);
    for (word, _, late) in &first_seen {
        assert!(*late >= -1e-9, "{word} said {late} s before its audio ended");
        assert!(*late <= INTERIM_EVERY_S + 0.011, "{word} said {late} s after its audio ended");
    }
    // Interim results come every second of audio; the finals cover the whole stream, in order.
    let interims = said.iter().filter(|(_, s)| matches!(s, Said::Results { is_final: false, .. })).count();
    let seconds = (wav.len() - 44) as f64 / 32000.0;
    assert!(interims as f64 >= seconds - MAX_SEGMENT_S, "{interims} interim results over {seconds} s");
    let mut at = 0.0;
    for (_, s) in &said {
        if let Said::Results { is_final: true, start, duration, .. } = s {
            assert!((start - at).abs() < 0.002, "a final from {start}, the last ended at {at}");
            assert!(*duration <= MAX_SEGMENT_S + 0.011);
            at = start + duration;
        }
    }
    assert!((at - seconds).abs() < 0.002);
}

#[test]
fn wav_of_every_pcm_width_and_float_is_read_as_sound() {
    // 8-bit unsigned, 24-bit, 32-bit and float WAVs of a tone: sound, and synthetic words.
    let tone = tone_wav(1.0, 8000, 1);
    let samples: Vec<i16> = tone[44..].chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect();
    let wav = |tag: u16, bits: u16, data: Vec<u8>| {
        let mut out = b"RIFF".to_vec();
        out.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
        out.extend_from_slice(b"WAVEfmt ");
        out.extend_from_slice(&16u32.to_le_bytes());
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&8000u32.to_le_bytes());
        out.extend_from_slice(&(8000 * u32::from(bits / 8)).to_le_bytes());
        out.extend_from_slice(&(bits / 8).to_le_bytes());
        out.extend_from_slice(&bits.to_le_bytes());
        // A chunk of odd length before the data: its pad byte is skipped.
        out.extend_from_slice(b"LIST");
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(b"abc\0");
        out.extend_from_slice(b"data");
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&data);
        out
    };
    let cases = [
        (1, 8, samples.iter().map(|&s| ((s >> 8) + 128) as u8).collect::<Vec<u8>>()),
        (1, 24, samples.iter().flat_map(|&s| (i32::from(s) << 8).to_le_bytes()[..3].to_vec()).collect()),
        (1, 32, samples.iter().flat_map(|&s| (i32::from(s) << 16).to_le_bytes()).collect()),
        (3, 32, samples.iter().flat_map(|&s| (f32::from(s) / 32768.0).to_le_bytes()).collect()),
    ];
    for (tag, bits, data) in cases {
        let (listener, said) = stream(&wav(tag, bits, data), 100, container(), settings(false));
        assert!((listener.duration() - 1.0).abs() < 1e-9, "tag {tag} {bits} bits");
        assert_eq!(final_words(&said).len(), 2, "two 0.4 s words of sound, tag {tag} {bits} bits");
        assert!(listener.synthetic());
    }
}

#[test]
fn silence_says_nothing_and_endpointing_false_never_ends_an_utterance() {
    let mut pcm = vec![0u8; 32000];
    pcm.extend_from_slice(&tone_wav(1.0, 16000, 1)[44..]);
    pcm.extend_from_slice(&[0u8; 32000]);
    let raw = Format { encoding: Some("linear16".into()), sample_rate: Some(16000), channels: 1 };
    let ends = |settings: Settings| {
        let (_, said) = stream(&pcm, 1600, raw.clone(), settings);
        said.iter().filter(|(_, s)| matches!(s, Said::Results { speech_final: true, .. })).count()
    };
    assert_eq!(ends(settings(false)), 1);
    assert_eq!(ends(Settings { endpointing_ms: None, ..settings(false) }), 0);
    let (_, said) = stream(&vec![0u8; 320_000], 3200, raw, Settings { vad_events: true, ..settings(true) });
    assert!(final_words(&said).is_empty());
    assert!(said.iter().all(|(_, s)| matches!(s, Said::Results { is_final: true, .. })), "no interim over silence");
}

#[test]
fn finalize_covers_what_came_and_the_next_final_goes_on_from_it() {
    let raw = Format { encoding: Some("linear16".into()), sample_rate: Some(16000), channels: 1 };
    let mut listener = Listener::new(raw, settings(false));
    listener.finalize().unwrap();
    let said = listener.take();
    assert!(matches!(said[..], [Said::Results { from_finalize: true, duration, .. }] if duration == 0.0));
    listener.audio(&vec![0u8; 8000]).unwrap();
    listener.finalize().unwrap();
    let said = listener.take();
    assert!(
        matches!(said[..], [Said::Results { from_finalize: true, start, duration, .. }] if start == 0.0 && duration == 0.25)
    );
}

#[test]
fn hostile_streams_end_with_data_0000_and_hold_bounded_memory() {
    // Headerless bytes with no encoding named.
    let mut listener = Listener::new(container(), settings(false));
    assert!(listener.audio(b"definitely not audio at all").is_err());
    // A WAV header that never reaches its data.
    let mut listener = Listener::new(container(), settings(false));
    let mut junk = b"RIFF\xff\xff\xff\xffWAVE".to_vec();
    let mut result = Ok(());
    for _ in 0..100 {
        junk.extend_from_slice(b"junk");
        junk.extend_from_slice(&1000u32.to_le_bytes());
        junk.extend_from_slice(&[0u8; 1000]);
        result = listener.audio(&junk[junk.len() - 1008..]);
        if result.is_err() {
            break;
        }
    }
    assert!(result.is_err(), "a 64 KiB header is refused");
    assert!(listener.pending.len() <= MAX_HEADER + 1008);
    // A chunk size that overflows.
    let mut listener = Listener::new(container(), settings(false));
    let mut wav = b"RIFF\0\0\0\0WAVEjunk\xff\xff\xff\xff".to_vec();
    wav.extend_from_slice(&[0u8; 64]);
    assert!(listener.audio(&wav).is_ok(), "waits for a chunk it cannot see the end of");
    // A compressed stream past its limit, and one that is not what it says at its end.
    let mut listener = Listener::new(container(), settings(false));
    listener.audio(b"OggS\0\x02\0\0\0\0\0\0\0\0").unwrap();
    let block = vec![0u8; 1 << 20];
    let mut refused = false;
    for _ in 0..=MAX_BUFFERED >> 20 {
        if listener.audio(&block).is_err() {
            refused = true;
            break;
        }
    }
    assert!(refused);
    assert!(listener.pending.len() <= MAX_BUFFERED);
    let mut listener = Listener::new(container(), settings(false));
    listener.audio(b"OggS\0\x02\0\0\0\0\0\0\0\0garbage").unwrap();
    assert!(listener.close().is_err());
    // Out-of-range formats.
    let odd = Format { encoding: Some("linear16".into()), sample_rate: Some(5), channels: 1 };
    assert!(Listener::new(odd, settings(false)).audio(&[0u8; 64]).is_err());
    // Frames of garbage as raw audio are just sound: read, never refused, nothing kept but a
    // partial frame and the words of the segment.
    let raw = Format { encoding: Some("linear16".into()), sample_rate: Some(8000), channels: 3 };
    let mut listener = Listener::new(raw, settings(true));
    let mut state = 7u64;
    for _ in 0..200 {
        let frame: Vec<u8> = (0..4001)
            .map(|_| {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (state >> 33) as u8
            })
            .collect();
        listener.audio(&frame).unwrap();
        let _ = listener.take();
        assert!(listener.pending.len() < 6);
        assert!(listener.words.len() < 16);
    }
}

#[test]
fn finalize_mid_word_leaves_the_word_whole_to_the_next_result() {
    let wav = spoken("hello from the opsdeck sandbox.", 16000);
    let mut listener = Listener::new(container(), settings(false));
    let mut windows = Vec::new();
    // Finalize at every 0.13 s: most of them fall inside a word.
    for frame in wav.chunks(4160) {
        listener.audio(frame).unwrap();
        listener.finalize().unwrap();
        windows.extend(listener.take());
    }
    listener.close().unwrap();
    windows.extend(listener.take());
    let mut words = Vec::new();
    let mut at = 0.0;
    for said in &windows {
        let Said::Results { start, duration, words: heard, .. } = said else { continue };
        assert!((start - at).abs() < 0.002, "results tile the audio");
        at = start + duration;
        for h in heard {
            assert!(h.word.start >= start - 1e-6 && h.word.end <= at + 1e-6, "{:?} outside {start}+{duration}", h.word);
            words.push(h.word.text.clone());
        }
    }
    assert_eq!(words.join(" "), "hello from the opsdeck sandbox.");
}
