//! Loads config from the environment, calls STS GetCallerIdentity, and round-trips an object
//! through S3 (with the `s3` feature), printing one `CONN` line per HTTP response with the
//! connection that carried it.

use aws_config::BehaviorVersion;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::BeforeDeserializationInterceptorContextRef;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;

#[derive(Debug)]
struct ReportConnection(&'static str);

impl Intercept for ReportConnection {
    fn name(&self) -> &'static str {
        "ReportConnection"
    }

    fn read_after_transmit(
        &self,
        context: &BeforeDeserializationInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        #[cfg(not(feature = "report-connections"))]
        let _ = context;
        #[cfg(feature = "report-connections")]
        match context.response().extension::<smithy_default_tls::ConnectionInfo>() {
            Some(info) => {
                let tls = info.tls.as_ref();
                println!(
                    "CONN service={} id={} provider={} roots={} chosen_by={} version={} group={} alpn={} fips={} library={}",
                    self.0,
                    info.id,
                    tls.map_or("none", |t| t.provider.name()),
                    tls.and_then(|t| t.roots).map_or("-", |r| r.name()),
                    match tls.map(|t| t.chosen_by) {
                        Some(smithy_default_tls::ChosenBy::ApplicationCfg) => "application",
                        Some(_) => "builder",
                        None => "-",
                    },
                    tls.map_or("-", |t| t.protocol_version),
                    tls.and_then(|t| t.key_exchange_group).unwrap_or("-"),
                    tls.and_then(|t| t.alpn).unwrap_or("-"),
                    tls.is_some_and(|t| t.fips),
                    tls.map_or("-", |t| t.library),
                );
            }
            None => println!("CONN service={} id=? provider=unknown", self.0),
        }
        Ok(())
    }
}

#[cfg(feature = "s3")]
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[tokio::main]
async fn main() {
    #[cfg(feature = "log-events")]
    tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    #[cfg(feature = "custom-crypto")]
    if std::env::var_os("E2E_INSTALL_CRYPTO").is_some() {
        // ring's provider, deprecated from rustls 0.23.48 on for its lack of post-quantum groups.
        #[allow(deprecated)]
        let installed = rustls::crypto::ring::default_provider().install_default().is_ok();
        println!("CRYPTO installed={installed}");
    }
    if let Err(e) = run().await {
        // The whole chain: the SDK's error, the connector's, the client's.
        let mut chain = e.to_string();
        let mut source = e.source();
        while let Some(cause) = source {
            chain.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        eprintln!("ERROR {chain}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let shared = aws_config::defaults(BehaviorVersion::latest()).load().await;
    println!("SDKCONFIG http_client={}", if shared.http_client().is_some() { "set" } else { "unset" });

    let sts_config = aws_sdk_sts::config::Builder::from(&shared).interceptor(ReportConnection("sts")).build();
    let sts = aws_sdk_sts::Client::from_conf(sts_config);
    let me = sts.get_caller_identity().send().await?;
    println!("STS account={} arn={}", me.account().unwrap_or("?"), me.arn().unwrap_or("?"));

    #[cfg(feature = "s3")]
    s3_round_trip(&shared).await?;
    #[cfg(not(feature = "s3"))]
    println!("S3 skipped: built without the s3 feature");

    // Without an interceptor: the client built straight from SdkConfig shares the same pool.
    let plain = aws_sdk_sts::Client::new(&shared);
    plain.get_caller_identity().send().await?;
    println!("DONE");
    Ok(())
}

/// Puts an object of `E2E_OBJECT_BYTES` bytes (64 MiB unless set) through S3 and reads it back,
/// checking every byte.
#[cfg(feature = "s3")]
async fn s3_round_trip(shared: &aws_config::SdkConfig) -> Result<(), Box<dyn std::error::Error>> {
    let size: usize = std::env::var("E2E_OBJECT_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(64 << 20);
    let s3_config = aws_sdk_s3::config::Builder::from(shared)
        .force_path_style(true)
        .request_checksum_calculation(aws_sdk_s3::config::RequestChecksumCalculation::WhenRequired)
        .interceptor(ReportConnection("s3"))
        .build();
    let s3 = aws_sdk_s3::Client::from_conf(s3_config);
    let body = pattern(size);
    s3.put_object()
        .bucket("e2e-bucket")
        .key("object")
        .body(aws_sdk_s3::primitives::ByteStream::from(body.clone()))
        .send()
        .await?;
    let got = s3.get_object().bucket("e2e-bucket").key("object").send().await?;
    let bytes = got.body.collect().await?.into_bytes();
    if bytes.as_ref() != body.as_slice() {
        return Err(format!("S3 round trip corrupted: sent {} bytes, got {}", body.len(), bytes.len()).into());
    }
    println!("S3 roundtrip bytes={} ok", bytes.len());
    Ok(())
}
