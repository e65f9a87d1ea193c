//! The compiled table predicates are simplified ([`Cfg::exclusive`]) only by what holds on every
//! target: each key but `target_family` has exactly one value. Proven here, for every preset and
//! for generated rule lists, by comparing with the unsimplified first-match predicates
//! ([`Cfg::first_match`]) on every builtin target and on every assignment of the keys the rules
//! mention (each single-valued key one of its mentioned values or another one, `target_family`
//! any subset of its mentioned values); under that model the simplified tables are also mutually
//! exclusive and complete.
//!
//! The text is checked too, not only the model: the `[target.'cfg(..)']` keys of a rendered
//! manifest and the emitted module's `#[cfg(..)]`s are parsed back with cfg-expr and, on every
//! builtin target, select the first matching rule's stack (`*_rendered_cfgs_*`).

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

/// The text the generator writes for one fixture crate under `compiled`: the `Cargo.toml` and
/// the emitted module, as a plan of a scratch copy of the fixture `dotted-tables` has them.
fn rendered(compiled: &smithy_tls_codegen::model::CompiledPolicy) -> (String, String) {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees/dotted-tables");
    let root = tempfile::tempdir().unwrap();
    smithy_tls_test_support::copy_tree(&fixture, &root.path().join("alpha"), &[]).unwrap();
    let discovery = smithy_tls_codegen::discover::discover(root.path(), &compiled.policy.runtime.package).unwrap();
    let plan = smithy_tls_codegen::plan::plan(compiled, &discovery).unwrap_or_else(|e| panic!("{e:?}"));
    let text = |name: &str| {
        let path = root.path().join("alpha").join(name);
        let change = plan.changes().find(|c| c.path == path).unwrap_or_else(|| panic!("no change to {name}"));
        change.updated.clone().unwrap_or_else(|| panic!("{name} removed"))
    };
    (text("Cargo.toml"), text("src/default_http_client.rs"))
}

/// A cfg as written in the output, parsed back by cfg-expr (not the crate's own parser, so a
/// printer and parser that agree on a wrong spelling still fail).
struct Written {
    text: String,
    expr: cfg_expr::Expression,
}

impl Written {
    fn parse(text: &str) -> Written {
        let expr = cfg_expr::Expression::parse(text).unwrap_or_else(|e| panic!("the output's `{text}`: {e}"));
        Written { text: text.to_owned(), expr }
    }

    /// Whether it holds on `target` with the crate's `default-https-client` feature on or off.
    fn holds(&self, target: &cfg_expr::targets::TargetInfo, feature_on: bool) -> bool {
        self.expr.eval(|predicate| match predicate {
            cfg_expr::expr::Predicate::Target(p) => p.matches(target),
            cfg_expr::expr::Predicate::Feature(name) => feature_on && *name == "default-https-client",
            other => panic!("`{}` tests {other:?}, which the generator never writes", self.text),
        })
    }
}

/// The runtime crate's target tables of a rendered manifest: each key's cfg and the runtime's
/// features there.
fn written_tables(manifest: &str, runtime: &str) -> Vec<(Written, Vec<String>)> {
    let doc: toml_edit::DocumentMut = manifest.parse().expect("the rendered manifest parses");
    let Some(target) = doc.get("target").and_then(toml_edit::Item::as_table_like) else { return Vec::new() };
    target
        .iter()
        .filter_map(|(key, item)| {
            let dependency = item.get("dependencies")?.get(runtime)?;
            let features = dependency.get("features").and_then(toml_edit::Item::as_array).expect("features");
            let features = features.iter().map(|f| f.as_str().expect("a feature name").to_owned()).collect();
            Some((Written::parse(key), features))
        })
        .collect()
}

/// The `cfg(..)` that begins at `at` in `text`, up to its closing parenthesis.
fn balanced_cfg(text: &str, at: usize) -> &str {
    let (mut depth, mut quoted) = (0usize, false);
    for (i, c) in text[at..].char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return &text[at..=at + i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced cfg at byte {at}:\n{}", &text[at..])
}

/// The emitted module's selection as written: the `#[cfg(..)]` on `mod selected` (the runtime
/// gate) and the chain's branches in order, each its `#[cfg(..)]` (`None`: the `else`) and the
/// rule its comment names.
fn written_selection(module: &str) -> (Written, Vec<(Option<Written>, String)>) {
    let selected = module.find("\nmod selected {").expect("a `mod selected`");
    let gate = module[..selected].rfind("#[cfg(").expect("`mod selected` has a cfg") + 2;
    let gate = Written::parse(balanced_cfg(module, gate));
    let mut chain = Vec::new();
    let mut header_start = selected;
    const MARK: &str = "// Rule `";
    while let Some(found) = module[header_start..].find(MARK) {
        let mark = header_start + found;
        let header = &module[header_start..mark];
        let cfg = header.rfind("#[cfg(").map(|at| Written::parse(balanced_cfg(header, at + 2)));
        let name_start = mark + MARK.len();
        let name = &module[name_start..name_start + module[name_start..].find('`').expect("a closing `")];
        chain.push((cfg, name.to_owned()));
        header_start = name_start;
    }
    (gate, chain)
}

/// Checks the text `compiled` renders against plain first match over the rules' own cfgs on
/// every builtin target: exactly one of the runtime's target tables holds where the first
/// matching rule has a provider, and its features are that rule's stack's; none where it has
/// none; the module's gate holds exactly there (and never with the feature off), and its chain
/// picks that rule.
fn check_rendered(what: &str, compiled: &smithy_tls_codegen::model::CompiledPolicy) {
    let (manifest, module) = rendered(compiled);
    let tables = written_tables(&manifest, &compiled.policy.runtime.package);
    let (gate, chain) = written_selection(&module);
    let owns: Vec<Option<&Cfg>> = compiled.policy.all_rules().map(|r| r.scope.cfg()).collect();
    for target in cfg_expr::targets::ALL_BUILTINS {
        let triple = target.triple.as_str();
        let first = owns.iter().position(|own| own.is_none_or(|cfg| cfg.matches(target))).expect("a fallback");
        let rule = &compiled.rules[first];
        let holding: Vec<&(Written, Vec<String>)> = tables.iter().filter(|(cfg, _)| cfg.holds(target, true)).collect();
        assert!(!gate.holds(target, false), "{what}: on {triple} the gate holds without the feature: {}", gate.text);
        match rule.stack.provider() {
            None => {
                assert!(holding.is_empty(), "{what}: on {triple} (rule `{}`, none) a table holds", rule.name);
                assert!(!gate.holds(target, true), "{what}: on {triple} (rule `{}`, none) the gate holds", rule.name);
            }
            Some(_) => {
                let keys: Vec<&str> = holding.iter().map(|(cfg, _)| cfg.text.as_str()).collect();
                assert_eq!(holding.len(), 1, "{what}: on {triple} (rule `{}`) tables {keys:?}", rule.name);
                let mut want: Vec<&str> = rule.stack.runtime_features();
                let mut got: Vec<&str> = holding[0].1.iter().map(String::as_str).collect();
                want.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, want, "{what}: on {triple} (rule `{}`) the table {}", rule.name, keys[0]);
                assert!(gate.holds(target, true), "{what}: on {triple} (rule `{}`) the gate fails", rule.name);
                let picked = chain
                    .iter()
                    .find(|(cfg, _)| cfg.as_ref().is_none_or(|cfg| cfg.holds(target, true)))
                    .map(|(_, name)| name.as_str());
                assert_eq!(picked, Some(rule.name.as_str()), "{what}: on {triple} the module's chain");
            }
        }
    }
}

/// What goes into the files, not the model: every preset's rendered `[target.'cfg(..)']` keys
/// and the emitted module's `#[cfg(..)]`s, parsed back, select the first matching rule on every
/// builtin target.
#[test]
fn every_presets_rendered_cfgs_select_the_first_matching_rule() {
    for name in presets::names() {
        let parsed = policy::parse_policy(presets::preset(name).expect("preset")).expect("valid preset");
        check_rendered(name, &compile::compile(&parsed).expect("compiles"));
    }
}

/// The same for generated policies (the rule lists of
/// `generated_rule_lists_simplify_to_the_same_tables`, with providers that build on most
/// targets), whose nesting the presets do not reach: those that compile are checked.
#[test]
fn generated_policies_rendered_cfgs_select_the_first_matching_rule() {
    // The targets where no provider builds (platform-default's first two rules), Apple's (whose
    // older architectures ring does not build for) and x86 (ring needs SSE2): then rules over
    // the rest with providers that build there.
    const NO_PROVIDER: &str = r#"
[[rule]]
name = "wasm"
cfg = 'cfg(target_family = "wasm")'
provider = "none"

[[rule]]
name = "no-tls-provider"
cfg = 'cfg(any(target_os = "nto", target_os = "qnx", target_os = "nuttx", target_os = "vxworks", target_os = "rtems", target_os = "espidf", target_os = "cygwin", target_os = "hermit", target_os = "vita", target_arch = "arm64ec", all(target_os = "windows", target_arch = "arm"), all(any(target_arch = "x86_64", target_arch = "aarch64"), target_pointer_width = "32")))'
provider = "none"

[[rule]]
name = "apple"
cfg = 'cfg(target_vendor = "apple")'
provider = "rustls-aws-lc"
roots = "platform-verifier"

[[rule]]
name = "x86"
cfg = 'cfg(target_arch = "x86")'
provider = "none"
"#;
    const STACKS: &[&str] = &["provider = \"none\"", "provider = \"rustls-ring\"\nroots = \"webpki\""];
    let mut rng = Rng(0x0dd_ba11_5eed_1e55);
    let mut checked = 0;
    for case in 0..200 {
        let mut text = format!("name = \"generated\"\n\n[runtime]\nversion = \"0.1\"\n{NO_PROVIDER}");
        for rule in 0..1 + rng.next(4) {
            let cfg = rng.cfg(2);
            let stack = STACKS[rng.next(STACKS.len())];
            text.push_str(&format!("\n[[rule]]\nname = \"r{rule}\"\ncfg = 'cfg({cfg})'\n{stack}\n"));
        }
        text.push_str(&format!("\n[fallback]\nname = \"elsewhere\"\n{}\n", STACKS[rng.next(STACKS.len())]));
        let source = policy::PolicySource { path: format!("<generated {case}>").into(), text };
        let Ok(parsed) = policy::parse_policy(source) else { continue };
        let Ok(compiled) = compile::compile(&parsed) else { continue };
        if compiled.rules.iter().all(|r| r.stack.provider().is_none()) {
            continue;
        }
        check_rendered(&format!("generated case {case}"), &compiled);
        checked += 1;
    }
    println!("{checked} generated policies rendered and checked");
    assert!(checked >= 40, "only {checked} generated policies compiled");
}
