//! `POST /v1/listen`: the response Deepgram gives for a transcription, built from what the
//! audio itself says (duration, channels, sample rate: `audio::inspect`) and its words: the text
//! the simulator's own `speak` put into it, or for any other audio a synthetic transcript that
//! the metadata says is synthetic. The options (`punctuate`, `diarize`, `utterances`,
//! `paragraphs`, `sentiment`, `language`, `multichannel`, ...) shape the answer as Deepgram's do.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::audio::AudioInfo;
use super::errors::DgError;
use super::models;
use super::read;
use crate::sandbox::request::Query;
use crate::sandbox::rng::Rng;

/// The listen options the simulator reads; the others are accepted and echoed nowhere.
pub struct Options {
    pub model: &'static models::Stt,
    pub language: String,
    pub punctuate: bool,
    pub diarize: bool,
    pub utterances: bool,
    pub paragraphs: bool,
    pub sentiment: bool,
    pub multichannel: bool,
    pub detect_language: bool,
    pub topics: bool,
    pub intents: bool,
    pub summarize: bool,
    pub tags: Vec<String>,
    /// Every boolean feature asked for, for usage filters.
    pub features: Vec<String>,
}

fn flag(query: &Query, name: &str) -> Result<bool, DgError> {
    match query.get(name).map(str::trim) {
        None | Some("" | "false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(DgError::invalid_query(format!(
            "Failed to deserialize query parameters: {name}: provided string was not `true` or `false`, got {other:?}"
        ))),
    }
}

const FLAGS: [&str; 14] = [
    "punctuate",
    "smart_format",
    "diarize",
    "utterances",
    "paragraphs",
    "sentiment",
    "multichannel",
    "topics",
    "intents",
    "numerals",
    "profanity_filter",
    "filler_words",
    "dictation",
    "measurements",
];

pub fn options(query: &Query) -> Result<Options, DgError> {
    let name = query.get("model").map_or("base-general", str::trim);
    let model = models::stt(name).ok_or_else(|| {
        DgError::legacy(
            axum::http::StatusCode::FORBIDDEN,
            "INSUFFICIENT_PERMISSIONS",
            "Project does not have access to the requested model.",
        )
    })?;
    let mut features = Vec::new();
    for name in FLAGS {
        if flag(query, name)? {
            features.push(name.to_owned());
        }
    }
    let asked: Vec<String> = features.clone();
    let on = |name: &str| asked.iter().any(|f| f == name);
    let summarize = match query.get("summarize").map(str::trim) {
        None | Some("" | "false") => false,
        Some("true" | "v2") => true,
        Some(other) => {
            return Err(DgError::invalid_query(format!(
                "Failed to deserialize query parameters: summarize must be true, false or v2, got {other:?}"
            )))
        }
    };
    let detect_language = query.get("detect_language").is_some_and(|v| v != "false");
    if summarize {
        features.push("summarize".to_owned());
    }
    Ok(Options {
        model,
        language: query.get("language").unwrap_or("en").trim().to_owned(),
        punctuate: on("punctuate") || on("smart_format"),
        diarize: on("diarize") || query.get("diarize_model").is_some(),
        utterances: on("utterances"),
        paragraphs: on("paragraphs") || on("smart_format"),
        sentiment: on("sentiment"),
        multichannel: on("multichannel"),
        detect_language,
        topics: on("topics"),
        intents: on("intents"),
        summarize,
        tags: query.all("tag").map(str::to_owned).collect(),
        features,
    })
}

/// Words standing for speech in audio the simulator did not make.
pub(super) const VOCABULARY: &[&str] = &[
    "thanks",
    "for",
    "calling",
    "the",
    "support",
    "line",
    "how",
    "can",
    "i",
    "help",
    "you",
    "today",
    "my",
    "order",
    "arrived",
    "late",
    "and",
    "the",
    "box",
    "was",
    "damaged",
    "we",
    "will",
    "send",
    "a",
    "replacement",
    "right",
    "away",
    "is",
    "there",
    "anything",
    "else",
    "no",
    "that",
    "is",
    "all",
    "have",
    "great",
    "day",
];

/// One word with its times, its speaker and where its sentence ends.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Word {
    pub text: String,
    pub start: f64,
    pub end: f64,
    pub speaker: usize,
    pub sentence_end: bool,
}

/// The words of the audio: the spoken text read back from it, or synthetic ones (seeded by the
/// audio's hash, so the same file always reads the same), spread over its duration.
pub(super) fn words(info: &AudioInfo, hash: &[u8]) -> (Vec<Word>, bool) {
    let synthetic = info.spoken_text.is_none();
    let tokens: Vec<String> = match &info.spoken_text {
        Some(text) => text.split_whitespace().map(str::to_owned).collect(),
        None => {
            let seed = hash.iter().take(8).fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
            let mut rng = Rng::new(seed);
            // About two and a half words a second, as people speak.
            let count = ((info.duration_s * 2.5) as usize).clamp(usize::from(info.duration_s > 0.3), 20_000);
            (0..count).map(|_| (*rng.pick(VOCABULARY)).to_owned()).collect()
        }
    };
    let n = tokens.len().max(1) as f64;
    let slot = info.duration_s / n;
    let mut speaker = 0;
    let mut out = Vec::with_capacity(tokens.len());
    for (i, token) in tokens.into_iter().enumerate() {
        let start = i as f64 * slot + slot * 0.05;
        let end = (start + slot * 0.85).min(info.duration_s);
        let sentence_end = token.ends_with(['.', '?', '!']) || (synthetic && i % 9 == 8);
        out.push(Word { text: token, start, end, speaker, sentence_end });
        if sentence_end {
            speaker = 1 - speaker;
        }
    }
    if let Some(last) = out.last_mut() {
        last.sentence_end = true;
    }
    (out, synthetic)
}

pub(super) fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn bare(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').to_lowercase()
}

/// The punctuated form: capitalised at a sentence start, a full stop at its end.
fn punctuated(word: &Word, sentence_start: bool) -> String {
    let mut text = word.text.clone();
    if sentence_start {
        let mut chars = text.chars();
        if let Some(first) = chars.next() {
            text = first.to_uppercase().chain(chars).collect();
        }
    }
    if word.sentence_end && !text.ends_with(['.', '?', '!']) {
        text.push('.');
    }
    text
}

/// A word as Deepgram lists it, shaped by the options (`punctuated_word`, `speaker`,
/// `sentiment`); `sentence_start` capitalises it.
pub(super) fn word_value(w: &Word, options: &Options, sentence_start: bool, synthetic: bool) -> Value {
    let mut v = Map::new();
    v.insert("word".into(), json!(bare(&w.text)));
    v.insert("start".into(), json!(round(w.start)));
    v.insert("end".into(), json!(round(w.end)));
    v.insert("confidence".into(), json!(confidence(synthetic)));
    if options.punctuate {
        v.insert("punctuated_word".into(), json!(punctuated(w, sentence_start)));
    }
    if options.diarize {
        v.insert("speaker".into(), json!(w.speaker));
        v.insert("speaker_confidence".into(), json!(0.8));
    }
    if options.sentiment {
        let (label, score) = read::word_sentiment(&bare(&w.text));
        v.insert("sentiment".into(), json!(label));
        v.insert("sentiment_score".into(), json!(score));
    }
    Value::Object(v)
}

/// How sure the simulator says it is: of its own speech, very; of synthetic words, not.
pub(super) fn confidence(synthetic: bool) -> f64 {
    if synthetic {
        0.62
    } else {
        0.99
    }
}

/// The warning a transcript of synthetic words carries in its metadata.
pub(super) fn synthetic_warning() -> Value {
    json!({
        "parameter": "transcript",
        "type": "simulated",
        "message": "opsdeck sandbox: the words of this audio are synthetic; its duration, channels and sample rate are the file's own. Audio made by the sandbox's /v1/speak transcribes to its text.",
    })
}

/// The model's entry in a `model_info` map, and its uuid (the map's key).
pub(super) fn model_info(model: &models::Stt) -> (String, Value) {
    (
        models::uuid_of(model.canonical_name),
        json!({"name": model.canonical_name, "version": model.version, "arch": model.architecture}),
    )
}

/// The whole answer. `request_id`, `created` (RFC 3339) and the audio's bytes name it.
pub fn response(info: &AudioInfo, audio: &[u8], options: &Options, request_id: &str, created: &str) -> Value {
    let hash = Sha256::digest(audio);
    let (words, synthetic) = words(info, &hash);
    let mut sentence_start = true;
    let mut word_values = Vec::with_capacity(words.len());
    for w in &words {
        word_values.push(word_value(w, options, sentence_start, synthetic));
        sentence_start = w.sentence_end;
    }
    let shown = |i: usize| -> String {
        word_values[i]
            .get("punctuated_word")
            .or_else(|| word_values[i].get("word"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let transcript: String = (0..words.len()).map(shown).collect::<Vec<_>>().join(" ");
    // Sentences as word ranges.
    let mut sentences: Vec<(usize, usize)> = Vec::new();
    let mut from = 0;
    for (i, w) in words.iter().enumerate() {
        if w.sentence_end {
            sentences.push((from, i));
            from = i + 1;
        }
    }
    let text_of = |(a, b): (usize, usize)| (a..=b).map(shown).collect::<Vec<_>>().join(" ");
    let mut alternative = Map::new();
    alternative.insert("transcript".into(), json!(transcript));
    alternative.insert("confidence".into(), json!(if synthetic { 0.62 } else { 0.99 }));
    alternative.insert("words".into(), Value::Array(word_values.clone()));
    if options.paragraphs && !words.is_empty() {
        // A paragraph per run of sentences by one speaker.
        let mut paragraphs = Vec::new();
        let mut run: Vec<(usize, usize)> = Vec::new();
        for &(a, b) in &sentences {
            if run.first().is_some_and(|&(first, _)| words[first].speaker != words[a].speaker) {
                paragraphs.push(std::mem::take(&mut run));
            }
            run.push((a, b));
        }
        paragraphs.push(run);
        let mut lines = String::new();
        let list: Vec<Value> = paragraphs
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (first, last) = (p[0].0, p[p.len() - 1].1);
                let speaker = words[first].speaker;
                let body = p.iter().map(|s| text_of(*s)).collect::<Vec<_>>().join(" ");
                if options.diarize {
                    lines.push_str(&format!("\nSpeaker {speaker}: {body}"));
                } else {
                    lines.push_str(&format!("\n{body}"));
                }
                json!({
                    "sentences": p.iter().map(|s| json!({"text": text_of(*s), "start": round(words[s.0].start), "end": round(words[s.1].end)})).collect::<Vec<_>>(),
                    "speaker": speaker,
                    "num_words": last - first + 1,
                    "start": round(words[first].start),
                    "end": round(words[last].end),
                })
            })
            .collect();
        alternative.insert("paragraphs".into(), json!({"transcript": lines, "paragraphs": list}));
    }
    let channels = if options.multichannel { usize::from(info.channels.max(1)) } else { 1 };
    let mut channel = Map::new();
    channel.insert("alternatives".into(), json!([Value::Object(alternative)]));
    if options.detect_language {
        channel.insert("detected_language".into(), json!(options.language.split('-').next().unwrap_or("en")));
        channel.insert("language_confidence".into(), json!(0.97));
    }
    let channel = Value::Object(channel);
    let mut results = Map::new();
    results.insert("channels".into(), Value::Array(vec![channel; channels]));
    if options.utterances {
        let list: Vec<Value> = sentences
            .iter()
            .enumerate()
            .map(|(n, &(a, b))| {
                json!({
                    "start": round(words[a].start),
                    "end": round(words[b].end),
                    "confidence": if synthetic { 0.62 } else { 0.99 },
                    "channel": 0,
                    "transcript": text_of((a, b)),
                    "words": word_values[a..=b].to_vec(),
                    "speaker": words[a].speaker,
                    "id": format!("{:x}-{n}", hash.iter().take(4).fold(0u32, |acc, b| (acc << 8) | u32::from(*b))),
                })
            })
            .collect();
        results.insert("utterances".into(), Value::Array(list));
    }
    let mut metadata = json!({
        "transaction_key": "deprecated",
        "request_id": request_id,
        "sha256": format!("{hash:x}"),
        "created": created,
        "duration": round(info.duration_s),
        "channels": info.channels,
        "models": [models::uuid_of(options.model.canonical_name)],
        "model_info": {
            models::uuid_of(options.model.canonical_name): {
                "name": options.model.canonical_name,
                "version": options.model.version,
                "arch": options.model.architecture,
            }
        },
    });
    if let Some(map) = metadata.as_object_mut() {
        if !options.tags.is_empty() {
            map.insert("tags".into(), json!(options.tags));
        }
        let mut warnings = Vec::new();
        if synthetic {
            warnings.push(synthetic_warning());
        }
        if options.sentiment || options.topics || options.intents || options.summarize {
            let analysis = read::analyze(
                &transcript,
                &read::Features {
                    sentiment: options.sentiment,
                    summarize: options.summarize,
                    topics: options.topics,
                    intents: options.intents,
                    ..read::Features::default()
                },
            );
            if let Some(found) = analysis.results.as_object() {
                for (key, value) in found {
                    let value = if key == "summary" {
                        json!({"result": "success", "short": value.get("text").cloned().unwrap_or_default()})
                    } else {
                        value.clone()
                    };
                    results.insert(key.clone(), value);
                }
            }
            for (name, input, output) in analysis.tokens {
                map.insert(
                    name.into(),
                    json!({"model_uuid": models::uuid_of(name), "input_tokens": input, "output_tokens": output}),
                );
            }
            if !options.language.starts_with("en") {
                warnings.push(json!({"parameter": "sentiment", "type": "unsupported_language", "message": "Sentiment is only supported for English."}));
            }
        }
        if !warnings.is_empty() {
            map.insert("warnings".into(), Value::Array(warnings));
        }
        map.insert("sample_rate".into(), json!(info.sample_rate));
    }
    json!({"metadata": metadata, "results": Value::Object(results)})
}
