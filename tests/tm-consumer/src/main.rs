//! Uploads `TM_OBJECT_BYTES` bytes through the S3 transfer manager (with its defaults: the
//! managed runtime and, where the policy gives it a provider, its own transport), downloads them
//! back, and exits 0 when both directions carried the same bytes; otherwise prints the error
//! and exits 1. Credentials, region and endpoint come from the environment.

use aws_sdk_s3_transfer_manager::io::InputStream;

const BUCKET: &str = "e2e-bucket";
const KEY: &str = "tm/object";

#[tokio::main]
async fn main() {
    if let Err(e) = round_trip().await {
        eprintln!("transfer manager round trip failed: {e}");
        std::process::exit(1);
    }
}

async fn round_trip() -> Result<(), Box<dyn std::error::Error>> {
    let size: usize = std::env::var("TM_OBJECT_BYTES")?.parse()?;
    let sdk = aws_config::load_from_env().await;
    // The test's server answers at one host name: path-style addressing.
    let s3 = aws_sdk_s3::config::Builder::from(&sdk)
        .force_path_style(true)
        .request_checksum_calculation(aws_sdk_s3::config::RequestChecksumCalculation::WhenRequired);
    let config =
        aws_sdk_s3_transfer_manager::Config::builder().s3_config(aws_sdk_s3_transfer_manager::S3ClientConfig::new(s3));
    let tm = aws_sdk_s3_transfer_manager::Client::new(config.build());

    let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    let body = InputStream::from(bytes::Bytes::from(data.clone()));
    tm.upload().bucket(BUCKET).key(KEY).body(body).initiate()?.join().await?;

    let mut handle = tm.download().bucket(BUCKET).key(KEY).initiate()?;
    let mut got = Vec::with_capacity(size);
    while let Some(chunk) = handle.body_mut().next().await {
        got.extend_from_slice(&chunk?.data.into_contiguous());
    }
    handle.join().await?;
    if got != data {
        return Err(format!("downloaded {} bytes that differ from the {size} uploaded", got.len()).into());
    }
    println!("round trip: {size} bytes up and down");
    Ok(())
}
