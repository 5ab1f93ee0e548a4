//! A small OpenAI-compatible server on 127.0.0.1 for the tests.
//!
//! It answers a fixed list of replies, one per request and in order, then exits; it also gives
//! up after a deadline, so a failing test cannot leave it waiting. A streamed reply is written
//! the way llama-server writes one: HTTP/1.1 with chunked transfer encoding on a keep-alive
//! connection, one server-sent event per chunk (a role chunk, the content deltas, a chunk with
//! the finish reason and llama-server's `timings`, `data: [DONE]`). It can also end a stream by closing the
//! connection instead, as simpler servers do.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long the server lives at most, and how long it waits for a request on an open connection.
const LIFETIME: Duration = Duration::from_secs(30);
const IDLE: Duration = Duration::from_secs(5);

/// How a streamed body is delimited.
#[derive(Clone, Copy)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`, connection kept open (llama-server, Ollama).
    Chunked,
    /// `Connection: close`; the body ends when the connection does.
    CloseDelimited,
}

/// One answer of the server.
pub struct Reply {
    status: u16,
    content_type: &'static str,
    /// Written one after another; for a stream each is one event.
    parts: Vec<String>,
    framing: Framing,
    /// Waited before each part after the first, to make streaming observable.
    pause: Duration,
}

impl Reply {
    /// A streamed chat completion: each piece one delta, then `finish` (e.g. "stop") and `[DONE]`.
    pub fn stream(pieces: &[&str], finish: &str) -> Self {
        let mut events = vec![
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null}, "finish_reason": null}]}),
        ];
        events.extend(pieces.iter().map(|piece| {
            json!({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]})
        }));
        events.push(json!({
            "choices": [{"finish_reason": finish, "index": 0, "delta": {}}],
            "object": "chat.completion.chunk",
            "timings": {"cache_n": 20, "prompt_n": 30, "prompt_ms": 41.5, "predicted_n": pieces.len(), "predicted_ms": 12.0},
        }));
        let mut lines: Vec<String> = events.iter().map(|e| format!("data: {e}")).collect();
        lines.push("data: [DONE]".to_string());
        Reply::events(lines)
    }

    /// A streamed chat completion made of these `delta` objects (native tool-call pieces,
    /// thinking, text), then `finish` and `[DONE]`.
    #[allow(dead_code)] // fake_server.rs streams text only
    pub fn deltas(deltas: Vec<Value>, finish: &str) -> Self {
        let mut lines: Vec<String> = deltas
            .into_iter()
            .map(|delta| {
                let chunk =
                    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
                format!("data: {chunk}")
            })
            .collect();
        lines.push(format!(
            "data: {}",
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        ));
        lines.push("data: [DONE]".to_string());
        Reply::events(lines)
    }

    /// A 200 event stream made of exactly these lines, each followed by a blank line.
    pub fn events(lines: Vec<String>) -> Self {
        Reply {
            status: 200,
            content_type: "text/event-stream",
            parts: lines.into_iter().map(|l| format!("{l}\n\n")).collect(),
            framing: Framing::Chunked,
            pause: Duration::ZERO,
        }
    }

    /// A whole JSON body with this status.
    pub fn json(status: u16, body: Value) -> Self {
        Reply {
            status,
            content_type: "application/json; charset=utf-8",
            parts: vec![body.to_string()],
            framing: Framing::Chunked,
            pause: Duration::ZERO,
        }
    }

    pub fn framed(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    pub fn paced(mut self, pause: Duration) -> Self {
        self.pause = pause;
        self
    }
}

/// A request as the server received it.
pub struct Request {
    pub method: String,
    pub path: String,
    headers: Vec<(String, String)>,
    pub body: Value,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What happened to one request.
pub struct Served {
    pub request: Request,
    /// Parts of the reply written before the client went away (all of them if it stayed).
    pub parts_written: usize,
    /// True when a write failed because the client had closed the connection.
    pub client_closed: bool,
}

pub struct FakeServer {
    /// The API root to give the model: `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    served: Receiver<Served>,
    thread: JoinHandle<()>,
}

impl FakeServer {
    pub fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, served) = channel();
        let thread = thread::spawn(move || serve(listener, replies, tx));
        FakeServer {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            served,
            thread,
        }
    }

    /// The next request served, waiting a little for the server to finish writing it.
    pub fn next_served(&self) -> Served {
        self.served
            .recv_timeout(Duration::from_secs(10))
            .expect("the fake server served a request")
    }

    /// Waits for the server to have answered all its replies and exit.
    pub fn finish(self) {
        self.thread.join().unwrap();
    }
}

fn serve(listener: TcpListener, replies: Vec<Reply>, tx: Sender<Served>) {
    let deadline = Instant::now() + LIFETIME;
    let mut replies = replies.into_iter().peekable();
    listener.set_nonblocking(true).unwrap();
    while replies.peek().is_some() && Instant::now() < deadline {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5));
                continue;
            }
            Err(e) => panic!("accept failed: {e}"),
        };
        stream.set_nonblocking(false).unwrap();
        stream.set_read_timeout(Some(IDLE)).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut writer = stream;
        // Keep-alive: serve requests on this connection until the client closes it.
        while let Some(request) = read_request(&mut reader) {
            let reply = replies.next().expect("a reply is left");
            let (parts_written, client_closed) = write_reply(&mut writer, &reply);
            let _ = tx.send(Served {
                request,
                parts_written,
                client_closed,
            });
            if replies.peek().is_none() || matches!(reply.framing, Framing::CloseDelimited) {
                break;
            }
        }
    }
}

/// Reads one request; `None` when the client closed the connection or sent nothing in time.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut words = line.split_whitespace();
    let method = words.next()?.to_string();
    let path = words.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse().unwrap())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

/// Writes a reply; returns how many parts went out and whether the client hung up.
fn write_reply(stream: &mut TcpStream, reply: &Reply) -> (usize, bool) {
    let status_text = match reply.status {
        200 => "OK",
        401 => "Unauthorized",
        404 => "Not Found",
        _ => "Error",
    };
    let framing = match reply.framing {
        Framing::Chunked => "Transfer-Encoding: chunked\r\nKeep-Alive: timeout=5, max=100",
        Framing::CloseDelimited => "Connection: close",
    };
    let head = format!(
        "HTTP/1.1 {} {status_text}\r\nContent-Type: {}\r\n{framing}\r\n\r\n",
        reply.status, reply.content_type
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return (0, true);
    }
    for (i, part) in reply.parts.iter().enumerate() {
        if i > 0 {
            thread::sleep(reply.pause);
        }
        let written = match reply.framing {
            Framing::Chunked => {
                stream.write_all(format!("{:x}\r\n{part}\r\n", part.len()).as_bytes())
            }
            Framing::CloseDelimited => stream.write_all(part.as_bytes()),
        };
        if written.and_then(|()| stream.flush()).is_err() {
            return (i, true);
        }
    }
    if matches!(reply.framing, Framing::Chunked) && stream.write_all(b"0\r\n\r\n").is_err() {
        return (reply.parts.len(), true);
    }
    (reply.parts.len(), false)
}
