// The secrets the environment holds under names of their own, registered with the process's
// Redactor before anything is printed: commander's usage errors quote argv (`unknown option
// '--api-key=…'`, an invalid `--log-level` value), and they are written before any command (and
// its config) has registered what it loads. A channel's or a backend's variable is named by the
// config and registered when the config is read. AWS's are read by the SDK itself (a KMS key's
// credentials come from its default chain), so nothing else would register them.
import type { Redactor } from '../log/redact.js';

const SECRET_VARIABLES = ['AUTOCLAIM_API_KEY', 'AUTOCLAIM_WEBHOOK_SECRET', 'AUTOCLAIM_WEBHOOK_URL', 'PGPASSWORD', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] as const;

export function registerEnvSecrets(redactor: Redactor, env: NodeJS.ProcessEnv): Redactor {
  for (const name of SECRET_VARIABLES) redactor.add(env[name]);
  return redactor;
}
