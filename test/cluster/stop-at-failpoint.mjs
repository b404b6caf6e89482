// Preloaded (`node --import`) into a daemon run with AUTOCLAIM_FAILPOINT: where the failpoint would
// SIGKILL the process, it SIGSTOPs it instead, so a test can pause a daemon at an exact point of
// its work (a GC pause or a frozen VM landing there) and SIGCONT it later.
import process from 'node:process';

const kill = process.kill.bind(process);
process.kill = (pid, signal) => kill(pid, pid === process.pid && signal === 'SIGKILL' ? 'SIGSTOP' : signal);
