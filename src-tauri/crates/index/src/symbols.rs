//! One file's definitions and references, read from its syntax tree.

use crate::Language;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use tree_sitter::{Node, Parser, QueryCursor, StreamingIterator};

/// The longest signature line kept, in characters.
const MAX_SIGNATURE_CHARS: usize = 200;

/// What a definition defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Trait,
    Interface,
    Type,
    Constant,
    /// A module-level name that is not a constant (Python's `handler = make_handler()`).
    Variable,
    Module,
    Macro,
}

impl Kind {
    fn from_capture(name: &str) -> Option<Kind> {
        Some(match name {
            "function" => Kind::Function,
            "method" => Kind::Method,
            "class" => Kind::Class,
            "struct" => Kind::Struct,
            "enum" => Kind::Enum,
            "trait" => Kind::Trait,
            "interface" => Kind::Interface,
            "type" => Kind::Type,
            "constant" => Kind::Constant,
            "variable" => Kind::Variable,
            "module" => Kind::Module,
            "macro" => Kind::Macro,
            _ => return None,
        })
    }

    /// The kind's name as a result shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Method => "method",
            Kind::Class => "class",
            Kind::Struct => "struct",
            Kind::Enum => "enum",
            Kind::Trait => "trait",
            Kind::Interface => "interface",
            Kind::Type => "type",
            Kind::Constant => "constant",
            Kind::Variable => "variable",
            Kind::Module => "module",
            Kind::Macro => "macro",
        }
    }

    /// Does a definition of this kind hold others as their parent (a class its methods, a
    /// module its functions, a constant object its functions)?
    fn holds_members(self) -> bool {
        !matches!(self, Kind::Function | Kind::Method | Kind::Macro)
    }

    /// Is a function held by a definition of this kind one of its methods?
    fn is_a_type(self) -> bool {
        matches!(
            self,
            Kind::Class | Kind::Struct | Kind::Enum | Kind::Trait | Kind::Interface | Kind::Type
        )
    }
}

/// One definition in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    pub name: String,
    pub kind: Kind,
    /// The definition it is a member of (a method's class, impl type or receiver type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// The line its name is written on, 1-based (after decorators or attributes the
    /// definition starts with).
    pub name_line: u32,
    /// The line the definition starts on, trimmed (at most 200 characters).
    pub signature: String,
}

/// A name a file uses: how often, and the first line it does so on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub name: String,
    /// 1-based.
    pub first_line: u32,
    pub count: u32,
}

/// What one file defines and uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSymbols {
    /// In the order they start in the file.
    pub definitions: Vec<Definition>,
    /// Sorted by name; a name the file itself defines is still listed when it is used.
    pub references: Vec<Reference>,
}

/// A name as a question or a call writes it, split into the type it is a member of and its own
/// name: `Config.load`, `Config::load` and `crate::Config::load` name `load` of `Config`.
///
/// ```
/// use lantern_index::split_member;
/// assert_eq!(split_member("Config::load"), (Some("Config"), "load"));
/// assert_eq!(split_member("app.get"), (Some("app"), "get"));
/// assert_eq!(split_member("parse_args"), (None, "parse_args"));
/// ```
pub fn split_member(written: &str) -> (Option<&str>, &str) {
    let split = written
        .rsplit_once("::")
        .or_else(|| written.rsplit_once('.'));
    match split {
        Some((parent, name)) if !parent.is_empty() => {
            let parent = parent.rsplit(['.', ':']).next().unwrap_or(parent);
            (Some(parent), name)
        }
        _ => (None, written),
    }
}

impl Definition {
    /// Is this the definition `split_member` read from a written name?
    pub fn is(&self, (parent, name): (Option<&str>, &str)) -> bool {
        self.name == name && parent.is_none_or(|p| self.parent.as_deref() == Some(p))
    }
}

thread_local! {
    static PARSERS: RefCell<BTreeMap<&'static str, Parser>> = const { RefCell::new(BTreeMap::new()) };
}

/// A definition as the query found it, before parents and kinds are settled.
struct Found {
    name: String,
    kind: Kind,
    parent: Option<String>,
    start_byte: usize,
    end_byte: usize,
    start_row: usize,
    end_row: usize,
    /// The query pattern that found it: when two patterns find the same name, the first wins.
    pattern: usize,
    name_byte: usize,
    name_row: usize,
}

/// A stretch of the file whose functions are members of a named type (a Rust `impl` block).
struct Scope {
    name: String,
    start_byte: usize,
    end_byte: usize,
}

/// Reads `source`, written in `language`, for what it defines and uses. A file with syntax
/// errors still gives what its readable parts define.
///
/// ```
/// use lantern_index::{symbols_of, Kind, Language};
/// let symbols = symbols_of(Language::Python, "class Cart:\n    def total(self):\n        return 0\n");
/// let total = &symbols.definitions[1];
/// assert_eq!((total.name.as_str(), total.kind), ("total", Kind::Method));
/// assert_eq!(total.parent.as_deref(), Some("Cart"));
/// assert_eq!((total.start_line, total.end_line), (2, 3));
/// ```
pub fn symbols_of(language: Language, source: &str) -> FileSymbols {
    let tree = PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = parsers.entry(language.name()).or_insert_with(|| {
            let mut parser = Parser::new();
            parser
                .set_language(&language.grammar())
                .expect("the grammar's version fits the tree-sitter library");
            parser
        });
        parser.parse(source, None)
    });
    let Some(tree) = tree else {
        return FileSymbols::default();
    };
    let query = language.query();
    let names = query.capture_names();
    let mut found: Vec<Found> = Vec::new();
    let mut scopes: Vec<Scope> = Vec::new();
    let mut references: BTreeMap<String, Reference> = BTreeMap::new();
    let text = |node: Node<'_>| source[node.byte_range()].to_string();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), source.as_bytes());
    while let Some(m) = matches.next() {
        let mut definition: Option<(Kind, Node<'_>)> = None;
        let (mut name, mut parent, mut scope, mut scope_name) = (None, None, None, None);
        for capture in m.captures {
            match names[capture.index as usize] {
                "name" => name = Some(capture.node),
                "parent" => parent = Some(capture.node),
                "scope" => scope = Some(capture.node),
                "scope.name" => scope_name = Some(capture.node),
                "reference" => {
                    let row = capture.node.start_position().row as u32 + 1;
                    references
                        .entry(text(capture.node))
                        .and_modify(|r| r.count += 1)
                        .or_insert_with(|| Reference {
                            name: text(capture.node),
                            first_line: row,
                            count: 1,
                        });
                }
                other => {
                    if let Some(kind) = other
                        .strip_prefix("definition.")
                        .and_then(Kind::from_capture)
                    {
                        definition = Some((kind, capture.node));
                    }
                }
            }
        }
        if let (Some(node), Some(name)) = (scope, scope_name) {
            scopes.push(Scope {
                name: text(name),
                start_byte: node.start_byte(),
                end_byte: node.end_byte(),
            });
        }
        if let (Some((kind, node)), Some(name)) = (definition, name) {
            found.push(Found {
                name: text(name),
                kind,
                parent: parent.map(text),
                start_byte: node.start_byte(),
                end_byte: node.end_byte(),
                start_row: node.start_position().row,
                end_row: node.end_position().row,
                pattern: m.pattern_index,
                name_byte: name.start_byte(),
                name_row: name.start_position().row,
            });
        }
    }
    FileSymbols {
        definitions: settle(found, &scopes, source),
        references: references.into_values().collect(),
    }
}

/// One definition per name written in the file (the first pattern's), with its parent, its
/// final kind (a function inside a type is a method; a lower-case module-level Python name is
/// a variable) and its signature line.
fn settle(mut found: Vec<Found>, scopes: &[Scope], source: &str) -> Vec<Definition> {
    found.sort_by_key(|f| (f.name_byte, f.pattern));
    found.dedup_by_key(|f| f.name_byte);
    found.sort_by_key(|f| (f.start_byte, std::cmp::Reverse(f.end_byte)));
    let lines: Vec<&str> = source.lines().collect();
    let mut settled = Vec::with_capacity(found.len());
    for (i, item) in found.iter().enumerate() {
        let encloses = |start: usize, end: usize| {
            start <= item.start_byte
                && item.end_byte <= end
                && (start, end) != (item.start_byte, item.end_byte)
        };
        // The innermost holder: the nearest earlier definition that spans this one, or a scope.
        let holder = found[..i]
            .iter()
            .rev()
            .filter(|f| encloses(f.start_byte, f.end_byte))
            .map(|f| {
                (
                    f.start_byte,
                    f.kind.holds_members().then(|| f.name.clone()),
                    f.kind,
                )
            })
            .next();
        // A definition inside a function body is that function's business, not the project's.
        if holder
            .as_ref()
            .is_some_and(|(_, _, kind)| matches!(*kind, Kind::Function | Kind::Method))
        {
            continue;
        }
        let scope = scopes
            .iter()
            .filter(|s| encloses(s.start_byte, s.end_byte))
            .max_by_key(|s| s.start_byte);
        let (parent, in_type) = match (holder, scope) {
            (Some((start, _, _)), Some(s)) if s.start_byte > start => (Some(s.name.clone()), true),
            (Some((_, name, kind)), _) => (name, kind.is_a_type()),
            (None, Some(s)) => (Some(s.name.clone()), true),
            (None, None) => (None, false),
        };
        let kind = match item.kind {
            Kind::Function if in_type => Kind::Method,
            Kind::Variable if is_constant_name(&item.name) => Kind::Constant,
            kind => kind,
        };
        let signature: String = lines
            .get(item.start_row)
            .map_or("", |l| l.trim())
            .chars()
            .take(MAX_SIGNATURE_CHARS)
            .collect();
        settled.push(Definition {
            name: item.name.clone(),
            kind,
            parent: item.parent.clone().or(parent),
            start_line: item.start_row as u32 + 1,
            end_line: item.end_row as u32 + 1,
            name_line: item.name_row as u32 + 1,
            signature,
        });
    }
    settled
}

/// Is `name` written the way constants are (`MAX_SIZE`, `TIMEOUT`)?
fn is_constant_name(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase()) && !name.chars().any(|c| c.is_ascii_lowercase())
}
