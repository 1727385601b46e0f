//! What a check found.

use serde::{Deserialize, Serialize};

/// At most this many problems are listed (all are counted).
const MAX_LISTED: usize = 200;

/// What [`Index::check`] found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Live pages seen (in a sample check: pages checked).
    pub pages: u64,
    /// Clusters seen.
    pub clusters: u64,
    /// Posting entries seen.
    pub postings: u64,
    /// Number of problems found.
    pub problem_count: u64,
    /// The first problems, in words.
    pub problems: Vec<String>,
    /// Pages checked one by one by [`Index::check_sample`] (0: the whole index was checked).
    #[serde(default)]
    pub sampled: u64,
}

impl CheckReport {
    /// True when no problem was found.
    pub fn is_clean(&self) -> bool {
        self.problem_count == 0
    }

    pub(super) fn problem(&mut self, p: String) {
        self.problem_count += 1;
        if self.problems.len() < MAX_LISTED {
            self.problems.push(p);
        }
    }
}
