//! Deepgram's live transcription in the console ("transcribe live"): the `transcription_live`
//! form's file streamed over `/v1/listen`'s WebSocket at its real speed, and the view that
//! follows it: the final transcript as it grows, the words not final yet after it (replaced
//! as finals arrive), how much audio was sent and heard, and how the stream ended.
//!
//! The socket goes to the target's own host with its `Token` header; its query is the form's
//! values, built as a call's would be. The pace comes from the audio itself: a WAV's header, or
//! the form's `encoding`, `sample_rate` and `channels` for raw audio. Compressed files (MP3,
//! FLAC, Ogg) are refused here: their pace cannot be known without decoding them.

use serde_json::Value;

use crate::catalog::Operation;
use crate::client::credentials::Secret;
use crate::client::live::{Opening, Upload};
use crate::client::request::RequestBody;
use crate::client::{self, Target, Values};
use crate::tui::components::detail::{fact, Detail, Tone};
use crate::tui::services::{LiveStream, StreamView};

/// What ends the stream once the file is sent: Deepgram answers with its last results and
/// `Metadata`, then closes.
const CLOSE_STREAM: &str = r#"{"type":"CloseStream"}"#;

/// The form's values as a live stream of its file.
pub fn plan(op: &Operation, values: &Values, target: &Target) -> Result<LiveStream, String> {
    let mut request = client::build(op, values, None, target).map_err(|e| e.to_string())?;
    let RequestBody::Bytes { bytes, .. } = &request.body else {
        return Err("choose the audio file to stream".to_owned());
    };
    let bytes = bytes.to_vec();
    if bytes.is_empty() {
        return Err("the file is empty: there is no audio to stream".to_owned());
    }
    let (bytes_per_second, header) = pace(&bytes, values)?;
    client::auth::authorize(&mut request, &target.credentials).map_err(|e| e.to_string())?;
    let headers: Vec<(String, Secret)> = request
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .map(|(name, value)| (name.clone(), Secret::new(value.clone())))
        .collect();
    let url = socket_url(&request.url).ok_or_else(|| format!("{} is no http(s) URL", target.base_url))?;
    let file = values.get("file").cloned().unwrap_or_default();
    let seconds = bytes.len().saturating_sub(header) as f64 / bytes_per_second;
    let view = LiveTranscript::new(file, url.clone(), bytes.len(), bytes_per_second, seconds);
    Ok(LiveStream {
        opening: Opening {
            shown: url.clone(),
            url,
            headers,
            upload: Some(Upload { bytes, bytes_per_second, then: vec![CLOSE_STREAM.to_owned()] }),
        },
        view: Box::new(view),
    })
}

/// The WebSocket URL of a request's URL: the same host, path and query.
pub fn socket_url(url: &str) -> Option<String> {
    if let Some(rest) = url.strip_prefix("https://") {
        return Some(format!("wss://{rest}"));
    }
    url.strip_prefix("http://").map(|rest| format!("ws://{rest}"))
}

/// Bytes a second of the audio, and the length of its header: from a WAV's header, or for raw
/// audio from the form's encoding, rate and channels.
fn pace(bytes: &[u8], values: &Values) -> Result<(f64, usize), String> {
    let given = |name: &str| values.get(name).map(String::as_str).filter(|v| !v.is_empty());
    if bytes.starts_with(b"RIFF") {
        let facts = super::deepgram_audio::audio_facts(None, bytes);
        let (Some(rate), Some(channels), Some(bits)) = (facts.sample_rate, facts.channels, facts.bits) else {
            return Err("the WAV header does not say its rate, channels and sample size".to_owned());
        };
        let per_second = f64::from(rate) * f64::from(channels) * f64::from(bits) / 8.0;
        if per_second <= 0.0 {
            return Err("the WAV header says a rate, channel count or sample size of 0".to_owned());
        }
        let data = facts.duration.map_or(0.0, |d| d * per_second);
        let header = bytes.len().saturating_sub(data.round() as usize);
        return Ok((per_second, header));
    }
    let width =
        match given("encoding") {
            Some("linear16") => 2.0,
            Some("linear32") => 4.0,
            Some("mulaw" | "alaw") => 1.0,
            Some(other) => {
                return Err(format!(
            "{other} audio cannot be paced without decoding it: stream a WAV, or raw linear16, linear32, mulaw or alaw"
        ))
            }
            None if super::deepgram_audio::looks_like_audio(bytes) => return Err(
                "compressed audio cannot be paced without decoding it: stream a WAV, or raw audio with its encoding"
                    .to_owned(),
            ),
            None => return Err("no audio container: raw audio needs its encoding and sample_rate".to_owned()),
        };
    let Some(rate) = given("sample_rate").and_then(|r| r.parse::<u32>().ok()).filter(|r| *r > 0) else {
        return Err("raw audio needs its sample_rate".to_owned());
    };
    let channels = given("channels").and_then(|c| c.parse::<u32>().ok()).unwrap_or(1).max(1);
    Ok((f64::from(rate) * f64::from(channels) * width, 0))
}

/// How far the stream has got.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Stage {
    /// Sending the file.
    Streaming,
    /// All sent: waiting for the last results.
    Finishing,
    /// `Metadata` came: the service has said all it will.
    Done,
    /// The socket ended before that, and why.
    Ended(String),
}

/// The view of one live transcription.
pub struct LiveTranscript {
    file: String,
    url: String,
    total: usize,
    sent: usize,
    bytes_per_second: f64,
    seconds: f64,
    /// Final transcripts, in order (empty ones left out).
    finals: Vec<String>,
    /// The words heard since the last final, not final yet.
    interim: String,
    /// Audio time the results have covered.
    heard_to: f64,
    request_id: Option<String>,
    synthetic: bool,
    results: usize,
    speech_started: usize,
    utterance_ends: usize,
    /// What the service said went wrong with a message of the console's.
    errors: Vec<String>,
    stage: Stage,
}

impl LiveTranscript {
    fn new(file: String, url: String, total: usize, bytes_per_second: f64, seconds: f64) -> LiveTranscript {
        LiveTranscript {
            file,
            url,
            total,
            sent: 0,
            bytes_per_second,
            seconds,
            finals: Vec::new(),
            interim: String::new(),
            heard_to: 0.0,
            request_id: None,
            synthetic: false,
            results: 0,
            speech_started: 0,
            utterance_ends: 0,
            errors: Vec::new(),
            stage: Stage::Streaming,
        }
    }

    /// The final transcript so far.
    pub fn transcript(&self) -> String {
        self.finals.join(" ")
    }

    /// The words not final yet.
    pub fn interim(&self) -> &str {
        &self.interim
    }

    fn results(&mut self, message: &Value) {
        // One channel is shown: the first (each has its own results with `multichannel`).
        if message.pointer("/channel_index/0").and_then(Value::as_u64).unwrap_or(0) != 0 {
            return;
        }
        self.results += 1;
        let text = message
            .pointer("/channel/alternatives/0/transcript")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_owned();
        let number = |name: &str| message.get(name).and_then(Value::as_f64).unwrap_or(0.0);
        self.heard_to = self.heard_to.max(number("start") + number("duration"));
        if let Some(id) = message.pointer("/metadata/request_id").and_then(Value::as_str) {
            self.request_id = Some(id.to_owned());
        }
        if message.pointer("/metadata/warnings/0/type").and_then(Value::as_str) == Some("simulated") {
            self.synthetic = true;
        }
        if message.get("is_final").and_then(Value::as_bool) == Some(true) {
            if !text.is_empty() {
                self.finals.push(text);
            }
            self.interim.clear();
        } else {
            self.interim = text;
        }
    }
}

impl StreamView for LiveTranscript {
    fn frame(&mut self, text: &str) {
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            return self.errors.push("the service sent a frame that is not JSON".to_owned());
        };
        match message.get("type").and_then(Value::as_str) {
            Some("Results") => self.results(&message),
            Some("SpeechStarted") => self.speech_started += 1,
            Some("UtteranceEnd") => self.utterance_ends += 1,
            Some("Metadata") => {
                if let Some(id) = message.get("request_id").and_then(Value::as_str) {
                    self.request_id = Some(id.to_owned());
                }
                self.stage = Stage::Done;
            }
            Some("Error") => {
                let said = message.get("description").and_then(Value::as_str).unwrap_or("an error");
                self.errors.push(said.to_owned());
            }
            _ => {}
        }
    }

    fn sent(&mut self, bytes: usize) {
        self.sent = bytes.min(self.total);
        if self.sent >= self.total && self.stage == Stage::Streaming {
            self.stage = Stage::Finishing;
        }
    }

    fn ended(&mut self, why: &str) {
        if self.stage != Stage::Done {
            self.stage = Stage::Ended(why.to_owned());
        }
    }

    fn detail(&self) -> Detail {
        let sent_s = self.sent as f64 / self.bytes_per_second;
        let (state, tone) = match &self.stage {
            Stage::Streaming => {
                (format!("streaming at its real speed: {sent_s:.1} of {:.1} s sent", self.seconds), Tone::Pending)
            }
            Stage::Finishing => ("all sent; waiting for the last results".to_owned(), Tone::Pending),
            Stage::Done => ("done: the service sent its last results".to_owned(), Tone::Good),
            Stage::Ended(why) => (format!("ended early: {why}"), Tone::Bad),
        };
        let mut facts = vec![
            (String::from("state"), state, Some(tone)),
            fact("file", self.file.clone()),
            fact("socket", self.url.clone()),
            fact("heard", format!("{:.1} s of audio, {} results", self.heard_to, self.results)),
        ];
        if self.speech_started + self.utterance_ends > 0 {
            facts.push(fact(
                "events",
                format!("{} speech started, {} utterance ends", self.speech_started, self.utterance_ends),
            ));
        }
        if let Some(id) = &self.request_id {
            facts.push(fact("request id", id.clone()));
        }
        for error in &self.errors {
            facts.push((String::from("refused"), error.clone(), Some(Tone::Bad)));
        }
        let mut texts = vec![("transcript (final)".to_owned(), self.transcript())];
        if !self.interim.is_empty() {
            texts.push(("hearing (not final yet)".to_owned(), self.interim.clone()));
        }
        let note = self.synthetic.then(|| {
            "the simulator's words for audio it did not make are synthetic; its own speech (speech_speak) reads back"
                .to_owned()
        });
        let title = match &self.stage {
            Stage::Streaming | Stage::Finishing => format!("live transcript · {:.1} s", self.heard_to),
            Stage::Done => format!("live transcript · {:.1} s · done", self.heard_to),
            Stage::Ended(_) => format!("live transcript · {:.1} s · ended", self.heard_to),
        };
        Detail {
            title,
            facts,
            texts,
            note,
            subject: Some(format!("live transcript of {}", self.file)),
            ..Detail::default()
        }
    }
}

#[cfg(test)]
#[path = "deepgram_live_tests.rs"]
mod tests;
