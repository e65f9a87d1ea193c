//! The openssl provider under the system's OpenSSL in FIPS mode: `TlsInfo::fips` follows it
//! (false without the FIPS provider, true under a configuration whose default properties fetch
//! from it, `default_properties = fips=yes`, how RHEL and Fedora's FIPS mode configures OpenSSL
//! 3), and a client identity whose key type FIPS does not approve is refused before the
//! handshake, while an approved one is presented.
//!
//! The FIPS cases need OpenSSL's FIPS module: the system's (`fips.so` in `openssl version -m`'s
//! directory) where it has one, else OpenSSL 3.0.8's built from source
//! (`smithy_tls_test_support::openssl_fips_module`; Debian and Ubuntu ship none). The test runs
//! `openssl fipsinstall` for the module's configuration. Each configuration runs in a child
//! process (OpenSSL reads its configuration once).
#![cfg(provider = "openssl")]

use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_default_tls::{ConnectionInfo, SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::*;

const CHILD: &str = "SMITHY_TLS_OPENSSL_FIPS_CHILD";

/// The directory OpenSSL loads provider modules from (`openssl version -m`).
fn modules_dir() -> Option<PathBuf> {
    let output = Command::new("openssl").args(["version", "-m"]).env_remove("OPENSSL_CONF").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let dir = text.split_once("MODULESDIR:")?.1.trim().trim_matches('"').to_owned();
    Some(PathBuf::from(dir))
}

/// Runs the ignored case `case` in a child with `OPENSSL_CONF` = `conf` and `OPENSSL_MODULES`
/// = `modules` (or neither).
fn in_child(case: &str, fips: Option<(&Path, &Path)>) {
    let exe = std::env::current_exe().expect("test binary");
    let mut command = Command::new(exe);
    command.args([case, "--exact", "--ignored", "--nocapture"]).env(CHILD, "1");
    match fips {
        Some((conf, modules)) => command.env("OPENSSL_CONF", conf).env("OPENSSL_MODULES", modules),
        None => command.env_remove("OPENSSL_CONF").env_remove("OPENSSL_MODULES"),
    };
    let output = command.output().expect("run the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "case {case} failed in its child process:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

async fn fips_of_a_connection() -> bool {
    let ca = TestCa::new("fips CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
    let client = SmithyTlsClient::builder()
        .provider(TlsProvider::OpenSsl)
        .extra_root_pem(&ca.pem)
        .expect("CA")
        .build()
        .expect("client");
    let response = call(&client, &settings(None, None), get(&server.url("/bytes/100"))).await.expect("GET");
    let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
    digest_body(response.into_body()).await;
    tls.fips
}

/// The directory of the FIPS module: the system's, or one built from source.
fn fips_modules_dir() -> PathBuf {
    match modules_dir().filter(|dir| dir.join("fips.so").is_file()) {
        Some(system) => system,
        None => smithy_tls_test_support::openssl_fips_module::fips_module_dir(Path::new(env!("CARGO_TARGET_TMPDIR"))),
    }
}

#[test]
fn fips_follows_the_system_openssl() {
    // Without the FIPS provider: not FIPS.
    in_child("case_not_fips", None);

    let modules = fips_modules_dir();
    let dir = std::env::temp_dir().join(format!("smithy-tls-openssl-fips-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let module_conf = dir.join("fipsmodule.cnf");
    let status = Command::new("openssl")
        .env_remove("OPENSSL_CONF")
        .arg("fipsinstall")
        .arg("-module")
        .arg(modules.join("fips.so"))
        .arg("-out")
        .arg(&module_conf)
        .status()
        .expect("openssl fipsinstall");
    assert!(status.success(), "openssl fipsinstall failed for {}", modules.display());
    let conf = dir.join("openssl-fips.cnf");
    std::fs::write(
        &conf,
        format!(
            "config_diagnostics = 1\nopenssl_conf = openssl_init\n\n.include {}\n\n[openssl_init]\n\
             providers = provider_sect\nalg_section = algorithm_sect\n\n[provider_sect]\nfips = fips_sect\n\
             base = base_sect\n\n[base_sect]\nactivate = 1\n\n[algorithm_sect]\ndefault_properties = fips=yes\n",
            module_conf.display()
        ),
    )
    .expect("write the FIPS configuration");
    in_child("case_fips", Some((&conf, &modules)));
    in_child("case_fips_key_types", Some((&conf, &modules)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
#[ignore = "a child case of fips_follows_the_system_openssl"]
async fn case_not_fips() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    assert!(!fips_of_a_connection().await, "no FIPS provider configured: not FIPS");
}

#[tokio::test]
#[ignore = "a child case of fips_follows_the_system_openssl"]
async fn case_fips() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    assert!(fips_of_a_connection().await, "OpenSSL's FIPS provider is the default: TlsInfo::fips");
}

/// Under FIPS mode, Ed25519 and RSA-1024 identities are refused as not FIPS-approved before any
/// handshake, and an ECDSA P-256 one is presented to a server that requires it.
#[tokio::test]
#[ignore = "a child case of fips_follows_the_system_openssl"]
async fn case_fips_key_types() {
    use smithy_default_tls::{ClientIdentity, KeyType, TlsConfigError};
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let (server_ca, client_ca) = (TestCa::new("fips server CA"), TestCa::new("fips client CA"));
    let leaf = server_ca.leaf(&["localhost"]);
    let server =
        TestServer::start_requiring_client_auth(&leaf, Alpn::H2AndHttp1, &client_ca.pem, rustls::DEFAULT_VERSIONS)
            .await;
    let bounded = settings(Some(std::time::Duration::from_secs(30)), Some(std::time::Duration::from_secs(30)));
    let client = |identity: ClientIdentity| {
        let builder = SmithyTlsClient::builder().provider(TlsProvider::OpenSsl).extra_root_pem(&server_ca.pem);
        builder.expect("CA").client_identity(identity).build().expect("client")
    };
    let from_rcgen = |key: &rcgen::KeyPair| {
        let pem = client_ca.client_leaf("client", key);
        ClientIdentity::from_pem(&pem.cert, &pem.key).expect("identity")
    };

    // RSA-1024 from the `openssl` command, which runs without this process's FIPS configuration.
    let rsa_ca = smithy_tls_test_support::openssl::OpensslCa::new();
    let rsa = rsa_ca.client_leaf("rsa1024", smithy_tls_test_support::openssl::KeySpec::Rsa(1024), false);
    let rsa = ClientIdentity::from_pem(rsa.chain_pem(), rsa.key_pem()).expect("an RSA-1024 identity");
    let ed25519 = from_rcgen(&rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).expect("Ed25519"));
    for (identity, key_type) in [(ed25519, KeyType::Ed25519), (rsa, KeyType::Rsa { bits: 1024 })] {
        let err = call(&client(identity), &bounded, get(&server.url("/"))).await.expect_err("refused");
        let reason = match find_in_chain::<smithy_default_tls::Error>(&err) {
            Some(smithy_default_tls::Error::TlsConfig { reason, .. }) => Some(reason),
            _ => None,
        };
        assert!(
            matches!(reason, Some(TlsConfigError::ClientKeyNotFipsApproved(k)) if *k == key_type),
            "{key_type:?}: {}",
            error_chain(&err)
        );
        assert!(!sdk_retries(&err), "a configuration error is not retried");
    }
    assert!(server.stats.handshakes().is_empty(), "refused before any handshake was completed");

    let p256 = from_rcgen(&rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("P-256"));
    let response = call(&client(p256), &bounded, get(&server.url("/"))).await;
    let response = response.unwrap_or_else(|e| panic!("P-256 under FIPS: {}", error_chain(&e)));
    let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
    assert!(tls.fips && tls.client_certificate_sent, "{tls:?}");
}
