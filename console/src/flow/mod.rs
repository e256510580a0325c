//! Flow control as the CLI and the console show it (see `redq::flow`):
//! rates as people type them, and one row per limiter with its use now.

pub mod held;
pub mod rate;
pub mod rows;

pub use rate::{parse_concurrency, parse_rate};
pub use rows::{rows_of, scope_text, split_text, LimiterRow, Scope};
