//! The target tables a compiled policy gives the manifest: rules that share a stack share one.

use crate::cfg::Cfg;
use crate::model::{CompiledPolicy, Stack};

/// The manifest's target tables: one per distinct stack with a client, in the order of the
/// first rule that has it, with a predicate that holds exactly on the targets those rules serve.
///
/// Rules that share a stack share a table. The union of first-match predicates needs fewer
/// clauses than its parts: a target whose first match among the earlier rules is one of the
/// same stack is the table's anyway, so each rule negates only the earlier rules of *other*
/// stacks.
///
/// ```
/// use smithy_tls_codegen::{compile, policy, presets};
/// let compiled = compile::compile(&policy::parse_policy(presets::preset("platform-default").unwrap()).unwrap()).unwrap();
/// let tables = compile::manifest_tables(&compiled);
/// // apple and windows both get rustls-aws-lc with the platform verifier: one table.
/// assert_eq!(tables.len(), compiled.rules.iter().filter(|r| r.stack.has_client()).count() - 1);
/// ```
pub fn manifest_tables(compiled: &CompiledPolicy) -> Vec<(Cfg, Stack)> {
    let owns: Vec<Option<&Cfg>> = compiled.policy.all_rules().map(|rule| rule.scope.cfg()).collect();
    let mut stacks: Vec<Stack> = Vec::new();
    for rule in &compiled.rules {
        if rule.stack.has_client() && !stacks.contains(&rule.stack) {
            stacks.push(rule.stack);
        }
    }
    stacks
        .into_iter()
        .map(|stack| {
            let members: Vec<usize> = (0..compiled.rules.len()).filter(|&i| compiled.rules[i].stack == stack).collect();
            let predicate = match members.as_slice() {
                [only] => compiled.rules[*only].predicate.clone(),
                _ => {
                    let earlier: Vec<Vec<Cfg>> = members
                        .iter()
                        .map(|&i| (0..i).filter(|j| !members.contains(j)).filter_map(|j| owns[j].cloned()).collect())
                        .collect();
                    let parts = Cfg::any_of(members.iter().zip(&earlier).map(|(&i, e)| Cfg::exclusive(owns[i], e)));
                    let group: Option<Vec<(&Cfg, &[Cfg])>> =
                        members.iter().zip(&earlier).map(|(&i, e)| owns[i].map(|own| (own, e.as_slice()))).collect();
                    match group.and_then(|group| Cfg::exclusive_group(&group)) {
                        Some(factored) if factored.to_string().len() < parts.to_string().len() => factored,
                        _ => parts,
                    }
                }
            };
            (predicate, stack)
        })
        .collect()
}
