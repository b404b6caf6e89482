// Test only. Preloaded (`node --import`) into a daemon to give it a wall clock off by the number of
// milliseconds written in the file $AUTOCLAIM_TEST_CLOCK_FILE (re-read every 100 ms, so a test can
// set the clock right, or wrong the other way, while the daemon runs), as a host whose NTP failed
// would be. Only Date.now moves, which is the daemon's clock (domain.ts systemClock); monotonic
// time (performance.now) does not, as on a real host. Nothing in src/ reads this file or variable.
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { setInterval } from 'node:timers';

const file = process.env.AUTOCLAIM_TEST_CLOCK_FILE;
if (file === undefined || file === '') throw new Error('shift-clock.mjs needs AUTOCLAIM_TEST_CLOCK_FILE');
const read = () => {
  const ms = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(ms)) throw new Error(`shift-clock.mjs: ${file} does not hold an integer offset in ms`);
  return ms;
};
let offset = read();
setInterval(() => {
  try {
    offset = read();
  } catch {
    // a write in progress: keep the last offset
  }
}, 100).unref();
const realNow = Date.now.bind(Date);
Date.now = () => realNow() + offset;
