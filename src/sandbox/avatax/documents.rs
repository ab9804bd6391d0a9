//! Every version of every recorded document, in id order (the order they were recorded in: ids
//! only grow), with an index from a company's document code to its versions, so finding a
//! document costs the same at 100,000 documents as at ten, and each version's company and date
//! side by side, so a list picks its documents without reading each one.

use std::collections::HashMap;
use std::fmt;
use std::ops::{Index, IndexMut};

use time::Date;

use super::models::Transaction;

#[derive(Clone, Default)]
pub struct Documents {
    versions: Vec<Transaction>,
    /// `versions[i]`'s company id and document date, in the same order.
    company_dates: Vec<(i64, Date)>,
    /// (company id, code in ASCII lower case, as the service compares codes) → the ids of its
    /// versions, of every document type.
    by_code: HashMap<(i64, Box<str>), Vec<i64>>,
}

impl fmt::Debug for Documents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.versions.fmt(f)
    }
}

fn code_key(company_id: i64, code: &str) -> (i64, Box<str>) {
    (company_id, code.to_ascii_lowercase().into_boxed_str())
}

impl Documents {
    pub fn len(&self) -> usize {
        self.versions.len()
    }

    pub fn first(&self) -> Option<&Transaction> {
        self.versions.first()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Transaction> {
        self.versions.iter()
    }

    /// Records a new version; its id is above every id recorded so far.
    pub fn push(&mut self, transaction: Transaction) {
        debug_assert!(self.versions.last().is_none_or(|last| last.id < transaction.id), "ids only grow");
        self.by_code.entry(code_key(transaction.company_id, &transaction.code)).or_default().push(transaction.id);
        self.company_dates.push((transaction.company_id, transaction.input.date));
        self.versions.push(transaction);
    }

    /// Replaces the version at `index` with one of the same id, company and code.
    pub fn replace(&mut self, index: usize, transaction: Transaction) {
        let old = &self.versions[index];
        debug_assert!(old.id == transaction.id && old.company_id == transaction.company_id);
        debug_assert!(old.code.eq_ignore_ascii_case(&transaction.code));
        self.company_dates[index] = (transaction.company_id, transaction.input.date);
        self.versions[index] = transaction;
    }

    /// The positions of the versions of `company_id` dated `since` or later (any date: `None`),
    /// oldest first.
    pub fn of_company(&self, company_id: i64, since: Option<Date>) -> Vec<usize> {
        let wanted = |(company, date): &(i64, Date)| *company == company_id && since.is_none_or(|d| *date >= d);
        self.company_dates.iter().enumerate().filter(|(_, key)| wanted(key)).map(|(i, _)| i).collect()
    }

    /// Where the version with this id is.
    pub fn position(&self, id: i64) -> Option<usize> {
        self.versions.binary_search_by_key(&id, |t| t.id).ok()
    }

    /// The positions of every version of a company's code (any document type), oldest first.
    pub fn versions_of(&self, company_id: i64, code: &str) -> impl Iterator<Item = usize> + '_ {
        let ids = self.by_code.get(&code_key(company_id, code)).map(Vec::as_slice).unwrap_or_default();
        ids.iter().filter_map(|id| self.position(*id))
    }

    /// Removes the version at `index`.
    pub fn remove(&mut self, index: usize) -> Transaction {
        let gone = self.versions.remove(index);
        self.company_dates.remove(index);
        self.unindex(&gone);
        gone
    }

    /// Removes the `count` oldest versions, returning them.
    pub fn remove_oldest(&mut self, count: usize) -> Vec<Transaction> {
        let count = count.min(self.versions.len());
        self.company_dates.drain(..count);
        let gone: Vec<Transaction> = self.versions.drain(..count).collect();
        for transaction in &gone {
            self.unindex(transaction);
        }
        gone
    }

    /// Removes every version `drop` chooses, returning their ids.
    pub fn remove_where(&mut self, drop: impl Fn(&Transaction) -> bool) -> Vec<i64> {
        let mut gone = Vec::new();
        self.versions.retain(|t| {
            let keep = !drop(t);
            if !keep {
                gone.push((t.id, t.company_id, t.code.clone()));
            }
            keep
        });
        self.company_dates = self.versions.iter().map(|t| (t.company_id, t.input.date)).collect();
        for (id, company_id, code) in &gone {
            self.unindex_id(*id, *company_id, code);
        }
        gone.into_iter().map(|(id, _, _)| id).collect()
    }

    fn unindex(&mut self, transaction: &Transaction) {
        self.unindex_id(transaction.id, transaction.company_id, &transaction.code);
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

impl Index<usize> for Documents {
    type Output = Transaction;

    fn index(&self, index: usize) -> &Transaction {
        &self.versions[index]
    }
}

/// For changes of status; a version's id, company and code never change.
impl IndexMut<usize> for Documents {
    fn index_mut(&mut self, index: usize) -> &mut Transaction {
        &mut self.versions[index]
    }
}

impl<'a> IntoIterator for &'a Documents {
    type Item = &'a Transaction;
    type IntoIter = std::slice::Iter<'a, Transaction>;

    fn into_iter(self) -> Self::IntoIter {
        self.versions.iter()
    }
}
