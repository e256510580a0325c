//! A page of a listing, shared by every module that lists (jobs, dead
//! letters, kept jobs), apart from all of them.

use serde::Serialize;

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page<T> {
    /// How many items the whole listing has.
    pub total: u64,
    /// The items of this page.
    pub items: Vec<T>,
}
