//! The default model (SmolLM2-135M) and a real MCP server's tools: the calls it writes are
//! valid for the server's own schemas, through the same call grammar as the built-in tools.

use lantern_core::model::{CancelToken, Flow, GenerateRequest, Message, Model, Role, ToolChoice};
use lantern_core::protocol::{parse, STOP_SEQUENCES};
use lantern_core::sandbox::Workspace;
use lantern_core::toolbox::Toolbox;
use lantern_core::tools::{ToolContext, ToolRegistry, ToolSpec};
use lantern_llama::{default_model_path, LoadOptions, LocalModel};
use lantern_mcp::config::{Configured, Origin, ServerDef};
use lantern_mcp::hub::{Hub, ServerState};
use std::path::PathBuf;
use std::sync::Arc;

fn time_server() -> ServerDef {
    let dir = std::env::var_os("LANTERN_MCP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/lantern/mcp-servers")
        });
    let program = dir.join("venv/bin/mcp-server-time");
    assert!(
        program.exists(),
        "the test MCP servers are missing in {}: run scripts/mcp-servers.sh (npm test does)",
        dir.display()
    );
    ServerDef {
        command: Some(program.to_string_lossy().into_owned()),
        args: vec!["--local-timezone".into(), "UTC".into()],
        ..Default::default()
    }
}

#[test]
fn the_default_model_writes_a_valid_call_to_an_mcp_tool_through_the_grammar() {
    let home = tempfile::tempdir().unwrap();
    std::env::set_var("LANTERN_HOME", home.path());
    let root = tempfile::tempdir().unwrap();
    let hub = Hub::start_servers(
        root.path(),
        vec![Configured {
            name: "time".into(),
            def: time_server(),
            origin: Origin::User,
        }],
        Vec::new(),
    );
    assert_eq!(
        hub.statuses()[0].state,
        ServerState::Ready,
        "{:?}",
        hub.statuses()
    );
    let mut registry = ToolRegistry::standard();
    // The real grammar's check: the server's schemas are ones it can hold.
    hub.extend(&mut registry, &lantern_llama::grammar::expressible);
    assert!(hub.statuses()[0].refused.is_empty(), "{:?}", hub.statuses());
    let toolbox = Arc::new(Toolbox::new(registry));
    assert!(toolbox.system_prompt().contains("time.convert_time"));
    let path = default_model_path();
    assert!(
        path.exists(),
        "the default model is missing at {}",
        path.display()
    );
    let mut model = LocalModel::load(&LoadOptions::new(path), |_| {}).unwrap();
    // Only the server's tools are offered: which tool the model picks among all of them is the
    // eval's to measure; that its call to one fits the server's schema is this test's.
    let offered: Vec<ToolSpec> = toolbox
        .specs()
        .iter()
        .filter(|s| s.name.starts_with("time."))
        .cloned()
        .collect();
    let messages = vec![
        Message::new(Role::System, toolbox.system_prompt()),
        Message::new(
            Role::User,
            "Convert 14:30 from Europe/Warsaw time to Asia/Tokyo time.",
        ),
    ];
    let cancel = CancelToken::new();
    let request = GenerateRequest::new(&messages, 160, &cancel)
        .with_tools(&offered)
        .with_stop(STOP_SEQUENCES)
        .with_tool_choice(ToolChoice::Required);
    let generation = model.generate(&request, &mut |_| Flow::Continue).unwrap();
    let turn = parse(&generation.text);
    let call = turn
        .call
        .unwrap_or_else(|| panic!("no call: {}", generation.text));
    assert!(call.tool.starts_with("time."), "{}", generation.text);
    toolbox.registry().validate(&call.tool, &call.args).unwrap();
    // And the server takes it: the call runs through the registry like a built-in one.
    let ctx = ToolContext::new(Workspace::open(root.path()).unwrap(), None);
    let prepared = toolbox
        .registry()
        .prepare(&call.tool, call.args.clone(), &ctx);
    assert!(prepared.is_ok(), "{:?}", prepared.err());
    let outcome = prepared.unwrap().run(&ctx);
    hub.shutdown();
    // The model may make up a time zone the server does not know: a tool error, not a
    // protocol one.
    if let Err(error) = outcome {
        assert!(
            error.message.contains("reported an error"),
            "{}",
            error.message
        );
    }
}
