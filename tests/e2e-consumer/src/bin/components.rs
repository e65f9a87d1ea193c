//! aws-config's components built on their own, with no HTTP client configured anywhere (no
//! `ConfigLoader`, no `ProviderConfig::with_http_client`): an IMDS client and the container (ECS)
//! credentials provider, each pointed at a local mock. Upstream serves them with
//! aws-smithy-runtime's default client; a rewritten aws-config must serve them with the
//! policy's default client instead of failing with "No HTTP client was available".

use aws_config::ecs::EcsCredentialsProvider;
use aws_credential_types::provider::ProvideCredentials;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let endpoint = std::env::var("E2E_IMDS_ENDPOINT")?;
    let imds = aws_config::imds::Client::builder().endpoint(&endpoint)?.build();
    let id = imds.get("/latest/meta-data/instance-id").await?;
    println!("IMDS instance-id={}", id.as_ref());

    // The provider reads AWS_CONTAINER_CREDENTIALS_FULL_URI from the environment.
    let ecs = EcsCredentialsProvider::builder().build();
    let credentials = ecs.provide_credentials().await?;
    println!("ECS access-key-id={}", credentials.access_key_id());
    println!("DONE");
    Ok(())
}
