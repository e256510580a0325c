//! Redis URLs without their secrets, for logs, errors and `Debug`.

/// The URL with any user-info password removed, and its query parameters
/// named without their values (`?password=s3cr3t` shows as `?password`: a
/// secret put in the query is as secret as one in the user info), but for
/// the seed nodes and the sentinel's service name, which are addresses and
/// names an operator needs to see in a connect error (`?node=10.0.0.2:6379`)
/// and are shown when they look like nothing else. Unparseable input is not
/// echoed at all, since it might be a password pasted in the wrong place.
pub fn redact_url(url: &str) -> String {
    if has_stray_at(url) {
        return "<a redis url with an '@' after its host: not shown>".to_owned();
    }
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(None);
            }
            if let Some(query) = parsed.query().map(str::to_owned) {
                // A part without '=' is no name=value pair: it may be a
                // secret pasted there, so it is left out with the values.
                let names: Vec<String> = query
                    .split('&')
                    .filter_map(|part| part.split_once('='))
                    .map(|(name, value)| match shown_value(name, value) {
                        true => format!("{name}={value}"),
                        false => name.to_owned(),
                    })
                    .collect();
                parsed.set_query(
                    Some(&names.join("&"))
                        .filter(|q| !q.is_empty())
                        .map(String::as_str),
                );
            }
            if parsed.fragment().is_some() {
                parsed.set_fragment(None);
            }
            parsed.to_string()
        }
        Err(_) => "<unparseable redis url>".to_owned(),
    }
}

/// Whether a query value is shown: a seed node's `host:port` or a
/// sentinel's service name, written with the characters of a host name,
/// an IP address and a port only (no `@`, `%`, space or control).
fn shown_value(name: &str, value: &str) -> bool {
    matches!(name, "node" | "sentinelServiceName")
        && !value.is_empty()
        && value.len() <= 255
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']'))
}

/// Whether `url` parses with an `@` after its host (in its path, query or
/// fragment): the sign of a password whose `/`, `?` or `#` was not
/// percent-encoded, which ended the host early and left the rest of the
/// password where nothing redacts it.
pub(crate) fn has_stray_at(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    parsed.path().contains('@')
        || parsed.query().is_some_and(|q| q.contains('@'))
        || parsed.fragment().is_some_and(|f| f.contains('@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_survive() {
        assert_eq!(
            redact_url("redis://:s3cret@host:6379/0"),
            "redis://host:6379/0"
        );
        assert_eq!(
            redact_url("rediss://ops:s3cret@host:6380"),
            "rediss://ops@host:6380"
        );
        assert_eq!(redact_url("redis://host:6379"), "redis://host:6379");
        assert!(!redact_url("not a url s3cret").contains("s3cret"));
    }

    #[test]
    fn query_values_never_survive() {
        assert_eq!(
            redact_url("redis://127.0.0.1:7429?password=s3cr3t"),
            "redis://127.0.0.1:7429?password"
        );
        assert_eq!(
            redact_url("redis-sentinel://h:26379?sentinelServiceName=main&sentinelPassword=s3cr3t"),
            "redis-sentinel://h:26379?sentinelServiceName=main&sentinelPassword"
        );
        assert_eq!(redact_url("redis://h:6379#s3cr3t"), "redis://h:6379");
        assert_eq!(redact_url("redis://h:6379?s3cr3t"), "redis://h:6379");
        assert_eq!(
            redact_url("redis://h:6379?node=a&s3cr3t"),
            "redis://h:6379?node=a"
        );
        // A node that is not a plain address is not shown either.
        assert_eq!(
            redact_url("redis-cluster://h:7000?node=u:s3cr3t%40h2:7001&node=h3:7002"),
            "redis-cluster://h:7000?node&node=h3:7002"
        );
    }

    /// A connect error over a cluster names the seed nodes it was given.
    #[test]
    fn seed_nodes_are_shown() {
        assert_eq!(
            redact_url("redis-cluster://:pw@10.0.0.1:7000?node=10.0.0.2:7001&node=[::1]:7002"),
            "redis-cluster://10.0.0.1:7000?node=10.0.0.2:7001&node=[::1]:7002"
        );
    }

    #[test]
    fn a_password_that_ended_the_host_early_is_not_shown() {
        for url in [
            "redis://admin:6379/SEKRIT+x@127.0.0.1:7431",
            "redis://admin:6379?SEKRIT@127.0.0.1",
            "redis://admin:6379#SEKRIT@127.0.0.1",
        ] {
            assert!(has_stray_at(url), "{url}");
            let shown = redact_url(url);
            assert!(!shown.contains("SEKRIT"), "{shown}");
        }
        // Encoded, it is a password like any other.
        assert!(!has_stray_at("redis://admin:6379%2FSEKRIT@127.0.0.1:7431"));
        assert_eq!(
            redact_url("redis://admin:6379%2FSEKRIT@127.0.0.1:7431"),
            "redis://admin@127.0.0.1:7431"
        );
    }
}
