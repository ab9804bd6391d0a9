//! What the console shows of Deepgram beyond raw JSON: a project as the hub of its keys,
//! members, balances and usage (usage as a table by day, charted as daily bars); readable
//! columns for keys, members and models; a new key's secret shown once, with a key to copy it
//! and a warning that it will not be shown again; a transcript read as paragraphs with speakers
//! and times (utterances or words when there are no paragraphs, a section per channel), beside
//! its metadata and warnings; a text analysis (summary, sentiment, topics, intents); the audio
//! text-to-speech answers, once saved, by format, rate, channels and duration; what a project's
//! deletion takes with it; and the checks a form needs before anything is sent (dates, scopes,
//! blank text, a file that is no audio). Pure functions over JSON and bytes, so the rules are
//! tested without a terminal.

use std::path::Path;

use serde_json::{Map, Value};

use crate::catalog::{items, Operation, Service};
use crate::client::{Target, Values};
use crate::format::{human_bytes, plural, time_text};
use crate::json_index::{Item, Kind};
use crate::table::{Column, Layout};
use crate::tui::components::detail::{
    array, columns, fact, text, Align, Detail, DetailCommand, DetailKey, Table, Tone,
};
pub use crate::tui::services::deepgram_audio::{audio_facts, audio_problem, looks_like_audio, AudioFacts};
use crate::tui::services::{LiveStream, RowAction, Seen, ServiceConsole};

pub struct Deepgram;

impl ServiceConsole for Deepgram {
    fn layout(&self, op: &Operation) -> Option<Layout> {
        layout(op)
    }

    fn cell_tone(&self, header: &str, text: &str) -> Option<Tone> {
        match header {
            "scopes" if text.split(", ").any(|s| s == "owner") => Some(Tone::Changed),
            "scopes" if text.split(", ").any(|s| s == "admin") => Some(Tone::Pending),
            "kind" if text == "tts" => Some(Tone::Info),
            _ => None,
        }
    }

    fn detail(&self, op: &Operation, body: &Value) -> Option<Detail> {
        detail_for(op, body)
    }

    /// A project opens as the hub of what belongs to it (asked for whole, which replaces the
    /// view); a key or a member opens as a view with its one action; a model as its facts.
    fn open_row(&self, list_op: &str, record: &Value, scope: &dyn Fn(&str) -> Option<String>) -> Option<RowAction> {
        match list_op {
            "projects_list" => {
                let id = record.get("project_id")?.as_str()?.to_owned();
                let fetch = [("project_id".to_owned(), id)].into_iter().collect();
                Some(RowAction::View(Box::new(project_view(record)), Some(("projects_get", fetch))))
            }
            "keys_list" => Some(RowAction::View(Box::new(key_view(record, scope("project_id"))), None)),
            "members_list" => Some(RowAction::View(Box::new(member_view(record, scope("project_id"))), None)),
            "models_list" => Some(RowAction::View(Box::new(model_view(record)), None)),
            _ => None,
        }
    }

    fn remembered(&self, list_op: &str, record: &Map<String, Value>) -> Vec<(&'static str, String)> {
        remembered(list_op, record)
    }

    fn label(&self, record: &Map<String, Value>) -> Option<String> {
        let comment = record.get("api_key").and_then(|k| k.get("comment")).and_then(Value::as_str);
        let named = ["name", "email"].iter().find_map(|key| record.get(*key)?.as_str());
        comment.or(named).filter(|s| !s.is_empty()).map(str::to_owned)
    }

    fn suggest(&self, op: &Operation, _record: &Map<String, Value>, _target: &Target, values: &mut Values) {
        suggest(op, values, today());
    }

    fn effects(&self, op: &Operation, _values: &Values, _known: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
        match op.name {
            "keys_delete" => vec!["the key stops working at once: anything still using it gets 401".to_owned()],
            "members_remove" => {
                vec!["the member loses access to the project, and the keys they made stop working".to_owned()]
            }
            _ => Vec::new(),
        }
    }

    fn effects_seen(&self, op: &Operation, values: &Values, seen: &dyn Fn(&str) -> Option<Seen>) -> Vec<String> {
        match op.name {
            "projects_delete" => project_cascade(values, seen),
            "keys_delete" => key_named(values, seen).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    fn row_keys(&self, list_op: &str) -> &'static [(char, &'static str)] {
        match list_op {
            "keys_list" => &[('d', "delete")],
            _ => &[],
        }
    }

    fn record_action(
        &self,
        key: char,
        record: &Value,
        scope: &dyn Fn(&str) -> Option<String>,
    ) -> Option<(&'static str, Values)> {
        let api_key = record.get("api_key").unwrap_or(record);
        let id = api_key.get("api_key_id").and_then(Value::as_str)?;
        match key {
            'd' => Some((
                "keys_delete",
                pairs(&[("project_id", &scope("project_id")?), ("key_id", id)]).into_iter().collect(),
            )),
            _ => None,
        }
    }

    fn form_problems(
        &self,
        op: &Operation,
        values: &Values,
        _known: &dyn Fn(&str) -> Option<Value>,
    ) -> Vec<(&'static str, String)> {
        form_problems(op, values, today())
    }

    fn live_form(&self) -> Option<&'static Operation> {
        Some(&crate::catalog::LISTEN_LIVE)
    }

    fn live_stream(&self, op: &Operation, values: &Values, target: &Target) -> Result<LiveStream, String> {
        super::deepgram_live::plan(op, values, target)
    }

    /// Models come as two lists, speech to text and the voices: the browser shows both.
    fn record_arrays(&self, op: &Operation) -> &'static [&'static str] {
        if op.name == "models_list" {
            &["stt", "tts"]
        } else {
            &[]
        }
    }

    fn text_lines(&self, op: &Operation) -> &'static [&'static str] {
        match op.name {
            "text_analyze" | "speech_speak" => &["text"],
            _ => &[],
        }
    }

    fn saved_view(&self, op: &Operation, content_type: Option<&str>, bytes: &[u8], path: &Path) -> Option<Detail> {
        (op.name == "speech_speak").then(|| audio_view(content_type, bytes, path))
    }
}

/// Today's date (UTC), for the usage range a form starts with.
fn today() -> time::Date {
    time::OffsetDateTime::now_utc().date()
}

/// How many days of usage a project's usage view asks for.
pub const USAGE_DAYS: i64 = 30;

/// The usage range ending `today`: the last [`USAGE_DAYS`] days, both ends included.
pub fn usage_range(today: time::Date) -> (String, String) {
    let start = today - time::Duration::days(USAGE_DAYS - 1);
    (start.to_string(), today.to_string())
}

fn suggest(op: &Operation, values: &mut Values, today: time::Date) {
    if op.service != Service::Deepgram {
        return;
    }
    if op.name == "usage_get" {
        let (start, end) = usage_range(today);
        values.entry("start".to_owned()).or_insert(start);
        values.entry("end".to_owned()).or_insert(end);
    }
    if op.name == "transcription_live" {
        // Words before they are final are what a live view is for: asked for, in the form.
        values.entry("interim_results".to_owned()).or_insert_with(|| "true".to_owned());
    }
}

/// The columns of Deepgram's lists: a key by what it is for and who made it, a member by
/// email and role, a model by name and what it does.
pub fn layout(op: &Operation) -> Option<Layout> {
    if op.service != Service::Deepgram {
        return None;
    }
    let paths: &[&str] = match op.name {
        "projects_list" => &["name", "project_id"],
        "keys_list" => &[
            "api_key.comment",
            "api_key.scopes",
            "api_key.created",
            "api_key.expiration_date",
            "member.email",
            "api_key.tags",
            "api_key.api_key_id",
        ],
        "members_list" => &["email", "first_name", "last_name", "scopes", "member_id"],
        "balances_list" => &["amount", "units", "purchase_order_id", "balance_id"],
        "models_list" => {
            &["name", "canonical_name", "kind", "architecture", "languages", "version", "streaming", "uuid"]
        }
        _ => return None,
    };
    let columns = paths
        .iter()
        .map(|path| {
            let mut column = Column::new(path.split('.').map(str::to_owned).collect());
            column.money = *path == "amount";
            column
        })
        .collect();
    Some(Layout { columns, cell })
}

/// A list cell: lists (scopes, languages, tags) as comma-separated words, times to the second,
/// and a model's kind (text-to-speech voices carry metadata, speech-to-text models do not).
fn cell(record: Item<'_>, column: &Column) -> Option<String> {
    if column.path == ["kind"] {
        return Some(if record.get("metadata").is_some() { "tts" } else { "stt" }.to_owned());
    }
    let mut item = record;
    for key in &column.path {
        item = item.get(key)?;
    }
    match item.kind() {
        Kind::Array => {
            let words: Vec<String> = item
                .children()
                .map(|c| c.as_str().map_or_else(|| c.to_value().to_string(), |s| s.to_string()))
                .collect();
            Some(words.join(", "))
        }
        _ if matches!(column.header(), "created" | "expiration_date") => item.as_str().map(|s| time_text(&s)),
        _ => None,
    }
}

/// Ids a selected row gives beyond the generic rules: a key's id (nested under `api_key`) is
/// the `key_id` of its delete; a model's `uuid` is `model_id`.
pub fn remembered(list_op: &str, record: &Map<String, Value>) -> Vec<(&'static str, String)> {
    match list_op {
        "keys_list" => {
            let id = record.get("api_key").and_then(|k| k.get("api_key_id")).and_then(Value::as_str);
            id.map(|id| ("key_id", id.to_owned())).into_iter().collect()
        }
        "models_list" => {
            record.get("uuid").and_then(Value::as_str).map(|id| ("model_id", id.to_owned())).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// The structured view of a Deepgram answer, for the operations that have one.
pub fn detail_for(op: &Operation, body: &Value) -> Option<Detail> {
    if op.service != Service::Deepgram {
        return None;
    }
    match op.name {
        "projects_get" => body.get("project_id").map(|_| project_view(body)),
        "keys_create" => body.get("key").map(|_| new_key_view(body)),
        "usage_get" => body.get("results").map(|_| usage_view(body)),
        "transcription_transcribe" => {
            if body.get("results").is_some() {
                Some(transcript_view(body))
            } else {
                body.get("request_id").map(|_| callback_view(body))
            }
        }
        "text_analyze" => {
            if body.get("results").is_some() {
                Some(analysis_view(body))
            } else {
                body.get("request_id").map(|_| callback_view(body))
            }
        }
        "models_get" => body.get("uuid").map(|_| model_view(body)),
        _ => None,
    }
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn key(key: char, label: &'static str, command: DetailCommand) -> DetailKey {
    DetailKey { key, label, command }
}

/// A project as the hub of what belongs to it: each key lists one of its parts (the usage of
/// the last 30 days as a table by day and a chart), makes a key, renames or deletes it.
pub fn project_view(project: &Value) -> Detail {
    let id = text(project.get("project_id"));
    let name = text(project.get("name"));
    let mut facts = vec![fact("name", name.clone()), fact("project id", id.clone())];
    if let Some(company) = project.get("company").filter(|c| !c.is_null()) {
        facts.push(fact("company", text(Some(company))));
    }
    if let Some(opt_out) = project.get("mip_opt_out") {
        facts.push(fact("model improvement opt-out", text(Some(opt_out))));
    }
    let scoped = || pairs(&[("project_id", &id)]);
    let (start, end) = usage_range(today());
    let usage = pairs(&[("project_id", &id), ("start", &start), ("end", &end)]);
    Detail {
        title: format!("project {}", if name.is_empty() { &id } else { &name }),
        subject: Some(format!("project {id}")),
        facts,
        note: Some(format!(
            "a API keys · m members · b balances · u usage of the last {USAGE_DAYS} days (a daily chart) · \
             n new key · e rename · d delete"
        )),
        commands: vec![
            key('a', "keys", DetailCommand::Open { op: "keys_list", values: scoped() }),
            key('m', "members", DetailCommand::Open { op: "members_list", values: scoped() }),
            key('b', "balances", DetailCommand::Open { op: "balances_list", values: scoped() }),
            key('u', "usage", DetailCommand::Open { op: "usage_get", values: usage }),
            key('n', "new key", DetailCommand::Form { op: "keys_create", values: scoped() }),
            key(
                'e',
                "rename",
                DetailCommand::Form { op: "projects_update", values: pairs(&[("project_id", &id), ("name", &name)]) },
            ),
            key('d', "delete", DetailCommand::Send { op: "projects_delete", values: scoped() }),
        ],
        record: Some(project.clone()),
        ..Detail::default()
    }
}

/// A key of a project's list: what it is for, its scopes and dates, who made it; `d` deletes it.
fn key_view(record: &Value, project: Option<String>) -> Detail {
    let api_key = record.get("api_key").unwrap_or(&Value::Null);
    let member = record.get("member").unwrap_or(&Value::Null);
    let id = text(api_key.get("api_key_id"));
    let comment = text(api_key.get("comment"));
    let words = |v: Option<&Value>| array(v).iter().map(|s| text(Some(s))).collect::<Vec<_>>().join(", ");
    let mut facts = vec![
        fact("comment", comment.clone()),
        fact("key id", id.clone()),
        fact("scopes", words(api_key.get("scopes"))),
        fact("tags", words(api_key.get("tags"))),
        fact("created", time_text(&text(api_key.get("created")))),
        fact(
            "expires",
            api_key.get("expiration_date").and_then(Value::as_str).map_or_else(|| "never".to_owned(), time_text),
        ),
        fact(
            "made by",
            format!(
                "{} {} <{}>",
                text(member.get("first_name")),
                text(member.get("last_name")),
                text(member.get("email"))
            )
            .trim()
            .to_owned(),
        ),
    ];
    facts.retain(|(_, value, _)| !value.is_empty());
    let mut commands = Vec::new();
    if let Some(project) = project {
        commands.push(key(
            'd',
            "delete",
            DetailCommand::Send { op: "keys_delete", values: pairs(&[("project_id", &project), ("key_id", &id)]) },
        ));
    }
    Detail {
        title: format!("API key {}", if comment.is_empty() { &id } else { &comment }),
        facts,
        note: Some("the secret of a key is shown only once, when it is made: no list shows it".to_owned()),
        commands,
        record: Some(record.clone()),
        ..Detail::default()
    }
}

/// A member of a project: who, with what role; `x` removes them.
fn member_view(record: &Value, project: Option<String>) -> Detail {
    let id = text(record.get("member_id"));
    let email = text(record.get("email"));
    let scopes: Vec<String> = array(record.get("scopes")).iter().map(|s| text(Some(s))).collect();
    let mut facts = vec![
        fact("email", email.clone()),
        fact("name", format!("{} {}", text(record.get("first_name")), text(record.get("last_name"))).trim().to_owned()),
        fact("scopes", scopes.join(", ")),
        fact("member id", id.clone()),
    ];
    facts.retain(|(_, value, _)| !value.is_empty());
    let mut commands = Vec::new();
    if let Some(project) = project {
        commands.push(key(
            'x',
            "remove",
            DetailCommand::Send {
                op: "members_remove",
                values: pairs(&[("project_id", &project), ("member_id", &id)]),
            },
        ));
    }
    Detail { title: format!("member {email}"), facts, commands, record: Some(record.clone()), ..Detail::default() }
}

/// A model: what it does (speech to text or a voice), its architecture, languages, version.
fn model_view(model: &Value) -> Detail {
    let tts = model.get("metadata").is_some();
    let words = |v: Option<&Value>| array(v).iter().map(|s| text(Some(s))).collect::<Vec<_>>().join(", ");
    let mut facts = vec![
        fact("kind", if tts { "text to speech (a voice)" } else { "speech to text" }.to_owned()),
        fact("name", text(model.get("name"))),
        fact("canonical name", text(model.get("canonical_name"))),
        fact("architecture", text(model.get("architecture"))),
        fact("languages", words(model.get("languages"))),
        fact("version", text(model.get("version"))),
        fact("uuid", text(model.get("uuid"))),
    ];
    if !tts {
        for name in ["batch", "streaming", "formatted_output"] {
            if let Some(v) = model.get(name) {
                facts.push(fact(name, text(Some(v))));
            }
        }
    }
    if let Some(meta) = model.get("metadata") {
        for name in ["accent", "age"] {
            if let Some(v) = meta.get(name) {
                facts.push(fact(name, text(Some(v))));
            }
        }
        facts.push(fact("tags", words(meta.get("tags"))));
        facts.push(fact("use cases", words(meta.get("use_cases"))));
    }
    facts.retain(|(_, value, _)| !value.is_empty());
    let name = text(model.get("canonical_name"));
    Detail { title: format!("model {name}"), facts, record: Some(model.clone()), ..Detail::default() }
}

/// A key just made: its secret, shown only this once, with `c` to copy it and a warning.
pub fn new_key_view(body: &Value) -> Detail {
    let secret = text(body.get("key"));
    let words = |v: Option<&Value>| array(v).iter().map(|s| text(Some(s))).collect::<Vec<_>>().join(", ");
    let mut facts = vec![
        fact("comment", text(body.get("comment"))),
        fact("key id", text(body.get("api_key_id"))),
        fact("scopes", words(body.get("scopes"))),
        fact("tags", words(body.get("tags"))),
        fact(
            "expires",
            body.get("expiration_date").and_then(Value::as_str).map_or_else(|| "never".to_owned(), time_text),
        ),
    ];
    facts.retain(|(_, value, _)| !value.is_empty());
    Detail {
        title: "new API key · copy its secret now".to_owned(),
        facts,
        texts: vec![("secret (shown only this once)".to_owned(), secret.clone())],
        note: Some(
            "⚠ Deepgram shows this secret only now: it will not be shown again, by any list or view. \
             Press c to copy it and keep it somewhere safe."
                .to_owned(),
        ),
        commands: vec![key(
            'c',
            "copy the secret",
            DetailCommand::Copy { text: secret, what: "the new key's secret".to_owned() },
        )],
        ..Detail::default()
    }
}

/// A number of hours as people read it.
/// Hours to the hundredth, totals too (a total of 123 hours read beside days of `0.25` looked
/// rounded), grouped by thousands like every count of the view.
fn hours_text(hours: f64) -> String {
    let two = format!("{hours:.2}");
    crate::format::money_text(&two).unwrap_or(two)
}

/// A count grouped by thousands, as the hours beside it.
fn count_text(n: u64) -> String {
    crate::format::thousands(usize::try_from(n).unwrap_or(usize::MAX))
}

fn count(value: Option<&Value>) -> u64 {
    value.and_then(Value::as_u64).unwrap_or(0)
}

/// Usage by day: hours of audio, requests, characters spoken and tokens read, with their totals;
/// `c` shows the daily bars under the list.
pub fn usage_view(body: &Value) -> Detail {
    let days = array(body.get("results"));
    let mut rows = Vec::new();
    let (mut hours, mut requests, mut characters, mut tokens) = (0.0, 0, 0, 0);
    for day in days {
        let h = day.get("hours").and_then(Value::as_f64).unwrap_or(0.0);
        let r = count(day.get("requests"));
        let c = count(day.get("tts").and_then(|t| t.get("characters")));
        let t =
            count(day.get("tokens").and_then(|t| t.get("in"))) + count(day.get("tokens").and_then(|t| t.get("out")));
        hours += h;
        requests += r;
        characters += c;
        tokens += t;
        rows.push(vec![text(day.get("start")), hours_text(h), count_text(r), count_text(c), count_text(t)]);
    }
    let mut tones = vec![None; rows.len()];
    rows.push(vec![
        "total".to_owned(),
        hours_text(hours),
        count_text(requests),
        count_text(characters),
        count_text(tokens),
    ]);
    tones.push(Some(Tone::Total));
    let (start, end) = (text(body.get("start")), text(body.get("end")));
    let resolution = body.get("resolution");
    let unit = resolution.and_then(|r| r.get("units")).and_then(Value::as_str).unwrap_or("day");
    Detail {
        title: format!("usage {start} → {end}"),
        facts: vec![
            fact("days with usage", days.len().to_string()),
            fact("audio hours", hours_text(hours)),
            fact("requests", count_text(requests)),
            fact("resolution", format!("1 {unit}")),
        ],
        tables: vec![Table {
            title: format!("by {unit}"),
            columns: columns(&[
                (unit, Align::Left),
                ("hours", Align::Right),
                ("requests", Align::Right),
                ("tts chars", Align::Right),
                ("tokens", Align::Right),
            ]),
            rows,
            tones,
        }],
        note: days.is_empty().then(|| "no usage in this range".to_owned()),
        commands: vec![key('c', "chart (daily bars)", DetailCommand::Chart)],
        ..Detail::default()
    }
}

/// Seconds as `m:ss.s`.
pub fn clock(seconds: f64) -> String {
    let seconds = seconds.max(0.0);
    let minutes = (seconds / 60.0).floor();
    format!("{}:{:04.1}", minutes as u64, seconds - minutes * 60.0)
}

fn seconds(value: Option<&Value>) -> f64 {
    value.and_then(Value::as_f64).unwrap_or(0.0)
}

fn speaker_label(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_u64).map(|s| format!("Speaker {s}"))
}

/// A word as written: punctuated when the answer has it.
fn word_text(word: &Value) -> String {
    text(word.get("punctuated_word").or_else(|| word.get("word")))
}

/// One channel's text: its paragraphs (speaker and times per paragraph), else the utterances
/// of that channel, else its words in runs of one speaker, else the bare transcript.
fn channel_text(channel: &Value, index: usize, utterances: &[Value]) -> String {
    let alternative = array(channel.get("alternatives")).first().cloned().unwrap_or(Value::Null);
    let mut lines = Vec::new();
    let paragraphs = array(alternative.get("paragraphs").and_then(|p| p.get("paragraphs")));
    if !paragraphs.is_empty() {
        for paragraph in paragraphs {
            let speaker = speaker_label(paragraph.get("speaker")).map(|s| format!("{s}: ")).unwrap_or_default();
            let sentences: Vec<String> =
                array(paragraph.get("sentences")).iter().map(|s| text(s.get("text"))).collect();
            lines.push(format!(
                "[{}–{}] {speaker}{}",
                clock(seconds(paragraph.get("start"))),
                clock(seconds(paragraph.get("end"))),
                sentences.join(" ")
            ));
        }
        return lines.join("\n");
    }
    let own: Vec<&Value> = utterances
        .iter()
        .filter(|u| u.get("channel").and_then(Value::as_u64).is_none_or(|c| c == index as u64))
        .collect();
    if !own.is_empty() {
        for utterance in own {
            let speaker = speaker_label(utterance.get("speaker")).map(|s| format!("{s}: ")).unwrap_or_default();
            lines.push(format!(
                "[{}–{}] {speaker}{}",
                clock(seconds(utterance.get("start"))),
                clock(seconds(utterance.get("end"))),
                text(utterance.get("transcript"))
            ));
        }
        return lines.join("\n");
    }
    let words = array(alternative.get("words"));
    if !words.is_empty() {
        // Runs of one speaker, each with its start and end.
        let mut run: Vec<&Value> = Vec::new();
        let flush = |run: &mut Vec<&Value>, lines: &mut Vec<String>| {
            let (Some(first), Some(last)) = (run.first(), run.last()) else { return };
            let speaker = speaker_label(first.get("speaker")).map(|s| format!("{s}: ")).unwrap_or_default();
            let said: Vec<String> = run.iter().map(|w| word_text(w)).collect();
            lines.push(format!(
                "[{}–{}] {speaker}{}",
                clock(seconds(first.get("start"))),
                clock(seconds(last.get("end"))),
                said.join(" ")
            ));
            run.clear();
        };
        for word in words {
            if run.last().is_some_and(|last| last.get("speaker") != word.get("speaker")) {
                flush(&mut run, &mut lines);
            }
            run.push(word);
        }
        flush(&mut run, &mut lines);
        return lines.join("\n");
    }
    text(alternative.get("transcript"))
}

/// A transcription: the transcript of each channel as paragraphs with speakers and times,
/// the metadata (duration, channels, model, language) and the warnings the answer carries
/// (the simulator says when its transcript is synthetic); the JSON stays in the inspector.
pub fn transcript_view(body: &Value) -> Detail {
    let metadata = body.get("metadata").unwrap_or(&Value::Null);
    let results = body.get("results").unwrap_or(&Value::Null);
    let channels = array(results.get("channels"));
    let utterances = array(results.get("utterances"));
    let duration = seconds(metadata.get("duration"));
    let models: Vec<String> = metadata
        .get("model_info")
        .and_then(Value::as_object)
        .map(|info| {
            info.values()
                .map(|m| {
                    let name = text(m.get("name"));
                    let arch = text(m.get("arch"));
                    if arch.is_empty() || name.contains(&arch) {
                        name
                    } else {
                        format!("{name} ({arch})")
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let first_alternative = channels.first().and_then(|c| array(c.get("alternatives")).first());
    let mut facts = vec![
        fact("duration", format!("{duration:.2} s ({})", clock(duration))),
        fact("channels", text(metadata.get("channels"))),
        fact("model", models.join(", ")),
    ];
    if let Some(language) = channels.first().and_then(|c| c.get("detected_language")) {
        facts.push(fact("language", text(Some(language))));
    }
    if let Some(confidence) = first_alternative.and_then(|a| a.get("confidence")).and_then(Value::as_f64) {
        facts.push(fact("confidence", format!("{:.0}%", confidence * 100.0)));
    }
    let words = first_alternative.map_or(0, |a| array(a.get("words")).len());
    facts.push(fact("words", words.to_string()));
    facts.push(fact("request id", text(metadata.get("request_id"))));
    facts.retain(|(_, value, _)| !value.is_empty());
    let warnings: Vec<String> = array(metadata.get("warnings"))
        .iter()
        .map(|w| {
            let message = text(w.get("message"));
            let parameter = text(w.get("parameter"));
            if parameter.is_empty() {
                format!("⚠ {message}")
            } else {
                format!("⚠ {parameter}: {message}")
            }
        })
        .collect();
    let mut texts = Vec::new();
    for (index, channel) in channels.iter().enumerate() {
        let title = if channels.len() > 1 { format!("channel {index}") } else { "transcript".to_owned() };
        let said = channel_text(channel, index, utterances);
        texts.push((title, if said.is_empty() { "(nothing was heard)".to_owned() } else { said }));
    }
    let (mut tables, summary) = intelligence(results);
    if let Some(summary) = summary {
        texts.insert(0, ("summary".to_owned(), summary));
    }
    // Words as a table only when no paragraphs or utterances say the text already (the tables
    // come before the text, and hundreds of rows would bury it); the JSON has them all.
    let has_paragraphs = first_alternative.is_some_and(|a| a.get("paragraphs").is_some());
    if let Some(alternative) = first_alternative.filter(|_| !has_paragraphs && utterances.is_empty()) {
        let words = array(alternative.get("words"));
        if !words.is_empty() {
            let with_speaker = words.iter().any(|w| w.get("speaker").is_some());
            let mut spec = vec![
                ("word", Align::Left),
                ("start", Align::Right),
                ("end", Align::Right),
                ("confidence", Align::Right),
            ];
            if with_speaker {
                spec.push(("speaker", Align::Right));
            }
            let rows = words
                .iter()
                .take(200)
                .map(|w| {
                    let mut row = vec![
                        word_text(w),
                        format!("{:.2}", seconds(w.get("start"))),
                        format!("{:.2}", seconds(w.get("end"))),
                        w.get("confidence").and_then(Value::as_f64).map(|c| format!("{c:.2}")).unwrap_or_default(),
                    ];
                    if with_speaker {
                        row.push(text(w.get("speaker")));
                    }
                    row
                })
                .collect();
            tables.push(Table {
                title: format!("words ({})", words.len()),
                columns: columns(&spec),
                rows,
                tones: Vec::new(),
            });
        }
    }
    let channel_count = metadata.get("channels").and_then(Value::as_u64).unwrap_or(channels.len() as u64);
    Detail {
        title: format!("transcript · {duration:.1} s · {}", plural(channel_count as usize, "channel")),
        facts,
        tables,
        texts,
        note: (!warnings.is_empty()).then(|| warnings.join("\n")),
        ..Detail::default()
    }
}

/// The sentiment, topics and intents sections of a transcription or an analysis as tables,
/// and its summary (v2 `short`, or `text`), when asked for.
fn intelligence(results: &Value) -> (Vec<Table>, Option<String>) {
    let mut tables = Vec::new();
    let summary = results.get("summary").and_then(|s| s.get("short").or_else(|| s.get("text"))).map(|s| text(Some(s)));
    if let Some(sentiments) = results.get("sentiments") {
        let segments = array(sentiments.get("segments"));
        let mut rows = Vec::new();
        let mut tones = Vec::new();
        for segment in segments {
            let sentiment = text(segment.get("sentiment"));
            tones.push(sentiment_tone(&sentiment));
            rows.push(vec![sentiment, score(segment.get("sentiment_score")), text(segment.get("text"))]);
        }
        if let Some(average) = sentiments.get("average") {
            let sentiment = text(average.get("sentiment"));
            tones.push(Some(Tone::Total));
            rows.push(vec![format!("{sentiment} (average)"), score(average.get("sentiment_score")), String::new()]);
        }
        tables.push(Table {
            title: format!("sentiment ({})", plural(segments.len(), "segment")),
            columns: columns(&[("sentiment", Align::Left), ("score", Align::Right), ("text", Align::Left)]),
            rows,
            tones,
        });
    }
    for (section, inner, name) in [("topics", "topics", "topic"), ("intents", "intents", "intent")] {
        let Some(found) = results.get(section) else { continue };
        let mut rows = Vec::new();
        for segment in array(found.get("segments")) {
            for item in array(segment.get(inner)) {
                let confidence = item.get("confidence_score").or_else(|| item.get("confidence"));
                rows.push(vec![text(item.get(name)), score(confidence), text(segment.get("text"))]);
            }
        }
        tables.push(Table {
            title: format!("{section} ({})", rows.len()),
            columns: columns(&[(name, Align::Left), ("confidence", Align::Right), ("text", Align::Left)]),
            rows,
            tones: Vec::new(),
        });
    }
    (tables, summary)
}

fn score(value: Option<&Value>) -> String {
    value.and_then(Value::as_f64).map(|v| format!("{v:.2}")).unwrap_or_default()
}

/// How a sentiment reads.
pub fn sentiment_tone(sentiment: &str) -> Option<Tone> {
    Some(match sentiment {
        "positive" => Tone::Good,
        "negative" => Tone::Bad,
        "neutral" => Tone::Quiet,
        _ => return None,
    })
}

/// A text analysis: the summary, the average sentiment, and sentiment, topics and intents by
/// segment, each only when asked for.
pub fn analysis_view(body: &Value) -> Detail {
    let metadata = body.get("metadata").unwrap_or(&Value::Null);
    // The current OpenAPI file nests both one level deeper (api/deepgram.md §6.3): read either.
    let metadata = metadata.get("metadata").unwrap_or(metadata);
    let results = body.get("results").unwrap_or(&Value::Null);
    let (tables, summary) = intelligence(results);
    let mut facts =
        vec![fact("language", text(metadata.get("language"))), fact("request id", text(metadata.get("request_id")))];
    if let Some(average) = results.get("sentiments").and_then(|s| s.get("average")) {
        let sentiment = text(average.get("sentiment"));
        let tone = sentiment_tone(&sentiment);
        facts.insert(
            0,
            ("sentiment".to_owned(), format!("{sentiment} ({})", score(average.get("sentiment_score"))), tone),
        );
    }
    facts.retain(|(_, value, _)| !value.is_empty());
    let asked = tables.len() + usize::from(summary.is_some());
    Detail {
        title: "text analysis".to_owned(),
        facts,
        tables,
        texts: summary.map(|s| vec![("summary".to_owned(), s)]).unwrap_or_default(),
        note: (asked == 0).then(|| {
            "nothing was asked for: set sentiment, summarize, topics or intents to true in the form (o)".to_owned()
        }),
        ..Detail::default()
    }
}

/// An answer to come later at a callback URL: only its request id.
fn callback_view(body: &Value) -> Detail {
    Detail {
        title: "accepted: the result goes to the callback".to_owned(),
        facts: vec![fact("request id", text(body.get("request_id")))],
        ..Detail::default()
    }
}

/// What a project's deletion takes with it: its keys, members and balances (counted where this
/// tab has listed them for this project) and its usage history.
/// Which key a delete takes away, as the keys list showed it: its comment and scopes.
fn key_named(values: &Values, seen: &dyn Fn(&str) -> Option<Seen>) -> Option<String> {
    let id = values.get("key_id")?;
    let keys = seen("keys_list")?;
    let record = keys.records.iter().find(|r| {
        let api_key = r.get("api_key").unwrap_or(r);
        api_key.get("api_key_id").and_then(Value::as_str) == Some(id)
    })?;
    let api_key = record.get("api_key").unwrap_or(record);
    let comment = text(api_key.get("comment"));
    let scopes = array(api_key.get("scopes")).iter().map(|s| text(Some(s))).collect::<Vec<_>>().join(", ");
    let named = if comment.is_empty() { format!("key {id}") } else { format!("key “{comment}” ({id})") };
    Some(if scopes.is_empty() { format!("deletes {named}") } else { format!("deletes {named} with scopes {scopes}") })
}

fn project_cascade(values: &Values, seen: &dyn Fn(&str) -> Option<Seen>) -> Vec<String> {
    let Some(project) = values.get("project_id") else { return Vec::new() };
    let name = seen("projects_list")
        .and_then(|s| s.records.into_iter().find(|r| r.get("project_id").and_then(Value::as_str) == Some(project)))
        .and_then(|r| r.get("name").and_then(Value::as_str).map(str::to_owned));
    let counted = |list: &str, what: &str| -> String {
        match seen(list).filter(|s| s.values.get("project_id") == Some(project)) {
            Some(s) if s.more => format!("more than {}", plural(s.records.len(), what)),
            Some(s) => plural(s.records.len(), what),
            None => format!("its {what}s"),
        }
    };
    let whose = name.map_or_else(|| format!("project {project}"), |n| format!("project {n} ({project})"));
    vec![
        format!("deletes {whose} and everything in it:"),
        format!(
            "{}, {} and {} go with it, and its usage history",
            counted("keys_list", "API key"),
            counted("members_list", "member"),
            counted("balances_list", "balance")
        ),
        "every key of the project stops working at once".to_owned(),
    ]
}

fn parse_date(text: &str) -> Option<time::Date> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(text.trim(), &format).ok()
}

/// What the catalog cannot see in a Deepgram form: dates that are no dates or run backwards,
/// scopes Deepgram does not know, an expiry in the past, text that is only blank, a file that
/// is no audio.
fn form_problems(op: &Operation, values: &Values, today: time::Date) -> Vec<(&'static str, String)> {
    let mut problems = Vec::new();
    if op.service != Service::Deepgram {
        return problems;
    }
    let given = |name: &str| values.get(name).filter(|v| !v.trim().is_empty());
    match op.name {
        "usage_get" => {
            let mut dates = Vec::new();
            for name in ["start", "end"] {
                if let Some(value) = given(name) {
                    match parse_date(value) {
                        Some(date) => dates.push(date),
                        None => problems.push((
                            if name == "start" { "start" } else { "end" },
                            format!("'{}' is no date: write YYYY-MM-DD, e.g. {today}", value.trim()),
                        )),
                    }
                }
            }
            if let ([start, end], true) = (dates.as_slice(), problems.is_empty()) {
                if start > end {
                    problems.push(("end", format!("ends ({end}) before it starts ({start})")));
                }
            }
        }
        "keys_create" => {
            if let (Some(value), Some(param)) = (given("scopes"), op.param("scopes")) {
                let unknown: Vec<&str> = items(param, value)
                    .into_iter()
                    .map(str::trim)
                    .filter(|s| !s.is_empty() && !crate::catalog::deepgram_known_scope(s))
                    .collect();
                if !unknown.is_empty() {
                    problems.push((
                        "scopes",
                        format!(
                            "unknown scope {}: use member, admin, owner or permissions like usage:read",
                            unknown.join(", ")
                        ),
                    ));
                }
            }
            if let Some(value) = given("expiration_date") {
                match time::OffsetDateTime::parse(value.trim(), &time::format_description::well_known::Rfc3339) {
                    Ok(at) if at.date() < today => {
                        problems.push(("expiration_date", format!("{} is in the past", value.trim())))
                    }
                    Ok(_) => {}
                    Err(_) => problems.push((
                        "expiration_date",
                        format!(
                            "'{}' is no RFC 3339 time: write e.g. {}T00:00:00Z",
                            value.trim(),
                            today + time::Duration::days(90)
                        ),
                    )),
                }
            }
        }
        "text_analyze" | "speech_speak" if values.get("text").is_some_and(|t| !t.is_empty() && t.trim().is_empty()) => {
            problems.push(("text", "the text is only blank space: give some words".to_owned()));
        }
        "transcription_transcribe" | "transcription_live" => {
            if let (Some(value), Some(param)) = (given("file"), op.param("file")) {
                let encoding = given("encoding").is_some();
                for item in items(param, value) {
                    let path = crate::catalog::file_path(item.trim());
                    if let Some(problem) = audio_problem(Path::new(path), encoding) {
                        problems.push(("file", problem));
                    }
                }
            }
        }
        _ => {}
    }
    problems
}

/// Spoken audio once saved: where it is, its format, rate, channels and duration.
pub fn audio_view(content_type: Option<&str>, bytes: &[u8], path: &Path) -> Detail {
    let facts = audio_facts(content_type, bytes);
    let mut shown = vec![
        fact("file", path.display().to_string()),
        fact("size", human_bytes(bytes.len() as u64)),
        fact("format", facts.format.clone()),
        fact("content type", content_type.unwrap_or("").to_owned()),
    ];
    if let Some(rate) = facts.sample_rate {
        shown.push(fact("sample rate", format!("{rate} Hz")));
    }
    if let Some(channels) = facts.channels {
        shown.push(fact("channels", channels.to_string()));
    }
    if let Some(bits) = facts.bits {
        shown.push(fact("bits per sample", bits.to_string()));
    }
    shown.push(fact(
        "duration",
        facts.duration.map_or_else(|| "unknown for this format".to_owned(), |d| format!("{d:.2} s")),
    ));
    shown.retain(|(_, value, _)| !value.is_empty());
    let title = match facts.duration {
        Some(d) => format!("speech saved · {d:.1} s"),
        None => "speech saved".to_owned(),
    };
    Detail {
        title,
        facts: shown,
        note: Some(
            "transcription_transcribe (:deepgram transcription) with this file as `file` reads it back".to_owned(),
        ),
        ..Detail::default()
    }
}

#[cfg(test)]
#[path = "deepgram_tests.rs"]
mod tests;
