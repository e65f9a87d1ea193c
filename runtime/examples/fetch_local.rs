//! Starts an HTTPS server on 127.0.0.1 with a freshly made CA, then fetches a page from it with
//! every TLS provider compiled in, driving the client exactly as an SDK does, and prints what
//! was negotiated.
//!
//! ```text
//! cargo run -p smithy-default-tls --example fetch_local --features rustls-aws-lc,rustls-ring,s2n-tls
//! ```

use std::time::Instant;

use smithy_default_tls::{ConnectionInfo, SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::*;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ca = TestCa::new("smithy-tls example CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
    println!("local HTTPS server on {}", server.addr);
    for &provider in TlsProvider::ALL {
        let built = Instant::now();
        let client = SmithyTlsClient::builder().provider(provider).extra_root_pem(&ca.pem)?.build()?;
        let construction = built.elapsed();
        let started = Instant::now();
        let response = call(&client, &settings(None, None), get(&server.url("/bytes/1048576"))).await?;
        let status = response.status().as_u16();
        let info = response.extension::<ConnectionInfo>().cloned();
        let digest = digest_body(response.into_body()).await;
        let elapsed = started.elapsed();
        let tls = info.and_then(|i| i.tls).ok_or("no TLS info on the response")?;
        if digest != Digest::of_pattern(1 << 20) {
            return Err(format!("{provider}: body corrupted").into());
        }
        println!(
            "{provider:<14} status {status}  {} bytes intact  {} {} {} alpn={}  build {:?}  first request {:?}",
            digest.len,
            tls.protocol_version,
            tls.cipher_suite,
            tls.key_exchange_group.unwrap_or("?"),
            tls.alpn.unwrap_or("-"),
            construction,
            elapsed,
        );
    }
    Ok(())
}
