//! RE2-syntax regexes compiled with regex-lite when first used (no
//! Unicode tables in the module, nothing built at start-up), and the
//! evaluation's cache of them. `matches`, `find` and `findAll` are in
//! `library::regex`.

use std::cell::RefCell;
use std::rc::Rc;

use crate::budget::Budget;
use crate::error::EvalError;
use crate::func::Func;
use kube_units::small_regex::Small;

/// Regexes compiled during one request (one activation), so that a
/// pattern used in a loop or by several expressions compiles once.
#[derive(Default)]
pub(crate) struct RegexCache(RefCell<Vec<(Box<str>, Rc<regex_lite::Regex>)>>);

/// Enough for the distinct patterns of a policy; beyond, compile each time.
const CACHED_PATTERNS: usize = 32;

impl RegexCache {
    pub(crate) fn get(
        &self,
        pattern: &str,
        func: Func,
        budget: &mut Budget,
    ) -> Result<Rc<regex_lite::Regex>, EvalError> {
        if let Ok(cache) = self.0.try_borrow() {
            if let Some((_, re)) = cache.iter().find(|(p, _)| &**p == pattern) {
                return Ok(re.clone());
            }
        }
        let re = Rc::new(compile(pattern, func, budget)?);
        if let Ok(mut cache) = self.0.try_borrow_mut() {
            if cache.len() < CACHED_PATTERNS {
                cache.push((pattern.into(), re.clone()));
            }
        }
        Ok(re)
    }
}

fn compile(pattern: &str, func: Func, budget: &mut Budget) -> Result<regex_lite::Regex, EvalError> {
    budget.charge_len(pattern.len())?;
    kube_units::re2::for_regex_lite(pattern)
        .and_then(|text| regex_lite::Regex::new(&text).map_err(|e| e.to_string()))
        .map_err(|e| {
            let e = e.replace('\n', " ");
            if func == Func::Matches {
                EvalError::msg(format!("error parsing regexp: {e}"))
            } else {
                EvalError::msg(format!("Illegal regex: {e}"))
            }
        })
}

/// Whether `pattern` compiles: the check Kubernetes' CEL environment makes
/// of a literal pattern when it compiles an expression. A pattern the
/// small matcher reads builds no engine.
pub(crate) fn is_valid(pattern: &str) -> bool {
    Small::compile(pattern).is_some()
        || compile(pattern, Func::Matches, &mut Budget::new(u64::MAX)).is_ok()
}
