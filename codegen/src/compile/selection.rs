//! How the emitted module picks a target's rule: a runtime gate and a chain of the rules' own
//! cfgs.

use crate::cfg::{Cfg, TargetKey};
use crate::model::{CompiledPolicy, Stack};

/// How the emitted module picks a target's rule.
///
/// The module can name the runtime crate only where the manifest gives the target one, which
/// is where no `none` rule is the first match: [`runtime`](Self::runtime). Inside that, the
/// target's rule is the first rule *with a provider* whose own cfg holds (an earlier `none` rule
/// that held would have been the first match, and such targets are outside), so the module tests
/// the rules' own cfgs in the policy's order, an `if` / `else if` chain ([`chain`](Self::chain)),
/// with no rule repeating the negation of the ones before it. A `wasi-http` rule counts as a rule
/// without a provider there: its targets get the host's client instead, under [`wasi_http`](Self::wasi_http).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleSelection {
    /// Where the target gets the runtime crate; `None` when every rule has a provider.
    pub runtime: Option<Cfg>,
    /// Where the target gets `smithy-wasi-http` (its manifest table's predicate); `None` when no
    /// rule is `wasi-http`.
    pub wasi_http: Option<Cfg>,
    /// Each rule with a provider, in policy order: its index in the compiled rules and its own
    /// cfg (`None` for the fallback, the chain's `else`).
    pub chain: Vec<(usize, Option<Cfg>)>,
}

impl ModuleSelection {
    /// The index of the rule the module picks where `holds` says which `key = value` atoms are
    /// true: `None` outside [`runtime`](Self::runtime) or where no rule of the chain holds.
    pub fn pick(&self, holds: &dyn Fn(TargetKey, &str) -> bool) -> Option<usize> {
        if self.runtime.as_ref().is_some_and(|runtime| !runtime.holds(holds)) {
            return None;
        }
        self.chain.iter().find(|(_, own)| own.as_ref().is_none_or(|cfg| cfg.holds(holds))).map(|(index, _)| *index)
    }
}

/// The [`ModuleSelection`] of a compiled policy.
///
/// ```
/// use smithy_tls_codegen::{compile, policy, presets};
/// let compiled = compile::compile(&policy::parse_policy(presets::preset("platform-default").unwrap()).unwrap()).unwrap();
/// let selection = compile::module_selection(&compiled);
/// // The chain starts with the first rule with a provider, tested by its own cfg.
/// let (index, apple) = &selection.chain[0];
/// assert_eq!(compiled.rules[*index].name, "apple");
/// assert_eq!(apple.as_ref().unwrap().to_string(), "target_vendor = \"apple\"");
/// ```
pub fn module_selection(compiled: &CompiledPolicy) -> ModuleSelection {
    let mut earlier_tls: Vec<Cfg> = Vec::new();
    let mut none_first = Vec::new();
    let mut chain = Vec::new();
    for (index, rule) in compiled.policy.all_rules().enumerate() {
        let own = rule.scope.cfg();
        match rule.stack {
            Stack::None | Stack::WasiHttp => none_first.push(Cfg::exclusive(own, &earlier_tls)),
            Stack::Tls { .. } => {
                chain.push((index, own.cloned()));
                earlier_tls.extend(own.cloned());
            }
        }
    }
    let runtime = match none_first.len() {
        0 => None,
        1 => Some(match none_first.remove(0) {
            Cfg::Not(inner) => *inner,
            other => Cfg::Not(Box::new(other)),
        }),
        // A clause another one includes (wasip2's beside all of wasm) adds nothing.
        _ => Some(Cfg::exclusive(None, &none_first)),
    };
    let wasi_http = super::manifest_tables(compiled)
        .into_iter()
        .find_map(|(predicate, stack)| (stack == Stack::WasiHttp).then_some(predicate));
    ModuleSelection { runtime, wasi_http, chain }
}
