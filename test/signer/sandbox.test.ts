// The signer service's signatures, obtained by the daemon's `signer` backend, accepted by the
// sandbox (which verifies every signature): a claim, then a deposit of part of it. This stands in
// for the daemon e2e until the executor signs through the signer port (issue #28's other half).
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { buildSignedBody, joinUrl } from '../../src/api/signed-request.js';
import { SIGNED_OPS, systemClock, type SignedOp } from '../../src/domain.js';
import { SignerServiceBackend } from '../../src/keys/backends/signer-service.js';
import type { SignAction } from '../../src/keys/port.js';
import { encodeSignature } from '../../src/keys/signer.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadSignerConfig } from '../../src/signer/config.js';
import { SqliteJournal } from '../../src/signer/journal.js';
import { createSignerHandler } from '../../src/signer/service.js';
import { listenSigner, type SignerServer } from '../../src/signer/server.js';
import { captureLog } from '../support/log.js';
import { signerSetup, type SignerSetup } from './support.js';

const TEMPLATES = Object.fromEntries(SIGNED_OPS.map((op) => [op, DEFAULT_ENDPOINTS[op].message])) as Record<SignedOp, string>;

describe('signer service signatures through the sandbox', () => {
  let setup: SignerSetup;
  let sandbox: Sandbox;
  let server: SignerServer;
  let journal: SqliteJournal;

  afterEach(async () => {
    await server.close();
    journal.close();
    await sandbox.close();
    setup.cleanup();
  });

  it('claims and deposits with signatures the sandbox verifies', async () => {
    setup = signerSetup();
    const wallet = setup.wallets[0]!;
    const log = captureLog('silent');
    const loaded = loadSignerConfig(setup.configFile, { env: {}, cwd: setup.dir, loadKeys: { redactor: log.redactor } });
    journal = SqliteJournal.open(loaded.config!.statePath!);
    server = await listenSigner(setup.socket, createSignerHandler({ config: loaded.config!, signers: loaded.signers!, journal, clock: systemClock, logger: log.logger, failpoint: () => {} }), log.logger);
    sandbox = await startSandbox({ port: 0, wallets: [{ address: wallet.address, pendingLamports: 3_000_000_000n, accrualLamportsPerSec: 0n }] });
    const backend = await SignerServiceBackend.open({ socket: setup.socket, key: 'treasury', address: wallet.address, templates: TEMPLATES });
    const summary = (await (await fetch(joinUrl(sandbox.url, `/rewards/wallet/${wallet.address}`))).json()) as { epoch: string };

    const send = async (action: SignAction) => {
      const signed = await backend.sign(action, AbortSignal.timeout(5_000));
      const body = buildSignedBody(action.op, {
        wallet: action.wallet,
        signature: encodeSignature(signed.signature, 'base58'),
        ...(action.symbol !== undefined ? { symbol: action.symbol } : {}),
        ...(action.amount !== undefined ? { amountText: action.amount } : {}),
      });
      const res = await fetch(joinUrl(sandbox.url, DEFAULT_ENDPOINTS[action.op].path), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-ts': String(action.ts), 'x-svc-wallet': action.wallet },
        body,
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const ts = Math.floor(Date.now() / 1000);
    const claim = await send({ op: 'claim', wallet: wallet.address, ts, epoch: summary.epoch });
    expect(claim).toMatchObject({ status: 200, body: { status: 'success' } });
    const deposit = await send({ op: 'deposit', wallet: wallet.address, symbol: 'SOL2X', amount: '1.5', ts, epoch: summary.epoch });
    expect(deposit).toMatchObject({ status: 200, body: { status: 'submitted' } });
    await backend.close();
    expect(journal.all().map((r) => r.op)).toEqual(['claim', 'deposit']);
  });
});
