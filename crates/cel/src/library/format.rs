//! Kubernetes' format library (`format.named()`, `format.dns1123Label()`,
//! `validate()`, …).

use std::rc::Rc;

use crate::error::EvalError;
use crate::format::NamedFormat;
use crate::func::Func;
use crate::value::{no_overload, Value};

pub(crate) fn call<'a>(func: Func, args: &[Value<'a>]) -> Result<Value<'a>, EvalError> {
    match (func, args) {
        (Func::FormatOf(format), []) => Ok(Value::Format(format)),
        (Func::FormatNamed, [Value::String(name)]) => Ok(Value::optional(
            NamedFormat::from_name(name).map(Value::Format),
        )),
        (Func::FormatValidate, [Value::Format(format), Value::String(text)]) => {
            let problems = format.validate(text);
            Ok(if problems.is_empty() {
                Value::Optional(None)
            } else {
                Value::Optional(Some(Rc::new(Value::list(
                    problems.into_iter().map(Value::string).collect(),
                ))))
            })
        }
        _ => Err(no_overload(func.name(), args)),
    }
}
