//! aws-config's components built on their own, with no HTTP client configured anywhere (no
//! `ConfigLoader`, no `ProviderConfig::with_http_client`): an IMDS client and the container (ECS)
//! credentials provider (their client comes from `ProviderConfig::http_client()`), and the
//! web-identity provider (its STS client is made from `ProviderConfig::client_config()`), each
//! pointed at a local mock. Upstream serves them with aws-smithy-runtime's default client; a
//! rewritten aws-config must serve them with the policy's default client instead of failing
//! with "No HTTP client was available".

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

    // Reads AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN, AWS_ROLE_SESSION_NAME, and (through the
    // client config's service config) AWS_ENDPOINT_URL_STS; only the region is given here.
    let conf = aws_config::provider_config::ProviderConfig::default()
        .with_region(Some(aws_config::Region::new("us-east-1")));
    let web_identity =
        aws_config::web_identity_token::WebIdentityTokenCredentialsProvider::builder().configure(&conf).build();
    let credentials = web_identity.provide_credentials().await?;
    println!("WEB-IDENTITY access-key-id={}", credentials.access_key_id());
    println!("DONE");
    Ok(())
}
