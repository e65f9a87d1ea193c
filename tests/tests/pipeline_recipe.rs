//! The pipeline recipe in docs/PIPELINE.md, run as written by the tool as a user installs it: the
//! generator's `.crate` from `cargo package`, unpacked and installed with `cargo install --locked
//! --path`, runs the shell block between the `pipeline-recipe` markers on a tree of published SDK
//! crates (aws-config, STS, S3 and what they depend on, fetched at test time; "generation" is the
//! copy), without the runtime crate, which the recipe places. Formatting, apply, formatting again,
//! check and the build must all pass.

use std::process::Command;

use smithy_tls_e2e::support::regenerate;
use smithy_tls_e2e::{
    committed_lock, lean_scratch_build, newest, prepare_sdk_tree, repo_root, run, scratch_root, tail, PUBLISHED,
};

/// The recipe's shell block.
fn recipe() -> String {
    let doc = std::fs::read_to_string(repo_root().join("docs/PIPELINE.md")).expect("docs/PIPELINE.md");
    let begin = doc.find("<!-- pipeline-recipe:begin -->").expect("the begin marker");
    let end = doc.find("<!-- pipeline-recipe:end -->").expect("the end marker");
    let block = &doc[begin..end];
    let code = block.split("```sh\n").nth(1).expect("a sh block between the markers");
    code.split("```").next().expect("the block's end").to_owned()
}

/// `smithy-tls` installed from the generator's package, as `cargo install` from crates.io would.
fn installed_from_the_package() -> std::path::PathBuf {
    let work = scratch_root().join("install");
    let target = work.join("target");
    run(Command::new(env!("CARGO")).current_dir(repo_root()).env("CARGO_TARGET_DIR", &target).args([
        "package",
        "--locked",
        "--allow-dirty",
        "--no-verify",
        "-p",
        "smithy-tls-codegen",
    ]));
    let crate_file = std::fs::read_dir(target.join("package"))
        .expect("cargo package output")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "crate") && p.to_string_lossy().contains("smithy-tls-codegen"))
        .expect("the .crate file");
    // Outside the repository: cargo would take the package for a stray member of its workspace.
    let unpacked = std::env::temp_dir().join(format!("smithy-tls-unpacked-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&unpacked);
    std::fs::create_dir_all(&unpacked).expect("mkdir");
    // `m`: the files get the time of unpacking. A package's entries all carry one fixed time, so
    // cargo, which builds into the same target dir each run, would take every file for unchanged
    // and install the build of an earlier package.
    run(Command::new("tar").arg("xzmf").arg(&crate_file).arg("-C").arg(&unpacked));
    let source = std::fs::read_dir(&unpacked).expect("unpacked").filter_map(Result::ok).next().expect("one dir").path();
    let root = work.join("root");
    run(Command::new(env!("CARGO"))
        .env("CARGO_TARGET_DIR", &target)
        .args(["install", "--locked", "--debug", "--force", "--path"])
        .arg(&source)
        .arg("--root")
        .arg(&root));
    let _ = std::fs::remove_dir_all(&unpacked);
    root.join("bin/smithy-tls")
}

#[test]
fn the_documented_pipeline_recipe_builds_a_tree() {
    let script = recipe();
    assert!(script.contains("apply --vendor-runtime") && script.contains("check --vendor-runtime"), "{script}");
    let tool = installed_from_the_package();
    // aws-config is a member too: the recipe's build compiles it as rewritten (and the STS,
    // SSO and SSO-OIDC clients it uses).
    let tree = prepare_sdk_tree(&scratch_root().join("pipeline"), PUBLISHED, &["aws-sdk-sts", "aws-config"], false);
    // The recipe places the runtime crate itself.
    std::fs::remove_dir_all(tree.root.join("smithy-default-tls")).expect("remove the harness's runtime copy");
    // The recipe's build resolves the tree as rewritten: from the committed lock, which must come
    // out unchanged (the recipe's `cargo build` cannot be given `--locked`). scripts/bless lets it
    // fit the lock to the manifests (or, with no committed lock, resolve afresh) and commits what
    // it wrote.
    let lock = tree.root.join("Cargo.lock");
    let committed = committed_lock("pipeline");
    if !newest() && (!regenerate() || committed.exists()) {
        std::fs::copy(&committed, &lock).unwrap_or_else(|e| {
            panic!(
                "{}: {e}: make it with `scripts/bless test -p smithy-tls-e2e --test pipeline_recipe`",
                committed.display()
            )
        });
    }
    let out = lean_scratch_build(Command::new("bash").args(["-c", &script]))
        .env("SDK_DIR", &tree.root)
        .env("SMITHY_TLS", &tool)
        .output()
        .expect("run the recipe");
    assert!(
        out.status.success(),
        "the recipe failed ({}):\n{}\n{}",
        out.status,
        tail(&String::from_utf8_lossy(&out.stdout), 40),
        tail(&String::from_utf8_lossy(&out.stderr), 60)
    );
    if regenerate() {
        std::fs::copy(&lock, &committed).expect("write the committed lock");
    } else if !newest() {
        let (now, then) = (std::fs::read(&lock).expect("the tree's lock"), std::fs::read(&committed).expect("lock"));
        assert!(
            now == then,
            "the recipe's build changed the committed lock {}: refresh it with scripts/bless",
            committed.display()
        );
    }
    for file in [
        "smithy-default-tls/Cargo.toml",
        "aws-sdk-sts/src/default_http_client.rs",
        "aws-config/src/default_http_client.rs",
    ] {
        assert!(tree.root.join(file).exists(), "{file}");
    }
    // And the gate stays green on the result.
    run(Command::new(&tool).args(["check", "--vendor-runtime"]).arg(&tree.root));
    println!(
        "E2E pipeline recipe, with smithy-tls installed from its .crate: formatted, applied, formatted, checked, built"
    );
}
