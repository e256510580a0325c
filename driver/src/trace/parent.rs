//! The W3C Trace Context `traceparent` a job may carry, checked before it
//! is sent (enqueue.lua only bounds its length).

use crate::QueueError;

/// A `traceparent` of version 00 is exactly this long; later versions may
/// append fields, which redq does not store.
pub(crate) const TRACE_PARENT_LEN: usize = 55;

const EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// Accept `version-traceid-parentid-flags` in lowercase hex (2, 32, 16 and
/// 2 digits), version not `ff`, trace and parent ids not all zeros.
pub(crate) fn check_trace_parent(text: &str) -> Result<(), QueueError> {
    if is_trace_parent(text) {
        return Ok(());
    }
    Err(QueueError::invalid(
        "trace parent",
        text,
        format!(
            "a W3C traceparent: version-traceid-parentid-flags in lowercase hex \
             ({TRACE_PARENT_LEN} characters, ids not all zeros), such as {EXAMPLE}"
        ),
    ))
}

fn is_trace_parent(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [version, trace_id, parent_id, flags] = parts[..] else {
        return false;
    };
    let hex = |part: &str, len: usize| {
        part.len() == len && part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let zeros = |part: &str| part.bytes().all(|b| b == b'0');
    hex(version, 2)
        && version != "ff"
        && hex(trace_id, 32)
        && !zeros(trace_id)
        && hex(parent_id, 16)
        && !zeros(parent_id)
        && hex(flags, 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_w3c_traceparent_is_accepted() {
        assert!(check_trace_parent(EXAMPLE).is_ok());
        assert_eq!(EXAMPLE.len(), TRACE_PARENT_LEN);
        assert!(
            check_trace_parent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00").is_ok()
        );
    }

    #[test]
    fn anything_else_is_refused_with_what_is_accepted() {
        for bad in [
            "",
            "not a trace",
            // Upper case, a short trace id, zero ids, version ff, a fifth field.
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-00",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
        ] {
            let err = check_trace_parent(bad).expect_err(bad);
            let text = err.to_string();
            assert!(text.starts_with("invalid trace parent"), "{text}");
            assert!(text.contains("a W3C traceparent"), "{text}");
        }
    }
}
