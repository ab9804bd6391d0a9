//! The two readers of hostile input (issue 19, item 15), hand-written against the crate, on
//! realistic inputs: a Mailgun send (`multipart/form-data`, a few fields and a 100 KB
//! attachment), many small parts, and a MIME message (text, html and a 1 MB base64
//! attachment). Run with `cargo bench --bench parsers`.

#![allow(clippy::unwrap_used, reason = "a benchmark panics on failure")]

use std::sync::OnceLock;

use divan::{black_box, Bencher};

fn main() {
    divan::main();
}

const BOUNDARY: &str = "------------------------d74496d66958873e";

fn attachment(len: usize) -> Vec<u8> {
    // Deterministic bytes that do not compress to nothing and never hold the boundary.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

fn field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(
        format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
    );
}

/// What `requests`/reqwest send for a Mailgun send with one attachment.
fn mailgun_send() -> &'static [u8] {
    static BODY: OnceLock<Vec<u8>> = OnceLock::new();
    BODY.get_or_init(|| {
        let mut out = Vec::new();
        field(&mut out, "from", "Ops <ops@mg.example.com>");
        field(&mut out, "to", "alice@example.com");
        field(&mut out, "to", "bob@example.com");
        field(&mut out, "subject", "Your invoice");
        field(&mut out, "text", "Hello,\n\nyour invoice is attached.\n");
        field(&mut out, "html", "<p>Hello,</p><p>your invoice is attached.</p>");
        field(&mut out, "o:tag", "invoice");
        out.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"attachment\"; filename=\"invoice.pdf\"\r\n\
                 Content-Type: application/pdf\r\n\r\n"
            )
            .as_bytes(),
        );
        out.extend_from_slice(&attachment(100 * 1024));
        out.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
        out
    })
}

/// A thousand small fields: `v:` variables and recipients.
fn many_parts() -> &'static [u8] {
    static BODY: OnceLock<Vec<u8>> = OnceLock::new();
    BODY.get_or_init(|| {
        let mut out = Vec::new();
        for i in 0..1000 {
            field(&mut out, &format!("v:key{i}"), &format!("value number {i}"));
        }
        out.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
        out
    })
}

/// A message as a mail client writes it: text and html alternatives and a 1 MB attachment.
fn mime_message() -> &'static [u8] {
    static RAW: OnceLock<Vec<u8>> = OnceLock::new();
    RAW.get_or_init(|| {
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(attachment(1024 * 1024));
        let wrapped = encoded.as_bytes().chunks(76).map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>();
        format!(
            "From: Ops <ops@mg.example.com>\r\nTo: alice@example.com\r\nSubject: =?UTF-8?B?SGVsbG8gd8O2cmxk?=\r\n\
             Date: Fri, 14 Jun 2024 10:00:00 +0000\r\nMessage-Id: <a1@mg.example.com>\r\nMIME-Version: 1.0\r\n\
             Content-Type: multipart/mixed; boundary=\"MIX\"\r\n\r\n--MIX\r\n\
             Content-Type: multipart/alternative; boundary=\"ALT\"\r\n\r\n--ALT\r\n\
             Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
             Caf=C3=A9 au lait, your invoice is attached.\r\n--ALT\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\
             <p>Caf\u{e9} au lait, your invoice is attached.</p>\r\n--ALT--\r\n--MIX\r\n\
             Content-Type: application/pdf; name=\"invoice.pdf\"\r\n\
             Content-Disposition: attachment; filename=\"invoice.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n\
             {}\r\n--MIX--\r\n",
            wrapped.join("\r\n")
        )
        .into_bytes()
    })
}

fn multipart_headers() -> axum::http::HeaderMap {
    let mut headers = axum::http::HeaderMap::new();
    headers
        .insert(axum::http::header::CONTENT_TYPE, format!("multipart/form-data; boundary={BOUNDARY}").parse().unwrap());
    headers
}

#[divan::bench(args = ["mailgun_send_100k", "1000_small_parts"])]
fn multipart_multer(bencher: Bencher, input: &str) {
    let body = if input == "1000_small_parts" { many_parts() } else { mailgun_send() };
    bencher.bench(|| {
        crate_readers::multipart(black_box(body), BOUNDARY).unwrap().iter().map(crate_readers::Part::len).sum::<usize>()
    });
}

#[divan::bench(args = ["mailgun_send_100k", "1000_small_parts"])]
/// The hand-written reader the sandbox uses, through `read_body` as the simulators call it.
fn multipart_hand_written(bencher: Bencher, input: &str) {
    let body = if input == "1000_small_parts" { many_parts() } else { mailgun_send() };
    let headers = multipart_headers();
    bencher.bench(|| opsdeck::sandbox::request::read_body(&headers, black_box(body), usize::MAX).is_ok());
}

#[divan::bench]
fn mime_hand_written(bencher: Bencher) {
    let raw = mime_message();
    bencher.bench(|| handwritten_mime::parse(black_box(raw)).unwrap().files.len());
}

#[divan::bench]
fn mime_mail_parser(bencher: Bencher) {
    let raw = mime_message();
    bencher.bench(|| mime::parse(black_box(raw)).unwrap().files.len());
}

/// The reader the sandbox uses, on `mail-parser`.
#[path = "../src/sandbox/mailgun/mime.rs"]
#[allow(dead_code, unused_imports, reason = "only the reader is measured; its unit tests run with the lib")]
mod mime;

/// The hand-written MIME reader as it was in `src/sandbox/mailgun/mime.rs` before item 15.
#[allow(dead_code, reason = "only the reader is measured")]
mod handwritten_mime {
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
}

mod crate_readers {
    use futures_util::FutureExt;

    /// What `request::Part` holds.
    pub struct Part {
        pub name: String,
        pub filename: Option<String>,
        pub content_type: Option<String>,
        pub data: Vec<u8>,
    }

    impl Part {
        /// Everything read, so that no field is optimised away.
        pub fn len(&self) -> usize {
            self.name.len()
                + self.filename.as_ref().map_or(0, String::len)
                + self.content_type.as_ref().map_or(0, String::len)
                + self.data.len()
        }
    }

    pub fn multipart(body: &[u8], boundary: &str) -> Result<Vec<Part>, String> {
        let chunk = bytes::Bytes::copy_from_slice(body);
        let stream = futures_util::stream::once(async move { Ok::<_, std::convert::Infallible>(chunk) });
        let mut multipart = multer::Multipart::new(stream, boundary);
        let read = async {
            let mut parts = Vec::new();
            while let Some(field) = multipart.next_field().await.map_err(|e| e.to_string())? {
                let name = field.name().ok_or("no name")?.to_owned();
                let filename = field.file_name().map(str::to_owned);
                let content_type = field
                    .headers()
                    .get(axum::http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map(|v| v.trim().to_owned());
                let data = field.bytes().await.map_err(|e| e.to_string())?.to_vec();
                parts.push(Part { name, filename, content_type, data });
            }
            Ok(parts)
        };
        read.now_or_never().unwrap_or_else(|| Err("pending".to_owned()))
    }
}
