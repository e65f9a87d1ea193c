//! End to end on published SDK crates: fetch aws-config, aws-sdk-sts and aws-sdk-s3 (with the
//! runtime crates they need) from the registry, rewrite a fresh copy with each preset, check the
//! per-target dependency graphs, build a consumer application and run it against a local HTTPS
//! mock of S3 and STS, proving which TLS provider carried each request and that one pool serves
//! every client (once per host stack: a preset whose host rule gives the stack an earlier
//! preset's run served is not built again, `host_twin`). Also runs aws-sdk-sts's own unit tests
//! on the rewritten crate.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use smithy_tls_codegen::model::{CompiledPolicy, LegacyRustls, Provider, Roots, Stack};
use smithy_tls_codegen::{compile, explain, policy, presets, targets};
use smithy_tls_e2e::support::{copy_tree, ConnectProxy, ProxyMode};
use smithy_tls_e2e::{
    host_triple, prepare_sdk_tree, run, scratch_cargo, scratch_root, scratch_target, smithy_tls_binary, tail,
    MockMetadata, MockRun, MOCK_ECS_ACCESS_KEY_ID, MOCK_ECS_PATH, MOCK_INSTANCE_ID, MOCK_WEB_IDENTITY_ACCESS_KEY_ID,
    PUBLISHED,
};

/// Targets whose dependency graph is checked for every preset (linux gnu x86_64/aarch64, musl,
/// macOS both, Windows msvc and gnu, Android, iOS, 32-bit ARM, RISC-V, wasm32 unknown and wasip2).
const GRAPH_TARGETS: &[&str] = targets::NOTABLE_TARGETS;

/// Presets whose consumer is built and run here: every preset, or those named (comma-separated)
/// in `SMITHY_TLS_E2E_PRESETS`, for a run about one preset; the others are then recorded as
/// skipped (`skip::record`).
fn presets_to_run() -> Vec<&'static str> {
    let Some(only) = std::env::var("SMITHY_TLS_E2E_PRESETS").ok().filter(|v| !v.trim().is_empty()) else {
        return presets::names().collect();
    };
    let wanted: Vec<&str> = only.split(',').map(str::trim).collect();
    for name in &wanted {
        assert!(presets::names().any(|p| p == *name), "SMITHY_TLS_E2E_PRESETS names no preset `{name}`");
    }
    let (run, skipped): (Vec<&'static str>, Vec<&'static str>) = presets::names().partition(|p| wanted.contains(p));
    if !skipped.is_empty() {
        smithy_tls_e2e::support::skip::record(
            &format!("published_sdk: presets {}", skipped.join(", ")),
            &format!("SMITHY_TLS_E2E_PRESETS={only}"),
        );
    }
    run
}

fn compiled(preset: &str) -> CompiledPolicy {
    let parsed = policy::parse_policy(presets::preset(preset).expect("preset")).expect("valid preset");
    compile::compile(&parsed).expect("compiles")
}

/// The stack a target gets (`None`: the target cannot host an SDK).
fn stack_for(compiled: &CompiledPolicy, triple: &str) -> Option<Stack> {
    explain::explain(compiled, triple).expect("known target").stack()
}

/// The provider a target gets (`None`: the policy gives it no default client, or it cannot host
/// an SDK).
fn provider_for(compiled: &CompiledPolicy, triple: &str) -> Option<Provider> {
    stack_for(compiled, triple).and_then(|stack| stack.provider())
}

fn cargo(tree: &Path) -> Command {
    scratch_cargo(tree)
}

fn check_graph(tree: &Path, compiled: &CompiledPolicy, target: &str) {
    let out = run(cargo(tree).args([
        "tree",
        "-p",
        "e2e-consumer",
        "--target",
        target,
        "-e",
        "normal,features",
        "--prefix",
        "none",
    ]));
    let text = String::from_utf8_lossy(&out.stdout);
    let has = |needle: &str| text.lines().any(|l| l.starts_with(needle));
    let provider = provider_for(compiled, target);
    let what = format!("{} on {target}", compiled.policy.name);
    for other in Provider::ALL {
        let line = format!("smithy-default-tls feature \"{}\"", other.name());
        assert_eq!(
            has(&line),
            Some(other) == provider,
            "{what}: `{line}` present={} but provider is {provider:?}",
            has(&line)
        );
    }
    if provider.is_none() {
        // The consumer itself depends on the runtime crate (to print what served it), without
        // features: no SDK crate may turn on a provider or roots there.
        for roots in [Roots::Native, Roots::Webpki, Roots::PlatformVerifier] {
            let line = format!("smithy-default-tls feature \"{}\"", roots.name());
            assert!(!has(&line), "{what}: no default client, but `{line}` is on");
        }
    }
    // The roots the preset gives this target are what is compiled in.
    if let Some(roots) = stack_for(compiled, target).and_then(|stack| stack.roots()) {
        let feature = format!("smithy-default-tls feature \"{}\"", roots.name());
        assert!(has(&feature), "{what}: `{feature}` expected");
        let library = match roots {
            Roots::Native if provider == Some(Provider::S2nTls) => None,
            Roots::Native => Some("rustls-native-certs "),
            Roots::Webpki => Some("webpki-roots "),
            Roots::PlatformVerifier => Some("rustls-platform-verifier "),
        };
        if let Some(library) = library {
            assert!(has(library), "{what}: `{library}` expected for roots {roots}");
        }
    }
    // What the preset says about the crates' legacy `rustls` feature (on by default in published
    // crates, and mapped upstream to the hyper 0.14 stack with rustls 0.21 on ring): aliased to
    // the policy's client, no upstream stack is compiled; kept, the legacy stack stays exactly as
    // upstream has it, ring included.
    let legacy_kept = compiled.policy.legacy_rustls == LegacyRustls::Keep;
    // rustls's `fips` builds aws-lc-rs with both its sys crates (rustls enables `aws_lc_rs` with
    // it): aws-lc-sys comes along, and only the FIPS provider brings aws-lc-fips-sys.
    let needs_aws_lc = matches!(
        provider,
        Some(Provider::RustlsAwsLc | Provider::S2nTls | Provider::RustlsAwsLcFips | Provider::S2nTlsFips)
    );
    assert_eq!(has("aws-lc-sys "), needs_aws_lc, "{what}: aws-lc-sys present={}", has("aws-lc-sys "));
    let fips = matches!(provider, Some(Provider::RustlsAwsLcFips | Provider::S2nTlsFips));
    assert_eq!(has("aws-lc-fips-sys "), fips, "{what}: aws-lc-fips-sys present={}", has("aws-lc-fips-sys "));
    assert_eq!(
        has("s2n-tls-sys "),
        matches!(provider, Some(Provider::S2nTls | Provider::S2nTlsFips)),
        "{what}: s2n-tls-sys"
    );
    // The system's OpenSSL is linked (openssl-sys) by the openssl provider alone.
    assert_eq!(has("openssl-sys "), provider == Some(Provider::OpenSsl), "{what}: openssl-sys");
    let needs_ring = provider == Some(Provider::RustlsRing) || legacy_kept;
    assert_eq!(has("ring "), needs_ring, "{what}: ring present={} (legacy stack kept: {legacy_kept})", has("ring "));
    assert_eq!(
        has("hyper v0.14"),
        legacy_kept,
        "{what}: hyper 0.14 present={} with legacy-rustls kept={legacy_kept}",
        has("hyper v0.14")
    );
    if !legacy_kept {
        assert!(!has("aws-smithy-http-client "), "{what}: the upstream HTTP stack must not be compiled in");
    }
    // The host's HTTP where a `wasi-http` rule serves, and nowhere else.
    let wasi_http = stack_for(compiled, target) == Some(Stack::WasiHttp);
    assert_eq!(has("smithy-wasi-http "), wasi_http, "{what}: smithy-wasi-http present={}", has("smithy-wasi-http "));
}

/// Runs the consumer against the mock: STS, then (`with_s3`) the S3 round trip, then STS again
/// through a client without the interceptor, all on one pooled connection.
fn run_consumer(tree: &Path, binary: &Path, compiled: &CompiledPolicy, host: &str, with_s3: bool) {
    let scratch = tree.join("run");
    let served = MockRun::start("e2e CA", scratch.join("ca.pem"));
    let mock = &served.mock;
    let started = Instant::now();
    let out = smithy_tls_e2e::consumer_command(binary, mock, &scratch, &served.bundle).output().expect("run consumer");
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "consumer failed ({}):\n{stdout}\n{}", out.status, tail(&stderr, 40));
    let name = &compiled.policy.name;
    assert!(
        stdout.contains("SDKCONFIG http_client=set"),
        "{name}: aws-config must default to the policy's client:\n{stdout}"
    );
    assert!(stdout.contains("STS account=123456789012"), "{name}:\n{stdout}");
    if with_s3 {
        assert!(stdout.contains(&format!("S3 roundtrip bytes={} ok", 64 << 20)), "{name}:\n{stdout}");
    } else {
        assert!(stdout.contains("S3 skipped"), "{name}:\n{stdout}");
    }
    assert!(stdout.contains("DONE"), "{name}:\n{stdout}");
    let expected = provider_for(compiled, host).expect("every preset gives the host a TLS provider");
    let conns: Vec<&str> = stdout.lines().filter(|l| l.starts_with("CONN ")).collect();
    let expected_conns = if with_s3 { 3 } else { 1 };
    assert!(conns.len() >= expected_conns, "{name}: one CONN line per response expected:\n{stdout}");
    for line in &conns {
        assert!(
            line.contains(&format!("provider={}", expected.name())),
            "{name}: expected {expected} for {host}: {line}"
        );
        assert!(line.contains(&format!(" fips={} ", expected.is_fips())), "{name}: FIPS mode: {line}");
    }
    let ids: std::collections::BTreeSet<&str> =
        conns.iter().filter_map(|l| l.split_whitespace().find(|w| w.starts_with("id="))).collect();
    let connections = mock.server.stats.accepted();
    assert_eq!(ids.len(), 1, "{name}: the SDK clients (STS, S3) must share one pool and connection: {conns:?}");
    assert_eq!(connections, 1, "{name}: the mock saw {connections} connections; one shared pool means one");
    println!(
        "E2E preset={name} provider={expected} run_secs={:.2} connections={connections} {}",
        elapsed.as_secs_f64(),
        conns[0]
    );
}

/// rustfmt's default style (an empty configuration, not this repository's) over a crate, from
/// its `src/lib.rs` through every module file.
fn rustfmt_crate(dir: &Path) {
    let config = scratch_root().join("rustfmt-defaults.toml");
    std::fs::write(&config, "").expect("write an empty rustfmt.toml");
    run(Command::new("rustfmt").args(["--edition", "2021", "--config-path"]).arg(&config).arg(dir.join("src/lib.rs")));
}

/// The consumer (behavior version latest) with `HTTPS_PROXY` set: the rewritten SDK's default
/// client goes through the proxy, as upstream's does from behavior version 2025-08-07 on, with
/// TLS end to end to the mock.
fn run_consumer_through_proxy(tree: &Path, binary: &Path, preset: &str) {
    let scratch = tree.join("run");
    let served = MockRun::start("e2e proxy CA", scratch.join("ca-proxy.pem"));
    let proxy = served.runtime.block_on(ConnectProxy::start(ProxyMode::Open));
    let mock = &served.mock;
    let out = smithy_tls_e2e::consumer_command(binary, mock, &scratch, &served.bundle)
        .env("E2E_OBJECT_BYTES", (1 << 20).to_string())
        .env("HTTPS_PROXY", proxy.url())
        .output()
        .expect("run consumer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{preset}: consumer through the proxy failed:\n{stdout}\n{}",
        tail(&String::from_utf8_lossy(&out.stderr), 40)
    );
    assert!(stdout.contains("DONE"), "{preset}:\n{stdout}");
    let seen = proxy.seen();
    assert!(!seen.is_empty(), "{preset}: the proxy saw nothing");
    for request in &seen {
        assert_eq!(request.method, "CONNECT", "{preset}: {seen:?}");
        assert_eq!(request.target, format!("localhost:{}", mock.addr().port()), "{preset}: {seen:?}");
        assert_eq!(request.first_tunnel_byte, Some(0x16), "{preset}: TLS end to end");
    }
    println!("E2E preset={preset} through HTTPS_PROXY: {} tunnel(s), TLS end to end", seen.len());
}

/// aws-config's IMDS client and container credentials provider, built with no HTTP client
/// anywhere, against local mocks: the rewritten aws-config serves them with the policy's
/// default client (upstream's default is not compiled in).
fn run_components(tree: &Path, binary: &Path, preset: &str) {
    let runtime = tokio::runtime::Runtime::new().expect("tokio");
    let mock = runtime.block_on(MockMetadata::start());
    let base = format!("http://{}", mock.addr);
    let scratch = tree.join("run");
    std::fs::create_dir_all(&scratch).expect("mkdir run");
    let token = scratch.join("web-identity-token");
    std::fs::write(&token, "e2e-web-identity-token").expect("write the web identity token");
    let out = Command::new(binary)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &scratch)
        .env("E2E_IMDS_ENDPOINT", &base)
        .env("AWS_CONTAINER_CREDENTIALS_FULL_URI", format!("{base}{MOCK_ECS_PATH}"))
        .env("AWS_WEB_IDENTITY_TOKEN_FILE", &token)
        .env("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/e2e")
        .env("AWS_ROLE_SESSION_NAME", "e2e")
        .env("AWS_ENDPOINT_URL_STS", &base)
        .env("AWS_CONFIG_FILE", scratch.join("no-config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", scratch.join("no-credentials"))
        .output()
        .expect("run components");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{preset}: components failed ({}):\n{stdout}\n{}", out.status, tail(&stderr, 40));
    assert!(stdout.contains(&format!("IMDS instance-id={MOCK_INSTANCE_ID}")), "{preset}:\n{stdout}");
    assert!(stdout.contains(&format!("ECS access-key-id={MOCK_ECS_ACCESS_KEY_ID}")), "{preset}:\n{stdout}");
    assert_eq!(mock.served("/latest/api/token"), 1, "{preset}: one IMDS token");
    assert_eq!(mock.served("/latest/meta-data/instance-id"), 1, "{preset}");
    assert_eq!(mock.served(MOCK_ECS_PATH), 1, "{preset}");
    assert!(
        stdout.contains(&format!("WEB-IDENTITY access-key-id={MOCK_WEB_IDENTITY_ACCESS_KEY_ID}")),
        "{preset}: the web-identity provider's STS client (ProviderConfig::client_config):\n{stdout}"
    );
    assert_eq!(mock.served("/"), 1, "{preset}: one AssumeRoleWithWebIdentity");
    println!("E2E preset={preset} aws-config components without a client: IMDS, ECS and web identity (STS) ok");
}

#[test]
fn published_sdk_rewritten_built_and_run_per_preset() {
    let tree_root = scratch_root().join("sdk");
    let smithy_tls = smithy_tls_binary();
    let host = host_triple();
    // Resolved and fetched once; each preset then runs on a fresh copy of it.
    let pristine = prepare_sdk_tree(&scratch_root().join("sdk-pristine"), PUBLISHED, &["aws-sdk-sts"], true);
    for required in ["aws-config", "aws-sdk-sts", "aws-sdk-s3", "aws-smithy-runtime", "aws-smithy-runtime-api"] {
        assert!(
            pristine.crates.contains_key(required),
            "{required} missing from the fetched tree: {:?}",
            pristine.crates
        );
    }
    let presets = presets_to_run();
    for (index, &preset) in presets.iter().enumerate() {
        let first = index == 0;
        // Each preset on a fresh tree (the same path, files with their published times, so the
        // build cache is reused): what is asserted holds for the preset alone.
        let _ = std::fs::remove_dir_all(&tree_root);
        copy_tree(&pristine.root, &tree_root, &[]).expect("copy the pristine tree");
        let compiled = compiled(preset);
        let out =
            run(Command::new(&smithy_tls).args(["apply", "--preset", preset, "--format", "json"]).arg(&tree_root));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("apply --format json");
        let wired: Vec<&str> = report["trees"][0]["crates"]
            .as_array()
            .expect("crates")
            .iter()
            .map(|c| c["name"].as_str().expect("name"))
            .collect();
        for client in ["aws-config", "aws-sdk-sts", "aws-sdk-s3", "aws-sdk-sso", "aws-sdk-ssooidc"] {
            assert!(wired.contains(&client), "{preset}: {client} not wired: {wired:?}");
        }
        let unsupported: Vec<&serde_json::Value> = report["trees"][0]["skipped"]
            .as_array()
            .expect("skipped")
            .iter()
            .filter(|s| s["unsupported"].as_bool() == Some(true))
            .collect();
        assert!(unsupported.is_empty(), "{preset}: unsupported crates: {unsupported:?}");
        smithy_tls_e2e::pin_lock(
            &tree_root,
            &smithy_tls_e2e::lock_for(smithy_tls_e2e::PUBLISHED_REWRITTEN_LOCK, preset),
        );
        let check =
            Command::new(&smithy_tls).args(["check", "--preset", preset]).arg(&tree_root).output().expect("check");
        assert!(
            check.status.success(),
            "{preset}: check after apply must pass:\n{}",
            String::from_utf8_lossy(&check.stdout)
        );

        // A pipeline formats what it generated: rustfmt (default style, edition 2021) over every
        // wired crate, then the gate must still be green (the module is a rustfmt fixed point;
        // the patched files are compared by their hooks, not their bytes). The build below then
        // builds the formatted tree.
        let started = Instant::now();
        for client in &wired {
            rustfmt_crate(&tree_root.join(client));
        }
        let check =
            Command::new(&smithy_tls).args(["check", "--preset", preset]).arg(&tree_root).output().expect("check");
        assert!(
            check.status.success(),
            "{preset}: check after rustfmt over the applied tree must pass:\n{}",
            String::from_utf8_lossy(&check.stdout)
        );
        println!(
            "E2E preset={preset} rustfmt+check of {} crates: {:.1}s",
            wired.len(),
            started.elapsed().as_secs_f64()
        );

        for target in GRAPH_TARGETS {
            check_graph(&tree_root, &compiled, target);
        }

        // The rewritten aws-sdk-s3 is compiled and run with the first preset only (it is the
        // slowest crate to build: about a minute on two cores, for each preset). apply wires it
        // in every preset (asserted above, and `check` passes); what differs between presets
        // is its default_http_client module, which is byte for byte STS's (asserted here), and
        // STS is compiled and run with every host stack below.
        // A preset whose host rule gives the stack an earlier preset's built and ran is not built
        // again (README: "runs as <that preset>"); its tree's graphs and gates are checked above.
        if let Some(twin) = smithy_tls_e2e::host_twin(&presets, preset, &host) {
            println!("E2E preset={preset}: {host} runs as {twin} (the same stack), not built again");
            continue;
        }
        let with_s3 = first;
        let module = |krate: &str| {
            std::fs::read(tree_root.join(krate).join("src/default_http_client.rs")).expect("the generated module")
        };
        assert!(module("aws-sdk-s3") == module("aws-sdk-sts"), "{preset}: S3's module differs from STS's");
        let started = Instant::now();
        // The fips preset too builds here, not in target/fips: its FIPS module (aws-lc-fips-sys)
        // is a build of its own wherever it goes (this tree's build graph gives bindgen's syn
        // other features than warnings.rs's and `cargo test-fips`'s), and here it reuses the
        // earlier presets' other dependencies (2026-12-04: 92 s here, 144 s in an empty dir).
        let mut build = cargo(&tree_root);
        build.args(["build", "-q", "-p", "e2e-consumer"]);
        if !with_s3 {
            build.args(["--no-default-features", "--features", "report-connections"]);
        }
        run(&mut build);
        let build_secs = started.elapsed().as_secs_f64();
        let binary = scratch_target().join("debug/e2e-consumer");
        let size = std::fs::metadata(&binary).expect("consumer binary").len();
        println!("E2E preset={preset} with_s3={with_s3} build_secs={build_secs:.1} binary_bytes={size}");
        run_consumer(&tree_root, &binary, &compiled, &host, with_s3);
        run_components(&tree_root, &scratch_target().join("debug/components"), preset);
        run_consumer_through_proxy(&tree_root, &binary, preset);

        if first {
            let started = Instant::now();
            let out = run(cargo(&tree_root).args(["test", "-q", "-p", "aws-sdk-sts", "--lib"]));
            let summary = String::from_utf8_lossy(&out.stdout);
            assert!(summary.contains("test result: ok"), "aws-sdk-sts unit tests:\n{summary}");
            println!(
                "E2E aws-sdk-sts unit tests after rewrite ({preset}): ok in {:.1}s",
                started.elapsed().as_secs_f64()
            );
        }
    }
}

/// `legacy-rustls = "keep"`, which no preset uses any more: with the test policy that keeps the
/// feature, every notable target's graph keeps upstream's legacy stack (hyper 0.14, rustls 0.21
/// on ring) beside the policy's client, as `check_graph` expects of a kept feature. Graphs
/// only (`cargo tree`); nothing is built.
#[test]
fn the_kept_legacy_rustls_feature_keeps_the_legacy_stack_on_every_target() {
    let path = smithy_tls_e2e::repo_root().join("codegen/tests/fixtures/policies/keep-legacy-rustls.toml");
    let text = std::fs::read_to_string(&path).expect("the test policy");
    let parsed =
        policy::parse_policy(policy::PolicySource { path: path.clone(), text: text.clone() }).expect("a valid policy");
    let compiled = compile::compile(&parsed).expect("compiles");
    assert_eq!(compiled.policy.legacy_rustls, LegacyRustls::Keep);
    let tree = prepare_sdk_tree(&scratch_root().join("sdk-keep-legacy"), PUBLISHED, &["aws-sdk-sts"], true).root;
    run(Command::new(smithy_tls_binary()).arg("apply").arg("--policy").arg(&path).arg(&tree));
    let lock = smithy_tls_e2e::lock_for_policy(
        smithy_tls_e2e::PUBLISHED_REWRITTEN_LOCK,
        policy::PolicySource { path: path.clone(), text },
    );
    smithy_tls_e2e::pin_lock(&tree, &lock);
    for target in GRAPH_TARGETS {
        check_graph(&tree, &compiled, target);
    }
    let _ = std::fs::remove_dir_all(&tree);
}
