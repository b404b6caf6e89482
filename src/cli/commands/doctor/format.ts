// How `doctor` prints its report: lines for a person, or one JSON object for a script.
import { terminalText } from '../../terminal-text.js';
import { isAllWell, problems, warnings, type DoctorReport, type Finding } from './report.js';

const LEVEL_WORD: Record<Finding['level'], string> = { ok: 'ok', note: 'note', warning: 'WARNING', problem: 'PROBLEM' };

export function formatText(report: DoctorReport, opts: { acceptDefaults?: boolean } = {}): string {
  const sent = report.probes === undefined ? 'GETs only; nothing below is sent' : 'GETs, and --probe sent one request per signed operation signed with a wrong key';
  const out: string[] = [`autoclaim doctor: ${report.baseUrl} (${sent})`, ''];
  // A finding can quote the server (a health body, a tier, an error): shown safe (terminal-text.ts).
  for (const f of report.findings) out.push(`  ${LEVEL_WORD[f.level].padEnd(7)}  ${f.area.padEnd(7)}  ${terminalText(f.text)}`);

  const s = report.sample;
  if (s !== undefined && report.requests.length > 0) {
    out.push(
      '',
      `signed requests autoclaim would send, NOT sent (wallet ${s.wallet}, symbol ${s.symbol}, amount ${s.amount} SOL, ts ${s.ts}):`,
    );
    for (const r of report.requests) {
      out.push('', `  ${r.op}`, `    ${r.method} ${r.url}`);
      for (const [name, value] of Object.entries(r.headers)) out.push(`    ${name}: ${value}`);
      out.push(`    template:       ${r.template}`, `    signed message: ${r.message}`, `    body:           ${r.body}`);
      for (const n of r.notes) out.push(`    note: ${n}`);
    }
  }

  const found = problems(report);
  const warned = warnings(report);
  out.push('');
  if (isAllWell(report, opts)) {
    const notes = report.findings.filter((f) => f.level === 'note').length;
    const accepted = warned.length > 0 ? `, ${warned.length} default(s) accepted` : '';
    out.push(`doctor: all well${notes > 0 ? ` (${notes} note(s) above${accepted})` : accepted === '' ? '' : ` (${accepted.slice(2)})`}`);
  } else {
    if (found.length > 0) out.push(`doctor: ${found.length} problem(s) to fix:`);
    for (const p of found) out.push(`  - ${terminalText(p)}`);
    if (warned.length > 0 && opts.acceptDefaults !== true) {
      out.push(`doctor: ${warned.length} warning(s): a default that may not be the service's (\`doctor --probe\` checks it; \`--accept-defaults\` accepts it):`);
      for (const w of warned) out.push(`  - ${terminalText(w)}`);
    }
  }
  return out.join('\n');
}

/** One JSON object, camelCase like `status --json`; `sent: false` on every request says what it is. */
export function formatJson(report: DoctorReport, opts: { acceptDefaults?: boolean } = {}): string {
  return JSON.stringify({
    ok: isAllWell(report, opts),
    problems: problems(report),
    warnings: warnings(report),
    ...report,
    clockSkewMs: report.clockSkewMs ?? null,
    sample: report.sample ?? null,
    wallets: report.wallets.map((w) => ({
      ...w,
      status: w.status ?? null,
      epoch: w.epoch ?? null,
      pendingSol: w.pendingSol ?? null,
      rank: w.rank ?? null,
      tier: w.tier ?? null,
    })),
    requests: report.requests.map((r) => ({ ...r, sent: false })),
  });
}
