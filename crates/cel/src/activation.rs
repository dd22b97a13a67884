//! The names an expression reads, and Kubernetes' composited variables:
//! `variables.NAME` is evaluated on first read and cached, error or not.

use std::cell::RefCell;

use crate::ast::Ast;
use crate::error::EvalError;
use crate::program::Program;
use crate::regex::RegexCache;
use crate::value::Value;

/// A variable read: its value, known already, or its tree to evaluate.
pub(crate) enum Variable<'a> {
    Known(Result<Value<'a>, EvalError>),
    Evaluate(&'a Ast),
}

/// The state of one composited variable.
#[derive(Clone)]
enum Slot<'a> {
    Pending,
    Running,
    Done(Result<Value<'a>, EvalError>),
}

/// Name → value bindings for an evaluation.
#[derive(Default)]
pub struct Activation<'a> {
    bindings: Vec<(Box<str>, Value<'a>)>,
    variables: Option<&'a [(String, Program)]>,
    cache: RefCell<Vec<Slot<'a>>>,
    regexes: RegexCache,
}

impl<'a> Activation<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds `name` to a JSON input (`object`, `oldObject`, `request`, …),
    /// read lazily.
    pub fn bind_json(&mut self, name: &str, value: &'a serde_json::Value) {
        self.bind(name, Value::from_json(value));
    }

    pub fn bind(&mut self, name: &str, value: Value<'a>) {
        match self.bindings.iter_mut().find(|(n, _)| &**n == name) {
            Some((_, v)) => *v = value,
            None => self.bindings.push((name.into(), value)),
        }
    }

    /// Kubernetes composited variables: `variables.NAME` is evaluated on
    /// first access, in this activation, and cached; a variable may read
    /// the ones before it. Errors surface only when read.
    pub fn bind_variables(&mut self, variables: &'a [(String, Program)]) {
        self.variables = Some(variables);
        self.cache = RefCell::new(vec![Slot::Pending; variables.len()]);
    }

    /// The value bound to `name` (names are compared as bytes).
    pub(crate) fn lookup(&self, name: &[u8]) -> Option<&Value<'a>> {
        self.bindings
            .iter()
            .find(|(n, _)| n.as_bytes() == name)
            .map(|(_, v)| v)
    }

    pub(crate) fn regexes(&self) -> &RegexCache {
        &self.regexes
    }

    pub(crate) fn has_variables(&self) -> bool {
        self.variables.is_some()
    }

    /// The names of the first `visible` variables.
    pub(crate) fn variable_names(&self, visible: usize) -> impl Iterator<Item = (usize, &'a str)> {
        self.variables
            .unwrap_or(&[])
            .iter()
            .take(visible)
            .enumerate()
            .map(|(i, (name, _))| (i, name.as_str()))
    }

    /// Where `name` is among the first `visible` variables.
    pub(crate) fn variable_index(&self, name: &[u8], visible: usize) -> Option<usize> {
        self.variable_names(visible)
            .find(|(_, n)| n.as_bytes() == name)
            .map(|(i, _)| i)
    }

    /// Variable `index`'s value when it has one; else marks it being
    /// evaluated and hands back its tree, for the evaluator to evaluate
    /// and [`Activation::finish_variable`] to keep.
    pub(crate) fn begin_variable(&self, index: usize) -> Result<Variable<'a>, EvalError> {
        let busy = || EvalError::msg("variables are being read while evaluated");
        {
            let cache = self.cache.try_borrow().map_err(|_| busy())?;
            match cache.get(index) {
                Some(Slot::Done(result)) => return Ok(Variable::Known(result.clone())),
                Some(Slot::Running) => return Err(busy()),
                _ => {}
            }
        }
        let program = match self.variables.and_then(|v| v.get(index)) {
            Some((_, program)) => program,
            None => return Err(EvalError::msg("no such variable")),
        };
        self.set(index, Slot::Running)?;
        Ok(Variable::Evaluate(&program.ast))
    }

    /// Keeps variable `index`'s result, error or not.
    pub(crate) fn finish_variable(
        &self,
        index: usize,
        result: &Result<Value<'a>, EvalError>,
    ) -> Result<(), EvalError> {
        self.set(index, Slot::Done(result.clone()))
    }

    fn set(&self, index: usize, slot: Slot<'a>) -> Result<(), EvalError> {
        let mut cache = self
            .cache
            .try_borrow_mut()
            .map_err(|_| EvalError::msg("variables are being read while evaluated"))?;
        if let Some(s) = cache.get_mut(index) {
            *s = slot;
        }
        Ok(())
    }
}
