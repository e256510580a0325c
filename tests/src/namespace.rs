//! Per-test key namespaces, so tests sharing a server never see each other's keys.

/// Returns `t-<name>-<16 random hex digits>`, unique per call.
///
/// Characters outside `[A-Za-z0-9_-]` in `test_name` become `_`. In
/// particular the result never contains `{`, `}` or `:`, which the driver uses
/// for hash tags and key separators, so a namespace can be embedded in a key
/// without changing how that key is parsed or which cluster slot it maps to.
pub fn unique_namespace(test_name: &str) -> String {
    let name: String = test_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("t-{name}-{:016x}", rand::random::<u64>())
}
