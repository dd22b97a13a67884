//! The cost an evaluation may spend.

use crate::error::EvalError;

/// The evaluation cost allowed, in steps: a node visited, an iteration of
/// a comprehension, or a slice of the data a function goes through (about
/// one per 10 bytes of a string, one per list element).
#[derive(Debug, Clone)]
pub struct Budget {
    remaining: u64,
}

impl Budget {
    /// Kubernetes' per-expression runtime cost limit.
    pub const DEFAULT_LIMIT: u64 = 1_000_000;

    pub fn new(limit: u64) -> Self {
        Self { remaining: limit }
    }

    /// What is left of the budget.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    pub(crate) fn charge(&mut self, cost: u64) -> Result<(), EvalError> {
        match self.remaining.checked_sub(cost) {
            Some(left) => {
                self.remaining = left;
                Ok(())
            }
            None => {
                self.remaining = 0;
                Err(EvalError::CostBudgetExceeded)
            }
        }
    }

    /// Work proportional to `bytes` of text.
    pub(crate) fn charge_len(&mut self, bytes: usize) -> Result<(), EvalError> {
        self.charge(u64::try_from(bytes / 10).unwrap_or(u64::MAX))
    }

    /// Work proportional to `items` elements.
    pub(crate) fn charge_items(&mut self, items: usize) -> Result<(), EvalError> {
        self.charge(u64::try_from(items).unwrap_or(u64::MAX))
    }
}

impl Default for Budget {
    fn default() -> Self {
        Self::new(Self::DEFAULT_LIMIT)
    }
}
