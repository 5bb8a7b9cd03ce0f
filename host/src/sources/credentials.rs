//! Registry credentials: `[sources.registries."HOST"]` (read from environment variables it names),
//! else what `docker login` left in Docker's config file or its credential helper, else none.

use anyhow::{Context as _, Result};
use docker_credential::{CredentialRetrievalError, DockerCredential};
use oci_client::secrets::RegistryAuth;

use super::settings::{RegistryLogin, SourcesConfig};

/// How to authenticate to `registry` (`HOST[:PORT]`).
pub fn auth_for(registry: &str, settings: &SourcesConfig) -> Result<RegistryAuth> {
    if let Some(login) = settings.registries.get(registry) {
        let var = |name: &str| {
            std::env::var(name).with_context(|| {
                format!("[sources.registries.\"{registry}\"] names {name}, which is not set")
            })
        };
        return Ok(match login {
            RegistryLogin::Basic {
                username,
                password_env,
            } => RegistryAuth::Basic(username.clone(), var(password_env)?),
            RegistryLogin::Token { token_env } => RegistryAuth::Bearer(var(token_env)?),
        });
    }
    match docker_credential::get_credential(registry) {
        Ok(DockerCredential::UsernamePassword(user, password)) => {
            Ok(RegistryAuth::Basic(user, password))
        }
        Ok(DockerCredential::IdentityToken(token)) => Ok(RegistryAuth::Bearer(token)),
        // No config file, or nothing for this registry in it: anonymous, as docker would be.
        Err(
            CredentialRetrievalError::ConfigNotFound
            | CredentialRetrievalError::ConfigReadError
            | CredentialRetrievalError::NoCredentialConfigured,
        ) => Ok(RegistryAuth::Anonymous),
        Err(e) => Err(anyhow::anyhow!(
            "cannot read the Docker credentials for {registry}: {e}"
        )),
    }
}
