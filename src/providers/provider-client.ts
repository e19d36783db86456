/** Who a provider says signed in (docs/api.md §4.24): what the sign-in rules decide by. */
export interface ProviderIdentity {
  /** The provider's id of its account (OpenID Connect `sub`, GitHub's numeric id as text): never reassigned. */
  subject: string
  /** The e-mail address the provider gave, as given; null when it gave none. */
  email: string | null
  /**
   * Whether the provider vouches for `email` (OpenID Connect `email_verified` exactly true; GitHub: the primary entry
   * of its e-mails API, marked verified). Only a vouched-for address may sign in to an account that has it.
   */
  emailVerified: boolean
  /** A name to show (`name`, else `nickname` or the GitHub login); null when none. */
  name: string | null
  /** The URL of the account's picture; null when none. */
  picture: string | null
}

/** What a sign-in in progress holds between its start and its callback, to check what comes back. */
export interface SignInChecks {
  /** `<publicBaseUrl>/auth/oauth/<name>/callback`: where the provider sends the browser back. */
  redirectUri: string
  state: string
  /** OpenID Connect's nonce, which the ID token must carry; unused by GitHub. */
  nonce: string
  /** PKCE (RFC 7636): the verifier whose S256 challenge the authorization request carried. */
  codeVerifier: string
}

/** One configured provider, as the sign-in routes use it. */
export interface ProviderClient {
  readonly name: string
  /**
   * The provider's authorization URL for a sign-in with these checks (PKCE S256, state, nonce). Rejects when the
   * provider cannot be reached (its discovery document, fetched on first use).
   */
  authorizationUrl(checks: SignInChecks): Promise<URL>
  /**
   * Redeems the code of the callback whose full URL is `callbackUrl` (the redirect URI with the provider's query):
   * checks the state and the issuer, exchanges the code with the PKCE verifier and the client's secret, checks the
   * ID token (signature, issuer, audience, expiry, nonce), and reads who signed in. Rejects when any of that fails.
   */
  identify(callbackUrl: URL, checks: SignInChecks): Promise<ProviderIdentity>
}

/** How long one request to a provider may take: discovery, the token exchange, an API call. */
export const PROVIDER_TIMEOUT_SECONDS = 10
