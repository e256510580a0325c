//! Connection URLs for a [`RedisServer`], in the forms fred's `Config::from_url` parses.

use crate::server::RedisServer;

impl RedisServer {
    /// `redis://127.0.0.1:PORT`, without credentials.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port())
    }

    /// `redis://:PASSWORD@127.0.0.1:PORT`, with the password percent-encoded.
    /// Panics if the server was started without a password.
    pub fn url_with_password(&self) -> String {
        let password = self
            .password()
            .expect("url_with_password() on a server started without .password(..)");
        format!(
            "redis://:{}@127.0.0.1:{}",
            percent_encode(password),
            self.port()
        )
    }

    /// `redis+unix:///path/to/redis.sock`, without credentials.
    ///
    /// fred takes the socket path from the URL verbatim (it does not
    /// percent-decode it), so the path is not encoded either; `start` uses
    /// a tempdir name made only of URL-safe characters.
    pub fn unix_url(&self) -> String {
        format!("redis+unix://{}", self.socket_path().display())
    }
}

/// Encodes every byte outside RFC 3986's unreserved set. fred decodes URL
/// credentials, so passwords with `@`, `:` or `/` still round-trip.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
