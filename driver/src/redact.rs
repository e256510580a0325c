//! Redis URLs without their secrets, for logs, errors and `Debug`.

/// The URL with any user-info password removed. Unparseable input is not
/// echoed at all, since it might be a password pasted in the wrong place.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(None);
            }
            parsed.to_string()
        }
        Err(_) => "<unparseable redis url>".to_owned(),
    }
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
}
