//! Arithmetic: an expression's exact value, and the expressions a message spells out.
//!
//! Parsing is `evalexpr`'s (a maintained expression crate); the computing is ours, in
//! `rust_decimal`'s 28-digit decimals rather than `evalexpr`'s own `i64`/`f64`, because a user who
//! asks for `0.1 + 0.2` wants `0.3`, and `7 / 2` is `3.5`, not `3`. Every step is checked:
//! a result that does not fit is an overflow, never a wrapped or silently rounded number, and a
//! value that could not be kept exactly (`1 / 3`, `sqrt(2)`) is marked as such.
//!
//! ```
//! use lantern_core::arithmetic::{evaluate, expressions_in};
//!
//! assert_eq!(evaluate("17 * 23").unwrap().value, "391");
//! assert_eq!(evaluate("0.1 + 0.2").unwrap().value, "0.3");
//! assert!(evaluate("1 / 0").is_err());
//! assert_eq!(expressions_in("What is 17 × 23?"), ["17 * 23"]);
//! assert!(expressions_in("What is recursion?").is_empty());
//! ```

use evalexpr::{DefaultNumericTypes, Node, Operator, Value};
use rust_decimal::{Decimal, MathematicalOps};
use std::fmt;

/// An expression's value, as text (`"391"`, `"3.5"`), and whether it is exact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The value in plain decimal notation, without trailing zeros.
    pub value: String,
    /// False when a step had to round (`1 / 3`, `sqrt(2)`, a literal too long for a double).
    pub exact: bool,
}

/// Why an expression has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArithmeticError {
    /// It is not an expression the calculator reads; the text says what is wrong.
    Syntax(String),
    /// A division (or remainder) by zero.
    DivisionByZero,
    /// A value outside what 28 significant digits can hold (about ±7.9 × 10²⁸).
    Overflow,
    /// A step with no real value (the square root of a negative number, `0 ^ -1`).
    Undefined(String),
}

impl fmt::Display for ArithmeticError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArithmeticError::Syntax(why) => write!(f, "not an arithmetic expression: {why}"),
            ArithmeticError::DivisionByZero => write!(f, "division by zero"),
            ArithmeticError::Overflow => write!(
                f,
                "the result is too large (beyond 28 significant digits, about 7.9e28)"
            ),
            ArithmeticError::Undefined(why) => write!(f, "undefined: {why}"),
        }
    }
}

/// The longest expression read; longer text is not a calculation a person typed.
pub const MAX_EXPRESSION_CHARS: usize = 1000;

/// The value of `expression`: numbers, `+ - * / % ^`, parentheses, `×` `÷` `**`, the functions
/// `sqrt abs round floor ceil min max`, and the constants `pi` and `e`.
pub fn evaluate(expression: &str) -> Result<Outcome, ArithmeticError> {
    if expression.chars().count() > MAX_EXPRESSION_CHARS {
        return Err(ArithmeticError::Syntax(format!(
            "longer than {MAX_EXPRESSION_CHARS} characters"
        )));
    }
    let written = normalised(expression);
    if written.trim().is_empty() {
        return Err(ArithmeticError::Syntax("the expression is empty".into()));
    }
    let tree = evalexpr::build_operator_tree::<DefaultNumericTypes>(&written)
        .map_err(|e| ArithmeticError::Syntax(e.to_string()))?;
    let mut exact = true;
    let value = value_of(&tree, &mut exact)?;
    Ok(Outcome {
        value: value.normalize().to_string(),
        exact,
    })
}

/// The arithmetic expressions `message` spells out, as the calculator would read them: runs of
/// numbers joined by operators (`17 * 23`, `(2 + 3) × 4`, `2^10`, `10 / 4`), each with a value.
/// A lone number, a version (`1.2.3`), a date (`2024-01-05`) or a range (`10-20`) is none: a
/// minus counts only between spaces or next to a parenthesis.
pub fn expressions_in(message: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut run = String::new();
    let mut previous: Option<char> = None;
    for c in message.chars().chain(std::iter::once('\n')) {
        let in_expression = c.is_ascii_digit()
            || "+-*/%^()×÷. ".contains(c)
            // `5x3` is no product, and a word glued to a number is a name (`utf8`, `v2`).
            || (run.is_empty() && c == '(');
        let glued = previous.is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '-');
        if in_expression && !(run.is_empty() && glued && c.is_ascii_digit()) {
            run.push(c);
        } else {
            let ends_in_word = c.is_alphanumeric() || c == '_';
            let candidate = trimmed_run(&run);
            if !(ends_in_word && run.ends_with(|d: char| d.is_ascii_digit())) {
                if let Some(expression) = candidate_expression(candidate) {
                    if !found.contains(&expression) {
                        found.push(expression);
                    }
                }
            }
            run.clear();
        }
        previous = Some(c);
    }
    found
}

/// A run without the spaces, full stops and unbalanced parentheses at its ends ("(17 * 23)."
/// keeps its parentheses, "is 4 + 4." loses the full stop).
fn trimmed_run(run: &str) -> &str {
    let mut text = run.trim_matches(|c: char| c == ' ' || c == '.');
    loop {
        let opens = text.matches('(').count();
        let closes = text.matches(')').count();
        let trimmed = if closes > opens {
            text.strip_suffix(')').or_else(|| text.strip_prefix(')'))
        } else if opens > closes {
            text.strip_prefix('(').or_else(|| text.strip_suffix('('))
        } else {
            None
        };
        match trimmed {
            Some(t) => text = t.trim_matches(|c: char| c == ' ' || c == '.'),
            None => return text,
        }
    }
}

/// `text` as an expression, if it is one: at least two numbers, an operator between them that
/// is not a bare hyphen, and a value.
fn candidate_expression(text: &str) -> Option<String> {
    let numbers = text
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|n| n.chars().any(|c| c.is_ascii_digit()))
        .count();
    if numbers < 2 {
        return None;
    }
    let operator = text.contains(['+', '*', '/', '%', '^', '×', '÷'])
        || text.contains(" - ")
        || text.contains("(-")
        || text.contains(")-")
        || text.contains("-(");
    // A version or an address (`1.2.3`, `10.0.0.1`) is numbers with dots, not a calculation.
    let dotted = text
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .any(|n| n.matches('.').count() > 1);
    if !operator || dotted {
        return None;
    }
    let written = normalised(text);
    evaluate(&written).ok().map(|_| written)
}

/// The expression in the notation the parser reads: `×` as `*`, `÷` as `/`, `**` as `^`, and
/// single spaces around the operators people write spaced anyway.
fn normalised(expression: &str) -> String {
    let replaced = expression
        .replace('×', "*")
        .replace('÷', "/")
        .replace("**", "^");
    replaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The value of one node of the parsed tree, in exact decimals where the steps allow.
fn value_of(
    node: &Node<DefaultNumericTypes>,
    exact: &mut bool,
) -> Result<Decimal, ArithmeticError> {
    let children = node.children();
    let operand = |i: usize, exact: &mut bool| -> Result<Decimal, ArithmeticError> {
        let child = children
            .get(i)
            .ok_or_else(|| ArithmeticError::Syntax("an operator is missing an operand".into()))?;
        value_of(child, exact)
    };
    match node.operator() {
        Operator::RootNode => match children {
            [only] => value_of(only, exact),
            [] => Err(ArithmeticError::Syntax("the expression is empty".into())),
            _ => Err(ArithmeticError::Syntax("more than one expression".into())),
        },
        Operator::Const { value } => constant(value, exact),
        Operator::Neg => Ok(-operand(0, exact)?),
        Operator::Add => checked(operand(0, exact)?.checked_add(operand(1, exact)?)),
        Operator::Sub => checked(operand(0, exact)?.checked_sub(operand(1, exact)?)),
        Operator::Mul => checked(operand(0, exact)?.checked_mul(operand(1, exact)?)),
        Operator::Div => divide(operand(0, exact)?, operand(1, exact)?, exact),
        Operator::Mod => {
            let (a, b) = (operand(0, exact)?, operand(1, exact)?);
            if b.is_zero() {
                return Err(ArithmeticError::DivisionByZero);
            }
            checked(a.checked_rem(b))
        }
        Operator::Exp => power(operand(0, exact)?, operand(1, exact)?, exact),
        Operator::VariableIdentifierRead { identifier } => named_constant(identifier, exact),
        Operator::FunctionIdentifier { identifier } => {
            let arguments = arguments_of(children);
            let values = arguments
                .iter()
                .map(|a| value_of(a, exact))
                .collect::<Result<Vec<_>, _>>()?;
            function(identifier, &values, exact)
        }
        Operator::Tuple => Err(ArithmeticError::Syntax(
            "a list of values, not one expression (write 1000, not 1,000)".into(),
        )),
        other => Err(ArithmeticError::Syntax(format!(
            "`{other}` is not arithmetic; use numbers, + - * / % ^ and parentheses"
        ))),
    }
}

/// A function's arguments: its one child, or the members of the tuple it is (`max(2, 9)`),
/// seen through the parentheses' root nodes.
fn arguments_of(children: &[Node<DefaultNumericTypes>]) -> &[Node<DefaultNumericTypes>] {
    match children {
        [only] if matches!(only.operator(), Operator::RootNode) && only.children().len() == 1 => {
            arguments_of(only.children())
        }
        [only] if matches!(only.operator(), Operator::Tuple) => only.children(),
        _ => children,
    }
}

/// Is `value` (a result that was rounded to fit, or not) plainly exact: checked by its inverse
/// operation and not at the full 28 digits a rounded value fills?
fn plainly_exact(value: Decimal, inverse_matches: bool) -> bool {
    inverse_matches && value.normalize().scale() < 20
}

fn checked(value: Option<Decimal>) -> Result<Decimal, ArithmeticError> {
    value.ok_or(ArithmeticError::Overflow)
}

/// A literal: integers are exact; a decimal literal is read back from the shortest text of
/// the double the parser made of it, which is the literal itself up to 15 significant digits.
fn constant(
    value: &Value<DefaultNumericTypes>,
    exact: &mut bool,
) -> Result<Decimal, ArithmeticError> {
    match value {
        Value::Int(i) => Ok(Decimal::from(*i)),
        Value::Float(f) if f.is_finite() => {
            if f.abs() >= 2f64.powi(53) {
                *exact = false;
            }
            format!("{f}")
                .parse::<Decimal>()
                .map_err(|_| ArithmeticError::Overflow)
        }
        Value::Float(_) => Err(ArithmeticError::Overflow),
        other => Err(ArithmeticError::Syntax(format!(
            "`{other}` is not a number"
        ))),
    }
}

fn divide(a: Decimal, b: Decimal, exact: &mut bool) -> Result<Decimal, ArithmeticError> {
    if b.is_zero() {
        return Err(ArithmeticError::DivisionByZero);
    }
    let quotient = checked(a.checked_div(b))?;
    if !plainly_exact(quotient, quotient.checked_mul(b) == Some(a)) {
        *exact = false;
    }
    Ok(quotient)
}

fn power(base: Decimal, exponent: Decimal, exact: &mut bool) -> Result<Decimal, ArithmeticError> {
    if base.is_zero() && exponent.is_sign_negative() {
        return Err(ArithmeticError::Undefined(
            "zero to a negative power".into(),
        ));
    }
    if exponent.is_integer() {
        let n: i64 = exponent.try_into().map_err(|_| ArithmeticError::Overflow)?;
        if n >= 0 {
            return checked(base.checked_powi(n));
        }
        let whole = checked(base.checked_powi(-n))?;
        return divide(Decimal::ONE, whole, exact);
    }
    if base.is_sign_negative() {
        return Err(ArithmeticError::Undefined(
            "a negative number to a fractional power".into(),
        ));
    }
    *exact = false;
    checked(base.checked_powd(exponent))
}

fn named_constant(name: &str, exact: &mut bool) -> Result<Decimal, ArithmeticError> {
    *exact = false;
    match name {
        "pi" | "PI" | "π" => Ok(Decimal::PI),
        "e" | "E" => Ok(Decimal::E),
        other => Err(ArithmeticError::Syntax(format!(
            "unknown name `{other}`; only the constants pi and e are known"
        ))),
    }
}

fn function(name: &str, args: &[Decimal], exact: &mut bool) -> Result<Decimal, ArithmeticError> {
    let one = |args: &[Decimal]| match args {
        [x] => Ok(*x),
        _ => Err(ArithmeticError::Syntax(format!(
            "{name} takes one number, got {}",
            args.len()
        ))),
    };
    let name = name.strip_prefix("math::").unwrap_or(name);
    match name {
        "sqrt" => {
            let x = one(args)?;
            if x.is_sign_negative() && !x.is_zero() {
                return Err(ArithmeticError::Undefined(
                    "the square root of a negative number".into(),
                ));
            }
            let root = checked(x.sqrt())?;
            if !plainly_exact(root, root.checked_mul(root) == Some(x)) {
                *exact = false;
            }
            Ok(root)
        }
        "abs" => Ok(one(args)?.abs()),
        "round" => Ok(one(args)?.round()),
        "floor" => Ok(one(args)?.floor()),
        "ceil" => Ok(one(args)?.ceil()),
        "min" | "max" if !args.is_empty() => {
            let pick = args.iter().copied();
            Ok(if name == "min" {
                pick.min()
            } else {
                pick.max()
            }
            .unwrap_or_default())
        }
        other => Err(ArithmeticError::Syntax(format!(
            "unknown function `{other}`; known: sqrt, abs, round, floor, ceil, min, max"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(expression: &str) -> String {
        evaluate(expression).unwrap().value
    }

    #[test]
    fn integers_and_decimals_come_out_exact() {
        assert_eq!(value("17 * 23"), "391");
        assert_eq!(value("7 / 2"), "3.5");
        assert_eq!(value("0.1 + 0.2"), "0.3");
        assert_eq!(value("(2 + 3) × 4"), "20");
        assert_eq!(value("2 ** 10"), "1024");
        assert_eq!(value("2^-2"), "0.25");
        assert_eq!(value("-3 - -4"), "1");
        assert_eq!(value("10 % 4"), "2");
        assert_eq!(value("12 ÷ 4"), "3");
        assert_eq!(value("sqrt(144) + abs(-1)"), "13");
        assert_eq!(value("max(2, 9, 4)"), "9");
        assert_eq!(value("9007199254740993 * 3"), "27021597764222979");
        assert!(evaluate("17 * 23").unwrap().exact);
    }

    #[test]
    fn a_rounded_value_says_it_is_not_exact() {
        let third = evaluate("1 / 3").unwrap();
        assert!(!third.exact);
        assert!(third.value.starts_with("0.33333333"));
        assert!(!evaluate("sqrt(2)").unwrap().exact);
        assert!(!evaluate("2 * pi").unwrap().exact);
    }

    #[test]
    fn division_by_zero_overflow_and_bad_syntax_are_errors_that_say_so() {
        assert_eq!(evaluate("5 / 0"), Err(ArithmeticError::DivisionByZero));
        assert_eq!(
            evaluate("5 % (2 - 2)"),
            Err(ArithmeticError::DivisionByZero)
        );
        assert_eq!(evaluate("10 ^ 40"), Err(ArithmeticError::Overflow));
        assert_eq!(
            evaluate("99999999999999999999 * 99999999999999999999"),
            Err(ArithmeticError::Overflow)
        );
        for bad in [
            "",
            "17 *",
            "x + 1",
            "\"a\" + 1",
            "1, 2",
            "a = 4",
            "2 > 1",
            "foo(3)",
        ] {
            let error = evaluate(bad).unwrap_err();
            assert!(
                matches!(error, ArithmeticError::Syntax(_)),
                "{bad}: {error}"
            );
        }
        assert!(matches!(
            evaluate("sqrt(-4)"),
            Err(ArithmeticError::Undefined(_))
        ));
        assert!(evaluate(&"1+".repeat(600)).is_err());
    }

    #[test]
    fn a_message_spells_out_the_expressions_it_asks_about() {
        assert_eq!(expressions_in("What is 17 * 23?"), ["17 * 23"]);
        assert_eq!(expressions_in("how much is (2+3)*4."), ["(2+3)*4"]);
        assert_eq!(
            expressions_in("Compute 2 ** 10 and 10 / 4 please"),
            ["2 ^ 10", "10 / 4"]
        );
        assert_eq!(expressions_in("what's 100 - 58"), ["100 - 58"]);
        for none in [
            "What is recursion?",
            "Bump the version to 1.2.3",
            "It broke on 2024-01-05.",
            "Read lines 10-20 of main.rs",
            "Is utf-8 the default?",
            "Which Python 3.8 features are used?",
            "Fix the bug in v2/handlers.go",
            "Connect to 10.0.0.1:8080",
            "The 3 tests in 2 files fail",
        ] {
            assert!(
                expressions_in(none).is_empty(),
                "{none}: {:?}",
                expressions_in(none)
            );
        }
    }
}
