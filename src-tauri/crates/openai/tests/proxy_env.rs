//! A proxy in the environment is not used: the conversation goes straight to the user's server.
//! (Its own test binary, because it changes the process environment.)

// Shared with fake_server.rs; this test needs only part of it.
#[allow(dead_code)]
mod support;

use lantern_core::model::{CancelToken, Flow, GenerateRequest, Message, Model, Role};
use lantern_openai::{OpenAiModel, OpenAiOptions};
use support::{FakeServer, Reply};

#[test]
fn http_proxy_from_the_environment_is_ignored() {
    // Nothing listens on port 1: a request sent through this proxy would fail.
    std::env::set_var("HTTP_PROXY", "http://127.0.0.1:1");
    std::env::set_var("http_proxy", "http://127.0.0.1:1");
    std::env::remove_var("NO_PROXY");
    std::env::remove_var("no_proxy");

    let server = FakeServer::start(vec![Reply::stream(&["direct"], "stop")]);
    let mut model = OpenAiModel::new(OpenAiOptions::new(&server.base_url, "m")).unwrap();
    let messages = [Message::new(Role::User, "hi")];
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 8, &cancel);
    let generation = model.generate(&request, &mut |_| Flow::Continue).unwrap();
    assert_eq!(generation.text, "direct");
    server.finish();
}
