//! What one target gets from a compiled policy, and why: the rules considered up to the one that
//! serves it, or why it needs none.

use crate::cfg::Cfg;
use crate::model::{CompiledPolicy, Stack};
use crate::platforms::sdk_host;

/// What a target gets, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// The target triple asked about.
    pub target: String,
    /// Whether a rule serves it, or why none needs to.
    pub verdict: TargetVerdict,
}

/// Whether a target is served, and by what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetVerdict {
    /// The first rule whose own cfg matches serves it.
    Served {
        /// That rule's name.
        rule: String,
        /// What the target gets.
        stack: Stack,
        /// Every rule up to and including the winner.
        considered: Vec<RuleMatch>,
    },
    /// The target cannot host an SDK (the reason), so no rule serves it and none needs to.
    NotAHost(&'static str),
}

impl Explanation {
    /// What the target gets, `None` when it cannot host an SDK.
    pub fn stack(&self) -> Option<Stack> {
        match &self.verdict {
            TargetVerdict::Served { stack, .. } => Some(*stack),
            TargetVerdict::NotAHost(_) => None,
        }
    }
}

/// One rule looked at for a target: its own cfg and whether that matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleMatch {
    /// The rule's name.
    pub rule: String,
    /// Its own cfg (`None` for the fallback, which matches every target).
    pub cfg: Option<Cfg>,
    /// Whether it matches the target.
    pub matches: bool,
}

/// Explains one target, or `None` when cfg-expr does not know the triple.
///
/// ```
/// use smithy_tls_codegen::{compile, explain, policy, presets};
/// let compiled = compile::compile(&policy::parse_policy(presets::preset("portable").unwrap()).unwrap()).unwrap();
/// let explanation = explain::explain(&compiled, "x86_64-unknown-linux-gnu").unwrap();
/// assert!(explanation.stack().is_some());
/// let bare = explain::explain(&compiled, "x86_64-unknown-none").unwrap();
/// assert!(matches!(bare.verdict, explain::TargetVerdict::NotAHost(_)));
/// ```
pub fn explain(compiled: &CompiledPolicy, triple: &str) -> Option<Explanation> {
    let target = cfg_expr::targets::get_builtin_target_by_triple(triple)?;
    if let Err(why) = sdk_host(target) {
        return Some(Explanation { target: triple.to_owned(), verdict: TargetVerdict::NotAHost(why) });
    }
    let mut considered = Vec::new();
    for rule in compiled.policy.all_rules() {
        let matches = rule.scope.cfg().is_none_or(|c| c.matches(target));
        considered.push(RuleMatch { rule: rule.name.clone(), cfg: rule.scope.cfg().cloned(), matches });
        if matches {
            let verdict = TargetVerdict::Served { rule: rule.name.clone(), stack: rule.stack, considered };
            return Some(Explanation { target: triple.to_owned(), verdict });
        }
    }
    None
}
