import { open, unlink } from 'node:fs/promises'
import { resolve } from 'node:path'
import {
  generateAccessTokenKeyPair,
  privateKeyPem,
  publicJwk,
  publicKeyPem,
} from '../auth/access-token-keys.js'
import type { AsymmetricAlgorithm } from '../config/signing-config.js'
import { escapeUnprintable, oneLine, quoted } from '../printable.js'
import { CommandFailedError, CommandUsageError } from './command-errors.js'
import { parseCommandLine } from './command-line.js'
import type { CommandIo } from './site-config.js'

export const KEYS_USAGE = `Usage: tessera keys generate [--algorithm EdDSA|ES256] [--out <file>]

Writes a new key pair for access tokens signed with AUTH_JWT_ALGORITHM=EdDSA (Ed25519, the default) or ES256
(P-256): the private key, PKCS#8 PEM readable by its owner only (0600), to <file> for AUTH_JWT_PRIVATE_KEY_FILE;
its public key beside it (<file> with .pub.pem for .pem) for AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES once the key is
rotated out. Prints both paths, the key's kid (the kid of the tokens it signs, and of its entry in the JWKS) and
the public key. Never overwrites a file.

Options:
  --algorithm <alg>      EdDSA (default) or ES256
  --out <file>           where the private key goes (default: access-token-<alg>.pem in this directory)
  -h, --help             show this text

Exit codes: 0 written; 1 a file exists or cannot be written (one line on stderr; nothing is left behind);
2 usage error.
`

const ALGORITHMS: readonly AsymmetricAlgorithm[] = ['EdDSA', 'ES256']

/** `tessera keys …`: `args` are the arguments after `keys`. Resolves with the exit code (0, 1 or 2). */
export async function runKeysCommand(args: readonly string[], io: CommandIo): Promise<number> {
  let invocation: { algorithm: AsymmetricAlgorithm; out: string } | 'help'
  try {
    invocation = parseInvocation(args)
  } catch (error) {
    if (!(error instanceof CommandUsageError)) throw error
    io.stderr(`tessera keys: ${oneLine(error.message)}\n${KEYS_USAGE}`)
    return 2
  }
  if (invocation === 'help') {
    io.stdout(KEYS_USAGE)
    return 0
  }
  try {
    io.stdout(await generate(invocation.algorithm, invocation.out))
    return 0
  } catch (error) {
    if (!(error instanceof CommandFailedError)) throw error
    io.stderr(`tessera keys: ${oneLine(error.message)}\n`)
    return 1
  }
}

function parseInvocation(args: readonly string[]): { algorithm: AsymmetricAlgorithm; out: string } | 'help' {
  const { values, positionals } = parseCommandLine(args, {
    algorithm: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  })
  const [subcommand, extra] = positionals
  if (values.help || subcommand === 'help') return 'help'
  if (subcommand === undefined) throw new CommandUsageError('missing subcommand: generate')
  if (subcommand !== 'generate') throw new CommandUsageError(`unknown subcommand ${quoted(subcommand)}`)
  if (extra !== undefined) throw new CommandUsageError(`unexpected argument ${quoted(extra)}`)
  const algorithm = values.algorithm ?? 'EdDSA'
  if (!(ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new CommandUsageError(`--algorithm must be EdDSA or ES256, got ${quoted(algorithm)}`)
  }
  if (values.out === '') throw new CommandUsageError('--out needs a file name')
  return {
    algorithm: algorithm as AsymmetricAlgorithm,
    out: values.out ?? `access-token-${algorithm.toLowerCase()}.pem`,
  }
}

/** Writes the pair and returns what to print. A file that exists is never touched; on a failure none is left. */
async function generate(algorithm: AsymmetricAlgorithm, out: string): Promise<string> {
  const privateFile = resolve(out)
  const publicFile = privateFile.endsWith('.pem')
    ? `${privateFile.slice(0, -'.pem'.length)}.pub.pem`
    : `${privateFile}.pub.pem`
  const { privateKey, publicKey } = generateAccessTokenKeyPair(algorithm)
  const { kid } = await publicJwk(algorithm, publicKey)
  const publicPem = publicKeyPem(publicKey)
  await createExclusively(privateFile, privateKeyPem(privateKey))
  try {
    await createExclusively(publicFile, publicPem)
  } catch (error) {
    // the private key alone would be a pair half-written: the next run would refuse its name
    await unlink(privateFile).catch(() => {})
    throw error
  }
  return [
    // a file name is what the operator typed: shown with its control characters escaped, like every echo of it
    `private key  ${escapeUnprintable(privateFile)}  (0600: AUTH_JWT_PRIVATE_KEY_FILE)`,
    `public key   ${escapeUnprintable(publicFile)}  (AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES, once rotated out)`,
    `algorithm    ${algorithm}`,
    `kid          ${kid}`,
    '',
    publicPem,
  ].join('\n')
}

/** Creates `file` with `text`, readable by its owner only whatever the umask; refuses one that exists. */
async function createExclusively(file: string, text: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(file, 'wx', 0o600)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new CommandFailedError(
      code === 'EEXIST'
        ? `${file} exists; not overwritten (name another file with --out)`
        : `cannot create ${file}: ${code ?? (error as Error).message}`,
    )
  }
  try {
    await handle.chmod(0o600)
    await handle.writeFile(text)
  } catch (error) {
    await unlink(file).catch(() => {})
    throw new CommandFailedError(`cannot write ${file}: ${(error as Error).message}`)
  } finally {
    await handle.close()
  }
}
