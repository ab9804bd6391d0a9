//! JSON text re-indented for reading.

/// A valid JSON text re-indented by two spaces, token by token: numbers, strings and key order
/// stay exactly as they came (nothing is parsed into values and written again).
pub fn pretty(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / 4);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.extend(std::iter::repeat_n(b' ', depth * 2));
    };
    let mut i = 0;
    while i < body.len() {
        let byte = body[i];
        i += 1;
        if in_string {
            out.push(byte);
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b' ' | b'\n' | b'\r' | b'\t' => {}
            b'"' => {
                in_string = true;
                out.push(byte);
            }
            b'{' | b'[' => {
                out.push(byte);
                // An empty container stays on one line: `[]`, `{}`.
                let next = body[i..].iter().position(|b| !b" \n\r\t".contains(b)).map(|n| body[i + n]);
                if matches!(next, Some(b'}' | b']')) {
                    continue;
                }
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                if !matches!(out.last(), Some(b'{' | b'[')) {
                    depth = depth.saturating_sub(1);
                    newline(&mut out, depth);
                }
                out.push(byte);
            }
            b',' => {
                out.push(byte);
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.push(byte),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::pretty;

    #[test]
    fn pretty_json_reindents_and_keeps_every_token_as_sent() {
        let body = br#"{"a":[1,2.50,{}],"b":{"c":"x, y: {z}","d":[]},"e":"q\"}","n":1e400}"#;
        let text = String::from_utf8(pretty(body)).unwrap();
        assert_eq!(
            text,
            "{\n  \"a\": [\n    1,\n    2.50,\n    {}\n  ],\n  \"b\": {\n    \"c\": \"x, y: {z}\",\n    \"d\": []\n  },\n  \"e\": \"q\\\"}\",\n  \"n\": 1e400\n}"
        );
        assert_eq!(String::from_utf8(pretty(b"[ ]")).unwrap(), "[]");
        assert_eq!(String::from_utf8(pretty(b" 42 ")).unwrap(), "42");
    }
}
