import { readFileSync } from 'node:fs';
import { run } from './world.js';
const s = JSON.parse(readFileSync(process.argv[2]!, 'utf8'));
const r = await run(s, { trace: process.argv.includes('--trace') });
if (process.argv.includes('--trace')) for (const l of r.trace) console.log(l);
console.log(r.violations.length, 'violations', r.violations.slice(0, 3).map((v) => `${v.invariant} ${v.at} ${v.detail}`).join('\n'));
