// An Ed25519 key in an HSM or token through PKCS#11 (SPEC §7): pure Ed25519 (CKM_EDDSA) on the
// token, the key found by label or id and refused unless it is sensitive and not extractable.
// Sessions are pooled, one operation on each at a time (PKCS#11 sessions are not reentrant); the
// user PIN comes only from env or a systemd credential, registered with the redactor when read,
// and is never in a message. pkcs11js is loaded on first use: most daemons never need it.
import type { Pkcs11KeyConfig } from '../../domain.js';
import { lazyRequire } from '../../lazy-require.js';
import { readBackendSecret } from '../keys.js';
import { SIGNER_UNAVAILABLE, SignerRefused } from '../port.js';
import type { BackendOptions } from './index.js';
import { RemoteSignerBase } from './remote.js';

type Pkcs11Module = typeof import('pkcs11js');
type Handle = Buffer;
const pkcs11js = lazyRequire<Pkcs11Module>('pkcs11js');

// Not named by pkcs11js: PKCS#11 3.0's Ed25519 constants.
const CKK_EC_EDWARDS = 0x40;
const CKM_EDDSA = 0x1057;

/** One loaded module per path: C_Initialize is once per process and module. */
const modules = new Map<string, { lib: InstanceType<Pkcs11Module['PKCS11']>; users: number }>();

export class Pkcs11Signer extends RemoteSignerBase {
  readonly backend = 'pkcs11' as const;
  readonly #pin: string;
  #lib: InstanceType<Pkcs11Module['PKCS11']> | undefined;
  #key: Handle | undefined;
  readonly #idle: Handle[] = [];
  readonly #all: Handle[] = [];
  readonly #waiting: Array<{ resolve: (s: Handle) => void; reject: (err: Error) => void }> = [];
  /** Bumped each time the sessions are dropped: a failure on an older session does not drop newer ones. */
  #generation = 0;
  /** Opened once in this process: the token missing afterwards is one pulled out, not a config error. */
  #wasOpen = false;
  /** The token refused the PIN: not tried again (an HSM locks its user PIN after a few) until a reload reads it anew. */
  #pinRefused: SignerRefused | undefined;

  constructor(
    private readonly cfg: Pkcs11KeyConfig,
    address: string,
    opts: BackendOptions,
  ) {
    super(address, opts.templates);
    this.#pin = readBackendSecret(cfg.pinEnv !== undefined ? { env: cfg.pinEnv } : { credential: cfg.pinCredential ?? '' }, 'the PKCS#11 PIN', opts);
  }

  get location(): string {
    return `pkcs11 ${this.cfg.module} token ${this.cfg.token}`;
  }

  protected describe(): string {
    return `PKCS#11 key ${this.cfg.label !== undefined ? `labelled ${this.cfg.label}` : `id ${this.cfg.id ?? ''}`} on token ${this.cfg.token}`;
  }

  protected fetchPublicKey(): Promise<Uint8Array> {
    return Promise.resolve().then(() => this.open());
  }

  protected async signMessage(message: Uint8Array): Promise<Uint8Array> {
    const lib = this.#lib;
    const key = this.#key;
    if (lib === undefined || key === undefined) throw new SignerRefused(SIGNER_UNAVAILABLE, `${this.describe()} is not open`);
    const generation = this.#generation;
    const session = await this.take();
    try {
      lib.C_SignInit(session, { mechanism: CKM_EDDSA }, key);
      const sig = await new Promise<Buffer>((resolve, reject) => {
        lib.C_Sign(session, Buffer.from(message), Buffer.alloc(64), (err, out) => (err ? reject(err) : resolve(out)));
      });
      return new Uint8Array(sig);
    } catch (err) {
      if (!this.sessionLost(err)) throw this.refusal(err, 'PKCS11_SIGN');
      // The token was pulled and put back, the HSM restarted, the sessions closed under us: they
      // are dead for good. Not a judgement of the action (SIGNER_UNAVAILABLE: back to planned);
      // the next signature opens them again and checks the key against the address first.
      if (generation === this.#generation) this.drop();
      throw new SignerRefused(SIGNER_UNAVAILABLE, `${this.describe()}: its sessions were lost (${(err as Error).message}); they are opened again at the next signature`);
    } finally {
      this.give(session);
    }
  }

  /** A failure that says the sessions, the login or the token are gone, not that this signature is refused. */
  private sessionLost(err: unknown): boolean {
    const P = pkcs11js();
    if (!(err instanceof P.Pkcs11Error)) return false;
    return [
      P.CKR_SESSION_HANDLE_INVALID,
      P.CKR_SESSION_CLOSED,
      P.CKR_USER_NOT_LOGGED_IN,
      P.CKR_KEY_HANDLE_INVALID,
      P.CKR_OBJECT_HANDLE_INVALID,
      P.CKR_DEVICE_REMOVED,
      P.CKR_TOKEN_NOT_PRESENT,
      P.CKR_TOKEN_NOT_RECOGNIZED,
      P.CKR_DEVICE_ERROR,
      P.CKR_CRYPTOKI_NOT_INITIALIZED,
    ].includes(err.code);
  }

  /** Drops the dead sessions and the key handle; whoever waits for a session is told. */
  private drop(): void {
    this.#generation++;
    this.closeSessions();
    this.#key = undefined;
    for (const w of this.#waiting.splice(0)) w.reject(new SignerRefused(SIGNER_UNAVAILABLE, `${this.describe()}: its sessions were lost; they are opened again at the next signature`));
    this.forget();
  }

  /** Loads the module, finds the token, opens the sessions, logs in, finds the key; its public key. */
  private open(): Uint8Array {
    const P = pkcs11js();
    if (this.#pinRefused !== undefined) throw this.#pinRefused;
    // Opened again after its sessions were lost, or after a key of another address: none kept.
    this.closeSessions();
    let entry = modules.get(this.cfg.module);
    try {
      if (entry === undefined) {
        const lib = new P.PKCS11();
        lib.load(this.cfg.module);
        // The async C_Sign runs on libuv's thread pool, one per session at once: the module must lock
        // for itself (CKF_OS_LOCKING_OK). Without it SoftHSM2 assumes one thread and, with several
        // sessions signing at once, corrupts its heap (a crash seen with 4 sessions under load).
        lib.C_Initialize({ flags: P.CKF_OS_LOCKING_OK });
        entry = { lib, users: 0 };
        modules.set(this.cfg.module, entry);
      }
    } catch (err) {
      throw new SignerRefused('PKCS11_MODULE', `PKCS#11 module ${this.cfg.module} cannot be loaded (${(err as Error).message})`);
    }
    const lib = entry.lib;
    const slot = lib.C_GetSlotList(true).find((s) => lib.C_GetTokenInfo(s).label.trim() === this.cfg.token);
    if (slot === undefined) {
      // Once open in this process, a token gone is one pulled out: it may come back.
      throw new SignerRefused(this.#wasOpen ? SIGNER_UNAVAILABLE : 'PKCS11_NO_TOKEN', `no token labelled ${this.cfg.token} in ${this.cfg.module}`);
    }
    try {
      for (let i = 0; i < this.cfg.sessions; i++) this.#all.push(lib.C_OpenSession(slot, P.CKF_SERIAL_SESSION));
      if (this.#lib === undefined) entry.users++;
      this.#lib = lib;
      const first = this.#all[0] as Handle;
      try {
        lib.C_Login(first, P.CKU_USER, this.#pin);
      } catch (err) {
        // Another signer of this process already logged in to the token: login is per token.
        if (!(err instanceof P.Pkcs11Error) || err.code !== P.CKR_USER_ALREADY_LOGGED_IN) throw err;
      }
      const key = this.find(lib, first, P.CKO_PRIVATE_KEY);
      if (key === undefined) throw new SignerRefused('PKCS11_NO_KEY', `${this.describe()}: no Ed25519 private key found`);
      const [sensitive, extractable] = lib.C_GetAttributeValue(first, key, [{ type: P.CKA_SENSITIVE }, { type: P.CKA_EXTRACTABLE }]);
      if (sensitive?.value?.[0] !== 1 || extractable?.value?.[0] !== 0) {
        throw new SignerRefused('PKCS11_EXTRACTABLE', `${this.describe()} can leave the token (CKA_SENSITIVE false or CKA_EXTRACTABLE true); make it with sensitive on and extractable off`);
      }
      const pubKey = this.find(lib, first, P.CKO_PUBLIC_KEY);
      if (pubKey === undefined) throw new SignerRefused('PKCS11_NO_KEY', `${this.describe()}: its public key is not on the token`);
      const point = lib.C_GetAttributeValue(first, pubKey, [{ type: P.CKA_EC_POINT }])[0]?.value;
      this.#key = key;
      this.#idle.push(...this.#all);
      this.#wasOpen = true;
      return rawPoint(point);
    } catch (err) {
      this.closeSessions();
      const refusal = this.refusal(err, 'PKCS11_OPEN');
      if (refusal.code === 'PKCS11_PIN' || refusal.code === 'PKCS11_PIN_LOCKED') this.#pinRefused = refusal;
      throw refusal;
    }
  }

  private find(lib: InstanceType<Pkcs11Module['PKCS11']>, session: Handle, cls: number): Handle | undefined {
    const P = pkcs11js();
    const template = [
      { type: P.CKA_CLASS, value: cls },
      { type: P.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
      this.cfg.label !== undefined ? { type: P.CKA_LABEL, value: this.cfg.label } : { type: P.CKA_ID, value: Buffer.from(this.cfg.id ?? '', 'hex') },
    ];
    lib.C_FindObjectsInit(session, template);
    try {
      const found = lib.C_FindObjects(session, 2);
      if (found.length > 1) throw new SignerRefused('PKCS11_AMBIGUOUS', `${this.describe()}: more than one key matches`);
      return found[0];
    } finally {
      lib.C_FindObjectsFinal(session);
    }
  }

  private refusal(err: unknown, code: string): SignerRefused {
    if (err instanceof SignerRefused) return err;
    const P = pkcs11js();
    if (err instanceof P.Pkcs11Error) {
      if (err.code === P.CKR_PIN_INCORRECT || err.code === P.CKR_PIN_LEN_RANGE) return new SignerRefused('PKCS11_PIN', `the PIN for token ${this.cfg.token} is wrong`);
      if (err.code === P.CKR_PIN_LOCKED) return new SignerRefused('PKCS11_PIN_LOCKED', `the PIN for token ${this.cfg.token} is locked`);
      if (err.code === P.CKR_DEVICE_REMOVED || err.code === P.CKR_TOKEN_NOT_PRESENT || err.code === P.CKR_DEVICE_ERROR) {
        return new SignerRefused(SIGNER_UNAVAILABLE, `token ${this.cfg.token} is not present (${err.message})`);
      }
    }
    return new SignerRefused(code, `${this.describe()}: ${(err as Error).message}`);
  }

  private take(): Promise<Handle> {
    const s = this.#idle.pop();
    if (s !== undefined) return Promise.resolve(s);
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  private give(s: Handle): void {
    // A session of a pool since dropped is dead: it goes to nobody.
    if (!this.#all.includes(s)) return;
    const next = this.#waiting.shift();
    if (next !== undefined) next.resolve(s);
    else this.#idle.push(s);
  }

  private closeSessions(): void {
    for (const s of this.#all) {
      try {
        this.#lib?.C_CloseSession(s);
      } catch {
        // already closed
      }
    }
    this.#all.length = 0;
    this.#idle.length = 0;
  }

  close(): Promise<void> {
    this.closeSessions();
    const entry = modules.get(this.cfg.module);
    if (entry !== undefined && this.#lib !== undefined && --entry.users <= 0) {
      try {
        entry.lib.C_Finalize();
      } catch {
        // finalized already
      }
      modules.delete(this.cfg.module);
    }
    this.#lib = undefined;
    this.#key = undefined;
    return Promise.resolve();
  }
}

/** CKA_EC_POINT of an Ed25519 key: the 32 bytes, or them wrapped in a DER OCTET STRING (04 20 …). */
function rawPoint(point: Buffer | undefined): Uint8Array {
  if (point === undefined) return new Uint8Array(0);
  if (point.length === 34 && point[0] === 0x04 && point[1] === 0x20) return new Uint8Array(point.subarray(2));
  return new Uint8Array(point);
}
