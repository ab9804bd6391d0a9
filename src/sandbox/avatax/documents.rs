//! Every version of every recorded document, in id order (the order they were recorded in: ids
//! only grow), with indexes from a company's document code and customer code to its versions,
//! so finding a document costs the same at 100,000 documents as at ten, and each version's
//! company, date and total side by side in one row, so a list picks, filters and sorts its
//! documents on these without reading each one (a document's lines live elsewhere in memory:
//! reaching them for 100,000 totals is 100,000 cache misses).

use std::collections::HashMap;
use std::fmt;
use std::ops::{Index, IndexMut};

use rust_decimal::Decimal;
use time::Date;

/// What the indexes read of a document version (`models::Transaction`), so this file needs
/// nothing of the models. None of it changes after a version is recorded, except by `replace`.
pub trait Version {
    fn id(&self) -> i64;
    fn company_id(&self) -> i64;
    fn code(&self) -> &str;
    fn customer_code(&self) -> &str;
    fn date(&self) -> Date;
    fn total_amount(&self) -> Decimal;
}

/// The text fields looked up by value: `$filter=code eq '…'` or `customerCode eq '…'`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Indexed {
    Code,
    CustomerCode,
}

impl Indexed {
    pub const ALL: [Indexed; 2] = [Indexed::Code, Indexed::CustomerCode];

    /// The field's name in the list's records.
    pub fn field(self) -> &'static str {
        match self {
            Indexed::Code => "code",
            Indexed::CustomerCode => "customerCode",
        }
    }

    fn of<T: Version>(self, version: &T) -> &str {
        match self {
            Indexed::Code => version.code(),
            Indexed::CustomerCode => version.customer_code(),
        }
    }
}

/// What a list reads of every version, kept side by side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub company_id: i64,
    pub date: Date,
    pub total_amount: Decimal,
}

impl Row {
    fn of<T: Version>(version: &T) -> Row {
        Row { company_id: version.company_id(), date: version.date(), total_amount: version.total_amount() }
    }
}

/// (field, company id, value in lower case): codes are compared regardless of case, and a
/// `$filter` lowers each character as this does, so the index finds what the filter keeps.
type TextKey = (Indexed, i64, Box<str>);

#[derive(Clone)]
pub struct Documents<T> {
    versions: Vec<T>,
    /// `versions[i]`'s row, in the same order.
    rows: Vec<Row>,
    /// A company's code or customer code → the ids of its versions, of every document type.
    by_text: HashMap<TextKey, Vec<i64>>,
}

impl<T> Default for Documents<T> {
    fn default() -> Self {
        Documents { versions: Vec::new(), rows: Vec::new(), by_text: HashMap::new() }
    }
}

impl<T: fmt::Debug> fmt::Debug for Documents<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.versions.fmt(f)
    }
}

fn text_key(field: Indexed, company_id: i64, text: &str) -> TextKey {
    (field, company_id, text.chars().flat_map(char::to_lowercase).collect::<String>().into_boxed_str())
}

impl<T: Version> Documents<T> {
    pub fn len(&self) -> usize {
        self.versions.len()
    }

    pub fn first(&self) -> Option<&T> {
        self.versions.first()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.versions.iter()
    }

    /// Records a new version; its id is above every id recorded so far.
    pub fn push(&mut self, version: T) {
        debug_assert!(self.versions.last().is_none_or(|last| last.id() < version.id()), "ids only grow");
        for field in Indexed::ALL {
            let key = text_key(field, version.company_id(), field.of(&version));
            self.by_text.entry(key).or_default().push(version.id());
        }
        self.rows.push(Row::of(&version));
        self.versions.push(version);
    }

    /// Replaces the version at `index` with one of the same id, company and code.
    pub fn replace(&mut self, index: usize, version: T) {
        let old = &self.versions[index];
        debug_assert!(old.id() == version.id() && old.company_id() == version.company_id());
        debug_assert!(old.code().eq_ignore_ascii_case(version.code()));
        let old = self.versions[index].customer_code().to_owned();
        self.unindex_text(Indexed::CustomerCode, version.id(), version.company_id(), &old);
        let key = text_key(Indexed::CustomerCode, version.company_id(), version.customer_code());
        let ids = self.by_text.entry(key).or_default();
        // Ids in order, as pushes leave them.
        let at = ids.partition_point(|id| *id < version.id());
        ids.insert(at, version.id());
        self.rows[index] = Row::of(&version);
        self.versions[index] = version;
    }

    /// The row of the version at `index`.
    pub fn row(&self, index: usize) -> &Row {
        &self.rows[index]
    }

    /// The positions of the versions of `company_id` dated `since` or later (any date: `None`),
    /// oldest first.
    pub fn of_company(&self, company_id: i64, since: Option<Date>) -> Vec<usize> {
        let wanted = |row: &Row| row.company_id == company_id && since.is_none_or(|d| row.date >= d);
        self.rows.iter().enumerate().filter(|(_, row)| wanted(row)).map(|(i, _)| i).collect()
    }

    /// Where the version with this id is.
    pub fn position(&self, id: i64) -> Option<usize> {
        self.versions.binary_search_by_key(&id, |t| t.id()).ok()
    }

    /// The positions of every version of a company's code (any document type), oldest first.
    pub fn versions_of(&self, company_id: i64, code: &str) -> impl Iterator<Item = usize> + '_ {
        self.with_text(Indexed::Code, company_id, code)
    }

    /// The positions of every version of a company whose `field` is `text` (regardless of
    /// case), oldest first.
    pub fn with_text(&self, field: Indexed, company_id: i64, text: &str) -> impl Iterator<Item = usize> + '_ {
        let ids = self.by_text.get(&text_key(field, company_id, text)).map(Vec::as_slice).unwrap_or_default();
        ids.iter().filter_map(|id| self.position(*id))
    }

    /// Removes the version at `index`.
    pub fn remove(&mut self, index: usize) -> T {
        let gone = self.versions.remove(index);
        self.rows.remove(index);
        self.unindex(&gone);
        gone
    }

    /// Removes the `count` oldest versions, returning them.
    pub fn remove_oldest(&mut self, count: usize) -> Vec<T> {
        let count = count.min(self.versions.len());
        self.rows.drain(..count);
        let gone: Vec<T> = self.versions.drain(..count).collect();
        for version in &gone {
            self.unindex(version);
        }
        gone
    }

    /// Removes every version `drop` chooses, returning their ids.
    pub fn remove_where(&mut self, drop: impl Fn(&T) -> bool) -> Vec<i64> {
        let (kept, gone): (Vec<T>, Vec<T>) = std::mem::take(&mut self.versions).into_iter().partition(|t| !drop(t));
        self.versions = kept;
        self.rows = self.versions.iter().map(Row::of).collect();
        for version in &gone {
            self.unindex(version);
        }
        gone.iter().map(Version::id).collect()
    }

    fn unindex(&mut self, version: &T) {
        for field in Indexed::ALL {
            self.unindex_text(field, version.id(), version.company_id(), field.of(version));
        }
    }

    fn unindex_text(&mut self, field: Indexed, id: i64, company_id: i64, text: &str) {
        let key = text_key(field, company_id, text);
        if let Some(ids) = self.by_text.get_mut(&key) {
            ids.retain(|x| *x != id);
            if ids.is_empty() {
                self.by_text.remove(&key);
            }
        }
    }
}

impl<T> Index<usize> for Documents<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        &self.versions[index]
    }
}

/// For changes of status; what the indexes read of a version (`Version`) never changes this way.
impl<T> IndexMut<usize> for Documents<T> {
    fn index_mut(&mut self, index: usize) -> &mut T {
        &mut self.versions[index]
    }
}

impl<'a, T> IntoIterator for &'a Documents<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.versions.iter()
    }
}
