//! Deepgram (spec part B). Wire facts: `shared/api/deepgram.md`.
//!
//! None of the spec's list routes page: each returns its whole list in one object (api §4), so
//! they carry `Paging::None` and only name their `id_field`.

use super::{BodyEncoding, Exclusive, Method, Operation, Param, ResponseFormat, Service};

const PROJECT: Param = Param::path("project_id", "project UUID (from projects_list)");
const CALLBACK: Param =
    Param::query("callback", "URL to receive the result later; the reply is then only a request_id");
const CALLBACK_METHOD: Param =
    Param::query("callback_method", "HTTP method of the callback").one_of(&["POST", "PUT"]).default("POST");
const TAG: Param = Param::query("tag", "usage-report labels, comma-separated").list();
const MIP_OPT_OUT: Param = flag("mip_opt_out", "opt out of the model improvement program");
const SENTIMENT: Param = flag("sentiment", "add sentiment per segment and overall");
const TOPICS: Param = flag("topics", "detect topics");
const CUSTOM_TOPIC: Param = Param::query("custom_topic", "your own topics, comma-separated, at most 100").list();
const CUSTOM_TOPIC_MODE: Param = Param::query("custom_topic_mode", "extended: yours plus detected; strict: only yours")
    .one_of(&["extended", "strict"])
    .default("extended");
const INTENTS: Param = flag("intents", "detect speaker intents");
const CUSTOM_INTENT: Param = Param::query("custom_intent", "your own intents, comma-separated").list();
const CUSTOM_INTENT_MODE: Param =
    Param::query("custom_intent_mode", "extended: yours plus detected; strict: only yours")
        .one_of(&["extended", "strict"])
        .default("extended");
const LANGUAGE: Param =
    Param::query("language", "BCP-47 language tag, e.g. en, es, en-US; multi: multilingual").default("en");

const fn flag(name: &'static str, help: &'static str) -> Param {
    Param::query(name, help).boolean().default("false")
}

/// A boolean usage filter: only requests that used (true) or did not use (false) a feature.
const fn used(name: &'static str, help: &'static str) -> Param {
    Param::query(name, help).boolean()
}

const fn op(
    name: &'static str,
    resource: &'static str,
    method: Method,
    path: &'static str,
    summary: &'static str,
) -> Operation {
    Operation::base(Service::Deepgram, name, resource, method, path, summary)
}

pub(super) static OPERATIONS: &[Operation] = &[
    Operation {
        id_field: Some("project_id"),
        ..op("projects_list", "projects", Method::Get, "/v1/projects", "list the projects the API key can see")
    },
    Operation {
        // The OpenAPI file also lists `limit` and `page` here; their effect on a single project
        // is unconfirmed and most plausibly nil, so they are left out.
        params: &[PROJECT],
        ..op("projects_get", "projects", Method::Get, "/v1/projects/{project_id}", "one project by id")
    },
    Operation {
        params: &[
            PROJECT,
            Param::body("name", "new project name"),
            // Only older docs and SDKs show `company`; kept because the API still accepts it.
            Param::body("company", "company name (older API field)"),
        ],
        body: BodyEncoding::Json,
        ..op(
            "projects_update",
            "projects",
            Method::Patch,
            "/v1/projects/{project_id}",
            "rename a project or change its settings",
        )
    },
    Operation {
        params: &[PROJECT],
        ..op(
            "projects_delete",
            "projects",
            Method::Delete,
            "/v1/projects/{project_id}",
            "delete a project with all its keys, members and usage access",
        )
    },
    Operation {
        params: &[PROJECT, Param::query("status", "only active or only expired keys").one_of(&["active", "expired"])],
        id_field: Some("api_key_id"),
        ..op(
            "keys_list",
            "keys",
            Method::Get,
            "/v1/projects/{project_id}/keys",
            "list API keys of a project (secrets are never shown)",
        )
    },
    Operation {
        params: &[
            PROJECT,
            Param::body("comment", "what the key is for").required().min(1.0),
            Param::body("scopes", "roles or permissions, e.g. member or usage:read,keys:read").list().required(),
            Param::body("tags", "labels, comma-separated").list(),
            Param::body("expiration_date", "RFC 3339 expiry, e.g. 2026-01-01T00:00:00Z (or give a TTL)"),
            Param::body("time_to_live_in_seconds", "lifetime in seconds (or give an expiration date)").int().min(1.0),
        ],
        exclusive: &[Exclusive { params: &["expiration_date", "time_to_live_in_seconds"], required: false }],
        body: BodyEncoding::Json,
        ..op(
            "keys_create",
            "keys",
            Method::Post,
            "/v1/projects/{project_id}/keys",
            "create an API key; its secret is shown only in this response",
        )
    },
    Operation {
        params: &[PROJECT, Param::path("key_id", "API key id (api_key_id)")],
        ..op(
            "keys_delete",
            "keys",
            Method::Delete,
            "/v1/projects/{project_id}/keys/{key_id}",
            "delete an API key of a project",
        )
    },
    Operation {
        params: &[PROJECT],
        id_field: Some("member_id"),
        ..op(
            "members_list",
            "members",
            Method::Get,
            "/v1/projects/{project_id}/members",
            "list members of a project with their scopes",
        )
    },
    Operation {
        params: &[PROJECT, Param::path("member_id", "member id")],
        ..op(
            "members_remove",
            "members",
            Method::Delete,
            "/v1/projects/{project_id}/members/{member_id}",
            "remove a member from a project",
        )
    },
    Operation {
        params: &[PROJECT],
        id_field: Some("balance_id"),
        ..op(
            "balances_list",
            "balances",
            Method::Get,
            "/v1/projects/{project_id}/balances",
            "billing balances of a project",
        )
    },
    Operation {
        // The API takes about 36 boolean feature filters; the ones an operator would plausibly
        // break usage down by are listed, the rarely useful rest are left out.
        params: &[
            PROJECT,
            Param::query("start", "start date, YYYY-MM-DD"),
            Param::query("end", "end date, YYYY-MM-DD"),
            Param::query("accessor", "only requests made with this API key id"),
            Param::query("tag", "only requests with this tag"),
            Param::query("deployment", "only this deployment").one_of(&["hosted", "beta", "self-hosted"]),
            Param::query("endpoint", "only this API").one_of(&["listen", "read", "speak", "agent"]),
            Param::query("method", "only this request method").one_of(&["sync", "async", "streaming"]),
            Param::query("model", "only requests using this model (name or UUID)"),
            used("diarize", "filter on use of diarization"),
            used("punctuate", "filter on use of punctuation"),
            used("smart_format", "filter on use of smart formatting"),
            used("multichannel", "filter on use of multichannel"),
            used("detect_language", "filter on use of language detection"),
            used("sentiment", "filter on use of sentiment analysis"),
            used("summarize", "filter on use of summarization"),
            used("topics", "filter on use of topic detection"),
            used("intents", "filter on use of intent recognition"),
            used("detect_entities", "filter on use of entity detection"),
            used("redact", "filter on use of redaction"),
            used("utterances", "filter on use of utterances"),
            used("paragraphs", "filter on use of paragraphs"),
            used("callback", "filter on use of callbacks (async)"),
        ],
        ..op(
            "usage_get",
            "usage",
            Method::Get,
            "/v1/projects/{project_id}/usage",
            "usage summary of a project over a date range",
        )
    },
    Operation {
        // The project-scoped variant `/v1/projects/{project_id}/models` also exists; the public
        // catalog needs no project and is what the SDKs call.
        params: &[flag("include_outdated", "also list older versions of each model")],
        id_field: Some("uuid"),
        ..op(
            "models_list",
            "models",
            Method::Get,
            "/v1/models",
            "list speech-to-text (stt) and text-to-speech (tts) models",
        )
    },
    Operation {
        params: &[Param::path("model_id", "model UUID (the uuid field of models_list)")],
        ..op("models_get", "models", Method::Get, "/v1/models/{model_id}", "metadata of one model")
    },
    Operation {
        // The API takes either JSON `{"url": ...}` or the raw audio bytes as
        // `application/octet-stream` (what the SDKs send); a given `file` is sent that way.
        params: &[
            Param::body("url", "URL of the audio file to transcribe (give url or file)"),
            Param::whole_body("file", "local audio file to upload: WAV, FLAC, MP3, OGG... (give url or file)").file(),
            Param::query("model", "e.g. nova-3, nova-2-meeting, whisper, or a custom model id")
                .default("base-general")
                .suggest(STT_MODELS),
            Param::query("version", "model version").default("latest"),
            LANGUAGE,
            Param::query("detect_language", "true, or the language codes to choose from, comma-separated").list(),
            flag("punctuate", "add punctuation and capitalization"),
            flag("smart_format", "format numbers, dates etc.; adds paragraphs"),
            flag("diarize", "label speakers (older switch; see diarize_model)"),
            Param::query("diarize_model", "label speakers with this diarization model").one_of(&["latest", "v1", "v2"]),
            flag("paragraphs", "split the transcript into paragraphs"),
            flag("utterances", "split the transcript into utterances"),
            Param::query("utt_split", "pause in seconds that ends an utterance").num().min(0.0).default("0.8"),
            flag("multichannel", "transcribe each audio channel separately"),
            flag("numerals", "write numbers as digits"),
            flag("measurements", "write units as abbreviations"),
            flag("dictation", "turn spoken punctuation commands into marks"),
            flag("filler_words", "keep filler words like uh and um"),
            flag("profanity_filter", "mask profanity"),
            Param::query("redact", "redact pci, pii, numbers or entity names, comma-separated").list(),
            Param::query("replace", "term:replacement pairs, comma-separated").list(),
            Param::query("search", "terms to find in the audio, comma-separated").list(),
            Param::query("keywords", "word:boost pairs (older models), comma-separated").list(),
            Param::query("keyterm", "key terms to prompt for (Nova-3), comma-separated").list(),
            Param::query("encoding", "encoding of headerless raw audio only")
                .one_of(&["linear16", "flac", "mulaw", "amr-nb", "amr-wb", "opus", "speex", "g729"]),
            SENTIMENT,
            INTENTS,
            CUSTOM_INTENT,
            CUSTOM_INTENT_MODE,
            TOPICS,
            CUSTOM_TOPIC,
            CUSTOM_TOPIC_MODE,
            Param::query("summarize", "v2: add a short summary (true: older per-alternative summaries)")
                .one_of(&["v2", "true", "false"])
                .default("false"),
            flag("detect_entities", "find names, places, numbers and other entities"),
            CALLBACK,
            CALLBACK_METHOD,
            TAG,
            Param::query("extra", "key:value pairs echoed in the metadata, comma-separated").list(),
            // `language_hint` appears only in Python SDK 7.17, not in the API docs: left out.
            MIP_OPT_OUT,
        ],
        exclusive: &[Exclusive { params: &["url", "file"], required: true }],
        body: BodyEncoding::Json,
        mutates: false,
        ..op(
            "transcription_transcribe",
            "transcription",
            Method::Post,
            "/v1/listen",
            "transcribe pre-recorded audio from a URL or a local file",
        )
    },
    Operation {
        params: &[
            // Length limits conflict (Aura-2 1000 and Aura-1 2000 characters per the TTS guide,
            // 2400 per the errors page); the guide's larger figure is used as the bound.
            Param::body("text", "text to speak, up to 1000 characters (Aura-2) or 2000 (Aura-1)")
                .required()
                .range(1.0, 2000.0),
            Param::query("model", "voice, e.g. aura-2-thalia-en or aura-asteria-en")
                .default("aura-asteria-en")
                .suggest(TTS_VOICES),
            // The default encoding is unconfirmed (mp3 per the spec and format table, linear16 per
            // one docs box); mp3 is taken.
            Param::query(
                "encoding",
                "audio encoding (the sandbox makes linear16, mulaw and alaw; given none, linear16 WAV)",
            )
            .one_of(&["linear16", "mulaw", "alaw", "mp3", "opus", "flac", "aac"])
            .default("mp3"),
            Param::query("container", "wav for linear16/mulaw/alaw, ogg for opus, none for bare audio")
                .one_of(&["wav", "ogg", "none"]),
            Param::query("sample_rate", "Hz, e.g. 8000, 16000, 24000, 48000 (per encoding)")
                .int()
                .min(8000.0)
                .max(48000.0),
            Param::query("bit_rate", "bits/s for mp3, opus or aac, e.g. 48000").int().min(4000.0).max(650_000.0),
            Param::query("speed", "speaking rate multiplier").num().default("1.0"),
            CALLBACK,
            CALLBACK_METHOD,
            TAG,
            MIP_OPT_OUT,
        ],
        body: BodyEncoding::Json,
        mutates: false,
        // The audio itself (audio/mpeg, audio/wav, ... by encoding), not JSON (api/deepgram.md §3.2).
        response: ResponseFormat::Bytes,
        ..op("speech_speak", "speech", Method::Post, "/v1/speak", "text to speech; the response is audio bytes")
    },
    Operation {
        // Entity detection is named by the spec but has no parameter on /v1/read (unconfirmed);
        // it is a transcription feature.
        params: &[
            Param::body("text", "text to analyze (give text or url, not both)"),
            Param::body("url", "https URL of a text document (give text or url, not both)"),
            SENTIMENT,
            flag("summarize", "add a summary"),
            TOPICS,
            CUSTOM_TOPIC,
            CUSTOM_TOPIC_MODE,
            INTENTS,
            CUSTOM_INTENT,
            CUSTOM_INTENT_MODE,
            Param::query("language", "language of the text; these features support en only").default("en"),
            CALLBACK,
            CALLBACK_METHOD,
            TAG,
        ],
        exclusive: &[Exclusive { params: &["text", "url"], required: true }],
        body: BodyEncoding::Json,
        mutates: false,
        ..op(
            "text_analyze",
            "text analysis",
            Method::Post,
            "/v1/read",
            "sentiment, topics, intents and summary of a text",
        )
    },
];

/// The roles and permissions a key's scopes may name (api/deepgram.md §6.7).
pub const SCOPES: &[&str] = &[
    "member",
    "admin",
    "owner",
    "project:read",
    "project:write",
    "project:write:settings",
    "project:write:destroy",
    "keys:read",
    "keys:write",
    "members:read",
    "members:read:invites",
    "members:read:scopes",
    "members:write",
    "members:write:invites",
    "members:write:scopes",
    "members:write:kick",
    "admins:read",
    "admins:read:invites",
    "admins:read:scopes",
    "admins:write",
    "admins:write:invites",
    "admins:write:scopes",
    "admins:write:kick",
    "owners:read",
    "owners:read:invites",
    "owners:read:scopes",
    "owners:write",
    "owners:write:invites",
    "owners:write:scopes",
    "owners:write:kick",
    "usage:read",
    "usage:write",
    "billing:read",
    "billing:write",
    "self-hosted:products",
];

/// Whether a key's scope names something Deepgram knows: a role, a permission, or a self-hosted
/// product.
pub fn known_scope(scope: &str) -> bool {
    SCOPES.contains(&scope) || scope.starts_with("self-hosted:product:")
}

/// Deepgram's public speech-to-text models, offered by the transcription form (a custom model's
/// id is taken too). The simulator serves each (`sandbox::deepgram::models`, tested there).
pub const STT_MODELS: &[&str] = &[
    "nova-3",
    "nova-3-general",
    "nova-3-medical",
    "nova-2",
    "nova-2-general",
    "nova-2-meeting",
    "nova-2-phonecall",
    "nova-2-finance",
    "nova-2-medical",
    "enhanced-general",
    "base-general",
    "whisper-large",
];

/// Deepgram's Aura voices the speech form offers (others are taken too).
pub const TTS_VOICES: &[&str] = &[
    "aura-2-thalia-en",
    "aura-2-zeus-en",
    "aura-2-andromeda-en",
    "aura-2-apollo-en",
    "aura-2-helena-en",
    "aura-asteria-en",
    "aura-orion-en",
    "aura-luna-en",
];

/// Live transcription: `GET /v1/listen` upgraded to a WebSocket, the file's audio streamed over
/// it at its real speed. Not among [`OPERATIONS`]: it is no HTTP call (`opsdeck call` cannot
/// send it); the console's "transcribe live" form is made from it, and its values become the
/// socket's query, as a call's would.
pub static LISTEN_LIVE: Operation = Operation {
    params: &[
        Param::whole_body("file", "local audio file to stream at its real speed: WAV, or raw audio with its encoding")
            .file()
            .required(),
        Param::query("model", "e.g. nova-3, nova-2-meeting, or a custom model id")
            .default("base-general")
            .suggest(STT_MODELS),
        LANGUAGE,
        flag("interim_results", "send words as they are heard, before they are final"),
        flag("punctuate", "add punctuation and capitalization"),
        flag("smart_format", "format numbers, dates etc."),
        flag("diarize", "label speakers"),
        flag("numerals", "write numbers as digits"),
        flag("profanity_filter", "mask profanity"),
        flag("filler_words", "keep filler words like uh and um"),
        flag("multichannel", "transcribe each audio channel separately"),
        Param::query("endpointing", "milliseconds of silence that end an utterance, or false"),
        Param::query("utterance_end_ms", "milliseconds without words before an UtteranceEnd (needs interim results)")
            .int()
            .min(1000.0),
        flag("vad_events", "say when speech starts (SpeechStarted)"),
        Param::query("encoding", "encoding of headerless raw audio only").one_of(&[
            "linear16", "linear32", "mulaw", "alaw", "flac", "opus", "ogg-opus", "amr-nb", "amr-wb", "speex", "g729",
        ]),
        Param::query("sample_rate", "Hz of raw audio (needed with encoding)").int().min(1000.0),
        Param::query("channels", "channels of raw audio").int().min(1.0).max(32.0),
        Param::query("keyterm", "key terms to prompt for (Nova-3), comma-separated").list(),
        TAG,
    ],
    body: BodyEncoding::Json,
    mutates: false,
    ..op("transcription_live", "transcription", Method::Get, "/v1/listen", "transcribe an audio file streamed live")
};
