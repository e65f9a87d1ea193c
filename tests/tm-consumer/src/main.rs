//! The S3 transfer manager with its defaults (the managed runtime and, where the policy gives it a
//! provider, its own transport), or with its transport off (`TM_TRANSPORT=sdk-client`: the S3
//! client's HTTP client serves). Credentials, region and endpoint come from the environment.
//!
//! - Round trip (no `TM_BENCH_RUNS`): uploads `TM_OBJECT_BYTES` bytes, downloads them back, and
//!   exits 0 when both directions carried the same bytes; otherwise prints the error, exits 1.
//! - Benchmark (`TM_BENCH_RUNS=n`): downloads the `TM_OBJECTS` objects `bench/<bytes>/<i>` the
//!   server already holds, 64 at a time, once to warm up and then `n` times, printing each timed
//!   run's seconds, bytes and the process's CPU seconds, user and system
//!   (`run <seconds> <bytes> <cpu seconds>`).

use std::time::Instant;

use aws_sdk_s3_transfer_manager::io::InputStream;
use futures_util::StreamExt as _;

const BUCKET: &str = "e2e-bucket";
const KEY: &str = "tm/object";

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() {
    let outcome = match std::env::var("TM_BENCH_RUNS") {
        Ok(runs) => bench(&runs).await,
        Err(_) => round_trip().await,
    };
    if let Err(e) = outcome {
        let mut message = format!("transfer manager failed: {e}");
        let mut source = e.source();
        while let Some(cause) = source {
            message.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        eprintln!("{message}");
        std::process::exit(1);
    }
}

fn number(name: &str) -> Result<usize, Error> {
    Ok(std::env::var(name).map_err(|e| format!("{name}: {e}"))?.parse()?)
}

async fn client() -> aws_sdk_s3_transfer_manager::Client {
    let sdk = aws_config::load_from_env().await;
    // The test's servers answer at one host name: path-style addressing.
    let s3 = aws_sdk_s3::config::Builder::from(&sdk)
        .force_path_style(true)
        .request_checksum_calculation(aws_sdk_s3::config::RequestChecksumCalculation::WhenRequired);
    let own_transport = std::env::var("TM_TRANSPORT").as_deref() != Ok("sdk-client");
    let s3 = aws_sdk_s3_transfer_manager::S3ClientConfig::new(s3).enable_runtime_http(own_transport);
    aws_sdk_s3_transfer_manager::Client::new(aws_sdk_s3_transfer_manager::Config::builder().s3_config(s3).build())
}

/// Downloads `key`, returning its bytes (kept when `keep`, else only counted).
async fn download(tm: &aws_sdk_s3_transfer_manager::Client, key: &str, keep: bool) -> Result<(Vec<u8>, usize), Error> {
    let mut handle = tm.download().bucket(BUCKET).key(key).initiate()?;
    let (mut kept, mut count) = (Vec::new(), 0);
    while let Some(chunk) = handle.body_mut().next().await {
        let data = chunk?.data;
        count += data.len();
        if keep {
            kept.extend_from_slice(&data.into_contiguous());
        }
    }
    handle.join().await?;
    Ok((kept, count))
}

async fn round_trip() -> Result<(), Error> {
    let size = number("TM_OBJECT_BYTES")?;
    let tm = client().await;
    let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    let body = InputStream::from(bytes::Bytes::from(data.clone()));
    tm.upload().bucket(BUCKET).key(KEY).body(body).initiate()?.join().await?;
    let (got, _) = download(&tm, KEY, true).await?;
    if got != data {
        return Err(format!("downloaded {} bytes that differ from the {size} uploaded", got.len()).into());
    }
    println!("round trip: {size} bytes up and down");
    Ok(())
}

async fn bench(runs: &str) -> Result<(), Error> {
    let (runs, size, objects): (usize, usize, usize) =
        (runs.parse()?, number("TM_OBJECT_BYTES")?, number("TM_OBJECTS")?);
    let tm = client().await;
    let keys: Vec<String> = (0..objects).map(|i| format!("bench/{size}/{i}")).collect();
    for run in 0..=runs {
        let (started, cpu) = (Instant::now(), cpu_seconds()?);
        let mut total = 0;
        let mut downloads = futures_util::stream::iter(&keys).map(|key| download(&tm, key, false)).buffer_unordered(64);
        while let Some(done) = downloads.next().await {
            total += done?.1;
        }
        if total != size * objects {
            return Err(format!("downloaded {total} bytes, expected {}", size * objects).into());
        }
        if run > 0 {
            let seconds = started.elapsed().as_secs_f64();
            println!("run {seconds:.6} {total} {:.2}", cpu_seconds()? - cpu);
        }
    }
    Ok(())
}

/// The CPU time this process has used, all threads, user and system: /proc/self/stat's `utime`
/// and `stime` (fields 14 and 15), which Linux counts in USER_HZ, 100 per second.
fn cpu_seconds() -> Result<f64, Error> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after_name = stat.rsplit_once(')').ok_or("/proc/self/stat: no command name")?.1;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |field: usize| -> Result<f64, Error> {
        let value = fields.get(field - 3).ok_or(format!("/proc/self/stat: no field {field}"))?;
        Ok(value.parse::<u64>()? as f64)
    };
    Ok((ticks(14)? + ticks(15)?) / 100.0)
}
