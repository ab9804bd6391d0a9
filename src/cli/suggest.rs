//! "Did you mean": the known names closest to a mistyped one, by edit distance (`strsim`).

use strsim::{damerau_levenshtein, jaro_winkler};

/// Names suggested at most.
const MAX_SUGGESTIONS: usize = 3;

/// Up to three of `known` that `given` was probably meant to be, closest first: names it starts
/// or is contained in, the same words in another order (`list_messages`), then names within a
/// few edits (`messages_lst`, `abyl`) or very alike by Jaro-Winkler. Empty when nothing is close.
pub fn close_names<'a>(given: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let given = given.to_ascii_lowercase();
    if given.is_empty() {
        return Vec::new();
    }
    let mut words: Vec<&str> = given.split(['_', '-', '.']).filter(|w| !w.is_empty()).collect();
    words.sort_unstable();
    let allowed_edits = (given.chars().count() / 3).clamp(1, 4);
    let mut scored: Vec<((u8, usize, i64), &str)> = known
        .into_iter()
        .filter_map(|name| {
            let lower = name.to_ascii_lowercase();
            let edits = damerau_levenshtein(&given, &lower);
            let alike = jaro_winkler(&given, &lower);
            let mut name_words: Vec<&str> = lower.split('_').collect();
            name_words.sort_unstable();
            let class = if lower.starts_with(&given) || (given.len() >= 3 && lower.contains(&given)) {
                0
            } else if name_words == words {
                1
            } else if edits <= allowed_edits {
                2
            } else if alike >= 0.88 {
                3
            } else {
                return None;
            };
            // Jaro-Winkler in thousandths, negated: more alike sorts first among equals.
            let rank = (class, edits, -((alike * 1000.0).round() as i64));
            Some((rank, name))
        })
        .collect();
    scored.sort_by_key(|(rank, _)| *rank);
    scored.into_iter().take(MAX_SUGGESTIONS).map(|(_, name)| name).collect()
}

/// `did you mean a, b or c?` for a message, or `None` when nothing is close.
pub fn did_you_mean(close: &[&str]) -> Option<String> {
    match close {
        [] => None,
        [one] => Some(format!("did you mean {one}?")),
        [rest @ .., last] => Some(format!("did you mean {} or {last}?", rest.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPS: &[&str] =
        &["messages_list", "messages_publish", "messages_batch_publish", "channels_list", "channel_get", "time_get"];

    #[test]
    fn typos_prefixes_and_swapped_words_find_their_name() {
        let first = |given: &str| close_names(given, OPS.iter().copied()).first().copied();
        assert_eq!(first("messages_lst"), Some("messages_list"));
        assert_eq!(first("list_messages"), Some("messages_list"));
        assert_eq!(first("chanels_list"), Some("channels_list"));
        assert_eq!(first("TIME_GET"), Some("time_get"));
        assert!(close_names("messages_lst", OPS.iter().copied()).len() <= 3);
        let messages = close_names("messages", OPS.iter().copied());
        assert_eq!(messages.len(), 3);
        assert!(messages.iter().all(|m| m.starts_with("messages_")), "{messages:?}");
        assert!(close_names("zzzz", OPS.iter().copied()).is_empty());
        assert!(close_names("", OPS.iter().copied()).is_empty());
    }

    #[test]
    fn services_by_edit_distance() {
        let services = ["ably", "deepgram", "avatax", "taxjar", "coinbase", "mailgun", "easypost"];
        assert_eq!(close_names("abyl", services), ["ably"]);
        assert_eq!(close_names("mailgn", services), ["mailgun"]);
        assert_eq!(close_names("easy-post", services), ["easypost"]);
        assert_eq!(close_names("slack", services), Vec::<&str>::new());
    }

    #[test]
    fn the_question_reads_as_a_sentence() {
        assert_eq!(did_you_mean(&["a"]).as_deref(), Some("did you mean a?"));
        assert_eq!(did_you_mean(&["a", "b", "c"]).as_deref(), Some("did you mean a, b or c?"));
        assert_eq!(did_you_mean(&[]), None);
    }
}
