//! Every version of every recorded document, in id order (the order they were recorded in: ids
//! only grow), with an index from a company's document code to its versions, so finding a
//! document costs the same at 100,000 documents as at ten, and each version's company and date
//! side by side, so a list picks its documents without reading each one.

use std::collections::HashMap;
use std::fmt;
use std::ops::{Index, IndexMut};

use time::Date;

/// What the index reads of a document version (`models::Transaction`), so this file needs
/// nothing of the models.
pub trait Version {
    fn id(&self) -> i64;
    fn company_id(&self) -> i64;
    fn code(&self) -> &str;
    fn date(&self) -> Date;
}

#[derive(Clone)]
pub struct Documents<T> {
    versions: Vec<T>,
    /// `versions[i]`'s company id and document date, in the same order.
    company_dates: Vec<(i64, Date)>,
    /// (company id, code in ASCII lower case, as the service compares codes) → the ids of its
    /// versions, of every document type.
    by_code: HashMap<(i64, Box<str>), Vec<i64>>,
}

impl<T> Default for Documents<T> {
    fn default() -> Self {
        Documents { versions: Vec::new(), company_dates: Vec::new(), by_code: HashMap::new() }
    }
}

impl<T: fmt::Debug> fmt::Debug for Documents<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.versions.fmt(f)
    }
}

fn code_key(company_id: i64, code: &str) -> (i64, Box<str>) {
    (company_id, code.to_ascii_lowercase().into_boxed_str())
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
        self.by_code.entry(code_key(version.company_id(), version.code())).or_default().push(version.id());
        self.company_dates.push((version.company_id(), version.date()));
        self.versions.push(version);
    }

    /// Replaces the version at `index` with one of the same id, company and code.
    pub fn replace(&mut self, index: usize, version: T) {
        let old = &self.versions[index];
        debug_assert!(old.id() == version.id() && old.company_id() == version.company_id());
        debug_assert!(old.code().eq_ignore_ascii_case(version.code()));
        self.company_dates[index] = (version.company_id(), version.date());
        self.versions[index] = version;
    }

    /// The positions of the versions of `company_id` dated `since` or later (any date: `None`),
    /// oldest first.
    pub fn of_company(&self, company_id: i64, since: Option<Date>) -> Vec<usize> {
        let wanted = |(company, date): &(i64, Date)| *company == company_id && since.is_none_or(|d| *date >= d);
        self.company_dates.iter().enumerate().filter(|(_, key)| wanted(key)).map(|(i, _)| i).collect()
    }

    /// Where the version with this id is.
    pub fn position(&self, id: i64) -> Option<usize> {
        self.versions.binary_search_by_key(&id, |t| t.id()).ok()
    }

    /// The positions of every version of a company's code (any document type), oldest first.
    pub fn versions_of(&self, company_id: i64, code: &str) -> impl Iterator<Item = usize> + '_ {
        let ids = self.by_code.get(&code_key(company_id, code)).map(Vec::as_slice).unwrap_or_default();
        ids.iter().filter_map(|id| self.position(*id))
    }

    /// Removes the version at `index`.
    pub fn remove(&mut self, index: usize) -> T {
        let gone = self.versions.remove(index);
        self.company_dates.remove(index);
        self.unindex(&gone);
        gone
    }

    /// Removes the `count` oldest versions, returning them.
    pub fn remove_oldest(&mut self, count: usize) -> Vec<T> {
        let count = count.min(self.versions.len());
        self.company_dates.drain(..count);
        let gone: Vec<T> = self.versions.drain(..count).collect();
        for version in &gone {
            self.unindex(version);
        }
        gone
    }

    /// Removes every version `drop` chooses, returning their ids.
    pub fn remove_where(&mut self, drop: impl Fn(&T) -> bool) -> Vec<i64> {
        let mut gone = Vec::new();
        self.versions.retain(|t| {
            let keep = !drop(t);
            if !keep {
                gone.push((t.id(), t.company_id(), t.code().to_owned()));
            }
            keep
        });
        self.company_dates = self.versions.iter().map(|t| (t.company_id(), t.date())).collect();
        for (id, company_id, code) in &gone {
            self.unindex_id(*id, *company_id, code);
        }
        gone.into_iter().map(|(id, _, _)| id).collect()
    }

    fn unindex(&mut self, version: &T) {
        self.unindex_id(version.id(), version.company_id(), version.code());
    }

    fn unindex_id(&mut self, id: i64, company_id: i64, code: &str) {
        let key = code_key(company_id, code);
        if let Some(ids) = self.by_code.get_mut(&key) {
            ids.retain(|x| *x != id);
            if ids.is_empty() {
                self.by_code.remove(&key);
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

/// For changes of status; a version's id, company and code never change.
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
