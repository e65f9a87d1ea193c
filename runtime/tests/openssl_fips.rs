//! `TlsInfo::fips` with the openssl provider follows the system's OpenSSL: false under a
//! configuration without the FIPS provider, true under one whose default properties fetch from
//! it (`default_properties = fips=yes`, how RHEL and Fedora's FIPS mode configures OpenSSL 3).
//!
//! The FIPS case needs OpenSSL's FIPS module (`fips.so` in the modules directory) and runs
//! `openssl fipsinstall` for its configuration. Where the module is missing (Debian and Ubuntu
//! ship none in their packages) the test says so loudly on stderr, with a banner, and checks
//! only the non-FIPS case: it cannot show FIPS mode there, and does not pretend to.
//! Each configuration runs in a child process (OpenSSL reads its configuration once).
#![cfg(feature = "openssl")]

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

/// Runs the ignored case `case` in a child with `OPENSSL_CONF` = `conf` (or unset).
fn in_child(case: &str, conf: Option<&Path>) {
    let exe = std::env::current_exe().expect("test binary");
    let mut command = Command::new(exe);
    command.args([case, "--exact", "--ignored", "--nocapture"]).env(CHILD, "1");
    match conf {
        Some(conf) => command.env("OPENSSL_CONF", conf),
        None => command.env_remove("OPENSSL_CONF"),
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

#[test]
fn fips_follows_the_system_openssl() {
    // Without the FIPS provider: not FIPS.
    in_child("case_not_fips", None);

    let module = modules_dir().map(|dir| dir.join("fips.so"));
    let Some(module) = module.filter(|m| m.is_file()) else {
        let missing = modules_dir().map_or("no MODULESDIR".to_owned(), |d| format!("no fips.so in {}", d.display()));
        // Straight to the process's stderr: the test harness would swallow `eprintln!` output
        // of a passing test, and this must not pass silently.
        let banner = format!(
            "\n================================================================================\n\
             FIPS NOT TESTED: this system's OpenSSL has no FIPS module ({missing}).\n\
             TlsInfo::fips = true under OpenSSL's FIPS provider was NOT shown on this machine;\n\
             only fips = false without it was. Run this test where the FIPS module is installed\n\
             (RHEL/Fedora in FIPS mode, or an OpenSSL 3 built with enable-fips).\n\
             ================================================================================\n"
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr(), banner.as_bytes());
        smithy_tls_test_support::skip::record(
            "openssl_fips: TlsInfo::fips = true under OpenSSL's FIPS provider",
            &format!("this system's OpenSSL has no FIPS module ({missing})"),
        );
        return;
    };
    let dir = std::env::temp_dir().join(format!("smithy-tls-openssl-fips-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let module_conf = dir.join("fipsmodule.cnf");
    let status = Command::new("openssl")
        .env_remove("OPENSSL_CONF")
        .arg("fipsinstall")
        .arg("-module")
        .arg(&module)
        .arg("-out")
        .arg(&module_conf)
        .status()
        .expect("openssl fipsinstall");
    assert!(status.success(), "openssl fipsinstall failed for {}", module.display());
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
    in_child("case_fips", Some(&conf));
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
