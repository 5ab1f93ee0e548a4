use super::{PreviewKind, Resolved, ResultKind, Risk, Target, Tool, ToolContext};
use crate::arithmetic::{evaluate, ArithmeticError, MAX_EXPRESSION_CHARS};
use crate::error::{ErrorType, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// Calculate the value of an arithmetic expression exactly. Use it for any sum, difference,
/// product, quotient, power or square root instead of working it out yourself.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The expression: numbers, + - * / % ^, parentheses, sqrt abs round floor ceil min max,
    /// pi and e (e.g. "17 * 23", "(2 + 3) ^ 2 / 4").
    #[schemars(length(min = 1, max = 1000), extend("x-expression" = "question"))]
    pub expression: String,
}

pub struct Calculate;

impl Tool for Calculate {
    type Input = Input;
    const NAME: &'static str = "calculate";
    const RISK: Risk = Risk::Safe;
    const PREVIEW: PreviewKind = PreviewKind::None;
    const RESULT: ResultKind = ResultKind::Plain;

    fn example() -> Value {
        json!({"expression": "(12 + 30) * 2"})
    }

    fn target(_input: &Input) -> Target {
        Target::Nothing
    }

    fn run(input: Input, _target: &Resolved, _ctx: &ToolContext) -> Result<Value, ToolError> {
        debug_assert!(input.expression.chars().count() <= MAX_EXPRESSION_CHARS);
        match evaluate(&input.expression) {
            // The equation first: a small model answers by copying from the result, and the
            // whole equation is the answer in words it can copy.
            Ok(outcome) => Ok(json!({
                "equation": format!(
                    "{} {} {}",
                    input.expression.trim(),
                    if outcome.exact { "=" } else { "≈" },
                    outcome.value
                ),
                "result": outcome.value,
                "exact": outcome.exact,
            })),
            Err(error) => Err(calculation_error(&input.expression, &error)),
        }
    }
}

/// A failed calculation as the model and the user are told it: what went wrong, and how to
/// write the expression instead.
fn calculation_error(expression: &str, error: &ArithmeticError) -> ToolError {
    let (kind, hint) = match error {
        ArithmeticError::Syntax(_) => (
            ErrorType::ParseError,
            "Write one expression of numbers and + - * / % ^ ( ), e.g. \"17 * 23\".",
        ),
        ArithmeticError::DivisionByZero => (
            ErrorType::ValidationFailed,
            "The expression divides by zero; it has no value. Say so in the answer.",
        ),
        ArithmeticError::Overflow => (
            ErrorType::ValidationFailed,
            "The value is too large to compute exactly; say so in the answer.",
        ),
        ArithmeticError::Undefined(_) => (
            ErrorType::ValidationFailed,
            "The expression has no real value; say so in the answer.",
        ),
    };
    ToolError::new(kind, format!("Cannot calculate {expression:?}: {error}")).with_hint(hint)
}
