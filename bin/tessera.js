#!/usr/bin/env node
// The `tessera` command. The TypeScript sources are compiled to dist/ by `npm run build` (run on install).
import { main } from '../dist/cli.js'

await main(process.argv.slice(2))
