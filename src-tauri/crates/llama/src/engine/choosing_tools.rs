//! Which tool a call names: what each tool's name is worth beyond the model's own score for it,
//! from what the question shares with the tool's description (see
//! [`lantern_core::tool_fit::tool_bonuses`]) and from what the question calls for by what it
//! names.

use lantern_core::question::Question;
use lantern_core::spec::ToolSpec;
use lantern_core::tool_fit::tool_bonuses;
use lantern_core::tools::Risk;

/// Log-probability (nats) a tool that can create a file is worth when the question names a
/// file that does not exist yet.
const CREATES_BONUS: f64 = 4.0;

/// Log-probability (nats) the tool that finds a definition (one that looks names up, or else
/// a search for the question's words) is worth when the question names something the
/// workspace defines (`make_default_short_help`): that finds where it is defined, which no
/// listing or file the question names does.
const FINDS_BONUS: f64 = 4.0;

/// Log-probability (nats) given to the tool that calculates when the question spells out a
/// calculation: the model's own score for a tool's name knows nothing of arithmetic.
const CALCULATES_BONUS: f64 = 8.0;

/// Log-probability (nats) taken from a tool that writes or runs a command when the question asks
/// for no change: a tiny model opens an edit for "Which command does this package put on the PATH?".
const UNASKED_CHANGE_COST: f64 = 8.0;

/// What the question calls for by what it names.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct WantedTools {
    /// It names a file that does not exist yet.
    pub(super) creates: bool,
    /// It asks for a file that does not exist yet, and no call of the turn has run yet: the
    /// first call makes it (only a tool that can create a file does).
    pub(super) makes: bool,
    /// It names something the workspace defines.
    pub(super) finds: bool,
    /// It asks where something the workspace defines is, and no call of the turn has run yet:
    /// the first call looks the name up. A search for the name finds every line that mentions
    /// it (a changelog's first), a look-up its definition alone; after that, the model chooses.
    pub(super) locates: bool,
    /// It asks for no change (see [`lantern_core::question::Question::asks_for_a_change`]).
    pub(super) reads_only: bool,
    /// It spells out a calculation (see [`lantern_core::question::Question::calculations`]).
    pub(super) calculates: bool,
}

/// Each tool's name as a call writes it (with its closing quote) and what it is worth in nats
/// beyond the model's score: the question's words its description shares, more for the tools
/// the question calls for by what it names (those that can write a new file when it names one,
/// [`CREATES_BONUS`]; the one that finds a definition when it names something the workspace
/// defines, [`FINDS_BONUS`]; the one that calculates when it spells out a calculation,
/// [`CALCULATES_BONUS`]), less for those that write or run a command when it asks for no
/// change ([`UNASKED_CHANGE_COST`]). When the first call of a question that asks where a
/// defined name is ([`WantedTools::locates`]) can look names up, only the tools that do are
/// candidates; when the first call of a question that asks for a new file
/// ([`WantedTools::makes`]) can create one, only the tools that can are. A tool without
/// arguments named in `spent` (it ran this turn) is none: calling it again could only bring
/// back the result the conversation holds.
pub(super) fn tool_candidates(
    tools: &[ToolSpec],
    question: &Question,
    wanted: WantedTools,
    spent: &[&str],
) -> Vec<(String, f64)> {
    let bonus_if = |yes: bool, bonus: f64| if yes { bonus } else { 0.0 };
    // What finds a defined name: a tool that looks names up where there is one, else a
    // search for the question's words.
    let has_lookup = tools.iter().any(looks_up_names);
    let finder = |tool: &ToolSpec| match has_lookup {
        true => looks_up_names(tool),
        false => searches(tool),
    };
    let locating = wanted.locates && has_lookup;
    let making = wanted.makes && tools.iter().any(can_create);
    tools
        .iter()
        .zip(tool_bonuses(question, tools))
        .filter(|(tool, _)| !locating || looks_up_names(tool))
        .filter(|(tool, _)| !making || can_create(tool))
        .filter(|(tool, _)| tool.takes_arguments() || !spent.contains(&tool.name.as_str()))
        .map(|(tool, words)| {
            let bonus = words
                + bonus_if(wanted.creates && can_create(tool), CREATES_BONUS)
                + bonus_if(wanted.finds && finder(tool), FINDS_BONUS)
                + bonus_if(wanted.calculates && calculates(tool), CALCULATES_BONUS)
                - bonus_if(wanted.reads_only && changes(tool), UNASKED_CHANGE_COST);
            (format!("{}\"", tool.name), bonus)
        })
        .collect()
}

/// Does this tool search for words of the question: does it declare an `"x-words":
/// "question"` argument?
pub(super) fn searches(tool: &ToolSpec) -> bool {
    tool.input_schema["properties"]
        .as_object()
        .is_some_and(|props| props.values().any(|p| p["x-words"] == "question"))
}

/// Does this tool look up a name the workspace defines: does it declare an `"x-symbol"`
/// argument?
pub(super) fn looks_up_names(tool: &ToolSpec) -> bool {
    tool.has_argument_marked("x-symbol")
}

/// Does this tool calculate: does it declare an `"x-expression"` argument?
fn calculates(tool: &ToolSpec) -> bool {
    tool.has_argument_marked("x-expression")
}

/// Does this tool change the workspace or run a command in it?
fn changes(tool: &ToolSpec) -> bool {
    matches!(tool.risk, Risk::Write | Risk::Exec)
}

/// Can this tool create a file: does it declare a `"new_or_existing_file"` path argument?
fn can_create(tool: &ToolSpec) -> bool {
    tool.input_schema["properties"]
        .as_object()
        .is_some_and(|props| {
            props
                .values()
                .any(|p| p["x-path"] == "new_or_existing_file")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lantern_core::toolbox::Toolbox;

    fn worth(question: &str, wanted: WantedTools, tool: &str) -> f64 {
        let toolbox = Toolbox::standard();
        let candidates = tool_candidates(toolbox.specs(), &Question::read(question), wanted, &[]);
        let name = format!("{tool}\"");
        candidates.iter().find(|(n, _)| *n == name).unwrap().1
    }

    #[test]
    fn the_tools_a_question_calls_for_are_worth_more_and_writes_it_does_not_ask_for_less() {
        let question = "What is the sum of 17 and 25?";
        let plain = WantedTools::default();
        let calculating = WantedTools {
            calculates: true,
            ..plain
        };
        assert_eq!(
            worth(question, calculating, "calculate"),
            worth(question, plain, "calculate") + CALCULATES_BONUS
        );
        let asking = "Which module sums up the value of each entry of the cart?";
        let reading = WantedTools {
            reads_only: true,
            ..plain
        };
        assert_eq!(
            worth(asking, reading, "edit_file"),
            worth(asking, plain, "edit_file") - UNASKED_CHANGE_COST
        );
        assert_eq!(
            worth(asking, reading, "read_file"),
            worth(asking, plain, "read_file")
        );
        let locating = WantedTools {
            locates: true,
            ..plain
        };
        let asking = "Where is the Shelf class declared?";
        let toolbox = Toolbox::standard();
        let candidates = tool_candidates(toolbox.specs(), &Question::read(asking), locating, &[]);
        assert_eq!(
            candidates,
            [(
                "find_definition\"".to_string(),
                worth(asking, plain, "find_definition")
            )]
        );
        // The first call for a new file is one that can make it.
        let making = WantedTools {
            creates: true,
            makes: true,
            ..plain
        };
        let asking = "Make a NOTES.md with the plan for the release.";
        let candidates = tool_candidates(toolbox.specs(), &Question::read(asking), making, &[]);
        let names: Vec<&str> = candidates.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["write_file\""]);
    }

    #[test]
    fn a_tool_without_arguments_that_ran_this_turn_is_not_offered_again() {
        let toolbox = Toolbox::standard();
        let asked = Question::read("What is on my list?");
        let names = |spent: &[&str]| -> Vec<String> {
            tool_candidates(toolbox.specs(), &asked, WantedTools::default(), spent)
                .into_iter()
                .map(|(name, _)| name)
                .collect()
        };
        assert!(names(&[]).contains(&"list_tasks\"".to_string()));
        let after = names(&["list_tasks", "read_file"]);
        assert!(!after.contains(&"list_tasks\"".to_string()));
        assert!(
            after.contains(&"read_file\"".to_string()),
            "a tool with arguments can be called anew"
        );
    }
}
