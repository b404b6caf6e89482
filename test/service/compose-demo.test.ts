// docker-compose.yml's logs and restarts (issue 27), checked statically (no Docker engine here):
// every container's log is rotated, and no daemon restarts forever on an exit that will not fix
// itself (78, config invalid; 75, state locked), which compose cannot exclude by code.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const compose = parse(readFileSync(join(import.meta.dirname, '..', '..', 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { restart?: string; command?: string[]; logging?: { driver?: string; options?: Record<string, string> } }>;
};

describe('docker-compose.yml, logs and restarts', () => {
  it('rotates every service log (json-file with max-size and max-file)', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      expect(s.logging?.driver, name).toBe('json-file');
      expect(s.logging?.options?.['max-size'], name).toMatch(/^[1-9][0-9]*[km]$/);
      expect(Number(s.logging?.options?.['max-file']), name).toBeGreaterThan(1);
    }
  });

  it('restarts a daemon on failure a bounded number of times, never always or unless-stopped', () => {
    const daemons = Object.entries(compose.services).filter(([, s]) => s.command?.[0] === 'run');
    expect(daemons.map(([n]) => n).sort()).toEqual(['autoclaim', 'autoclaim-a', 'autoclaim-b']);
    for (const [name, s] of daemons) expect(s.restart, name).toMatch(/^on-failure:[1-9][0-9]?$/);
  });
});
