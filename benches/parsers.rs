//! The two readers of hostile input (issue 19, item 15) on realistic inputs: the sandbox's own
//! multipart reader against `multer` on a Mailgun send (`multipart/form-data`, a few fields and
//! a 100 KB attachment) and on many small parts, and the `mail-parser` MIME reader on a message
//! with text, html and a 1 MB base64 attachment. The hand-written MIME reader it replaced was
//! measured beside it at commit 731835a (figures in `src/sandbox/mailgun/mime.rs`). Run with
//! `cargo bench --bench parsers`.

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
fn mime_mail_parser(bencher: Bencher) {
    let raw = mime_message();
    bencher.bench(|| mime::parse(black_box(raw)).unwrap().files.len());
}

/// The reader the sandbox uses, on `mail-parser`.
#[path = "../src/sandbox/mailgun/mime.rs"]
#[allow(dead_code, unused_imports, reason = "only the reader is measured; its unit tests run with the lib")]
mod mime;

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
