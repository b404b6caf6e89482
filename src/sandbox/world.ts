// The simulated service's state. Pending rewards are a function of the clock (base + rate × elapsed),
// never of timers, so a test that moves a fake clock sees exactly the accrual it expects and two
// worlds given the same clock and options are identical.
import { LAMPORTS_PER_SOL, MAX_LAMPORTS, type Lamports } from '../api/amount.js';
import type { Clock, SignedOp } from '../domain.js';
import { demoWalletAddress, hashBelow, isWalletAddress, pseudoAddress, txId } from './derive.js';

const DAY_MS = 86_400_000;

export interface WalletInit {
  address: string;
  pendingLamports?: Lamports;
  lifetimeLamports?: Lamports;
  balanceLamports?: Lamports;
  accrualLamportsPerSec?: Lamports;
  tier?: string;
}

/** What the admin surface may change; `tier: null` goes back to the tier derived from lifetime. */
export interface WalletPatch {
  pendingLamports?: Lamports;
  lifetimeLamports?: Lamports;
  balanceLamports?: Lamports;
  accrualLamportsPerSec?: Lamports;
  tier?: string | null;
}

export interface WalletState {
  address: string;
  pendingLamports: Lamports;
  lifetimeLamports: Lamports;
  balanceLamports: Lamports;
  accrualLamportsPerSec: Lamports;
  tier: string;
  tierOverride: string | null;
  /** Vault shares and minted tokens held, in 10^-9 units, by symbol. */
  shares: Record<string, Lamports>;
  tokens: Record<string, Lamports>;
  createdAt: number;
}

export interface LedgerEntry {
  seq: number;
  op: SignedOp;
  wallet: string;
  symbol: string | null;
  amountLamports: Lamports;
  epoch: string;
  /** Wall ms (world clock) when applied. */
  ts: number;
  tx: string;
  signature: string;
}

/** Decimal text with 3 fractional digits of precision (volumes and scores are not money). */
export interface BreakdownRow {
  vault: string;
  volume: string;
  score: string;
}

export interface SummaryData {
  address: string;
  epoch: string;
  pendingLamports: Lamports;
  lifetimeLamports: Lamports;
  rank: number;
  tier: string;
  breakdown: BreakdownRow[];
}

export interface LeaderboardRow {
  rank: number;
  address: string;
  score: string;
  totalRewardsLamports: Lamports;
}

export type WorldErrorCode = 'invalid_address' | 'unknown_wallet' | 'unknown_symbol' | 'insufficient_balance' | 'nothing_to_claim' | 'invalid_amount';

export class WorldError extends Error {
  constructor(
    readonly code: WorldErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WorldError';
  }
}

export interface WorldOptions {
  clock: Clock;
  epochMs: number;
  /** Default: the start of the epoch the clock is in at construction. */
  epochOrigin?: number;
  symbols: readonly string[];
  defaultAccrualLamportsPerSec: Lamports;
  autoRegister: boolean;
  wallets?: readonly WalletInit[];
  demoWallets?: number;
}

interface WalletRecord {
  address: string;
  /** Pending at `anchorMs`; accrual since then is added on read. */
  pendingBase: Lamports;
  anchorMs: number;
  rate: Lamports;
  lifetime: Lamports;
  balance: Lamports;
  tier: string | null;
  shares: Map<string, Lamports>;
  tokens: Map<string, Lamports>;
  createdAt: number;
}

export class SandboxWorld {
  readonly clock: Clock;
  readonly epochMs: number;
  readonly epochOrigin: number;
  readonly symbols: readonly string[];
  private readonly defaultRate: Lamports;
  private readonly autoRegister: boolean;
  private readonly wallets = new Map<string, WalletRecord>();
  private readonly entries: LedgerEntry[] = [];
  private epochShift = 0;
  private scoreCache: { epoch: string; ranked: Array<{ address: string; score: bigint }>; rankOf: Map<string, number> } | undefined;

  constructor(opts: WorldOptions) {
    if (!(opts.epochMs > 0)) throw new Error('epochMs must be positive');
    this.clock = opts.clock;
    this.epochMs = opts.epochMs;
    this.epochOrigin = opts.epochOrigin ?? Math.floor(opts.clock.now() / opts.epochMs) * opts.epochMs;
    this.symbols = [...opts.symbols];
    this.defaultRate = checkAmount(opts.defaultAccrualLamportsPerSec, 'defaultAccrualLamportsPerSec');
    this.autoRegister = opts.autoRegister;
    for (const w of opts.wallets ?? []) this.create(w);
    for (let i = 0; i < (opts.demoWallets ?? 0); i++) {
      const address = demoWalletAddress(i);
      if (this.wallets.has(address)) continue;
      const n = BigInt(i + 1);
      this.create({
        address,
        pendingLamports: (n * LAMPORTS_PER_SOL) / 4n,
        lifetimeLamports: (n * 5n * LAMPORTS_PER_SOL) / 2n,
        balanceLamports: 10n * LAMPORTS_PER_SOL,
      });
    }
  }

  // ---- epochs -------------------------------------------------------------------------------

  epochIndex(): number {
    return Math.floor((this.now() - this.epochOrigin) / this.epochMs) + this.epochShift;
  }

  /** "YYYY-MM-DD": one calendar day per epoch, even when epochs last a minute. */
  epoch(): string {
    return new Date(this.epochOrigin + this.epochIndex() * DAY_MS).toISOString().slice(0, 10);
  }

  /** Jumps to the next epoch label without moving the clock (accrual is untouched). */
  advanceEpoch(): string {
    this.epochShift += 1;
    return this.epoch();
  }

  // ---- wallets ------------------------------------------------------------------------------

  addresses(): string[] {
    return [...this.wallets.keys()];
  }

  wallet(address: string): WalletState | undefined {
    const w = this.wallets.get(address);
    return w && this.view(w);
  }

  /** Creates the wallet if missing (even with autoRegister off: this is the operator's hand). */
  setWallet(address: string, patch: WalletPatch): WalletState {
    const w = this.wallets.get(address) ?? this.create({ address });
    const now = this.now();
    if (patch.accrualLamportsPerSec !== undefined) {
      this.settle(w, now);
      w.rate = checkAmount(patch.accrualLamportsPerSec, 'accrualLamportsPerSec');
    }
    if (patch.pendingLamports !== undefined) {
      w.pendingBase = checkAmount(patch.pendingLamports, 'pendingLamports');
      w.anchorMs = now;
    }
    if (patch.lifetimeLamports !== undefined) w.lifetime = checkAmount(patch.lifetimeLamports, 'lifetimeLamports');
    if (patch.balanceLamports !== undefined) w.balance = checkAmount(patch.balanceLamports, 'balanceLamports');
    if (patch.tier !== undefined) w.tier = patch.tier;
    return this.view(w);
  }

  summary(address: string): SummaryData {
    const w = this.lookup(address);
    const epoch = this.epoch();
    const ranked = this.ranking();
    return {
      address: w.address,
      epoch,
      pendingLamports: this.pendingOf(w, this.now()),
      lifetimeLamports: w.lifetime,
      rank: ranked.rankOf.get(w.address) ?? 0,
      tier: this.tierOf(w),
      breakdown: this.symbols.map((s) => {
        const { volume, score } = this.vaultActivity(w.address, epoch, s);
        return { vault: s, volume: formatMilli(volume), score: formatMilli(score) };
      }),
    };
  }

  leaderboard(limit: number): LeaderboardRow[] {
    const now = this.now();
    return this.ranking()
      .ranked.slice(0, limit)
      .map((r, i) => {
        const w = this.wallets.get(r.address) as WalletRecord;
        return { rank: i + 1, address: r.address, score: formatMilli(r.score), totalRewardsLamports: w.lifetime + this.pendingOf(w, now) };
      });
  }

  // ---- signed actions -----------------------------------------------------------------------

  claim(address: string, signature: string): LedgerEntry {
    const w = this.lookup(address);
    const now = this.now();
    const pending = this.pendingOf(w, now);
    if (pending === 0n) throw new WorldError('nothing_to_claim', 'nothing to claim: pending rewards are 0');
    w.pendingBase = 0n;
    w.anchorMs = now;
    w.lifetime += pending;
    w.balance += pending;
    return this.record('claim', w.address, null, pending, signature, now);
  }

  deposit(address: string, symbol: string, amount: Lamports, signature: string): { entry: LedgerEntry; vault: string; shareMint: string; estimatedShares: Lamports } {
    const w = this.prepareSpend(address, symbol, amount);
    const shares = (amount * LAMPORTS_PER_SOL) / sharePrice(`vault|${symbol}`);
    w.balance -= amount;
    w.shares.set(symbol, (w.shares.get(symbol) ?? 0n) + shares);
    const entry = this.record('deposit', w.address, symbol, amount, signature, this.now());
    return { entry, vault: pseudoAddress(`vault|${symbol}`), shareMint: pseudoAddress(`share-mint|${symbol}`), estimatedShares: shares };
  }

  mint(address: string, symbol: string, amount: Lamports, signature: string): { entry: LedgerEntry; mint: string; received: Lamports } {
    const w = this.prepareSpend(address, symbol, amount);
    const received = (amount * LAMPORTS_PER_SOL) / sharePrice(`token|${symbol}`);
    w.balance -= amount;
    w.tokens.set(symbol, (w.tokens.get(symbol) ?? 0n) + received);
    const entry = this.record('mint', w.address, symbol, amount, signature, this.now());
    return { entry, mint: pseudoAddress(`token-mint|${symbol}`), received };
  }

  /** Every applied action in order: how tests prove "applied exactly once". */
  ledger(): LedgerEntry[] {
    return this.entries.map((e) => ({ ...e }));
  }

  // ---- internals ----------------------------------------------------------------------------

  private now(): number {
    return Math.floor(this.clock.now());
  }

  /** A wallet the API was asked about: registered on first sight unless autoRegister is off. */
  private lookup(address: string): WalletRecord {
    const w = this.wallets.get(address);
    if (w) return w;
    if (!isWalletAddress(address)) throw new WorldError('invalid_address', 'not a base58 Ed25519 public key');
    if (!this.autoRegister) throw new WorldError('unknown_wallet', 'unknown wallet');
    return this.create({ address });
  }

  private prepareSpend(address: string, symbol: string, amount: Lamports): WalletRecord {
    if (!this.symbols.includes(symbol)) throw new WorldError('unknown_symbol', `unknown symbol ${symbol}`);
    if (amount <= 0n) throw new WorldError('invalid_amount', 'amount must be greater than 0');
    const w = this.lookup(address);
    if (amount > w.balance) throw new WorldError('insufficient_balance', 'insufficient balance');
    return w;
  }

  private create(init: WalletInit): WalletRecord {
    if (!isWalletAddress(init.address)) throw new Error(`sandbox wallet ${init.address} is not a base58 Ed25519 public key`);
    const now = this.now();
    const w: WalletRecord = {
      address: init.address,
      pendingBase: checkAmount(init.pendingLamports ?? 0n, 'pendingLamports'),
      anchorMs: now,
      rate: checkAmount(init.accrualLamportsPerSec ?? this.defaultRate, 'accrualLamportsPerSec'),
      lifetime: checkAmount(init.lifetimeLamports ?? 0n, 'lifetimeLamports'),
      balance: checkAmount(init.balanceLamports ?? 0n, 'balanceLamports'),
      tier: init.tier ?? null,
      shares: new Map(),
      tokens: new Map(),
      createdAt: now,
    };
    this.wallets.set(w.address, w);
    this.scoreCache = undefined;
    return w;
  }

  private pendingOf(w: WalletRecord, now: number): Lamports {
    const elapsed = BigInt(Math.max(0, now - w.anchorMs));
    const total = w.pendingBase + (w.rate * elapsed) / 1000n;
    return total > MAX_LAMPORTS ? MAX_LAMPORTS : total;
  }

  private settle(w: WalletRecord, now: number): void {
    w.pendingBase = this.pendingOf(w, now);
    w.anchorMs = now;
  }

  private tierOf(w: WalletRecord): string {
    if (w.tier !== null) return w.tier;
    if (w.lifetime >= 100n * LAMPORTS_PER_SOL) return 'gold';
    if (w.lifetime >= 10n * LAMPORTS_PER_SOL) return 'silver';
    return 'bronze';
  }

  /** Volume and score in thousandths; a pure function of (address, epoch, vault). */
  private vaultActivity(address: string, epoch: string, symbol: string): { volume: bigint; score: bigint } {
    const volume = hashBelow(`volume|${address}|${epoch}|${symbol}`, 50_000_000n);
    const weight = 1000n + 250n * BigInt(this.symbols.indexOf(symbol));
    return { volume, score: (volume * weight) / 1000n };
  }

  /**
   * All wallets by score descending, ties by address, and each one's rank (from 1), cached per
   * epoch: sorting on every summary made a 10,000-wallet sandbox the bottleneck of any benchmark.
   */
  private ranking(): { ranked: Array<{ address: string; score: bigint }>; rankOf: Map<string, number> } {
    const epoch = this.epoch();
    if (this.scoreCache?.epoch !== epoch) {
      const ranked = [...this.wallets.keys()]
        .map((address) => ({ address, score: this.symbols.reduce((sum, s) => sum + this.vaultActivity(address, epoch, s).score, 0n) }))
        .sort((a, b) => (a.score === b.score ? (a.address < b.address ? -1 : 1) : a.score > b.score ? -1 : 1));
      this.scoreCache = { epoch, ranked, rankOf: new Map(ranked.map((r, i) => [r.address, i + 1])) };
    }
    return this.scoreCache;
  }

  private record(op: SignedOp, wallet: string, symbol: string | null, amountLamports: Lamports, signature: string, now: number): LedgerEntry {
    const seq = this.entries.length + 1;
    const entry: LedgerEntry = { seq, op, wallet, symbol, amountLamports, epoch: this.epoch(), ts: now, tx: txId(op, seq, signature), signature };
    this.entries.push(entry);
    return { ...entry };
  }

  private view(w: WalletRecord): WalletState {
    return {
      address: w.address,
      pendingLamports: this.pendingOf(w, this.now()),
      lifetimeLamports: w.lifetime,
      balanceLamports: w.balance,
      accrualLamportsPerSec: w.rate,
      tier: this.tierOf(w),
      tierOverride: w.tier,
      shares: Object.fromEntries(w.shares),
      tokens: Object.fromEntries(w.tokens),
      createdAt: w.createdAt,
    };
  }
}

/** Price of one share/token in lamports, between 1 and 2 SOL, fixed per label. */
function sharePrice(label: string): Lamports {
  return LAMPORTS_PER_SOL + hashBelow(`price|${label}`, LAMPORTS_PER_SOL);
}

function checkAmount(value: Lamports, name: string): Lamports {
  if (value < 0n || value > MAX_LAMPORTS) throw new Error(`${name} must be between 0 and u64::MAX lamports`);
  return value;
}

/** Thousandths as decimal text without trailing zeros: 12500n → "12.5". */
export function formatMilli(milli: bigint): string {
  const whole = milli / 1000n;
  const frac = (milli % 1000n).toString().padStart(3, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole.toString();
}
