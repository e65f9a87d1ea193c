//! cfg predicates as data: parsed once (from a policy's `cfg` text), evaluated against targets
//! without re-parsing, combined structurally into the exclusive predicates of a compiled policy,
//! and printed in one canonical spelling (manifests, docs, JSON; the emitted module lays it out
//! as rustfmt would).

use std::fmt;

use cfg_expr::expr::TargetPredicate;
use cfg_expr::targets::{Abi, Arch, Endian, Env, Family, Os, TargetInfo, Vendor};
use syn::punctuated::Punctuated;
use syn::{Meta, Token};

/// A cfg predicate over target properties: what a policy rule may test.
///
/// Only target keys, `unix`, `windows`, `all`, `any` and `not` exist: a policy decides per
/// target, so features, `test` or `debug_assertions` have no place in it.
///
/// ```
/// use smithy_tls_codegen::cfg::Cfg;
///
/// let cfg = Cfg::parse("cfg( all(target_os=\"linux\" ,target_env = \"gnu\") )").unwrap();
/// assert_eq!(cfg.to_string(), "all(target_os = \"linux\", target_env = \"gnu\")");
/// let linux = cfg_expr::targets::get_builtin_target_by_triple("x86_64-unknown-linux-gnu").unwrap();
/// assert!(cfg.matches(linux));
/// assert!(Cfg::parse("feature = \"x\"").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Cfg {
    /// True when every part is (`all()` is always true).
    All(Vec<Cfg>),
    /// True when some part is (`any()` is never true).
    Any(Vec<Cfg>),
    /// True when the part is not.
    Not(Box<Cfg>),
    /// `unix` or `windows`.
    Family(FamilyFlag),
    /// `key = "value"`.
    Key(TargetKey, String),
}

/// The bare family names rustc sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FamilyFlag {
    /// `unix`.
    Unix,
    /// `windows`.
    Windows,
}

impl FamilyFlag {
    fn name(self) -> &'static str {
        match self {
            FamilyFlag::Unix => "unix",
            FamilyFlag::Windows => "windows",
        }
    }
}

/// The target keys a policy may test: fixed per target and known to the builtin target list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetKey {
    /// `target_os`.
    Os,
    /// `target_family`.
    Family,
    /// `target_env`.
    Env,
    /// `target_arch`.
    Arch,
    /// `target_vendor`.
    Vendor,
    /// `target_pointer_width` (a number of bits).
    PointerWidth,
    /// `target_endian` (`little` or `big`).
    Endian,
    /// `target_abi`.
    Abi,
}

impl TargetKey {
    /// Every key, in the order help texts list them.
    pub const ALL: [TargetKey; 8] = [
        TargetKey::Os,
        TargetKey::Family,
        TargetKey::Env,
        TargetKey::Arch,
        TargetKey::Vendor,
        TargetKey::PointerWidth,
        TargetKey::Endian,
        TargetKey::Abi,
    ];

    /// The key as written in cfg predicates, e.g. `target_os`.
    pub fn name(self) -> &'static str {
        match self {
            TargetKey::Os => "target_os",
            TargetKey::Family => "target_family",
            TargetKey::Env => "target_env",
            TargetKey::Arch => "target_arch",
            TargetKey::Vendor => "target_vendor",
            TargetKey::PointerWidth => "target_pointer_width",
            TargetKey::Endian => "target_endian",
            TargetKey::Abi => "target_abi",
        }
    }

    /// Whether a target has exactly one value of this key (rustc sets each of these once per
    /// target, from its specification); `target_family` can hold several (`unix` and `wasm`).
    pub fn single_valued(self) -> bool {
        self != TargetKey::Family
    }

    fn from_name(name: &str) -> Option<TargetKey> {
        TargetKey::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Checks a value's form for this key (numbers for pointer widths, `little`/`big`).
    fn check_value(self, value: &str) -> Result<(), CfgError> {
        let fits = match self {
            TargetKey::PointerWidth => value.parse::<u8>().is_ok(),
            TargetKey::Endian => matches!(value, "little" | "big"),
            _ => true,
        };
        if fits {
            Ok(())
        } else {
            Err(CfgError::BadValue { key: self, value: value.to_owned() })
        }
    }
}

/// Why a text is not a predicate a policy may use; `Display` says it in words (the caller
/// knows where the text sits).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CfgError {
    /// The text is not Rust attribute syntax.
    #[error("{message} in `{text}`")]
    Syntax {
        /// The parser's message.
        message: String,
        /// The whole text.
        text: String,
    },
    /// The arguments of `cfg(..)`, `all(..)`, `any(..)` or `not(..)` are not predicates.
    #[error("{0}")]
    Arguments(String),
    /// `cfg(..)` or `not(..)` without exactly one predicate (the combinator named).
    #[error("{0}(...) takes exactly one predicate")]
    NotOne(&'static str),
    /// A path (`a::b`) where a name belongs.
    #[error("expected a plain name")]
    NotAName,
    /// A bare name other than `unix` and `windows`.
    #[error("`{0}` is not a target property; use target_* keys, `unix` or `windows`")]
    NotATargetProperty(String),
    /// `name = ".."` with a name that is not a [`TargetKey`].
    #[error("`{0}` cannot decide a target's TLS stack; use one of: {keys}", keys = TargetKey::ALL.map(TargetKey::name).join(", "))]
    UnknownKey(String),
    /// A value that is not a string literal.
    #[error("the value of `{0}` must be a string literal")]
    NotAString(String),
    /// A value of the wrong form for its key.
    #[error("{}", bad_value(*key, value))]
    BadValue {
        /// The key.
        key: TargetKey,
        /// The value given.
        value: String,
    },
    /// A combinator other than `all`, `any` and `not`.
    #[error("unknown combinator `{0}`; use all, any or not")]
    UnknownCombinator(String),
}

/// What is wrong with `value` for `key` ([`CfgError::BadValue`]).
fn bad_value(key: TargetKey, value: &str) -> String {
    match key {
        TargetKey::PointerWidth => format!("target_pointer_width must be a number of bits, not `{value}`"),
        TargetKey::Endian => format!("target_endian must be \"little\" or \"big\", not `{value}`"),
        other => format!("`{value}` is not a value of {}", other.name()),
    }
}

impl Cfg {
    /// Parses a predicate, with or without the surrounding `cfg(...)`.
    pub fn parse(text: &str) -> Result<Cfg, CfgError> {
        let meta: Meta = syn::parse_str(text.trim())
            .map_err(|e| CfgError::Syntax { message: e.to_string(), text: text.to_owned() })?;
        match &meta {
            Meta::List(list) if list.path.is_ident("cfg") => match Cfg::arguments(list)?.as_slice() {
                [one] => Cfg::from_meta(one),
                _ => Err(CfgError::NotOne("cfg")),
            },
            _ => Cfg::from_meta(&meta),
        }
    }

    /// The comma-separated predicates inside `list`'s parentheses.
    fn arguments(list: &syn::MetaList) -> Result<Vec<Meta>, CfgError> {
        let args: Punctuated<Meta, Token![,]> =
            list.parse_args_with(Punctuated::parse_terminated).map_err(|e| CfgError::Arguments(e.to_string()))?;
        Ok(args.into_iter().collect())
    }

    fn from_meta(meta: &Meta) -> Result<Cfg, CfgError> {
        let name = meta.path().get_ident().map(|i| i.to_string()).ok_or(CfgError::NotAName)?;
        match meta {
            Meta::Path(_) => match name.as_str() {
                "unix" => Ok(Cfg::Family(FamilyFlag::Unix)),
                "windows" => Ok(Cfg::Family(FamilyFlag::Windows)),
                _ => Err(CfgError::NotATargetProperty(name)),
            },
            Meta::NameValue(nv) => {
                let key = TargetKey::from_name(&name).ok_or_else(|| CfgError::UnknownKey(name.clone()))?;
                match &nv.value {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => {
                        let value = s.value();
                        key.check_value(&value)?;
                        Ok(Cfg::Key(key, value))
                    }
                    _ => Err(CfgError::NotAString(name)),
                }
            }
            Meta::List(list) => {
                let mut parts = Cfg::arguments(list)?.iter().map(Cfg::from_meta).collect::<Result<Vec<_>, _>>()?;
                match name.as_str() {
                    "all" => Ok(Cfg::All(parts)),
                    "any" => Ok(Cfg::Any(parts)),
                    "not" if parts.len() == 1 => Ok(Cfg::Not(Box::new(parts.remove(0)))),
                    "not" => Err(CfgError::NotOne("not")),
                    _ => Err(CfgError::UnknownCombinator(name)),
                }
            }
        }
    }

    /// Every `key = "value"` the predicate tests, in the order they are written (repeats
    /// included); `unix` and `windows` are not listed.
    ///
    /// ```
    /// use smithy_tls_codegen::cfg::{Cfg, TargetKey};
    /// let cfg = Cfg::parse("all(unix, any(target_os = \"linux\", target_env = \"gnu\"))").unwrap();
    /// assert_eq!(cfg.key_values(), vec![(TargetKey::Os, "linux"), (TargetKey::Env, "gnu")]);
    /// ```
    pub fn key_values(&self) -> Vec<(TargetKey, &str)> {
        self.leaves()
            .into_iter()
            .filter_map(|leaf| match leaf {
                Cfg::Key(key, value) => Some((*key, value.as_str())),
                _ => None,
            })
            .collect()
    }

    /// Every `key = value` and family-flag leaf, in order of appearance.
    fn leaves(&self) -> Vec<&Cfg> {
        match self {
            Cfg::All(parts) | Cfg::Any(parts) => parts.iter().flat_map(Cfg::leaves).collect(),
            Cfg::Not(part) => part.leaves(),
            leaf => vec![leaf],
        }
    }

    /// Whether the predicate holds for a builtin target (cfg-expr's view of it, which a test
    /// checks against `rustc --print cfg`).
    pub fn matches(&self, target: &TargetInfo) -> bool {
        self.eval(&|key, value| key_predicate(key, value).is_some_and(|p| p.matches(target)))
    }

    /// Whether the predicate holds for a `rustc --print cfg` listing (`key="value"` lines and
    /// bare family lines such as `unix`).
    ///
    /// ```
    /// use smithy_tls_codegen::cfg::Cfg;
    /// let listing = "target_os=\"linux\"\ntarget_family=\"unix\"\nunix\n";
    /// assert!(Cfg::parse("all(unix, target_os = \"linux\")").unwrap().matches_rustc_cfg(listing));
    /// ```
    pub fn matches_rustc_cfg(&self, listing: &str) -> bool {
        let has_line = |line: &str| listing.lines().any(|l| l.trim() == line);
        self.eval(&|key, value| {
            has_line(&format!("{}=\"{value}\"", key.name())) || (key == TargetKey::Family && has_line(value))
        })
    }

    /// Evaluates the combinators, asking `holds` about each key (a family flag is
    /// `target_family = "unix"` / `"windows"`).
    fn eval(&self, holds: &dyn Fn(TargetKey, &str) -> bool) -> bool {
        match self {
            Cfg::All(parts) => parts.iter().all(|p| p.eval(holds)),
            Cfg::Any(parts) => parts.iter().any(|p| p.eval(holds)),
            Cfg::Not(part) => !part.eval(holds),
            Cfg::Family(flag) => holds(TargetKey::Family, flag.name()),
            Cfg::Key(key, value) => holds(*key, value),
        }
    }

    /// `any(parts)`, with each part that is itself a non-empty `any(..)` spliced in:
    /// `any(a, any(b, c))` is `any(a, b, c)`, so predicates built from earlier rules do not nest
    /// deeper with every rule.
    ///
    /// ```
    /// use smithy_tls_codegen::cfg::Cfg;
    /// let a = Cfg::parse("unix").unwrap();
    /// let bc = Cfg::parse("any(windows, target_os = \"hermit\")").unwrap();
    /// assert_eq!(Cfg::any_of([a, bc]).to_string(), "any(unix, windows, target_os = \"hermit\")");
    /// ```
    pub fn any_of(parts: impl IntoIterator<Item = Cfg>) -> Cfg {
        Cfg::Any(
            parts
                .into_iter()
                .flat_map(|cfg| match cfg {
                    Cfg::Any(inner) if !inner.is_empty() => inner,
                    other => vec![other],
                })
                .collect(),
        )
    }

    /// The predicate of a first-match rule: its own predicate (`None` for the fallback), and
    /// not any earlier rule's. `all(a, b)` with earlier rules reads `all(a, b, not(..))`, not
    /// `all(all(a, b), not(..))`.
    ///
    /// ```
    /// use smithy_tls_codegen::cfg::Cfg;
    /// let wasm = Cfg::parse("target_family = \"wasm\"").unwrap();
    /// let linux = Cfg::parse("all(target_os = \"linux\", target_env = \"gnu\")").unwrap();
    /// let exclusive = Cfg::first_match(Some(&linux), &[wasm.clone()]);
    /// assert_eq!(
    ///     exclusive.to_string(),
    ///     "all(target_os = \"linux\", target_env = \"gnu\", not(target_family = \"wasm\"))"
    /// );
    /// assert_eq!(Cfg::first_match(None, &[wasm]).to_string(), "not(target_family = \"wasm\")");
    /// ```
    pub fn first_match(own: Option<&Cfg>, earlier: &[Cfg]) -> Cfg {
        let none_earlier = match earlier {
            [] => return own.cloned().unwrap_or(Cfg::All(Vec::new())),
            [one] => Cfg::Not(Box::new(one.clone())),
            many => Cfg::Not(Box::new(Cfg::any_of(many.iter().cloned()))),
        };
        match own {
            None => none_earlier,
            Some(Cfg::All(parts)) if !parts.is_empty() => {
                Cfg::All(parts.iter().cloned().chain(std::iter::once(none_earlier)).collect())
            }
            Some(own) => Cfg::All(vec![own.clone(), none_earlier]),
        }
    }
}

/// What a conjunction of atoms decides about other atoms: a single-valued key known equal to a
/// value (so equal to no other), values a key is known not to have, and `target_family` values
/// known present or absent (a target can have several families, so one known present says
/// nothing of the others).
#[derive(Debug, Default)]
struct Facts<'a> {
    equal: Vec<(TargetKey, &'a str)>,
    not_equal: Vec<(TargetKey, &'a str)>,
    /// A single-valued key known to take one of these values (`any(target_arch = "x86_64",
    /// target_arch = "aarch64")`).
    one_of: Vec<(TargetKey, Vec<&'a str>)>,
}

impl<'a> Facts<'a> {
    /// The facts of `cfg`'s top-level conjuncts (`key = value`, `unix`, and their negations).
    fn of(cfg: &'a Cfg) -> Facts<'a> {
        let parts = match cfg {
            Cfg::All(parts) => parts.as_slice(),
            one => std::slice::from_ref(one),
        };
        let mut facts = Facts::default();
        for part in parts {
            match part {
                Cfg::Not(inner) => facts.not_equal.extend(inner.atom()),
                Cfg::Any(alternatives) => facts.one_of.extend(Facts::alternatives(alternatives)),
                atom => facts.equal.extend(atom.atom()),
            }
        }
        facts
    }

    /// `(key, values)` when every alternative is `key = value` for one single-valued key.
    fn alternatives(parts: &'a [Cfg]) -> Option<(TargetKey, Vec<&'a str>)> {
        let atoms: Vec<(TargetKey, &str)> = parts.iter().map(Cfg::atom).collect::<Option<_>>()?;
        let (key, _) = *atoms.first()?;
        (key.single_valued() && atoms.iter().all(|(k, _)| *k == key))
            .then(|| (key, atoms.into_iter().map(|(_, value)| value).collect()))
    }

    /// Whether `any(parts)` names every value a key is known to take one of (`any(target_arch =
    /// "x86_64", target_arch = "aarch64")` under that same fact), and so holds.
    fn covered_by(&self, parts: &[Cfg]) -> bool {
        self.one_of
            .iter()
            .any(|(key, values)| values.iter().all(|value| parts.iter().any(|p| p.atom() == Some((*key, *value)))))
    }

    /// Whether `key = value` holds wherever the facts do, when they decide it.
    fn decide(&self, key: TargetKey, value: &str) -> Option<bool> {
        if self.not_equal.contains(&(key, value)) {
            return Some(false);
        }
        if key.single_valued() {
            if let Some((_, known)) = self.equal.iter().find(|(k, _)| *k == key) {
                return Some(*known == value);
            }
            if self.one_of.iter().any(|(k, values)| *k == key && !values.contains(&value)) {
                return Some(false);
            }
        } else if self.equal.contains(&(key, value)) {
            return Some(true);
        }
        None
    }
}

/// A predicate partly evaluated: decided, or what is left to test.
enum Folded {
    Decided(bool),
    Open(Cfg),
}

impl Cfg {
    /// `key = value` for an atom (a family flag is `target_family = "unix"` / `"windows"`).
    fn atom(&self) -> Option<(TargetKey, &str)> {
        match self {
            Cfg::Key(key, value) => Some((*key, value.as_str())),
            Cfg::Family(flag) => Some((TargetKey::Family, flag.name())),
            _ => None,
        }
    }

    /// The predicate with every atom the facts decide replaced by its value, and constant parts
    /// of `all`/`any`/`not` folded away.
    fn fold(&self, facts: &Facts<'_>) -> Folded {
        let list = |parts: &[Cfg], absorbing: bool, make: fn(Vec<Cfg>) -> Cfg| {
            if absorbing && facts.covered_by(parts) {
                return Folded::Decided(true);
            }
            let mut open = Vec::new();
            for part in parts {
                match part.fold(facts) {
                    Folded::Decided(value) if value == absorbing => return Folded::Decided(absorbing),
                    Folded::Decided(_) => {}
                    Folded::Open(cfg) => open.push(cfg),
                }
            }
            if absorbing {
                open = Cfg::absorbed(open);
            }
            match open.len() {
                0 => Folded::Decided(!absorbing),
                1 => Folded::Open(open.remove(0)),
                _ => Folded::Open(make(open)),
            }
        };
        match self {
            Cfg::All(parts) => list(parts, false, Cfg::All),
            Cfg::Any(parts) => list(parts, true, Cfg::Any),
            Cfg::Not(part) => match part.fold(facts) {
                Folded::Decided(value) => Folded::Decided(!value),
                Folded::Open(cfg) => Folded::Open(Cfg::Not(Box::new(cfg))),
            },
            atom => match atom.atom().and_then(|(key, value)| facts.decide(key, value)) {
                Some(value) => Folded::Decided(value),
                None => Folded::Open(atom.clone()),
            },
        }
    }

    /// The parts of an `any(..)` without those that add nothing: a repeat; a part that includes
    /// another as a conjunct (`any(a, all(a, b))` is `any(a)`); and a `not(y)` conjunct where `y`
    /// implies another part (`any(x, all(a, not(y)))` is `any(x, a)` when `y` implies `x`: where
    /// `x` is false, so is `y`).
    fn absorbed(parts: Vec<Cfg>) -> Vec<Cfg> {
        // `any(x, p)` is `any(x, p')` where `p'` is `p` with the atom `x` false: `any(target_arch =
        // "arm", all(any(target_arch = "aarch64", target_arch = "arm"), ..))` needs no second "arm".
        let atoms: Vec<(TargetKey, &str)> = parts.iter().filter_map(Cfg::atom).collect();
        let parts: Vec<Cfg> = parts
            .iter()
            .filter_map(|part| {
                if part.atom().is_some() {
                    return Some(part.clone());
                }
                let facts = Facts { not_equal: atoms.clone(), ..Facts::default() };
                match part.fold(&facts) {
                    Folded::Decided(false) => None,
                    Folded::Decided(true) => Some(part.clone()),
                    Folded::Open(short) => Some(short),
                }
            })
            .collect();
        let implies = |y: &Cfg, x: &Cfg| matches!(x.fold(&Facts::of(y)), Folded::Decided(true));
        let mut kept: Vec<Cfg> = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let others = || parts.iter().enumerate().filter(move |(j, _)| *j != i).map(|(_, q)| q);
            let part = match part {
                Cfg::All(conjuncts) if others().any(|q| conjuncts.contains(q)) => continue,
                Cfg::All(conjuncts) => {
                    let needed: Vec<Cfg> = conjuncts
                        .iter()
                        .filter(|c| !matches!(c, Cfg::Not(y) if others().any(|x| implies(y, x))))
                        .cloned()
                        .collect();
                    match needed.len() {
                        // `any(x, not(y))` with `y` implying `x` always holds; kept as it is.
                        0 => part.clone(),
                        1 => needed.into_iter().next().unwrap_or(Cfg::All(Vec::new())),
                        _ => Cfg::All(needed),
                    }
                }
                other => other.clone(),
            };
            if !kept.contains(&part) {
                kept.push(part);
            }
        }
        kept
    }

    /// The table predicate of a first-match rule, as short as it can be made while meaning the
    /// same on every target: [`Cfg::first_match`], with each earlier rule's clause simplified by
    /// what the rule's own top-level conjuncts decide. A target has exactly one value of each
    /// single-valued key (every key but `target_family`), so under `target_os = "linux"` an
    /// earlier `target_os = "windows"` is false and drops out, and `all(target_os = "linux",
    /// target_env = "musl")` becomes `target_env = "musl"`; under `any(target_arch = "x86_64",
    /// target_arch = "aarch64")`, `target_arch = "arm"` is false. Nothing else is assumed, so the
    /// result agrees with [`Cfg::first_match`] on every target, custom target specifications
    /// included. A rule whose earlier clauses fold to false (every target it matches is taken)
    /// keeps the long form, for the diagnostics that report it.
    ///
    /// ```
    /// use smithy_tls_codegen::cfg::Cfg;
    /// let earlier = [
    ///     Cfg::parse("target_os = \"windows\"").unwrap(),
    ///     Cfg::parse("all(target_os = \"linux\", target_env = \"musl\")").unwrap(),
    /// ];
    /// let linux = Cfg::parse("target_os = \"linux\"").unwrap();
    /// assert_eq!(
    ///     Cfg::exclusive(Some(&linux), &earlier).to_string(),
    ///     "all(target_os = \"linux\", not(target_env = \"musl\"))"
    /// );
    /// ```
    pub fn exclusive(own: Option<&Cfg>, earlier: &[Cfg]) -> Cfg {
        let long = Cfg::first_match(own, earlier);
        if earlier.is_empty() {
            return long;
        }
        let Some(own) = own else {
            // The fallback: no fact to decide by, but an earlier clause that includes another
            // one (`all(target_os = "windows", target_env = "gnu")` beside `target_os =
            // "windows"`) adds nothing to the negation.
            return match long.fold(&Facts::default()) {
                Folded::Open(short) => short,
                Folded::Decided(_) => long,
            };
        };
        let facts = Facts::of(own);
        let Cfg::All(mut parts) = long else { return long };
        let Some(none_earlier) = parts.pop() else { return Cfg::All(parts) };
        match none_earlier.fold(&facts) {
            Folded::Decided(true) => own.clone(),
            Folded::Decided(false) => Cfg::first_match(Some(own), earlier),
            Folded::Open(rest) => {
                parts.push(rest);
                Cfg::All(parts)
            }
        }
    }

    /// The predicate of a table shared by several first-match rules (each given as its own cfg
    /// and its earlier rules), factored when that is shorter than [`Cfg::any_of`] their
    /// [`Cfg::exclusive`] predicates: `all(any(<each rule, with what only it excludes>),
    /// not(any(<earlier rules they all exclude>)))`. A list of earlier rules serves as the common
    /// part when, under each rule's own cfg, what is left of it is among what that rule excludes
    /// anyway (`apple` and a later `windows`: under `target_os = "windows"`, an `android` rule
    /// between them drops out). `None` when no rule's list serves, or a rule is the fallback or
    /// never first.
    ///
    /// ```
    /// use smithy_tls_codegen::cfg::Cfg;
    /// let parse = |text: &str| Cfg::parse(text).unwrap();
    /// let (wasm, apple) = (parse("target_family = \"wasm\""), parse("target_vendor = \"apple\""));
    /// let (android, windows) = (parse("target_os = \"android\""), parse("target_os = \"windows\""));
    /// let apple_earlier = [wasm.clone()];
    /// let windows_earlier = [wasm, android];
    /// let table = Cfg::exclusive_group(&[(&apple, &apple_earlier), (&windows, &windows_earlier)]).unwrap();
    /// assert_eq!(
    ///     table.to_string(),
    ///     "all(any(target_vendor = \"apple\", target_os = \"windows\"), not(target_family = \"wasm\"))"
    /// );
    /// ```
    pub fn exclusive_group(members: &[(&Cfg, &[Cfg])]) -> Option<Cfg> {
        // What each rule's earlier rules leave to exclude under the rule's own facts.
        let left_under = |own: &Cfg, earlier: &[Cfg]| -> Option<Vec<Cfg>> {
            match Cfg::any_of(earlier.iter().cloned()).fold(&Facts::of(own)) {
                Folded::Decided(false) => Some(Vec::new()),
                Folded::Decided(true) => None,
                Folded::Open(Cfg::Any(clauses)) => Some(clauses),
                Folded::Open(one) => Some(vec![one]),
            }
        };
        let left: Vec<Vec<Cfg>> =
            members.iter().map(|(own, earlier)| left_under(own, earlier)).collect::<Option<_>>()?;
        let mut best: Option<Cfg> = None;
        for (_, common) in members {
            let Some(shares) = members.iter().map(|(own, _)| left_under(own, common)).collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            if !shares.iter().zip(&left).all(|(share, left)| share.iter().all(|clause| left.contains(clause))) {
                continue;
            }
            let each = members.iter().zip(shares.iter().zip(&left)).map(|((own, _), (share, left))| {
                let own_only: Vec<Cfg> = left.iter().filter(|clause| !share.contains(clause)).cloned().collect();
                Cfg::first_match(Some(own), &own_only)
            });
            let mut parts = vec![Cfg::any_of(each)];
            match Cfg::any_of(common.iter().cloned()).fold(&Facts::default()) {
                Folded::Decided(false) => {}
                Folded::Decided(true) => continue,
                Folded::Open(clauses) => parts.push(Cfg::Not(Box::new(clauses))),
            }
            let factored = if parts.len() == 1 { parts.remove(0) } else { Cfg::All(parts) };
            if best.as_ref().is_none_or(|b| factored.to_string().len() < b.to_string().len()) {
                best = Some(factored);
            }
        }
        best
    }

    /// Whether the predicate holds where `holds` says which `key = value` atoms are true (a
    /// family flag asks about `target_family`): evaluates it over any model of a target, not
    /// only the builtin ones.
    ///
    /// ```
    /// use smithy_tls_codegen::cfg::{Cfg, TargetKey};
    /// let cfg = Cfg::parse("all(unix, not(target_os = \"linux\"))").unwrap();
    /// let bsd = |key: TargetKey, value: &str| match key {
    ///     TargetKey::Family => value == "unix",
    ///     TargetKey::Os => value == "freebsd",
    ///     _ => false,
    /// };
    /// assert!(cfg.holds(&bsd));
    /// ```
    pub fn holds(&self, holds: &dyn Fn(TargetKey, &str) -> bool) -> bool {
        self.eval(holds)
    }

    /// Every `key = value` atom the predicate tests (family flags as `target_family`), in order
    /// of appearance, repeats included.
    pub fn atoms(&self) -> Vec<(TargetKey, &str)> {
        self.leaves().into_iter().filter_map(Cfg::atom).collect()
    }
}

/// The cfg-expr predicate for `key = value`, or `None` for a value no target can have (a
/// pointer width that is not a number).
fn key_predicate(key: TargetKey, value: &str) -> Option<TargetPredicate> {
    let value = value.to_owned();
    Some(match key {
        TargetKey::Os => TargetPredicate::Os(Os::new(value)),
        TargetKey::Family => TargetPredicate::Family(Family::new(value)),
        TargetKey::Env => TargetPredicate::Env(Env::new(value)),
        TargetKey::Arch => TargetPredicate::Arch(Arch::new(value)),
        TargetKey::Vendor => TargetPredicate::Vendor(Vendor::new(value)),
        TargetKey::Abi => TargetPredicate::Abi(Abi::new(value)),
        TargetKey::PointerWidth => TargetPredicate::PointerWidth(value.parse().ok()?),
        TargetKey::Endian => TargetPredicate::Endian(if value == "big" { Endian::big } else { Endian::little }),
    })
}

impl fmt::Display for Cfg {
    /// The canonical spelling: `all(target_os = "linux", not(target_env = "musl"))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, name: &str, parts: &[Cfg]| {
            write!(f, "{name}(")?;
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{part}")?;
            }
            f.write_str(")")
        };
        match self {
            Cfg::All(parts) => list(f, "all", parts),
            Cfg::Any(parts) => list(f, "any", parts),
            Cfg::Not(part) => write!(f, "not({part})"),
            Cfg::Family(flag) => f.write_str(flag.name()),
            Cfg::Key(key, value) => write!(f, "{} = \"{value}\"", key.name()),
        }
    }
}

impl serde::Serialize for Cfg {
    /// As its canonical text, so JSON reports read like policy files.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_and_printing_round_trip_in_canonical_form() {
        for (input, canonical) in [
            ("unix", "unix"),
            ("cfg(windows)", "windows"),
            ("all()", "all()"),
            (
                "any( target_arch=\"x86_64\" , target_arch = \"aarch64\")",
                "any(target_arch = \"x86_64\", target_arch = \"aarch64\")",
            ),
            (
                "not(all(target_os = \"linux\", target_env = \"musl\"))",
                "not(all(target_os = \"linux\", target_env = \"musl\"))",
            ),
            ("target_pointer_width = \"64\"", "target_pointer_width = \"64\""),
        ] {
            let cfg = Cfg::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(cfg.to_string(), canonical);
            assert_eq!(Cfg::parse(canonical), Ok(cfg));
        }
    }

    #[test]
    fn bad_predicates_say_why() {
        for (input, says) in [
            ("feature = \"x\"", "cannot decide a target's TLS stack"),
            ("debug_assertions", "is not a target property"),
            ("not(unix, windows)", "exactly one predicate"),
            ("xor(unix)", "unknown combinator `xor`"),
            ("target_os = linux", "must be a string literal"),
            ("target_pointer_width = \"wide\"", "number of bits"),
            ("target_endian = \"middle\"", "\"little\" or \"big\""),
            ("cfg(unix, windows)", "exactly one predicate"),
            ("all(", ""),
        ] {
            let err = Cfg::parse(input).expect_err(input).to_string();
            assert!(err.contains(says), "{input}: {err}");
        }
        let err = Cfg::parse("target_endian = \"middle\"");
        assert_eq!(err, Err(CfgError::BadValue { key: TargetKey::Endian, value: "middle".to_owned() }));
        assert_eq!(Cfg::parse("cfg()"), Err(CfgError::NotOne("cfg")));
        assert!(matches!(Cfg::parse("all("), Err(CfgError::Syntax { .. })), "unbalanced");
    }

    #[test]
    fn the_text_reads_back_as_the_same_predicate() {
        let cfg = Cfg::parse("all(unix, not(target_env = \"musl\"), any())").unwrap();
        assert_eq!(Cfg::parse(&cfg.to_string()), Ok(cfg));
    }

    #[test]
    fn first_match_splices_only_a_non_empty_leading_all() {
        let a = Cfg::parse("target_os = \"a\"").unwrap();
        let b = Cfg::parse("target_os = \"b\"").unwrap();
        let empty_all = Cfg::All(Vec::new());
        assert_eq!(Cfg::first_match(Some(&a), &[]).to_string(), "target_os = \"a\"");
        assert_eq!(Cfg::first_match(None, &[]).to_string(), "all()");
        assert_eq!(
            Cfg::first_match(Some(&empty_all), &[a.clone(), b.clone()]).to_string(),
            "all(all(), not(any(target_os = \"a\", target_os = \"b\")))"
        );
        assert_eq!(Cfg::first_match(Some(&b), &[a]).to_string(), "all(target_os = \"b\", not(target_os = \"a\"))");
    }
}
