// A small, real OpenID provider (the `oidc-provider` package) for Palisade's
// end-to-end OAuth tests. It only issues client_credentials tokens: with
// `resource=<url>` (RFC 8707) they are JWT access tokens (RFC 9068, typ
// at+jwt) whose `aud` is that resource and which are signed with our keys.
//
//   node oidc_provider.mjs --generate-key KID [--alg RS256|PS256|ES256|ES384|EdDSA] > keys.json
//   node oidc_provider.mjs --keys keys.json [--keys more.json] --clients clients.json
//        [--client '{"client_id":...}'] --resource URL [--resource URL2 | PREFIX*]
//        [--resource-scopes "a b"] [--port 0 | env OIDC_PORT] [--issuer URL]
//        [--ttl SECONDS] [--alg RS256]
//
// keys.json: a JWKS with private keys, {"keys":[{"kty":"RSA","kid":"k1",...}]}
// (or one bare JWK). Keys from several --keys files are concatenated in order;
// tokens are signed with the first key of --alg, all keys are in the JWKS, so
// restarting with `--keys new.json --keys old.json` is a key rotation.
// clients.json: [{"client_id":"alice","client_secret":"s3cret",
//   "token_endpoint_auth_method":"client_secret_basic" | "client_secret_post",
//   "scope":"mcp:read mcp:write" (or an array),
//   "extra_claims":{"groups":["admins"]}}]   (extra_claims: optional)
// A token's scope = the requested scopes that the client is allowed and the
// resource server lists (--resource-scopes, default: every client's scopes).
// A requested scope that is known but not allowed for the client is refused
// (invalid_scope); an unknown scope is dropped; an unlisted resource is refused
// (invalid_target).
//
// The first line on stdout is `listening http://127.0.0.1:PORT`; everything
// else goes to stderr. Exits on SIGTERM/SIGINT, and when stdin is a pipe that
// closes (so a test that dies takes the provider with it).
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, fstatSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import Provider, { errors } from 'oidc-provider';

const { values: opt } = parseArgs({
  options: {
    'generate-key': { type: 'string' },
    alg: { type: 'string', default: 'RS256' },
    keys: { type: 'string', multiple: true, default: [] },
    clients: { type: 'string', multiple: true, default: [] },
    client: { type: 'string', multiple: true, default: [] },
    resource: { type: 'string', multiple: true, default: [] },
    'resource-scopes': { type: 'string' },
    port: { type: 'string', default: process.env.OIDC_PORT ?? '0' },
    issuer: { type: 'string' },
    ttl: { type: 'string', default: '3600' },
  },
});

// --generate-key: print a one-key private JWKS and stop.
if (opt['generate-key']) {
  const byAlg = {
    RS256: ['rsa', { modulusLength: 2048 }],
    PS256: ['rsa', { modulusLength: 2048 }],
    ES256: ['ec', { namedCurve: 'P-256' }],
    ES384: ['ec', { namedCurve: 'P-384' }],
    EdDSA: ['ed25519', {}],
  };
  if (!byAlg[opt.alg]) throw new Error(`--alg must be one of ${Object.keys(byAlg)}`);
  const { privateKey } = generateKeyPairSync(...byAlg[opt.alg]);
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: opt['generate-key'], alg: opt.alg, use: 'sig' };
  process.stdout.write(`${JSON.stringify({ keys: [jwk] }, null, 2)}\n`);
  process.exit(0);
}

// Only our "listening" line may go to stdout: oidc-provider prints notices
// with console.info, so send all console output to stderr.
console.log = console.info = console.error;

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const keys = opt.keys.map(readJson).flatMap((jwks) => jwks.keys ?? [jwks]);
if (!keys.length) throw new Error('give at least one --keys file');

// Clients: file(s) of arrays, plus inline --client JSON objects.
const clientDefs = [...opt.clients.flatMap(readJson), ...opt.client.map((c) => JSON.parse(c))];
const extraClaims = new Map();
const clients = clientDefs.map(({ extra_claims: extra, scope, ...meta }) => {
  if (extra) extraClaims.set(meta.client_id, extra);
  return {
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    // The default (RS256) is refused when the provider holds no RSA key.
    id_token_signed_response_alg: opt.alg,
    ...meta,
    scope: Array.isArray(scope) ? scope.join(' ') : scope ?? '',
  };
});
const clientScopes = clients.flatMap((c) => c.scope.split(' ')).filter(Boolean);
const resourceScopes = opt['resource-scopes'] ?? [...new Set(clientScopes)].join(' ');
// A --resource ending in `*` allows every resource it starts (servers on any loopback port).
const allowed = (resource) =>
  opt.resource.some((r) => (r.endsWith('*') ? resource.startsWith(r.slice(0, -1)) : resource === r));
const ttl = Number(opt.ttl);

// Listen first (the port may be 0), then build the provider for that issuer.
const server = createServer();
server.listen(Number(opt.port), '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(opt.issuer ?? url, {
    jwks: { keys },
    clients,
    // Known scopes: a known scope the client is not allowed is invalid_scope.
    scopes: [...new Set([...clientScopes, ...resourceScopes.split(' ')].filter(Boolean))],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // Only the listed resources; each gets JWT access tokens for itself.
        async getResourceServerInfo(ctx, resource) {
          if (!allowed(resource)) throw new errors.InvalidTarget(`resource ${resource} is not allowed`);
          return {
            scope: resourceScopes,
            audience: resource,
            accessTokenTTL: ttl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: opt.alg } },
          };
        },
      },
    },
    // Per-client extra claims (e.g. groups) go into every access token.
    extraTokenClaims: async (ctx, token) => extraClaims.get(token.clientId),
    ttl: { AccessToken: ttl, ClientCredentials: ttl },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
    clientBasedCORS: () => true,
  });
  provider.on('server_error', (ctx, err) => console.error('server_error', err));
  server.on('request', provider.callback());
  process.stdout.write(`listening ${url}\n`);
});

// Clean exit on signals, and when a piped stdin closes (not for /dev/null or a tty).
const stop = () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
if (fstatSync(0).isFIFO()) {
  process.stdin.on('end', stop).on('close', stop).resume();
}
