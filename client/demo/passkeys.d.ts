// The page loads the library's passkeys from /demo/passkeys.js, beside its own script (the service serves
// dist/passkeys.js there), so demo.ts imports './passkeys.js'. This file gives that import the types of its source,
// as client.d.ts does for './client.js'. It declares only; nothing of it is emitted.
export * from '../src/passkeys.js'
