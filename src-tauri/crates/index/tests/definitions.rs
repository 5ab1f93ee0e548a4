//! Each language's definitions: name, kind, parent, line range and signature, as a reader of
//! the code would name them.

use lantern_index::{symbols_of, Kind, Language};

/// (name, kind, parent, first line, last line) of every definition.
fn outline(language: Language, source: &str) -> Vec<(String, Kind, Option<String>, u32, u32)> {
    symbols_of(language, source)
        .definitions
        .into_iter()
        .map(|d| (d.name, d.kind, d.parent, d.start_line, d.end_line))
        .collect()
}

fn def(
    name: &str,
    kind: Kind,
    parent: Option<&str>,
    lines: (u32, u32),
) -> (String, Kind, Option<String>, u32, u32) {
    (
        name.to_string(),
        kind,
        parent.map(str::to_string),
        lines.0,
        lines.1,
    )
}

#[test]
fn rust_items_methods_of_impl_blocks_and_trait_methods() {
    let source = r#"pub const LIMIT: usize = 8;
static mut COUNTER: u32 = 0;

pub struct Queue<T> {
    items: Vec<T>,
}

impl<T> Queue<T> {
    pub fn push(&mut self, item: T) {
        fn helper() {}
        self.items.push(item);
    }
}

pub enum Shape { Circle, Square }

pub trait Area {
    fn area(&self) -> f64;
}

type Pair = (u8, u8);

mod tests {
    fn checks() {}
}

macro_rules! square { ($x:expr) => { $x * $x }; }
"#;
    assert_eq!(
        outline(Language::Rust, source),
        vec![
            def("LIMIT", Kind::Constant, None, (1, 1)),
            def("COUNTER", Kind::Constant, None, (2, 2)),
            def("Queue", Kind::Struct, None, (4, 6)),
            def("push", Kind::Method, Some("Queue"), (9, 12)),
            def("Shape", Kind::Enum, None, (15, 15)),
            def("Area", Kind::Trait, None, (17, 19)),
            def("area", Kind::Method, Some("Area"), (18, 18)),
            def("Pair", Kind::Type, None, (21, 21)),
            def("tests", Kind::Module, None, (23, 25)),
            def("checks", Kind::Function, Some("tests"), (24, 24)),
            def("square", Kind::Macro, None, (27, 27)),
        ]
    );
}

#[test]
fn python_classes_methods_and_module_names() {
    let source = r#"import os

DEFAULT_PORT = 8080
handler = None

class Server(Base):
    """Serves."""
    timeout = 30

    def start(self):
        def inner():
            pass
        return inner

    @property
    def port(self):
        return DEFAULT_PORT

def serve(port=DEFAULT_PORT):
    Server().start()
"#;
    assert_eq!(
        outline(Language::Python, source),
        vec![
            def("DEFAULT_PORT", Kind::Constant, None, (3, 3)),
            def("handler", Kind::Variable, None, (4, 4)),
            def("Server", Kind::Class, None, (6, 17)),
            def("timeout", Kind::Variable, Some("Server"), (8, 8)),
            def("start", Kind::Method, Some("Server"), (10, 13)),
            def("port", Kind::Method, Some("Server"), (16, 17)),
            def("serve", Kind::Function, None, (19, 20)),
        ]
    );
    let symbols = symbols_of(Language::Python, source);
    let uses: Vec<&str> = symbols.references.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(uses, vec!["Base", "Server", "start"]);
}

#[test]
fn javascript_functions_classes_and_exported_assignments() {
    let source = r#"const VERSION = '1.2.0';
const slugify = require('./helpers/slugify');
function pipe(...fns) {
  return fns.reduce((a, b) => (...args) => a(b(...args)));
}

const withPlugins = (...plugins) => {
  return plugins;
};

class Cart extends Base {
  checkout(order) {
    return order;
  }
}

module.exports.makeCart = function (prices) {
  return new Cart();
};

export const helpers = {
  isEmpty(value) { return true; },
  check: function () {},
};
"#;
    assert_eq!(
        outline(Language::JavaScript, source),
        vec![
            // An import names what another module defines: not a definition here.
            def("VERSION", Kind::Constant, None, (1, 1)),
            def("pipe", Kind::Function, None, (3, 5)),
            def("withPlugins", Kind::Function, None, (7, 9)),
            def("Cart", Kind::Class, None, (11, 15)),
            def("checkout", Kind::Method, Some("Cart"), (12, 14)),
            def("makeCart", Kind::Function, None, (17, 19)),
            def("helpers", Kind::Constant, None, (21, 24)),
            def("isEmpty", Kind::Method, Some("helpers"), (22, 22)),
            def("check", Kind::Function, Some("helpers"), (23, 23)),
        ]
    );
}

#[test]
fn typescript_interfaces_types_enums_and_signatures() {
    let source = r#"export interface Action<T = any> {
  type: T;
  describe(): string;
  render: (into: string) => void;
}

export type Reducer<S> = (state: S, action: Action) => S;

export enum Level { Low, High }

export declare function combine(reducers: object): Reducer<any>;

export abstract class Base {
  abstract run(): void;
  stop(): void {}
}

namespace Internal {
  export function helper() {}
}
"#;
    assert_eq!(
        outline(Language::TypeScript, source),
        vec![
            def("Action", Kind::Interface, None, (1, 5)),
            def("describe", Kind::Method, Some("Action"), (3, 3)),
            def("render", Kind::Method, Some("Action"), (4, 4)),
            def("Reducer", Kind::Type, None, (7, 7)),
            def("Level", Kind::Enum, None, (9, 9)),
            def("combine", Kind::Function, None, (11, 11)),
            def("Base", Kind::Class, None, (13, 16)),
            def("run", Kind::Method, Some("Base"), (14, 14)),
            def("stop", Kind::Method, Some("Base"), (15, 15)),
            def("Internal", Kind::Module, None, (18, 20)),
            def("helper", Kind::Function, Some("Internal"), (19, 19)),
        ]
    );
}

#[test]
fn go_functions_methods_by_receiver_types_and_constants() {
    let source = r#"package server

const defaultPort = 8080

type Server struct {
	Port int
}

type Handler interface {
	Serve(r *Request) error
}

type ID string

func New(port int) *Server {
	return &Server{Port: port}
}

func (s *Server) Start() error {
	return nil
}
"#;
    assert_eq!(
        outline(Language::Go, source),
        vec![
            def("defaultPort", Kind::Constant, None, (3, 3)),
            def("Server", Kind::Struct, None, (5, 7)),
            def("Handler", Kind::Interface, None, (9, 11)),
            def("Serve", Kind::Method, Some("Handler"), (10, 10)),
            def("ID", Kind::Type, None, (13, 13)),
            def("New", Kind::Function, None, (15, 17)),
            def("Start", Kind::Method, Some("Server"), (19, 21)),
        ]
    );
    let start = symbols_of(Language::Go, source).definitions.pop().unwrap();
    assert_eq!(start.signature, "func (s *Server) Start() error {");
}

#[test]
fn a_file_with_a_syntax_error_still_gives_its_readable_definitions() {
    let source = "def good():\n    return 1\n\ndef broken(:\n    pass\n\nclass After:\n    pass\n";
    let names: Vec<String> = outline(Language::Python, source)
        .into_iter()
        .map(|d| d.0)
        .collect();
    assert!(names.contains(&"good".to_string()), "{names:?}");
    assert!(names.contains(&"After".to_string()), "{names:?}");
}
