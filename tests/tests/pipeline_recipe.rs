//! The pipeline recipe in docs/PIPELINE.md, run as written: the shell block between its
//! `pipeline-recipe` markers on a tree of published SDK crates (aws-config, STS, S3 and what they
//! depend on, fetched at test time; "generation" is the copy), without the runtime crate, which
//! the recipe places. Formatting, apply, formatting again, check and the build must all pass.

use std::process::Command;

use smithy_tls_e2e::{prepare_sdk_tree, repo_root, run, scratch_root, smithy_tls_binary, tail, PUBLISHED};

/// The recipe's shell block.
fn recipe() -> String {
    let doc = std::fs::read_to_string(repo_root().join("docs/PIPELINE.md")).expect("docs/PIPELINE.md");
    let begin = doc.find("<!-- pipeline-recipe:begin -->").expect("the begin marker");
    let end = doc.find("<!-- pipeline-recipe:end -->").expect("the end marker");
    let block = &doc[begin..end];
    let code = block.split("```sh\n").nth(1).expect("a sh block between the markers");
    code.split("```").next().expect("the block's end").to_owned()
}

#[test]
fn the_documented_pipeline_recipe_builds_a_tree() {
    let script = recipe();
    assert!(script.contains("apply --vendor-runtime") && script.contains("check --vendor-runtime"), "{script}");
    let tree = prepare_sdk_tree(&scratch_root().join("pipeline"), PUBLISHED, &["aws-sdk-sts"], false);
    // The recipe places the runtime crate itself.
    std::fs::remove_dir_all(tree.root.join("smithy-default-tls")).expect("remove the harness's runtime copy");
    let out = Command::new("bash")
        .args(["-c", &script])
        .env("SDK_DIR", &tree.root)
        .env("SMITHY_TLS", smithy_tls_binary())
        .env("CARGO_TARGET_DIR", scratch_root().join("target"))
        .output()
        .expect("run the recipe");
    assert!(
        out.status.success(),
        "the recipe failed ({}):\n{}\n{}",
        out.status,
        tail(&String::from_utf8_lossy(&out.stdout), 40),
        tail(&String::from_utf8_lossy(&out.stderr), 60)
    );
    for file in [
        "smithy-default-tls/Cargo.toml",
        "aws-sdk-sts/src/default_http_client.rs",
        "aws-config/src/default_http_client.rs",
    ] {
        assert!(tree.root.join(file).exists(), "{file}");
    }
    // And the gate stays green on the result.
    run(Command::new(smithy_tls_binary()).args(["check", "--vendor-runtime"]).arg(&tree.root));
    println!("E2E pipeline recipe: formatted, applied, formatted, checked, built");
}
