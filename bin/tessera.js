#!/usr/bin/env -S node --max-semi-space-size=8
// The `tessera` command. The TypeScript sources are compiled to dist/ by `npm run build` (run on install).
// --max-semi-space-size=8 (also in `npm start`): V8 would grow the young generation to 32 MiB under load; 16 MiB
// keeps the process within its memory budget at no measurable cost in throughput (docs/performance.md).
import { main } from '../dist/cli.js'

await main(process.argv.slice(2))
