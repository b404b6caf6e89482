// The shapes of a wallet's `key:` (SPEC §7): where its signature comes from, never the key itself.
// Today's in-process sources (file, env, credential) and the backends that keep the key out of
// the daemon: a PKCS#11 token, Vault transit, AWS KMS, or the signer service.
import { z } from 'zod';
import { whenPresent } from './schema-fields.js';
import { hasUrlCredentials, PLAIN_HTTP_PROBLEM, plainHttpElsewhere, URL_CREDENTIALS_PROBLEM } from './url-credentials.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const CREDENTIAL_NAME = /^[A-Za-z0-9_@-][A-Za-z0-9_.@-]*$/;
const envName = (what: string) => z.string().regex(ENV_NAME, { error: 'expected an environment variable name' }).describe(what);
const credentialName = (what: string) => z.string().regex(CREDENTIAL_NAME, { error: 'expected a systemd credential name' }).describe(what);

const Pkcs11Key = z
  .strictObject({
    module: z.string().min(1).describe('path of the PKCS#11 module (.so), e.g. /usr/lib/softhsm/libsofthsm2.so'),
    token: z.string().min(1).max(32).describe("the token's label (not a secret)"),
    label: z.string().min(1).optional().describe("the private key's CKA_LABEL"),
    id: z
      .string()
      .regex(/^([0-9a-fA-F]{2})+$/, { error: 'expected the key id in hex' })
      .optional()
      .describe("the private key's CKA_ID, in hex"),
    pin_env: envName('environment variable holding the user PIN').optional(),
    pin_credential: credentialName('systemd credential holding the user PIN').optional(),
    sessions: z.number().int().min(1).max(64).default(4).describe('sessions kept open; one signature at a time on each'),
  })
  .refine((k) => (k.label === undefined) !== (k.id === undefined), { error: 'name the key by exactly one of label or id' })
  .refine((k) => (k.pin_env === undefined) !== (k.pin_credential === undefined), { error: 'give the PIN by exactly one of pin_env or pin_credential' })
  .describe('an Ed25519 key in an HSM or token, through PKCS#11 (CKM_EDDSA); never extractable');

const VaultKey = z
  .strictObject({
    address: z
      .string()
      .regex(/^https?:\/\/[^\s/]+/, { error: 'expected the URL of Vault, e.g. https://vault.example:8200' })
      .refine((t) => !hasUrlCredentials(t), { error: URL_CREDENTIALS_PROBLEM })
      .refine((t) => !plainHttpElsewhere(t), { error: PLAIN_HTTP_PROBLEM })
      .describe("Vault's URL"),
    mount: z.string().regex(/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/, { error: 'expected a mount path such as transit' }).default('transit').describe('the transit engine mount'),
    key: z.string().regex(/^[A-Za-z0-9_.-]+$/, { error: 'expected a transit key name' }).describe('the transit key (type ed25519)'),
    namespace: z.string().min(1).optional().describe('Vault Enterprise namespace'),
    token_env: envName('environment variable holding the Vault token').optional(),
    token_file: z.string().min(1).optional().describe('mode-0600 file holding the Vault token'),
    token_credential: credentialName('systemd credential holding the Vault token').optional(),
  })
  .refine((k) => [k.token_env, k.token_file, k.token_credential].filter((v) => v !== undefined).length === 1, {
    error: 'give the Vault token by exactly one of token_env, token_file or token_credential',
  })
  .describe('a HashiCorp Vault transit ed25519 key');

const KmsKey = z
  .strictObject({
    key_id: z.string().min(1).describe('key id, ARN or alias of an ECC_NIST_EDWARDS25519 key'),
    region: z.string().regex(/^[a-z0-9-]+$/, { error: 'expected an AWS region such as eu-west-1' }).describe('AWS region'),
    endpoint: z
      .string()
      .regex(/^https?:\/\//, { error: 'expected a URL' })
      .refine((t) => !hasUrlCredentials(t), { error: URL_CREDENTIALS_PROBLEM })
      .refine((t) => !plainHttpElsewhere(t), { error: PLAIN_HTTP_PROBLEM })
      .optional()
      .describe('endpoint override (a VPC endpoint, a test double)'),
  })
  .describe('an AWS KMS Ed25519 key; credentials from the SDK default chain');

const SignerServiceKey = z
  .strictObject({
    socket: z.string().regex(/^\//, { error: 'expected an absolute path' }).describe("the signer service's unix socket"),
    key: z.string().min(1).describe('the key name in the signer service'),
  })
  .describe('the autoclaim signer service, with its own policy and journal');

const FileKey = z.strictObject({ file: z.string().min(1).describe('solana-keygen JSON file (64 numbers), mode 0600') });
const EnvKey = z.strictObject({ env: envName('environment variable holding a base58 64-byte secret or 32-byte seed') });
const CredentialKey = z.strictObject({ credential: credentialName('systemd credential name, read from $CREDENTIALS_DIRECTORY') });

/** A key this process holds itself: what the signer service (signer.yaml) keeps. */
export const InProcessKeySource = z
  .union([FileKey, EnvKey, CredentialKey], {
    error: whenPresent('expected exactly one of { file: PATH }, { env: VARIABLE } or { credential: NAME }'),
  })
  .describe('where the signing key is: never the key itself');

export const KeySource = z
  .union(
    [
      FileKey,
      EnvKey,
      CredentialKey,
      z.strictObject({ pkcs11: Pkcs11Key }),
      z.strictObject({ vault: VaultKey }),
      z.strictObject({ aws_kms: KmsKey }),
      z.strictObject({ signer: SignerServiceKey }),
    ],
    {
      error: whenPresent(
        'expected exactly one of { file: PATH }, { env: VARIABLE }, { credential: NAME }, { pkcs11: {...} }, { vault: {...} }, { aws_kms: {...} } or { signer: { socket, key } }',
      ),
    },
  )
  .describe('where the signing key is, or which signer holds it: never the key itself');
