//! The HTTP side: `GET /metrics` answers with a fresh scrape; anything else
//! with a short plain-text 404 or 405. HTTP/1 only, one task per
//! connection, until an interrupt.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::encode::CONTENT_TYPE as METRICS_TYPE;
use super::Exporter;
use crate::failure::Failure;

/// Serve `exporter` on `listen` until an interrupt. The bound address
/// (the port chosen when `listen` asks for port 0) goes to stderr first.
pub async fn serve(listen: SocketAddr, exporter: Arc<Exporter>) -> Result<(), Failure> {
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| Failure::Failed(format!("cannot listen on {listen}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Failure::Failed(format!("cannot read the address listened on: {e}")))?;
    eprintln!(
        "redq metrics: serving http://{bound}/metrics for namespace {} on {}",
        exporter.namespace(),
        exporter.redacted_url()
    );
    let interrupted = crate::commands::interrupt::interrupted();
    tokio::pin!(interrupted);
    loop {
        let accepted = tokio::select! {
            _ = &mut interrupted => return Ok(()),
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // A connection that failed before it was accepted (e.g. too
            // many open files) does not stop the others.
            Err(e) => {
                tracing::warn!(error = %e, "could not accept a connection");
                continue;
            }
        };
        let exporter = exporter.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let exporter = exporter.clone();
                async move { Ok::<_, Infallible>(answer(&exporter, &request).await) }
            });
            if let Err(e) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %e, "a metrics connection ended with an error");
            }
        });
    }
}

async fn answer(exporter: &Exporter, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    if request.uri().path() != "/metrics" {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: the metrics are at /metrics\n".into(),
        );
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET and HEAD are served at /metrics\n".into(),
        );
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let mut response = Response::new(Full::new(Bytes::from(exporter.scrape().await)));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(METRICS_TYPE));
    response
}

fn plain(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
