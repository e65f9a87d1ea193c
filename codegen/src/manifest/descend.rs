//! Walking down nested tables of a manifest, creating what is missing, as cargo's `toml_mut`
//! does: a missing table is inserted implicit, so it gets no header of its own (what
//! `[a.b.c]` leaves `a` and `a.b`) unless it gets keys.

use toml_edit::{Item, Key, Table};

/// The table at `path` below `root`, each missing table on the way inserted implicit (under its
/// key as written, quoting included).
///
/// # Errors
/// When a key on the way holds something other than a header table (a value, an inline table):
/// how many keys of `path` lead to it.
pub(super) fn descend<'a>(root: &'a mut Table, path: &[Key]) -> Result<&'a mut Table, usize> {
    let mut table = root;
    for (depth, key) in path.iter().enumerate() {
        if !table.contains_key(key.get()) {
            let mut child = Table::new();
            child.set_implicit(true);
            table.insert_formatted(key, Item::Table(child));
        }
        table = table.get_mut(key.get()).and_then(Item::as_table_mut).ok_or(depth + 1)?;
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use toml_edit::{DocumentMut, Key};

    use super::descend;

    #[test]
    fn missing_tables_are_implicit_and_existing_ones_are_kept() {
        let mut doc: DocumentMut = "[package]\nname = \"a\"\n".parse().unwrap();
        let path = [Key::new("target"), "'cfg(unix)'".parse::<Key>().unwrap(), Key::new("dependencies")];
        descend(doc.as_table_mut(), &path).unwrap().insert("x", toml_edit::value("1"));
        descend(doc.as_table_mut(), &[Key::new("package")]).unwrap().insert("version", toml_edit::value("0.1.0"));
        assert_eq!(
            doc.to_string(),
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\n\n[target.'cfg(unix)'.dependencies]\nx = \"1\"\n"
        );
    }

    #[test]
    fn a_key_that_is_not_a_table_stops_the_descent() {
        let mut doc: DocumentMut = "package = { name = \"a\" }\n".parse().unwrap();
        assert_eq!(descend(doc.as_table_mut(), &[Key::new("package"), Key::new("metadata")]).err(), Some(1));
        let mut doc: DocumentMut = "[package]\nmetadata = 1\n".parse().unwrap();
        assert_eq!(descend(doc.as_table_mut(), &[Key::new("package"), Key::new("metadata")]).err(), Some(2));
    }
}
