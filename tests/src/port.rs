//! Picking a free loopback TCP port for a private `redis-server`.

use std::net::{Ipv4Addr, TcpListener};

/// Asks the kernel for a currently unused port on 127.0.0.1.
///
/// The listener is dropped before `redis-server` binds the port, so another
/// process can grab it in between. That race is rare but real when many tests
/// start servers in parallel; `server.rs` handles it by retrying with a fresh
/// port when redis reports "Address already in use".
pub(crate) fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .expect("binding 127.0.0.1:0 to find a free port");
    listener
        .local_addr()
        .expect("reading the local address of a bound listener")
        .port()
}
