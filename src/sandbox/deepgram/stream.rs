//! Live transcription's listener: the audio of one `/v1/listen` WebSocket, read as it arrives,
//! and what Deepgram says about it, in audio time. No I/O here: `live.rs` feeds it the frames
//! and sends what it says.
//!
//! - **Audio.** A WAV stream (its header first) or headerless `linear16`, `linear32`, `mulaw`
//!   or `alaw` at the handshake's `sample_rate` and `channels` is decoded sample by sample.
//!   Other containers (FLAC, Ogg, MP3, WebM) are kept whole (at most [`MAX_BUFFERED`] bytes) and
//!   read by `audio::inspect` when the client asks for a result (`Finalize`, `CloseStream`).
//! - **Sound.** Channel 0 in 10 ms windows: a window louder than [`SOUND_RMS`] is sound, the
//!   rest silence. Silence after sound for `endpointing` ms is an endpoint (a final result with
//!   `speech_final`); sound after silence is `SpeechStarted` (with `vad_events`).
//! - **Words.** Speech the simulator's `/v1/speak` made is read back as it arrives (the tone code
//!   of `audio.rs`): each word is known once the audio of its last letter has arrived, and placed
//!   where its letters are. Other audio gets a synthetic word for each 0.4 s of sound, chosen by
//!   the hash of that sound, so the same audio always reads the same.
//! - **Results.** An interim result each second of audio (with `interim_results`) and a final one
//!   at an endpoint, after [`MAX_SEGMENT_S`] of audio (cut after the last whole word), on
//!   `Finalize` (`from_finalize`) and at the end. Finals tile the audio: each starts where the
//!   last ended.

use sha2::{Digest, Sha256};

use super::audio::{self, AudioInfo, Demodulator, Layout};
use super::listen::{self, Word};

/// An interim result after this much audio since the last result.
const INTERIM_EVERY_S: f64 = 1.0;
/// A final result at most this much audio after the last one.
pub const MAX_SEGMENT_S: f64 = 3.0;
/// The window of the sound detector.
const WINDOW_S: f64 = 0.010;
/// A window whose RMS is above this (about -40 dBFS) is sound.
const SOUND_RMS: f64 = 0.01;
/// A synthetic word for each this much sound.
const SYNTHETIC_WORD_S: f64 = 0.4;
/// A WAV header longer than this (before its `data` chunk) is not audio.
const MAX_HEADER: usize = 64 * 1024;
/// Compressed audio kept for reading at once: past it the stream ends.
pub const MAX_BUFFERED: usize = 16 << 20;

/// What the handshake says about the audio.
#[derive(Clone, Debug, Default)]
pub struct Format {
    /// `encoding`, when given: headerless audio of that kind.
    pub encoding: Option<String>,
    pub sample_rate: Option<u32>,
    pub channels: u16,
}

/// The handshake's options that shape the results.
#[derive(Clone, Copy, Debug, Default)]
pub struct Settings {
    pub interim_results: bool,
    /// Silence, in ms, that ends an utterance; `None` is `endpointing=false`.
    pub endpointing_ms: Option<u32>,
    pub utterance_end_ms: Option<u32>,
    pub vad_events: bool,
}

/// A word of a result, with whether it opens a sentence (it is capitalised when punctuated).
#[derive(Clone, Debug, PartialEq)]
pub struct Heard {
    pub word: Word,
    pub sentence_start: bool,
}

/// What the listener says, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Said {
    Results {
        start: f64,
        duration: f64,
        is_final: bool,
        speech_final: bool,
        from_finalize: bool,
        words: Vec<Heard>,
        /// The words are the simulator's invention, not read from the audio.
        synthetic: bool,
    },
    SpeechStarted {
        timestamp: f64,
    },
    UtteranceEnd {
        last_word_end: f64,
    },
}

/// Why the stream cannot go on: Deepgram's close (`1008 DATA-0000` for audio it cannot read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable(pub String);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sample {
    U8,
    I16,
    I24,
    I32,
    F32,
    Mulaw,
    Alaw,
}

impl Sample {
    fn width(self) -> usize {
        match self {
            Sample::U8 | Sample::Mulaw | Sample::Alaw => 1,
            Sample::I16 => 2,
            Sample::I24 => 3,
            Sample::I32 | Sample::F32 => 4,
        }
    }

    /// The sample at the start of `b`, in -1..1.
    fn read(self, b: &[u8]) -> f32 {
        match self {
            Sample::U8 => (f32::from(b[0]) - 128.0) / 128.0,
            Sample::I16 => f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0,
            Sample::I24 => (i32::from_le_bytes([0, b[0], b[1], b[2]]) >> 8) as f32 / 8_388_608.0,
            Sample::I32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32 / 2_147_483_648.0,
            Sample::F32 => {
                let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                if v.is_finite() {
                    v.clamp(-1.0, 1.0)
                } else {
                    0.0
                }
            }
            Sample::Mulaw => f32::from(audio::mulaw_decode(b[0])) / 32768.0,
            Sample::Alaw => f32::from(audio::alaw_decode(b[0])) / 32768.0,
        }
    }
}

enum Decoding {
    /// Too few bytes yet to tell a container from headerless audio.
    Sniffing,
    /// A WAV stream whose header is still arriving.
    WavHeader,
    Pcm {
        sample: Sample,
        channels: u16,
    },
    /// A compressed container, read whole when a result is asked for.
    Buffered,
}

/// Where the words come from, once the first 0.64 s of audio have said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Undecided,
    Spoken,
    Synthetic,
}

/// One stream's listener.
pub struct Listener {
    format: Format,
    settings: Settings,
    decoding: Decoding,
    /// Bytes not yet read: a header arriving, part of a frame, or a whole compressed stream.
    pending: Vec<u8>,
    sha: Sha256,
    bytes: u64,
    rate: u32,
    channels: u16,
    /// Frames read; audio time is `frames / rate`.
    frames: u64,
    // The sound detector, over channel 0.
    window_len: usize,
    window_at: usize,
    window_energy: f64,
    window_hash: u64,
    sound: bool,
    silence_since: f64,
    /// Sound since the last endpoint: the next silence may end an utterance.
    speech_open: bool,
    // Words.
    demod: Option<Demodulator>,
    source: Source,
    /// Where the spoken text lies, once its header is read.
    layout: Option<Layout>,
    word_bytes: Vec<u8>,
    word_first: usize,
    text_bytes: usize,
    /// A synthetic word's sound so far: its start, length and hash.
    slot: Option<(f64, f64, u64)>,
    /// Synthetic words heard before the source was decided.
    undecided: Vec<(f64, f64, u64)>,
    speaker: usize,
    next_sentence_start: bool,
    words: Vec<Heard>,
    segment_start: f64,
    last_result_at: f64,
    last_word_end: Option<f64>,
    utterance_told: bool,
    said: Vec<Said>,
}

impl Listener {
    pub fn new(format: Format, settings: Settings) -> Listener {
        Listener {
            format,
            settings,
            decoding: Decoding::Sniffing,
            pending: Vec::new(),
            sha: Sha256::new(),
            bytes: 0,
            rate: 0,
            channels: 0,
            frames: 0,
            window_len: 0,
            window_at: 0,
            window_energy: 0.0,
            window_hash: FNV_OFFSET,
            sound: false,
            silence_since: 0.0,
            speech_open: false,
            demod: None,
            source: Source::Undecided,
            layout: None,
            word_bytes: Vec::new(),
            word_first: 0,
            text_bytes: 0,
            slot: None,
            undecided: Vec::new(),
            speaker: 0,
            next_sentence_start: true,
            words: Vec::new(),
            segment_start: 0.0,
            last_result_at: 0.0,
            last_word_end: None,
            utterance_told: false,
            said: Vec::new(),
        }
    }

    /// Seconds of audio read so far.
    pub fn duration(&self) -> f64 {
        if self.rate == 0 {
            0.0
        } else {
            self.frames as f64 / f64::from(self.rate)
        }
    }

    /// The audio's channels, once known (the handshake's until then).
    pub fn channels(&self) -> u16 {
        if self.channels == 0 {
            self.format.channels.max(1)
        } else {
            self.channels
        }
    }

    /// Bytes of audio received.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The SHA-256 of every byte received, in hex.
    pub fn sha256(&self) -> String {
        format!("{:x}", self.sha.clone().finalize())
    }

    /// Whether the words are synthetic: the audio is not the simulator's speech.
    pub fn synthetic(&self) -> bool {
        self.source != Source::Spoken
    }

    /// Reads a binary frame of audio; what it makes the listener say is in [`Listener::take`].
    pub fn audio(&mut self, chunk: &[u8]) -> Result<(), Unreadable> {
        self.sha.update(chunk);
        self.bytes = self.bytes.saturating_add(chunk.len() as u64);
        if matches!(self.decoding, Decoding::Buffered) {
            return self.buffer(chunk);
        }
        self.pending.extend_from_slice(chunk);
        loop {
            match self.decoding {
                Decoding::Sniffing => {
                    if !self.sniff()? {
                        return Ok(());
                    }
                }
                Decoding::WavHeader => {
                    if !self.wav_header()? {
                        return Ok(());
                    }
                }
                Decoding::Pcm { sample, channels } => {
                    self.read_pcm(sample, channels);
                    return Ok(());
                }
                Decoding::Buffered => {
                    if self.pending.len() > MAX_BUFFERED {
                        return Err(too_much());
                    }
                    return Ok(());
                }
            }
        }
    }

    fn buffer(&mut self, chunk: &[u8]) -> Result<(), Unreadable> {
        if self.pending.len().saturating_add(chunk.len()) > MAX_BUFFERED {
            return Err(too_much());
        }
        self.pending.extend_from_slice(chunk);
        Ok(())
    }

    /// Decides what the audio is, once enough of it has come; false until then.
    fn sniff(&mut self) -> Result<bool, Unreadable> {
        let b = &self.pending;
        if b.len() < 12 {
            return Ok(false);
        }
        if b.starts_with(b"RIFF") && &b[8..12] == b"WAVE" {
            self.decoding = Decoding::WavHeader;
            return Ok(true);
        }
        let compressed = audio::looks_like_container(b)
            || b.starts_with(&[0x1A, 0x45, 0xDF, 0xA3])
            || (b[0] == 0xFF && b[1] & 0xE0 == 0xE0);
        let raw = match self.format.encoding.as_deref() {
            Some("linear16") => Some(Sample::I16),
            Some("linear32") => Some(Sample::I32),
            Some("mulaw") => Some(Sample::Mulaw),
            Some("alaw") => Some(Sample::Alaw),
            _ => None,
        };
        match (raw, compressed) {
            (Some(sample), false) => {
                let rate = self.format.sample_rate.unwrap_or(0);
                self.start_pcm(sample, rate, self.format.channels.max(1))?;
            }
            (None, false) if self.format.encoding.is_none() => {
                return Err(Unreadable(
                    "the audio is not a container the simulator knows (WAV, FLAC, Ogg, MP3, WebM) and no encoding was given"
                        .into(),
                ))
            }
            _ => self.decoding = Decoding::Buffered,
        }
        Ok(true)
    }

    /// Reads the WAV header once its `data` chunk begins; false until then.
    fn wav_header(&mut self) -> Result<bool, Unreadable> {
        let b = &self.pending;
        let mut at = 12usize;
        let mut format: Option<(u16, u16, u32, u16)> = None;
        while let Some(head) = b.get(at..at + 8) {
            let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
            let body = at + 8;
            if &head[..4] == b"data" {
                let Some((tag, channels, rate, bits)) = format else {
                    return Err(Unreadable("a WAV stream whose data comes before its format".into()));
                };
                let sample = match (tag, bits) {
                    (1, 8) => Some(Sample::U8),
                    (1, 16) => Some(Sample::I16),
                    (1, 24) => Some(Sample::I24),
                    (1, 32) => Some(Sample::I32),
                    (3, 32) => Some(Sample::F32),
                    (6, 8) => Some(Sample::Alaw),
                    (7, 8) => Some(Sample::Mulaw),
                    _ => None,
                };
                match sample {
                    Some(sample) => {
                        self.pending.drain(..body);
                        self.start_pcm(sample, rate, channels)?;
                    }
                    // Other codecs in WAV (ADPCM...) are read whole by the file reader.
                    None => self.decoding = Decoding::Buffered,
                }
                return Ok(true);
            }
            let Some(end) = body.checked_add(size).and_then(|e| e.checked_add(size & 1)) else {
                return Err(Unreadable("a WAV chunk of impossible size".into()));
            };
            if &head[..4] == b"fmt " {
                let Some(f) = b.get(body..body + size.min(40)) else { break };
                if f.len() < 16 {
                    return Err(Unreadable("a WAV format chunk too short".into()));
                }
                let mut tag = u16::from_le_bytes([f[0], f[1]]);
                if tag == 0xFFFE && f.len() >= 26 {
                    tag = u16::from_le_bytes([f[24], f[25]]);
                }
                let channels = u16::from_le_bytes([f[2], f[3]]);
                let rate = u32::from_le_bytes([f[4], f[5], f[6], f[7]]);
                let bits = u16::from_le_bytes([f[14], f[15]]);
                format = Some((tag, channels, rate, bits));
            }
            at = end;
        }
        if self.pending.len() > MAX_HEADER {
            return Err(Unreadable("a WAV header of more than 64 KiB".into()));
        }
        Ok(false)
    }

    fn start_pcm(&mut self, sample: Sample, rate: u32, channels: u16) -> Result<(), Unreadable> {
        if !(1000..=192_000).contains(&rate) {
            return Err(Unreadable(format!("sample rate {rate} is out of range")));
        }
        if channels == 0 || channels > audio::MAX_CHANNELS {
            return Err(Unreadable(format!("{channels} channels is out of range")));
        }
        self.rate = rate;
        self.channels = channels;
        self.window_len = ((f64::from(rate) * WINDOW_S).round() as usize).max(1);
        self.demod = Some(Demodulator::new(rate));
        self.decoding = Decoding::Pcm { sample, channels };
        Ok(())
    }

    fn read_pcm(&mut self, sample: Sample, channels: u16) {
        let frame = sample.width() * usize::from(channels);
        let whole = self.pending.len() / frame * frame;
        let pending = std::mem::take(&mut self.pending);
        for f in pending[..whole].chunks_exact(frame) {
            self.sample(sample.read(f));
        }
        self.pending = pending;
        self.pending.drain(..whole);
    }

    /// One frame's sample of channel 0.
    fn sample(&mut self, s: f32) {
        self.frames += 1;
        if self.source != Source::Synthetic {
            if let Some(demod) = self.demod.as_mut() {
                let byte = demod.push(s);
                if self.source == Source::Undecided {
                    if let Some(layout) = demod.layout() {
                        self.source = Source::Spoken;
                        self.layout = Some(layout);
                        self.undecided.clear();
                        self.slot = None;
                    } else if demod.failed() {
                        self.source = Source::Synthetic;
                        for (start, len, hash) in std::mem::take(&mut self.undecided) {
                            self.synthetic_word(start, len, hash);
                        }
                    }
                }
                if let (Some(byte), Some(layout)) = (byte, self.layout) {
                    self.spoken_byte(byte, layout);
                }
                if demod_done(self.demod.as_ref()) {
                    self.demod = None;
                }
            }
        }
        let q = (s * 32767.0) as i16;
        self.window_hash = fnv(self.window_hash, &q.to_le_bytes());
        self.window_energy += f64::from(s) * f64::from(s);
        self.window_at += 1;
        if self.window_at >= self.window_len {
            self.window_end();
        }
    }

    fn window_end(&mut self) {
        let n = self.window_at.max(1);
        let rms = (self.window_energy / n as f64).sqrt();
        let hash = self.window_hash;
        (self.window_at, self.window_energy, self.window_hash) = (0, 0.0, FNV_OFFSET);
        let now = self.duration();
        let span = n as f64 / f64::from(self.rate.max(1));
        let started = now - span;
        let loud = rms > SOUND_RMS;
        if loud && !self.sound {
            if self.settings.vad_events {
                self.said.push(Said::SpeechStarted { timestamp: listen::round(started) });
            }
            self.speech_open = true;
        }
        if !loud && self.sound {
            self.silence_since = started;
        }
        self.sound = loud;
        // Synthetic words: one per 0.4 s of unbroken sound.
        if self.source != Source::Spoken {
            if loud {
                let (start, len, h) = self.slot.get_or_insert((started, 0.0, FNV_OFFSET));
                *len += span;
                *h = fnv(*h, &hash.to_le_bytes());
                if *len >= SYNTHETIC_WORD_S - 1e-9 {
                    let (start, len, h) = (*start, *len, *h);
                    self.slot = None;
                    match self.source {
                        Source::Synthetic => self.synthetic_word(start, len, h),
                        _ => self.undecided.push((start, len, h)),
                    }
                }
            } else {
                self.slot = None;
            }
        }
        // An endpoint: silence long enough after sound.
        if let Some(ms) = self.settings.endpointing_ms {
            if !loud && self.speech_open && now - self.silence_since >= f64::from(ms) / 1000.0 - 1e-9 {
                self.speech_open = false;
                self.finish(now, true, false);
            }
        }
        if self.settings.interim_results && !self.utterance_told {
            if let (Some(ue), Some(last)) = (self.settings.utterance_end_ms, self.last_word_end) {
                let in_word = !self.word_bytes.is_empty() || self.slot.is_some();
                if !in_word && now - last >= f64::from(ue) / 1000.0 - 1e-9 {
                    self.utterance_told = true;
                    self.said.push(Said::UtteranceEnd { last_word_end: listen::round(last) });
                }
            }
        }
        if now - self.segment_start >= MAX_SEGMENT_S - 1e-9 {
            let cut = self.words.last().map_or(now, |h| h.word.end.max(self.segment_start));
            let cut = if cut <= self.segment_start { now } else { cut };
            self.finish(cut, false, false);
        } else if self.settings.interim_results
            && now - self.last_result_at >= INTERIM_EVERY_S - 1e-9
            && (self.sound || !self.words.is_empty())
        {
            self.last_result_at = now;
            let words = self.words.clone();
            self.said.push(Said::Results {
                start: listen::round(self.segment_start),
                duration: listen::round(now - self.segment_start),
                is_final: false,
                speech_final: false,
                from_finalize: false,
                words,
                synthetic: self.synthetic(),
            });
        }
    }

    fn spoken_byte(&mut self, byte: u8, layout: Layout) {
        let k = self.text_bytes;
        self.text_bytes += 1;
        if byte.is_ascii_whitespace() {
            if !self.word_bytes.is_empty() {
                self.spoken_word(layout, k - 1);
            }
            return;
        }
        if self.word_bytes.is_empty() {
            self.word_first = k;
        }
        self.word_bytes.push(byte);
        if k + 1 == layout.len {
            self.spoken_word(layout, k);
        }
    }

    fn spoken_word(&mut self, layout: Layout, last: usize) {
        let rate = f64::from(self.rate.max(1));
        let at = |byte: usize| (layout.data_start + 2 * byte * layout.symbol) as f64 / rate;
        let text = String::from_utf8_lossy(&std::mem::take(&mut self.word_bytes)).into_owned();
        let (start, end) = (at(self.word_first), at(last + 1));
        self.heard(text, start, end, false);
    }

    fn synthetic_word(&mut self, start: f64, len: f64, hash: u64) {
        let vocabulary = listen::VOCABULARY;
        let text = vocabulary[(hash % vocabulary.len() as u64) as usize].to_owned();
        self.heard(text, start + 0.02, start + len - 0.04, true);
    }

    fn heard(&mut self, text: String, start: f64, end: f64, synthetic: bool) {
        // Synthetic sentences are nine words long, as in a file's transcript.
        let count = self.words.len() + 1;
        let sentence_end = text.ends_with(['.', '?', '!']) || (synthetic && count % 9 == 0);
        let word = Word { text, start, end, speaker: self.speaker, sentence_end };
        if sentence_end {
            self.speaker = 1 - self.speaker;
        }
        let sentence_start = self.next_sentence_start;
        self.next_sentence_start = sentence_end;
        self.last_word_end = Some(end);
        self.utterance_told = false;
        self.words.push(Heard { word, sentence_start });
    }

    /// Where the word being heard began, if one is: a final never cuts through it.
    fn word_in_progress(&self) -> Option<f64> {
        if let Some(layout) = self.layout {
            // The word's first letter, or the letter being read (it may begin a word).
            let first = if self.word_bytes.is_empty() { self.text_bytes } else { self.word_first };
            if first >= layout.len {
                return None;
            }
            let at = (layout.data_start + 2 * first * layout.symbol) as f64 / f64::from(self.rate.max(1));
            return (at < self.duration()).then_some(at);
        }
        self.slot.filter(|_| self.source != Source::Spoken).map(|(start, ..)| start)
    }

    /// A final result up to `cut`, or up to the word being heard when it began before `cut`
    /// (that word goes whole into the next result).
    fn finish(&mut self, cut: f64, speech_final: bool, from_finalize: bool) {
        let cut = match self.word_in_progress() {
            Some(start) if start < cut => start.max(self.segment_start),
            _ => cut,
        };
        let keep = self.words.iter().position(|h| h.word.end > cut + 1e-9).unwrap_or(self.words.len());
        let words: Vec<Heard> = self.words.drain(..keep).collect();
        let start = self.segment_start;
        self.segment_start = cut.max(start);
        self.last_result_at = self.duration();
        self.said.push(Said::Results {
            start: listen::round(start),
            duration: listen::round(self.segment_start - start),
            is_final: true,
            speech_final,
            from_finalize,
            words,
            synthetic: self.synthetic(),
        });
    }

    /// `Finalize`: a final result of all the audio received.
    pub fn finalize(&mut self) -> Result<(), Unreadable> {
        if matches!(self.decoding, Decoding::Buffered) {
            return self.read_buffered(true);
        }
        self.finish(self.duration(), false, true);
        Ok(())
    }

    /// The end of the stream (`CloseStream`): the last final result, if there is audio it has
    /// not covered.
    pub fn close(&mut self) -> Result<(), Unreadable> {
        match self.decoding {
            Decoding::Buffered => self.read_buffered(false),
            Decoding::Sniffing | Decoding::WavHeader if self.bytes > 0 => {
                Err(Unreadable("the stream ended before its audio could be read".into()))
            }
            _ => {
                if self.duration() > self.segment_start + 1e-9 || !self.words.is_empty() {
                    self.finish(self.duration(), false, false);
                }
                Ok(())
            }
        }
    }

    /// A compressed stream, read whole: its words past the last final.
    fn read_buffered(&mut self, from_finalize: bool) -> Result<(), Unreadable> {
        let channels = Some(self.format.channels.max(1));
        let info: AudioInfo =
            audio::inspect(&self.pending, self.format.encoding.as_deref(), self.format.sample_rate, channels)
                .map_err(|audio::Undecodable(why)| Unreadable(why))?;
        let rate = info.sample_rate.max(1);
        self.rate = rate;
        self.channels = info.channels;
        self.frames = (info.duration_s * f64::from(rate)).round() as u64;
        self.source = if info.spoken_text.is_some() { Source::Spoken } else { Source::Synthetic };
        let hash = Sha256::digest(&self.pending);
        let (words, _) = listen::words(&info, &hash);
        let mut sentence_start = true;
        for word in words {
            let opens = sentence_start;
            sentence_start = word.sentence_end;
            if word.end > self.segment_start + 1e-9 {
                self.last_word_end = Some(word.end);
                self.words.push(Heard { word, sentence_start: opens });
            }
        }
        self.finish(info.duration_s, false, from_finalize);
        Ok(())
    }

    /// What the listener has said since the last call, in order.
    pub fn take(&mut self) -> Vec<Said> {
        std::mem::take(&mut self.said)
    }
}

fn demod_done(demod: Option<&Demodulator>) -> bool {
    demod.is_some_and(Demodulator::is_finished)
}

fn too_much() -> Unreadable {
    Unreadable(format!("more than {} MiB of compressed audio in one stream", MAX_BUFFERED >> 20))
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
