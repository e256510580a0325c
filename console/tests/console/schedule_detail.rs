//! Reserved: filled in this stop.
