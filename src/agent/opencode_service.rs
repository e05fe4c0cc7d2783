//! OpenCode 2's background service (`opencode serve --service`), which `opencode run` without
//! `--standalone` hands its work to: it outlives the run, so a session runbook stopped the client
//! of is interrupted there through the service's own API
//! (`POST /api/session/{id}/interrupt`, HTTP basic auth with the password of its state file
//! `$XDG_STATE_HOME/opencode/service.json`).

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::handed::{Daemon, Handed};
use super::own_paths::Var;
use crate::files::{self, Links};

/// Longest state file and answer read.
const MAX_BYTES: u64 = 64 * 1024;
/// Each wait on the service: connecting, writing, reading.
const WAIT: Duration = Duration::from_secs(2);

/// The service of the OpenCode whose environment `var` reads, found by its state file once
/// asked (a run may be the one that started it).
pub(crate) fn find(var: Var<'_>) -> Option<Box<dyn Daemon>> {
    let state = var("XDG_STATE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".local/state")))?;
    Some(Box::new(Service {
        state_file: state.join("opencode/service.json"),
    }))
}

struct Service {
    state_file: PathBuf,
}

/// What `service.json` holds that is needed here.
#[derive(Deserialize)]
struct State {
    url: String,
    password: String,
}

#[derive(Deserialize)]
struct Interrupted {
    interrupted: bool,
}

impl Daemon for Service {
    fn name(&self) -> &'static str {
        "OpenCode's background service"
    }

    fn cancel(&self, session: &str) -> Handed {
        let state = match files::read_optional(&self.state_file, MAX_BYTES, Links::Refuse) {
            Ok(None) => return Handed::Nothing,
            Ok(Some(bytes)) => bytes,
            Err(e) => return Handed::Failed(format!("its state file cannot be read: {e}")),
        };
        let Ok(state) = serde_json::from_slice::<State>(&state) else {
            return Handed::Failed("its state file is not the JSON it writes".to_owned());
        };
        let Some(addr) = loopback(&state.url) else {
            return Handed::Failed("its state file names no address on this machine".to_owned());
        };
        if !plain_id(session) {
            return Handed::Failed("the session id the agent gave is not one it makes".to_owned());
        }
        let path = format!("/api/session/{session}/interrupt");
        match post(addr, &path, &state.password) {
            Ok((200, body)) => match serde_json::from_slice::<Interrupted>(&body) {
                Ok(Interrupted { interrupted: true }) => Handed::Cancelled,
                Ok(Interrupted { interrupted: false }) => Handed::Nothing,
                Err(_) => Handed::Failed("it answered the interrupt with no verdict".to_owned()),
            },
            // The session is not the service's (a `--standalone` run's private server had it).
            Ok((404, _)) => Handed::Nothing,
            Ok((status, _)) => {
                Handed::Failed(format!("it answered the interrupt with HTTP {status}"))
            }
            // No service listening: it is not running, and nothing of the run goes on there.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Handed::Nothing,
            Err(e) => Handed::Failed(format!("it could not be asked: {e}")),
        }
    }
}

/// The address of `url` when it is `http://` on this machine's loopback with a port.
fn loopback(url: &str) -> Option<SocketAddr> {
    let url = url::Url::parse(url).ok()?;
    if url.scheme() != "http" {
        return None;
    }
    let ip = match url.host()? {
        url::Host::Domain("localhost") => IpAddr::V4(Ipv4Addr::LOCALHOST),
        url::Host::Domain(_) => return None,
        url::Host::Ipv4(ip) => IpAddr::V4(ip),
        url::Host::Ipv6(ip) => IpAddr::V6(ip),
    };
    let port = url.port()?;
    (ip.is_loopback() || ip == IpAddr::V6(Ipv6Addr::LOCALHOST)).then(|| SocketAddr::new(ip, port))
}

/// Whether a session id is one OpenCode makes (`ses_` and letters and digits), safe in a path.
fn plain_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `POST path` with an empty body and basic auth: the answer's status and body.
fn post(addr: SocketAddr, path: &str, password: &str) -> std::io::Result<(u16, Vec<u8>)> {
    let mut stream = TcpStream::connect_timeout(&addr, WAIT)?;
    stream.set_read_timeout(Some(WAIT))?;
    stream.set_write_timeout(Some(WAIT))?;
    let auth = base64(format!("opencode:{password}").as_bytes());
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Basic {auth}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes())?;
    let mut answer = Vec::new();
    stream.take(MAX_BYTES).read_to_end(&mut answer)?;
    parse_answer(&answer).ok_or_else(|| std::io::Error::other("its answer is not HTTP"))
}

/// The status and body of an HTTP/1.1 answer (plain or chunked).
fn parse_answer(answer: &[u8]) -> Option<(u16, Vec<u8>)> {
    let head_end = answer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&answer[..head_end]).ok()?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let body = &answer[head_end + 4..];
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    Some((
        status,
        if chunked {
            dechunk(body)
        } else {
            body.to_vec()
        },
    ))
}

/// The body of a chunked answer; what cannot be read ends it.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&body[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok());
        let start = line_end + 2;
        match size {
            Some(n) if n > 0 && start + n <= body.len() => {
                out.extend_from_slice(&body[start..start + n]);
                body = body.get(start + n + 2..).unwrap_or_default();
            }
            _ => break,
        }
    }
    out
}

/// Standard base64, padded.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ABC[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_the_standard_one() {
        assert_eq!(base64(b"opencode:pw"), "b3BlbmNvZGU6cHc=");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
    }

    #[test]
    fn only_a_loopback_http_address_is_asked() {
        assert!(loopback("http://127.0.0.1:49374").is_some());
        assert!(loopback("http://localhost:49374").is_some());
        assert!(loopback("http://[::1]:49374").is_some());
        assert!(loopback("http://10.0.0.1:49374").is_none());
        assert!(loopback("http://evil.example:49374").is_none());
        assert!(loopback("https://127.0.0.1:49374").is_none());
    }

    #[test]
    fn a_session_id_with_a_path_in_it_is_refused() {
        assert!(plain_id("ses_dae04924cffeqws8c2090bdI5G"));
        assert!(!plain_id("../../api/service/stop"));
        assert!(!plain_id("ses?x=1"));
        assert!(!plain_id(""));
    }

    #[test]
    fn answers_plain_and_chunked_are_read() {
        let plain = b"HTTP/1.1 200 OK\r\ncontent-length: 19\r\n\r\n{\"interrupted\":true}";
        assert_eq!(parse_answer(plain).map(|a| a.0), Some(200));
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        assert_eq!(parse_answer(chunked), Some((200, b"hello".to_vec())));
    }
}
