//! `#[cfg(..)]` attributes laid out the way rustfmt lays them out, so the emitted module is a
//! fixed point of rustfmt whatever the policy's predicates are.
//!
//! rustfmt (default configuration, every style edition) formats an attribute's nested lists like
//! calls: a list stays on one line when its arguments fit in `attr_fn_like_width` (70) columns
//! and the line in `max_width` (100); otherwise a list with one nested list as its only argument
//! continues that list on the same line (`cfg(all(`), and any other list puts one argument per
//! line, four columns deeper, with no trailing comma, and closes on its own line at the list's
//! indentation. `codegen/tests/rustfmt.rs` holds this against the installed rustfmt for every
//! preset and for long generated predicates.

use crate::cfg::Cfg;

/// rustfmt's default `max_width`.
const MAX_WIDTH: usize = 100;
/// rustfmt's default `attr_fn_like_width` (70% of `max_width`).
const ATTR_FN_LIKE_WIDTH: usize = 70;
/// rustfmt's default indentation unit.
const INDENT: usize = 4;

/// A meta item: `name = "value"`, a bare word, or `name(item, ..)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Meta {
    /// A leaf, already spelled (`target_os = "linux"`, `unix`).
    Leaf(String),
    /// `name(items)`.
    List(&'static str, Vec<Meta>),
}

impl Meta {
    /// A cfg predicate as meta items; nested `all` lists are flattened into their parent `all`.
    pub(super) fn from_cfg(cfg: &Cfg) -> Meta {
        match cfg {
            Cfg::All(parts) => Meta::List("all", flatten_all(parts)),
            Cfg::Any(parts) => Meta::List("any", parts.iter().map(Meta::from_cfg).collect()),
            Cfg::Not(part) => Meta::List("not", vec![Meta::from_cfg(part)]),
            Cfg::Family(_) | Cfg::Key(..) => Meta::Leaf(cfg.to_string()),
        }
    }

    /// The item on one line.
    fn one_line(&self) -> String {
        match self {
            Meta::Leaf(text) => text.clone(),
            Meta::List(name, items) => format!("{name}({})", join_one_line(items)),
        }
    }

    /// The item starting at column `column` of a line indented by `indent`, with `trailing`
    /// columns that must follow it on its last line.
    fn layout(&self, indent: usize, column: usize, trailing: usize, out: &mut String) {
        let Meta::List(name, items) = self else {
            out.push_str(&self.one_line());
            return;
        };
        let args = join_one_line(items);
        let open = column + name.len() + 1;
        if args.len() <= ATTR_FN_LIKE_WIDTH && open + args.len() + 1 + trailing <= MAX_WIDTH {
            out.push_str(&format!("{name}({args})"));
            return;
        }
        out.push_str(name);
        out.push('(');
        if let [only @ Meta::List(..)] = items.as_slice() {
            only.layout(indent, open, trailing + 1, out);
        } else {
            let inner = indent + INDENT;
            for (i, item) in items.iter().enumerate() {
                let last = i + 1 == items.len();
                out.push('\n');
                out.push_str(&" ".repeat(inner));
                item.layout(inner, inner, usize::from(!last), out);
                if !last {
                    out.push(',');
                }
            }
            out.push('\n');
            out.push_str(&" ".repeat(indent));
        }
        out.push(')');
    }
}

fn flatten_all(parts: &[Cfg]) -> Vec<Meta> {
    parts
        .iter()
        .flat_map(|part| match part {
            Cfg::All(inner) if !inner.is_empty() => flatten_all(inner),
            other => vec![Meta::from_cfg(other)],
        })
        .collect()
}

fn join_one_line(items: &[Meta]) -> String {
    items.iter().map(Meta::one_line).collect::<Vec<_>>().join(", ")
}

/// `#[cfg(<meta>)]` at the start of a line, over as many lines as rustfmt would use.
pub(super) fn cfg_attribute(meta: &Meta) -> String {
    cfg_attribute_at(meta, 0)
}

/// `#[cfg(<meta>)]` on an item indented by `indent` columns (the indentation included).
pub(super) fn cfg_attribute_at(meta: &Meta, indent: usize) -> String {
    let mut out = " ".repeat(indent);
    out.push_str("#[");
    Meta::List("cfg", vec![meta.clone()]).layout(indent, indent + 2, 1, &mut out);
    out.push(']');
    out
}

/// `<prefix>#[cfg(<meta>)]<suffix>` on a line indented by `indent` columns (the indentation
/// included), wrapped as rustfmt would wrap the attribute there. For text rustfmt leaves alone
/// (a macro's body): the same layout reads the same as the attributes around it.
pub(super) fn cfg_attribute_between(prefix: &str, meta: &Meta, suffix: &str, indent: usize) -> String {
    let mut out = " ".repeat(indent);
    out.push_str(prefix);
    out.push_str("#[");
    Meta::List("cfg", vec![meta.clone()]).layout(indent, indent + prefix.len() + 2, 1 + suffix.len(), &mut out);
    out.push(']');
    out.push_str(suffix);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(text: &str) -> Meta {
        Meta::Leaf(text.to_owned())
    }

    #[test]
    fn short_lists_stay_on_one_line() {
        let meta = Meta::List("all", vec![leaf("feature = \"x\""), leaf("unix")]);
        assert_eq!(cfg_attribute(&meta), "#[cfg(all(feature = \"x\", unix))]");
    }

    #[test]
    fn a_long_single_list_continues_and_its_items_go_one_per_line() {
        let long = Meta::List(
            "all",
            vec![
                leaf("feature = \"default-https-client\""),
                leaf("target_os = \"linux\""),
                leaf("target_env = \"gnu\""),
                Meta::List("not", vec![leaf("target_family = \"wasm\"")]),
            ],
        );
        assert_eq!(
            cfg_attribute(&long),
            "#[cfg(all(\n    feature = \"default-https-client\",\n    target_os = \"linux\",\n    \
             target_env = \"gnu\",\n    not(target_family = \"wasm\")\n))]"
        );
    }

    #[test]
    fn text_around_an_attribute_counts_toward_its_width() {
        let meta = Meta::List("any", (0..4).map(|i| leaf(&format!("target_os = \"os-number-{i}\""))).collect());
        assert_eq!(
            cfg_attribute_between("} else if ", &meta, " {", 8),
            "        } else if #[cfg(any(\n            target_os = \"os-number-0\",\n            \
             target_os = \"os-number-1\",\n            target_os = \"os-number-2\",\n            \
             target_os = \"os-number-3\"\n        ))] {"
        );
        let short = Meta::List("any", vec![leaf("unix"), leaf("windows")]);
        assert_eq!(cfg_attribute_between("if ", &short, " {", 8), "        if #[cfg(any(unix, windows))] {");
    }

    #[test]
    fn nested_all_is_flattened() {
        let cfg = Cfg::parse("all(unix, all(target_os = \"linux\", all()))").unwrap();
        assert_eq!(Meta::from_cfg(&cfg).one_line(), "all(unix, target_os = \"linux\", all())");
    }
}
