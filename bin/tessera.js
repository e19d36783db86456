#!/usr/bin/env node
// The `tessera` command. The TypeScript sources are compiled to dist/ by `npm run build` (run on install).
// `npm start` runs it with --max-semi-space-size=8: V8 would grow the young generation to 32 MiB under load, and
// 16 MiB keeps the process within its memory budget at no measurable cost in throughput (docs/performance.md).
// Started another way, pass it through NODE_OPTIONS.
import { main } from '../dist/commands/cli.js'

await main(process.argv.slice(2))
