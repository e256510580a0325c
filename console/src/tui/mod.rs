//! The live console: see `app` for the loop, `state` for what it holds,
//! `input` for the key table, `source` for the I/O task and `view` for
//! drawing.

pub mod app;
pub mod clipboard;
pub mod detail_text;
pub mod input;
pub mod operate;
pub mod search;
pub mod source;
pub mod state;
pub mod theme;
pub mod view;
