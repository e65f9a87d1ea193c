//! Rewriting a string array while keeping the layout the user gave it.

use toml_edit::{Array, RawString, Value};

/// How an array lays out its items, learned from the items already there.
struct ArrayLayout {
    first_prefix: String,
    rest_prefix: String,
    inner_suffix: String,
    last_suffix: String,
}

fn decor_text(raw: Option<&RawString>) -> Option<&str> {
    raw.and_then(RawString::as_str)
}

fn is_blank(text: &str) -> bool {
    text.chars().all(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
}

impl ArrayLayout {
    fn of(array: &Array) -> ArrayLayout {
        let items: Vec<&Value> = array.iter().collect();
        let prefix = |index: usize| items.get(index).and_then(|item| decor_text(item.decor().prefix()));
        let suffix = |index: usize| items.get(index).and_then(|item| decor_text(item.decor().suffix()));
        let blank = |text: Option<&str>| text.filter(|text| is_blank(text)).map(str::to_owned);

        let multiline_prefix =
            items.iter().filter_map(|item| decor_text(item.decor().prefix())).find(|prefix| prefix.contains('\n'));
        let multiline =
            multiline_prefix.is_some() || decor_text(Some(array.trailing())).is_some_and(|t| t.contains('\n'));
        let (first_prefix, rest_prefix) = if multiline {
            let line_prefix = multiline_prefix
                .and_then(|prefix| {
                    let newline = if prefix.contains("\r\n") { "\r\n" } else { "\n" };
                    let indent = &prefix[prefix.rfind('\n')? + 1..];
                    is_blank(indent).then(|| format!("{newline}{indent}"))
                })
                .unwrap_or_else(|| "\n    ".to_owned());
            (line_prefix.clone(), line_prefix)
        } else {
            (blank(prefix(0)).unwrap_or_default(), blank(prefix(1)).unwrap_or_else(|| " ".to_owned()))
        };
        let inner_suffix = if items.len() > 1 || array.trailing_comma() {
            blank(suffix(0)).unwrap_or_default()
        } else {
            String::new()
        };
        let last_suffix = if array.trailing_comma() {
            inner_suffix.clone()
        } else {
            blank(items.len().checked_sub(1).and_then(suffix)).unwrap_or_default()
        };
        ArrayLayout { first_prefix, rest_prefix, inner_suffix, last_suffix }
    }

    fn prefix(&self, index: usize) -> &str {
        if index == 0 {
            &self.first_prefix
        } else {
            &self.rest_prefix
        }
    }

    fn suffix(&self, is_last: bool) -> &str {
        if is_last {
            &self.last_suffix
        } else {
            &self.inner_suffix
        }
    }
}

/// Makes `array`'s items the strings `desired`. Items that stay keep their formatting (and
/// comments); new items are laid out like their neighbours. An array that already holds them is
/// left as it is.
pub(super) fn rewrite_string_array(array: &mut Array, desired: &[String]) {
    let unchanged = array.len() == desired.len()
        && array.iter().zip(desired).all(|(item, want)| item.as_str() == Some(want.as_str()));
    if unchanged {
        return;
    }
    let layout = ArrayLayout::of(array);
    let old: Vec<Value> = array.iter().cloned().collect();
    let old_last = old.len().checked_sub(1);
    let new_last = desired.len().checked_sub(1);
    let mut used = vec![false; old.len()];
    let mut items = Vec::with_capacity(desired.len());
    for (index, want) in desired.iter().enumerate() {
        let is_last = Some(index) == new_last;
        let reused = (0..old.len()).find(|&j| !used[j] && old[j].as_str() == Some(want.as_str()));
        let item = match reused {
            Some(j) => {
                used[j] = true;
                let mut item = old[j].clone();
                let decor = item.decor_mut();
                if (j == 0) != (index == 0) && decor_text(decor.prefix()).is_none_or(is_blank) {
                    decor.set_prefix(layout.prefix(index));
                }
                if !array.trailing_comma()
                    && (Some(j) == old_last) != is_last
                    && decor_text(decor.suffix()).is_none_or(is_blank)
                {
                    decor.set_suffix(layout.suffix(is_last));
                }
                item
            }
            None => Value::from(want.as_str()).decorated(layout.prefix(index), layout.suffix(is_last)),
        };
        items.push(item);
    }
    array.clear();
    if items.is_empty() {
        array.set_trailing_comma(false);
    }
    for item in items {
        array.push_formatted(item);
    }
}
