use super::sampling::{
    best_by_logit, closed_call_end, inside_json_string, is_looping, pick, repeats_itself,
    stop_sequence_end, would_open_a_call,
};
use super::*;

#[test]
fn a_prompt_batch_is_sized_by_the_model_and_its_threads_never_by_the_clock() {
    use super::kv::prompt_chunk;
    // The default model at one thread: about 80 ms of prompt, as measured on it.
    assert_eq!(prompt_chunk(134_515_008, 1, 512), 11);
    // The same model and threads give the same batches on any machine, busy or not.
    assert_eq!(
        prompt_chunk(134_515_008, 1, 512),
        prompt_chunk(134_515_008, 1, 512)
    );
    // More threads, larger batches; a large model, the least; never above the settings' most.
    assert_eq!(prompt_chunk(134_515_008, 4, 512), 44);
    assert_eq!(prompt_chunk(7_000_000_000, 1, 512), 8);
    assert_eq!(prompt_chunk(1_000_000, 16, 512), 512);
    assert_eq!(prompt_chunk(134_515_008, 1, 4), 4);
}

#[test]
fn flash_attention_is_never_used_on_the_cpu() {
    assert!(!super::load::flash_attention_for(0));
    let gpu_built = cfg!(any(feature = "cuda", feature = "vulkan", feature = "metal"));
    assert_eq!(super::load::flash_attention_for(99), gpu_built);
}

#[test]
fn a_saved_opening_is_kept_apart_for_each_way_of_computing_attention() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model.gguf");
    std::fs::write(&model, b"the weights").unwrap();
    let cache = PromptCache::new(dir.path().join("states"), &model, 2048).unwrap();
    let opening = tokens(&[1, 2, 3]);
    assert_eq!(cache.files(&opening, false), cache.files(&opening, false));
    assert_ne!(cache.files(&opening, false), cache.files(&opening, true));
}

fn tokens(ids: &[i32]) -> Vec<LlamaToken> {
    ids.iter().map(|i| LlamaToken(*i)).collect()
}

#[test]
fn the_json_position_knows_strings_and_escapes() {
    assert!(!inside_json_string(r#"{"tool": "x", "args": {"#));
    assert!(inside_json_string(
        r#"{"tool": "x", "args": {"content": "a }"#
    ));
    assert!(inside_json_string(r#"{"content": "say \"hi"#));
    assert!(!inside_json_string(r#"{"content": "say \"hi\"""#));
    assert!(inside_json_string(r#"{"content": "back\\slash\"#));
}

#[test]
fn a_closing_tag_inside_a_string_does_not_end_a_call() {
    let open = "<TOOL_CALL>\n{\"tool\": \"write_file\", \"args\": {\"path\": \"a.md\", \"content\": \"x</TOOL_CALL>";
    assert_eq!(closed_call_end(open, 0, &TEXT_PROTOCOL), None);
    let closed = format!("{open} y\"}}}}\n</TOOL_CALL>");
    assert_eq!(
        closed_call_end(&closed, 0, &TEXT_PROTOCOL),
        Some(closed.len())
    );
    // Only tags at or after `from` count.
    assert_eq!(closed_call_end(&closed, closed.len(), &TEXT_PROTOCOL), None);
}

#[test]
fn the_best_tokens_come_best_first_and_ties_go_to_the_later_token() {
    let logits = [1.0, 5.0, f32::NEG_INFINITY, 3.0, 5.0, 2.0, f32::NAN];
    let ids = |tokens: Vec<LlamaToken>| tokens.iter().map(|t| t.0).collect::<Vec<_>>();
    assert_eq!(ids(best_by_logit(&logits, &[], 3)), [4, 1, 3]);
    assert_eq!(ids(best_by_logit(&logits, &[LlamaToken(4)], 3)), [1, 3, 5]);
    assert_eq!(ids(best_by_logit(&logits, &[], 10)), [4, 1, 3, 5, 0]);
    // The first is the greedy pick's token.
    assert_eq!(
        pick(&logits, &[], None, &mut None),
        Some(best_by_logit(&logits, &[], 1)[0])
    );
    assert!(best_by_logit(&[f32::NEG_INFINITY], &[], 4).is_empty());
}

#[test]
fn a_reply_repeating_itself_is_a_loop() {
    assert!(is_looping(&tokens(&[
        9, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3
    ])));
    assert!(is_looping(&tokens(&[5; 16])));
    assert!(!is_looping(&tokens(&[5; 6])));
    assert!(!is_looping(&tokens(&[1, 2, 3, 1, 2, 3, 1, 2, 3])));
    assert!(!is_looping(&tokens(&[
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
    ])));
}

#[test]
fn the_tag_left_by_scoring_is_counted_only_after_a_whole_prompt() {
    let tag = [7, 8, 9];
    // Scoring left the tag's first two tokens after the prompt.
    assert_eq!(super::kv::tag_tokens_in_cache(&[1, 2, 7, 8], 2, &tag), 2);
    // Something else follows the prompt.
    assert_eq!(super::kv::tag_tokens_in_cache(&[1, 2, 5], 2, &tag), 0);
    // A cache that could not drop a suffix was cleared: nothing to count, nothing to underflow.
    assert_eq!(super::kv::tag_tokens_in_cache(&[], 2, &tag), 0);
    assert_eq!(super::kv::tag_tokens_in_cache(&[1], 2, &tag), 0);
    // The whole tag is never counted: its last token is decoded for the logits after it.
    assert_eq!(super::kv::tag_tokens_in_cache(&[1, 2, 7, 8, 9], 2, &tag), 0);
}

#[test]
fn an_answer_may_not_begin_a_call_or_a_protocol_prefix_even_across_pieces() {
    assert!(would_open_a_call("Sure. ", "<TOOL_CALL>"));
    assert!(would_open_a_call("Sure. <TOOL", "_RESULT>"));
    assert!(would_open_a_call("The result: TOOL_", "RESULT:"));
    assert!(would_open_a_call("ok ", "<tool_call>"));
    assert!(would_open_a_call("Here: <TOUB", "_RESULT>"));
    assert!(would_open_a_call("Here: <TOUBLE", ">"));
    assert!(would_open_a_call("Here: ", "{\"tool\": \"list_files\""));
    assert!(!would_open_a_call("A Vec", "<u8>"));
    // A mangled call: a tag at the very start, or a call's key written any way.
    assert!(would_open_a_call("", "<TO"));
    assert!(would_open_a_call("\n<", "TOoolRef>"));
    assert!(would_open_a_call("x ", "{\"tool\"=\"read_file\""));
    assert!(!would_open_a_call("", "The"));
    assert!(!would_open_a_call("Use ", "<div>"));
    assert!(would_open_a_call("< ", "TOOL_RESULT>"));
    assert!(would_open_a_call("\n", "< "));
    assert!(!would_open_a_call("The version is ", "2.4.1"));
    // Only the tail matters: an old opener far back does not ban every later token.
    assert!(!would_open_a_call(
        "<tool> was mentioned long, long, long ago. Now",
        " fine"
    ));
}

#[test]
fn the_earliest_stop_sequence_ends_the_text_and_the_search_starts_on_a_character() {
    let text = "answer</tool> more</TOOL_CALL>";
    assert_eq!(
        stop_sequence_end(text, 0, 0, &["</TOOL_CALL>", "</tool>"]),
        Some("answer</tool>".len())
    );
    assert_eq!(stop_sequence_end("no stop here", 0, 0, &["</tool>"]), None);
    // A search start inside `é` moves to the next character instead of panicking.
    let text = "é</tool>";
    assert_eq!(
        stop_sequence_end(text, 1, 2, &["</tool>"]),
        Some(text.len())
    );
}

#[test]
fn a_grounded_argument_is_recognised_when_its_string_opens() {
    let toolbox = lantern_core::toolbox::Toolbox::standard();
    let tools = toolbox.specs();
    use super::grounding::{open_grounded_argument, Grounding, PathKind};
    let read = "\n{\"tool\": \"read_file\", \"args\": {\"path\": \"";
    assert_eq!(
        open_grounded_argument(read, "tool", tools),
        Some(Grounding::Path(PathKind::File))
    );
    let list = "{\"tool\":\"list_files\",\"args\":{\"directory\":\"";
    assert_eq!(
        open_grounded_argument(list, "tool", tools),
        Some(Grounding::Path(PathKind::Folder))
    );
    // A file to write is an existing one or one the question names; a query comes from the
    // question.
    let write = "{\"tool\": \"write_file\", \"args\": {\"path\": \"";
    assert_eq!(
        open_grounded_argument(write, "tool", tools),
        Some(Grounding::Path(PathKind::NewOrExistingFile))
    );
    let search = "{\"tool\": \"search_code\", \"args\": {\"query\": \"";
    assert_eq!(
        open_grounded_argument(search, "tool", tools),
        Some(Grounding::QuestionWord)
    );
    let pattern = "{\"tool\": \"list_files\", \"args\": {\"directory\": \"tests\", \"pattern\": \"";
    assert_eq!(
        open_grounded_argument(pattern, "tool", tools),
        Some(Grounding::QuestionGlob)
    );
    let symbol = "{\"tool\": \"find_definition\", \"args\": {\"name\": \"";
    assert_eq!(
        open_grounded_argument(symbol, "tool", tools),
        Some(Grounding::Symbol)
    );
    // Not at the opening quote any more.
    assert_eq!(
        open_grounded_argument(&format!("{read}pack"), "tool", tools),
        None
    );
    // A native call names its tool under its own key.
    let native = "\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"";
    assert_eq!(
        open_grounded_argument(native, "name", tools),
        Some(Grounding::Path(PathKind::File))
    );
    assert_eq!(open_grounded_argument(native, "tool", tools), None);
}

#[test]
fn the_shortlist_puts_paths_that_name_the_question_first_then_shallow_ones() {
    use super::grounding::shortlist;
    let paths: Vec<String> = [
        "README.md",
        "helpers/slugify.js",
        "models/invoice.js",
        "storage/diskcache.js",
        "package.json",
        "with\"quote.js",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let list = shortlist(
        &paths,
        &Question::read("Which file has the slugify helper in it?"),
    );
    assert_eq!(list[0], ("helpers/slugify.js", 2));
    assert_eq!(list[1].0, "README.md");
    assert!(list.iter().all(|(p, _)| !p.contains('"')));
    let list = shortlist(
        &paths,
        &Question::read("Where does the DiskCache type come from?"),
    );
    assert_eq!(list[0].0, "storage/diskcache.js");
}

#[test]
fn a_symbol_the_question_spells_comes_first_then_names_sharing_its_words() {
    use super::grounding::symbol_candidates;
    let names: Vec<String> = [
        "Parser",
        "parseArgs",
        "parse_config",
        "render",
        "with\"quote",
        "x",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let ranked = |question: &str| -> Vec<String> {
        symbol_candidates(&names, &Question::read(question))
            .into_iter()
            .map(|(name, _)| name.trim_end_matches('"').to_string())
            .collect()
    };
    assert_eq!(ranked("Where is parseArgs defined?")[0], "parseArgs");
    // "parses" and "arguments" are not the name, but its parts begin like them.
    assert_eq!(ranked("Which function parses the args?")[0], "parseArgs");
    assert_eq!(ranked("where is the config parsed")[0], "parse_config");
    // Every candidate is a name the workspace defines, and none breaks a JSON string.
    let all = ranked("What does render do?");
    assert_eq!(all[0], "render");
    assert!(
        all.iter().all(|n| names.contains(n) && !n.contains('"')),
        "{all:?}"
    );
}

#[test]
fn an_answer_whose_lines_differ_only_in_a_counter_repeats_itself() {
    let line = |n: i32| {
        let mut t = vec![n, 100];
        t.extend(200..212);
        t
    };
    let list: Vec<i32> = (1..=3).flat_map(line).collect();
    assert!(repeats_itself(&tokens(&list)));
    let twice: Vec<i32> = (1..=2).flat_map(line).collect();
    assert!(!repeats_itself(&tokens(&twice)));
    assert!(!repeats_itself(&tokens(&(0..40).collect::<Vec<_>>())));
}

#[test]
fn a_reply_goes_on_when_its_likeliest_tokens_are_all_banned() {
    // Token i has logit i: the 20 likeliest (20..40) are banned.
    let logits: Vec<f32> = (0..40).map(|i| i as f32).collect();
    let mut banned = |t: LlamaToken| t.0 >= 20;
    let token = super::sampling::choose(&logits, None, &mut None, &mut banned);
    assert_eq!(token, Some(LlamaToken(19)));
}

#[test]
fn edit_words_rank_edit_file_and_file_names_rank_no_tool() {
    let registry = lantern_core::tools::ToolRegistry::standard();
    let specs: Vec<ToolSpec> = registry.specs().into_iter().cloned().collect();
    let bonus = |question: &str, tool: &str| {
        let bonuses = lantern_core::tool_fit::tool_bonuses(&Question::read(question), &specs);
        bonuses[specs.iter().position(|s| s.name == tool).unwrap()]
    };
    let question = "Set RETRY_LIMIT in lib/constants.js to 7.";
    assert!(bonus(question, "edit_file") > 0.0);
    // "constants" is part of a file's name here, not a search for a constant.
    assert_eq!(bonus(question, "search_code"), 0.0);
    let question = "Change the pool size from 64 to 32.";
    assert!(bonus(question, "edit_file") > bonus(question, "write_file"));
    // "says" and "ignores" are in list_files' description of how it behaves, not of what it
    // is for.
    let question = "Create a file HISTORY.md that says it ignores nothing.";
    assert_eq!(bonus(question, "list_files"), bonus(question, "read_file"));
    assert!(bonus(question, "write_file") > bonus(question, "list_files"));
}

#[test]
fn the_tools_that_search_are_those_whose_schema_takes_the_question_s_words() {
    let registry = lantern_core::tools::ToolRegistry::standard();
    let searching: Vec<&str> = registry
        .specs()
        .into_iter()
        .filter(|spec| super::choosing_tools::searches(spec))
        .map(|spec| spec.name.as_str())
        .collect();
    assert_eq!(searching, ["search_code"]);
}

#[test]
fn a_file_the_question_names_is_the_path_worth_most_when_the_lever_is_on() {
    use super::grounding::{path_candidates, PathKind};
    let known = lantern_core::model::KnownPaths::from_files(vec![
        "setup.py".to_string(),
        "src/shop/helpers.py".to_string(),
        "src/shop/core.py".to_string(),
    ]);
    let asked = Question::read("Explain how helpers.py wraps calls in retries.");
    let worth = |named_first: bool, path: &str| {
        path_candidates(PathKind::File, &known.files, &known, &asked, named_first)
            .into_iter()
            .find(|(p, _)| *p == format!("{path}\""))
            .map(|(_, bonus)| bonus)
    };
    let on = worth(true, "src/shop/helpers.py").unwrap();
    let off = worth(false, "src/shop/helpers.py").unwrap();
    assert_eq!(on - off, 8.0);
    assert_eq!(worth(true, "setup.py"), worth(false, "setup.py"));
}
