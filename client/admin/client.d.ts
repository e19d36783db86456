// The console loads the built library from /admin/assets/client.js, beside its own modules (the service serves
// dist/index.js there), so console.ts imports './client.js'. This file gives that import the library's types, taken
// from its sources: the type check needs no build. It declares only; nothing of it is emitted.
export * from '../src/index.js'
