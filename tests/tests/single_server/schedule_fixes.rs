//! (tests to come: this file is reserved so that parallel work registers nothing)
