//! Live transcription: `/v1/listen` over a WebSocket (`wss://api.deepgram.com/v1/listen`,
//! here `ws://127.0.0.1:7702/v1/listen`), on the sandbox's socket layer (`sandbox/ws.rs`).
//!
//! The handshake is checked as Deepgram checks it, and refused with its HTTP error (and a
//! `dg-error` header): the key (`Authorization: Token …`, or a browser's
//! `Sec-WebSocket-Protocol: token, KEY`), the file endpoint's options, and the stream's own
//! (`encoding` and the `sample_rate` it needs, `channels`, `interim_results`, `endpointing`,
//! `utterance_end_ms`, `vad_events`). Then binary frames are audio, read by `stream.rs`, and
//! text frames are control messages: `KeepAlive`, `Finalize`, `CloseStream` (an empty binary
//! frame is the old way to say it) and `Configure`; anything else is a `SchemaError`, and the
//! socket stays open. `CloseStream` is answered with the last results, `Metadata`, and a
//! normal close. Ten seconds without a frame (wall time and the sandbox clock's jumps: a sped-up
//! sandbox does not shorten it) closes the socket `1011 NET-0001`;
//! audio that cannot be read closes it `1008 DATA-0000`. Each stream is one request of usage,
//! counted in seconds of audio received.

use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use super::errors::{DgError, Shape};
use super::listen::{self, Options};
use super::state::{self, Caller, Endpoint};
use super::stream::{Format, Listener, Said, Settings, Unreadable};
use super::{accessor, clock, require_usage_write, Shared};
use crate::sandbox::request::{self, Credentials, Query};
use crate::sandbox::ws::{Incoming, Outbox, Refused, Socket, WsLimits};

/// The sockets of live transcription. An audio frame is at most a few hundred KiB (a second of
/// 48 kHz stereo 32-bit audio is 384 KiB); results are small.
pub(super) const LIMITS: WsLimits =
    WsLimits { max_message: 4 << 20, queue_bytes: 4 << 20, max_sockets: 512, write_stall: Duration::from_secs(30) };

/// The subprotocols a browser client authenticates with (`token, KEY` or `bearer, JWT`).
pub(super) const PROTOCOLS: &[&str] = &["token", "bearer"];

/// Deepgram closes a stream that sends nothing for this long (`NET-0001`).
pub const IDLE_MS: i64 = 10_000;
/// How often a quiet socket looks at the sandbox clock for its idle limit.
const IDLE_CHECK: Duration = Duration::from_millis(250);
/// Encodings Deepgram takes for a stream (api/deepgram.md; the SDKs' list).
const ENCODINGS: &[&str] =
    &["linear16", "linear32", "flac", "alaw", "mulaw", "amr-nb", "amr-wb", "opus", "ogg-opus", "speex", "g729"];
/// Keyterms per `Configure`, in words (Deepgram's 500-token limit).
const MAX_KEYTERM_TOKENS: usize = 500;

/// Whether a request is a live stream: a WebSocket handshake at `/v1/listen`.
pub(super) fn is_live(request: &Request) -> bool {
    request.uri().path().trim_end_matches('/') == "/v1/listen"
        && request
            .headers()
            .get(axum::http::header::UPGRADE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// One stream's options, read from the handshake.
struct Stream {
    project: String,
    caller: Caller,
    request_id: String,
    options: Options,
    format: Format,
    settings: Settings,
    keyterms: Vec<String>,
}

/// The handshake: refused with Deepgram's HTTP error, or a socket streaming to [`session`].
pub(super) async fn connect(shared: std::sync::Arc<Shared>, request: Request) -> Response {
    let request_id = shared.lock().ids.uuid();
    let stream = match read_handshake(&shared, &request, &request_id) {
        Ok(stream) => stream,
        Err(e) => return refusal(e, &request_id),
    };
    let session_shared = std::sync::Arc::clone(&shared);
    let accepted =
        shared.live.accept(request, move |socket| async move { session(&session_shared, socket, stream).await }).await;
    let mut response = match accepted {
        Ok(response) => response,
        Err(Refused::NotWebSocket(reason)) => {
            return refusal(DgError::bad_request(format!("Expected a WebSocket handshake: {reason}")), &request_id)
        }
        Err(Refused::TooMany) => {
            return refusal(
                DgError::legacy(
                    StatusCode::TOO_MANY_REQUESTS,
                    "TOO_MANY_REQUESTS",
                    format!("Too many requests: {} streams are open.", LIMITS.max_sockets),
                ),
                &request_id,
            )
        }
    };
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("dg-request-id", value);
    }
    response
}

/// A refused handshake: the error's body, with its message in `dg-error` as Deepgram sends it.
fn refusal(e: DgError, request_id: &str) -> Response {
    let message = match &e.shape {
        Shape::Legacy { err_msg, .. } => err_msg.clone(),
        Shape::Modern { message, .. } => message.clone(),
        Shape::Plain(text) => text.clone(),
    };
    let mut response = e.with_request_id(request_id).into_response();
    if let Ok(value) = HeaderValue::from_str(&message) {
        response.headers_mut().insert("dg-error", value);
    }
    response
}

/// The key of a handshake: the `Authorization` header, or a browser's subprotocols.
fn secret(request: &Request) -> Option<String> {
    match request::credentials(request.headers()) {
        Ok(Some(Credentials::Token(token) | Credentials::Bearer(token))) => return Some(token),
        Ok(Some(_)) | Err(_) => return None,
        Ok(None) => {}
    }
    let offered = request.headers().get(axum::http::header::SEC_WEBSOCKET_PROTOCOL)?.to_str().ok()?;
    let mut parts = offered.split(',').map(str::trim);
    match (parts.next(), parts.next()) {
        (Some(scheme), Some(key)) if PROTOCOLS.contains(&scheme.to_ascii_lowercase().as_str()) && !key.is_empty() => {
            Some(key.to_owned())
        }
        _ => None,
    }
}

fn read_handshake(shared: &Shared, request: &Request, request_id: &str) -> Result<Stream, DgError> {
    let now_ms = shared.clock.now_ms();
    let secret = secret(request).ok_or_else(DgError::invalid_auth)?;
    let caller = shared.lock().authenticate(&secret, now_ms)?;
    let project = require_usage_write(shared, &caller)?;
    let query = Query::parse(request.uri().query().unwrap_or(""))
        .map_err(|_| DgError::invalid_query("Failed to deserialize query parameters: invalid UTF-8"))?;
    let options = listen::options(&query)?;
    if !options.model.streaming {
        return Err(DgError::bad_request(format!(
            "The model {} is not available for streaming.",
            options.model.canonical_name
        )));
    }
    let number = |name: &str| -> Result<Option<u32>, DgError> {
        query
            .get(name)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| {
                v.parse::<u32>().map_err(|_| {
                    DgError::invalid_query(format!(
                        "Failed to deserialize query parameters: {name}: invalid digit found in string, got {v:?}"
                    ))
                })
            })
            .transpose()
    };
    let encoding = query.get("encoding").map(str::trim).filter(|e| !e.is_empty()).map(str::to_owned);
    if let Some(e) = &encoding {
        if !ENCODINGS.contains(&e.as_str()) {
            return Err(DgError::invalid_query(format!(
                "Failed to deserialize query parameters: encoding: unknown variant `{e}`, expected one of {}",
                ENCODINGS.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let sample_rate = number("sample_rate")?;
    if encoding.is_some() && sample_rate.is_none() {
        return Err(DgError::bad_request("sample_rate is required when encoding is set."));
    }
    let channels = number("channels")?.unwrap_or(1);
    if channels == 0 || channels > u32::from(super::audio::MAX_CHANNELS) {
        return Err(DgError::invalid_query(format!(
            "Failed to deserialize query parameters: channels must be between 1 and {}, got {channels}",
            super::audio::MAX_CHANNELS
        )));
    }
    let flag = |name: &str| -> Result<bool, DgError> {
        match query.get(name).map(str::trim) {
            None | Some("" | "false") => Ok(false),
            Some("true") => Ok(true),
            Some(other) => Err(DgError::invalid_query(format!(
                "Failed to deserialize query parameters: {name}: provided string was not `true` or `false`, got {other:?}"
            ))),
        }
    };
    // `endpointing`: milliseconds of silence (10 by default), or `false` for none.
    let endpointing_ms = match query.get("endpointing").map(str::trim) {
        None | Some("" | "true") => Some(10),
        Some("false") => None,
        Some(_) => number("endpointing")?,
    };
    let settings = Settings {
        interim_results: flag("interim_results")?,
        endpointing_ms,
        utterance_end_ms: number("utterance_end_ms")?,
        vad_events: flag("vad_events")?,
    };
    let keyterms = query.all("keyterm").map(str::to_owned).collect();
    Ok(Stream {
        project,
        caller,
        request_id: request_id.to_owned(),
        options,
        format: Format { encoding, sample_rate, channels: u16::try_from(channels).unwrap_or(1) },
        settings,
        keyterms,
    })
}

/// Why a stream ended, for its close frame and usage.
enum End {
    /// `CloseStream`: the last results and `Metadata` are sent, then a normal close.
    Closed,
    /// The client went away (or the sandbox stopped): nothing more is sent.
    Gone,
    /// Deepgram's close code and reason.
    Error(u16, &'static str),
}

/// Runs `work` on the listener on a thread of the blocking pool, at the lowered priority:
/// decoding audio is heavy work, and never runs on the workers that answer every other service.
/// `None` when it panicked (the stream then ends as Deepgram's internal error).
async fn heavy(
    mut listener: Box<Listener>,
    work: impl FnOnce(&mut Listener) -> Result<(), Unreadable> + Send + 'static,
) -> Option<(Box<Listener>, Result<(), Unreadable>)> {
    tokio::task::spawn_blocking(move || {
        crate::sandbox::control::yield_to_answering_threads();
        let result = work(&mut listener);
        (listener, result)
    })
    .await
    .ok()
}

async fn session(shared: &Shared, mut socket: Socket, mut stream: Stream) {
    let outbox = socket.outbox();
    let mut listener = Box::new(Listener::new(stream.format.clone(), stream.settings));
    // The audio read, for usage, whatever becomes of the listener.
    let mut seconds = 0.0;
    let mut heard_ms = shared.clock.real_ms();
    let mut tick = tokio::time::interval(IDLE_CHECK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let end = loop {
        let incoming = tokio::select! {
            incoming = socket.next() => incoming,
            _ = tick.tick() => {
                if shared.clock.real_ms().saturating_sub(heard_ms) >= IDLE_MS {
                    break End::Error(1011, "NET-0001");
                }
                continue;
            }
        };
        heard_ms = shared.clock.real_ms();
        let step = match incoming {
            None => break End::Gone,
            Some(Incoming::Binary(bytes)) if bytes.is_empty() => Step::Close,
            Some(Incoming::Binary(bytes)) => Step::Work(Box::new(move |l: &mut Listener| l.audio(&bytes))),
            Some(Incoming::Text(text)) => control(&text, &mut stream, &outbox),
        };
        let (work, closing): (Work, bool) = match step {
            Step::Go => continue,
            Step::Work(work) => (work, false),
            Step::Close => (Box::new(Listener::close), true),
        };
        let Some((back, result)) = heavy(listener, work).await else {
            // A panic in one stream is that stream's internal error, and ends only it.
            record_usage(shared, &stream, seconds);
            outbox.close(1011, "opsdeck sandbox: the simulator failed on this stream");
            return;
        };
        listener = back;
        seconds = listener.duration();
        let end = match (result, closing) {
            (Err(Unreadable(_)), _) => Some(End::Error(1008, "DATA-0000")),
            (Ok(()), true) => Some(End::Closed),
            (Ok(()), false) => None,
        };
        if send_said(&mut listener, &stream, &outbox).is_err() {
            break End::Gone;
        }
        if let Some(end) = end {
            break end;
        }
    };
    // Recorded before the close, so a client that has seen it sees the usage too.
    record_usage(shared, &stream, seconds);
    match end {
        End::Closed => {
            let _ = outbox.text(metadata(&listener, &stream, shared.clock.now_ms()).to_string());
            outbox.close(1000, "");
        }
        End::Error(code, reason) => outbox.close(code, reason),
        End::Gone => {}
    }
}

type Work = Box<dyn FnOnce(&mut Listener) -> Result<(), Unreadable> + Send>;

/// What a client's frame asks of the listener.
enum Step {
    /// Nothing (a `KeepAlive`, or a message answered at once).
    Go,
    Work(Work),
    /// The end of the stream: the last results, then `Metadata`.
    Close,
}

/// A control message: what it makes the listener do, and any answer of its own.
fn control(text: &str, stream: &mut Stream, outbox: &Outbox) -> Step {
    let parsed: Option<Map<String, Value>> = serde_json::from_str::<Value>(text).ok().and_then(|v| match v {
        Value::Object(map) => Some(map),
        _ => None,
    });
    let kind = parsed.as_ref().and_then(|m| m.get("type")).and_then(Value::as_str);
    match (kind, &parsed) {
        (Some("KeepAlive"), _) => Step::Go,
        (Some("Finalize"), _) => Step::Work(Box::new(Listener::finalize)),
        (Some("CloseStream"), _) => Step::Close,
        (Some("Configure"), Some(message)) => {
            let _ = outbox.text(configure(message, stream).to_string());
            Step::Go
        }
        _ => {
            // The original message is echoed, as Deepgram does, but never more than a page of it.
            let shown: String = text.chars().take(1024).collect();
            let error = json!({
                "type": "Error",
                "variant": "SchemaError",
                "description": match kind {
                    Some(kind) => format!("Unknown message type {kind:?}: expected KeepAlive, Finalize, CloseStream or Configure."),
                    None => "The message is not a JSON object with a `type`.".to_owned(),
                },
                "message": shown,
            });
            let _ = outbox.text(error.to_string());
            Step::Go
        }
    }
}

/// `Configure`: new keyterms (Nova-3 only) and formatting features for the rest of the stream.
fn configure(message: &Map<String, Value>, stream: &mut Stream) -> Value {
    let failure = |code: &str, description: &str| json!({"type": "ConfigureFailure", "request_id": stream.request_id, "code": code, "description": description});
    let keyterms: Option<Vec<String>> = match message.get("keyterms") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            let Some(terms) = items.iter().map(|v| v.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>() else {
                return failure("CONFIGURE_INTERNAL_ERROR", "keyterms must be an array of strings.");
            };
            Some(terms)
        }
        Some(_) => return failure("CONFIGURE_INTERNAL_ERROR", "keyterms must be an array of strings."),
    };
    if let Some(terms) = &keyterms {
        if !stream.options.model.canonical_name.starts_with("nova-3") {
            return failure("CONFIGURE_KEYTERMS_NOT_SUPPORTED", "Keyterms are supported only on Nova-3 models.");
        }
        let tokens: usize = terms.iter().map(|t| t.split_whitespace().count()).sum();
        if tokens > MAX_KEYTERM_TOKENS {
            return failure(
                "CONFIGURE_KEYTERM_LIMIT_EXCEEDED",
                &format!("Keyterms exceed the {MAX_KEYTERM_TOKENS}-token limit ({tokens} tokens)."),
            );
        }
    }
    if let Some(Value::Object(features)) = message.get("features") {
        for (name, on) in features {
            let Some(on) = on.as_bool() else { continue };
            match name.as_str() {
                "punctuate" | "smart_format" => stream.options.punctuate = on,
                "diarize" => stream.options.diarize = on,
                _ => {}
            }
        }
    }
    if let Some(terms) = keyterms {
        stream.keyterms = terms;
    }
    json!({"type": "ConfigureSuccess", "request_id": stream.request_id, "keyterms": stream.keyterms})
}

/// Sends what the listener has said; `Err` once the socket is gone.
fn send_said(listener: &mut Listener, stream: &Stream, outbox: &Outbox) -> Result<(), crate::sandbox::ws::Gone> {
    for said in listener.take() {
        for message in render(&said, listener.channels(), stream) {
            outbox.text(message.to_string())?;
        }
    }
    Ok(())
}

/// A message as Deepgram sends it: one `Results` per channel with `multichannel`.
fn render(said: &Said, channels: u16, stream: &Stream) -> Vec<Value> {
    let options = &stream.options;
    let channels = if options.multichannel { channels.max(1) } else { 1 };
    match said {
        Said::SpeechStarted { timestamp } => {
            vec![json!({"type": "SpeechStarted", "channel": [0, channels], "timestamp": timestamp})]
        }
        Said::UtteranceEnd { last_word_end } => {
            vec![json!({"type": "UtteranceEnd", "channel": [0, channels], "last_word_end": last_word_end})]
        }
        Said::Results { start, duration, is_final, speech_final, from_finalize, words, synthetic } => {
            let values: Vec<Value> =
                words.iter().map(|h| listen::word_value(&h.word, options, h.sentence_start, *synthetic)).collect();
            let transcript = values
                .iter()
                .filter_map(|v| v.get("punctuated_word").or_else(|| v.get("word")).and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            let (uuid, info) = listen::model_info(options.model);
            let mut metadata = json!({"request_id": stream.request_id, "model_info": info, "model_uuid": uuid});
            if *synthetic && !words.is_empty() {
                metadata["warnings"] = json!([listen::synthetic_warning()]);
            }
            let confidence = if words.is_empty() { 0.0 } else { listen::confidence(*synthetic) };
            (0..channels)
                .map(|c| {
                    json!({
                        "type": "Results",
                        "channel_index": [c, channels],
                        "duration": duration,
                        "start": start,
                        "is_final": is_final,
                        "speech_final": speech_final,
                        "channel": {"alternatives": [{"transcript": transcript, "confidence": confidence, "words": values}]},
                        "metadata": metadata,
                        "from_finalize": from_finalize,
                    })
                })
                .collect()
        }
    }
}

/// The summary Deepgram sends before it closes a stream the client ended.
fn metadata(listener: &Listener, stream: &Stream, now_ms: i64) -> Value {
    let (uuid, info) = listen::model_info(stream.options.model);
    let mut model_info = Map::new();
    model_info.insert(uuid.clone(), info);
    let mut value = json!({
        "type": "Metadata",
        "transaction_key": "deprecated",
        "request_id": stream.request_id,
        "sha256": listener.sha256(),
        "created": clock::rfc3339_ms(now_ms),
        "duration": listen::round(listener.duration()),
        "channels": listener.channels(),
        "models": [uuid],
        "model_info": model_info,
    });
    if listener.synthetic() && listener.bytes() > 0 {
        value["warnings"] = json!([listen::synthetic_warning()]);
    }
    value
}

fn record_usage(shared: &Shared, stream: &Stream, seconds: f64) {
    let options = &stream.options;
    shared.lock().record(
        &stream.project,
        state::Usage {
            at_ms: shared.clock.now_ms(),
            endpoint: Endpoint::Listen,
            streaming: true,
            model: options.model.canonical_name,
            accessor: accessor(&stream.caller),
            tags: options.tags.iter().map(|t| t.as_str().into()).collect(),
            features: state::Features::of(options.features.iter().map(String::as_str)),
            requests: 1,
            audio_seconds: seconds,
            characters: 0,
            tokens_in: 0,
            tokens_out: 0,
        },
    );
}
