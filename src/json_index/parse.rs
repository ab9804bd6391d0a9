//! The one pass that validates a body and records its nodes.

use super::*;

type Failure = (usize, JsonErrorKind);

/// An open container while parsing: children are counted here rather than in the node so the
/// hot loop writes only to the end of the node vector.
pub(super) struct Open {
    id: u32,
    object: bool,
    count: u32,
}

pub(super) struct Parser<'a> {
    pub b: &'a [u8],
    pub pos: usize,
    pub nodes: Vec<Node>,
    pub open: Vec<Open>,
    /// The memory budget, in nodes.
    pub max_nodes: usize,
    /// Node count at which progress is next reported and the budget and cancel checked.
    pub next_check: usize,
    pub watch: &'a Watch,
    /// How much of the body is known to be UTF-8, and where it first is not.
    pub utf8_checked: usize,
    pub utf8_error: Option<usize>,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        self.pos = skip_ws(self.b, self.pos);
    }

    fn unexpected(&self, expected: &'static str) -> Failure {
        match self.b.get(self.pos) {
            None => (self.pos, JsonErrorKind::UnexpectedEnd(expected)),
            Some(_) => (self.pos, JsonErrorKind::Unexpected { found: char_at(self.b, self.pos), expected }),
        }
    }

    fn push(&mut self, start: usize) -> Result<u32, Failure> {
        let id = self.nodes.len() as u32;
        if self.nodes.len() == self.next_check {
            self.checkpoint()?;
        }
        if self.nodes.len() == self.nodes.capacity() {
            self.nodes.reserve_exact(self.more_nodes());
        }
        let (parent, member) = match self.open.last_mut() {
            Some(open) => {
                open.count += 1;
                (open.id, if open.object { MEMBER } else { 0 })
            }
            None => (NO_PARENT, 0),
        };
        self.nodes.push(Node { start: start as u32, next: id + 1, parent, count: member });
        Ok(id)
    }

    /// How many more nodes to make room for when the vector is full: as many as the rest of
    /// the body holds at the rate read so far (API pages are alike from end to end), plus a
    /// little; never less than an eighth more, so a body whose tail is denser than its head
    /// still grows in few steps, and never past the node budget. Not double: a 200 MB body must not reserve 400 MB of nodes it
    /// will not use, nor hold the old vector and a twice-larger one at once.
    fn more_nodes(&self) -> usize {
        let (len, read, body) = (self.nodes.len(), self.pos.max(1), self.b.len());
        let projected = usize::try_from(len as u128 * body as u128 / read as u128).unwrap_or(usize::MAX);
        let wanted = projected.saturating_add(projected / 32).saturating_sub(len);
        // Never past the budget: a body that would need more fails when it gets there.
        wanted.max(len / 8).saturating_add(16).min(self.max_nodes.saturating_sub(len).max(16))
    }

    /// Checks the body's UTF-8 up to `upto`. A character cut by `upto` is checked with the
    /// next stretch, unless the body ends there.
    pub fn check_utf8(&mut self, upto: usize) {
        if self.utf8_error.is_some() {
            return;
        }
        let Some(stretch) = self.b.get(self.utf8_checked..upto) else { return };
        match std::str::from_utf8(stretch) {
            Ok(_) => self.utf8_checked = upto,
            Err(e) if e.error_len().is_none() && upto < self.b.len() => self.utf8_checked += e.valid_up_to(),
            Err(e) => self.utf8_error = Some(self.utf8_checked + e.valid_up_to()),
        }
    }

    /// Every [`CHECK_EVERY`] nodes: progress, cancellation, the memory budget and the UTF-8 of
    /// the stretch parsed since the last one.
    #[cold]
    fn checkpoint(&mut self) -> Result<(), Failure> {
        self.next_check += CHECK_EVERY;
        self.check_utf8(self.pos);
        if let Some(bad) = self.utf8_error {
            return Err((bad, JsonErrorKind::InvalidUtf8));
        }
        if !self.watch.report(self.pos) {
            return Err((self.pos, JsonErrorKind::Cancelled));
        }
        if self.nodes.len() >= self.max_nodes {
            let budget = self.max_nodes * std::mem::size_of::<Node>();
            return Err((self.pos, JsonErrorKind::TooManyValues { values: self.nodes.len(), budget }));
        }
        Ok(())
    }

    /// Parses the whole body with an explicit stack of open containers, so depth costs heap,
    /// never call stack.
    pub fn run(&mut self) -> Result<(), Failure> {
        self.skip_ws();
        if self.pos >= self.b.len() {
            return Err((self.pos, JsonErrorKind::Empty));
        }
        let mut key_start: Option<usize> = None;
        'value: loop {
            let start = key_start.take().unwrap_or(self.pos);
            match self.b.get(self.pos) {
                Some(&c @ (b'{' | b'[')) => {
                    if self.open.len() >= MAX_DEPTH {
                        return Err((self.pos, JsonErrorKind::TooDeep));
                    }
                    let id = self.push(start)?;
                    let object = c == b'{';
                    self.pos += 1;
                    self.skip_ws();
                    let close = if object { b'}' } else { b']' };
                    if self.b.get(self.pos) == Some(&close) {
                        self.pos += 1;
                    } else {
                        self.open.push(Open { id, object, count: 0 });
                        if object {
                            key_start = Some(self.member_key()?);
                        }
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    self.push(start)?;
                    self.string()?;
                }
                Some(b'-' | b'0'..=b'9') => {
                    self.push(start)?;
                    self.number()?;
                }
                Some(b't') => {
                    self.push(start)?;
                    self.literal(b"true")?;
                }
                Some(b'f') => {
                    self.push(start)?;
                    self.literal(b"false")?;
                }
                Some(b'n') => {
                    self.push(start)?;
                    self.literal(b"null")?;
                }
                _ => return Err(self.unexpected("a value")),
            }
            // A value just ended: close containers until one continues with a comma.
            loop {
                self.skip_ws();
                let Some(open) = self.open.last() else {
                    return match self.b.get(self.pos) {
                        None => Ok(()),
                        Some(_) => Err((self.pos, JsonErrorKind::TrailingData(char_at(self.b, self.pos)))),
                    };
                };
                let object = open.object;
                match self.b.get(self.pos) {
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_ws();
                        if object {
                            key_start = Some(self.member_key()?);
                        }
                        continue 'value;
                    }
                    Some(b'}') if object => {}
                    Some(b']') if !object => {}
                    _ if object => return Err(self.unexpected("',' or '}'")),
                    _ => return Err(self.unexpected("',' or ']'")),
                }
                self.pos += 1;
                let end = self.nodes.len() as u32;
                if let Some(open) = self.open.pop() {
                    if let Some(node) = self.nodes.get_mut(open.id as usize) {
                        node.next = end;
                        node.count = (node.count & MEMBER) | open.count;
                    }
                }
            }
        }
    }

    /// Parses `"key" :` and the whitespace after it; returns where the key starts.
    fn member_key(&mut self) -> Result<usize, Failure> {
        if self.b.get(self.pos) != Some(&b'"') {
            return Err(self.unexpected("a string key"));
        }
        let start = self.pos;
        self.string()?;
        self.skip_ws();
        if self.b.get(self.pos) != Some(&b':') {
            return Err(self.unexpected("':'"));
        }
        self.pos += 1;
        self.skip_ws();
        Ok(start)
    }

    /// Validates a string starting at its opening quote. Eight bytes at a time are checked
    /// for a quote, a backslash or a control character, since most strings have none of them.
    fn string(&mut self) -> Result<(), Failure> {
        let b = self.b;
        let mut pos = self.pos + 1;
        loop {
            while let Some(chunk) = b.get(pos..).and_then(|rest| rest.first_chunk::<8>()) {
                let hits = special_bytes(u64::from_le_bytes(*chunk));
                if hits != 0 {
                    pos += (hits.trailing_zeros() / 8) as usize;
                    break;
                }
                pos += 8;
            }
            match b.get(pos) {
                None => return Err((pos, JsonErrorKind::UnexpectedEnd("'\"'"))),
                Some(b'"') => {
                    self.pos = pos + 1;
                    return Ok(());
                }
                Some(b'\\') => match b.get(pos + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => pos += 2,
                    Some(b'u') => {
                        let digits = b.get(pos + 2..pos + 6).unwrap_or_default();
                        if digits.len() < 4 || !digits.iter().all(u8::is_ascii_hexdigit) {
                            return Err((pos, JsonErrorKind::InvalidEscape));
                        }
                        pos += 6;
                    }
                    _ => return Err((pos, JsonErrorKind::InvalidEscape)),
                },
                Some(&c) if c < 0x20 => return Err((pos, JsonErrorKind::ControlCharacter)),
                Some(_) => pos += 1,
            }
        }
    }

    fn number(&mut self) -> Result<(), Failure> {
        let b = self.b;
        let digits = |mut pos: usize| {
            while let Some(b'0'..=b'9') = b.get(pos) {
                pos += 1;
            }
            pos
        };
        let mut pos = self.pos;
        if b.get(pos) == Some(&b'-') {
            pos += 1;
        }
        match b.get(pos) {
            Some(b'0') => {
                pos += 1;
                if let Some(b'0'..=b'9') = b.get(pos) {
                    return Err((pos, JsonErrorKind::InvalidNumber));
                }
            }
            Some(b'1'..=b'9') => pos = digits(pos + 1),
            _ => return Err((pos, JsonErrorKind::InvalidNumber)),
        }
        if b.get(pos) == Some(&b'.') {
            let after = digits(pos + 1);
            if after == pos + 1 {
                return Err((after, JsonErrorKind::InvalidNumber));
            }
            pos = after;
        }
        if let Some(b'e' | b'E') = b.get(pos) {
            pos += 1;
            if let Some(b'+' | b'-') = b.get(pos) {
                pos += 1;
            }
            let after = digits(pos);
            if after == pos {
                return Err((after, JsonErrorKind::InvalidNumber));
            }
            pos = after;
        }
        self.pos = pos;
        Ok(())
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), Failure> {
        for (i, &expected) in word.iter().enumerate() {
            if self.b.get(self.pos + i) != Some(&expected) {
                self.pos += i;
                return Err(self.unexpected(match word {
                    b"true" => "'true'",
                    b"false" => "'false'",
                    _ => "'null'",
                }));
            }
        }
        self.pos += word.len();
        Ok(())
    }
}

/// Marks bytes of a little-endian word that are a quote, a backslash or below 0x20. Borrows
/// only propagate towards later bytes, so the lowest mark is always exact.
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control
}
