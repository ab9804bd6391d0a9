//! A small MIME reader and writer, enough for Mailgun's `messages.mime` and for giving stored
//! messages back as `message/rfc2822`: headers (folded, RFC 2047 encoded words), nested
//! multiparts, base64 and quoted-printable bodies, text/html parts and file parts with names,
//! content types and sizes. Hand-written so the sandbox needs no mail crate.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// A file carried by a message: an attachment or an inline part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePart {
    pub name: String,
    pub content_type: String,
    pub data: Vec<u8>,
    pub inline: bool,
}

/// What a MIME message holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    pub headers: Vec<(String, String)>,
    pub text: Option<String>,
    pub html: Option<String>,
    pub files: Vec<FilePart>,
}

impl Parsed {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Why a message could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MimeError {
    #[error("the message has no header section")]
    NoHeaders,
    #[error("a multipart part has no boundary parameter")]
    NoBoundary,
    #[error("the message nests multiparts deeper than {0} levels")]
    TooDeep(usize),
}

const MAX_DEPTH: usize = 16;

/// Reads a whole message.
pub fn parse(raw: &[u8]) -> Result<Parsed, MimeError> {
    let (head, body) = split_head(raw);
    let headers = parse_headers(head);
    if headers.is_empty() {
        return Err(MimeError::NoHeaders);
    }
    let mut parsed = Parsed { headers, ..Parsed::default() };
    let top = parsed.headers.clone();
    walk(&top, body, &mut parsed, 0)?;
    Ok(parsed)
}

fn walk(headers: &[(String, String)], body: &[u8], out: &mut Parsed, depth: usize) -> Result<(), MimeError> {
    if depth > MAX_DEPTH {
        return Err(MimeError::TooDeep(MAX_DEPTH));
    }
    let header = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    let content_type = header("content-type").unwrap_or("text/plain");
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    if essence.starts_with("multipart/") {
        let boundary = parameter(content_type, "boundary").ok_or(MimeError::NoBoundary)?;
        for part in split_multipart(body, &boundary) {
            let (head, part_body) = split_head(part);
            let part_headers = parse_headers(head);
            walk(&part_headers, part_body, out, depth + 1)?;
        }
        return Ok(());
    }
    let data = decode_body(body, header("content-transfer-encoding").unwrap_or("7bit"));
    let disposition = header("content-disposition").unwrap_or("");
    let filename = parameter(disposition, "filename").or_else(|| parameter(content_type, "name"));
    let is_file = disposition.trim_start().to_ascii_lowercase().starts_with("attachment") || filename.is_some();
    if !is_file && essence == "text/plain" && out.text.is_none() {
        out.text = Some(String::from_utf8_lossy(&data).into_owned());
    } else if !is_file && essence == "text/html" && out.html.is_none() {
        out.html = Some(String::from_utf8_lossy(&data).into_owned());
    } else {
        out.files.push(FilePart {
            name: filename.map_or_else(|| "noname".to_owned(), |f| decode_words(&f)),
            content_type: essence,
            data,
            inline: disposition.trim_start().to_ascii_lowercase().starts_with("inline"),
        });
    }
    Ok(())
}

/// Headers and body, split at the first blank line (CRLF or bare LF).
fn split_head(raw: &[u8]) -> (&[u8], &[u8]) {
    let crlf = memchr::memmem::find(raw, b"\r\n\r\n").map(|i| (i, 4));
    let lf = memchr::memmem::find(raw, b"\n\n").map(|i| (i, 2));
    let split = match (crlf, lf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    };
    match split {
        Some((at, len)) => (&raw[..at], &raw[at + len..]),
        None if raw.starts_with(b"\r\n") => (&[], &raw[2..]),
        None => (raw, &[]),
    }
}

/// Unfolds and decodes header lines.
fn parse_headers(head: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(head);
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in text.split('\n').map(|l| l.trim_end_matches('\r')) {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = headers.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
        } else if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    for (_, value) in &mut headers {
        *value = decode_words(value);
    }
    headers
}

/// The bodies between `--boundary` lines, up to `--boundary--`.
fn split_multipart<'a>(body: &'a [u8], boundary: &str) -> Vec<&'a [u8]> {
    let delimiter = format!("--{boundary}");
    let mut parts = Vec::new();
    let mut starts = Vec::new();
    let mut at = 0;
    while let Some(found) = memchr::memmem::find(&body[at..], delimiter.as_bytes()) {
        let index = at + found;
        let line_start = index == 0 || body[index - 1] == b'\n';
        if line_start {
            starts.push(index);
        }
        at = index + delimiter.len();
    }
    for pair in starts.windows(2) {
        let (from, to) = (pair[0] + delimiter.len(), pair[1]);
        if body[from..].starts_with(b"--") {
            break;
        }
        let mut part = &body[from..to];
        part = part.strip_prefix(b"\r\n").or_else(|| part.strip_prefix(b"\n")).unwrap_or(part);
        part = part.strip_suffix(b"\r\n").or_else(|| part.strip_suffix(b"\n")).unwrap_or(part);
        parts.push(part);
    }
    parts
}

fn decode_body(body: &[u8], encoding: &str) -> Vec<u8> {
    match encoding.trim().to_ascii_lowercase().as_str() {
        "base64" => {
            let compact: Vec<u8> = body.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
            STANDARD.decode(&compact).unwrap_or_else(|_| body.to_vec())
        }
        "quoted-printable" => quoted_printable(body, false),
        _ => body.to_vec(),
    }
}

/// Decodes quoted-printable; `underscore` is the RFC 2047 `Q` variant where `_` is a space.
pub fn quoted_printable(input: &[u8], underscore: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'=' if input.get(i + 1) == Some(&b'\r') && input.get(i + 2) == Some(&b'\n') => i += 3,
            b'=' if input.get(i + 1) == Some(&b'\n') => i += 2,
            b'=' => {
                let hex = input
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 3;
                    }
                    None => {
                        out.push(b'=');
                        i += 1;
                    }
                }
            }
            b'_' if underscore => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// Decodes RFC 2047 encoded words (`=?UTF-8?B?...?=`, `=?ISO-8859-1?Q?...?=`) in a header value.
pub fn decode_words(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    let mut last_was_word = false;
    while let Some(start) = rest.find("=?") {
        let (before, candidate) = rest.split_at(start);
        let Some(decoded_len) = encoded_word(candidate) else {
            out.push_str(before);
            out.push_str("=?");
            rest = &candidate[2..];
            last_was_word = false;
            continue;
        };
        // Whitespace between two encoded words is dropped (RFC 2047 §6.2).
        if !(last_was_word && before.trim().is_empty()) {
            out.push_str(before);
        }
        out.push_str(&decoded_len.0);
        rest = &candidate[decoded_len.1..];
        last_was_word = true;
    }
    out.push_str(rest);
    out
}

/// One encoded word at the start of `text`: its decoded text and its length.
fn encoded_word(text: &str) -> Option<(String, usize)> {
    let inner = text.strip_prefix("=?")?;
    let (charset, rest) = inner.split_once('?')?;
    let (encoding, rest) = rest.split_once('?')?;
    let end = rest.find("?=")?;
    let payload = &rest[..end];
    let bytes = match encoding {
        "B" | "b" => STANDARD.decode(payload).ok()?,
        "Q" | "q" => quoted_printable(payload.as_bytes(), true),
        _ => return None,
    };
    let decoded = if charset.eq_ignore_ascii_case("iso-8859-1") || charset.eq_ignore_ascii_case("latin1") {
        bytes.iter().map(|b| char::from(*b)).collect()
    } else {
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some((decoded, 2 + charset.len() + 1 + encoding.len() + 1 + end + 2))
}

/// A `; name=value` parameter of a header value, unquoted.
pub fn parameter(value: &str, name: &str) -> Option<String> {
    value.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim().trim_matches('"').to_owned())
    })
}

/// Writes a message: `headers` first, then the body as a single text part or a
/// `multipart/mixed` of a `multipart/alternative` (text, html) and the files in base64.
/// `boundary_seed` keeps the boundaries deterministic for a seed.
pub fn build(
    headers: &[(String, String)],
    text: Option<&str>,
    html: Option<&str>,
    files: &[FilePart],
    boundary_seed: &str,
) -> String {
    let mut out = String::new();
    for (name, value) in headers {
        out.push_str(&format!("{name}: {}\r\n", encode_header(value)));
    }
    out.push_str("Mime-Version: 1.0\r\n");
    let body_part = |content_type: &str, content: &str| -> String {
        if content.is_ascii() {
            format!("Content-Type: {content_type}; charset=\"ascii\"\r\nContent-Transfer-Encoding: 7bit\r\n\r\n{content}\r\n")
        } else {
            format!(
                "Content-Type: {content_type}; charset=\"utf-8\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n",
                wrap_base64(content.as_bytes())
            )
        }
    };
    let alternative = match (text, html) {
        (Some(t), None) => body_part("text/plain", t),
        (None, Some(h)) => body_part("text/html", h),
        (None, None) => body_part("text/plain", ""),
        (Some(t), Some(h)) => {
            let b = format!("alt-{boundary_seed}");
            format!(
                "Content-Type: multipart/alternative; boundary=\"{b}\"\r\n\r\n--{b}\r\n{}--{b}\r\n{}--{b}--\r\n",
                body_part("text/plain", t),
                body_part("text/html", h)
            )
        }
    };
    if files.is_empty() {
        out.push_str(&alternative);
        return out;
    }
    let b = format!("mix-{boundary_seed}");
    out.push_str(&format!("Content-Type: multipart/mixed; boundary=\"{b}\"\r\n\r\n--{b}\r\n{alternative}"));
    for file in files {
        let disposition = if file.inline { "inline" } else { "attachment" };
        let name = file.name.replace('"', "'");
        out.push_str(&format!(
            "--{b}\r\nContent-Type: {}; name=\"{name}\"\r\nContent-Disposition: {disposition}; filename=\"{name}\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n",
            file.content_type,
            wrap_base64(&file.data)
        ));
    }
    out.push_str(&format!("--{b}--\r\n"));
    out
}

/// A header value with non-ASCII text as one UTF-8 `B` encoded word.
fn encode_header(value: &str) -> String {
    let value = value.replace(['\r', '\n'], " ");
    if value.is_ascii() {
        value
    } else {
        format!("=?utf-8?b?{}?=", STANDARD.encode(value.as_bytes()))
    }
}

fn wrap_base64(data: &[u8]) -> String {
    let encoded = STANDARD.encode(data);
    let bytes = encoded.as_bytes();
    bytes.chunks(76).map(|c| String::from_utf8_lossy(c).into_owned()).collect::<Vec<_>>().join("\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nested_multipart_with_both_encodings() {
        let raw = "From: Ops <ops@mg.example.com>\r\nTo: a@example.com\r\nSubject: =?UTF-8?B?SGVsbG8gd8O2cmxk?=\r\n \
                   again\r\nContent-Type: multipart/mixed; boundary=\"M\"\r\n\r\npreamble\r\n--M\r\n\
                   Content-Type: multipart/alternative; boundary=A\r\n\r\n--A\r\nContent-Type: text/plain\r\n\
                   Content-Transfer-Encoding: quoted-printable\r\n\r\nCaf=C3=A9 =\r\nau lait\r\n--A\r\n\
                   Content-Type: text/html\r\n\r\n<p>hi</p>\r\n--A--\r\n--M\r\nContent-Type: application/pdf; name=\"x.pdf\"\r\n\
                   Content-Disposition: attachment; filename=\"invoice.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n\
                   JVBERi0x\r\nLjQ=\r\n--M--\r\n";
        let parsed = parse(raw.as_bytes()).expect("parses");
        assert_eq!(parsed.header("subject"), Some("Hello wörld again"));
        assert_eq!(parsed.text.as_deref(), Some("Café au lait"));
        assert_eq!(parsed.html.as_deref(), Some("<p>hi</p>"));
        assert_eq!(parsed.files.len(), 1);
        assert_eq!(parsed.files[0].name, "invoice.pdf");
        assert_eq!(parsed.files[0].content_type, "application/pdf");
        assert_eq!(parsed.files[0].data, b"%PDF-1.4");
        assert_eq!(parse(b""), Err(MimeError::NoHeaders));
        assert_eq!(parse(b"Content-Type: multipart/mixed\r\n\r\nx"), Err(MimeError::NoBoundary));
    }

    #[test]
    fn what_is_built_reads_back() {
        let files = [FilePart {
            name: "a.bin".into(),
            content_type: "application/octet-stream".into(),
            data: vec![0, 1, 255],
            inline: false,
        }];
        let headers = vec![("Subject".to_owned(), "Grüße".to_owned()), ("From".to_owned(), "a@b.com".to_owned())];
        let raw = build(&headers, Some("plain"), Some("<b>html</b>"), &files, "x1");
        let parsed = parse(raw.as_bytes()).expect("parses");
        assert_eq!(parsed.header("Subject"), Some("Grüße"));
        assert_eq!((parsed.text.as_deref(), parsed.html.as_deref()), (Some("plain"), Some("<b>html</b>")));
        assert_eq!(parsed.files, files);
    }
}
