// The simulated service's state. Pending rewards are a function of the clock (base + rate × elapsed),
// never of timers, so a test that moves a fake clock sees exactly the accrual it expects and two
// worlds given the same clock and options are identical.
import { formatSol, LAMPORTS_PER_SOL, MAX_LAMPORTS, type Lamports } from '../amount.js';
import type { Clock } from '../domain.js';
import { demoWalletAddress, hashBelow, isWalletAddress, txId } from './derive.js';
import {
  WorldError,
  type LeaderboardRow,
  type LedgerEntry,
  type SandboxOp,
  type SummaryData,
  type WalletInit,
  type WalletPatch,
  type WalletState,
} from './world-types.js';

export * from './world-types.js';

const DAY_MS = 86_400_000;

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
  ranked: boolean;
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
    if (patch.ranked !== undefined && patch.ranked !== w.ranked) {
      w.ranked = patch.ranked;
      this.scoreCache = undefined;
    }
    setHoldings(w.shares, patch.shares, 'shares');
    setHoldings(w.tokens, patch.tokens, 'tokens');
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

  claim(address: string, signature: string, requestId?: string): LedgerEntry {
    const w = this.lookup(address);
    const now = this.now();
    const pending = this.pendingOf(w, now);
    if (pending === 0n) throw new WorldError('nothing_to_claim', 'nothing to claim: pending rewards are 0');
    w.pendingBase = 0n;
    w.anchorMs = now;
    w.lifetime += pending;
    w.balance += pending;
    return this.record('claim', w.address, null, pending, signature, now, requestId);
  }

  /** SOL from the balance into vault shares; the vault and share mint are named after the symbol, as the real service's answer shows. */
  deposit(address: string, symbol: string, amount: Lamports, signature: string, requestId?: string): { entry: LedgerEntry; vault: string; shareMint: string; estimatedShares: Lamports } {
    const w = this.prepareSpend(address, symbol, amount);
    const shares = (amount * LAMPORTS_PER_SOL) / sharePrice(`vault|${symbol}`);
    w.balance -= amount;
    w.shares.set(symbol, (w.shares.get(symbol) ?? 0n) + shares);
    const entry = this.record('deposit', w.address, symbol, amount, signature, this.now(), requestId);
    return { entry, vault: symbol, shareMint: `v${symbol}`, estimatedShares: shares };
  }

  /** SOL from the balance into leveraged tokens. */
  mint(address: string, symbol: string, amount: Lamports, signature: string, requestId?: string): { entry: LedgerEntry; mint: string; received: Lamports } {
    const w = this.prepareSpend(address, symbol, amount);
    const received = (amount * LAMPORTS_PER_SOL) / sharePrice(`token|${symbol}`);
    w.balance -= amount;
    w.tokens.set(symbol, (w.tokens.get(symbol) ?? 0n) + received);
    const entry = this.record('mint', w.address, symbol, amount, signature, this.now(), requestId);
    return { entry, mint: symbol, received };
  }

  /**
   * Vault shares back into SOL: `amount` counts shares (what the wallet holds), `received` is SOL.
   * Priced like the deposit, rounded down, so a round trip never creates a lamport.
   */
  withdraw(address: string, symbol: string, amount: Lamports, signature: string, requestId?: string): { entry: LedgerEntry; received: Lamports } {
    const w = this.prepareRedeem(address, symbol, amount, 'shares');
    const received = (amount * sharePrice(`vault|${symbol}`)) / LAMPORTS_PER_SOL;
    takeHolding(w.shares, symbol, amount);
    w.balance += received;
    return { entry: this.record('withdraw', w.address, symbol, amount, signature, this.now(), requestId), received };
  }

  /** Leveraged tokens back into SOL: `amount` counts tokens, `received` is SOL. */
  burn(address: string, symbol: string, amount: Lamports, signature: string, requestId?: string): { entry: LedgerEntry; received: Lamports } {
    const w = this.prepareRedeem(address, symbol, amount, 'tokens');
    const received = (amount * sharePrice(`token|${symbol}`)) / LAMPORTS_PER_SOL;
    takeHolding(w.tokens, symbol, amount);
    w.balance += received;
    return { entry: this.record('burn', w.address, symbol, amount, signature, this.now(), requestId), received };
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

  private prepareRedeem(address: string, symbol: string, amount: Lamports, holding: 'shares' | 'tokens'): WalletRecord {
    if (!this.symbols.includes(symbol)) throw new WorldError('unknown_symbol', `unknown symbol ${symbol}`);
    if (amount <= 0n) throw new WorldError('invalid_amount', 'amount must be greater than 0');
    const w = this.lookup(address);
    const held = w[holding].get(symbol) ?? 0n;
    if (amount > held) {
      const what = holding === 'shares' ? `${symbol} vault shares` : `${symbol} tokens`;
      throw new WorldError(holding === 'shares' ? 'insufficient_shares' : 'insufficient_tokens', `insufficient ${what}: ${formatSol(amount)} asked, ${formatSol(held)} held`);
    }
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
      ranked: init.ranked ?? true,
      shares: new Map(),
      tokens: new Map(),
      createdAt: now,
    };
    setHoldings(w.shares, init.shares, 'shares');
    setHoldings(w.tokens, init.tokens, 'tokens');
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
    // Capitalised, as the real service writes tiers.
    if (w.lifetime >= 100n * LAMPORTS_PER_SOL) return 'Gold';
    if (w.lifetime >= 10n * LAMPORTS_PER_SOL) return 'Silver';
    return 'Bronze';
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
      const ranked = [...this.wallets.values()]
        .filter((w) => w.ranked)
        .map(({ address }) => ({ address, score: this.symbols.reduce((sum, s) => sum + this.vaultActivity(address, epoch, s).score, 0n) }))
        .sort((a, b) => (a.score === b.score ? (a.address < b.address ? -1 : 1) : a.score > b.score ? -1 : 1));
      this.scoreCache = { epoch, ranked, rankOf: new Map(ranked.map((r, i) => [r.address, i + 1])) };
    }
    return this.scoreCache;
  }

  private record(op: SandboxOp, wallet: string, symbol: string | null, amountLamports: Lamports, signature: string, now: number, requestId: string | undefined): LedgerEntry {
    const seq = this.entries.length + 1;
    const entry: LedgerEntry = { seq, op, wallet, symbol, amountLamports, epoch: this.epoch(), ts: now, tx: txId(op, seq, signature), signature };
    if (requestId !== undefined) entry.requestId = requestId;
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
      ranked: w.ranked,
      shares: Object.fromEntries(w.shares),
      tokens: Object.fromEntries(w.tokens),
      createdAt: w.createdAt,
    };
  }
}

/**
 * Price of one share/token in lamports: 1 SOL plus up to 0.1 %, fixed per label, so 10 SOL buys
 * about 9.99 shares as in the real service's examples.
 */
function sharePrice(label: string): Lamports {
  return LAMPORTS_PER_SOL + hashBelow(`price|${label}`, LAMPORTS_PER_SOL / 1000n);
}

function setHoldings(holdings: Map<string, Lamports>, values: Record<string, Lamports> | undefined, name: string): void {
  for (const [symbol, units] of Object.entries(values ?? {})) {
    if (checkAmount(units, `${name}.${symbol}`) === 0n) holdings.delete(symbol);
    else holdings.set(symbol, units);
  }
}

function takeHolding(holdings: Map<string, Lamports>, symbol: string, amount: Lamports): void {
  const left = (holdings.get(symbol) ?? 0n) - amount;
  if (left === 0n) holdings.delete(symbol);
  else holdings.set(symbol, left);
}

function checkAmount(value: Lamports, name: string): Lamports {
  if (value < 0n || value > MAX_LAMPORTS) throw new Error(`${name} must be between 0 and u64::MAX lamports`);
  return value;
}

/** Thousandths as decimal text without trailing zeros: 12500n → "12.5". */
function formatMilli(milli: bigint): string {
  const whole = milli / 1000n;
  const frac = (milli % 1000n).toString().padStart(3, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole.toString();
}
