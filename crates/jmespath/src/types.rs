//! JMESPath argument types, as go-jmespath names them in its type errors.

use serde_json::Value;

/// One accepted type for a function argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    Any,
    String,
    Number,
    Boolean,
    Array,
    Object,
    Null,
    /// An array whose elements are all strings.
    ArrayString,
    /// An array whose elements are all numbers.
    ArrayNumber,
    /// `&expr`, only for the standard `sort_by`, `max_by`, `min_by`, `map`.
    Expref,
}

impl ArgType {
    /// The name go-jmespath prints for the type (`string`, `array[string]`).
    pub fn name(self) -> &'static str {
        match self {
            ArgType::Any => "any",
            ArgType::String => "string",
            ArgType::Number => "number",
            ArgType::Boolean => "boolean",
            ArgType::Array => "array",
            ArgType::Object => "object",
            ArgType::Null => "null",
            ArgType::ArrayString => "array[string]",
            ArgType::ArrayNumber => "array[number]",
            ArgType::Expref => "expref",
        }
    }

    /// Whether `value` has this type (never true for `Expref`).
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            ArgType::Any => true,
            ArgType::String => value.is_string(),
            ArgType::Number => value.is_number(),
            ArgType::Boolean => value.is_boolean(),
            ArgType::Array => value.is_array(),
            ArgType::Object => value.is_object(),
            ArgType::Null => value.is_null(),
            ArgType::ArrayString => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
            ArgType::ArrayNumber => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_number)),
            ArgType::Expref => false,
        }
    }
}

/// A function's name and the types each positional argument accepts.
#[derive(Debug, PartialEq)]
pub struct Signature {
    pub name: &'static str,
    /// One entry per argument: the types it accepts (any of them).
    pub args: &'static [&'static [ArgType]],
    /// The last argument may repeat (standard `merge`, `not_null`).
    pub variadic: bool,
}
