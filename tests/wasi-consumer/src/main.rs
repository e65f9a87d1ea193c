//! The S3 workflow through the host's wasi:http: create a bucket, put an object (streamed in
//! chunks), get it back and compare it byte for byte, list the bucket. Configuration from the
//! environment: `S3_ENDPOINT` (required), `S3_BUCKET`, `OBJECT_BYTES`, `ATTEMPTS`, `WIRING`. Prints one
//! `WASI ...` line per step, or `WASI ERROR kind=<kind> ...` and exits with 1.

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::error::DisplayErrorContext;
use aws_sdk_s3::primitives::ByteStream;
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponentsBuilder;
use aws_smithy_runtime_api::client::runtime_plugin::RuntimePlugin;

fn env(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

/// A deterministic body of `len` bytes that no two offsets repeat within 251.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let endpoint = std::env::var("S3_ENDPOINT").expect("S3_ENDPOINT");
    let bucket = env("S3_BUCKET", "wasi-bucket");
    let len: usize = env("OBJECT_BYTES", "300000").parse().expect("OBJECT_BYTES is a number");
    let attempts: u32 = env("ATTEMPTS", "3").parse().expect("ATTEMPTS is a number");
    // What the rewritten aws-config's loader gives every client: here, wasi:http's client.
    let shared = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "wasi-consumer"))
        .endpoint_url(&endpoint)
        .load()
        .await;
    let loader_client = if shared.http_client().is_some() { "set" } else { "unset" };
    println!("WASI sdk_config http_client={loader_client}");
    let builder = aws_sdk_s3::config::Builder::from(&shared)
        .force_path_style(true)
        .retry_config(aws_sdk_s3::config::retry::RetryConfig::standard().with_max_attempts(attempts))
        .timeout_config(
            aws_sdk_s3::config::timeout::TimeoutConfig::builder()
                .connect_timeout(std::time::Duration::from_secs(5))
                .read_timeout(std::time::Duration::from_secs(20))
                .build(),
        );
    // `WIRING`: `generated` (the default) sets nothing, so the client and sleep are what the
    // generated crates hand the SDK; `config`, smithy-wasi-http's functions on the config, as an
    // application without a rewritten SDK sets them; `plugin`, those `default_client_plugin`
    // installs, taken out of it.
    let builder = match env("WIRING", "generated").as_str() {
        "generated" => builder,
        "config" => builder.http_client(smithy_wasi_http::http_client()).sleep_impl(smithy_wasi_http::sleep()),
        "plugin" => {
            let plugin = smithy_wasi_http::default_client_plugin();
            let components = plugin.runtime_components(&RuntimeComponentsBuilder::new("wasi-consumer")).into_owned();
            let client: SharedHttpClient = components.http_client().expect("the plugin's client");
            builder.http_client(client).sleep_impl(components.sleep_impl().expect("the plugin's sleep"))
        }
        other => panic!("WIRING={other}: use generated, config or plugin"),
    };
    let client = aws_sdk_s3::Client::from_conf(builder.build());
    if let Err(message) = workflow(&client, &bucket, len).await {
        println!("WASI ERROR {message}");
        std::process::exit(1);
    }
}

/// The kind of an SDK error, for the test to assert on.
fn kind<E: std::error::Error + 'static, R: std::fmt::Debug>(err: &aws_sdk_s3::error::SdkError<E, R>) -> String {
    use aws_sdk_s3::error::SdkError;
    let kind = match err {
        SdkError::DispatchFailure(failure) if failure.is_timeout() => "dispatch-timeout",
        SdkError::DispatchFailure(failure) if failure.is_io() => "dispatch-io",
        SdkError::DispatchFailure(failure) if failure.is_user() => "dispatch-user",
        SdkError::DispatchFailure(_) => "dispatch-other",
        SdkError::TimeoutError(_) => "timeout",
        SdkError::ResponseError(_) => "response",
        SdkError::ServiceError(_) => "service",
        _ => "other",
    };
    format!("kind={kind} {}", DisplayErrorContext(err))
}

async fn workflow(client: &aws_sdk_s3::Client, bucket: &str, len: usize) -> Result<(), String> {
    client.create_bucket().bucket(bucket).send().await.map_err(|e| kind(&e))?;
    println!("WASI created bucket {bucket}");
    let body = pattern(len);
    client
        .put_object()
        .bucket(bucket)
        .key("object")
        .body(ByteStream::from(body.clone()))
        .send()
        .await
        .map_err(|e| kind(&e))?;
    println!("WASI put {len} bytes");
    let got = client.get_object().bucket(bucket).key("object").send().await.map_err(|e| kind(&e))?;
    let got = got.body.collect().await.map_err(|e| format!("kind=body {e}"))?.into_bytes();
    if got.as_ref() != body.as_slice() {
        return Err(format!("kind=mismatch got {} bytes, put {len}", got.len()));
    }
    println!("WASI got {} bytes, equal", got.len());
    let listed = client.list_objects_v2().bucket(bucket).send().await.map_err(|e| kind(&e))?;
    let keys: Vec<&str> = listed.contents().iter().filter_map(|o| o.key()).collect();
    println!("WASI listed {keys:?}");
    Ok(())
}
