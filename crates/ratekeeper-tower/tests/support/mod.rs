//! The tests' server and client: an axum app served with `axum::serve` on
//! a loopback port the OS picks, and HTTP/1.1 clients (hyper's) on their
//! own connections, each from a source address of the loopback range
//! chosen by the test (127.0.0.0/8 is all local on Linux), so that the
//! server sees each client as the peer the test says.

#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::Router;
use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket};

/// Serves `app` on 127.0.0.1, port 0, with the peer's address recorded
/// (`into_make_service_with_connect_info`); the server runs until the
/// test's runtime ends.
pub async fn serve(app: Router) -> SocketAddr {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("bind a loopback port");
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await.expect("serve");
    });
    address
}

/// `127.0.0.n`: the source address of the test's client `n`.
pub fn loopback(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

/// One keep-alive HTTP/1.1 connection from a chosen source address.
pub struct Client {
    sender: SendRequest<Empty<Bytes>>,
    server: SocketAddr,
}

/// A response as the client received it.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    /// The rate-limit fields and Retry-After, by lower-case name, sorted:
    /// what is compared with `response_fields`'s answer.
    pub fn limit_fields(&self) -> Vec<(String, String)> {
        let mut fields: Vec<(String, String)> = self
            .headers
            .iter()
            .filter(|(name, _)| is_limit_field(name.as_str()))
            .map(|(name, value)| (name.as_str().to_owned(), value.to_str().unwrap().to_owned()))
            .collect();
        fields.sort();
        fields
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }
}

fn is_limit_field(name: &str) -> bool {
    name == "retry-after" || name.starts_with("ratelimit") || name.starts_with("x-ratelimit")
}

/// `response_fields`'s answer in the form of [`Reply::limit_fields`].
pub fn expected_fields(fields: Vec<(&'static str, String)>) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> =
        fields.into_iter().map(|(name, value)| (name.to_ascii_lowercase(), value)).collect();
    fields.sort();
    fields
}

impl Client {
    /// Connects to `server` from `from` (a loopback address).
    pub async fn connect(server: SocketAddr, from: IpAddr) -> Client {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::new(from, 0)).expect("bind the client's source address");
        let stream = socket.connect(server).await.expect("connect");
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(connection);
        Client { sender, server }
    }

    /// GET `path` with `headers`.
    pub async fn get(&mut self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.send(Method::GET, path, headers).await
    }

    /// A request of `method` to `path` with `headers`, and its response.
    pub async fn send(&mut self, method: Method, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut request = Request::builder().method(method).uri(path).header("host", self.server.to_string());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        self.sender.ready().await.expect("connection ready");
        let response = self.sender.send_request(request.body(Empty::new()).unwrap()).await.expect("response");
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("body").to_bytes();
        Reply { status: parts.status, headers: parts.headers, body }
    }
}
