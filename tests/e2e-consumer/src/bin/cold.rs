//! Cold start in an SDK-shaped flow: load config from the environment, build an STS client from
//! it, make one call. Prints the time to each step from the start of `main`.

use std::time::Instant;

use aws_config::BehaviorVersion;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let shared = aws_config::defaults(BehaviorVersion::latest()).load().await;
    let loaded = started.elapsed();
    let sts = aws_sdk_sts::Client::new(&shared);
    sts.get_caller_identity().send().await?;
    let total = started.elapsed();
    println!(
        "COLDSDK load_us={} first_call_us={} total_us={}",
        loaded.as_micros(),
        (total - loaded).as_micros(),
        total.as_micros()
    );
    Ok(())
}
