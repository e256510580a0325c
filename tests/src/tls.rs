//! Certificates for TLS tests, made with the openssl CLI: a private CA and
//! server certificates it signs, for chosen names and lifetimes, and a free
//! port for a redis-server's `tls-port`.

use std::path::Path;
use std::process::Command;

/// A free loopback port (for `tls-port`, beside the harness's own port).
pub fn free_port() -> u16 {
    crate::port::free_port()
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl CLI is installed");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A new P-256 key, unencrypted.
const EC: [&str; 5] = [
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
];

/// A CA (ca.crt, ca.key) in `dir`, valid for two days.
pub fn make_ca(dir: &Path) {
    let mut args = vec!["req", "-x509"];
    args.extend(EC);
    args.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=redq tls test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign",
    ]);
    openssl(dir, &args);
}

/// `name`.crt and `name`.key in `dir`, signed by its CA ([`make_ca`]), for
/// the subject alternative names `san` (`DNS:localhost,IP:127.0.0.1`),
/// valid for `days` from now (`-1`: expired yesterday).
pub fn make_server_cert(dir: &Path, name: &str, san: &str, days: &str) {
    let (key, csr, crt, ext) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.crt"),
        format!("{name}.cnf"),
    );
    let mut args = vec!["req"];
    args.extend(EC);
    args.extend([
        "-keyout",
        &key,
        "-out",
        &csr,
        "-subj",
        "/CN=redq test server",
    ]);
    openssl(dir, &args);
    std::fs::write(
        dir.join(&ext),
        format!("subjectAltName={san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"),
    )
    .expect("writing the certificate's extensions");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            &crt,
            "-days",
            days,
            "-extfile",
            &ext,
        ],
    );
}
