//! Deepgram's text intelligence, simulated: sentiment, topics, intents and a summary of English
//! text, for `POST /v1/read` and for the transcripts of `/v1/listen` (api/deepgram.md §3.3, §6.1,
//! §6.3).
//!
//! Every method is small, deterministic and explainable; none is a model:
//! - **sentiment**: a hand-written lexicon of word valences (`data/sentiment.txt`), turned by
//!   negation ("not good"), intensifiers ("very good"), softeners ("a bit slow") and "but", summed
//!   per sentence and squashed into [-1, 1]; runs of sentences with the same label make a segment.
//! - **topics**: keyword statistics per passage (up to [`PASSAGE_SENTENCES`] sentences): hits of
//!   hand-written topic keyword lists (`data/topics.txt`), or else the passage's repeated content
//!   words and word pairs, with a confidence from their share and count; custom topics by overlap.
//! - **intents**: verb-led phrases ("cancel my order") found from a list of verbs
//!   (`data/intents.txt`) in a position where they ask for something; custom intents by overlap.
//! - **summary**: extractive: sentences ranked by the summed document frequency of their content
//!   words (and a small bonus for coming early), the best one to three kept in text order.
//!
//! Words are the whitespace-split words of the whole text; `start_word` and `end_word` are
//! indexes into them, both inclusive. Nothing here panics on any input (tested with random text).

use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// The analyses a request asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features {
    pub sentiment: bool,
    /// `/v1/read`: `summarize=true` or `v2`.
    pub summarize: bool,
    pub topics: bool,
    pub intents: bool,
    pub custom_topics: Vec<String>,
    /// `custom_topic_mode=strict`: only the custom topics.
    pub custom_topic_strict: bool,
    pub custom_intents: Vec<String>,
    /// `custom_intent_mode=strict`: only the custom intents.
    pub custom_intent_strict: bool,
}

/// What [`analyze`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The `results` object of a `/v1/read` answer, only the requested sections, in this order:
    /// `summary` `{text}`, `sentiments` `{segments, average}`, `topics` `{segments}`, `intents`
    /// `{segments}` (the flat shape of the docs' examples, api/deepgram.md §6.3).
    pub results: Value,
    /// `(metadata key, input_tokens, output_tokens)` per requested feature, e.g.
    /// `("summary_info", 103, 33)`, for the lead to write into `metadata.*_info`.
    pub tokens: Vec<(&'static str, u64, u64)>,
}

/// Scores from -[`NEUTRAL_BAND`] to +[`NEUTRAL_BAND`] are `neutral`.
pub const NEUTRAL_BAND: f64 = 0.333;
/// A sentence longer than this many words is cut, so text without punctuation still has sentences.
const MAX_SENTENCE_WORDS: usize = 60;
/// A sentiment segment holds at most this many sentences.
const SEGMENT_SENTENCES: usize = 5;
/// Topics are found per passage of this many consecutive sentences.
const PASSAGE_SENTENCES: usize = 4;
/// Topics shown per segment (custom ones come on top of these).
const MAX_TOPICS: usize = 3;
/// A topic or custom match below this confidence is left out.
const MIN_TOPIC_CONFIDENCE: f64 = 0.25;
/// VADER-like squashing constant: a sentence's valence sum `s` scores `s / sqrt(s² + α)`.
const ALPHA: f64 = 15.0;
/// Lexicon valences run from -4 to 4; a single word's score is its valence over this.
const MAX_VALENCE: f64 = 4.0;

const NEGATORS: &[&str] = &[
    "not",
    "no",
    "never",
    "none",
    "nobody",
    "nothing",
    "neither",
    "nor",
    "without",
    "hardly",
    "barely",
    "cannot",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "don't",
    "doesn't",
    "didn't",
    "won't",
    "wouldn't",
    "can't",
    "couldn't",
    "shouldn't",
    "haven't",
    "hasn't",
    "hadn't",
    "ain't",
    "isnt",
    "arent",
    "wasnt",
    "werent",
    "dont",
    "doesnt",
    "didnt",
    "wont",
    "wouldnt",
    "cant",
    "couldnt",
    "shouldnt",
    "havent",
    "hasnt",
    "hadnt",
];
const INTENSIFIERS: &[&str] = &[
    "very",
    "really",
    "extremely",
    "so",
    "too",
    "incredibly",
    "absolutely",
    "totally",
    "completely",
    "super",
    "highly",
    "truly",
    "utterly",
    "exceptionally",
    "remarkably",
    "particularly",
    "most",
    "such",
    "deeply",
];
const SOFTENERS: &[&str] = &[
    "slightly", "somewhat", "fairly", "rather", "quite", "bit", "little", "kinda", "sort", "mostly", "partly", "almost",
];
/// Words that make what follows them count more, and what precedes them less ("but").
const CONTRASTS: &[&str] = &["but", "however", "although", "though", "yet"];
/// Words that make the next word a noun, not a verb ("my order").
const DETERMINERS: &[&str] = &[
    "a", "an", "the", "my", "your", "our", "their", "his", "her", "its", "this", "that", "these", "those", "some",
    "any", "every", "each", "no", "another", "one",
];
/// Words after which a verb from the list asks for something ("to cancel", "please cancel").
const INTENT_LEADS: &[&str] = &[
    "to", "please", "i", "we", "you", "me", "us", "let's", "lets", "and", "or", "kindly", "then", "just", "also", "now",
];
/// Words before a verb that show a wish ("want to", "would like to", "can you").
const DESIRE_CUES: &[&str] = &[
    "want", "wanted", "wanna", "like", "need", "needs", "trying", "try", "hoping", "hope", "please", "can", "could",
    "would", "help", "planning", "wish", "must", "let", "let's",
];

/// The word lists of `data/`, parsed once.
struct Lexicons {
    valence: HashMap<String, f64>,
    /// Topic names, in file order.
    topic_names: Vec<String>,
    /// Keyword stem → the topics it points to.
    topic_words: HashMap<String, Vec<usize>>,
    /// Keyword stem pair → the topics it points to.
    topic_pairs: HashMap<(String, String), Vec<usize>>,
    /// First word of an intent verb → the verb phrases (as normalised words) starting with it.
    verbs: HashMap<String, Vec<Vec<String>>>,
    stop: HashSet<String>,
}

static LEXICONS: LazyLock<Lexicons> = LazyLock::new(Lexicons::load);

fn data_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#'))
}

impl Lexicons {
    fn load() -> Lexicons {
        let mut valence = HashMap::new();
        for line in data_lines(include_str!("data/sentiment.txt")) {
            let mut parts = line.split_whitespace();
            if let (Some(word), Some(score)) = (parts.next(), parts.next()) {
                if let Ok(score) = score.parse::<f64>() {
                    valence.insert(word.to_lowercase(), score);
                }
            }
        }
        let mut topic_names = Vec::new();
        let mut topic_words: HashMap<String, Vec<usize>> = HashMap::new();
        let mut topic_pairs: HashMap<(String, String), Vec<usize>> = HashMap::new();
        for line in data_lines(include_str!("data/topics.txt")) {
            let Some((name, words)) = line.split_once(':') else {
                continue;
            };
            let index = topic_names.len();
            topic_names.push(name.trim().to_string());
            for keyword in words.split(',') {
                let stems: Vec<String> = keyword.split_whitespace().map(|word| stem(&normalise(word))).collect();
                match stems.as_slice() {
                    [one] => topic_words.entry(one.clone()).or_default().push(index),
                    [first, second] => topic_pairs.entry((first.clone(), second.clone())).or_default().push(index),
                    _ => {}
                }
            }
        }
        let mut verbs: HashMap<String, Vec<Vec<String>>> = HashMap::new();
        for line in data_lines(include_str!("data/intents.txt")) {
            let words: Vec<String> = line.split_whitespace().map(normalise).collect();
            if let Some(first) = words.first() {
                verbs.entry(first.clone()).or_default().push(words);
            }
        }
        // Longer phrases first, so "sign up" wins over a bare "sign".
        for phrases in verbs.values_mut() {
            phrases.sort_by_key(|phrase| std::cmp::Reverse(phrase.len()));
        }
        let stop =
            data_lines(include_str!("data/stopwords.txt")).flat_map(str::split_whitespace).map(normalise).collect();
        Lexicons { valence, topic_names, topic_words, topic_pairs, verbs, stop }
    }

    fn valence(&self, word: &Word) -> Option<f64> {
        self.valence.get(&word.norm).or_else(|| self.valence.get(&word.stem)).copied()
    }

    /// A word that counts for keyword statistics: not a stop word and holding a letter.
    fn is_content(&self, word: &Word) -> bool {
        !word.stem.is_empty() && word.norm.chars().any(char::is_alphabetic) && !self.stop.contains(&word.norm)
    }
}

/// Lower case, curly apostrophes made straight, and leading and trailing punctuation trimmed
/// (inner apostrophes and hyphens stay: "don't", "e-mail").
fn normalise(word: &str) -> String {
    word.chars()
        .map(|c| if c == '\u{2019}' { '\'' } else { c })
        .collect::<String>()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
}

/// A light stemmer for matching: a possessive `'s` and a plural `s` dropped ("cars" → "car",
/// "policies" → "policy"); words of three letters or fewer, and `-ss`/`-us`/`-is`, are kept.
fn stem(norm: &str) -> String {
    let base = norm.strip_suffix("'s").unwrap_or(norm);
    let chars = base.chars().count();
    if chars > 4 {
        if let Some(root) = base.strip_suffix("ies") {
            return format!("{root}y");
        }
    }
    if chars > 3 && base.ends_with('s') && !base.ends_with("ss") && !base.ends_with("us") && !base.ends_with("is") {
        return base[..base.len() - 1].to_string();
    }
    base.to_string()
}

/// One whitespace-separated word of the text.
struct Word {
    /// Byte offsets of the word in the text.
    start: usize,
    end: usize,
    norm: String,
    stem: String,
    /// The word ends a sentence (`.`, `!`, `?`, `…` or a blank line after it).
    ends_sentence: bool,
    /// The word ends a clause (`,`, `;`, `:` or a sentence end): negation stops there.
    ends_clause: bool,
}

/// Inclusive word indexes of one sentence or segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    first: usize,
    last: usize,
}

impl Span {
    fn len(self) -> usize {
        self.last + 1 - self.first
    }
}

const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc", "ltd", "co", "no", "approx",
    "dept", "mt", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "a.m",
    "p.m",
];

/// The text cut into words and sentences.
struct Doc<'a> {
    text: &'a str,
    words: Vec<Word>,
    sentences: Vec<Span>,
}

impl<'a> Doc<'a> {
    fn new(text: &'a str) -> Doc<'a> {
        let mut words = Vec::new();
        let mut start: Option<usize> = None;
        let mut newlines = 0usize;
        for (at, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
            if c.is_whitespace() {
                if let Some(begin) = start.take() {
                    words.push(Word::new(&text[begin..at], begin, at));
                    newlines = 0;
                }
                if c == '\n' {
                    newlines += 1;
                    if newlines >= 2 {
                        if let Some(last) = words.last_mut() {
                            last.ends_sentence = true;
                            last.ends_clause = true;
                        }
                    }
                }
            } else if start.is_none() {
                start = Some(at);
            }
        }
        let mut sentences = Vec::new();
        let mut first = 0;
        for (index, word) in words.iter_mut().enumerate() {
            if index + 1 - first >= MAX_SENTENCE_WORDS {
                word.ends_sentence = true;
                word.ends_clause = true;
            }
            if word.ends_sentence {
                sentences.push(Span { first, last: index });
                first = index + 1;
            }
        }
        if first < words.len() {
            sentences.push(Span { first, last: words.len() - 1 });
        }
        Doc { text, words, sentences }
    }

    fn text_of(&self, span: Span) -> &'a str {
        match (self.words.get(span.first), self.words.get(span.last)) {
            (Some(first), Some(last)) if first.start <= last.end => &self.text[first.start..last.end],
            _ => "",
        }
    }

    fn words_of(&self, span: Span) -> &[Word] {
        self.words.get(span.first..=span.last).unwrap_or(&[])
    }
}

impl Word {
    fn new(raw: &str, start: usize, end: usize) -> Word {
        let norm = normalise(raw);
        let stem = stem(&norm);
        let tail = raw.trim_end_matches(['"', '\'', ')', ']', '}', '\u{201d}', '\u{2019}', '»']);
        let ends_sentence =
            tail.ends_with(['!', '?', '…', '。', '！', '？']) || (tail.ends_with('.') && !is_abbreviation(tail));
        let ends_clause = ends_sentence || tail.ends_with([',', ';', ':', '—', '–']);
        Word { start, end, norm, stem, ends_sentence, ends_clause }
    }
}

/// "Dr.", "e.g.", a single initial "J.": a full stop that does not end a sentence.
fn is_abbreviation(tail: &str) -> bool {
    let body = tail.trim_end_matches('.').trim_start_matches(|c: char| !c.is_alphanumeric());
    let lower = body.to_lowercase();
    ABBREVIATIONS.contains(&lower.as_str()) || (body.chars().count() == 1 && body.chars().all(char::is_uppercase))
}

fn round3(value: f64) -> f64 {
    if value.is_finite() {
        (value * 1000.0).round() / 1000.0
    } else {
        0.0
    }
}

fn label(score: f64) -> &'static str {
    if score > NEUTRAL_BAND {
        "positive"
    } else if score < -NEUTRAL_BAND {
        "negative"
    } else {
        "neutral"
    }
}

/// Input size in tokens, the way the 150K limit is checked: each run of letters and digits counts
/// one token per started 10 characters (so a 25-letter word is 3), and every other character
/// that is not whitespace (punctuation, symbols, emoji) counts one.
pub fn tokens(text: &str) -> u64 {
    let mut count = 0u64;
    let mut run = 0u64;
    for c in text.chars() {
        if c.is_alphanumeric() {
            run += 1;
            continue;
        }
        count += run.div_ceil(10);
        run = 0;
        if !c.is_whitespace() {
            count += 1;
        }
    }
    count + run.div_ceil(10)
}

/// Word-level sentiment for transcripts: the word's lexicon valence over 4 (so in [-1, 1]), with
/// the same neutral band as segments; a word not in the lexicon is `("neutral", 0.0)`.
pub fn word_sentiment(word: &str) -> (&'static str, f64) {
    let word = Word::new(word, 0, 0);
    let score = LEXICONS.valence(&word).map_or(0.0, |valence| (valence / MAX_VALENCE).clamp(-1.0, 1.0));
    (label(score), round3(score))
}

/// Analyse `text` for the requested features (see the module's documentation for the methods).
pub fn analyze(text: &str, features: &Features) -> Analysis {
    let doc = Doc::new(text);
    let input = tokens(text);
    let mut results = Map::new();
    let mut counts = Vec::new();
    if features.summarize {
        let summary = summarize(&doc);
        counts.push(("summary_info", input, tokens(&summary)));
        results.insert("summary".into(), json!({ "text": summary }));
    }
    if features.sentiment {
        counts.push(("sentiment_info", input, input));
        results.insert("sentiments".into(), sentiments(&doc));
    }
    let topics_asked = features.topics || !features.custom_topics.is_empty();
    if topics_asked {
        counts.push(("topics_info", input, input));
        results.insert("topics".into(), topics(&doc, features));
    }
    let intents_asked = features.intents || !features.custom_intents.is_empty();
    if intents_asked {
        counts.push(("intents_info", input, input));
        results.insert("intents".into(), intents(&doc, features));
    }
    Analysis { results: Value::Object(results), tokens: counts }
}

// ---------------------------------------------------------------------------------------------
// Sentiment

/// A sentence's score: each lexicon word's valence, times -0.75 after a negator among the three
/// words before it in the same clause, times 1.5 after an intensifier ("very") or 0.5 after a
/// softener ("slightly") just before it, times 0.5 before and 1.5 after a contrast ("but");
/// the sum `s` is squashed to `s / sqrt(s² + 15)`, in (-1, 1).
fn sentence_score(words: &[Word]) -> f64 {
    let lexicons = &*LEXICONS;
    let contrast = words.iter().rposition(|word| CONTRASTS.contains(&word.norm.as_str()));
    let mut sum = 0.0;
    for (index, word) in words.iter().enumerate() {
        let Some(mut valence) = lexicons.valence(word) else {
            continue;
        };
        let mut negated = false;
        for back in 1..=3 {
            let Some(before) = index.checked_sub(back).and_then(|at| words.get(at)) else {
                break;
            };
            if before.ends_clause {
                break;
            }
            let before = before.norm.as_str();
            if NEGATORS.contains(&before) || before.ends_with("n't") {
                negated = true;
            }
            if back <= 2 && INTENSIFIERS.contains(&before) {
                valence *= 1.5;
            }
            if back <= 2 && SOFTENERS.contains(&before) {
                valence *= 0.5;
            }
        }
        if negated {
            valence *= -0.75;
        }
        match contrast {
            Some(at) if index < at => valence *= 0.5,
            Some(at) if index > at => valence *= 1.5,
            _ => {}
        }
        sum += valence;
    }
    (sum / (sum * sum + ALPHA).sqrt()).clamp(-1.0, 1.0)
}

/// Segments: runs of up to [`SEGMENT_SENTENCES`] consecutive sentences with the same label, each
/// scored by the word-weighted mean of its sentences; `average` is the word-weighted mean of
/// the segments.
fn sentiments(doc: &Doc) -> Value {
    let mut segments: Vec<(Span, f64, usize)> = Vec::new(); // span, score × words, sentences
    for &sentence in &doc.sentences {
        let score = sentence_score(doc.words_of(sentence));
        let weighted = score * sentence.len() as f64;
        match segments.last_mut() {
            Some((span, total, count))
                if *count < SEGMENT_SENTENCES && label(*total / span.len() as f64) == label(score) =>
            {
                span.last = sentence.last;
                *total += weighted;
                *count += 1;
            }
            _ => segments.push((sentence, weighted, 1)),
        }
    }
    let mut weighted_sum = 0.0;
    let mut words = 0usize;
    let rendered: Vec<Value> = segments
        .iter()
        .map(|&(span, total, _)| {
            weighted_sum += total;
            words += span.len();
            let score = round3(total / span.len() as f64);
            json!({
                "text": doc.text_of(span),
                "start_word": span.first,
                "end_word": span.last,
                "sentiment": label(score),
                "sentiment_score": score,
            })
        })
        .collect();
    let average = if words == 0 { 0.0 } else { round3(weighted_sum / words as f64) };
    json!({
        "segments": rendered,
        "average": { "sentiment": label(average), "sentiment_score": average },
    })
}

// ---------------------------------------------------------------------------------------------
// Topics

/// Confidence from evidence: a share of the passage's evidence, times `n / (n + 1)` for `n` hits
/// (one hit alone is 0.5, three are 0.75).
fn confidence(share: f64, hits: usize) -> f64 {
    let hits = hits as f64;
    round3(share * hits / (hits + 1.0))
}

/// Passages: [`PASSAGE_SENTENCES`] consecutive sentences at a time.
fn passages(doc: &Doc) -> Vec<Span> {
    doc.sentences
        .chunks(PASSAGE_SENTENCES)
        .filter_map(|chunk| Some(Span { first: chunk.first()?.first, last: chunk.last()?.last }))
        .collect()
}

/// Hits of each lexicon topic in `words`: a keyword pair counts once for both its words.
fn topic_hits(words: &[Word]) -> HashMap<usize, usize> {
    let lexicons = &*LEXICONS;
    let mut hits: HashMap<usize, usize> = HashMap::new();
    let mut index = 0;
    while let Some(word) = words.get(index) {
        if let Some(next) = words.get(index + 1) {
            if let Some(topics) = lexicons.topic_pairs.get(&(word.stem.clone(), next.stem.clone())) {
                for &topic in topics {
                    *hits.entry(topic).or_default() += 1;
                }
                index += 2;
                continue;
            }
        }
        if lexicons.is_content(word) {
            for &topic in lexicons.topic_words.get(&word.stem).into_iter().flatten() {
                *hits.entry(topic).or_default() += 1;
            }
        }
        index += 1;
    }
    hits
}

/// With no lexicon topic in a passage: its content words (and pairs of adjacent content words)
/// said at least twice become topics, named by the words themselves ("Subscription", "Garden
/// party"), with confidence `0.8 × n / (n + 1)` for `n` repeats.
fn repeated_terms(words: &[Word]) -> Vec<(String, f64)> {
    let lexicons = &*LEXICONS;
    let mut singles: HashMap<&str, (usize, &str)> = HashMap::new();
    let mut pairs: HashMap<(&str, &str), (usize, usize)> = HashMap::new();
    let mut order = 0;
    for (index, word) in words.iter().enumerate() {
        let good = lexicons.is_content(word)
            && word.norm.chars().count() >= 3
            && word.norm.chars().all(|c| c.is_alphabetic() || c == '-' || c == '\'');
        if !good {
            continue;
        }
        order += 1;
        singles.entry(&word.stem).or_insert((0, &word.norm)).0 += 1;
        if let Some(next) = words.get(index + 1) {
            if !word.ends_clause && lexicons.is_content(next) && next.norm.chars().count() >= 3 {
                pairs.entry((&word.stem, &next.stem)).or_insert((0, order)).0 += 1;
            }
        }
    }
    let mut found: Vec<(String, usize)> = Vec::new();
    let mut used: HashSet<&str> = HashSet::new();
    let mut repeated_pairs: Vec<_> = pairs.into_iter().filter(|(_, (n, _))| *n >= 2).collect();
    repeated_pairs.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.1 .1.cmp(&b.1 .1)));
    for ((first, second), (count, _)) in repeated_pairs {
        used.insert(first);
        used.insert(second);
        let name = format!("{first} {second}");
        found.push((capitalise(&name), count));
    }
    let mut repeated: Vec<_> = singles.into_iter().filter(|(stem, (n, _))| *n >= 2 && !used.contains(stem)).collect();
    repeated.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    for (_, (count, surface)) in repeated {
        found.push((capitalise(surface), count));
    }
    found.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    found.into_iter().map(|(name, count)| (name, round3(0.8 * confidence(1.0, count)))).collect()
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A custom topic or intent as matching words: its content-word stems (all its stems when it
/// has only stop words), and the lexicon topic it names, if any ("cars" → Cars).
struct Custom {
    name: String,
    stems: Vec<String>,
    topic: Option<usize>,
}

impl Custom {
    fn new(name: &str) -> Custom {
        let lexicons = &*LEXICONS;
        let words: Vec<Word> =
            name.split_whitespace().map(|raw| Word::new(raw, 0, 0)).filter(|word| !word.stem.is_empty()).collect();
        let mut stems: Vec<String> =
            words.iter().filter(|word| lexicons.is_content(word)).map(|word| word.stem.clone()).collect();
        if stems.is_empty() {
            stems = words.iter().map(|word| word.stem.clone()).collect();
        }
        stems.dedup();
        let lower = name.trim().to_lowercase();
        let topic = lexicons.topic_names.iter().position(|topic| topic.to_lowercase() == lower).or_else(|| {
            // Every word a keyword of one same topic.
            let mut common: Option<Vec<usize>> = None;
            for stem in &stems {
                let topics = lexicons.topic_words.get(stem)?;
                common = Some(match common {
                    None => topics.clone(),
                    Some(prior) => prior.into_iter().filter(|t| topics.contains(t)).collect(),
                });
            }
            common?.first().copied()
        });
        Custom { name: name.trim().to_string(), stems, topic }
    }

    /// `coverage × n / (n + 1)`: coverage is the share of its stems found in `words` (1 when its
    /// lexicon topic has hits there), `n` the occurrences of its stems plus those hits.
    fn score(&self, words: &[Word], topic_hits: &HashMap<usize, usize>) -> f64 {
        if self.stems.is_empty() {
            return 0.0;
        }
        let mut found = 0;
        let mut occurrences = 0;
        for stem in &self.stems {
            let count = words.iter().filter(|word| &word.stem == stem).count();
            occurrences += count;
            found += usize::from(count > 0);
        }
        let lexicon_hits = self.topic.and_then(|topic| topic_hits.get(&topic).copied()).unwrap_or(0);
        let coverage = if lexicon_hits > 0 { 1.0 } else { found as f64 / self.stems.len() as f64 };
        if coverage < 0.5 {
            return 0.0;
        }
        confidence(coverage, occurrences.max(lexicon_hits))
    }
}

/// Per passage: each lexicon topic with hits, confidence `share × n / (n + 1)` (its share of the
/// passage's topic hits, `n` its hits), the best [`MAX_TOPICS`]; with none, the repeated terms;
/// custom topics on top (strict mode: only those). Passages with no topic are left out.
fn topics(doc: &Doc, features: &Features) -> Value {
    let lexicons = &*LEXICONS;
    let custom: Vec<Custom> = features.custom_topics.iter().map(|t| Custom::new(t)).collect();
    let mut segments = Vec::new();
    for passage in passages(doc) {
        let words = doc.words_of(passage);
        let hits = topic_hits(words);
        let mut found: Vec<(String, f64)> = Vec::new();
        for topic in &custom {
            let score = topic.score(words, &hits);
            if score >= MIN_TOPIC_CONFIDENCE && !found.iter().any(|(name, _)| name.eq_ignore_ascii_case(&topic.name)) {
                found.push((topic.name.clone(), score));
            }
        }
        if features.topics && !features.custom_topic_strict {
            let total: usize = hits.values().sum();
            let mut automatic: Vec<(String, f64)> = hits
                .iter()
                .filter_map(|(&topic, &n)| {
                    let name = lexicons.topic_names.get(topic)?;
                    Some((name.clone(), confidence(n as f64 / total as f64, n)))
                })
                .collect();
            if automatic.is_empty() {
                automatic = repeated_terms(words);
            }
            automatic.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let automatic = automatic
                .into_iter()
                .filter(|(name, score)| {
                    *score >= MIN_TOPIC_CONFIDENCE && !found.iter().any(|(known, _)| known.eq_ignore_ascii_case(name))
                })
                .take(MAX_TOPICS)
                .collect::<Vec<_>>();
            found.extend(automatic);
        }
        if found.is_empty() {
            continue;
        }
        let topics: Vec<Value> =
            found.into_iter().map(|(topic, score)| json!({ "topic": topic, "confidence_score": score })).collect();
        segments.push(json!({
            "text": doc.text_of(passage),
            "start_word": passage.first,
            "end_word": passage.last,
            "topics": topics,
        }));
    }
    json!({ "segments": segments })
}

// ---------------------------------------------------------------------------------------------
// Intents

/// Intents of one sentence: a verb phrase of `data/intents.txt` at the sentence's start or after
/// a lead word ("to", "please", "you", "I"), not after a determiner ("my order" is a noun),
/// followed by its object: up to three content words after any determiners, up to the next stop
/// word or clause end. "I want to cancel my subscription" → "Cancel subscription". Confidence
/// 0.6, +0.25 with a wish among the four words before ("want", "like", "can", "please"), +0.1
/// with an object, -0.2 without; at most 0.95.
fn sentence_intents(words: &[Word]) -> Vec<(String, f64)> {
    let lexicons = &*LEXICONS;
    let mut found: Vec<(String, f64)> = Vec::new();
    let mut index = 0;
    while let Some(word) = words.get(index) {
        let previous = index.checked_sub(1).and_then(|at| words.get(at));
        let placed = match previous {
            None => true,
            Some(before) => {
                !DETERMINERS.contains(&before.norm.as_str())
                    && (before.ends_clause || INTENT_LEADS.contains(&before.norm.as_str()))
            }
        };
        let phrase = lexicons.verbs.get(&word.norm).and_then(|phrases| {
            phrases.iter().find(|phrase| {
                phrase
                    .iter()
                    .enumerate()
                    .all(|(offset, part)| words.get(index + offset).is_some_and(|word| &word.norm == part))
            })
        });
        let (Some(phrase), true) = (phrase, placed) else {
            index += 1;
            continue;
        };
        let mut at = index + phrase.len();
        let mut object: Vec<&str> = Vec::new();
        let verb_end = words.get(at - 1).is_some_and(|word| word.ends_clause);
        if !verb_end {
            while let Some(next) = words.get(at) {
                if object.is_empty() && DETERMINERS.contains(&next.norm.as_str()) {
                    at += 1;
                    if next.ends_clause {
                        break;
                    }
                    continue;
                }
                if !lexicons.is_content(next) || !next.norm.chars().any(char::is_alphabetic) {
                    break;
                }
                object.push(&next.norm);
                at += 1;
                if next.ends_clause || object.len() == 3 {
                    break;
                }
            }
        }
        let wish = (1..=4).any(|back| {
            index
                .checked_sub(back)
                .and_then(|at| words.get(at))
                .is_some_and(|before| DESIRE_CUES.contains(&before.norm.as_str()))
        });
        let mut score: f64 = 0.6;
        if wish {
            score += 0.25;
        }
        score += if object.is_empty() { -0.2 } else { 0.1 };
        let mut name = capitalise(&phrase.join(" "));
        for part in &object {
            name.push(' ');
            name.push_str(part);
        }
        if !found.iter().any(|(known, _)| *known == name) {
            found.push((name, round3(score.min(0.95))));
        }
        index = at.max(index + 1);
    }
    found
}

/// Per sentence: its intents, custom intents on top (a custom intent matches when at least half
/// its content words are in the sentence: confidence `0.5 + 0.45 × share`; strict mode: only
/// those). Sentences with none are left out.
fn intents(doc: &Doc, features: &Features) -> Value {
    let custom: Vec<Custom> = features.custom_intents.iter().map(|t| Custom::new(t)).collect();
    let mut segments = Vec::new();
    for &sentence in &doc.sentences {
        let words = doc.words_of(sentence);
        let mut found: Vec<(String, f64)> = Vec::new();
        for intent in &custom {
            if intent.stems.is_empty() {
                continue;
            }
            let present = intent.stems.iter().filter(|stem| words.iter().any(|word| &word.stem == *stem)).count();
            let share = present as f64 / intent.stems.len() as f64;
            if share >= 0.5 && !found.iter().any(|(name, _)| name.eq_ignore_ascii_case(&intent.name)) {
                found.push((intent.name.clone(), round3(0.5 + 0.45 * share)));
            }
        }
        if features.intents && !features.custom_intent_strict {
            for (name, score) in sentence_intents(words) {
                if !found.iter().any(|(known, _)| known.eq_ignore_ascii_case(&name)) {
                    found.push((name, score));
                }
            }
        }
        if found.is_empty() {
            continue;
        }
        let intents: Vec<Value> =
            found.into_iter().map(|(intent, score)| json!({ "intent": intent, "confidence_score": score })).collect();
        segments.push(json!({
            "text": doc.text_of(sentence),
            "start_word": sentence.first,
            "end_word": sentence.last,
            "intents": intents,
        }));
    }
    json!({ "segments": segments })
}

// ---------------------------------------------------------------------------------------------
// Summary

/// Sentence indexes, best first: a sentence scores the sum of its content words' frequencies in
/// the whole text (over the highest frequency) divided by the square root of its content-word
/// count, times a bonus from 1.2 for the first sentence down to 1.0 for the last, halved for a
/// sentence of fewer than four words. Ties go to the earlier sentence.
fn ranked_sentences(doc: &Doc) -> Vec<usize> {
    let lexicons = &*LEXICONS;
    let mut frequency: HashMap<&str, usize> = HashMap::new();
    for word in doc.words.iter().filter(|word| lexicons.is_content(word)) {
        *frequency.entry(&word.stem).or_default() += 1;
    }
    let highest = frequency.values().copied().max().unwrap_or(1).max(1) as f64;
    let count = doc.sentences.len().max(1) as f64;
    let mut scored: Vec<(usize, f64)> = doc
        .sentences
        .iter()
        .enumerate()
        .map(|(index, &sentence)| {
            let words = doc.words_of(sentence);
            let (sum, content) =
                words.iter().filter(|word| lexicons.is_content(word)).fold((0.0, 0usize), |(sum, n), word| {
                    let f = frequency.get(word.stem.as_str()).copied().unwrap_or(0);
                    (sum + f as f64 / highest, n + 1)
                });
            let mut score = sum / (content.max(1) as f64).sqrt();
            score *= 1.0 + 0.2 * (1.0 - index as f64 / count);
            if sentence.len() < 4 {
                score *= 0.5;
            }
            (index, score)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(index, _)| index).collect()
}

/// The summary: one sentence of a text of up to three, two of up to ten, else three, the best
/// ranked by [`ranked_sentences`], in the order of the text, joined by spaces.
fn summarize(doc: &Doc) -> String {
    let keep = match doc.sentences.len() {
        0..=3 => 1,
        4..=10 => 2,
        _ => 3,
    };
    let mut chosen: Vec<usize> = ranked_sentences(doc).into_iter().take(keep).collect();
    chosen.sort_unstable();
    chosen
        .into_iter()
        .filter_map(|index| doc.sentences.get(index))
        .map(|&sentence| doc.text_of(sentence))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::rng::Rng;

    const COMPLAINT: &str = "I am really angry. My order arrived two weeks late and the box was \
        damaged. The support agent was rude and did not help at all. This is the worst service \
        I have ever had, and I am very disappointed.";
    const HAPPY: &str = "Thank you so much! The new phone is excellent and the setup was easy. \
        I love the camera, and the staff were friendly and helpful. Great experience overall.";
    const CARS: &str = "I went to the dealership on Saturday to look at a new car. The sedan had \
        low mileage and a quiet engine. The dealer offered me a test drive, and the car handled \
        well on the highway. I might trade in my old vehicle next month.";

    fn all() -> Features {
        Features { sentiment: true, summarize: true, topics: true, intents: true, ..Features::default() }
    }

    fn topic_names(results: &Value) -> Vec<String> {
        results["topics"]["segments"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|segment| segment["topics"].as_array().cloned().unwrap_or_default())
            .filter_map(|topic| topic["topic"].as_str().map(str::to_string))
            .collect()
    }

    fn intent_names(results: &Value) -> Vec<String> {
        results["intents"]["segments"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|segment| segment["intents"].as_array().cloned().unwrap_or_default())
            .filter_map(|intent| intent["intent"].as_str().map(str::to_string))
            .collect()
    }

    fn average(text: &str) -> (String, f64) {
        let results = analyze(text, &all()).results;
        let average = &results["sentiments"]["average"];
        (
            average["sentiment"].as_str().unwrap_or("").to_string(),
            average["sentiment_score"].as_f64().unwrap_or(f64::NAN),
        )
    }

    #[test]
    fn a_complaint_is_negative_and_a_happy_note_positive() {
        let (label, score) = average(COMPLAINT);
        assert_eq!(label, "negative", "{score}");
        assert!(score < -NEUTRAL_BAND);
        let (label, score) = average(HAPPY);
        assert_eq!(label, "positive", "{score}");
        assert!(score > NEUTRAL_BAND);
        let (label, _) = average("The meeting is on Tuesday at the office on Main Street.");
        assert_eq!(label, "neutral");
    }

    #[test]
    fn negation_intensifiers_and_but_turn_scores() {
        let score = |text: &str| sentence_score(&Doc::new(text).words);
        assert!(score("The food was good.") > NEUTRAL_BAND);
        assert!(score("The food was not good.") < 0.0);
        assert!(score("The food was very good.") > score("The food was good."));
        assert!(score("The food was slightly good.") < score("The food was good."));
        assert!(score("The room was nice, but the staff were terrible.") < -NEUTRAL_BAND);
        assert!(score("It isn\u{2019}t bad at all.") > 0.0);
    }

    #[test]
    fn sentiment_segments_index_the_whitespace_words() {
        let text = "The hotel was wonderful. The pool was great.\n\nThe flight home was awful.";
        let results = analyze(text, &all()).results;
        let segments = results["sentiments"]["segments"].as_array().cloned().unwrap_or_default();
        assert_eq!(segments.len(), 2, "{segments:?}");
        let words: Vec<&str> = text.split_whitespace().collect();
        for segment in &segments {
            let first = segment["start_word"].as_u64().unwrap_or(u64::MAX) as usize;
            let last = segment["end_word"].as_u64().unwrap_or(u64::MAX) as usize;
            assert_eq!(segment["text"], words[first..=last].join(" "));
            let score = segment["sentiment_score"].as_f64().unwrap_or(f64::NAN);
            assert!((-1.0..=1.0).contains(&score));
        }
        assert_eq!(segments[0]["sentiment"], "positive");
        assert_eq!(segments[1]["sentiment"], "negative");
        assert_eq!(segments[1]["text"], "The flight home was awful.");
    }

    #[test]
    fn a_passage_about_cars_has_a_car_topic() {
        let results = analyze(CARS, &all()).results;
        let names = topic_names(&results);
        assert_eq!(names.first().map(String::as_str), Some("Cars"), "{names:?}");
        let segment = &results["topics"]["segments"][0];
        let confidence = segment["topics"][0]["confidence_score"].as_f64().unwrap_or(0.0);
        assert!(confidence > 0.5 && confidence <= 1.0, "{confidence}");
    }

    #[test]
    fn repeated_words_become_topics_when_no_list_knows_them() {
        let text = "The garden party starts at noon. Bring chairs to the garden party. \
            The garden party ends at dusk.";
        let names = topic_names(&analyze(text, &all()).results);
        assert_eq!(names, ["Garden party"]);
    }

    #[test]
    fn custom_topics_strict_returns_only_those() {
        let features = Features {
            topics: true,
            custom_topics: vec!["highway driving".into(), "Cooking".into(), "cars".into()],
            custom_topic_strict: true,
            ..Features::default()
        };
        let names = topic_names(&analyze(CARS, &features).results);
        assert!(names.iter().all(|name| name == "highway driving" || name == "cars"), "{names:?}");
        assert!(names.iter().any(|name| name == "cars"), "{names:?}");
        assert!(names.iter().any(|name| name == "highway driving"), "{names:?}");
        let extended = Features { custom_topic_strict: false, ..features };
        let names = topic_names(&analyze(CARS, &extended).results);
        assert!(names.iter().any(|name| name == "cars"), "{names:?}");
        assert!(!names.iter().any(|name| name == "Cooking"), "{names:?}");
        // "cars" is the lexicon's Cars under its custom name, not both.
        assert!(!names.iter().any(|name| name == "Cars"), "{names:?}");
    }

    #[test]
    fn verb_led_phrases_are_intents() {
        let intents = |text: &str| intent_names(&analyze(text, &all()).results);
        assert_eq!(intents("I want to cancel my subscription."), ["Cancel subscription"]);
        assert_eq!(intents("Hi, I'd like to book a test drive for Saturday."), ["Book test drive"]);
        assert_eq!(intents("Can you cancel my order, please?"), ["Cancel order"]);
        assert_eq!(intents("Upgrade my phone."), ["Upgrade phone"]);
        assert_eq!(intents("Can you also check my trade in value?"), ["Check trade"]);
        // A noun after a determiner, and a past tense, are not intents.
        assert!(intents("My order arrived yesterday. I cancelled it last week.").is_empty());
        let results = analyze("I want to cancel my subscription.", &all()).results;
        let score = results["intents"]["segments"][0]["intents"][0]["confidence_score"].as_f64().unwrap_or(0.0);
        assert!(score > 0.8, "{score}");
    }

    #[test]
    fn custom_intents_match_by_overlap() {
        let features = Features {
            intents: true,
            custom_intents: vec!["Cancel subscription".into(), "Request refund".into()],
            custom_intent_strict: true,
            ..Features::default()
        };
        let names = intent_names(&analyze("Please cancel the subscription today.", &features).results);
        assert_eq!(names, ["Cancel subscription"]);
    }

    #[test]
    fn the_summary_is_made_of_the_texts_sentences_the_central_one_first() {
        let text = "Good morning everyone. Our electric car sales grew this quarter. \
            Electric car buyers liked the longer battery range. The weather was cold. \
            Battery range and charging speed drove electric car sales. Lunch is at noon. \
            Next quarter we expect electric car sales to grow again.";
        let doc = Doc::new(text);
        let ranked = ranked_sentences(&doc);
        let best = doc.text_of(doc.sentences[ranked[0]]);
        assert!(best.contains("electric car"), "{best}");
        assert!(!ranked[..3].iter().any(|&index| {
            let sentence = doc.text_of(doc.sentences[index]);
            sentence.contains("weather") || sentence.contains("Lunch")
        }));
        let summary = analyze(text, &all()).results["summary"]["text"].as_str().unwrap_or("").to_string();
        assert!(summary.contains(best), "{summary}");
        // Two sentences for seven sentences, in the text's order, each one of the text's.
        let parts: Vec<&str> = doc
            .sentences
            .iter()
            .map(|&sentence| doc.text_of(sentence))
            .filter(|sentence| summary.contains(sentence))
            .collect();
        assert_eq!(parts.len(), 2, "{summary}");
        assert_eq!(parts.join(" "), summary);
    }

    #[test]
    fn only_requested_sections_and_their_token_counts() {
        let features = Features { sentiment: true, ..Features::default() };
        let analysis = analyze(HAPPY, &features);
        let keys: Vec<&String> = analysis.results.as_object().into_iter().flatten().map(|(k, _)| k).collect();
        assert_eq!(keys, ["sentiments"]);
        assert_eq!(analysis.tokens.len(), 1);
        assert_eq!(analysis.tokens[0].0, "sentiment_info");
        assert_eq!(analysis.tokens[0].1, tokens(HAPPY));
        let analysis = analyze(HAPPY, &all());
        let names: Vec<&str> = analysis.tokens.iter().map(|(name, _, _)| *name).collect();
        assert_eq!(names, ["summary_info", "sentiment_info", "topics_info", "intents_info"]);
        let keys: Vec<&String> = analysis.results.as_object().into_iter().flatten().map(|(k, _)| k).collect();
        assert_eq!(keys, ["summary", "sentiments", "topics", "intents"]);
    }

    #[test]
    fn tokens_count_words_and_punctuation() {
        assert_eq!(tokens(""), 0);
        assert_eq!(tokens("Hello, world!"), 4);
        assert_eq!(tokens("don't"), 3);
        assert_eq!(tokens(&"a".repeat(25)), 3);
        assert_eq!(tokens("  \n\t "), 0);
    }

    #[test]
    fn word_sentiment_uses_the_lexicon() {
        assert_eq!(word_sentiment("Excellent!").0, "positive");
        assert_eq!(word_sentiment("terrible,").0, "negative");
        assert_eq!(word_sentiment("table"), ("neutral", 0.0));
        assert_eq!(word_sentiment(""), ("neutral", 0.0));
        let (_, score) = word_sentiment("excellent");
        assert!((0.0..=1.0).contains(&score));
    }

    #[test]
    fn word_lists_all_parse() {
        let lexicons = &*LEXICONS;
        assert!(lexicons.valence.len() > 250);
        assert!(lexicons.valence.values().all(|v| (-4.0..=4.0).contains(v)));
        assert!(lexicons.topic_names.len() > 15);
        assert!(lexicons.verbs.contains_key("cancel"));
        assert!(lexicons.stop.contains("the"));
    }

    /// Random text of every kind (unicode, punctuation only, no sentences, long runs): nothing
    /// panics, every index is in range and every score in [-1, 1], and it is deterministic.
    #[test]
    fn no_input_panics() {
        const PIECES: &[&str] = &[
            "good",
            "not",
            "very",
            "bad",
            "car",
            "cancel",
            "my",
            "order",
            "to",
            ".",
            "!",
            "?",
            "...",
            ",",
            "\u{2019}",
            "'",
            "\u{e9}t\u{e9}",
            "\u{1f600}",
            "\u{200f}",
            "日本語。",
            "\n\n",
            " ",
            "\t",
            "Dr.",
            "J.",
            "don't",
            "-",
            "\u{0301}",
            "ß",
            "İ",
            "a",
            "the",
            "subscription",
            "book",
            "test",
            "drive",
            "\u{0}",
            "\u{feff}",
            "I",
            "want",
            "but",
        ];
        let mut rng = Rng::new(21);
        let features = Features {
            custom_topics: vec!["cars".into(), "".into(), "...".into(), "日本".into()],
            custom_intents: vec!["cancel order".into(), " ".into()],
            ..all()
        };
        for round in 0..300 {
            let mut text = String::new();
            for _ in 0..rng.below(80) {
                text.push_str(rng.pick::<&str>(PIECES));
                if rng.chance(60) {
                    text.push(' ');
                }
            }
            if round % 50 == 0 {
                text = rng.pick(&["", " ", ".", "?!?!", "\u{1f600}\u{1f600}", "a"]).to_string();
            }
            let analysis = analyze(&text, &features);
            assert_eq!(analysis, analyze(&text, &features));
            check_shape(&text, &analysis.results);
            let _ = tokens(&text);
            for word in text.split_whitespace() {
                let (_, score) = word_sentiment(word);
                assert!((-1.0..=1.0).contains(&score));
            }
        }
    }

    fn check_shape(text: &str, results: &Value) {
        let count = text.split_whitespace().count() as u64;
        for section in ["sentiments", "topics", "intents"] {
            for segment in results[section]["segments"].as_array().into_iter().flatten() {
                let first = segment["start_word"].as_u64().unwrap_or(u64::MAX);
                let last = segment["end_word"].as_u64().unwrap_or(u64::MAX);
                assert!(first <= last && last < count, "{section} {segment} in {text:?}");
                if let Some(score) = segment["sentiment_score"].as_f64() {
                    assert!((-1.0..=1.0).contains(&score));
                }
            }
        }
        assert!(results["summary"]["text"].is_string());
    }

    #[test]
    fn a_megabyte_of_text_is_analysed() {
        let mut rng = Rng::new(7);
        let words = ["good", "car", "engine", "the", "cancel", "order", "weather", "bad", "I"];
        let mut text = String::with_capacity(1 << 20);
        while text.len() < 1 << 20 {
            text.push_str(rng.pick::<&str>(&words));
            text.push(if rng.chance(5) { '.' } else { ' ' });
            text.push(' ');
        }
        let analysis = analyze(&text, &all());
        check_shape(&text, &analysis.results);
        let summary = analysis.results["summary"]["text"].as_str().unwrap_or("");
        assert!(summary.split_whitespace().count() <= 3 * MAX_SENTENCE_WORDS);
        // No punctuation at all: sentences are cut at MAX_SENTENCE_WORDS.
        let plain = "word ".repeat(100_000);
        let analysis = analyze(&plain, &all());
        check_shape(&plain, &analysis.results);
    }
}
