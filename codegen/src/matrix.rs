//! The target matrix: every builtin target that can host an SDK with the rule that serves it.

use std::collections::BTreeMap;

use crate::model::{CompiledPolicy, Stack};

/// One row of the target matrix.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MatrixRow {
    /// The rustc target triple.
    pub target: String,
    /// The rule that serves it.
    pub rule: String,
    /// What it gets.
    #[serde(flatten)]
    pub stack: Stack,
}

/// Every builtin target that can host an SDK with the rule that serves it, sorted by triple.
pub fn matrix(compiled: &CompiledPolicy) -> Vec<MatrixRow> {
    let mut rows: BTreeMap<&str, MatrixRow> = BTreeMap::new();
    for rule in &compiled.rules {
        for target in &rule.targets {
            rows.insert(target, MatrixRow { target: target.clone(), rule: rule.name.clone(), stack: rule.stack });
        }
    }
    rows.into_values().collect()
}
