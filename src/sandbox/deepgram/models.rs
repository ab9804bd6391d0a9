//! The model catalogue `GET /v1/models` serves: speech-to-text models with their languages and
//! text-to-speech voices with their metadata (api/deepgram.md §6.6). Real model names; a model's
//! uuid is derived from its canonical name, so it is the same on every machine.

use serde_json::{json, Value};

pub struct Stt {
    pub canonical_name: &'static str,
    pub name: &'static str,
    pub architecture: &'static str,
    pub languages: &'static [&'static str],
    pub version: &'static str,
    pub streaming: bool,
}

pub struct Tts {
    pub canonical_name: &'static str,
    pub name: &'static str,
    pub architecture: &'static str,
    pub accent: &'static str,
    pub age: &'static str,
    pub tags: &'static [&'static str],
    pub use_cases: &'static [&'static str],
    pub version: &'static str,
}

const EN: &[&str] = &["en", "en-US", "en-GB", "en-AU", "en-IN", "en-NZ"];
const MULTI: &[&str] = &["multi", "en", "es", "fr", "de", "hi", "ru", "pt", "ja", "it", "nl"];

pub static STT: &[Stt] = &[
    Stt {
        canonical_name: "nova-3",
        name: "nova-3",
        architecture: "nova-3",
        languages: MULTI,
        version: "2025-04-17.21547",
        streaming: true,
    },
    Stt {
        canonical_name: "nova-3-general",
        name: "general",
        architecture: "nova-3",
        languages: EN,
        version: "2025-04-17.21547",
        streaming: true,
    },
    Stt {
        canonical_name: "nova-3-medical",
        name: "medical",
        architecture: "nova-3",
        languages: EN,
        version: "2025-04-08.16873",
        streaming: true,
    },
    Stt {
        canonical_name: "nova-2",
        name: "nova-2",
        architecture: "nova-2",
        languages: MULTI,
        version: "2024-01-09.29447",
        streaming: true,
    },
    Stt {
        canonical_name: "nova-2-general",
        name: "general",
        architecture: "nova-2",
        languages: MULTI,
        version: "2024-01-09.29447",
        streaming: true,
    },
    Stt {
        canonical_name: "nova-2-meeting",
        name: "meeting",
        architecture: "nova-2",
        languages: &["en", "en-US"],
        version: "2024-02-06.22217",
        streaming: true,
    },
    Stt {
        canonical_name: "nova-2-phonecall",
        name: "phonecall",
        architecture: "nova-2",
        languages: &["en", "en-US"],
        version: "2024-01-06.5664",
        streaming: true,
    },
    Stt {
        canonical_name: "nova-2-finance",
        name: "finance",
        architecture: "nova-2",
        languages: &["en", "en-US"],
        version: "2024-01-09.29447",
        streaming: true,
    },
    Stt {
        canonical_name: "nova-2-medical",
        name: "medical",
        architecture: "nova-2",
        languages: &["en", "en-US"],
        version: "2024-01-09.29447",
        streaming: true,
    },
    Stt {
        canonical_name: "enhanced-general",
        name: "general",
        architecture: "enhanced",
        languages: &["en", "es", "fr", "de"],
        version: "2022-05-18.0",
        streaming: true,
    },
    Stt {
        canonical_name: "base-general",
        name: "general",
        architecture: "base",
        languages: &["en", "es", "fr", "de", "ja"],
        version: "2021-11-10.1",
        streaming: true,
    },
    Stt {
        canonical_name: "whisper-large",
        name: "large",
        architecture: "whisper",
        languages: MULTI,
        version: "2023-07-31.0",
        streaming: false,
    },
];

pub static TTS: &[Tts] = &[
    Tts {
        canonical_name: "aura-2-thalia-en",
        name: "thalia",
        architecture: "aura-2",
        accent: "American",
        age: "Adult",
        tags: &["feminine", "clear", "confident"],
        use_cases: &["Casual chat", "Customer service", "IVR"],
        version: "2025-04-07.0",
    },
    Tts {
        canonical_name: "aura-2-zeus-en",
        name: "zeus",
        architecture: "aura-2",
        accent: "American",
        age: "Adult",
        tags: &["masculine", "deep", "trustworthy"],
        use_cases: &["IVR"],
        version: "2025-04-07.0",
    },
    Tts {
        canonical_name: "aura-2-andromeda-en",
        name: "andromeda",
        architecture: "aura-2",
        accent: "American",
        age: "Adult",
        tags: &["feminine", "casual", "expressive"],
        use_cases: &["Customer service", "Interactive voice response"],
        version: "2025-04-07.0",
    },
    Tts {
        canonical_name: "aura-2-apollo-en",
        name: "apollo",
        architecture: "aura-2",
        accent: "American",
        age: "Adult",
        tags: &["masculine", "confident", "comfortable"],
        use_cases: &["Casual chat"],
        version: "2025-04-07.0",
    },
    Tts {
        canonical_name: "aura-2-helena-en",
        name: "helena",
        architecture: "aura-2",
        accent: "American",
        age: "Adult",
        tags: &["feminine", "caring", "natural"],
        use_cases: &["IVR", "Casual chat"],
        version: "2025-04-07.0",
    },
    Tts {
        canonical_name: "aura-asteria-en",
        name: "asteria",
        architecture: "aura",
        accent: "American",
        age: "Adult",
        tags: &["feminine"],
        use_cases: &["Advertising"],
        version: "2023-10-10.0",
    },
    Tts {
        canonical_name: "aura-orion-en",
        name: "orion",
        architecture: "aura",
        accent: "American",
        age: "Adult",
        tags: &["masculine"],
        use_cases: &["Informative"],
        version: "2023-10-10.0",
    },
    Tts {
        canonical_name: "aura-luna-en",
        name: "luna",
        architecture: "aura",
        accent: "American",
        age: "Young Adult",
        tags: &["feminine"],
        use_cases: &["IVR"],
        version: "2023-10-10.0",
    },
];

/// A stable uuid for a model: FNV-1a of its canonical name, laid out as a version-4 uuid.
pub fn uuid_of(canonical_name: &str) -> String {
    let mut a = 0xcbf2_9ce4_8422_2325_u64;
    let mut b = 0x8422_2325_cbf2_9ce4_u64;
    for byte in canonical_name.bytes() {
        a = (a ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
        b = (b ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(5);
    }
    let h = format!("{a:016x}{b:016x}");
    format!("{}-{}-4{}-a{}-{}", &h[0..8], &h[8..12], &h[13..16], &h[17..20], &h[20..32])
}

pub fn stt_json(m: &Stt) -> Value {
    json!({
        "name": m.name,
        "canonical_name": m.canonical_name,
        "architecture": m.architecture,
        "languages": m.languages,
        "version": m.version,
        "uuid": uuid_of(m.canonical_name),
        "batch": true,
        "streaming": m.streaming,
        "formatted_output": m.architecture != "whisper",
    })
}

pub fn tts_json(m: &Tts) -> Value {
    json!({
        "name": m.name,
        "canonical_name": m.canonical_name,
        "architecture": m.architecture,
        "languages": ["en", "en-US"],
        "version": m.version,
        "uuid": uuid_of(m.canonical_name),
        "metadata": {
            "accent": m.accent,
            "age": m.age,
            "color": "#C58DFF",
            "image": format!("https://static.deepgram.com/examples/avatars/{}.jpg", m.name),
            "sample": format!("https://static.deepgram.com/examples/{}.wav", m.canonical_name),
            "tags": m.tags,
            "use_cases": m.use_cases,
        },
    })
}

/// The STT model a `model` query names: a canonical name (`nova-3`, `nova-2-meeting`), or an
/// architecture alone (`nova-2` is `nova-2-general`'s family).
pub fn stt(model: &str) -> Option<&'static Stt> {
    STT.iter().find(|m| m.canonical_name == model).or_else(|| STT.iter().find(|m| m.architecture == model))
}

pub fn tts(model: &str) -> Option<&'static Tts> {
    TTS.iter().find(|m| m.canonical_name == model)
}

/// `GET /v1/models/{uuid}`: either kind.
pub fn by_uuid(uuid: &str) -> Option<Value> {
    STT.iter()
        .find(|m| uuid_of(m.canonical_name) == uuid)
        .map(stt_json)
        .or_else(|| TTS.iter().find(|m| uuid_of(m.canonical_name) == uuid).map(tts_json))
}

/// `GET /v1/models`: the latest of each (every version with `include_outdated`, which the
/// simulator's catalogue, holding one version each, answers the same).
pub fn catalogue() -> Value {
    json!({"stt": STT.iter().map(stt_json).collect::<Vec<_>>(), "tts": TTS.iter().map(tts_json).collect::<Vec<_>>()})
}
