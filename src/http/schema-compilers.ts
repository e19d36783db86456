import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

/**
 * The compilers of the route schemas, shared by every app this process builds (Fastify's `schemaController` option).
 * Fastify makes new ones for each app and compiles every request schema (Ajv) and every answer's schema
 * (fast-json-stringify) again at each start: with some 40 operations of about 8 documented answers each, that was
 * half of a start's time, paid again by every service a test suite or a cluster worker starts. The schemas are the
 * same constants in every app, so what is compiled once serves them all:
 * - the validators come from one pool of Ajv instances, one per set of shared schemas and Ajv options, whose Ajv
 *   keeps each compiled schema;
 * - a serializer is kept by the text of its schema, its shared schemas and its options, which are all it depends on.
 * The compiled functions are pure: sharing them changes no answer.
 *
 * And none is compiled before it is needed: Fastify asks for every function of every route before the port opens, and
 * is handed one that compiles the real one at its first call (an answer's schema at the first answer of its status,
 * a request's at the first request of its route). Most of a start's compiling was for answers no request had asked
 * for yet, many of them never asked for in the life of a process. The first request of a route pays its compiling;
 * no answer changes, as the function it calls is the one Fastify would have been given.
 */
type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type CompilersFactory = NonNullable<SchemaController['compilersFactory']>
type BuildValidator = NonNullable<CompilersFactory['buildValidator']>
type BuildSerializer = NonNullable<CompilersFactory['buildSerializer']>
type Serializer = (data: unknown) => string
/** An Ajv validate function, as Fastify calls it: `errors` after a failure, `schemaEnv` to pass the parent data. */
interface Validate {
  (data: unknown, context?: unknown): unknown
  errors?: unknown
  schemaEnv?: unknown
}
type RouteSchema = { schema: unknown }

const validatorPool = AjvCompiler() as unknown as (
  externalSchemas: unknown,
  options: unknown,
) => (route: RouteSchema) => Validate
const selectSerializer = SerializerSelector()
const serializers = new Map<string, Serializer>()

const buildSharedValidator = ((externalSchemas: unknown, ajvOptions: unknown) => {
  // the pool's Ajv, with its formats and the shared schemas, is made at the first validation too
  const compiler = once(() => validatorPool(externalSchemas, ajvOptions))
  return (route: RouteSchema) => lazyValidator(once(() => compiler()(route)))
}) as unknown as BuildValidator

const buildSharedSerializer = ((externalSchemas: unknown, serializerOptions: unknown) => {
  const compiler = once(
    () =>
      selectSerializer(
        externalSchemas as Parameters<typeof selectSerializer>[0],
        serializerOptions as Parameters<typeof selectSerializer>[1],
      ) as unknown as (route: RouteSchema) => Serializer,
  )
  const shared = once(() => JSON.stringify([externalSchemas, serializerOptions]))
  const compileShared = (route: RouteSchema): Serializer => {
    const key = `${shared()}${JSON.stringify(route.schema)}`
    let serialize = serializers.get(key)
    if (serialize === undefined) {
      serialize = compiler()(route)
      serializers.set(key, serialize)
    }
    return serialize
  }
  return (route: RouteSchema): Serializer => {
    const compiled = once(() => compileShared(route))
    return (data) => compiled()(data)
  }
}) as unknown as BuildSerializer

/**
 * A validator that compiles its schema at its first call. Fastify reads what Ajv's function carries (`errors` after
 * it returns false, `schemaEnv` before calling it): both are read from the compiled function itself.
 */
function lazyValidator(compiled: () => Validate): Validate {
  // Ajv's functions take the data and Fastify's context (the parent data), and no `this` without its passContext
  const lazy: Validate = (data, context) => compiled()(data, context)
  Object.defineProperties(lazy, {
    errors: { get: () => compiled().errors },
    schemaEnv: { get: () => compiled().schemaEnv },
  })
  return lazy
}

/** `make()`'s value, made at the first call; a call that throws leaves it to be made at the next. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined
  return () => {
    made ??= { value: make() }
    return made.value
  }
}

/** Fastify's `schemaController` option: the compilers above. */
export const sharedSchemaController: SchemaController = {
  compilersFactory: { buildValidator: buildSharedValidator, buildSerializer: buildSharedSerializer },
}
