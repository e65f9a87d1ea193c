//! The `proxy` section: what going through an HTTP CONNECT proxy costs a download.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use aws_smithy_runtime_api::client::http::SharedHttpClient;
use smithy_default_tls::{ProxyConfig, SmithyTlsClient, TlsProvider};

use super::contenders::PROVIDERS;
use super::report::Report;
use super::servers::ServerProcess;
use super::throughput::gbps;
use crate::support::{ConnectProxy, ProxyMode};
use crate::{download, env_number, median, median_range, Shape};

/// What going through an HTTP CONNECT proxy (the test-support proxy, in this process) costs a
/// download: ours direct vs ours through the proxy, h1 single stream, per provider, interleaved.
pub(crate) async fn proxied(server: &ServerProcess, report: &mut Report) {
    let runs = env_number("BENCH_PROXY_RUNS", 5);
    let total = env_number("BENCH_PROXY_MIB", 256) << 20;
    let proxy = ConnectProxy::start(ProxyMode::Open).await;
    let base = format!("https://localhost:{}", server.h1.port());
    let client = |provider: &str, through: bool| {
        let provider = TlsProvider::ALL.iter().copied().find(|t| t.name() == provider).expect("provider compiled in");
        let builder = SmithyTlsClient::builder().provider(provider).extra_root_pem(&server.ca_pem).expect("CA");
        let builder = if through {
            builder.proxy(ProxyConfig::builder().all(proxy.url()).build().expect("proxy URL"))
        } else {
            builder
        };
        builder.build().expect("client").into_shared()
    };
    let clients: Vec<(String, bool, SharedHttpClient)> = PROVIDERS
        .iter()
        .flat_map(|p| [(p.to_string(), false, client(p, false)), (p.to_string(), true, client(p, true))])
        .collect();
    let mut rates: BTreeMap<(String, bool), Vec<f64>> = BTreeMap::new();
    for run in 0..=runs {
        for (provider, through, client) in &clients {
            let rate = gbps(total, download(client, &base, total, Shape::Whole).await);
            if run > 0 {
                rates.entry((provider.clone(), *through)).or_default().push(rate);
            }
        }
    }
    let mut md = format!(
        "\n## Through an HTTP CONNECT proxy (test proxy in this process; h1, one stream, {} MiB, {runs} runs; Gb/s median (min–max))\n\n| provider | direct | through the proxy | proxied / direct |\n|---|---|---|---|\n",
        total >> 20
    );
    for p in PROVIDERS {
        let stat = |through: bool| {
            let v = &rates[&(p.to_string(), through)];
            (median(v), median_range(v))
        };
        let ((direct, direct_text), (proxied, proxied_text)) = (stat(false), stat(true));
        let _ = writeln!(md, "| {p} | {direct_text} | {proxied_text} | {:.2} |", proxied / direct);
    }
    report.publish(&md);
}
