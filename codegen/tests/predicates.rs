//! The compiled table predicates are simplified ([`Cfg::exclusive`]) only by what holds on every
//! target: each key but `target_family` has exactly one value. Proven here, for every preset and
//! for generated rule lists, by comparing with the unsimplified first-match predicates
//! ([`Cfg::first_match`]) on every builtin target and on every assignment of the keys the rules
//! mention (each single-valued key one of its mentioned values or another one, `target_family`
//! any subset of its mentioned values); under that model the simplified tables are also mutually
//! exclusive and complete.

use std::collections::{BTreeMap, BTreeSet};

use smithy_tls_codegen::cfg::{Cfg, TargetKey};
use smithy_tls_codegen::{compile, policy, presets};

/// One model of a target: a value (or "another value", `None`) per single-valued key and the
/// set of families it has.
#[derive(Debug, Clone)]
struct Assignment {
    single: BTreeMap<&'static str, Option<String>>,
    families: BTreeSet<String>,
}

impl Assignment {
    fn holds(&self, key: TargetKey, value: &str) -> bool {
        if key.single_valued() {
            self.single.get(key.name()).and_then(Option::as_deref) == Some(value)
        } else {
            self.families.contains(value)
        }
    }
}

/// Every assignment of the keys `cfgs` mention.
fn assignments(cfgs: &[&Cfg]) -> Vec<Assignment> {
    let mut values: BTreeMap<TargetKey, BTreeSet<String>> = BTreeMap::new();
    for cfg in cfgs {
        for (key, value) in cfg.atoms() {
            values.entry(key).or_default().insert(value.to_owned());
        }
    }
    let mut out = vec![Assignment { single: BTreeMap::new(), families: BTreeSet::new() }];
    for (key, mentioned) in values {
        let mut next = Vec::new();
        for partial in &out {
            if key.single_valued() {
                for value in mentioned.iter().map(|v| Some(v.clone())).chain([None]) {
                    let mut a = partial.clone();
                    a.single.insert(key.name(), value);
                    next.push(a);
                }
            } else {
                let listed: Vec<&String> = mentioned.iter().collect();
                for mask in 0..(1u32 << listed.len()) {
                    let mut a = partial.clone();
                    a.families =
                        (0..listed.len()).filter(|i| mask & (1 << i) != 0).map(|i| listed[i].clone()).collect();
                    next.push(a);
                }
            }
        }
        out = next;
    }
    out
}

/// Compares the simplified and the long predicates of the rule list `owns` (the last `None`:
/// the fallback) on every builtin target and every assignment; returns the assignments tried.
fn prove(what: &str, owns: &[Option<Cfg>]) -> usize {
    let mut earlier: Vec<Cfg> = Vec::new();
    let mut tables = Vec::new();
    for own in owns {
        let short = Cfg::exclusive(own.as_ref(), &earlier);
        let long = Cfg::first_match(own.as_ref(), &earlier);
        tables.push((short, long));
        earlier.extend(own.clone());
    }
    for target in cfg_expr::targets::ALL_BUILTINS {
        for (i, (short, long)) in tables.iter().enumerate() {
            assert_eq!(
                short.matches(target),
                long.matches(target),
                "{what}, rule {i} on {}: {short} vs {long}",
                target.triple
            );
        }
    }
    let all: Vec<&Cfg> = tables.iter().flat_map(|(s, l)| [s, l]).collect();
    let models = assignments(&all);
    for model in &models {
        let holds = |key: TargetKey, value: &str| model.holds(key, value);
        let mut serving = 0;
        for (i, (short, long)) in tables.iter().enumerate() {
            let value = short.holds(&holds);
            assert_eq!(value, long.holds(&holds), "{what}, rule {i} under {model:?}: {short} vs {long}");
            serving += usize::from(value);
        }
        assert_eq!(serving, 1, "{what}: {serving} tables hold under {model:?}");
    }
    models.len()
}

#[test]
fn every_preset_simplifies_to_the_same_tables() {
    for name in presets::names() {
        let parsed = policy::parse_policy(presets::preset(name).expect("preset")).expect("valid preset");
        let owns: Vec<Option<Cfg>> = parsed.policy.all_rules().map(|r| r.scope.cfg().cloned()).collect();
        let models = prove(name, &owns);
        let compiled = compile::compile(&parsed).expect("compiles");
        let mut earlier = Vec::new();
        for (rule, own) in compiled.rules.iter().zip(&owns) {
            assert_eq!(
                rule.predicate,
                Cfg::exclusive(own.as_ref(), &earlier),
                "{name}: compiled tables are the simplified ones"
            );
            earlier.extend(own.clone());
        }
        println!("{name}: {} tables agree on every builtin target and {models} assignments", owns.len());
    }
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % below as u64) as usize
    }

    fn atom(&mut self) -> Cfg {
        const ATOMS: &[&str] = &[
            "target_os = \"linux\"",
            "target_os = \"windows\"",
            "target_os = \"macos\"",
            "target_os = \"android\"",
            "target_arch = \"x86_64\"",
            "target_arch = \"aarch64\"",
            "target_arch = \"arm\"",
            "target_env = \"gnu\"",
            "target_env = \"musl\"",
            "target_pointer_width = \"32\"",
            "target_family = \"wasm\"",
            "target_family = \"unix\"",
            "unix",
            "windows",
        ];
        Cfg::parse(ATOMS[self.next(ATOMS.len())]).expect("atom")
    }

    fn cfg(&mut self, depth: usize) -> Cfg {
        match if depth == 0 { 0 } else { self.next(5) } {
            0 | 1 => self.atom(),
            2 => Cfg::Not(Box::new(self.cfg(depth - 1))),
            3 => Cfg::All((0..1 + self.next(3)).map(|_| self.cfg(depth - 1)).collect()),
            _ => Cfg::Any((0..1 + self.next(3)).map(|_| self.cfg(depth - 1)).collect()),
        }
    }
}

#[test]
fn generated_rule_lists_simplify_to_the_same_tables() {
    let mut rng = Rng(0x5eed_cafe_f00d_d00d);
    let mut models = 0;
    for case in 0..300 {
        let rules = 1 + rng.next(5);
        let mut owns: Vec<Option<Cfg>> = (0..rules).map(|_| Some(rng.cfg(2))).collect();
        owns.push(None);
        models += prove(&format!("case {case}: {owns:?}"), &owns);
    }
    println!("300 generated policies, {models} assignments");
}

#[test]
fn simplification_shortens_the_presets_tables() {
    for name in presets::names() {
        let parsed = policy::parse_policy(presets::preset(name).expect("preset")).expect("valid preset");
        let mut earlier = Vec::new();
        let (mut short, mut long) = (0, 0);
        for own in parsed.policy.all_rules().map(|r| r.scope.cfg()) {
            short += Cfg::exclusive(own, &earlier).to_string().len();
            long += Cfg::first_match(own, &earlier).to_string().len();
            earlier.extend(own.cloned());
        }
        println!("{name}: table predicates {long} -> {short} characters");
        assert!(short <= long, "{name}: {long} -> {short}");
        assert!(
            short < long || name == "fips",
            "{name} (a rule and its fallback have nothing to simplify): {long} -> {short}"
        );
    }
}

/// Runs `check` on every builtin target and on every assignment of the keys `cfgs` mention,
/// naming each in its first argument; returns how many assignments there were.
fn on_every_model(cfgs: &[&Cfg], check: impl Fn(&str, &dyn Fn(TargetKey, &str) -> bool)) -> usize {
    for target in cfg_expr::targets::ALL_BUILTINS {
        check(target.triple.as_str(), &|key, value| Cfg::Key(key, value.to_owned()).matches(target));
    }
    let models = assignments(cfgs);
    for model in &models {
        check(&format!("under {model:?}"), &|key, value| model.holds(key, value));
    }
    models.len()
}

/// The module's selection ([`compile::module_selection`]) picks the same rule as the manifest's
/// tables on every builtin target and every assignment: the runtime gate holds exactly where no
/// `none` rule is the first match, and inside it the chain of own cfgs picks the rule whose
/// table holds.
#[test]
fn the_module_selection_agrees_with_the_tables() {
    for name in presets::names() {
        let parsed = policy::parse_policy(presets::preset(name).expect("preset")).expect("valid preset");
        let compiled = compile::compile(&parsed).expect("compiles");
        let selection = compile::module_selection(&compiled);
        let gate = selection.runtime.clone().unwrap_or(Cfg::All(Vec::new()));
        let none_tables: Vec<&Cfg> =
            compiled.rules.iter().filter(|r| r.stack.provider().is_none()).map(|r| &r.predicate).collect();
        let mut all: Vec<&Cfg> = compiled.rules.iter().map(|r| &r.predicate).collect();
        all.push(&gate);
        all.extend(selection.chain.iter().filter_map(|(_, cfg)| cfg.as_ref()));
        let check = |what: &str, holds: &dyn Fn(TargetKey, &str) -> bool| {
            let none_first = none_tables.iter().any(|t| t.holds(holds));
            assert_eq!(gate.holds(holds), !none_first, "{name}: runtime gate {what}");
            let table = compiled.rules.iter().position(|r| r.stack.provider().is_some() && r.predicate.holds(holds));
            let expected = if none_first { None } else { table };
            assert_eq!(selection.pick(holds), expected, "{name}: the module's rule {what}");
        };
        let models = on_every_model(&all, check);
        let long: usize =
            compiled.rules.iter().filter(|r| r.stack.provider().is_some()).map(|r| r.predicate.to_string().len()).sum();
        let short: usize =
            selection.chain.iter().filter_map(|(_, c)| c.as_ref()).map(|c| c.to_string().len()).sum::<usize>()
                + selection.runtime.as_ref().map_or(0, |c| c.to_string().len());
        println!("{name}: module predicates {short} characters (the tables' {long}), {models} assignments");
    }
}

/// Rules that share a stack share a table ([`compile::manifest_tables`]), whose predicate holds
/// exactly where one of those rules' first-match predicates does.
#[test]
fn a_table_per_stack_holds_where_its_rules_do() {
    for name in presets::names() {
        let parsed = policy::parse_policy(presets::preset(name).expect("preset")).expect("valid preset");
        let compiled = compile::compile(&parsed).expect("compiles");
        let tables = compile::manifest_tables(&compiled);
        let mut all: Vec<&Cfg> = compiled.rules.iter().map(|r| &r.predicate).collect();
        all.extend(tables.iter().map(|(cfg, _)| cfg));
        let check = |what: &str, holds: &dyn Fn(TargetKey, &str) -> bool| {
            for (cfg, stack) in &tables {
                let rules = compiled.rules.iter().filter(|r| r.stack == *stack).any(|r| r.predicate.holds(holds));
                assert_eq!(cfg.holds(holds), rules, "{name}: table for {stack:?} {what}: {cfg}");
            }
        };
        on_every_model(&all, check);
        let stacks: BTreeSet<String> = tables.iter().map(|(_, stack)| format!("{stack:?}")).collect();
        assert_eq!(stacks.len(), tables.len(), "{name}: one table per stack");
    }
}
